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
Cartesian trajectories through poses with times, and velocity-limited motions to a target.

:class:`CartesianTrajectory` is what a ``CartesianTrajectory`` message's points describe: the
tip passes through each pose at its time. Positions are the joint follower's splines
(:func:`~robot_dynamics.trajectory.from_waypoints`): positions only, a C2 spline that starts
with the given velocity and acceleration and ends at rest; with twists, cubic Hermite; with
accelerations too, quintic Hermite. Orientations are C2 too, in the Lie algebra of each
segment: between the points k and k+1

    R(t) = R_k exp([phi(t - t_k)]x),    phi(0) = 0,  phi(h_k) = log(R_k^T R_k+1),

with ``phi`` the quintic Hermite polynomial that meets the angular velocity and acceleration
at both ends, in the body frame ``w_b = J_r(phi) phi'``, ``dw_b/dt = J_r(phi) phi'' +
(dJ_r/dt) phi'`` (``J_r`` the right Jacobian of SO(3); at ``phi = 0`` it is the identity, so
``phi'(0) = w_b``, ``phi''(0) = dw_b/dt``). Where the points give twists and accelerations they
set these values exactly; elsewhere they are those of a C2 spline through the accumulated
rotation vectors ``sum log(R_j^T R_j+1)`` (a slerp-like path that is C2 through every point;
for a single rotation axis it is the spline of the angle). With two points and no twists, the
path is the slerp of the two orientations.

:func:`to_target` is the motion of a streamed target (a ``target_pose`` topic): from the
current reference (pose, twist, acceleration) to the target at rest, in the least time that
keeps the peak speeds within ``max_linear_velocity`` and ``max_angular_velocity``.

:func:`check_motion` checks a motion on a model before it starts: every pose reachable (IK
along it, on one branch), the joint positions and velocities within the limits.

Times in s, positions in m, orientations as unit quaternions ``(x, y, z, w)`` (ROS order) or
rotation matrices, twists ``[v; w]`` [m/s, rad/s] and accelerations [m/s^2, rad/s^2] in the
base frame.
"""

import math
from typing import NamedTuple, Optional

import numpy as np

from .errors import as_array, InputError, ShapeError
from .spatial import matrix_to_rotvec, quaternion_to_matrix, rotvec_to_matrix, skew
from .trajectory import (_quintic_hermite, _seconds, check_limits, from_waypoints,
                         increasing_times, TaskMotion, TaskPoint, trajectory_document)

#: Largest departure of a quaternion's norm from 1 that is accepted.
QUATERNION_NORM_TOLERANCE = 1e-6
#: Peak speed of the rest-to-rest quintic over its mean speed (``s' = 30 u^2 (1 - u)^2``).
QUINTIC_PEAK = 1.875


def quaternions_to_matrices(quaternions, name='orientations'):
    """
    Return rotations (K, 3, 3) from unit quaternions (K, 4) ``(x, y, z, w)``, checked.

    Raises ``InputError`` naming the first point whose quaternion is not finite or whose norm
    departs from 1 by more than ``QUATERNION_NORM_TOLERANCE``.
    """
    quat = np.asarray(quaternions, dtype=float)
    if quat.ndim != 2 or quat.shape[1] != 4:
        raise ShapeError(f'{name}: expected (K, 4) quaternions (x, y, z, w), got shape '
                         f'{quat.shape}')
    bad = ~np.isfinite(quat).all(axis=1)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InputError(f'{name}[{k}] is {quat[k].tolist()}: values must be finite')
    norm = np.linalg.norm(quat, axis=1)
    off = np.abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE
    if off.any():
        k = int(np.flatnonzero(off)[0])
        raise InputError(f'{name}[{k}] has norm {norm[k]:.9g}: a unit quaternion is needed '
                         f'(within {QUATERNION_NORM_TOLERANCE:g})')
    return quaternion_to_matrix(quat)


def right_jacobian(phi):
    """
    Right Jacobian of SO(3) (..., 3, 3) at rotation vectors ``phi`` (..., 3), real or complex.

    ``J_r(phi) = I - (1 - cos t) / t^2 [phi]x + (t - sin t) / t^3 [phi]x^2``, ``t = |phi|``,
    so that ``d/dt exp(phi) = exp(phi) [J_r(phi) phi']x``. The coefficients are functions of
    ``t^2`` (Taylor series near 0), so a complex ``phi`` gives derivatives by complex steps.
    """
    t2 = np.sum(phi * phi, axis=-1)[..., None, None]
    small = np.abs(t2) < 1e-6
    t2s = np.where(small, 1.0, t2)
    t = np.sqrt(t2s)
    a = np.where(small, 0.5 - t2 / 24.0 + t2 * t2 / 720.0, (1.0 - np.cos(t)) / t2s)
    b = np.where(small, 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0, (t - np.sin(t)) / (t2s * t))
    K = skew(phi) if not np.iscomplexobj(phi) else _complex_skew(phi)
    return np.eye(3) - a * K + b * (K @ K)


def _complex_skew(v):
    x, y, z = np.moveaxis(v, -1, 0)
    zero = np.zeros_like(x)
    return np.stack((np.stack((zero, -z, y), -1), np.stack((z, zero, -x), -1),
                     np.stack((-y, x, zero), -1)), -2)


def _right_jacobian_rate(phi, phid):
    """``dJ_r/dt`` (..., 3, 3) along ``phi' = phid``, by a complex step (exact to rounding)."""
    step = 1e-30
    return right_jacobian(phi + 1j * step * phid).imag / step


class CartesianTrajectory(TaskMotion):
    """
    A tip trajectory through poses at times, C2 in position and orientation (module docstring).

    Parameters
    ----------
    time_from_start : array_like, shape (K,)
        Times [s] of the points after ``start_time``, finite and strictly increasing.
    positions : array_like, shape (K, 3)
        Tip positions [m], base frame.
    orientations : array_like, shape (K, 4) or (K, 3, 3)
        Unit quaternions ``(x, y, z, w)`` (norm 1 within ``QUATERNION_NORM_TOLERANCE``) or
        rotation matrices.
    twists, accelerations : array_like, shape (K, 6), optional
        ``[v; w]`` [m/s, rad/s] and its derivative at each point (accelerations need twists).
    start_time : float
        Time [s] of ``time_from_start = 0``.
    start_twist, start_acceleration : array_like, shape (6,), optional
        The motion's twist and acceleration at the first point when the points give none (a
        motion under way continues smoothly); default rest.

    """

    def __init__(self, time_from_start, positions, orientations, twists=None,
                 accelerations=None, *, start_time=0.0, start_twist=None,
                 start_acceleration=None):
        t = increasing_times(time_from_start, 'time_from_start')
        k = t.size
        p = as_array(positions, (3,), 'positions')
        if p.shape != (k, 3):
            raise ShapeError(f'positions: expected ({k}, 3) (one per time_from_start), got '
                             f'shape {p.shape}')
        o = np.asarray(orientations, dtype=float)
        if o.shape == (k, 3, 3):
            if not np.isfinite(o).all():
                raise InputError('orientations: values must be finite')
            R = o.copy()
        elif o.shape[:1] == (k,):
            R = quaternions_to_matrices(o)
        else:
            raise ShapeError(f'orientations: expected ({k}, 4) quaternions or ({k}, 3, 3) '
                             f'rotations, got shape {o.shape}')
        V = None if twists is None else as_array(twists, (6,), 'twists')
        A = None if accelerations is None else as_array(accelerations, (6,), 'accelerations')
        for name, x in (('twists', V), ('accelerations', A)):
            if x is not None and x.shape != (k, 6):
                raise ShapeError(f'{name}: expected ({k}, 6), got shape {x.shape}')
        if A is not None and V is None:
            raise InputError('accelerations given without twists')
        if V is not None and (start_twist is not None or start_acceleration is not None):
            raise InputError('start_twist, start_acceleration: the points have twists; give '
                             'the first point its values instead')
        v0 = np.zeros(6) if start_twist is None else as_array(start_twist, (6,), 'start_twist')
        a0 = np.zeros(6) if start_acceleration is None else \
            as_array(start_acceleration, (6,), 'start_acceleration')
        v0, a0 = v0.reshape(6), a0.reshape(6)
        t0 = float(as_array(start_time, (), 'start_time'))
        self._positions = from_waypoints(
            t, p, None if V is None else V[:, :3], None if A is None else A[:, :3],
            start_time=t0, **({} if V is not None else
                              {'start_velocity': v0[:3], 'start_acceleration': a0[:3]}))
        self.times = t0 + t
        self.rotations = R
        # body-frame angular velocity and acceleration at the points
        if V is not None:
            w = np.einsum('kji,kj->ki', R, V[:, 3:])
            alpha = np.zeros_like(w) if A is None else np.einsum('kji,kj->ki', R, A[:, 3:])
        if V is None or A is None:
            delta = matrix_to_rotvec(np.swapaxes(R[:-1], -1, -2) @ R[1:]) if k > 1 else \
                np.zeros((0, 3))
            chart = from_waypoints(t, np.concatenate((np.zeros((1, 3)),
                                                      np.cumsum(delta, axis=0))),
                                   None if V is None else w,
                                   start_velocity=None if V is not None else R[0].T @ v0[3:],
                                   start_acceleration=None if V is not None else
                                   R[0].T @ a0[3:]).sample(t)
            if V is None:
                w = chart.qd
            alpha = chart.qdd
        self._segments = self._orientation_segments(w, alpha)
        self._at_rest = None     # the point after the last, once sampled

    def _orientation_segments(self, w, alpha):
        """Quintic coefficients (K-1, 6, 3) of ``phi`` per segment from the knots' values."""
        R, t = self.rotations, self.times
        if t.size == 1:
            return np.zeros((0, 6, 3))
        h = np.diff(t)
        delta = matrix_to_rotvec(np.swapaxes(R[:-1], -1, -2) @ R[1:])
        Jr = right_jacobian(delta)
        phid1 = np.linalg.solve(Jr, w[1:][..., None])[..., 0]
        rate = _right_jacobian_rate(delta, phid1)
        phidd1 = np.linalg.solve(Jr, (alpha[1:] - (rate @ phid1[..., None])[..., 0])[..., None])
        zero = np.zeros_like(delta)
        return _quintic_hermite(h, zero, w[:-1], alpha[:-1], delta, phid1, phidd1[..., 0])

    @property
    def start_time(self):
        """Time of the first point [s]."""
        return float(self.times[0])

    @property
    def end_time(self):
        """Time of the last point [s]."""
        return float(self.times[-1])

    @property
    def duration(self):
        """Time from the first point to the last [s]."""
        return self.end_time - self.start_time

    def sample(self, t):
        """
        Evaluate the tip pose, twist and acceleration at the times ``t`` (...) [s].

        Returns a :class:`~robot_dynamics.trajectory.TaskPoint` (base frame); before the first
        point and after the last the poses are held at rest (a single time after the last: the
        point sampled once, copied at each call).
        """
        t = np.asarray(t, dtype=float)
        if not np.isfinite(t).all():
            raise InputError('t: times must be finite')
        if t.ndim == 0 and t > self.times[-1]:
            # a goal reached is held: each control cycle samples this same point, which took
            # most of a held Cartesian goal's cycle. Copies, not read-only arrays: numba
            # compiles a kernel anew for a read-only argument (a stall of seconds in a cycle)
            if self._at_rest is None:
                self._at_rest = self._sample(t)
            return TaskPoint(*(x.copy() for x in self._at_rest))
        return self._sample(t)

    def _sample(self, t):
        shape = t.shape
        t = t.reshape(-1)
        pos = self._positions.sample(t)
        pose = np.zeros(t.shape + (4, 4))
        pose[:, 3, 3] = 1.0
        pose[:, :3, 3] = pos.q
        twist = np.zeros(t.shape + (6,))
        acc = np.zeros(t.shape + (6,))
        twist[:, :3], acc[:, :3] = pos.qd, pos.qdd
        times, R = self.times, self.rotations
        if times.size == 1:
            pose[:, :3, :3] = R[0]
        else:
            seg = np.clip(np.searchsorted(times, t, side='right') - 1, 0, times.size - 2)
            inside = (t >= times[0]) & (t <= times[-1])
            u = np.clip(t - times[seg], 0.0, times[seg + 1] - times[seg])[:, None]
            c = self._segments[seg]                                  # (S, 6, 3)
            powers = u[..., None] ** np.arange(6)                    # (S, 1, 6)
            phi = np.einsum('sxd,sdi->si', powers, c)
            d1 = np.arange(1, 6) * powers[..., :5]
            phid = np.einsum('sxd,sdi->si', d1, c[:, 1:]) * inside[:, None]
            d2 = np.arange(2, 6) * np.arange(1, 5) * powers[..., :4]
            phidd = np.einsum('sxd,sdi->si', d2, c[:, 2:]) * inside[:, None]
            Rt = R[seg] @ rotvec_to_matrix(phi)
            Jr = right_jacobian(phi)
            w_b = (Jr @ phid[..., None])[..., 0]
            a_b = (Jr @ phidd[..., None] + _right_jacobian_rate(phi, phid) @ phid[..., None])
            pose[:, :3, :3] = Rt
            twist[:, 3:] = (Rt @ w_b[..., None])[..., 0]
            acc[:, 3:] = (Rt @ a_b)[..., 0]
        return TaskPoint(pose.reshape(shape + (4, 4)), twist.reshape(shape + (6,)),
                         acc.reshape(shape + (6,)))


def within_reach(positions, reach, what):
    """
    Raise ``InputError`` for the first of ``positions`` (K, 3) [m] farther than ``reach`` [m].

    Distances from the base origin (positions in the base frame); ``what`` names the position,
    ``{k}`` in it its index.
    """
    distance = np.linalg.norm(positions, axis=-1)
    far = distance > reach * (1.0 + 1e-9)      # rounding at full stretch
    if far.any():
        k = int(np.argmax(far))
        raise InputError(f'{what.format(k=k)}: the tip at {positions[k].tolist()} m is '
                         f'{distance[k]:.6g} m from the base, beyond the reach of the arm, '
                         f'{reach:.6g} m')


def to_target(start, target, max_linear_velocity, max_angular_velocity, *, start_time=0.0,
              reach=math.inf):
    """
    Return the motion from ``start`` to the pose ``target`` at rest, within speed limits.

    Parameters
    ----------
    start : TaskPoint
        The reference now: pose (4, 4), twist (6,) and acceleration (6,), base frame.
    target : array_like, shape (4, 4)
        The pose to reach.
    max_linear_velocity, max_angular_velocity : float
        Peak tip speeds [m/s, rad/s] of a motion from rest, > 0.
    start_time : float
        Time [s] of ``start``.
    reach : float
        Farthest [m] the tip gets from the base origin: a target beyond is refused before its
        motion, which lasts in proportion to the distance, is built.

    Returns
    -------
    CartesianTrajectory
        Two points: the duration is the least for which the rest-to-rest quintic keeps both
        peak speeds within the limits (``1.875`` times the distance over the limit), and the
        motion continues ``start``'s twist and acceleration (C2 where it starts).

    """
    lin, ang = float(max_linear_velocity), float(max_angular_velocity)
    if not (math.isfinite(lin) and lin > 0.0 and math.isfinite(ang) and ang > 0.0):
        raise InputError(f'max_linear_velocity, max_angular_velocity: expected > 0, got {lin}, '
                         f'{ang}')
    pose0 = as_array(start[0], (4, 4), 'start pose').reshape(4, 4)
    target = as_array(target, (4, 4), 'target').reshape(4, 4)
    within_reach(target[None, :3, 3], reach, 'target')
    distance = float(np.linalg.norm(target[:3, 3] - pose0[:3, 3]))
    angle = float(np.linalg.norm(matrix_to_rotvec(target[:3, :3] @ pose0[:3, :3].T)))
    duration = max(QUINTIC_PEAK * max(distance / lin, angle / ang), 1e-3)
    twist = None if start[1] is None else as_array(start[1], (6,), 'start twist').reshape(6)
    acc = None if start[2] is None else as_array(start[2], (6,), 'start acceleration')
    return CartesianTrajectory([0.0, duration], [pose0[:3, 3], target[:3, 3]],
                               np.stack((pose0[:3, :3], target[:3, :3])),
                               start_time=start_time, start_twist=twist,
                               start_acceleration=None if acc is None else acc.reshape(6))


#: IK settings of :func:`check_motion`: each sample seeded with the previous one and solved
#: without random restarts by iterations alone (not a time budget: the verdict must not depend
#: on how busy the host is), to a tolerance far below any tracking error.
CHECK_IK_OPTIONS = {'tol_position': 1e-5, 'tol_orientation': 1e-4, 'timeout': 10.0,
                    'max_restarts': 0, 'max_iterations': 200}


def check_motion(model, motion, seed, **options):
    """
    Raise ``InputError`` unless ``motion`` is reachable and within the joint limits.

    The motion (a :class:`~robot_dynamics.trajectory.TaskMotion`) is converted through IK from
    ``seed`` (n,) by :meth:`~robot_dynamics.trajectory.TaskMotion.to_joint_trajectory`
    (``options`` go there, over :data:`CHECK_IK_OPTIONS`): an unreachable pose or a branch flip
    is named with its time; then the joint positions and velocities are checked
    (:func:`~robot_dynamics.trajectory.check_limits`). Returns the joint trajectory.
    """
    joints = motion.to_joint_trajectory(model, seed, **{**CHECK_IK_OPTIONS, **options})
    check_limits(model, joints)
    return joints


class CartesianPoints(NamedTuple):
    """
    The content of a ``CartesianTrajectory`` message as arrays, and its YAML form.

    ``time_from_start`` (K,) [s], ``positions`` (K, 3) [m], ``quaternions`` (K, 4) ``(x, y, z,
    w)``, ``twists`` and ``accelerations`` (K, 6) ``[linear; angular]`` or None, base frame;
    ``frame_id`` and ``controlled_frame`` as the message's (empty: the base link, the tip).
    """

    time_from_start: np.ndarray
    positions: np.ndarray
    quaternions: np.ndarray
    twists: Optional[np.ndarray] = None
    accelerations: Optional[np.ndarray] = None
    frame_id: str = ''
    controlled_frame: str = ''

    @classmethod
    def from_yaml(cls, source):
        """
        Read Cartesian points from YAML text or a ``.yaml`` file, in the message's layout.

        ``points`` (a list of ``time_from_start``, ``pose`` {``position`` {x, y, z},
        ``orientation`` {x, y, z, w}}, optional ``twist`` and ``acceleration`` {``linear``,
        ``angular``}), optional ``header: {frame_id}`` and ``controlled_frame``; a
        FollowCartesianTrajectory goal (the same under ``trajectory:``) is read too. Raises
        ``InputError`` naming the first problem (as :class:`CartesianTrajectory` checks them).
        """
        doc = trajectory_document(source)
        if not is_cartesian(doc):
            raise InputError('trajectory: expected a mapping with points (a non-empty list), '
                             'each with time_from_start and pose')
        times, rows = [], {'position': [], 'orientation': [], 'twist': [], 'acceleration': []}
        for k, point in enumerate(doc['points']):
            if not isinstance(point, dict) or 'pose' not in point:
                raise InputError(f'trajectory: point {k} needs time_from_start and pose')
            times.append(_seconds(point.get('time_from_start'), k))
            pose = point['pose'] or {}
            rows['position'].append(_fields(pose.get('position'), 'xyz', k, 'position'))
            rows['orientation'].append(_fields(pose.get('orientation'), 'xyzw', k,
                                               'orientation'))
            for name in ('twist', 'acceleration'):
                part = point.get(name) or {}
                rows[name].append(_fields(part.get('linear'), 'xyz', k, f'{name}.linear', 0.0)
                                  + _fields(part.get('angular'), 'xyz', k, f'{name}.angular',
                                            0.0))
        twists, accelerations = (np.array(rows[name]) for name in ('twist', 'acceleration'))
        header = doc.get('header') or {}
        points = cls(np.array(times), np.array(rows['position']), np.array(rows['orientation']),
                     twists if twists.any() else None,
                     accelerations if accelerations.any() else None,
                     str(header.get('frame_id', '')), str(doc.get('controlled_frame', '')))
        CartesianTrajectory(points.time_from_start, points.positions, points.quaternions,
                            points.twists, points.accelerations)    # order, finite, unit
        return points


def is_cartesian(doc):
    """Return whether a YAML document (parsed) holds Cartesian points (each with a pose)."""
    points = doc.get('points') if isinstance(doc, dict) else None
    return isinstance(points, list) and bool(points) and \
        all(isinstance(p, dict) and 'pose' in p for p in points)


def _fields(mapping, names, k, what, default=None):
    """Return ``[mapping[n] for n in names]`` as floats, or raise naming point ``k``."""
    if mapping is None and default is not None:
        return [default] * len(names)
    try:
        return [float(mapping[n]) if default is None else float(mapping.get(n, default))
                for n in names]
    except (KeyError, TypeError, ValueError, AttributeError):
        raise InputError(f'trajectory: point {k}: {what} needs numbers {", ".join(names)}, got '
                         f'{mapping!r}') from None
