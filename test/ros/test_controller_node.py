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
The controller node's processes: its cycle's thread, its goal process, a goal end to end.

The goals are read in a process of its own that ends with the controller; a goal through it
moves the arm, a trajectory on the topic, in another joint order, does so too, and the node's
state messages (its own and joint_trajectory_controller's) tell the same numbers of both.
What the controller does with its inputs runs on the test's clock: preemption and a smooth
cancel in test/core/test_graph_goals.py, bad goals, topic trajectories, gains and joint states
with extra or missing joints in test/core/test_graph_inputs.py, the planar_2r, scara and
puma560 tracking a quintic in test/core/test_graph_tracking.py, two lockstep runs equal bit for
bit through stalls of the host in test/core/test_graph_lockstep.py (through the processes:
test_simulate.py).
"""

import collections
import os
from pathlib import Path

from closed_loop import quintic, SUCCEEDED
from control_msgs.msg import JointTrajectoryControllerState
import numpy as np
import pytest
import rclpy
from rclpy.action import get_action_server_names_and_types_by_node
from rclpy.context import Context
from robot_dynamics.robots import path as robot_path
from robot_dynamics.ros.nodes.controller_node import ControllerNode
from robot_dynamics.ros.wire.compat import RCLError
from robot_dynamics.ros.wire.conversions import to_seconds
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

pytestmark = pytest.mark.ros


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
    trajectory_states = probe.collect(JointTrajectoryControllerState,
                                      '/controller/controller_state')
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
    # the result comes from the goal process, ahead of the states the probe has taken (a
    # lockstep loop runs ahead of a busy probe): the arm's states up to the hold that follows
    probe.wait_for(arm.holding, what='the arm held after the goal')
    arm.caught_up(to_seconds(arm.controller_states[-1][0].header.stamp))
    np.testing.assert_allclose(arm.position(), path.end, atol=1e-3)
    # and a trajectory on its topic, in another joint order (taken by name)
    publisher = node.create_publisher(JointTrajectory, '/controller/joint_trajectory', 10)
    probe.wait_for(lambda: publisher.get_subscription_count() > 0, what='the goal process')
    q0 = arm.position()
    trajectory, path = quintic(arm.model, q0, q0 + [-0.3, 0.2], 1.0, names=['joint2', 'joint1'])
    publisher.publish(trajectory)
    # the log line comes from another thread of the controller than its state: waited for
    probe.wait_for(lambda: 'trajectory succeeded' in arm.processes.output(arm.controller),
                   what='the success logged')
    assert 'trajectory accepted' in arm.processes.output(arm.controller)
    probe.wait_for(lambda: np.abs(arm.position() - path.end).max() < 1e-3
                   and arm.holding(), what='the topic trajectory to end')
    assert arm.controller.poll() is None

    # joint_trajectory_controller's state of the same cycles, of both motions: the same
    # numbers, the command as its output (effort interface)
    def stamp(m):
        return m.header.stamp.sec, m.header.stamp.nanosec
    end = stamp(arm.controller_states[-1][0])
    probe.wait_for(lambda: trajectory_states and stamp(trajectory_states[-1][0]) >= end,
                   what="joint_trajectory_controller's state up to the hold")
    # (by their stamp, the node's clock: where /clock ran ahead of two cycles' states, both
    # publications have its time, and such a stamp pairs nothing)
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
    # the controller's process group killed without a word (a crash, a supervisor's SIGKILL):
    # the goal process, in a session of its own, is not in it; it ends by its pipe (with a
    # goodbye to the graph), so that a new controller's actions are the only ones
    assert os.getsid(child) == os.getpgid(child) == child != os.getpgid(arm.controller.pid)
    arm.kill(arm.controller)
    probe.wait_for(lambda: not Path(f'/proc/{child}').exists() or
                   Path(f'/proc/{child}/stat').read_text().split()[2] == 'Z',
                   what='the goal process ended')
