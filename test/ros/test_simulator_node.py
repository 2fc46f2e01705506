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


"""The simulator node against the library: falling, energy, constant effort, stops, commands."""

import os
import signal
import time

from geometry_msgs.msg import WrenchStamped
import numpy as np
import pytest
from rclpy.parameter import Parameter
from rclpy.publisher import Publisher
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from robot_dynamics import RobotModel
from robot_dynamics.integrators import simulate
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


def test_zero_effort_planar_2r_falls(simulator, probe):
    model = RobotModel.load('planar_2r')
    states = probe.collect(JointState, '/joint_states')
    simulator('planar_2r', initial_positions='[0.4, 0.8]', brake_until_command='false')
    probe.wait_for(lambda: states, what='joint states')
    # it has been falling since it started; reset, and watch it fall from the initial state
    t0 = _reset(probe, states)
    probe.wait_for(lambda: _stamp(states[-1][0]) > t0 + 0.3, what='0.3 s of falling')
    msgs = _since(states, t0)
    q = np.array([m.position for m in msgs])
    assert all(e == 0.0 for m in msgs for e in m.effort)
    # under gravity alone the first link drops and the potential energy falls
    assert q[-1, 0] < 0.4 - 0.1
    assert np.all(np.diff(q[:50, 0]) <= 0.0)
    potential = model.potential_energy(q)
    assert potential[-1] < potential[0] - 1.0


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


def test_energy_is_conserved_without_friction(simulator, probe):
    model = RobotModel.load('planar_2r')
    q0, qd0 = [-1.2, 0.5], [1.0, -0.5]
    states = probe.collect(JointState, '/joint_states')
    statuses = probe.collect(SimulatorStatus, '/simulator/status')
    # hanging near the bottom: a swing that never reaches the +-pi stops
    simulator('planar_2r', realtime='false', friction='false', publish_rate_hz='200.0',
              brake_until_command='false',
              initial_positions=str(q0), initial_velocities=str(qd0))
    probe.wait_for(lambda: states, what='joint states')
    t0 = _reset(probe, states)
    probe.wait_for(lambda: _stamp(states[-1][0]) >= t0 + 5.0, what='5 s of simulated time')
    msgs = _since(states, t0, t0 + 5.0)
    q = np.array([m.position for m in msgs])
    qd = np.array([m.velocity for m in msgs])
    energy = model.kinetic_energy(q, qd) + model.potential_energy(q)
    e0 = model.kinetic_energy(q0, qd0) + model.potential_energy(q0)
    assert _stamp(msgs[-1]) - t0 > 4.9 and len(msgs) > 50
    assert np.abs(qd).max() > 0.5                         # it moved
    assert np.abs(energy - e0).max() < 1e-6 * abs(e0)
    assert not any(any(s.at_lower_limit) or any(s.at_upper_limit) for s, _ in statuses)


def test_constant_effort_follows_the_library_simulation(simulator, probe):
    model = RobotModel.load('planar_2r')
    tau = np.array([30.0, 6.0])
    q0 = np.array([0.2, 0.3])
    states = probe.collect(JointState, '/joint_states')
    simulator('planar_2r', realtime='false', publish_rate_hz='100.0', command_timeout='0.0',
              initial_positions='[0.2, 0.3]')
    publisher = probe.node.create_publisher(Float64MultiArray, COMMANDS, 10)

    def applied():
        publisher.publish(Float64MultiArray(data=tau.tolist()))
        return any(list(m.effort) == tau.tolist() for m, _ in states)
    probe.wait_for(applied, what='the command to apply')
    t0 = _reset(probe, states)
    probe.wait_for(lambda: _stamp(states[-1][0]) > t0 + 2.0, what='2 s after the reset')
    run = simulate(model, q0, np.zeros(2), lambda t, q, qd: tau, 1e-3, 2.0, friction=True)
    compared = 0
    for m in _since(states, t0):
        k = int(round((_stamp(m) - t0) / 1e-3))
        if k < len(run.t):
            np.testing.assert_allclose(m.position, run.q[k], rtol=0, atol=1e-9)
            np.testing.assert_allclose(m.velocity, run.qd[k], rtol=0, atol=1e-9)
            compared += 1
    assert compared > 100 and np.abs(run.q[-1] - q0).max() > 0.1


def test_a_joint_driven_into_its_limit_stops_there(simulator, probe):
    # the SCARA's quill (prismatic, 0 .. 0.3 m, positive down) slides down under gravity
    states = probe.collect(JointState, '/joint_states')
    statuses = probe.collect(SimulatorStatus, '/simulator/status')
    simulator('scara', realtime='false', publish_rate_hz='100.0', brake_until_command='false',
              initial_positions='[0.0, 1.2, 0.05]')
    probe.wait_for(lambda: states and _stamp(states[-1][0]) > 3.0, what='3 s of simulated time')
    last = states[-1][0]
    quill = list(last.name).index('quill')
    assert last.position[quill] == 0.3 and last.velocity[quill] == 0.0
    contact = probe.wait_for(lambda: [s for s, _ in statuses if s.at_upper_limit[quill]],
                             what='the contact report')
    assert not any(contact[-1].at_lower_limit)
    assert list(contact[-1].at_upper_limit) == [j == 'quill' for j in last.name]


def test_commands_timeout_rejects_and_reset(simulator, probe, processes):
    states = probe.collect(JointState, '/joint_states')
    statuses = probe.collect(SimulatorStatus, '/simulator/status')
    # a timeout long enough that a loaded machine never lets the test's own commands lapse
    proc = simulator('planar_2r', command_timeout='0.5', brake_on_timeout='false',
                     initial_positions='[0.4, 0.8]')
    publisher = probe.node.create_publisher(Float64MultiArray, COMMANDS, 10)
    good = [20.0, 5.0]

    def effort_is(values, after):
        return lambda: any(list(m.effort) == values for m, _ in states[after:])

    def publishing(values, condition):
        def check():
            publisher.publish(Float64MultiArray(data=values))
            return condition()
        return check
    probe.wait_for(publishing(good, effort_is(good, 0)), what='the good command')
    # malformed commands are rejected and the good one stays in force
    count = len(states)
    # the simulator reads the newest command only (NEWEST_ONLY): each bad one gets 5 ms alone
    for k, bad in enumerate(([1.0], [1.0, 2.0, 3.0], [float('nan'), 1.0], [1.0, float('inf')])):
        def bad_then_good(bad=bad, k=k):
            publisher.publish(Float64MultiArray(data=bad))
            time.sleep(0.005)
            publisher.publish(Float64MultiArray(data=good))
            return statuses and statuses[-1][0].rejected_commands > k
        probe.wait_for(bad_then_good, what=f'rejected command {bad}')
    assert all(list(m.effort) == good for m, _ in states[count:]), \
        {tuple(m.effort) for m, _ in states[count:]}
    assert 'rejected command' in processes.output(proc)
    # no command for 0.5 s: zero effort, said once
    said = len(processes.output(proc))
    count = len(states)
    probe.wait_for(effort_is([0.0, 0.0], count), timeout=10.0, what='zero effort after timeout')
    probe.wait_for(lambda: statuses[-1][0].command_timed_out, what='the timeout in the status')
    count = len(states)
    probe.wait_for(lambda: len(states) > count + 500, what='500 more joint states')
    assert all(list(m.effort) == [0.0, 0.0] for m, _ in states[count:])
    assert processes.output(proc)[said:].count('no valid command') == 1
    # commands return
    count = len(states)
    probe.wait_for(publishing(good, effort_is(good, count)), what='commands to apply again')
    assert 'commands arrive' in processes.output(proc)[said:]
    # reset: the initial state again
    t0 = _reset(probe, states)
    probe.wait_for(lambda: [m for m in _since(states, t0, t0) if list(m.position) == [0.4, 0.8]
                            and list(m.velocity) == [0.0, 0.0]], what='the initial state')


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


def test_a_stalled_simulator_says_so_and_catches_up(simulator, probe, processes):
    # how late each step is, on explicit times: test/core/test_simulator.py; here, that the node
    # counts, logs and catches up, on a host that may stall it more on its own
    states = probe.collect(JointState, '/joint_states')
    statuses = probe.collect(SimulatorStatus, '/simulator/status')
    proc = simulator('planar_2r')
    probe.wait_for(lambda: len(states) > 100 and statuses, what='joint states and a status')
    late_before = statuses[-1][0].late_steps
    os.kill(proc.pid, signal.SIGSTOP)     # what a loaded host does to a process, for 0.3 s
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGCONT)
    # the steps due in the stall run at once: simulated time comes back to wall time, 0.3 s
    # behind otherwise (on the 1 ms grid: test_real_time_stamps_are_the_steps_times)
    probe.wait_for(lambda: probe.node.get_clock().now().nanoseconds * 1e-9
                   - _stamp(states[-1][0]) < 0.05, what='simulated time back on wall time')
    # each of the 300 steps due in the stall but its last ran over one step (1 ms) late
    probe.wait_for(lambda: statuses[-1][0].late_steps - late_before >= 298,
                   what='the late steps counted')
    # logged (at most once in LOG_PERIOD: this stall, or one of the host's own before it)
    assert 'ms late: this process did not run' in processes.output(proc)


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
