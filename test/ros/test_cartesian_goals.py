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
Task space through the graph's processes: the actions' types and a Cartesian goal end to end.

One iiwa14 graph (model, simulator, controller; lockstep on simulated time, the shipped
defaults) for the module. What ROS adds to the loop's decisions: the actions and the state are
upstream's types as a client matches them, a goal travels through the action and its goal
process to the arm (truth: its last pose, the tip from the simulator's joint states through
the model's FK) and ``send`` takes a Cartesian file. The decisions
(lines, pushes, the posture, targets, refusals, preemption) on the test's clock:
test/core/test_graph_cartesian.py.
"""

from cartesian_control_msgs.action import FollowCartesianTrajectory
from cartesian_control_msgs.msg import CartesianTrajectoryPoint
from closed_loop import Loop, SUCCEEDED
import numpy as np
import pytest
from robot_dynamics.ros.wire.compat import ActionClient
from robot_dynamics.ros.wire.conversions import duration_msg, matrix_to_pose
from robot_dynamics.spatial import matrix_to_rotvec, rotvec_to_matrix
from robot_dynamics_interfaces.msg import CartesianState
from type_hashes import installed_distribution, UPSTREAM

pytestmark = pytest.mark.ros


class TaskArm:
    """A lockstep graph and the probe's Cartesian client of it."""

    def __init__(self, loop):
        self.loop, self.model, self.probe = loop, loop.model, loop.probe
        self.cartesian = ActionClient(self.probe.node, FollowCartesianTrajectory,
                                      '/controller/follow_cartesian_trajectory')
        self.probe.wait_for(self.cartesian.server_is_ready, what='the Cartesian action')
        self.cartesian_states = self.probe.collect(CartesianState, '/controller/cartesian_state')

    def tip(self):
        return self.model.fk(self.loop.position())

    def send(self, points):
        """Send a Cartesian goal of ``(time, pose)`` points; return the accepted goal's handle."""
        goal = FollowCartesianTrajectory.Goal()
        goal.trajectory.points = [CartesianTrajectoryPoint(time_from_start=duration_msg(t),
                                                           pose=pose) for t, pose in points]
        return self.loop.accepted(self.cartesian.send_goal_async(goal))

    def result(self, handle):
        return self.loop.result(handle)

    def run_for(self, seconds):
        """Wait until ``seconds`` of simulated time have passed."""
        end = self.loop.now() + seconds
        self.probe.wait_for(lambda: self.loop.now() >= end, timeout=120.0,
                            what=f'{seconds} s simulated')


def _moved(T, move, rotvec=(0.0, 0.0, 0.0)):
    out = T.copy()
    out[:3, 3] += move
    out[:3, :3] = rotvec_to_matrix(np.asarray(rotvec, dtype=float)) @ T[:3, :3]
    return out


@pytest.fixture(scope='module')
def iiwa(module_processes, module_probe):
    """One lockstep iiwa14 graph for the module's tests that need it."""
    loop = Loop(module_processes, module_probe, 'iiwa14')
    yield TaskArm(loop)
    loop.stop()


def test_the_actions_and_the_state_are_upstreams_types_and_a_goal_goes_through(iiwa):
    # what a ROS 2 client matches an action by: the type name and hash its endpoints advertise
    # (the feedback topic's writer: the controller's goal process)
    node = iiwa.probe.node
    upstream = UPSTREAM[installed_distribution()]
    for action, type_name in (
            ('/controller/follow_joint_trajectory', 'control_msgs/action/FollowJointTrajectory'),
            ('/controller/follow_cartesian_trajectory',
             'cartesian_control_msgs/action/FollowCartesianTrajectory')):
        feedback = f'{type_name}_FeedbackMessage'
        writers = iiwa.probe.wait_for(
            lambda: node.get_publishers_info_by_topic(f'{action}/_action/feedback'),
            what=f"{action}'s feedback writer")
        assert [(w.topic_type, str(w.topic_type_hash)) for w in writers] == \
            [(feedback, upstream[feedback])]
    # and joint_trajectory_controller's state, as it publishes it
    state = 'control_msgs/msg/JointTrajectoryControllerState'
    writers = iiwa.probe.wait_for(
        lambda: node.get_publishers_info_by_topic('/controller/controller_state'),
        what="the controller's /controller/controller_state writer")
    assert [(w.topic_type, str(w.topic_type_hash)) for w in writers] == \
        [(state, upstream[state])]
    # a Cartesian goal through the action and its goal process; its state on the topic
    T1 = _moved(iiwa.tip(), [0.12, -0.08, -0.06], [0.0, 0.0, 0.3])
    result = iiwa.result(iiwa.send([(1.0, matrix_to_pose(T1))]))
    assert result.status == SUCCEEDED, result.result.error_string
    iiwa.run_for(0.3)
    final = iiwa.tip()
    assert np.linalg.norm(final[:3, 3] - T1[:3, 3]) < 1e-3
    assert np.linalg.norm(matrix_to_rotvec(T1[:3, :3] @ final[:3, :3].T)) < 0.01
    tip_state = iiwa.cartesian_states[-1][0]
    assert list(tip_state.controlled_axes) == ['x', 'y', 'z', 'rx', 'ry', 'rz']
    assert 1.0 <= tip_state.condition_number < 1e3


def test_send_takes_a_cartesian_file(iiwa, module_processes, tmp_path):
    T1 = _moved(iiwa.tip(), [0.0, 0.0, 0.03])
    p, o = matrix_to_pose(T1).position, matrix_to_pose(T1).orientation
    path = tmp_path / 'up.yaml'
    path.write_text(f'points:\n- time_from_start: 1.0\n  pose:\n'
                    f'    position: {{x: {p.x!r}, y: {p.y!r}, z: {p.z!r}}}\n'
                    f'    orientation: {{x: {o.x!r}, y: {o.y!r}, z: {o.z!r}, w: {o.w!r}}}\n')
    proc = module_processes.start('send', ['robot-dynamics', 'send', str(path)])
    assert proc.wait(120.0) == 0, module_processes.output(proc)
    assert '/controller/follow_cartesian_trajectory' in module_processes.output(proc)
    iiwa.run_for(0.3)
    assert np.linalg.norm(iiwa.tip()[:3, 3] - T1[:3, 3]) < 1e-3
