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
What ``robot-dynamics send`` and ``push`` decide before they talk to the graph.

``robot-dynamics`` (:func:`robot_dynamics.cli.main`) in this process: a bad trajectory file and a
bad force are refused with their reason and argparse's exit status 2 before any node starts;
a Cartesian file becomes the goal of the Cartesian action, pose for pose as the file has it.
Against a server and a subscriber over DDS: test/ros/test_send.py, test/ros/test_push.py and
test/ros/test_cartesian_goals.py.
"""

from cartesian_control_msgs.action import FollowCartesianTrajectory
import numpy as np
import pytest
from robot_dynamics.cartesian_trajectory import CartesianPoints
from robot_dynamics.cli import main
from robot_dynamics.ros.tools import send
from robot_dynamics.ros.wire.conversions import to_seconds


def test_send_refuses_a_bad_file_with_its_reason(tmp_path, capsys):
    bad = tmp_path / 'bad.yaml'
    bad.write_text('joint_names: [a]\npoints: [{positions: [0.0]}]\n')
    assert main(['send', str(bad), '--action', '/x']) == 2
    assert 'point 0 needs positions and time_from_start' in capsys.readouterr().err


def test_push_refuses_a_force_of_two_numbers(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(['push', '--force', '1,2'])
    assert exit_.value.code == 2
    assert "expected three numbers x,y,z, got '1,2'" in capsys.readouterr().err


def test_a_cartesian_file_becomes_the_cartesian_actions_goal(tmp_path):
    # two poses, the second a quarter turn about z: the file's numbers, as the action's fields
    path = tmp_path / 'up.yaml'
    path.write_text('points:\n'
                    '- time_from_start: 0.5\n'
                    '  pose:\n'
                    '    position: {x: 0.4, y: -0.1, z: 0.6}\n'
                    '    orientation: {x: 0.0, y: 0.0, z: 0.0, w: 1.0}\n'
                    '- time_from_start: 1.25\n'
                    '  pose:\n'
                    '    position: {x: 0.4, y: -0.1, z: 0.63}\n'
                    '    orientation: {x: 0.0, y: 0.0, z: 0.7071067811865476, '
                    'w: 0.7071067811865476}\n')
    points = send.load(path)
    assert isinstance(points, CartesianPoints)
    assert send.ACTIONS[type(points)] == 'controller/follow_cartesian_trajectory'
    goal = send.goal_message(points)
    assert isinstance(goal, FollowCartesianTrajectory.Goal)
    got = goal.trajectory.points
    np.testing.assert_array_equal(
        [[p.pose.position.x, p.pose.position.y, p.pose.position.z] for p in got],
        [[0.4, -0.1, 0.6], [0.4, -0.1, 0.63]])
    np.testing.assert_array_equal(
        [[p.pose.orientation.x, p.pose.orientation.y, p.pose.orientation.z,
          p.pose.orientation.w] for p in got],
        [[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.7071067811865476, 0.7071067811865476]])
    np.testing.assert_allclose([to_seconds(p.time_from_start) for p in got], [0.5, 1.25],
                               atol=1e-9)
