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
The controller node in a closed loop with the simulator, each in its own process.

Preemption and a smooth cancel run on the test's clock in test/core/test_graph_goals.py, two
lockstep runs equal bit for bit through stalls of the host in test/core/test_graph_lockstep.py
(through the processes: test_simulate.py), the scara and the puma560 tracking a quintic in
test/core/test_graph_tracking.py.
"""

import collections
import os
from pathlib import Path

from closed_loop import ABORTED, quintic, SUCCEEDED, tolerances
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState
import numpy as np
import pytest
from rcl_interfaces.msg import Parameter as ParameterMsg, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
import rclpy
from rclpy.action import get_action_server_names_and_types_by_node
from rclpy.context import Context
from robot_dynamics import RobotModel
from robot_dynamics.robots import path as robot_path
from robot_dynamics.ros.nodes.controller_node import ControllerNode
from robot_dynamics.ros.wire.compat import RCLError
from robot_dynamics.ros.wire.conversions import time_msg, to_seconds
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

pytestmark = pytest.mark.ros

Result = FollowJointTrajectory.Result
#: How far ahead of the simulated clock goals with a start time are stamped [s]: more than a
#: busy probe's view of that clock lags behind it.
LEAD = 5.0


def test_closed_loop_tracks_a_quintic(loop, probe):
    bound = 1e-3
    arm = loop('planar_2r')
    model = arm.model
    trajectory_states = probe.collect(JointTrajectoryControllerState,
                                      '/controller/controller_state')
    q0 = arm.position()
    q1 = np.clip(q0 + np.where(model.is_prismatic, 0.1, 0.6), model.lower, model.upper)
    msg, path = quintic(model, q0, q1, 2.0)
    start = arm.now() + LEAD
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(start), int(start % 1 * 1e9)
    # held in transit: on a busy host the goal came after its start (lockstep runs ahead of the
    # wall clock), and the reference began in mid-motion, saturating (puma560, rms 0.036 rad)
    handle = arm.send_before(start, msg, goal_tolerance=tolerances(model, bound), goal_time=2.0)
    result = arm.result(handle)
    assert result.status == SUCCEEDED, result.result.error_string
    arm.caught_up(start + 2.0)
    # the controller's own account of the motion
    moving = [m for m, _ in arm.controller_states if m.mode == 'trajectory']
    error = np.array([m.error.positions for m in moving])
    assert len(moving) > 200
    missed = moving[-1].missed_cycles - moving[0].missed_cycles
    assert np.sqrt(np.mean(error ** 2)) < bound, \
        f'{missed} cycles missed\n' + arm.processes.output(arm.controller)
    # independently: the simulated joint states against the planned quintic at their stamps
    states = [m for m, _ in arm.states if start <= to_seconds(m.header.stamp) <= start + 2.0]
    t = np.array([to_seconds(m.header.stamp) for m in states]) - start
    q = np.array([m.position for m in states])
    assert len(states) > 200
    assert np.sqrt(np.mean((q - path.sample(t).q) ** 2)) < bound
    np.testing.assert_allclose(arm.position(), q1, atol=bound)
    # joint_trajectory_controller's state of the same cycles: the same numbers, the command as
    # its output (effort interface)
    # (by their stamp, the node's clock: where /clock ran ahead of two cycles' states, both
    # publications have its time, and such a stamp pairs nothing)

    def stamp(m):
        return m.header.stamp.sec, m.header.stamp.nanosec
    ours, theirs = (collections.Counter(stamp(m) for m, _ in messages)
                    for messages in (arm.controller_states, trajectory_states))
    own = {stamp(m): m for m, _ in arm.controller_states if ours[stamp(m)] == 1}
    pairs = [(m, own[stamp(m)]) for m, _ in trajectory_states
             if stamp(m) in own and theirs[stamp(m)] == 1]
    assert len([1 for _, m in pairs if m.mode == 'trajectory']) > 200
    for jtc, state in pairs:
        assert jtc.joint_names == state.joint_names and jtc.speed_scaling_factor == 1.0
        for part in ('reference', 'feedback', 'error'):
            assert getattr(jtc, part) == getattr(state, part), part
        assert list(jtc.output.effort) == list(state.effort) and not jtc.output.positions


def test_bad_goals_are_rejected_and_the_motion_goes_on(loop, probe):
    arm = loop('planar_2r')
    model = arm.model
    q0 = arm.position()
    good, path = quintic(model, q0, q0 + [0.5, -0.4], 3.0)
    running = arm.send(good, goal_time=2.0)
    probe.wait_for(lambda: arm.mode() == 'trajectory', what='the motion')

    def bad(change):
        msg, _ = quintic(model, q0, q0 + [0.2, 0.2], 1.0)
        change(msg)
        return msg

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

    # simulated time held while they travel: beside another suite, the lockstep motion ran to
    # its end before the refusals did
    with arm.time_held():
        for change, code, words in (
                (unknown_joint, Result.INVALID_JOINTS, ['elbow', 'unknown']),
                (missing_joint, Result.INVALID_JOINTS, ['missing', 'joint2']),
                (nan, Result.INVALID_GOAL, ['nan', 'point 3']),
                (backwards, Result.INVALID_GOAL, ['increasing']),
                (outside, Result.INVALID_GOAL, ['joint1', 'limit'])):
            result = arm.result(arm.send(bad(change)))
            assert result.status == ABORTED
            assert result.result.error_code == code, result.result.error_string
            assert all(w in result.result.error_string for w in words), \
                result.result.error_string
            assert arm.mode() == 'trajectory'
    result = arm.result(running)
    assert result.status == SUCCEEDED and result.result.error_code == Result.SUCCESSFUL
    # the result comes from the goal process, ahead of the states the probe has taken (a
    # lockstep loop runs ahead of a busy probe): the arm's states up to the hold that follows
    probe.wait_for(arm.holding, what='the arm held after the goal')
    arm.caught_up(to_seconds(arm.controller_states[-1][0].header.stamp))
    np.testing.assert_allclose(arm.position(), path.end, atol=1e-3)


def test_topic_trajectory_and_gains_at_run_time(loop, probe):
    arm = loop('planar_2r')
    model = arm.model
    q0 = arm.position()
    publisher = probe.node.create_publisher(JointTrajectory, '/controller/joint_trajectory', 10)
    probe.wait_for(lambda: publisher.get_subscription_count() > 0, what='the controller')
    # a first goal, preempted by the second, which then succeeds: a warning, then an info line.
    # Both at set times of the simulated clock, LEAD ahead: the second starts 1 s into
    # the first from where the first's reference is then, however fast the host runs the loop
    # and this test (sent when the probe saw the first move, on a busy host the first had
    # already ended, or the arm was a second further than the probe said)
    start = arm.now() + LEAD
    first, first_path = quintic(model, q0, q0 + [0.5, 0.5], 3.0)
    first.header.stamp = time_msg(round(start * 1e9))
    q1 = first_path.sample(np.array([1.0])).q[0]
    msg, path = quintic(model, q1, q1 + [-0.3, 0.3], 1.0, names=['joint2', 'joint1'])
    msg.header.stamp = time_msg(round((start + 1.0) * 1e9))
    # the second once the first is taken: of a burst on the topic the controller takes the
    # newest (as joint_trajectory_controller's buffer does), and this test is of a preemption
    count = len(arm.controller_states)
    publisher.publish(first)
    probe.wait_for(lambda: 'trajectory accepted' in arm.processes.output(arm.controller),
                   what='the first trajectory taken')
    publisher.publish(msg)
    # any state since: on a busy host the probe may look only once the 1 s motion is over
    probe.wait_for(lambda: any(m.mode == 'trajectory' for m, _ in arm.controller_states[count:]),
                   what='the topic trajectories')
    probe.wait_for(lambda: np.abs(arm.position() - path.end).max() < 1e-3
                   and arm.mode() == 'hold', what='the topic trajectory to end')
    # the log line comes from another thread of the controller than its state: waited for
    probe.wait_for(lambda: 'trajectory succeeded' in arm.processes.output(arm.controller),
                   what='the success logged')
    assert 'trajectory preempted' in arm.processes.output(arm.controller)
    assert arm.controller.poll() is None
    # gains are parameters, validated: a negative gain is refused, a good one applied
    client = probe.client(SetParameters, '/controller/set_parameters')

    def set_gain(value):
        request = SetParameters.Request(parameters=[ParameterMsg(
            name='gains.joint1.kp', value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                                         double_value=value))])
        return probe.call(client, request).results[0]
    refused = set_gain(-5.0)
    assert not refused.successful and 'kp' in refused.reason
    assert set_gain(900.0).successful


def test_extra_joints_are_ignored_and_a_missing_joint_sends_nothing(processes, probe):
    model = RobotModel.load('planar_2r')
    commands = probe.collect(Float64MultiArray, '/effort_controller/commands')
    procs = [processes.start('model', ['model_node', '--ros-args', '-r', '__node:=model',
                                       '-p', 'robot:=planar_2r']),
             processes.start('controller', ['controller_node', '--ros-args', '-r',
                                            '__node:=controller', '-p', 'state_timeout:=5.0'])]
    publisher = probe.node.create_publisher(JointState, '/joint_states', 10)
    q = np.array([0.3, 0.5])
    sent = []

    def publish(names, values):
        publisher.publish(JointState(name=names, position=values, velocity=[0.0] * len(names)))
        sent.append(names)
        return commands
    # a whole robot's joint states, in another order: the two arm joints are found by name
    probe.wait_for(lambda: publish(['gripper', 'joint2', 'joint1'], [0.04, q[1], q[0]]),
                   what='a command')
    probe.wait_for(lambda: publish(['gripper', 'joint2', 'joint1'], [0.04, q[1], q[0]]) and
                   np.allclose(commands[-1][0].data, model.gravity_torques(q), atol=1e-9),
                   what='gravity compensation at the held position')
    count, good = len(commands), len(sent)
    for _ in range(20):
        publish(['gripper', 'joint2'], [0.04, q[1] + 0.2])
    probe.wait_for(lambda: 'missing' in processes.output(procs[1]), what='the error')
    # nothing answers the 20 states without joint1 (used, one would give other torques); the
    # good states not answered yet when the count was taken may still be (one command each at
    # most, the held position's)
    late = [m.data for m, _ in commands[count:]]
    assert len(late) <= good - count
    assert all(np.allclose(data, model.gravity_torques(q), atol=1e-9) for data in late)
    assert procs[1].poll() is None
    for proc in procs:
        assert processes.stop(proc) == 0


def test_destroying_the_node_twice_stops_its_cycle_thread_once(ros_domain):
    # rclpy's context shutdown destroys the nodes it tracks, and their owner does it again
    context = Context()
    rclpy.init(context=context, domain_id=ros_domain)
    try:
        node = ControllerNode(context=context)
        # the description, as it comes from the topic
        node.description._callback(String(data=robot_path('planar_2r').read_text()))
        assert node.state_thread._thread.is_alive() and node.goals.process.poll() is None
        node.destroy_node()
        node.destroy_node()
        # the goal process ends when its pipe closes, cleanly (also when that was while it
        # started, as here)
        assert not node.state_thread._thread.is_alive()
        assert node.goals.process.wait(60.0) == 0
    finally:
        rclpy.try_shutdown(context=context)


def _children(pid):
    """Return the pids of the children of process ``pid`` (Linux)."""
    return [int(child) for task in Path(f'/proc/{pid}/task').iterdir()
            for child in (task / 'children').read_text().split()]


def test_goals_are_read_in_a_process_of_its_own_that_ends_with_the_controller(loop, probe):
    # rclpy builds a goal's Python objects with the interpreter's lock held: the actions and
    # the goal topics are served by the controller's child, not by the process of the cycle
    arm = loop('planar_2r')
    node = probe.node
    wanted = ('/controller/follow_joint_trajectory',
              'control_msgs/action/FollowJointTrajectory')

    def actions(name):
        try:
            return [(action, types[0]) for action, types in
                    get_action_server_names_and_types_by_node(node, name, '/')]
        except RCLError:        # not discovered yet
            return []
    probe.wait_for(lambda: wanted in actions('controller_goals'),
                   what='the action served by /controller_goals')
    assert not actions('controller')

    def subscribers():
        return {topic: {e.node_name for e in node.get_subscriptions_info_by_topic(topic)}
                for topic in ('/controller/joint_trajectory', '/controller/target_pose')}
    # each endpoint is discovered on its own: the action's first says nothing of the others'
    probe.wait_for(lambda: all(s == {'controller_goals'} for s in subscribers().values()),
                   what='the goal topics subscribed by /controller_goals')
    [child] = _children(arm.controller.pid)
    assert b'robot_dynamics.ros.nodes.goals' in Path(f'/proc/{child}/cmdline').read_bytes()
    # a goal through it moves the arm
    q0 = arm.position()
    trajectory, path = quintic(arm.model, q0, q0 + [0.3, -0.2], 1.0)
    assert arm.result(arm.send(trajectory)).status == SUCCEEDED
    np.testing.assert_allclose(arm.position(), path.end, atol=1e-3)
    # the controller's process group killed without a word (a crash, a supervisor's SIGKILL):
    # the goal process, in a session of its own, is not in it; it ends by its pipe (with a
    # goodbye to the graph), so that a new controller's actions are the only ones
    assert os.getsid(child) == os.getpgid(child) == child != os.getpgid(arm.controller.pid)
    arm.kill(arm.controller)
    probe.wait_for(lambda: not Path(f'/proc/{child}').exists() or
                   Path(f'/proc/{child}/stat').read_text().split()[2] == 'Z',
                   what='the goal process ended')
