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
The simulator node over the middleware: joint order, stamps, sources by GID, wrench, reset.

One simulator (and its model node) for the module, in the hardware's joint order, on real
time: what its messages and services carry. Its loop's decisions (falling, energy, effort,
stops, commands, stalls, lockstep) run on the test's clock in test/core/test_simulator_loop.py,
the brakes, the real-time stamps, a push against the stiffness and an impostor ignored in
test/core/test_graph_simulator.py: the node runs the same loop.
"""

import time

from geometry_msgs.msg import WrenchStamped
import numpy as np
import pytest
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.publisher import Publisher
from rclpy.serialization import deserialize_message
from robot_dynamics import RobotModel
from robot_dynamics.robots import path as robot_path
from robot_dynamics.ros.nodes.simulator_node import SimulatorNode
from robot_dynamics.ros.wire.compat import PUBLISHER_GID, RCLError
from robot_dynamics.ros.wire.conversions import to_seconds
from robot_dynamics_interfaces.msg import SimulatorStatus
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger


pytestmark = pytest.mark.ros

COMMANDS = '/effort_controller/commands'


@pytest.fixture(scope='module')
def simulator(module_processes, module_probe):
    """Return the simulator process of planar_2r in the order [joint2, joint1], braked."""
    module_processes.start('model', ['model_node', '--ros-args', '-r', '__node:=model', '-p',
                                     'robot:=planar_2r'])
    # the hardware's joint order, not the model's: initial positions and states are in it
    return module_processes.start('simulator', [
        'simulator_node', '--ros-args', '-r', '__node:=simulator', '-p',
        'joints:=[joint2, joint1]', '-p', 'initial_positions:=[0.8, 0.4]'])


def _stamp(msg):
    return to_seconds(msg.header.stamp)


def _reset(probe, states):
    """Reset the simulator; return the stamp [s] of the reset state, once a state after it came."""
    reset = probe.client(Trigger, '/simulator/reset')
    response = probe.call(reset, Trigger.Request())
    assert response.success, response.message
    t0 = float(response.message.rsplit(' ', 2)[-2])
    probe.wait_for(lambda: states and _stamp(states[-1][0]) > t0, what='a state after the reset')
    return t0


def _since(states, t0, t1=float('inf')):
    return [m for m, _ in states if t0 <= _stamp(m) <= t1]


def test_braked_states_in_the_hardware_joint_order_on_the_system_clock(simulator, probe):
    # first in the module: no command has come yet
    states = probe.collect(JointState, '/joint_states')
    probe.wait_for(lambda: len(states) > 100, what='100 joint states')
    assert all(list(m.name) == ['joint2', 'joint1'] and list(m.position) == [0.8, 0.4]
               and list(m.velocity) == [0.0, 0.0] for m, _ in states)
    stamps = np.array([m.header.stamp.sec * 10**9 + m.header.stamp.nanosec
                       for m, _ in states[:100]])
    # on the 1 kHz grid to the nanosecond, however late a step ran or a message came
    gaps = np.diff(stamps)
    assert np.all(gaps > 0) and np.all(gaps % 1_000_000 == 0), np.unique(gaps)
    # on the ROS clock (system time): states come within 0.1 s of their stamps, never before
    # them. A busy host delays many of them, never one to before its stamp: the test waits for
    # a prompt one.
    least = [np.inf, 0]     # the least delay so far [s], the states looked at

    def least_delay():
        new = states[least[1]:]
        least[1] += len(new)
        system_minus_monotonic = time.time() - time.monotonic()
        least[0] = min([least[0]] + [system_minus_monotonic + at - m.header.stamp.sec
                                     - m.header.stamp.nanosec * 1e-9 for m, at in new])
        return least[0]

    probe.wait_for(lambda: least_delay() < 0.1, timeout=60.0,
                   what='a joint state within 0.1 s of its stamp')
    assert least_delay() > -0.002


def _wrench(force, frame=''):
    msg = WrenchStamped()
    msg.header.frame_id = frame
    msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = force
    return msg


def test_a_source_is_its_publishers_gid_and_the_wrench_and_reset_messages(
        simulator, module_processes, probe):
    states = probe.collect(JointState, '/joint_states')
    statuses = probe.collect(SimulatorStatus, '/simulator/status')
    assert PUBLISHER_GID    # who published each command, on both distributions
    # the controller: a node of its own; the impostor: the probe's, there from the start, so
    # that the simulator knows both nodes' names by the time their commands come
    controller = Node('controller', context=probe.context)
    try:
        commands = controller.create_publisher(Float64MultiArray, COMMANDS, 10)
        impostor = probe.node.create_publisher(Float64MultiArray, COMMANDS, 10)
        wrenches = probe.node.create_publisher(WrenchStamped, '/simulator/external_wrench', 10)
        probe.wait_for(lambda: states, what='a joint state')
        count = len(states)

        def released():
            commands.publish(Float64MultiArray(data=[0.0, 0.0]))   # zero effort: it falls
            return any(m.position[1] < 0.39 for m, _ in states[count:])     # joint1
        probe.wait_for(released, what='the arm to fall once commanded')
        # an impostor on the command topic beside the controller: ignored, counted, named
        count = len(states)

        def ignored():
            commands.publish(Float64MultiArray(data=[0.0, 0.0]))
            impostor.publish(Float64MultiArray(data=[50.0, -30.0]))
            return statuses and statuses[-1][0].ignored_commands > 10
        probe.wait_for(ignored, what='the ignored commands')
        assert all(list(m.effort) == [0.0, 0.0] for m, _ in states[count:])
        log = module_processes.output(simulator)
        assert 'commands from a second source' in log and 'publisher of node /controller' in \
            log and 'publisher of node /test_probe' in log, log
    finally:
        controller.destroy_node()
    # the wrench message: an unknown frame refused, logged; one at the tip in the status
    probe.wait_for(lambda: wrenches.get_subscription_count() > 0, what='the wrench topic')
    wrenches.publish(_wrench([1.0, 0.0, 0.0], 'nowhere'))
    probe.wait_for(lambda: 'refused external wrench' in module_processes.output(simulator),
                   what='the refusal in the log')
    assert "'nowhere'" in module_processes.output(simulator)
    wrenches.publish(_wrench([10.0, 0.0, 0.0]))
    probe.wait_for(lambda: statuses and statuses[-1][0].external_wrench.force.x == 10.0,
                   what='the wrench in the status')
    assert statuses[-1][0].external_wrench_frame == 'tip'
    # ~/reset (the view's Reset): the initial state again, stamped as the reply says
    t0 = _reset(probe, states)
    restored = _since(states, t0, t0)
    assert [(list(m.position), list(m.velocity)) for m in restored] == [([0.8, 0.4], [0.0, 0.0])]


def test_a_state_the_middleware_refuses_is_lost_and_the_arm_steps_on(local_node, monkeypatch):
    # Fast DDS once refused the lockstep simulator's writes (RCLError) while a killed controller
    # was still matched, and the stepping thread ended there: a refused state is logged and
    # lost, and the next ones go out
    node, executor = local_node
    refused, calls = [], [0]
    publish = Publisher.publish

    def failing(self, msg):
        if self.topic_name == '/joint_states':
            calls[0] += 1
            if 100 < calls[0] <= 150:
                refused.append(to_seconds(deserialize_message(msg, JointState).header.stamp))
                raise RCLError('Failed to publish: cannot publish data')
        return publish(self, msg)
    monkeypatch.setattr(Publisher, 'publish', failing)
    stamps = []
    node.create_subscription(JointState, '/joint_states',
                             lambda msg: stamps.append(to_seconds(msg.header.stamp)), 1000)
    sim = SimulatorNode(context=node.context, parameter_overrides=[
        Parameter('realtime', value=False), Parameter('brake_until_command', value=False)])
    try:
        sim.on_model(RobotModel.from_urdf(robot_path('planar_2r')))
        deadline = time.monotonic() + 120.0
        while not (len(refused) == 50 and stamps and stamps[-1] > refused[-1]):
            assert time.monotonic() < deadline, f'{len(refused)} refused, {len(stamps)} states'
            executor.spin_once(timeout_sec=0.1)
        assert sim.failed_publishes == 50 and sim._thread.is_alive()
        assert not set(refused) & set(stamps)          # lost, not sent late
    finally:
        sim.destroy_node()
