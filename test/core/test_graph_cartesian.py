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
Task space in the loop on the test's clock: Cartesian goals, targets, pushes and the posture.

The simulator and the controller as the nodes run them in lockstep, on the graph's parameter
files (``test/graph_harness.py``); a goal is the action's request as the goal process converts
it (:func:`~robot_dynamics.ros.nodes.goals.cartesian_goal`). Truth: the straight line and the
last pose of a goal (the tip from the simulator's states through FK), the static deflection
``F / K`` of the shipped stiffness under a push, and the tip where it was. Through the
processes, the actions' types and a goal end to end: test/ros/test_cartesian_goals.py.
"""

from cartesian_control_msgs.action import FollowCartesianTrajectory
from cartesian_control_msgs.msg import CartesianPosture, CartesianTrajectoryPoint
from graph_harness import LoopGraph
import numpy as np
import pytest
from robot_dynamics.controller import Mode
from robot_dynamics.errors import InputError
from robot_dynamics.follower import Goal, Outcome
from robot_dynamics.ros.nodes.goals import cartesian_goal
from robot_dynamics.ros.wire.conversions import duration_msg, matrix_to_pose
from robot_dynamics.spatial import matrix_to_rotvec, rotvec_to_matrix
from robot_dynamics.trajectory import point_to_point

#: The shipped stiffness [N/m] of the tip's position (the node's default).
STIFFNESS = 1000.0


def _arm(robot):
    """Return the robot's graph, its controller holding."""
    arm = LoopGraph(robot)
    arm.run_until(lambda: arm.mode() is Mode.HOLD, 1.0, 'the controller holding')
    return arm


def _compliant(arm):
    """Hold the tip where it is in task space, as after a goal (a new graph holds the joints)."""
    arm.target(arm.tip())
    arm.run_for(0.1)


def _moved(T, move, rotvec=(0.0, 0.0, 0.0)):
    out = T.copy()
    out[:3, 3] += move
    out[:3, :3] = rotvec_to_matrix(np.asarray(rotvec, dtype=float)) @ T[:3, :3]
    return out


def _pose(T, quaternion=None):
    pose = matrix_to_pose(T)
    if quaternion is not None:
        o = pose.orientation
        o.x, o.y, o.z, o.w = quaternion
    return pose


def _request(points, frame='', controlled_frame='', tolerance=None):
    """
    Return the action's request of ``(time, pose)`` points.

    ``tolerance``: ``(field, value)``, e.g. ``('goal_tolerance.twist_error.angular.z', 0.1)``.
    """
    request = FollowCartesianTrajectory.Goal()
    request.trajectory.header.frame_id = frame
    request.trajectory.controlled_frame = controlled_frame
    request.trajectory.points = [CartesianTrajectoryPoint(time_from_start=duration_msg(t),
                                                          pose=pose) for t, pose in points]
    if tolerance is not None:
        *path, name = tolerance[0].split('.')
        part = request
        for field in path:
            part = getattr(part, field)
        setattr(part, name, tolerance[1])
    return request


def _send(arm, points, tag, **options):
    """Hand the goal of the request (:func:`_request`) to the controller as ``tag``."""
    arm.submit_cartesian(cartesian_goal(_request(points, **options), arm.model)._replace(tag=tag))


def _outcome(arm, tag):
    [ended] = arm.ended(tag)
    return ended.outcome


def _line_distance(points, a, b):
    """Return each point's (K, 3) distance [m] from the segment a-b."""
    ab = b - a
    s = np.clip((points - a) @ ab / (ab @ ab), 0.0, 1.0)
    return np.linalg.norm(points - a - s[:, None] * ab, axis=1)


def _line(arm, move, rotvec=(0.0, 0.0, 0.0), duration=1.0):
    """Run a straight line from where the tip is; return its (distances, final pose error)."""
    T0 = arm.tip()
    T1 = _moved(T0, move, rotvec)
    t0 = arm.states[-1].t
    _send(arm, [(duration, matrix_to_pose(T1))], 'line')
    arm.run_until(lambda: arm.ended('line'), duration + 2.0, 'the line ending')
    assert _outcome(arm, 'line') is Outcome.SUCCEEDED, arm.ended('line')[0].message
    arm.run_for(0.3)
    tips = arm.tip(arm.sim.since(t0))
    distance = _line_distance(tips[:, :3, 3], T0[:3, 3], T1[:3, 3])
    final = arm.tip()
    axes, _ = arm.cartesian_state()
    position = np.linalg.norm(final[:3, 3] - T1[:3, 3])
    angle = np.linalg.norm(matrix_to_rotvec(T1[:3, :3] @ final[:3, :3].T)) \
        if 'rx' in axes else 0.0
    return distance, position, angle


@pytest.mark.parametrize('robot, move, axes', [
    ('scara', [-0.08, 0.06, -0.04], ['x', 'y', 'z']),
    ('planar_2r', [0.2, 0.0, 0.2], ['x', 'z'])])
def test_a_cartesian_line_on_an_arm_with_fewer_axes(robot, move, axes):
    arm = _arm(robot)
    distance, position, _ = _line(arm, move)
    # their joints' friction is fed forward at the reference (friction_compensation)
    assert distance.max() < 1e-3
    assert position < 1e-3
    assert arm.cartesian_state()[0] == axes


def test_a_cartesian_line_on_the_iiwa14():
    arm = _arm('iiwa14')
    distance, position, angle = _line(arm, [0.12, -0.08, -0.06], [0.0, 0.0, 0.3])
    assert distance.max() < 1e-3
    assert position < 1e-3 and angle < 0.01
    axes, condition_number = arm.cartesian_state()
    assert axes == ['x', 'y', 'z', 'rx', 'ry', 'rz']
    assert 1.0 <= condition_number < 1e3


def test_a_10_newton_push_deflects_by_f_over_k_and_the_tip_comes_back():
    arm = _arm('iiwa14')
    _compliant(arm)
    rest = arm.tip()[:3, 3]
    arm.push((10.0, 0.0, 0.0))
    arm.run_for(1.0)
    deflection = arm.tip()[:3, 3] - rest
    assert deflection[0] == pytest.approx(10.0 / STIFFNESS, rel=0.1)
    assert np.abs(deflection[1:]).max() < 0.1 * 10.0 / STIFFNESS
    arm.push((0.0, 0.0, 0.0))
    arm.run_for(1.0)
    assert np.linalg.norm(arm.tip()[:3, 3] - rest) < 1e-3


def test_a_posture_change_moves_the_elbow_and_not_the_tip():
    arm = _arm('iiwa14')
    _compliant(arm)
    q0 = arm.states[-1].q
    tip = arm.tip()[:3, 3]
    t0 = arm.states[-1].t
    posture = q0.copy()
    posture[2] += 0.5
    arm.set_task_parameters({'nullspace.posture': posture.tolist()})
    arm.run_for(2.0)
    q = np.array([s.q for s in arm.sim.since(t0)])
    elbow = arm.model.fk(q, 'link4')[:, :3, 3]
    assert np.linalg.norm(elbow[-1] - elbow[0]) > 0.01
    assert np.linalg.norm(arm.model.fk(q)[:, :3, 3] - tip, axis=1).max() < 1e-3
    # a posture of the wrong length is refused, naming the parameter
    with pytest.raises(InputError, match='nullspace.posture'):
        arm.set_task_parameters({'nullspace.posture': posture[:3].tolist()})


def test_streamed_targets_replace_each_other_and_the_tip_holds_at_the_last():
    arm = _arm('iiwa14')
    T0 = arm.tip()
    for move in ([0.0, 0.05, 0.0], [0.0, 0.05, 0.04]):
        arm.target(_moved(T0, move))
        arm.run_for(0.3)
    arm.run_for(1.5)
    final = arm.tip()
    assert np.linalg.norm(final[:3, 3] - (T0[:3, 3] + [0.0, 0.05, 0.04])) < 1e-3
    assert np.linalg.norm(matrix_to_rotvec(T0[:3, :3] @ final[:3, :3].T)) < 0.01


def _refusal(arm, request):
    """
    Return the result code and message that refuse ``request``; fail if it is taken.

    Refused by the goal process's conversion (its code the error's, INVALID_GOAL by default,
    as the process answers it) or by the controller (invalid: INVALID_GOAL).
    """
    try:
        goal = cartesian_goal(request, arm.model)
    except InputError as exc:
        return getattr(exc, 'error_code', 'INVALID_GOAL'), str(exc)
    count = len(arm.events)
    arm.submit_cartesian(goal._replace(tag='malformed'))
    ended = [e for e in arm.events[count:] if e.tag == 'malformed' and e.outcome]
    assert [e.outcome for e in ended] == [Outcome.INVALID], f'taken: {arm.events[count:]}'
    return 'INVALID_GOAL', ended[0].message


def test_malformed_goals_are_refused_at_once_naming_the_problem():
    arm = _arm('iiwa14')
    T0 = arm.tip()
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
    for points, options, words in cases:
        code, message = _refusal(arm, _request(points, **options))
        assert code == 'INVALID_GOAL' and words in message, message
    # what cartesian_control_msgs' points carry beyond pose, twist and acceleration
    posture, jerk = _request([(1.0, near)]), _request([(1.0, near)])
    posture.trajectory.points[0].posture = CartesianPosture(
        posture_joint_names=[arm.model.joint_names[0]], posture_joint_values=[0.0])
    jerk.trajectory.points[0].jerk.angular.z = 1.0
    for request, expected, words in ((posture, 'INVALID_POSTURE', 'point 0 gives a posture'),
                                     (jerk, 'INVALID_GOAL', 'point 0 gives a jerk')):
        code, message = _refusal(arm, request)
        assert code == expected and words in message, message
    arm.run_for(0.5)
    assert np.linalg.norm(arm.tip()[:3, 3] - T0[:3, 3]) < 1e-4


def _joint_goal(arm, offset, duration, tag):
    """Return the goal ``tag`` along the rest-to-rest quintic from the arm by ``offset``."""
    q0 = arm.states[-1].q
    times = np.linspace(0.0, duration, 21)
    sample = point_to_point(q0, q0 + offset, duration, 'quintic').sample(times)
    return Goal(tag, None, times, sample.q, sample.qd, sample.qdd, arm.tolerances)


def test_goals_of_either_kind_preempt_each_other_and_cancel_holds():
    arm = _arm('iiwa14')
    # each goal long enough (5 s) to be running still when the next comes
    _send(arm, [(5.0, matrix_to_pose(_moved(arm.tip(), [0.0, -0.1, 0.0])))], 'first')
    arm.run_for(0.5)
    arm.submit(_joint_goal(arm, 0.1, 5.0, 'second'))
    assert _outcome(arm, 'first') is Outcome.PREEMPTED
    arm.run_for(0.5)
    _send(arm, [(5.0, matrix_to_pose(_moved(arm.tip(), [0.0, 0.1, 0.0])))], 'third')
    assert _outcome(arm, 'second') is Outcome.PREEMPTED
    arm.run_for(0.5)
    arm.cancel('third')
    assert _outcome(arm, 'third') is Outcome.CANCELED
    arm.run_for(0.5)
    held = arm.tip()[:3, 3]
    arm.run_for(0.2)
    assert np.linalg.norm(arm.tip()[:3, 3] - held) < 1e-4
