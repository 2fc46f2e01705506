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
What the controller node does with its inputs, on the test's clock.

The simulator and the controller as the nodes run them in lockstep (``test/graph_harness.py``).
A goal is a message as the goal process reads it (:func:`_checked`: the checks of
:mod:`robot_dynamics.ros.nodes.goals`, the refusal's code its error's), then handed to the
controller as the node does; a gain change goes through the node's judgement of a parameter
(:func:`~robot_dynamics.ros.nodes.parameters.refusal`) and the law's; a joint state goes through
the node's own callback. Truth: the planned quintic's end, its reference advancing towards the
goal, the gravity torques at the held position. Through the processes: a goal end to end and
the goal process's own process (test/ros/test_controller_node.py), huge goals over the wire
while a motion runs (test/ros/test_adversarial.py).
"""

from types import SimpleNamespace

from control_msgs.action import FollowJointTrajectory
from graph_harness import LoopGraph
import numpy as np
from rclpy.serialization import serialize_message
from robot_dynamics.controller import Mode
from robot_dynamics.errors import InputError
from robot_dynamics.events import Kind, Outcome
from robot_dynamics.ros.nodes.controller_node import (ControllerNode, JOINT_PARAMETERS,
                                                      PARAMETERS, STRUCTURAL)
from robot_dynamics.ros.nodes.goals import (check_single_dof, given_tolerances, goal_name,
                                            joint_goal, with_defaults)
from robot_dynamics.ros.nodes.parameters import refusal, ROS_PARAMETERS
from robot_dynamics.ros.nodes.throttle import Throttle
from robot_dynamics.ros.wire.cdr import JointStateReader
from robot_dynamics.ros.wire.conversions import duration_msg, time_msg
from robot_dynamics.stamps import s_to_ns
from robot_dynamics.trajectory import point_to_point
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

#: How long after it is handed over a goal with a start time starts [s].
LEAD = 0.5


def _held(robot, **options):
    """Return the robot's graph, held at rest."""
    arm = LoopGraph(robot, **options)
    arm.hold_at_rest()
    return arm


def _holding(arm):
    """Run until the controller holds a reference at rest (no goal, no stop ramp left)."""
    arm.run_until(lambda: arm.mode() is Mode.HOLD and not arm.cycles[-1].reference.qd.any(),
                  1.0, 'the arm held')


def _trajectory(model, q0, q1, duration, names=None, start=None):
    """Return a JointTrajectory sampling the rest-to-rest quintic from q0 to q1, and the path."""
    path = point_to_point(q0, q1, duration, 'quintic')
    times = np.linspace(0.0, duration, 21)
    sample = path.sample(times)
    msg = JointTrajectory(joint_names=list(names or model.joint_names))
    order = model.joint_indices(msg.joint_names)
    msg.points = [JointTrajectoryPoint(positions=sample.q[k, order].tolist(),
                                       velocities=sample.qd[k, order].tolist(),
                                       accelerations=sample.qdd[k, order].tolist(),
                                       time_from_start=duration_msg(t))
                  for k, t in enumerate(times)]
    if start is not None:
        msg.header.stamp = time_msg(s_to_ns(start))
    return msg, path


def _checked(request, model, count=None):
    """
    Return the Goal of a FollowJointTrajectory request as the goal process checks it.

    ``count``: the number of the trajectory's points as the goal process takes them capped
    (its points then left out); raises ``InputError`` as the process refuses it.
    """
    check_single_dof(request, len(request.multi_dof_trajectory.points))
    return joint_goal(request.trajectory, model, given_tolerances(request, model), count)


def _take(arm, goal, tag):
    """Hand a checked goal over as the node does: its tag, the defaults where it gives none."""
    arm.submit(goal._replace(tag=tag, tolerances=with_defaults(goal.tolerances,
                                                               arm.tolerances)))


def _refusal(arm, request, count=None):
    """
    Return the result's code (its name) and message that refuse ``request``; fail if taken.

    Refused by the goal process (the code its error's, INVALID_GOAL by default, as the process
    answers it) or by the controller (invalid: INVALID_GOAL).
    """
    try:
        goal = _checked(request, arm.model, count)
    except InputError as exc:
        return getattr(exc, 'error_code', 'INVALID_GOAL'), str(exc)
    count = len(arm.events)
    _take(arm, goal, 'malformed')
    ended = [e for e in arm.events[count:] if e.tag == 'malformed' and e.outcome]
    assert [e.outcome for e in ended] == [Outcome.INVALID], f'taken: {arm.events[count:]}'
    return 'INVALID_GOAL', ended[0].message


def _ended(arm, tag):
    [ended] = arm.ended(tag)
    return ended


def test_bad_goals_are_rejected_and_the_motion_goes_on():
    arm = _held('planar_2r')
    model = arm.model
    q0 = arm.states[-1].q
    good, path = _trajectory(model, q0, q0 + [0.5, -0.4], 1.5)
    _take(arm, _checked(FollowJointTrajectory.Goal(trajectory=good,
                                                   goal_time_tolerance=duration_msg(2.0)),
                        model), 'running')
    arm.run_until(lambda: arm.mode() is Mode.TRAJECTORY, 1.0, 'the motion')

    def bad(change):
        msg, _ = _trajectory(model, q0, q0 + [0.2, 0.2], 1.0)
        change(msg)
        return FollowJointTrajectory.Goal(trajectory=msg)

    def unknown_joint(msg):
        msg.joint_names[0] = 'elbow'

    def nan(msg):
        msg.points[3].positions[1] = float('nan')

    def backwards(msg):
        msg.points[5].time_from_start = msg.points[2].time_from_start

    def outside(msg):
        msg.points[-1].positions[0] = 4.0

    def missing_joint(msg):
        msg.joint_names = msg.joint_names[:1]
        for p in msg.points:
            p.positions = p.positions[:1]
            p.velocities = p.velocities[:1]
            p.accelerations = p.accelerations[:1]

    for change, code, words in (
            (unknown_joint, 'INVALID_JOINTS', ['elbow', 'unknown']),
            (missing_joint, 'INVALID_JOINTS', ['missing', 'joint2']),
            (nan, 'INVALID_GOAL', ['nan', 'point 3']),
            (backwards, 'INVALID_GOAL', ['increasing']),
            (outside, 'INVALID_GOAL', ['joint1', 'limit'])):
        got, error = _refusal(arm, bad(change))
        assert got == code, error
        assert all(w in error for w in words), error
        arm.run_for(0.01)
        assert arm.mode() is Mode.TRAJECTORY and not arm.ended('running')
    arm.run_until(lambda: arm.ended('running'), 5.0, 'the motion ending')
    assert _ended(arm, 'running').outcome is Outcome.SUCCEEDED
    _holding(arm)
    np.testing.assert_allclose(arm.states[-1].q, path.end, atol=1e-3)


def test_huge_goals_are_refused_at_once_and_the_motion_goes_on():
    arm = _held('scara')
    model = arm.model
    q0 = arm.states[-1].q
    move = [0.5, -0.6, 0.1]
    good, path = _trajectory(model, q0, q0 + move, 1.0)
    names = list(model.joint_names)
    many_joints = JointTrajectory(joint_names=names + [f'j{k}' for k in range(9997)],
                                  points=good.points)
    # taken capped, as the goal process takes more than MAX_TRAJECTORY_POINTS: the count alone
    many_points = JointTrajectory(joint_names=names)
    long_name = JointTrajectory(joint_names=names[:2] + ['x' * 1_000_000], points=good.points)
    count = len(arm.cycles)
    _take(arm, _checked(FollowJointTrajectory.Goal(trajectory=good,
                                                   goal_time_tolerance=duration_msg(2.0)),
                        model), 'running')
    arm.run_until(lambda: arm.mode() is Mode.TRAJECTORY, 1.0, 'the motion')
    for msg, points, code, words in (
            (many_joints, None, 'INVALID_JOINTS',
             ['10000 joint names', 'unknown', "'j0'", '9992 more']),
            (many_points, 100_000, 'INVALID_GOAL', ['100000 points', 'at most']),
            (long_name, None, 'INVALID_JOINTS', ["'xxxx", '1000000 characters',
                                                 'longer than'])):
        got, error = _refusal(arm, FollowJointTrajectory.Goal(trajectory=msg), points)
        assert got == code, error
        # the message is the goal process's log line too: shortened
        assert all(w in error for w in words) and len(error) < 500, error
        assert 'x' * 100 not in f'{goal_name(b"goal")}invalid: {error}'
        arm.run_for(0.01)
        assert arm.mode() is Mode.TRAJECTORY            # refused while the motion runs
    arm.run_until(lambda: arm.ended('running'), 5.0, 'the motion ending')
    # the motion went on all along: every cycle ran, on the path, and the path advanced
    cycles = arm.cycles[count:]
    assert arm.controller.missed_cycles == 0
    assert all(c.mode in (Mode.HOLD, Mode.TRAJECTORY) for c in cycles)
    moving = [c for c in cycles if c.mode is Mode.TRAJECTORY]
    assert max(np.abs(c.reference.q - c.q).max() for c in moving) < 1e-3
    advanced = moving[-1].reference.q - moving[0].reference.q
    assert np.all(np.sign(advanced) == np.sign(move)), advanced
    # and it ran to its end, at its goal
    assert _ended(arm, 'running').outcome is Outcome.SUCCEEDED
    _holding(arm)
    np.testing.assert_allclose(arm.states[-1].q, path.end, atol=1e-3)


def _specs(arm):
    """Return the controller node's declared parameters ``{name: Spec}`` for the graph's arm."""
    specs = {spec.name: spec for spec in PARAMETERS + ROS_PARAMETERS}
    gains = arm.controller.law.gain_names
    for spec in JOINT_PARAMETERS:
        if spec.name.startswith('gains.') and spec.name.rsplit('.', 1)[1] not in gains:
            continue
        for joint in arm.model.joint_names:
            name = spec.name.format(joint=joint)
            specs[name] = spec._replace(name=name)
    return specs


def _set(arm, name, value):
    """
    Set the controller node's parameter ``name`` as its parameter service does; return why not.

    The node's judgement of the name, type and range, then the law's of a gain; '' when set.
    """
    patterns = tuple(spec.name for spec in JOINT_PARAMETERS)
    reason = refusal(name, value, _specs(arm), patterns, arm.model.joint_names, STRUCTURAL)
    if reason:
        return reason
    _, joint, gain = name.split('.')
    try:
        arm.controller.set_law(arm.controller.law.with_gains(**{gain: {joint: value}}))
    except (InputError, TypeError) as exc:
        return str(exc)
    return ''


def test_topic_trajectories_in_any_joint_order_preempt_and_gains_change_at_run_time():
    arm = _held('planar_2r')
    model = arm.model
    q0 = arm.states[-1].q
    # the second starts 1 s into the first, from where the first's reference is then
    start = arm.states[-1].t + LEAD
    first, first_path = _trajectory(model, q0, q0 + [0.5, 0.5], 3.0, start=start)
    q1 = first_path.sample(np.array([1.0])).q[0]
    second, path = _trajectory(model, q1, q1 + [-0.3, 0.3], 1.0, names=['joint2', 'joint1'],
                               start=start + 1.0)
    # a topic's trajectory: read without tolerances (the defaults), untagged
    _take(arm, joint_goal(first, model), None)
    arm.run_until(lambda: arm.mode() is Mode.TRAJECTORY, LEAD + 0.1, 'the first trajectory')
    _take(arm, joint_goal(second, model), None)
    arm.run_until(lambda: np.abs(arm.states[-1].q - path.end).max() < 1e-3
                  and arm.mode() is Mode.HOLD, 5.0, 'the topic trajectory to end')
    # the node's log lines: each accepted, the first preempted (a warning), then the second's
    # success
    accepted = [e for e in arm.events if e.kind is Kind.GOAL_ACCEPTED]
    assert [f'{goal_name(b"")}{e.message}'.startswith('trajectory accepted')
            for e in accepted] == [True, True]
    assert [f'{goal_name(b"")}{e.outcome.value}' for e in arm.ended()] == \
        ['trajectory preempted', 'trajectory succeeded']
    # gains are parameters, validated: a negative gain is refused, a good one applied
    refused = _set(arm, 'gains.joint1.kp', -5.0)
    assert refused and 'kp' in refused
    assert _set(arm, 'gains.joint1.kp', 900.0) == ''
    assert arm.controller.law.kp[0] == 900.0


def test_gains_beyond_the_loops_bound_and_bad_names_and_types_are_refused():
    arm = _held('scara')
    for name, value, words in (
            ('gains.shoulder.kp', 4e6, ['gains.shoulder.kp = 4e+06: above', 'turns unstable']),
            ('gains.shoulder.kd', 1e300, ['gains.shoulder.kd', 'kd < m / T']),
            ('gains.sholder.kp', 100.0, ["no joint 'sholder'", "closest: ['shoulder'"]),
            ('constraints.elbo.goal', 0.01, ["no joint 'elbo'", "closest: ['elbow'"]),
            ('gains.shoulder.kp', 4, ["'gains.shoulder.kp' takes a double",
                                      'got 4 (an integer)']),
            ('use_sim_time', False, ['use_sim_time', 'read-only'])):
        reason = _set(arm, name, value)
        assert reason and all(w in reason for w in words), reason
    held = arm.cycles[-1].q
    assert _set(arm, 'gains.shoulder.kp', 900.0) == ''
    count = len(arm.cycles)
    arm.run_for(0.4)
    assert all(c.mode is Mode.HOLD for c in arm.cycles[count:])
    np.testing.assert_allclose(arm.cycles[-1].q, held, atol=1e-3)


class _StateCallback:
    """
    The controller node's joint-state callback over a graph's controller, on the test's clock.

    The node's own :meth:`ControllerNode.joint_state_callback` with what it reads of its node:
    the reader, the controller's loop, the throttled error log (kept in :attr:`errors`).
    """

    def __init__(self, arm):
        self.reader = JointStateReader(arm.model, 'joint_states')
        self.params = SimpleNamespace(hardware=False)
        self.controller, self.cycling, self.sim_time = arm.controller, arm.cycling, False
        self.throttle = Throttle(arm.clock)
        self.errors = []
        self._clock = arm.clock

    def get_logger(self):
        return self

    def error(self, line):
        self.errors.append(line)

    def _now(self):
        return self._clock()

    def publish(self, names, values):
        """Take a joint state of ``names`` (positions ``values``, at rest) stamped now."""
        msg = JointState(name=names, position=values, velocity=[0.0] * len(names))
        msg.header.stamp = time_msg(self._clock.system_ns())
        ControllerNode.joint_state_callback(self, serialize_message(msg), None)
        self._clock.advance(1e-3)


def test_extra_joints_are_ignored_and_a_missing_joint_sends_nothing():
    # the controller alone, on real time: the test's states are the only ones
    arm = LoopGraph('planar_2r', lockstep=False)
    arm.kill_simulator()
    model, node = arm.model, _StateCallback(arm)
    q = np.array([0.3, 0.5])
    # a whole robot's joint states, in another order: the two arm joints are found by name
    for _ in range(10):
        node.publish(['gripper', 'joint2', 'joint1'], [0.04, q[1], q[0]])
    assert len(arm.cycles) == 10
    # gravity compensation at the held position
    for cycle in arm.cycles:
        np.testing.assert_allclose(cycle.command, model.gravity_torques(q), rtol=0, atol=1e-9)
    count, time = len(arm.cycles), arm.controller.time
    for _ in range(20):
        node.publish(['gripper', 'joint2'], [0.04, q[1] + 0.2])
    assert 'missing' in node.errors[0] and 'joint1' in node.errors[0], node.errors
    # nothing answers the 20 states without joint1 (used, one would give other torques), and
    # the controller goes on with the next whole state
    assert len(arm.cycles) == count and arm.controller.time == time
    node.publish(['joint1', 'joint2', 'gripper'], [q[0], q[1], 0.04])
    assert len(arm.cycles) == count + 1
    np.testing.assert_allclose(arm.cycles[-1].command, model.gravity_torques(q), rtol=0,
                               atol=1e-9)


class _SimulatedStates(_StateCallback):
    """The joint-state callback of a controller on simulated time: ``clock`` is /clock [s]."""

    def __init__(self, arm):
        super().__init__(arm)
        self.sim_time = True
        self.clock = 0.0            # no /clock came yet

    def _now(self):
        return self.clock

    def state(self, t_ns, q):
        """Take the simulator's joint state stamped ``t_ns`` [ns], at ``q``, at rest."""
        msg = JointState(name=['joint1', 'joint2'], position=q, velocity=[0.0, 0.0])
        msg.header.stamp = time_msg(t_ns)
        ControllerNode.joint_state_callback(self, serialize_message(msg), None)


def test_a_simulations_first_state_delivered_late_is_not_held():
    # a controller started beside a running simulation on simulated time receives the
    # simulator's history; its first state, stamped 0, is as old as the rest (read as stamped
    # now, it was fresh, and a restarted controller drove the arm back to where it started).
    # The clock at 8.5 s may come before that state or after it
    for clock_first in (True, False):
        arm = LoopGraph('planar_2r')        # lockstep: the controller on simulated time
        arm.kill_simulator()
        node = _SimulatedStates(arm)
        if clock_first:
            node.clock = 8.5
        node.state(0, [0.4, 0.8])
        holds = [e.message for e in arm.events if e.kind is Kind.HOLDING]
        if clock_first:
            assert arm.said('skipping joint states') and not holds, arm.events
        else:
            assert holds == ['first joint state: holding [0.4, 0.8]'], arm.events
        # then the live states: the one the controller holds
        node.clock = 8.5
        node.state(8_600_000_000, [0.1, 0.2])
        holds = [e.message for e in arm.events if e.kind is Kind.HOLDING]
        assert holds[-1].endswith('holding [0.1, 0.2]'), arm.events
        assert arm.mode() is Mode.HOLD
        np.testing.assert_allclose(arm.cycles[-1].reference.q, [0.1, 0.2], rtol=0, atol=1e-12)
