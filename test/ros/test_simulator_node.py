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
The simulator node over the middleware: joint order, reset service, stamps, pushes, refusals.

Its loop's decisions (falling, energy, effort, stops, commands, stalls, lockstep) run on the
test's clock in test/core/test_simulator_loop.py: the node runs the same loop.
"""

import time

from geometry_msgs.msg import WrenchStamped
import numpy as np
import pytest
from rclpy.parameter import Parameter
from rclpy.publisher import Publisher
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from robot_dynamics import RobotModel
from robot_dynamics.robots import path as robot_path
from robot_dynamics.ros.nodes.simulator_node import SimulatorNode
from robot_dynamics.ros.wire.compat import PUBLISHER_GID, RCLError
from robot_dynamics.ros.wire.conversions import to_seconds
from robot_dynamics_interfaces.msg import SimulatorStatus
from scipy.optimize import fsolve
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger


pytestmark = pytest.mark.ros

COMMANDS = '/effort_controller/commands'
#: A second command publisher that the lockstep simulator's transient-local reader matches.
IMPOSTOR_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL)


@pytest.fixture
def simulator(processes, probe):
    """Return ``start(robot, **parameters)``: model and simulator nodes, stopped after the test."""
    started = []

    def start(robot, **parameters):
        args = ['simulator_node', '--ros-args', '-r', '__node:=simulator']
        for name, value in parameters.items():
            args += ['-p', f'{name}:={value}']
        started.append(processes.start('model', ['model_node', '--ros-args', '-r',
                                                 '__node:=model', '-p', f'robot:={robot}']))
        started.append(processes.start('simulator', args))
        return started[-1]

    yield start
    for proc in started:
        assert processes.stop(proc) == 0, processes.output(proc)


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


def test_brakes_hold_the_arm_until_the_first_command(simulator, probe):
    states = probe.collect(JointState, '/joint_states')
    # the hardware's joint order, not the model's: initial positions and states are in it
    simulator('planar_2r', joints='[joint2, joint1]', initial_positions='[0.8, 0.4]')
    probe.wait_for(lambda: len(states) > 300, what='300 joint states')
    # gravity acts, but nothing moves before a controller commands
    assert all(list(m.name) == ['joint2', 'joint1'] and list(m.position) == [0.8, 0.4]
               and list(m.velocity) == [0.0, 0.0] for m, _ in states)
    publisher = probe.node.create_publisher(Float64MultiArray, COMMANDS, 10)
    count = len(states)

    def released():
        publisher.publish(Float64MultiArray(data=[0.0, 0.0]))   # zero effort: it falls
        return any(m.position[1] < 0.39 for m, _ in states[count:])     # joint1
    probe.wait_for(released, what='the arm to fall once commanded')
    # ~/reset (the view's Reset): the initial state again, stamped as the reply says
    t0 = _reset(probe, states)
    restored = _since(states, t0, t0)
    assert [(list(m.position), list(m.velocity)) for m in restored] == [([0.8, 0.4], [0.0, 0.0])]


def test_real_time_stamps_are_the_steps_times(simulator, probe):
    states = probe.collect(JointState, '/joint_states')
    simulator('planar_2r')
    probe.wait_for(lambda: len(states) > 1000, what='1,000 joint states')
    stamps = np.array([m.header.stamp.sec * 10**9 + m.header.stamp.nanosec
                       for m, _ in states[:1000]])
    # on the 1 kHz grid to the nanosecond, however late a step ran or a message came
    gaps = np.diff(stamps)
    assert np.all(gaps > 0) and np.all(gaps % 1_000_000 == 0), np.unique(gaps)
    # on the ROS clock (system time) at the time each step was due: states come within 0.1 s
    # of their stamps, never before them (the stamps once started at the simulator's build, a
    # warm-up before the first step: every state ~0.2 s too old). A busy host delays many of
    # them, never one to before its stamp: the test waits for a prompt one.
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


def _settled(arm, after):
    """Wait until the arm has been at rest for 1 s of simulated time after ``after`` [s]."""
    arm.probe.wait_for(lambda: arm.now() > after + 1.0 and np.abs(
        arm.states[-1][0].velocity).max() < 1e-7, timeout=120.0, what='the arm at rest')


def test_a_push_moves_the_arm_against_its_stiffness_and_an_impostor_does_not(
        loop, probe, processes):
    # lockstep, computed torque holding at rest: tau = kp M(q) (q_ref - q) + g(q), so the push's
    # torque J^T w is held by the stiffness kp M(q)
    arm = loop('planar_2r')
    model = arm.model
    statuses = probe.collect(SimulatorStatus, '/simulator/status')
    wrenches = probe.node.create_publisher(WrenchStamped, '/simulator/external_wrench', 10)
    probe.wait_for(lambda: wrenches.get_subscription_count() > 0, what='the wrench topic')
    held = np.array(arm.controller_states[-1][0].reference.positions)
    w = np.array([10.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    before = model.fk(arm.position())[:3, 3]
    wrenches.publish(_wrench(w[:3]))
    probe.wait_for(lambda: statuses and statuses[-1][0].external_wrench.force.x == 10.0,
                   what='the wrench in the status')
    pushed = arm.now()
    _settled(arm, pushed)
    q = arm.position()
    kp = 20.0 ** 2        # the shipped natural frequency [rad/s], squared

    def residual(x):
        return kp * model.mass_matrix(x) @ (held - x) + model.jacobian(x).T @ w
    expected = fsolve(residual, held, xtol=1e-12)
    np.testing.assert_allclose(q, expected, atol=1e-6)
    # pushed along +x: the tip went that way
    assert model.fk(q)[0, 3] - before[0] > 1e-4
    assert statuses[-1][0].external_wrench_frame == 'tip'
    # NaN and an unknown frame are refused, logged; the push stays
    for bad in (_wrench([float('nan'), 0.0, 0.0]), _wrench([1.0, 0.0, 0.0], 'nowhere')):
        wrenches.publish(bad)
        probe.wait_for(lambda: 'refused external wrench' in processes.output(arm.simulator),
                       what='the refusal in the log')
    assert "'nowhere'" in processes.output(arm.simulator) or 'nan' in \
        processes.output(arm.simulator)
    # a zero wrench removes it: back where it was held
    wrenches.publish(_wrench([0.0, 0.0, 0.0]))
    probe.wait_for(lambda: statuses and statuses[-1][0].external_wrench.force.x == 0.0,
                   what='no wrench in the status')
    _settled(arm, arm.now())
    np.testing.assert_allclose(arm.position(), held, atol=1e-6)
    assert PUBLISHER_GID    # who published each command, on both distributions
    # an impostor on the command topic: ignored, counted, named; the arm stays held
    impostor = probe.node.create_publisher(Float64MultiArray, COMMANDS, IMPOSTOR_QOS)
    count = len(arm.states)
    probe.wait_for(lambda: impostor.publish(Float64MultiArray(data=[50.0, -30.0])) or (
        statuses and statuses[-1][0].ignored_commands > 10), what='the ignored commands')
    log = processes.output(arm.simulator)
    assert 'commands from a second source' in log and 'controller' in log, log
    moved = np.array([m.position for m, _ in arm.states[count:]]) - held
    assert np.abs(moved).max() < 1e-6


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
