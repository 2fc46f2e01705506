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
The chain as the compiled IK solvers see it: per-model constant arrays and the tip pose error.

The pose error of the tip at q is ``e = [p_target - p; log(R_target R^T)]`` (base frame, rows
``vx vy vz wx wy wz``), as :func:`robot_dynamics.spatial.pose_error`; both the closed forms
(to verify their candidates) and the numeric solver (to iterate) evaluate it here, compiled.
"""

import dataclasses
import math
import weakref

import numpy as np

from .. import limits
from .._jit import njit
from ..kinematics import chain as body_chain
from ..spatial import rotation_log


@dataclasses.dataclass(frozen=True)
class Chain:
    """Constant arrays of a model for the compiled IK kernels (computed once per model)."""

    basis: np.ndarray        # (n, 4, 16): T_local = D0 + sin q D1 + cos q D2 + q D3
    axis: np.ndarray         # (n, 3) joint axes in the joint frames
    prismatic: np.ndarray    # (n,) bool
    revolute: np.ndarray     # (n,) bool, revolute or continuous
    body: int                # number of joints that move the tip (its body, 1-based)
    tip: np.ndarray          # (4, 4) T_body_tip
    lower: np.ndarray        # (n,) joint limits [rad or m], +-inf where none
    upper: np.ndarray
    wrap: np.ndarray         # (n,) bool: projected into the limits by 2 pi shifts
    middle: np.ndarray       # (n,) the default seed, limits.middle
    sample_lower: np.ndarray  # (n,) box of the numeric solver's random restarts
    sample_upper: np.ndarray


# Memo of chain(model): derived constants of an immutable model, gone with it (weak keys).
_CHAINS = weakref.WeakKeyDictionary()


def chain(model):
    """Return the :class:`Chain` of ``model`` (cached)."""
    try:
        return _CHAINS[model]
    except KeyError:
        pass
    rev = ~np.asarray(model.is_prismatic)
    body, T_body_tip = model.link_body(None)
    lo, hi = np.array(model.lower, dtype=float), np.array(model.upper, dtype=float)
    # restarts: uniform in the limits; a full turn for unbounded revolute joints, and +-1 m
    # about 0 for unbounded prismatic ones
    span = np.where(rev, math.pi, 1.0)
    s_lo = np.where(np.isfinite(lo), lo, np.where(np.isfinite(hi), hi - 2.0 * span, -span))
    s_hi = np.where(np.isfinite(hi), hi, s_lo + 2.0 * span)
    ch = Chain(basis=model.derived.local_basis, axis=model.joint_axis,
               prismatic=model.is_prismatic, revolute=rev, body=int(body),
               tip=np.ascontiguousarray(T_body_tip, dtype=float), lower=lo, upper=hi,
               wrap=limits.wraps(model), middle=limits.middle(lo, hi), sample_lower=s_lo,
               sample_upper=s_hi)
    _CHAINS[model] = ch
    return ch


def is_cached(model):
    """Return True once :func:`chain` has run for ``model`` (its kernels are loaded)."""
    return model in _CHAINS


@njit
def pose_residual(pose, target, mask, e):
    """
    Fill ``e`` (6,) with the pose error of ``pose`` towards ``target`` (both (4, 4)).

    Returns ``(p2, o2, cost)``: the squared norms of the position and rotation rows selected by
    ``mask > 0``, and ``cost = sum mask e^2 / 2``.
    """
    R = np.empty((3, 3))
    for r in range(3):
        e[r] = target[r, 3] - pose[r, 3]
        for k in range(3):
            R[r, k] = (target[r, 0] * pose[k, 0] + target[r, 1] * pose[k, 1]
                       + target[r, 2] * pose[k, 2])
    rotation_log(R, e[3:])
    p2, o2, cost = 0.0, 0.0, 0.0
    for r in range(6):
        if mask[r] > 0.0:
            if r < 3:
                p2 += e[r] * e[r]
            else:
                o2 += e[r] * e[r]
            cost += mask[r] * e[r] * e[r]
    return p2, o2, 0.5 * cost


@njit
def tip_residual(basis, body, tip, q, target, mask, T, pose, e):
    """Tip pose of ``q`` (n,) by the chain recursion, then :func:`pose_residual`."""
    body_chain(basis, q, T)
    for r in range(4):
        for k in range(4):
            pose[r, k] = (T[body - 1, r, 0] * tip[0, k] + T[body - 1, r, 1] * tip[1, k]
                          + T[body - 1, r, 2] * tip[2, k] + T[body - 1, r, 3] * tip[3, k])
    return pose_residual(pose, target, mask, e)


@njit
def _measure_kernel(basis, body, tip, q, target, mask):
    n = q.shape[0]
    T, pose, e = np.empty((n, 4, 4)), np.empty((4, 4)), np.empty(6)
    p2, o2, _ = tip_residual(basis, body, tip, q, target, mask, T, pose, e)
    for r in range(6):
        if not mask[r] > 0.0:
            e[r] = 0.0
    return e, math.sqrt(p2), math.sqrt(o2)


def measure(ch, q, target, mask):
    """
    Return ``(residual (6,), position error [m], orientation error [rad])`` of ``q`` (n,).

    The residual is zero in the rows that ``mask`` leaves out; the errors are the norms of its
    position and rotation rows.
    """
    return _measure_kernel(ch.basis, ch.body, ch.tip, q, target, mask)
