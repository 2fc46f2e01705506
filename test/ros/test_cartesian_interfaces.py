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

"""The Cartesian interfaces have exactly cartesian_control_msgs' fields and the joint codes."""

from robot_dynamics_interfaces.action import FollowCartesianTrajectory, FollowJointTrajectory
from robot_dynamics_interfaces.msg import (CartesianState, CartesianTolerance,
                                           CartesianTrajectory, CartesianTrajectoryPoint)


def fields(cls):
    return cls.get_fields_and_field_types()


def test_messages_have_the_cartesian_control_msgs_fields():
    assert fields(CartesianTrajectoryPoint) == {
        'time_from_start': 'builtin_interfaces/Duration', 'pose': 'geometry_msgs/Pose',
        'twist': 'geometry_msgs/Twist', 'acceleration': 'geometry_msgs/Accel'}
    assert fields(CartesianTrajectory) == {
        'header': 'std_msgs/Header', 'controlled_frame': 'string',
        'points': 'sequence<robot_dynamics_interfaces/CartesianTrajectoryPoint>'}
    assert fields(CartesianTolerance) == {
        'position': 'geometry_msgs/Vector3', 'orientation': 'geometry_msgs/Vector3',
        'twist': 'geometry_msgs/Twist', 'acceleration': 'geometry_msgs/Accel'}
    state = fields(CartesianState)
    assert state['reference'] == state['actual'] == state['error'] == \
        'robot_dynamics_interfaces/CartesianTrajectoryPoint'
    assert state['condition_number'] == 'double' and state['controlled_axes'] == \
        'sequence<string>'


def test_action_has_the_goal_result_and_feedback_of_the_issue():
    action = FollowCartesianTrajectory
    assert fields(action.Goal) == {
        'trajectory': 'robot_dynamics_interfaces/CartesianTrajectory',
        'path_tolerance': 'robot_dynamics_interfaces/CartesianTolerance',
        'goal_tolerance': 'robot_dynamics_interfaces/CartesianTolerance',
        'goal_time_tolerance': 'builtin_interfaces/Duration'}
    assert fields(action.Result) == {'error_code': 'int32', 'error_string': 'string'}
    assert fields(action.Feedback) == {
        'header': 'std_msgs/Header',
        'desired': 'robot_dynamics_interfaces/CartesianTrajectoryPoint',
        'actual': 'robot_dynamics_interfaces/CartesianTrajectoryPoint',
        'error': 'robot_dynamics_interfaces/CartesianTrajectoryPoint'}
    for code in ('SUCCESSFUL', 'INVALID_GOAL', 'INVALID_JOINTS', 'OLD_HEADER_TIMESTAMP',
                 'PATH_TOLERANCE_VIOLATED', 'GOAL_TOLERANCE_VIOLATED'):
        assert getattr(action.Result, code) == getattr(FollowJointTrajectory.Result, code)
