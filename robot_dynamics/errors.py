# Copyright 2026 robot_dynamics developers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
Errors raised by robot_dynamics, and the input checks that raise them.

Every error derives from :class:`RobotDynamicsError`. Errors about bad input (a robot
description, an argument, a model that cannot be simulated) are also ``ValueError`` subclasses,
so that callers (and ROS nodes) can catch bad input with one ``except ValueError`` and report its
message. The one error about the environment instead, a missing optional dependency
(:class:`robot_dynamics.plots.PlotDependencyError`: no matplotlib for the plots), is an
``ImportError``; the command line exits with 2 for the former and 1 for it.
"""

import difflib

import numpy as np

from ._jit import all_finite

#: Longest part of a refused string that a message quotes [characters]: a message about a 1 MB
#: name must not be 1 MB long.
QUOTE_LIMIT = 40
#: Most names a message lists (the others are counted).
LIST_LIMIT = 5


class RobotDynamicsError(Exception):
    """Base class of every error raised by robot_dynamics."""


class ModelError(RobotDynamicsError, ValueError):
    """A robot description (URDF, DH table, YAML) is malformed or unsupported."""


class InputError(RobotDynamicsError, ValueError):
    """An argument has the wrong shape, a non-finite value or an unknown option."""


class ShapeError(InputError):
    """An array argument has the wrong shape."""


class SingularMassMatrixError(RobotDynamicsError, ValueError):
    """The joint-space mass matrix is not positive definite (a degenerate model)."""


def shortened(text, limit):
    """Return ``text``, or its first ``limit`` characters and how long it was."""
    text = str(text)
    return text if len(text) <= limit else f'{text[:limit]}... ({len(text)} characters)'


def quoted(text, limit=QUOTE_LIMIT):
    """Return ``repr(text)``, or of its first ``limit`` characters with the length said."""
    text = str(text)
    if len(text) <= limit:
        return repr(text)
    return f'{text[:limit]!r}... ({len(text)} characters)'


def listed(names, limit=LIST_LIMIT):
    """Return ``names`` as ``['a', 'b'] and 3 more``: at most ``limit`` of them, quoted."""
    names = list(names)
    shown = f"[{', '.join(quoted(n) for n in names[:limit])}]"
    return shown + (f' and {len(names) - limit} more' if len(names) > limit else '')


def closest(name, names, n=3):
    """
    Return up to ``n`` of ``names`` closest to ``name`` (for "did you mean"), best first.

    Only a prefix of ``name`` as long as the longest of ``names`` (plus a few characters) is
    compared: difflib's time grows with the product of the lengths.
    """
    names = [str(m) for m in names]
    longest = max((len(m) for m in names), default=0) + 4
    return difflib.get_close_matches(str(name)[:longest], names, n=n, cutoff=0.5)


def unknown_name(what, name, names):
    """Return the ``InputError`` for an unknown ``name`` of ``what``, with the closest names."""
    near = closest(name, names)
    hint = f'; closest: {listed(near)}' if near else ''
    return InputError(f'unknown {what} {quoted(name)}{hint}; known: {listed(names, 20)}')


def as_array(x, shape, name, finite=True):
    """
    Return ``x`` as a finite float64 array whose trailing dims equal ``shape``.

    Parameters
    ----------
    x : array_like
        The value to check.
    shape : tuple of int
        Required trailing shape, e.g. ``(n,)`` or ``(4, 4)``.
    name : str
        Argument name used in the error message.
    finite : bool
        Also reject nan and inf. Hot paths may pass False and check their result once instead.

    Returns
    -------
    numpy.ndarray
        ``x`` as float64, leading (batch) dims kept.

    """
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f'{name}: expected numbers, got {type(x).__name__} ({exc})') from None
    k = len(shape)
    if arr.ndim < k or arr.shape[arr.ndim - k:] != tuple(shape):
        want = ', '.join(str(s) for s in shape)
        raise ShapeError(f'{name}: expected shape (..., {want}), got {arr.shape}')
    if finite and not all_finite(arr):
        raise InputError(f'{name}: contains non-finite values (nan or inf)')
    return arr


def choice(value, options, name, allowed=None, error=InputError):
    """
    Map a closed choice given as a string (or a member) to its member of the Enum ``options``.

    ``allowed`` restricts the accepted values (default: every member's value). Raises ``error``
    (``InputError``; ``ModelError`` for a robot description) naming the argument and the choices.
    """
    try:
        member = options(value)
    except (TypeError, ValueError):
        member = None
    if member is None or (allowed is not None and member.value not in allowed):
        expected = tuple(m.value for m in options) if allowed is None else tuple(allowed)
        raise error(f'{name}: expected one of {expected}, got {value!r}')
    return member


def as_joint_array(x, n, name, finite=True):
    """Return ``x`` as a float64 array of shape ``(..., n)``; see :func:`as_array`."""
    return as_array(x, (n,), name, finite)
