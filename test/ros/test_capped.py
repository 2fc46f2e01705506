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
``robot_dynamics.ros.wire.capped``: trajectories whose points are not built past a limit.

Through rclpy's own deserialization (the same take functions as a subscription's) and through a
real action server and client.
"""

from builtin_interfaces.msg import Duration
from cartesian_control_msgs.action import FollowCartesianTrajectory
from cartesian_control_msgs.msg import CartesianTrajectory, CartesianTrajectoryPoint
from control_msgs.action import FollowJointTrajectory
from geometry_msgs.msg import Point, Pose, Quaternion
import pytest
from rclpy.action import ActionClient
from rclpy.serialization import deserialize_message, serialize_message
from robot_dynamics.ros.wire.capped import CappedActionServer, CappedPoints
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = pytest.mark.ros

LIMIT = 5


def _joint(count):
    msg = JointTrajectory(joint_names=['a', 'b'], points=[
        JointTrajectoryPoint(positions=[0.1 * k, -0.2 * k], velocities=[k, 1.0],
                             time_from_start=Duration(sec=k, nanosec=7)) for k in range(count)])
    msg.header.frame_id = 'base'
    msg.header.stamp.sec = 42
    return msg


def _cartesian(count):
    msg = CartesianTrajectory(controlled_frame='tip', points=[
        CartesianTrajectoryPoint(pose=Pose(position=Point(x=0.1 * k),
                                           orientation=Quaternion(w=1.0)),
                                 time_from_start=Duration(sec=k)) for k in range(count)])
    msg.header.frame_id = 'world'
    return msg


def _request(action, trajectory):
    request = action.Impl.SendGoalService.Request(goal=action.Goal(trajectory=trajectory))
    request.goal_id.uuid = list(range(16))
    request.goal.goal_time_tolerance.sec = 3
    return request


CASES = {
    'JointTrajectory': (JointTrajectory, _joint, lambda msg: msg),
    'CartesianTrajectory': (CartesianTrajectory, _cartesian, lambda msg: msg),
    'FollowJointTrajectory request': (FollowJointTrajectory.Impl.SendGoalService.Request,
                                      lambda k: _request(FollowJointTrajectory, _joint(k)),
                                      lambda msg: msg.goal.trajectory),
    'FollowCartesianTrajectory request': (
        FollowCartesianTrajectory.Impl.SendGoalService.Request,
        lambda k: _request(FollowCartesianTrajectory, _cartesian(k)),
        lambda msg: msg.goal.trajectory),
}


@pytest.mark.parametrize('case', CASES)
def test_points_up_to_the_limit_come_whole_and_more_come_without_points(case):
    msg_type, make, trajectory = CASES[case]
    capped = CappedPoints(msg_type, LIMIT)
    for count in (0, 1, LIMIT):
        sent = make(count)
        taken = deserialize_message(serialize_message(sent), capped.type)
        assert type(taken) is msg_type and taken == sent
        assert capped.count(trajectory(taken)) == count
    # one more: everything but the points, which the count gives
    sent = make(LIMIT + 1)
    taken = deserialize_message(serialize_message(sent), capped.type)
    assert type(taken) is msg_type and trajectory(taken).points == []
    assert capped.count(trajectory(taken)) == LIMIT + 1
    # the rest as it was sent
    trajectory(taken).points = trajectory(sent).points
    assert taken == sent
    # many more, and many times (the C message's points are all freed: its size put back)
    huge = serialize_message(make(20_000))
    for _ in range(20):
        taken = deserialize_message(huge, capped.type)
        assert capped.count(trajectory(taken)) == 20_000 and not trajectory(taken).points
    # a message not taken here: its own count
    assert capped.count(trajectory(make(3))) == 3


def test_an_action_server_takes_its_goals_capped(local_node):
    node, executor = local_node
    seen = []

    def execute(handle):
        points = handle.request.trajectory.points
        seen.append((len(points), server.capped.count(handle.request.trajectory),
                     list(handle.request.trajectory.joint_names)))
        handle.succeed()
        return FollowJointTrajectory.Result(error_string=f'{len(points)} points')

    server = CappedActionServer(node, FollowJointTrajectory, 'capped', execute, limit=LIMIT)
    client = ActionClient(node, FollowJointTrajectory, 'capped')
    assert client.wait_for_server(timeout_sec=60.0)
    for count in (LIMIT, 1000):
        future = client.send_goal_async(FollowJointTrajectory.Goal(trajectory=_joint(count)))
        executor.spin_until_future_complete(future, timeout_sec=60.0)
        handle = future.result()
        assert handle is not None and handle.accepted
        result = handle.get_result_async()
        executor.spin_until_future_complete(result, timeout_sec=60.0)
        assert result.result() is not None
        # results, feedback and the rest are the action's own types
        assert type(result.result().result) is FollowJointTrajectory.Result
    assert seen == [(LIMIT, LIMIT, ['a', 'b']), (0, 1000, ['a', 'b'])]
