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
What every control law shares: the laws' names, friction modes, gains, effort limits, a base.

Below :mod:`robot_dynamics.control` (the joint laws, resolved acceleration, the catalogue) and
:mod:`robot_dynamics.task_space` (operational space): both build their laws on :class:`BaseLaw`,
and ``control``, which names every law, imports ``task_space``. Conventions: ``control``'s.
"""

import enum

import numpy as np

from .errors import as_array, InputError, ShapeError

#: Names of the task rows (twist components, base frame), the keys of task gains by name.
TASK_ROWS = ('vx', 'vy', 'vz', 'wx', 'wy', 'wz')


class Law(enum.Enum):
    """The control laws; the strings are the names used on the command line and in reports."""

    PD = 'pd'
    PD_GRAVITY = 'pd_gravity'
    PID = 'pid'
    COMPUTED_TORQUE = 'computed_torque'
    RESOLVED_ACCELERATION = 'resolved_acceleration'
    ADAPTIVE = 'adaptive'
    OPERATIONAL_SPACE = 'operational_space'


class Friction(enum.Enum):
    """
    Friction feed-forward of the model-based laws (viscous + Coulomb, as the model's dynamics).

    ``'none'``; ``'reference'``: at the desired velocity (no chatter: it does not feed the
    measured velocity back through the steep Coulomb term, which a digital loop cannot cancel
    exactly); ``'measured'``: at the measured velocity (exact cancellation in continuous time).
    """

    NONE = 'none'
    REFERENCE = 'reference'
    MEASURED = 'measured'


def joint_gains(value, model, name, *, allow_inf=False):
    """
    Return per-joint gains (n,) from a scalar, a sequence of n values or ``{joint: value}``.

    Parameters
    ----------
    value : float, array_like or mapping
        The gains; every value must be finite (or ``+inf`` with ``allow_inf``) and >= 0. A
        mapping must name every joint.
    model : RobotModel
        Gives the joint count and names.
    name : str
        Name used in error messages (e.g. ``'kp'``).
    allow_inf : bool
        Accept ``+inf`` (e.g. "no limit").

    Returns
    -------
    numpy.ndarray, shape (n,)
        Read-only gains.

    """
    n = model.dof
    value = _by_name(value, model.joint_names, name, 'joint')
    if allow_inf:
        arr = as_array(value, (), name, finite=False)
        if np.isnan(arr).any() or np.isneginf(arr).any():
            raise InputError(f'{name}: expected numbers >= 0 or inf, got {arr}')
    else:
        arr = as_array(value, (), name)
    if arr.ndim > 1 or arr.size not in (1, n):
        raise ShapeError(f'{name}: expected a scalar or {n} values (one per joint), got shape '
                         f'{arr.shape}')
    arr = np.broadcast_to(arr.reshape(-1), (n,)).copy()
    if np.any(arr < 0.0):
        j = int(np.flatnonzero(arr < 0.0)[0])
        raise InputError(f'{name}[{j}] (joint {model.joint_names[j]!r}) = {arr[j]}: gains must '
                         'be >= 0')
    arr.setflags(write=False)
    return arr


def _by_name(value, names, name, what):
    """Return ``value``, or a mapping ``{key: x}`` as a list in the order of ``names``."""
    if not hasattr(value, 'keys'):
        return value
    unknown = sorted(set(value) - set(names))
    missing = [k for k in names if k not in value]
    if unknown or missing:
        raise InputError(f'{name}: {what} names must be {list(names)}; unknown {unknown}, '
                         f'missing {missing}')
    return [value[k] for k in names]


def task_gains(value, name):
    """Return task gains (6,) from a scalar, six values or ``{row: value}`` (:data:`TASK_ROWS`)."""
    arr = as_array(_by_name(value, TASK_ROWS, name, 'task row'), (), name)
    if arr.ndim > 1 or arr.size not in (1, 6):
        raise ShapeError(f'{name}: expected a scalar or 6 values (vx vy vz wx wy wz), got '
                         f'shape {arr.shape}')
    arr = np.broadcast_to(arr.reshape(-1), (6,)).copy()
    if np.any(arr < 0.0):
        raise InputError(f'{name}: gains must be >= 0, got {arr}')
    arr.setflags(write=False)
    return arr


def effort_limits(model, effort_limit):
    """Return a law's effort limits (n,): the model's (None), or ``effort_limit`` checked > 0."""
    if effort_limit is None:
        return model.effort_limit
    lim = joint_gains(effort_limit, model, 'effort_limit', allow_inf=True)
    if np.any(lim <= 0.0):
        j = int(np.flatnonzero(lim <= 0.0)[0])
        raise InputError(f'effort_limit[{j}] = {lim[j]}: limits must be > 0 (inf: no limit)')
    return lim


class BaseLaw:
    """
    What every law shares: its :class:`Law`, and new gains for a law that keeps its settings.

    A subclass keeps the keyword arguments of its constructor in ``_arguments`` and names its
    gains in ``gain_names``; ``_gain_keys`` are the names the gains are keyed by.
    """

    law = None
    gain_names = ('kp', 'kd')

    def with_gains(self, **gains):
        """
        Return this law with new gains; its other settings (and a PID's state) are kept.

        Parameters
        ----------
        **gains
            Gains named as in the constructor (``gain_names``), each given as the constructor
            takes it and validated the same way. A mapping may name only the joints (or task
            rows) that change; the other entries keep their values.

        Returns
        -------
        PD, PDGravity, PID, ComputedTorque or ResolvedAcceleration
            A new law of this one's class. This one is left as it was, also when the gains are
            rejected (``InputError`` or ``ShapeError`` naming the gain).

        """
        unknown = sorted(set(gains) - set(self.gain_names))
        if unknown:
            raise InputError(f'with_gains: {type(self).__name__} has no gains {unknown}; its '
                             f'gains are {list(self.gain_names)}')
        changed = {name: {**dict(zip(self._gain_keys, getattr(self, name).tolist())), **value}
                   if hasattr(value, 'keys') else value for name, value in gains.items()}
        return type(self)(self.model, **{**self._arguments, **changed})

    def for_one_state(self):
        """
        Return ``compute(t, q, qd, reference) -> Command`` for one state, checked once.

        A control loop's fast path: the caller gives finite float arrays ``q``, ``qd`` (n,) and
        a reference of three (n,) arrays, writable (numba would compile its kernels anew for a
        read-only one, seconds inside the loop; a :class:`~robot_dynamics.controller.Controller`
        has checked them), and gets what :meth:`compute` gives, without its checks on every call.
        A law without a faster way returns its ``compute``.
        """
        return self.compute
