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
Trajectories taken with their points turned into Python objects only when they are few enough.

rclpy turns a taken message into Python objects point by point, with the interpreter's lock
held: a goal of 100,000 points cost 1-3 s before any check could refuse it. The middleware's
own (C) message is there in milliseconds. A :class:`CappedPoints` stands in for the message
class in rclpy's take: it reads the number of points in the C message, and when it is over
``limit``, rclpy's conversion sees none of them (they are freed with the C message, as always);
:meth:`CappedPoints.count` gives the number a converted trajectory had.

How: rclpy takes with the functions of the class's metaclass (``_CREATE_ROS_MESSAGE``,
``_CONVERT_TO_PY``, ``_DESTROY_ROS_MESSAGE``, the capsules rosidl generates). The stand-in's
metaclass has the message's own, but for a conversion of its own (a ctypes callback) that
sets the points' size to 0 around the message's conversion. It reads the C layout of
``trajectory_msgs/JointTrajectory``, ``cartesian_control_msgs/CartesianTrajectory`` and their
actions' SendGoal requests (:data:`_LAYOUTS`). The same on Jazzy and Kilted.
"""

import collections
import ctypes
import functools

from rclpy.action import ActionServer
from rclpy.type_support import check_for_type_support


class _Sequence(ctypes.Structure):
    """A rosidl_runtime_c sequence, or string: the same three words."""

    _fields_ = [('data', ctypes.c_void_p), ('size', ctypes.c_size_t),
                ('capacity', ctypes.c_size_t)]


class _Header(ctypes.Structure):
    """std_msgs__msg__Header."""

    _fields_ = [('sec', ctypes.c_int32), ('nanosec', ctypes.c_uint32), ('frame_id', _Sequence)]


class _JointTrajectory(ctypes.Structure):
    """The start of a JointTrajectory, or of a MultiDOFJointTrajectory (the same)."""

    _fields_ = [('header', _Header), ('joint_names', _Sequence), ('points', _Sequence)]


class _CartesianTrajectory(ctypes.Structure):
    """The start of a cartesian_control_msgs CartesianTrajectory."""

    _fields_ = [('header', _Header), ('points', _Sequence)]


class _JointGoal(ctypes.Structure):
    """The start of a FollowJointTrajectory goal."""

    _fields_ = [('trajectory', _JointTrajectory), ('multi_dof_trajectory', _JointTrajectory)]


class _CartesianGoal(ctypes.Structure):
    """The start of a FollowCartesianTrajectory goal."""

    _fields_ = [('trajectory', _CartesianTrajectory)]


def _request(goal):
    """Return the start of a SendGoal request of ``goal``: the goal's id, the goal."""
    return type(f'_{goal.__name__}Request', (ctypes.Structure,),
                {'_fields_': [('goal_id', ctypes.c_uint8 * 16), ('goal', goal)]})


#: By message class name: its C layout, and the paths (the same in C and Python) of the
#: trajectories in it whose points are capped.
_LAYOUTS = {
    'JointTrajectory': (_JointTrajectory, [()]),
    'CartesianTrajectory': (_CartesianTrajectory, [()]),
    'FollowJointTrajectory_SendGoal_Request': (
        _request(_JointGoal), [('goal', 'trajectory'), ('goal', 'multi_dof_trajectory')]),
    'FollowCartesianTrajectory_SendGoal_Request': (
        _request(_CartesianGoal), [('goal', 'trajectory')]),
}


def _at(obj, path):
    return functools.reduce(getattr, path, obj)


_api = ctypes.pythonapi
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
#: rosidl's conversion of a C message to Python (a new reference), called with the lock held
_CONVERSION = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p)
#: ours, called by rclpy's C code
_CALLBACK = ctypes.CFUNCTYPE(ctypes.py_object, ctypes.c_void_p)


class CappedPoints:
    """
    Take ``msg_type`` (a trajectory, an action's SendGoal request) with at most ``limit`` points.

    A trajectory of more (each of a request's) comes with none converted.
    :attr:`type` is what to give rclpy as the message class (a subscription's ``msg_type``,
    or :class:`CappedActionServer`'s requests); :meth:`count` the number of points a
    trajectory it converted had.
    """

    #: how many capped trajectories are remembered for :meth:`count`
    REMEMBERED = 16

    def __init__(self, msg_type, limit):
        self.limit = limit
        layout, paths = _LAYOUTS[msg_type.__name__]
        check_for_type_support(msg_type)        # the capsules are there once it is imported
        meta = type(msg_type)
        capsule = meta._CONVERT_TO_PY
        convert = _CONVERSION(_api.PyCapsule_GetPointer(capsule, _api.PyCapsule_GetName(capsule)))
        self._capped = collections.deque(maxlen=self.REMEMBERED)   # (trajectory, count)

        def converted(pointer):
            message = layout.from_address(pointer)
            over = [(path, points) for path in paths
                    if (points := _at(message, path).points).size > limit]
            if not over:
                return convert(pointer)
            counts = [points.size for _, points in over]
            for _, points in over:
                points.size = 0
            try:
                msg = convert(pointer)
            finally:
                for (_, points), count in zip(over, counts):
                    points.size = count     # rclpy then frees every point
            self._capped.extend((_at(msg, path), count) for (path, _), count in zip(over, counts))
            return msg

        self._callback = _CALLBACK(converted)       # alive as long as the type uses it
        functions = {name: getattr(meta, name) for name in (
            '_CREATE_ROS_MESSAGE', '_DESTROY_ROS_MESSAGE', '_CONVERT_FROM_PY', '_TYPE_SUPPORT')}
        functions['_CONVERT_TO_PY'] = _api.PyCapsule_New(
            ctypes.cast(self._callback, ctypes.c_void_p), None, None)
        self.type = type(f'Capped{meta.__name__}', (type,), functions)(
            f'Capped{msg_type.__name__}', (), {})

    def count(self, trajectory):
        """Return the number of points ``trajectory`` had (more than its own if capped)."""
        for capped, count in list(self._capped):
            if capped is trajectory:
                return count
        return len(trajectory.points)


class _Replaced:
    """``obj`` seen with the attribute at ``path`` (a tuple of names) replaced by ``value``."""

    def __init__(self, obj, path, value):
        self._obj, self._name = obj, path[0]
        self._value = value if len(path) == 1 else _Replaced(getattr(obj, path[0]), path[1:],
                                                             value)

    def __getattr__(self, name):
        return self._value if name == self._name else getattr(self._obj, name)


class CappedActionServer(ActionServer):
    """
    rclpy's ActionServer, its goal requests taken by :attr:`capped` (:class:`CappedPoints`).

    rclpy's server takes each request as ``self._action_type.Impl.SendGoalService.Request``
    (Jazzy's and Kilted's alike): that class is the stand-in, the rest the action's own.
    """

    def __init__(self, node, action_type, *args, limit, **kwargs):
        super().__init__(node, action_type, *args, **kwargs)
        self.capped = CappedPoints(action_type.Impl.SendGoalService.Request, limit)
        self._action_type = _Replaced(action_type, ('Impl', 'SendGoalService', 'Request'),
                                      self.capped.type)
