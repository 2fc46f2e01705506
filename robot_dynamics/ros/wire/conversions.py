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
Message <-> numpy conversions: where ROS message fields meet library arrays.

Poses are 4x4 homogeneous transforms ``T_base_link``; quaternions in messages are (x, y, z, w)
as in the library. Joint values travel by name: messages carry their own joint order, the
library works in model order (``RobotModel.joint_names``); a JointState's joints are read by
:class:`~robot_dynamics.ros.wire.cdr.JointStateReader` (raw messages and message objects alike).
Every check raises ``robot_dynamics.InputError`` with a message naming the problem, which the
nodes pass on to the caller (service response, action result, log line).
"""

from builtin_interfaces.msg import Duration, Time
from cartesian_control_msgs.msg import CartesianTrajectoryPoint
from geometry_msgs.msg import Accel, Pose, PoseStamped, Twist
import numpy as np
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectoryPoint

from ...errors import InputError, quoted, unknown_name
from ...spatial import matrix_to_quaternion, quaternion_to_matrix
from ...stamps import join, ns_to_s, s_to_ns, split

#: Largest accepted deviation of a pose quaternion's norm from 1.
QUATERNION_NORM_TOLERANCE = 1e-6
#: Most points a trajectory may have: room for the excitation of a long identification run
#: (``robot-dynamics excite`` samples at 50 Hz: 200 s); the spline is built and checked when the
#: goal starts, in the control cycle (about 0.1 ms per point on a loaded 2-core host).
MAX_TRAJECTORY_POINTS = 10000
#: Longest joint name a message may carry [characters].
MAX_NAME_LENGTH = 256


def to_seconds(stamp):
    """Return a ``builtin_interfaces`` Time or Duration as float seconds."""
    return ns_to_s(to_nanoseconds(stamp))


def to_nanoseconds(stamp):
    """Return a ``builtin_interfaces`` Time or Duration as integer nanoseconds."""
    return join(stamp.sec, stamp.nanosec)


def duration_msg(seconds):
    """Return ``builtin_interfaces/Duration`` for ``seconds`` (>= 0)."""
    sec, nanosec = split(s_to_ns(seconds))
    return Duration(sec=sec, nanosec=nanosec)


def time_msg(nanoseconds):
    """Return ``builtin_interfaces/Time`` for integer ``nanoseconds``."""
    sec, nanosec = split(nanoseconds)
    return Time(sec=sec, nanosec=nanosec)


def pose_to_matrix(pose):
    """
    Return the 4x4 transform of a ``geometry_msgs/Pose``.

    Raises ``InputError`` for non-finite values or a quaternion whose norm differs from 1 by more
    than ``QUATERNION_NORM_TOLERANCE`` (a non-unit quaternion is not a rotation: normalising it
    silently would solve for a pose the caller did not ask for).
    """
    p, o = pose.position, pose.orientation
    xyz = np.array([p.x, p.y, p.z])
    quat = np.array([o.x, o.y, o.z, o.w])
    if not (np.isfinite(xyz).all() and np.isfinite(quat).all()):
        raise InputError(f'pose: non-finite values in position {xyz.tolist()} or orientation '
                         f'{quat.tolist()}')
    norm = float(np.linalg.norm(quat))
    if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
        raise InputError(f'pose: orientation quaternion (x, y, z, w) = {quat.tolist()} has norm '
                         f'{norm:.9g}, expected a unit quaternion')
    T = np.eye(4)
    T[:3, :3] = quaternion_to_matrix(quat / norm)
    T[:3, 3] = xyz
    return T


def matrix_to_pose(T):
    """Return a ``geometry_msgs/Pose`` for the 4x4 transform ``T``."""
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in T[:3, 3])
    o = pose.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in matrix_to_quaternion(T[:3, :3]))
    return pose


def pose_stamped(T, frame_id, stamp):
    """Return a ``geometry_msgs/PoseStamped`` of ``T`` in ``frame_id`` at ``stamp`` (Time)."""
    msg = PoseStamped(pose=matrix_to_pose(T))
    msg.header.frame_id = frame_id
    msg.header.stamp = stamp
    return msg


def check_frame(frame_id, model):
    """Raise ``InputError`` unless ``frame_id`` is empty or the model's base link."""
    if frame_id not in ('', model.base_link):
        raise InputError(f'frame_id {frame_id!r}: poses must be given in the base frame '
                         f'{model.base_link!r} (or with an empty frame_id meaning it); no other '
                         'frame is transformed')


def non_finite_error(what, name, value):
    """Return the ``InputError`` for joint ``name``'s non-finite ``value`` in ``what``."""
    return InputError(f'{what}: joint {name!r} is {value}: values must be finite')


def joint_values(values, names, what):
    """Return ``values`` (one per name) as a finite float array, or raise naming the joint."""
    arr = np.asarray(values, dtype=float)
    if arr.shape != (len(names),):
        raise InputError(f'{what}: expected {len(names)} values (one per name), got '
                         f'{arr.size}')
    bad = ~np.isfinite(arr)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise non_finite_error(what, names[j], arr[j])
    return arr


class JointMap:
    """
    Between the model's joint order and another order of its joints (a ``joints`` parameter).

    ``names`` lists every model joint once, in the order of the commands or states a node
    exchanges (a forward_command_controller's ``joints``).
    """

    def __init__(self, model, names):
        self.names = list(names)
        self._model_index = model.joint_indices(self.names)   # per name, its model position

    def model_to_names(self, values):
        """Return ``values`` (..., n) in model order rearranged into the order of ``names``."""
        return values[..., self._model_index]

    def names_to_model(self, values):
        """Return ``values`` (..., n) in the order of ``names`` rearranged into model order."""
        values = np.asarray(values, dtype=float)
        out = np.empty_like(values)
        out[..., self._model_index] = values
        return out


def joint_state(names, stamp, q, qd=None, tau=None):
    """Return a ``sensor_msgs/JointState`` with ``names`` and the given arrays."""
    msg = JointState(name=list(names))
    msg.header.stamp = stamp
    msg.position = q.tolist()
    if qd is not None:
        msg.velocity = qd.tolist()
    if tau is not None:
        msg.effort = tau.tolist()
    return msg


def trajectory_point(q=None, qd=None, qdd=None, effort=None, time_from_start=None):
    """Return a ``trajectory_msgs/JointTrajectoryPoint`` of the given arrays (any may be None)."""
    point = JointTrajectoryPoint()
    for field, values in (('positions', q), ('velocities', qd), ('accelerations', qdd),
                          ('effort', effort)):
        if values is not None:
            setattr(point, field, np.asarray(values, dtype=float).tolist())
    if time_from_start is not None:
        point.time_from_start = duration_msg(time_from_start)
    return point


class JointNameError(InputError):
    """The joint names of a message do not match the model's joints."""

    #: the action result's code for it (control_msgs' and cartesian_control_msgs')
    error_code = 'INVALID_JOINTS'


class PostureError(InputError):
    """A Cartesian trajectory's points give a posture, which this controller does not follow."""

    error_code = 'INVALID_POSTURE'


def _check_point_count(msg, count):
    """
    Raise unless the trajectory ``msg`` has points, at most MAX_TRAJECTORY_POINTS.

    ``count``: the number it had when taken, if its points were left out
    (:class:`~robot_dynamics.ros.wire.capped.CappedPoints`); else None, its own.
    """
    count = len(msg.points) if count is None else count
    if count > MAX_TRAJECTORY_POINTS:
        raise InputError(f'{count} points: a trajectory has at most {MAX_TRAJECTORY_POINTS}')
    if not count:
        raise InputError('the trajectory has no points')


def trajectory_arrays(msg, model, count=None):
    """
    Return ``(time_from_start (K,), positions (K, n), velocities, accelerations)``, model order.

    From a ``trajectory_msgs/JointTrajectory`` naming every joint of the model once, in any
    order; velocities and accelerations are ``None`` when the points carry none, and must be
    given for every point or for none. Raises ``JointNameError`` for unknown, missing or
    repeated joints or a name longer than MAX_NAME_LENGTH, ``InputError`` for more than
    MAX_TRAJECTORY_POINTS points (``count``, if taken capped) or anything else malformed,
    naming the point. Sizes are checked first, so that the time spent on a message is linear in
    its size.
    """
    names = list(msg.joint_names)
    long = next((name for name in names if len(name) > MAX_NAME_LENGTH), None)
    if long is not None:
        raise JointNameError(f'joint name {quoted(long)} is longer than {MAX_NAME_LENGTH} '
                             'characters')
    try:
        idx = model.joint_indices(names)
    except InputError as exc:
        raise JointNameError(str(exc)) from None
    _check_point_count(msg, count)
    n = model.dof
    times = np.array([to_seconds(p.time_from_start) for p in msg.points])
    fields = {}
    for field in ('positions', 'velocities', 'accelerations'):
        sizes = {len(getattr(p, field)) for p in msg.points}
        if sizes == {0} and field != 'positions':
            fields[field] = None
            continue
        if sizes != {n}:
            k = next(k for k, p in enumerate(msg.points) if len(getattr(p, field)) != n)
            raise InputError(f'point {k}: {len(getattr(msg.points[k], field))} {field} for '
                             f'{n} joints (give one per joint name, in every point, or none)')
        values = np.empty((len(msg.points), n))
        for k, p in enumerate(msg.points):
            values[k, idx] = joint_values(getattr(p, field), names, f'point {k} {field}')
        fields[field] = values
    return times, fields['positions'], fields['velocities'], fields['accelerations']


def check_controlled_frame(frame, model):
    """Raise ``InputError`` unless ``frame`` is empty or the model's tip (the controlled frame)."""
    if frame in ('', model.tip_link):
        return
    if frame not in model.frames:
        raise unknown_name('controlled_frame', str(frame)[:MAX_NAME_LENGTH], list(model.frames))
    raise InputError(f'controlled_frame {frame!r}: only the tip {model.tip_link!r} (or an '
                     'empty controlled_frame meaning it) is controlled')


def xyz(v):
    """Return ``[x, y, z]`` of a geometry_msgs Vector3, Point or the like."""
    return [v.x, v.y, v.z]


def cartesian_arrays(msg, model, count=None):
    """
    Return ``(time_from_start (K,), positions (K, 3), quaternions (K, 4), twists, accelerations)``.

    From a ``cartesian_control_msgs/CartesianTrajectory`` in the base frame (``header.frame_id``
    empty or the base link) of the tip (``controlled_frame`` empty or the tip link); quaternions
    ``(x, y, z, w)``; twists and accelerations (K, 6) ``[linear; angular]``, None when they are
    zero at every point (not given; accelerations need twists). Jerks must be zero and postures
    empty (not followed: ``PostureError`` for a posture). Raises ``InputError`` naming the
    problem; the values themselves (finite, unit quaternions, increasing times) are checked by
    the library (:func:`robot_dynamics.cartesian_follower.check_goal`).
    """
    check_frame(msg.header.frame_id, model)
    check_controlled_frame(msg.controlled_frame, model)
    _check_point_count(msg, count)
    for k, p in enumerate(msg.points):
        if p.posture.posture_joint_names or len(p.posture.posture_joint_values):
            raise PostureError(f'point {k} gives a posture: not followed by this controller '
                               '(its nullspace posture is the nullspace.posture parameter); '
                               'leave posture empty')
        if np.any(np.array(xyz(p.jerk.linear) + xyz(p.jerk.angular)) != 0.0):
            raise InputError(f'point {k} gives a jerk: not followed by this controller (the '
                             'motion between points is given by pose, twist and '
                             'acceleration); leave jerk 0')
    times = np.array([to_seconds(p.time_from_start) for p in msg.points])
    positions = np.array([xyz(p.pose.position) for p in msg.points])
    quaternions = np.array([xyz(p.pose.orientation) + [p.pose.orientation.w]
                            for p in msg.points])
    twists = np.array([xyz(p.twist.linear) + xyz(p.twist.angular) for p in msg.points])
    accelerations = np.array([xyz(p.acceleration.linear) + xyz(p.acceleration.angular)
                              for p in msg.points])
    twists = None if not np.any(twists != 0.0) else twists
    accelerations = None if not np.any(accelerations != 0.0) else accelerations
    if twists is None and accelerations is not None:
        raise InputError('the points give accelerations without twists (give both, or only '
                         'twists, or neither)')
    return times, positions, quaternions, twists, accelerations


def cartesian_point(pose, twist=None, acceleration=None, time_from_start=None):
    """Return a ``CartesianTrajectoryPoint`` of a pose (4, 4) and twist, acceleration (6,)."""
    point = CartesianTrajectoryPoint(pose=matrix_to_pose(pose))
    for field, kind, values in (('twist', Twist, twist), ('acceleration', Accel, acceleration)):
        if values is not None:
            msg = kind()
            msg.linear.x, msg.linear.y, msg.linear.z = (float(v) for v in values[:3])
            msg.angular.x, msg.angular.y, msg.angular.z = (float(v) for v in values[3:])
            setattr(point, field, msg)
    if time_from_start is not None:
        point.time_from_start = duration_msg(time_from_start)
    return point
