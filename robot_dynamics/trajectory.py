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
Joint and Cartesian trajectories: reference motions sampled in batch.

Every joint trajectory is a :class:`JointTrajectory`: a piecewise polynomial in time, one
polynomial per joint and segment, sampled in batch by :meth:`JointTrajectory.sample` (no Python
loop over samples). It is built by

- :func:`point_to_point`: every joint synchronised, ``'cubic'``, ``'quintic'`` or ``'min_jerk'``
  (the rest-to-rest quintic ``10 s^3 - 15 s^4 + 6 s^5`` of Flash & Hogan 1985);
- :func:`trapezoidal`: trapezoidal velocity under per-joint velocity and acceleration limits,
  synchronised (all joints start and finish together), triangular when the cruise velocity
  cannot be reached;
- :func:`from_waypoints`: the points of a ``trajectory_msgs/JointTrajectory`` (positions only: a
  C2 spline, cubic inside and quintic on the end segments, that ends at rest with zero
  acceleration; with velocities: cubic Hermite; with accelerations too: quintic Hermite);
- :meth:`CartesianLine.to_joint_trajectory`: a straight tip line with slerped orientation,
  converted through inverse kinematics.

:class:`TrajectoryPoints` holds the content of a ``trajectory_msgs/JointTrajectory`` message as
arrays and reads and writes it as YAML, in the layout of ROS 2 message YAML (``ros2 topic pub``):
``joint_names``, then ``points`` with ``positions``, ``velocities``, ``accelerations`` and
``time_from_start: {sec, nanosec}``.

:meth:`JointTrajectory.time_scaled` replays a trajectory slower or faster; the scaling that
fits a model's actuator limits is :func:`robot_dynamics.time_scaling.time_scale`.

Times are in seconds, joint values in rad (revolute) or m (prismatic). Samples before the start
hold the first point and samples after the end hold the last point, with zero velocity and
acceleration.
"""

import bisect
import copy
import enum
import math
from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np

from . import kinematics
from .errors import as_array, choice, InputError, ShapeError
from .ik import ik_path
from .linalg import damped_least_squares
from .spatial import check_transform, matrix_to_rotvec, skew
from .stamps import join, ns_to_s, s_to_ns, split

#: Relative agreement required between ``JointTrajectory(end=...)`` and the polynomial.
END_TOLERANCE = 1e-9
#: Default number of IK samples per second of a Cartesian line, and the least number.
CARTESIAN_SAMPLES_PER_SECOND = 50.0
CARTESIAN_MIN_SAMPLES = 11
#: Default largest joint change [rad or m] between neighbouring IK samples (a branch flip above).
CARTESIAN_MAX_JOINT_STEP = 0.5
#: Default damping [m or rad] of the least-squares inverse that maps tip rates to joint rates.
CARTESIAN_RATE_DAMPING = 1e-9
#: Longest motion [s] built from outside numbers (a goal's times, a target's distance). A
#: motion is checked by sampling it (:func:`check_limits` at LIMIT_CHECK_RATE, IK at
#: CARTESIAN_SAMPLES_PER_SECOND), so its duration must be bounded before anything is built: ten
#: minutes, three times the longest goal a message carries (10,000 points of ``excite``'s 50 Hz),
#: cost a Cartesian check 30,000 IK samples (about 5 s and 80 MB for 7 joints).
MAX_GOAL_DURATION = 600.0


def check_duration(seconds, what):
    """Raise ``InputError`` naming ``what`` unless ``seconds`` is at most MAX_GOAL_DURATION."""
    if not seconds <= MAX_GOAL_DURATION:      # NaN too
        raise InputError(f'{what} is {seconds:.9g} s, more than MAX_GOAL_DURATION = '
                         f'{MAX_GOAL_DURATION:g} s (the longest motion taken)')


class Profile(enum.Enum):
    """Time law of a point-to-point motion; the strings are what the public functions accept."""

    CUBIC = 'cubic'
    QUINTIC = 'quintic'
    MIN_JERK = 'min_jerk'


class TrajectoryPoint(NamedTuple):
    """
    Desired joint state: positions, velocities and accelerations, each of shape (..., n).

    Units: rad, rad/s, rad/s^2 for revolute joints; m, m/s, m/s^2 for prismatic ones. It
    unpacks as ``q, qd, qdd = point``, which is what the control laws accept as a reference.
    """

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray

    @classmethod
    def at_rest(cls, q):
        """Return the point at positions ``q`` with zero velocity and acceleration (set-point)."""
        q = np.array(q, dtype=float)
        return cls(q, np.zeros_like(q), np.zeros_like(q))


class TaskPoint(NamedTuple):
    """
    Desired tip motion in the base frame.

    ``pose`` (..., 4, 4) is the tip pose; ``twist`` (..., 6) is ``[v; w]``, the linear velocity
    of the tip origin [m/s] and the angular velocity [rad/s]; ``acceleration`` (..., 6) is its
    time derivative ``[dv/dt; dw/dt]``, the quantity ``J qdd + Jdot qd`` of
    :func:`robot_dynamics.kinematics.jacobian_dot`.
    """

    pose: np.ndarray
    twist: np.ndarray
    acceleration: np.ndarray


# ---- the piecewise polynomial -------------------------------------------------------------------

def _derivative_coefficients(c):
    """Coefficients (S, D, n) of d/du of polynomials with ascending coefficients (S, D+1, n)."""
    powers = np.arange(1, c.shape[1], dtype=float)
    return c[:, 1:] * powers[None, :, None]


def _pad(c, degree):
    """Pad ascending coefficients (S, D'+1, n) with zeros to degree ``degree``."""
    return np.concatenate((c, np.zeros((c.shape[0], degree + 1 - c.shape[1], c.shape[2]))),
                          axis=1)


def _times(t, name='t'):
    t = np.asarray(t, dtype=float)
    if not np.all(np.isfinite(t)):
        bad = np.flatnonzero(~np.isfinite(t.ravel()))[0]
        raise InputError(f'{name}: non-finite time {t.ravel()[bad]} at index {bad}')
    return t


class JointTrajectory:
    """
    A joint trajectory as a piecewise polynomial, segment ``s`` on ``[breaks[s], breaks[s+1]]``.

    On segment ``s``, joint ``i`` follows ``q_i(t) = sum_j coefficients[s, j, i] u^j`` with the
    local time ``u = t - breaks[s]`` [s]. Normally built by :func:`point_to_point`,
    :func:`trapezoidal` or :func:`from_waypoints`. Immutable.

    Parameters
    ----------
    breaks : array_like, shape (S + 1,)
        Segment boundaries [s], non-decreasing, finite.
    coefficients : array_like, shape (S, D + 1, n)
        Ascending polynomial coefficients per segment and joint (degree D).
    end : array_like, shape (n,), optional
        The exact positions at the last break (e.g. the goal), returned there and after
        instead of the polynomial's value, which may differ by rounding; must agree with it to
        ``END_TOLERANCE`` (relative).

    """

    def __init__(self, breaks, coefficients, *, end=None):
        breaks = _times(breaks, 'breaks').reshape(-1)
        c = np.array(coefficients, dtype=float)
        if c.ndim != 3 or c.shape[0] < 1 or c.shape[1] < 1:
            raise ShapeError(f'coefficients: expected shape (segments, degree + 1, joints), '
                             f'got {c.shape}')
        if breaks.shape != (c.shape[0] + 1,):
            raise ShapeError(f'breaks: expected {c.shape[0] + 1} values (segments + 1), '
                             f'got {breaks.shape[0]}')
        if np.any(np.diff(breaks) < 0.0):
            bad = int(np.flatnonzero(np.diff(breaks) < 0.0)[0]) + 1
            raise InputError(f'breaks: decreasing at index {bad} '
                             f'({breaks[bad - 1]} then {breaks[bad]})')
        if not np.all(np.isfinite(c)):
            raise InputError('coefficients: contains non-finite values (nan or inf)')
        if c.shape[1] < 3:  # keep qd and qdd defined: pad to degree 2
            c = _pad(c, 2)
        degree = c.shape[1] - 1
        # q, qd and qdd side by side (S, D + 1, 3 n): one product with [1, u, u^2, ...] gives all
        stacked = np.concatenate((c, _pad(_derivative_coefficients(c), degree),
                                  _pad(_derivative_coefficients(_derivative_coefficients(c)),
                                       degree)), axis=2)
        self._breaks = breaks
        self._break_list = breaks.tolist()
        self._c = c
        self._stacked = stacked
        self._powers = np.arange(degree + 1, dtype=float)
        n = c.shape[2]
        last = c.shape[0] - 1
        u_end = breaks[-1] - breaks[-2]
        self._start = c[0, 0].copy()
        self._end = (u_end ** self._powers) @ c[last]
        if end is not None:
            end = as_array(end, (n,), 'end').reshape(n)
            scale = max(1.0, float(np.abs(self._end).max()))
            if np.abs(end - self._end).max() > END_TOLERANCE * scale:
                raise InputError(f'end: {end} differs from the last polynomial value {self._end}')
            self._end = end.copy()
        self._zero = np.zeros(n)
        for arr in (self._breaks, self._c, self._stacked, self._start, self._end, self._zero):
            arr.setflags(write=False)

    # ---- attributes ---------------------------------------------------------------------------

    @property
    def dof(self):
        """Return the number of joints n."""
        return self._c.shape[2]

    @property
    def breaks(self):
        """Segment boundaries (S + 1,) [s] (read-only)."""
        return self._breaks

    @property
    def coefficients(self):
        """Polynomial coefficients, shape (S, D + 1, n), ascending powers of the local time."""
        return self._c

    @property
    def start_time(self):
        """Time of the first point [s]."""
        return float(self._breaks[0])

    @property
    def end_time(self):
        """Time of the last point [s]."""
        return float(self._breaks[-1])

    @property
    def duration(self):
        """``end_time - start_time`` [s]."""
        return self.end_time - self.start_time

    @property
    def start(self):
        """Positions (n,) at the start."""
        return self._start

    @property
    def end(self):
        """Positions (n,) at the end, held afterwards."""
        return self._end

    def shifted(self, dt):
        """Return the same motion ``dt`` [s] later, without building it again."""
        out = copy.copy(self)
        out._breaks = self._breaks + float(dt)
        out._breaks.setflags(write=False)
        out._break_list = out._breaks.tolist()
        return out

    def __repr__(self):
        return (f'JointTrajectory(dof={self.dof}, segments={self._c.shape[0]}, '
                f'degree={self._c.shape[1] - 1}, t=[{self.start_time:g}, {self.end_time:g}] s)')

    # ---- evaluation ---------------------------------------------------------------------------

    def _sample_one(self, t):
        """Fast path of :meth:`sample` for one time (a Python float)."""
        if not math.isfinite(t):
            raise InputError(f't: non-finite time {t}')
        b = self._break_list
        n = self._c.shape[2]
        if t > b[-1]:
            return TrajectoryPoint(self._end.copy(), self._zero.copy(), self._zero.copy())
        if t < b[0]:
            return TrajectoryPoint(self._start.copy(), self._zero.copy(), self._zero.copy())
        seg = min(bisect.bisect_right(b, t) - 1, len(b) - 2)
        out = ((t - b[seg]) ** self._powers) @ self._stacked[seg]
        if t == b[-1]:
            out[:n] = self._end
        return TrajectoryPoint(out[:n], out[n:2 * n], out[2 * n:])

    def sample(self, t):
        """
        Evaluate positions, velocities and accelerations at the times ``t``.

        Parameters
        ----------
        t : float or array_like, shape (...)
            Times [s]. Before ``start_time`` the first point is held, after ``end_time`` the
            last one, both with zero velocity and acceleration.

        Returns
        -------
        TrajectoryPoint
            ``q, qd, qdd``, each of shape ``t.shape + (n,)``.

        """
        if isinstance(t, (float, int, np.floating, np.integer)):
            return self._sample_one(float(t))
        t = _times(t)
        if t.ndim == 0:
            return self._sample_one(float(t))
        n = self._c.shape[2]
        shape = t.shape
        tf = t.reshape(-1)
        tc = np.clip(tf, self._breaks[0], self._breaks[-1])
        seg = np.searchsorted(self._breaks, tc, side='right') - 1
        np.clip(seg, 0, self._c.shape[0] - 1, out=seg)
        powers = (tc - self._breaks[seg])[:, None] ** self._powers
        out = np.einsum('kd,kdj->kj', powers, self._stacked[seg])
        outside = (tf < self._breaks[0]) | (tf > self._breaks[-1])
        if outside.any():
            out[outside, n:] = 0.0
        after = tf >= self._breaks[-1]
        if after.any():
            out[after, :n] = self._end
        out = out.reshape(shape + (3, n))
        return TrajectoryPoint(out[..., 0, :], out[..., 1, :], out[..., 2, :])

    def time_scaled(self, factor):
        """
        Return this trajectory slowed down by ``factor`` (> 0) about its start time.

        The result follows the same path: ``q_new(t0 + k u) = q(t0 + u)``, so velocities are
        divided by ``k`` and accelerations by ``k^2``. ``factor < 1`` speeds it up.
        """
        k = float(factor)
        if not (np.isfinite(k) and k > 0.0):
            raise InputError(f'factor: expected a positive number, got {factor!r}')
        t0 = self._breaks[0]
        breaks = t0 + (self._breaks - t0) * k
        powers = k ** -np.arange(self._c.shape[1], dtype=float)
        return JointTrajectory(breaks, self._c * powers[None, :, None], end=self._end)


# ---- polynomial pieces --------------------------------------------------------------------------

def _cubic_hermite(h, p0, v0, p1, v1):
    """Ascending cubic coefficients (S, 4, n) from end positions and velocities, length ``h``."""
    h = h[:, None]
    d = p1 - p0
    c2 = (3.0 * d / h - 2.0 * v0 - v1) / h
    c3 = (-2.0 * d / h + v0 + v1) / h ** 2
    return np.stack((p0, v0, c2, c3), axis=1)


def _quintic_hermite(h, p0, v0, a0, p1, v1, a1):
    """Ascending quintic coefficients (S, 6, n) from end positions, velocities, accelerations."""
    h = h[:, None]
    d = p1 - p0
    c3 = (20.0 * d - (8.0 * v1 + 12.0 * v0) * h - (3.0 * a0 - a1) * h ** 2) / (2.0 * h ** 3)
    c4 = (-30.0 * d + (14.0 * v1 + 16.0 * v0) * h + (3.0 * a0 - 2.0 * a1) * h ** 2) \
        / (2.0 * h ** 4)
    c5 = (12.0 * d - 6.0 * (v1 + v0) * h - (a0 - a1) * h ** 2) / (2.0 * h ** 5)
    return np.stack((p0, v0, 0.5 * a0, c3, c4, c5), axis=1)


def _constant(t0, q):
    """Return a trajectory that holds ``q`` (n,) from ``t0`` on (zero duration)."""
    return JointTrajectory([t0, t0], np.asarray(q, dtype=float)[None, None, :])


def _joint_vector(x, n, name):
    """Return ``x`` broadcast to a finite (n,) vector, or raise naming ``name``."""
    arr = np.asarray(as_array(x, (), name), dtype=float)
    if arr.ndim > 1 or arr.size not in (1, n):
        raise ShapeError(f'{name}: expected a scalar or {n} values, got shape {arr.shape}')
    return np.broadcast_to(arr.reshape(-1), (n,)).copy()


def _end_points(q_start, q_goal):
    """Check ``q_start`` and ``q_goal`` as finite (n,) vectors of the same length."""
    q0 = as_array(q_start, (), 'q_start')
    if q0.ndim != 1 or q0.size == 0:
        raise ShapeError(f'q_start: expected shape (n,), got {q0.shape}')
    q1 = as_array(q_goal, q0.shape, 'q_goal')
    if q1.shape != q0.shape:
        raise ShapeError(f'q_goal: expected shape {q0.shape} like q_start, got {q1.shape}')
    return q0.copy(), q1.copy()


def _duration(duration, name='duration'):
    d = float(as_array(duration, (), name))
    if d < 0.0:
        raise InputError(f'{name}: expected >= 0 s, got {d}')
    return d


# ---- point to point -----------------------------------------------------------------------------

def point_to_point(q_start, q_goal, duration, profile='quintic', *, start_time=0.0,
                   qd_start=0.0, qd_goal=0.0, qdd_start=0.0, qdd_goal=0.0):
    """
    Move every joint from ``q_start`` to ``q_goal`` in ``duration`` seconds, all synchronised.

    Parameters
    ----------
    q_start, q_goal : array_like, shape (n,)
        Start and goal positions [rad or m].
    duration : float
        Motion time [s], >= 0 (0 gives a trajectory that holds ``q_goal``).
    profile : str
        ``'cubic'`` (matches positions and velocities at both ends), ``'quintic'`` (positions,
        velocities and accelerations) or ``'min_jerk'`` (the same quintic: among all motions with
        these boundary conditions it minimises the integral of squared jerk, Flash & Hogan 1985;
        rest to rest it is ``q_start + (q_goal - q_start)(10 s^3 - 15 s^4 + 6 s^5)``).
    start_time : float
        Time [s] at which the motion starts.
    qd_start, qd_goal : float or array_like, shape (n,)
        Boundary velocities [rad/s or m/s]; default zero (rest to rest).
    qdd_start, qdd_goal : float or array_like, shape (n,)
        Boundary accelerations [rad/s^2 or m/s^2] (quintic and min_jerk only).

    Returns
    -------
    JointTrajectory
        One polynomial segment on ``[start_time, start_time + duration]``.

    """
    kind = choice(profile, Profile, 'profile')
    q0, q1 = _end_points(q_start, q_goal)
    n = q0.shape[0]
    T = _duration(duration)
    t0 = float(as_array(start_time, (), 'start_time'))
    v0, v1, a0, a1 = (_joint_vector(x, n, name) for x, name in (
        (qd_start, 'qd_start'), (qd_goal, 'qd_goal'), (qdd_start, 'qdd_start'),
        (qdd_goal, 'qdd_goal')))
    if kind is Profile.CUBIC and (np.any(a0 != 0.0) or np.any(a1 != 0.0)):
        raise InputError("profile 'cubic' cannot match boundary accelerations; use 'quintic'")
    if T == 0.0:
        if np.any(q0 != q1):
            raise InputError('duration: 0 s is only possible when q_start equals q_goal')
        return _constant(t0, q1)
    h = np.array([T])
    if kind is Profile.CUBIC:
        c = _cubic_hermite(h, q0[None], v0[None], q1[None], v1[None])
    else:
        c = _quintic_hermite(h, q0[None], v0[None], a0[None], q1[None], v1[None], a1[None])
    return JointTrajectory([t0, t0 + T], c, end=q1)


def trapezoidal(q_start, q_goal, velocity_limit, acceleration_limit, *, duration=None,
                start_time=0.0):
    """
    Trapezoidal-velocity motion from rest to rest, every joint synchronised.

    All joints follow one normalised time law ``s(t)`` (0 to 1): constant acceleration, cruise,
    constant deceleration, so all of them accelerate, cruise and stop at the same instants and
    each joint's velocity is ``(q_goal - q_start) ds/dt``. The law is the fastest one that keeps
    every joint within its limits: with ``V = min_i vmax_i / |dq_i|`` and
    ``A = min_i amax_i / |dq_i|``, the blend lasts ``V / A`` and the motion ``1 / V + V / A``; if
    ``V^2 / A > 1`` the cruise velocity is never reached and the profile is triangular
    (``2 sqrt(1 / A)``). The joint that sets ``V`` (or ``A``) reaches its limit exactly.

    Parameters
    ----------
    q_start, q_goal : array_like, shape (n,)
        Start and goal positions [rad or m].
    velocity_limit, acceleration_limit : float or array_like, shape (n,)
        Positive limits [rad/s or m/s, rad/s^2 or m/s^2] (scalars apply to every joint).
    duration : float, optional
        Stretch the motion to this time [s] (same acceleration, lower cruise velocity); must be
        at least the fastest time, which an error reports.
    start_time : float
        Time [s] at which the motion starts.

    Returns
    -------
    JointTrajectory
        Piecewise quadratic: 3 segments (2 when triangular; 1 holding point without motion).

    """
    q0, q1 = _end_points(q_start, q_goal)
    n = q0.shape[0]
    vmax = _joint_vector(velocity_limit, n, 'velocity_limit')
    amax = _joint_vector(acceleration_limit, n, 'acceleration_limit')
    for name, lim in (('velocity_limit', vmax), ('acceleration_limit', amax)):
        if np.any(lim <= 0.0):
            bad = int(np.flatnonzero(lim <= 0.0)[0])
            raise InputError(f'{name}[{bad}] = {lim[bad]}: limits must be positive')
    t0 = float(as_array(start_time, (), 'start_time'))
    delta = q1 - q0
    dist = np.abs(delta)
    moving = dist > 0.0
    if not moving.any():
        T = 0.0 if duration is None else _duration(duration)
        return JointTrajectory([t0, t0 + T], q1[None, None, :]) if T > 0 else _constant(t0, q1)
    V = np.min(vmax[moving] / dist[moving])
    A = np.min(amax[moving] / dist[moving])
    if V * V / A >= 1.0:
        V = np.sqrt(A)  # triangular: peak velocity of s reached at half way
    tb = V / A
    T = 1.0 / V + tb
    if duration is not None:
        want = _duration(duration)
        if want < T * (1.0 - 1e-12):
            raise InputError(f'duration: {want} s is shorter than the fastest synchronised '
                             f'motion within the limits, {T:.6g} s')
        # keep A, lower the cruise velocity: V^2 - A T V + A = 0 (smaller root)
        disc = max(A * A * want * want - 4.0 * A, 0.0)
        V = (A * want - np.sqrt(disc)) / 2.0
        tb = V / A
        T = want
    tc = T - 2.0 * tb  # cruise time (0 when triangular)
    sb = 0.5 * A * tb * tb
    # s(u) pieces, ascending coefficients of the local time
    pieces = [(tb, (0.0, 0.0, 0.5 * A))]
    if tc > 0.0:
        pieces.append((tc, (sb, V, 0.0)))
    pieces.append((tb, (sb + V * tc, V, -0.5 * A)))
    breaks = t0 + np.concatenate(([0.0], np.cumsum([p[0] for p in pieces])))
    breaks[-1] = t0 + T
    s = np.array([p[1] for p in pieces])  # (S, 3)
    c = s[:, :, None] * delta[None, None, :]
    c[:, 0, :] += q0
    return JointTrajectory(breaks, c, end=q1)


# ---- waypoints (trajectory_msgs/JointTrajectory) ------------------------------------------------

def _waypoint_array(x, name, k, n):
    arr = np.asarray(x, dtype=float) if x is not None else None
    if arr is None:
        return None
    if arr.ndim != 2 or arr.shape[0] != k:
        raise ShapeError(f'{name}: expected {k} points (one per time_from_start) of {n} joints, '
                         f'got shape {arr.shape}')
    if arr.shape[1] != n:
        raise ShapeError(f'{name}: expected {n} values per point like positions, got '
                         f'{arr.shape[1]} (shape {arr.shape})')
    bad = ~np.isfinite(arr)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InputError(f'{name}[{i}][{j}] (point {i}, joint {j}) is {arr[i, j]}: values must '
                         'be finite')
    return arr


def increasing_times(times, name, least=1):
    """
    Return ``times`` (K,) [s] as floats, checked: at least ``least``, finite, strictly increasing.

    Raises ``ShapeError`` or ``InputError`` naming ``name`` and the first index at fault.
    """
    t = np.asarray(times, dtype=float)
    if t.ndim != 1 or t.size < least:
        raise ShapeError(f'{name}: expected a 1-D sequence of at least {least} times, got shape '
                         f'{t.shape}')
    bad = ~np.isfinite(t)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f'{name}[{i}] is {t[i]}: times must be finite')
    step = np.diff(t)
    if np.any(step <= 0.0):
        i = int(np.flatnonzero(step <= 0.0)[0]) + 1
        raise InputError(f'{name}[{i}] = {t[i]} s is not after {name}[{i - 1}] = {t[i - 1]} s: '
                         'times must be strictly increasing')
    return t


def from_waypoints(time_from_start, positions, velocities=None, accelerations=None, *,
                   start_time=0.0, start_velocity=None, start_acceleration=None):
    """
    Interpolate the points of a ``trajectory_msgs/JointTrajectory``.

    - positions only: a C2 spline through the points that starts with ``start_velocity`` and
      ``start_acceleration`` (default zero: from rest) and ends at rest with zero acceleration:
      the clamped cubic spline (end velocities given) on the interior segments, and on the first
      and last segments the quintic that also meets the end accelerations (with the cubic
      spline's position, velocity and acceleration at its inner knot, so C2 there too). The
      acceleration is then continuous where the motion starts and ends: a cubic spline clamped
      by velocities alone steps in acceleration there, and the effort of a law with
      acceleration feed-forward (computed torque) steps with it;
    - with velocities: a cubic Hermite spline (C1), matching positions and velocities;
    - with accelerations too: a quintic Hermite spline (C2), matching all three.

    Parameters
    ----------
    time_from_start : array_like, shape (K,)
        Point times [s] relative to ``start_time``, strictly increasing and finite.
    positions : array_like, shape (K, n)
        Joint positions [rad or m] per point.
    velocities : array_like, shape (K, n), optional
        Joint velocities [rad/s or m/s] per point.
    accelerations : array_like, shape (K, n), optional
        Joint accelerations [rad/s^2 or m/s^2] per point; needs ``velocities``.
    start_time : float
        Time [s] that ``time_from_start`` is relative to.
    start_velocity, start_acceleration : array_like, shape (n,), optional
        Velocity [rad/s or m/s] and acceleration [rad/s^2 or m/s^2] at the first point of a
        positions-only spline (a trajectory that continues a motion under way); with
        ``velocities`` given, they must be omitted.

    Returns
    -------
    JointTrajectory
        ``K - 1`` segments (a single point gives a trajectory holding it).

    Raises
    ------
    InputError
        Naming the index of the first non-increasing time, the array whose length or width
        differs, the first non-finite value, or a span of times above MAX_GOAL_DURATION.

    """
    t = increasing_times(time_from_start, 'time_from_start')
    check_duration(t[-1] - t[0], 'time_from_start: the span of the points')
    step = np.diff(t)
    k = t.size
    p = np.asarray(positions, dtype=float)
    if p.ndim != 2 or p.shape[0] != k:
        raise ShapeError(f'positions: expected {k} points (one per time_from_start), got shape '
                         f'{p.shape}')
    n = p.shape[1]
    p = _waypoint_array(p, 'positions', k, n)
    v = _waypoint_array(velocities, 'velocities', k, n)
    a = _waypoint_array(accelerations, 'accelerations', k, n)
    if a is not None and v is None:
        raise InputError('accelerations given without velocities: a JointTrajectory point with '
                         'accelerations must also have velocities')
    start = []
    for name, value in (('start_velocity', start_velocity),
                        ('start_acceleration', start_acceleration)):
        if value is not None and v is not None:
            raise InputError(f'{name}: the points have velocities; give the first point '
                             'its values instead')
        start.append(np.zeros(n) if value is None else as_array(value, (n,), name).reshape(n))
    t0 = float(as_array(start_time, (), 'start_time'))
    breaks = t0 + t
    if k == 1:
        return _constant(breaks[0], p[0])
    h = step
    if v is None:
        c = _clamped_spline(h, p, *start)
    elif a is None:
        c = _cubic_hermite(h, p[:-1], v[:-1], p[1:], v[1:])
    else:
        c = _quintic_hermite(h, p[:-1], v[:-1], a[:-1], p[1:], v[1:], a[1:])
    return JointTrajectory(breaks, c, end=p[-1])


def _clamped_spline(h, p, v0, a0):
    """
    C2 spline coefficients (K-1, 6, n) through ``p`` (K, n): start ``v0, a0``, end at rest.

    The clamped cubic spline (velocities ``v0`` and 0 at the ends) gives the knot velocities
    and accelerations; its interior segments are kept, the first and last become the quintic
    Hermite segments that meet ``a0`` and 0 at the ends and the cubic's values at the inner
    knot.
    """
    from scipy.linalg import solve_banded
    k = p.shape[0]
    # unknown knot velocities v_k; interior rows: continuity of the second derivative
    # h_k v_{k-1} + 2 (h_{k-1} + h_k) v_k + h_{k-1} v_{k+1} = 3 (h_k d_{k-1} / h_{k-1} + ...)
    v = np.zeros_like(p)
    v[0] = v0
    if k > 2:
        d = np.diff(p, axis=0) / h[:, None]
        m = k - 2
        ab = np.zeros((3, m))
        ab[1] = 2.0 * (h[:-1] + h[1:])
        ab[0, 1:] = h[:-2]          # super-diagonal: coefficient of v_{k+1} is h_{k-1}
        ab[2, :-1] = h[2:]          # sub-diagonal: coefficient of v_{k-1} is h_k
        rhs = 3.0 * (h[1:, None] * d[:-1] + h[:-1, None] * d[1:])
        rhs[0] -= h[1] * v[0]       # the known start velocity moves to the right-hand side
        v[1:-1] = solve_banded((1, 1), ab, rhs)
    cubic = _cubic_hermite(h, p[:-1], v[:-1], p[1:], v[1:])
    a = np.zeros_like(p)            # knot accelerations: a_k = 2 c2 at the start of segment k
    a[0], a[1:-1] = a0, 2.0 * cubic[1:, 2]
    c = _pad(cubic, 5)
    for s in {0, k - 2}:
        c[s] = _quintic_hermite(h[s:s + 1], p[s:s + 1], v[s:s + 1], a[s:s + 1], p[s + 1:s + 2],
                                v[s + 1:s + 2], a[s + 1:s + 2])[0]
    return c


# ---- Cartesian motions and the line -------------------------------------------------------------

class TaskMotion:
    """
    A tip motion sampled as :class:`TaskPoint` s, and its conversion to joints.

    What :class:`CartesianLine` and
    :class:`~robot_dynamics.cartesian_trajectory.CartesianTrajectory` share: a subclass gives
    ``sample(t)``, ``start_time``, ``end_time`` and ``duration``.
    """

    def to_joint_trajectory(self, model, seed, *, samples=None, link=None,
                            max_joint_step=CARTESIAN_MAX_JOINT_STEP,
                            rate_damping=CARTESIAN_RATE_DAMPING, **ik_options):
        """
        Convert the motion to a joint trajectory through inverse kinematics.

        The motion is sampled at ``samples`` uniform times and solved by
        :func:`robot_dynamics.ik.ik_path`: each pose seeded with the previous solution, the
        closed forms picking the nearest branch, so the arm stays on one branch. Joint
        velocities and accelerations at the samples come from the task rows ``m`` of the
        Jacobian (``model.task_mask``): ``qd = J_m^+ V_m`` and
        ``qdd = J_m^+ (A_m - Jdot_m qd)``, and the samples are joined by quintic Hermite
        segments, so the joint trajectory is C2 and matches the motion at every sample.

        Parameters
        ----------
        model : RobotModel
            The robot.
        seed : array_like, shape (n,)
            Joint positions near the start pose [rad or m].
        samples : int, optional
            Number of IK samples (>= 2), uniform in time; default
            ``CARTESIAN_SAMPLES_PER_SECOND`` per second,
            at least ``CARTESIAN_MIN_SAMPLES``.
        link : str, optional
            Must be the tip (the IK solves for the tip); kept for a clear error.
        max_joint_step : float
            Largest change [rad or m] of any joint between neighbouring samples; more is reported
            as a branch flip.
        rate_damping : float
            Damping of the least-squares inverse used for ``qd`` and ``qdd``.
        **ik_options
            Passed to the IK (``tol_position``, ``tol_orientation``, ``mask``, ...).

        Returns
        -------
        JointTrajectory
            Piecewise quintic through the IK samples.

        Raises
        ------
        InputError
            Naming the first unreachable sample and its time, or a branch flip.

        """
        if link is not None and link != model.tip_link:
            raise InputError(f'link: only the tip {model.tip_link!r} is supported, got {link!r}')
        check_duration(self.duration, 'Cartesian motion: the duration')
        n = model.dof
        seed = as_array(seed, (n,), 'seed').reshape(n)
        if samples is None:
            samples = max(CARTESIAN_MIN_SAMPLES,
                          int(np.ceil(self.duration * CARTESIAN_SAMPLES_PER_SECOND)) + 1)
        samples = int(samples)
        if samples < 2:
            raise InputError(f'samples: expected >= 2, got {samples}')
        times = np.linspace(self.start_time, self.end_time, samples)
        q = _solve_path(model, self.sample(times).pose, times, seed, max_joint_step, ik_options)
        qd, qdd = self.joint_rates(model, q, times, mask=ik_options.get('mask'),
                                   rate_damping=rate_damping)
        return from_waypoints(times - times[0], q, qd, qdd, start_time=times[0])

    def joint_rates(self, model, q, t, *, mask=None, rate_damping=CARTESIAN_RATE_DAMPING):
        """
        Return the joint velocities and accelerations that follow the motion at its IK solutions.

        With the task rows ``m`` of the Jacobian (``mask``, default ``model.task_mask``):
        ``qd = J_m^+ V_m`` and ``qdd = J_m^+ (A_m - Jdot_m qd)``, ``V`` and ``A`` the motion's
        twist and acceleration at ``t``, by damped least squares (``rate_damping``).

        Parameters
        ----------
        model : RobotModel
            The robot.
        q : array_like, shape (K, n)
            Joint positions [rad or m] that put the tip on the motion at the times ``t``.
        t : array_like, shape (K,)
            Times [s] of the motion.
        mask : array_like, shape (6,), optional
            Task rows ``vx vy vz wx wy wz`` to follow (0 or 1); default ``model.task_mask``.
        rate_damping : float
            Damping of the least-squares inverse of the Jacobian.

        Returns
        -------
        qd, qdd : numpy.ndarray, shape (K, n)
            [rad/s or m/s], [rad/s^2 or m/s^2].

        """
        q = as_array(q, (model.dof,), 'q')
        t = as_array(t, (), 't')
        if q.ndim != 2 or t.shape != q.shape[:1]:
            raise ShapeError(f'q, t: expected shapes (K, {model.dof}) and (K,), got {q.shape} '
                             f'and {t.shape}')
        point = self.sample(t)
        rows = np.flatnonzero(model.task_mask if mask is None else np.asarray(mask, dtype=float))
        _, J = kinematics._pose_and_jacobian(model, q)
        Jm = J[:, rows, :]
        qd = damped_least_squares(Jm, point.twist[:, rows, None], rate_damping)[..., 0]
        Jd = model.jacobian_dot(q, qd)[:, rows, :]
        rhs = point.acceleration[:, rows] - (Jd @ qd[..., None])[..., 0]
        qdd = damped_least_squares(Jm, rhs[..., None], rate_damping)[..., 0]
        return qd, qdd


class CartesianLine(TaskMotion):
    """
    Straight-line tip motion: position along the segment, orientation by slerp.

    Both follow one smooth time law ``s(t)`` (0 to 1, ``profile`` as in :func:`point_to_point`):
    ``p(t) = p0 + s (p1 - p0)`` and ``R(t) = slerp(R0, R1, s)`` (the shorter arc), so the
    twist is ``[(p1 - p0) s'; theta k s']`` with ``theta k`` the rotation vector of
    ``R1 R0^T`` (base frame). The slerp is evaluated in its matrix form
    ``exp(s theta [k]x) R0`` (Rodrigues), the same rotation as the quaternion slerp
    (:func:`robot_dynamics.spatial.quaternion_slerp`) at a fraction of the cost.

    Parameters
    ----------
    pose_start, pose_goal : array_like, shape (4, 4)
        Tip poses in the base frame.
    duration : float
        Motion time [s], > 0.
    profile : str
        ``'quintic'`` (default), ``'min_jerk'`` (the same rest-to-rest law) or ``'cubic'``.
    start_time : float
        Time [s] at which the motion starts.

    """

    def __init__(self, pose_start, pose_goal, duration, profile='quintic', *, start_time=0.0):
        self.pose_start = check_transform(as_array(pose_start, (4, 4), 'pose_start'),
                                          'pose_start').reshape(4, 4).copy()
        self.pose_goal = check_transform(as_array(pose_goal, (4, 4), 'pose_goal'),
                                         'pose_goal').reshape(4, 4).copy()
        T = _duration(duration)
        if T <= 0.0:
            raise InputError(f'duration: expected > 0 s, got {T}')
        self._law = point_to_point([0.0], [1.0], T, profile, start_time=start_time)
        self._dp = self.pose_goal[:3, 3] - self.pose_start[:3, 3]
        R0 = self.pose_start[:3, :3]
        self._rotvec = matrix_to_rotvec(self.pose_goal[:3, :3] @ R0.T)
        # slerp(R0, R1, s) = exp(s theta [k]x) R0 = R0 + sin(s theta) K R0 + (1 - cos) K^2 R0
        self._theta = float(np.linalg.norm(self._rotvec))
        K = skew(self._rotvec / self._theta) if self._theta > 0.0 else np.zeros((3, 3))
        self._KR0 = K @ R0
        self._K2R0 = K @ self._KR0
        for arr in (self.pose_start, self.pose_goal):
            arr.setflags(write=False)

    @property
    def start_time(self):
        """Time of the start pose [s]."""
        return self._law.start_time

    @property
    def end_time(self):
        """Time of the goal pose [s]."""
        return self._law.end_time

    @property
    def duration(self):
        """Motion time [s]."""
        return self._law.duration

    def sample(self, t):
        """
        Evaluate the tip pose, twist and acceleration at the times ``t``.

        Parameters
        ----------
        t : float or array_like, shape (...)
            Times [s]; the start and goal poses are held outside the motion.

        Returns
        -------
        TaskPoint
            ``pose`` (..., 4, 4), ``twist`` (..., 6) and ``acceleration`` (..., 6), base frame.

        """
        s, sd, sdd = self._law.sample(t)
        s, sd, sdd = s[..., 0], sd[..., 0], sdd[..., 0]
        pose = np.zeros(s.shape + (4, 4))
        pose[..., 3, 3] = 1.0
        pose[..., :3, 3] = self.pose_start[:3, 3] + s[..., None] * self._dp
        angle = (s * self._theta)[..., None, None]
        pose[..., :3, :3] = (self.pose_start[:3, :3] + np.sin(angle) * self._KR0
                             + (1.0 - np.cos(angle)) * self._K2R0)
        axis = np.concatenate((self._dp, self._rotvec))
        return TaskPoint(pose, sd[..., None] * axis, sdd[..., None] * axis)


def _solve_path(model, poses, times, seed, max_joint_step, ik_options):
    """IK along ``poses`` (K, 4, 4) without branch flips (``ik_path``); (K, n) or raise."""
    path = ik_path(model, poses, seed, max_jump=max_joint_step, **ik_options)
    if path.failed:
        k = path.failed[0]
        raise InputError(
            f'Cartesian motion: sample {k} of {len(poses)} (t = {times[k]:.4g} s, tip at '
            f'{np.array2string(poses[k][:3, 3], precision=4)} m) is unreachable: position '
            f'error {path.position_error[k]:.3g} m, orientation error '
            f'{path.orientation_error[k]:.3g} rad ({path.results[k].reason})')
    if path.jumps:
        k = path.jumps[0]
        step = np.abs(path.q[k] - path.q[k - 1])
        j = int(np.argmax(step))
        raise InputError(f'Cartesian motion: joint {model.joint_names[j]!r} jumps by '
                         f'{step[j]:.3g} between sample {k - 1} (t = {times[k - 1]:.4g} s) and '
                         f'sample {k} (t = {times[k]:.4g} s), more than max_joint_step = '
                         f'{max_joint_step}: a branch flip or a singularity on the path')
    return path.q


# ---- trajectory messages as YAML ----------------------------------------------------------------

class TrajectoryPoints(NamedTuple):
    """
    The content of a ``trajectory_msgs/JointTrajectory`` as arrays, and its YAML form.

    ``joint_names`` (n names), ``time_from_start`` (K,) [s], ``positions`` (K, n) and, if given,
    ``velocities`` and ``accelerations`` (K, n) (accelerations only with velocities).
    """

    joint_names: tuple
    time_from_start: np.ndarray
    positions: np.ndarray
    velocities: Optional[np.ndarray] = None
    accelerations: Optional[np.ndarray] = None

    def trajectory(self, start_time=0.0):
        """Return the :class:`JointTrajectory` through the points (:func:`from_waypoints`)."""
        return from_waypoints(self.time_from_start, self.positions, self.velocities,
                              self.accelerations, start_time=start_time)

    def to_yaml(self):
        """
        Return the message as YAML (``time_from_start`` in whole seconds and nanoseconds).

        Each point's arrays are written as flow lists of floats in full precision, so that
        reading the file back gives the same numbers.
        """
        from_waypoints(self.time_from_start, self.positions, self.velocities,
                       self.accelerations)      # the same checks as for a goal
        points = []
        for k, t in enumerate(self.time_from_start):
            sec, nanosec = split(s_to_ns(t))
            point = {'positions': self.positions[k]}
            for name in ('velocities', 'accelerations'):
                if getattr(self, name) is not None:
                    point[name] = getattr(self, name)[k]
            text = ', '.join(f'{key}: [{", ".join(repr(float(v)) for v in values)}]'
                             for key, values in point.items())
            points.append(f'- {{{text}, time_from_start: {{sec: {sec}, nanosec: {nanosec}}}}}')
        names = ', '.join(_yaml_string(name) for name in self.joint_names)
        return f'joint_names: [{names}]\npoints:\n' + '\n'.join(points) + '\n'

    @classmethod
    def from_yaml(cls, source):
        """
        Read a trajectory from YAML text or a file path (a ``.yaml`` or ``.yml`` file).

        The layout of :meth:`to_yaml`; a ``FollowJointTrajectory`` goal (the same under a
        ``trajectory:`` key) is read too. ``time_from_start`` may also be a number of seconds.
        Raises ``InputError`` naming the first problem (a missing key, a point of the wrong
        length, a non-increasing time, a non-finite value).
        """
        doc = trajectory_document(source)
        if not isinstance(doc, dict) or not isinstance(doc.get('points'), list) or \
                not isinstance(doc.get('joint_names'), list) or not doc['points']:
            raise InputError('trajectory: expected a mapping with joint_names (a list) and '
                             'points (a non-empty list)')
        names = tuple(str(name) for name in doc['joint_names'])
        if len(set(names)) != len(names) or not names:
            raise InputError(f'trajectory: joint_names must be distinct names, got {list(names)}')
        points = doc['points']
        times, arrays = [], {'positions': [], 'velocities': [], 'accelerations': []}
        for k, point in enumerate(points):
            if not isinstance(point, dict) or 'positions' not in point \
                    or 'time_from_start' not in point:
                raise InputError(f'trajectory: point {k} needs positions and time_from_start')
            times.append(_seconds(point['time_from_start'], k))
            for name, values in arrays.items():
                values.append(point.get(name) or None)
        out = {}
        for name, values in arrays.items():
            given = [v is not None for v in values]
            if name != 'positions' and not any(given):
                out[name] = None
                continue
            if not all(given):
                raise InputError(f'trajectory: point {given.index(False)} has no {name} (all '
                                 'points or none must have them)')
            try:
                out[name] = np.array(values, dtype=float)
            except (TypeError, ValueError):
                raise InputError(f'trajectory: {name} must be lists of {len(names)} numbers')\
                    from None
        result = cls(names, np.array(times), out['positions'], out['velocities'],
                     out['accelerations'])
        from_waypoints(result.time_from_start, result.positions, result.velocities,
                       result.accelerations)            # shapes, order, finite values
        if result.positions.shape[1] != len(names):
            raise ShapeError(f'trajectory: {result.positions.shape[1]} positions per point for '
                             f'{len(names)} joint_names')
        return result


def _yaml_string(text):
    import yaml
    return yaml.safe_dump(str(text), default_style='"').strip()


def trajectory_document(source):
    """
    Return the YAML document of a trajectory: ``source`` a file name (``.yaml``, ``.yml``) or text.

    An action goal's ``trajectory:`` key is looked into. Raises ``InputError`` for a missing file
    or text that is not YAML.
    """
    import yaml
    text = str(source)
    if '\n' not in text and Path(text).suffix in ('.yaml', '.yml'):
        if not Path(text).is_file():
            raise InputError(f'trajectory file not found: {text!r}')
        text = Path(text).read_text()
    try:
        doc = yaml.load(text, Loader=getattr(yaml, 'CSafeLoader', yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise InputError(f'trajectory: not YAML: {exc}') from None
    if isinstance(doc, dict) and isinstance(doc.get('trajectory'), dict):
        doc = doc['trajectory']
    return doc


def _seconds(value, k):
    """Return a ``time_from_start`` (``{sec, nanosec}`` or a number) in seconds."""
    if isinstance(value, dict):
        try:
            return ns_to_s(join(value.get('sec', 0), value.get('nanosec', 0)))
        except (TypeError, ValueError):
            pass
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise InputError(f'trajectory: point {k}: time_from_start must be {{sec, nanosec}} or '
                     f'seconds, got {value!r}')


# ---- limits ---------------------------------------------------------------------------------

#: Default sampling rate [Hz] of :func:`check_limits`.
LIMIT_CHECK_RATE = 200.0
#: Most samples :func:`check_limits` evaluates at once, so that its memory does not grow with
#: the duration (about 10 MB for a quintic of 7 joints).
MAX_CHECK_SAMPLES = 10_000


def check_limits(model, trajectory, *, rate=LIMIT_CHECK_RATE, tolerance=1e-9):
    """
    Raise ``InputError`` unless ``trajectory`` keeps to the model's position and velocity limits.

    The trajectory is sampled at ``rate`` [Hz] and at every break, so that a spline overshooting
    a limit between its points is caught, not only points outside. ``tolerance`` [rad or m,
    relative for velocities] forgives rounding at a limit. The message names the joint, the
    value and its time in seconds from the trajectory's start (the times of a controller's
    trajectory are on its clock, since its epoch: a reader wants to know where in the goal).
    A trajectory longer than MAX_GOAL_DURATION is refused before it is sampled.
    """
    check_duration(trajectory.duration, 'trajectory: the duration')
    t = np.union1d(trajectory.breaks,
                   np.arange(trajectory.start_time, trajectory.end_time, 1.0 / rate))
    for first in range(0, t.size, MAX_CHECK_SAMPLES):
        _check_samples(model, trajectory, t[first:first + MAX_CHECK_SAMPLES], tolerance)


def _check_samples(model, trajectory, t, tolerance):
    """Raise ``InputError`` for the first limit ``trajectory`` breaks at the times ``t``."""
    point = trajectory.sample(t)
    since = t - trajectory.start_time
    outside = (point.q < model.lower - tolerance) | (point.q > model.upper + tolerance)
    if outside.any():
        k, j = np.argwhere(outside)[0]
        raise InputError(f'joint {model.joint_names[j]!r}: position {point.q[k, j]:.6g} '
                         f'{since[k]:.3f} s after the start is outside its limits '
                         f'[{model.lower[j]:g}, {model.upper[j]:g}]')
    fast = np.abs(point.qd) > model.velocity_limit * (1.0 + tolerance)
    if fast.any():
        k, j = np.argwhere(fast)[0]
        raise InputError(f'joint {model.joint_names[j]!r}: velocity {point.qd[k, j]:.6g} '
                         f'{since[k]:.3f} s after the start is above its limit '
                         f'{model.velocity_limit[j]:g}')
