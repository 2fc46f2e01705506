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
Task space through the graph in lockstep: Cartesian goals, targets, pushes and the posture.

Each robot's graph (model, simulator, controller; lockstep on simulated time, the shipped
defaults) is started once. Truth: the straight line and the last pose of a goal (the tip from
the simulator's joint states through the model's FK), the static deflection ``F / K`` of the
node's stiffness under a push on ``/simulator/external_wrench``, and the tip where it was.
Lockstep: the outcomes do not depend on how fast the host runs the processes.
"""

from cartesian_control_msgs.action import FollowCartesianTrajectory
from cartesian_control_msgs.msg import CartesianPosture, CartesianTrajectoryPoint
from closed_loop import ABORTED, CANCELED, goal, Loop, quintic, SUCCEEDED
from geometry_msgs.msg import PoseStamped, WrenchStamped
import numpy as np
import pytest
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from robot_dynamics.ros.wire.compat import ActionClient
from robot_dynamics.ros.wire.conversions import duration_msg, matrix_to_pose, to_seconds
from robot_dynamics.spatial import matrix_to_rotvec, rotvec_to_matrix
from robot_dynamics_interfaces.msg import CartesianState
from type_hashes import installed_distribution, UPSTREAM

pytestmark = pytest.mark.ros

#: The shipped stiffness [N/m] of the tip's position (the node's default).
STIFFNESS = 1000.0


class TaskArm:
    """A lockstep graph and the probe's Cartesian client of it."""

    def __init__(self, loop):
        self.loop, self.model, self.probe = loop, loop.model, loop.probe
        self.cartesian = ActionClient(self.probe.node, FollowCartesianTrajectory,
                                      '/controller/follow_cartesian_trajectory')
        self.probe.wait_for(self.cartesian.server_is_ready, what='the Cartesian action')
        self.cartesian_states = self.probe.collect(CartesianState, '/controller/cartesian_state')
        self.wrench = self.probe.node.create_publisher(WrenchStamped,
                                                       '/simulator/external_wrench', 10)
        self.target = self.probe.node.create_publisher(PoseStamped, '/controller/target_pose',
                                                       10)
        self.parameters = self.probe.client(SetParameters, '/controller/set_parameters')

    def tip(self):
        return self.model.fk(self.loop.position())

    def send(self, points, **options):
        """Send a Cartesian goal (:meth:`goal`); return the accepted goal's handle."""
        return self.loop.accepted(self.send_async(points, **options))

    def send_async(self, points, **options):
        """Send a Cartesian goal (:meth:`goal`); return the future of its response."""
        return self.cartesian.send_goal_async(self.goal(points, **options))

    @staticmethod
    def goal(points, frame='', controlled_frame='', path_position=0.0, tolerance=None):
        """
        Return a Cartesian goal of ``(time, pose)`` points.

        ``tolerance``: ``(field, value)``, e.g. ``('goal_tolerance.twist_error.angular.z', 0.1)``.
        """
        goal = FollowCartesianTrajectory.Goal()
        goal.trajectory.header.frame_id = frame
        goal.trajectory.controlled_frame = controlled_frame
        goal.trajectory.points = [CartesianTrajectoryPoint(time_from_start=duration_msg(t),
                                                           pose=pose) for t, pose in points]
        goal.path_tolerance.position_error.x = goal.path_tolerance.position_error.y = \
            goal.path_tolerance.position_error.z = path_position
        if tolerance is not None:
            *path, name = tolerance[0].split('.')
            part = goal
            for field in path:
                part = getattr(part, field)
            setattr(part, name, tolerance[1])
        return goal

    def result(self, handle):
        return self.loop.result(handle)

    def states_since(self, t0):
        """Return the joint positions (K, n), model order, of the states from ``t0`` [s] on."""
        msgs = [m for m, _ in self.loop.states if to_seconds(m.header.stamp) >= t0]
        order = [list(msgs[0].name).index(j) for j in self.model.joint_names]
        return np.array([np.asarray(m.position)[order] for m in msgs])

    def run_for(self, seconds):
        """Wait until ``seconds`` of simulated time have passed."""
        end = self.loop.now() + seconds
        self.probe.wait_for(lambda: self.loop.now() >= end, timeout=120.0,
                            what=f'{seconds} s simulated')

    def set_parameter(self, name, values):
        value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY,
                               double_array_value=list(values))
        response = self.probe.call(self.parameters, SetParameters.Request(
            parameters=[Parameter(name=name, value=value)]))
        return response.results[0]

    def push(self, force):
        msg = WrenchStamped()
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = force
        self.wrench.publish(msg)


def _moved(T, move, rotvec=(0.0, 0.0, 0.0)):
    out = T.copy()
    out[:3, 3] += move
    out[:3, :3] = rotvec_to_matrix(np.asarray(rotvec, dtype=float)) @ T[:3, :3]
    return out


def _line_distance(points, a, b):
    """Return each point's (K, 3) distance [m] from the segment a-b."""
    ab = b - a
    s = np.clip((points - a) @ ab / (ab @ ab), 0.0, 1.0)
    return np.linalg.norm(points - a - s[:, None] * ab, axis=1)


def _line(arm, move, rotvec=(0.0, 0.0, 0.0), duration=1.0):
    """Run a straight line from where the tip is; return its (distances, final pose error)."""
    T0 = arm.tip()
    T1 = _moved(T0, move, rotvec)
    t0 = arm.loop.now()
    handle = arm.send([(duration, matrix_to_pose(T1))])
    result = arm.result(handle)
    assert result.status == SUCCEEDED, result.result.error_string
    arm.run_for(0.3)
    tips = arm.model.fk(arm.states_since(t0))
    distance = _line_distance(tips[:, :3, 3], T0[:3, 3], T1[:3, 3])
    final = arm.tip()
    mask = arm.cartesian_states[-1][0].controlled_axes
    position = np.linalg.norm(final[:3, 3] - T1[:3, 3])
    angle = np.linalg.norm(matrix_to_rotvec(T1[:3, :3] @ final[:3, :3].T)) \
        if 'rx' in mask else 0.0
    return distance, position, angle


# ---- the SCARA and the planar 2R: one graph each, one test ---------------------------------


@pytest.mark.parametrize('robot, move, axes', [
    ('scara', [-0.08, 0.06, -0.04], ['x', 'y', 'z']),
    ('planar_2r', [0.2, 0.0, 0.2], ['x', 'z'])])
def test_a_cartesian_line_on_an_arm_with_fewer_axes(loop, robot, move, axes):
    arm = TaskArm(loop(robot))
    distance, position, _ = _line(arm, move)
    # their joints' friction is fed forward at the reference (friction_compensation)
    assert distance.max() < 1e-3
    assert position < 1e-3
    assert list(arm.cartesian_states[-1][0].controlled_axes) == axes


# ---- the iiwa14: one graph for the rest of the module ---------------------------------------


@pytest.fixture(scope='module')
def iiwa(module_processes, module_probe):
    """One lockstep iiwa14 graph for the module's tests that need it."""
    loop = Loop(module_processes, module_probe, 'iiwa14')
    yield TaskArm(loop)
    loop.stop()


def test_a_cartesian_line_on_the_iiwa14(iiwa):
    distance, position, angle = _line(iiwa, [0.12, -0.08, -0.06], [0.0, 0.0, 0.3])
    assert distance.max() < 1e-3
    assert position < 1e-3 and angle < 0.01
    state = iiwa.cartesian_states[-1][0]
    assert list(state.controlled_axes) == ['x', 'y', 'z', 'rx', 'ry', 'rz']
    assert 1.0 <= state.condition_number < 1e3


def test_a_10_newton_push_deflects_by_f_over_k_and_the_tip_comes_back(iiwa):
    rest = iiwa.tip()[:3, 3]
    iiwa.push((10.0, 0.0, 0.0))
    iiwa.run_for(1.0)
    deflection = iiwa.tip()[:3, 3] - rest
    assert deflection[0] == pytest.approx(10.0 / STIFFNESS, rel=0.1)
    assert np.abs(deflection[1:]).max() < 0.1 * 10.0 / STIFFNESS
    iiwa.push((0.0, 0.0, 0.0))
    iiwa.run_for(1.0)
    assert np.linalg.norm(iiwa.tip()[:3, 3] - rest) < 1e-3


def test_a_posture_change_moves_the_elbow_and_not_the_tip(iiwa):
    q0 = iiwa.loop.position()
    tip = iiwa.tip()[:3, 3]
    t0 = iiwa.loop.now()
    posture = q0.copy()
    posture[2] += 0.5
    assert iiwa.set_parameter('nullspace.posture', posture).successful
    iiwa.run_for(2.0)
    q = iiwa.states_since(t0)
    elbow = iiwa.model.fk(q, 'link4')[:, :3, 3]
    assert np.linalg.norm(elbow[-1] - elbow[0]) > 0.01
    assert np.linalg.norm(iiwa.model.fk(q)[:, :3, 3] - tip, axis=1).max() < 1e-3
    # a posture of the wrong length is refused, naming the parameter
    refused = iiwa.set_parameter('nullspace.posture', posture[:3])
    assert not refused.successful and 'nullspace.posture' in refused.reason


def test_streamed_targets_replace_each_other_and_the_tip_holds_at_the_last(iiwa):
    T0 = iiwa.tip()
    for move in ([0.0, 0.05, 0.0], [0.0, 0.05, 0.04]):
        msg = PoseStamped(pose=matrix_to_pose(_moved(T0, move)))
        iiwa.target.publish(msg)
        iiwa.run_for(0.3)
    iiwa.run_for(1.5)
    final = iiwa.tip()
    assert np.linalg.norm(final[:3, 3] - (T0[:3, 3] + [0.0, 0.05, 0.04])) < 1e-3
    assert np.linalg.norm(matrix_to_rotvec(T0[:3, :3] @ final[:3, :3].T)) < 0.01


def _pose(T, quaternion=None):
    pose = matrix_to_pose(T)
    if quaternion is not None:
        o = pose.orientation
        o.x, o.y, o.z, o.w = quaternion
    return pose


def test_malformed_goals_are_refused_at_once_naming_the_problem(iiwa):
    T0 = iiwa.tip()
    near = _pose(_moved(T0, [0.02, 0.0, 0.0]))
    nan = _pose(_moved(T0, [float('nan'), 0.0, 0.0]))
    cases = [
        ([(1.0, nan)], {}, 'finite'),
        ([(1.0, _pose(T0, (0.0, 0.0, 0.0, 1.01)))], {}, 'norm'),
        ([(1.0, near), (0.5, near)], {}, 'increasing'),
        ([(1.0, near)], {'frame': 'world'}, "frame_id 'world'"),
        ([(1.0, near)], {'controlled_frame': 'lnk_4'}, 'controlled_frame'),
        ([(1.0, near)], {'controlled_frame': 'link4'}, 'only the tip'),
        ([(1.0, _pose(_moved(T0, [2.0, 0.0, 0.0])))], {}, 'beyond the reach of the arm'),
        ([(0.1, _pose(_moved(T0, [-0.1, 0.0, 0.0])))], {}, 'above its limit'),
        ([(1.0, near)], {'tolerance': ('path_tolerance.acceleration_error.linear.x', 1.0)},
         'path_tolerance.acceleration_error: not checked'),
        ([(1.0, near)], {'tolerance': ('goal_tolerance.twist_error.angular.z', -2.0)},
         'goal_tolerance.twist_error = [0.0, 0.0, 0.0, 0.0, 0.0, -2.0]: expected > 0'),
    ]
    before = iiwa.tip()
    for points, options, words in cases:
        result = iiwa.result(iiwa.send(points, **options))
        assert result.status == ABORTED, words
        assert result.result.error_code == FollowCartesianTrajectory.Result.INVALID_GOAL
        assert words in result.result.error_string, result.result.error_string
    # what cartesian_control_msgs' points carry beyond pose, twist and acceleration
    posture, jerk = iiwa.goal([(1.0, near)]), iiwa.goal([(1.0, near)])
    posture.trajectory.points[0].posture = CartesianPosture(
        posture_joint_names=[iiwa.model.joint_names[0]], posture_joint_values=[0.0])
    jerk.trajectory.points[0].jerk.angular.z = 1.0
    for msg, code, words in ((posture, 'INVALID_POSTURE', 'point 0 gives a posture'),
                             (jerk, 'INVALID_GOAL', 'point 0 gives a jerk')):
        result = iiwa.result(iiwa.loop.accepted(iiwa.cartesian.send_goal_async(msg)))
        assert result.status == ABORTED, words
        assert result.result.error_code == getattr(FollowCartesianTrajectory.Result, code)
        assert words in result.result.error_string, result.result.error_string
    assert np.linalg.norm(iiwa.tip()[:3, 3] - before[:3, 3]) < 1e-4


def test_the_actions_and_the_state_are_upstreams_types(iiwa):
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


def test_goals_of_either_kind_preempt_each_other_and_cancel_holds(iiwa):
    T0 = iiwa.tip()
    # each preempting goal sent with simulated time held (Loop.held): on a busy host the goal
    # it preempts would otherwise run on while it travels; each goal long enough (5 s) to be
    # running still when the probe, which lags the simulator there, sees the time to send the next
    loop = iiwa.loop
    first = iiwa.send([(5.0, matrix_to_pose(_moved(T0, [0.0, -0.1, 0.0])))])
    iiwa.run_for(0.5)
    q = loop.position()
    joint, _ = quintic(iiwa.model, q, q + 0.1, 5.0)
    second = loop.held(lambda: loop.action.send_goal_async(goal(joint)))
    assert iiwa.result(first).status == ABORTED
    iiwa.run_for(0.5)
    third = loop.held(lambda: iiwa.send_async(
        [(5.0, matrix_to_pose(_moved(iiwa.tip(), [0.0, 0.1, 0.0])))]))
    assert loop.result(second).status == ABORTED
    iiwa.run_for(0.5)
    # the cancel held too: one that reached the controller later (Jazzy, a whole run) stopped a
    # faster arm, still moving 1.7e-4 m in 0.2 s after the half second below
    loop.hold_while(third.cancel_goal_async)
    assert iiwa.result(third).status == CANCELED
    iiwa.run_for(0.5)
    held = iiwa.tip()[:3, 3]
    iiwa.run_for(0.2)
    assert np.linalg.norm(iiwa.tip()[:3, 3] - held) < 1e-4


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
