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
Joint limits: the middle of a range, the nearest turn of an angle, projection into a range.

Limits are ``lower <= q <= upper`` per joint [rad or m], with ``-inf`` / ``inf`` where the
URDF gives none (continuous joints, and one-sided ranges). A revolute angle and its copies
``q + 2 pi k`` are the same pose, so a revolute joint fits its limits when some copy does.
"""

import math

import numpy as np

from ._jit import njit

TWO_PI = 2.0 * math.pi


def middle(lower, upper):
    """
    Return the middle of each joint range (n,) [rad or m].

    ``(lower + upper) / 2`` where both limits are finite; elsewhere 0, moved onto the finite
    limit of a one-sided range that excludes it, so the result is always inside the limits.
    """
    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    bounded = np.isfinite(lo) & np.isfinite(hi)
    mid = 0.5 * (np.where(bounded, lo, 0.0) + np.where(bounded, hi, 0.0))
    return np.where(bounded, mid, np.clip(0.0, lo, hi))


def wraps(model):
    """Return, per joint (n,) bool, whether a 2 pi shift may bring it into its limits."""
    return ~np.asarray(model.is_prismatic) & np.isfinite(model.lower) & np.isfinite(model.upper)


@njit
def project(q, lower, upper, wrap):
    """
    Bring ``q`` (n,) into the limits in place.

    A joint with ``wrap`` (revolute, both limits finite) outside its range is shifted by
    2 pi k into it when a copy fits, else set to the limit nearest on the circle; every other
    joint is clamped (a no-op for infinite limits).
    """
    for i in range(q.shape[0]):
        lo, hi, x = lower[i], upper[i], q[i]
        if lo <= x <= hi:
            continue
        if wrap[i]:
            r = lo + (x - lo) % TWO_PI
            if r <= hi:
                q[i] = r
            elif r - hi < lo + TWO_PI - r:
                q[i] = hi
            else:
                q[i] = lo
        else:
            q[i] = min(max(x, lo), hi)


@njit
def nearest_turn(x, near, lower, upper):
    """
    Return the copy ``x + 2 pi k`` inside ``[lower, upper]`` nearest to ``near``, or nan.

    The distance to ``near`` is convex in k, so the best k inside the limits is the
    unconstrained one clamped to the range of k that fits.
    """
    k = float(round((near - x) / TWO_PI))
    if lower > -np.inf:
        k = max(k, math.ceil((lower - x) / TWO_PI))
    if upper < np.inf:
        k = min(k, math.floor((upper - x) / TWO_PI))
    y = x + k * TWO_PI
    # rounding of the quotients can leave y a hair outside: one more turn may fit
    if y < lower and y + TWO_PI <= upper:
        y += TWO_PI
    elif y > upper and y - TWO_PI >= lower:
        y -= TWO_PI
    if y < lower or y > upper:
        return np.nan
    return y


@njit
def nearest_turns(q, near, lower, upper, revolute, out):
    """
    Write to ``out`` (n,) ``q`` with each revolute angle on its in-limit turn nearest ``near``.

    Prismatic joints are copied. Returns False when some joint cannot be brought into its
    limits (``out`` is then written only up to that joint).
    """
    for i in range(q.shape[0]):
        if revolute[i]:
            y = nearest_turn(q[i], near[i], lower[i], upper[i])
            if math.isnan(y):
                return False
            out[i] = y
        elif lower[i] <= q[i] <= upper[i]:
            out[i] = q[i]
        else:
            return False
    return True
