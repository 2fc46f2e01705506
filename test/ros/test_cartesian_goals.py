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
Task space through the graph's processes: the actions' types and a Cartesian file end to end.

One iiwa14 graph (model, simulator, controller; lockstep on simulated time, the shipped
defaults) for the module. What ROS adds to the loop's decisions: the actions and the state are
upstream's types as a client matches them, and ``send`` (its handler in this process) takes a
Cartesian file to the Cartesian action, whose goal travels through its goal process to the arm
(truth: the file's pose, the tip from the simulator's joint states through the model's FK).
The decisions (lines, pushes, the posture, targets, refusals, preemption) on the test's clock:
test/core/test_graph_cartesian.py; a Cartesian file's goal, pose for pose:
test/core/test_send_push_files.py.
"""


from action_msgs.msg import GoalStatusArray
from closed_loop import Loop, SUCCEEDED
import numpy as np
import pytest
from robot_dynamics.ros.wire.conversions import matrix_to_pose
from robot_dynamics.spatial import matrix_to_rotvec, rotvec_to_matrix
from robot_dynamics_interfaces.msg import CartesianState
from type_hashes import installed_distribution, UPSTREAM

pytestmark = pytest.mark.ros

CARTESIAN = '/controller/follow_cartesian_trajectory'


class TaskArm:
    """A lockstep graph, the Cartesian action's goal statuses and the tip's state."""

    def __init__(self, loop):
        self.loop, self.model, self.probe = loop, loop.model, loop.probe
        self.statuses = self.probe.collect(GoalStatusArray, f'{CARTESIAN}/_action/status')
        self.cartesian_states = self.probe.collect(CartesianState, '/controller/cartesian_state')

    def tip(self):
        return self.model.fk(self.loop.position())

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


def test_the_actions_and_the_state_are_upstreams_types(iiwa):
    # what a ROS 2 client matches an action by: the type name and hash its endpoints advertise
    # (the feedback topic's writer: the controller's goal process)
    node = iiwa.probe.node
    upstream = UPSTREAM[installed_distribution()]
    for action, type_name in (
            ('/controller/follow_joint_trajectory', 'control_msgs/action/FollowJointTrajectory'),
            (CARTESIAN, 'cartesian_control_msgs/action/FollowCartesianTrajectory')):
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


def test_send_takes_a_cartesian_file_through_the_action_to_the_arm(iiwa, here, tmp_path):
    # a move and a turn of the tip in one point: the file's pose, through the action and its
    # goal process; its state on the topic
    T1 = _moved(iiwa.tip(), [0.12, -0.08, -0.06], [0.0, 0.0, 0.3])
    p, o = matrix_to_pose(T1).position, matrix_to_pose(T1).orientation
    path = tmp_path / 'there.yaml'
    path.write_text(f'points:\n- time_from_start: 1.0\n  pose:\n'
                    f'    position: {{x: {p.x!r}, y: {p.y!r}, z: {p.z!r}}}\n'
                    f'    orientation: {{x: {o.x!r}, y: {o.y!r}, z: {o.z!r}, w: {o.w!r}}}\n')
    status, output = here('send', str(path))
    assert status == 0, output
    assert CARTESIAN in output and 'send: succeeded' in output
    # the goal's status as the action's clients see it (the module's only goal)
    iiwa.probe.wait_for(
        lambda: iiwa.statuses and [s.status for s in iiwa.statuses[-1][0].status_list] == [
            SUCCEEDED], what='the goal succeeded on the status topic')
    iiwa.run_for(0.3)
    final = iiwa.tip()
    assert np.linalg.norm(final[:3, 3] - T1[:3, 3]) < 1e-3
    assert np.linalg.norm(matrix_to_rotvec(T1[:3, :3] @ final[:3, :3].T)) < 0.01
    tip_state = iiwa.cartesian_states[-1][0]
    assert list(tip_state.controlled_axes) == ['x', 'y', 'z', 'rx', 'ry', 'rz']
    assert 1.0 <= tip_state.condition_number < 1e3
