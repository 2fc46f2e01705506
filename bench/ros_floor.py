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
The floor of the 1 kHz loop: what two plain rclpy processes reach on this machine.

Two processes in the places of the simulator and the controller, with nothing of
robot_dynamics in their messages' path. The *pinger* publishes a ``sensor_msgs/JointState``
(the joints of ``ROBOT``: names, positions, velocities, efforts) every 1 ms from a thread paced
on the monotonic clock as the simulator's steps are (step k at ``t0 + k dt``, stamped with that
time on the system clock), while its main thread spins an executor. The *echo* answers each state
with a ``std_msgs/Float64MultiArray`` holding the state's stamp and the time it answered. The
topics have the loop's QoS: states reliable depth 10 out, newest only (best effort, depth 1)
in, as the controller takes them; answers reliable. Both processes hand the GIL over and
freeze their heap as the nodes do (``robot_dynamics.ros.nodes.runner``).

Variants of the echo (``VARIANTS``), each changing one thing:

- ``executor``: a subscription callback run by rclpy's ``SingleThreadedExecutor``: the floor;
- ``wait set``: a thread sleeping in a wait set that holds the subscription alone
  (``robot_dynamics.ros.wire.on_demand.SubscriptionThread``, as the controller's cycle does),
  messages converted to and from Python objects by rclpy;
- ``wait set, raw``: the same taking and publishing serialized messages (``raw=True``, bytes to
  ``publish``): the stamp read with ``struct`` from the CDR, the answer packed behind a fixed
  prefix, so no message object is made;
- ``wait set, raw, computed torque``: not a floor but a prototype of the controller's cycle on
  it: the JointState read by name with ``ros.cdr.JointStateReader``, computed torque holding
  the first position (``tau = ID(q, qd, kp (q0 - q) - kd qd)`` by
  ``PreparedModel.inverse_dynamics``), the answer (stamp, time, then the torques) written by
  ``ros.cdr.write_float64_array``; no trajectory follower and no ControllerState.

The pinger receives the answers raw in a wait-set thread of its own (cheap, the same in every
variant) and writes what it saw to a file when done. Figures over the window (``floor_row``):

- ``answered_pct``: states with an answer; ``on_time_pct``: states answered within one period
  of their stamp;
- ``latency_ms``/``latency_p99_ms``: from the state's stamp (its step's time on the grid, as the
  simulator stamps) to the echo's answer, on the system clock: the loop's state-to-command
  latency (``bench_ros._loop_figures``), the pinger's own lateness included;
- ``round_trip_ms``/``round_trip_p99_ms``: from publishing the state to receiving its answer,
  on the pinger's monotonic clock;
- ``cpu_ping_us``/``cpu_echo_us``: each process's CPU time (user + system, all its threads)
  per 1 ms period; ``cpu_*_pct`` the same as a share of one core.

Run by ``bench_ros.run`` in the same session as the loop rows; ``python bench/ros_floor.py
--ping FILE ...`` / ``--echo VARIANT`` are the two processes (started by the bench itself).
"""

import argparse
import os
from pathlib import Path
import struct
import sys
import threading
import time

import numpy as np
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from robot_dynamics import RobotModel
from robot_dynamics.ros.nodes.runner import freeze_heap, share_the_gil
from robot_dynamics.ros.wire.cdr import JointStateReader, write_float64_array
from robot_dynamics.ros.wire.on_demand import OnDemand, SubscriptionThread
from robot_dynamics.ros.wire.qos import NEWEST_ONLY
from robot_dynamics.stamps import NS_PER_S
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

VARIANTS = ('executor', 'wait set', 'wait set, raw', 'wait set, raw, computed torque')
#: The arm whose joints the states carry (the largest of the loop rows) and the prototype drives.
ROBOT = 'puma560'
#: Gains of the prototype's computed torque [1/s^2, 1/s].
KP, KD = 100.0, 20.0
PERIOD = 1e-3
STATES = '/floor/joint_states'
ANSWERS = '/floor/answers'
#: Answers are kept until the pinger takes them: none may be lost to a full queue.
ALL_ANSWERS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                         reliability=ReliabilityPolicy.RELIABLE)
#: CDR of a Float64MultiArray with an empty layout and three values, up to the values:
#: encapsulation (little endian), no dimensions, data_offset 0, three values, padding to 8.
ANSWER_PREFIX = bytes((0, 1, 0, 0)) + struct.pack('<III4x', 0, 0, 3)
#: Longest wait for the echo to be matched, and for the pinger's run beyond its length [s].
MATCH_TIMEOUT = 60.0


def cpu_seconds(pid):
    """CPU time (user + system, every thread) process ``pid`` has used so far [s] (/proc)."""
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


# ---- the echo -----------------------------------------------------------------------------------

class Echo(Node):
    """Answer each JointState with its stamp and the time of the answer (see VARIANTS)."""

    def __init__(self, variant):
        super().__init__('floor_echo')
        raw = variant.startswith('wait set, raw')
        self.publisher = self.create_publisher(Float64MultiArray, ANSWERS, 10)
        self.thread = None
        if variant == 'executor':
            self.create_subscription(JointState, STATES, self.state_callback, NEWEST_ONLY)
            return
        callback = self.raw_callback if raw else self.state_callback
        if variant == 'wait set, raw, computed torque':
            model = RobotModel.load(ROBOT)
            self.reader, self.prepared = JointStateReader(model), model.prepare()
            self.answer = np.zeros(3 + model.dof)       # stamp, time, torques
            self.torques = self.answer[3:]
            self.hold = None
            callback = self.control_callback
            zero = [0.0] * model.dof     # the first cycle compiles or loads no kernel
            write_float64_array(self.reader.state(serialize_message(JointState(
                name=list(model.joint_names), position=zero, velocity=zero)))[1])
        subscription = self.create_subscription(JointState, STATES, lambda msg: None,
                                                NEWEST_ONLY, callback_group=OnDemand(),
                                                raw=raw)
        self.thread = SubscriptionThread(self, subscription, callback, threading.Lock(),
                                         'floor_echo')

    def state_callback(self, msg):
        stamp = msg.header.stamp
        self.publisher.publish(Float64MultiArray(
            data=[float(stamp.sec), float(stamp.nanosec), time.time()]))

    def raw_callback(self, data):
        # the stamp opens the CDR, right after the encapsulation: int32 sec, uint32 nanosec
        sec, nanosec = struct.unpack_from('<iI', data, 4)
        self.publisher.publish(ANSWER_PREFIX + struct.pack('<3d', sec, nanosec, time.time()))

    def control_callback(self, data):
        stamp, q, qd = self.reader.state(data)
        if self.hold is None:
            self.hold = q.copy()
        self.prepared.inverse_dynamics(q, qd, KP * (self.hold - q) - KD * qd, self.torques)
        self.answer[:3] = divmod(stamp, NS_PER_S) + (time.time(),)
        self.publisher.publish(write_float64_array(self.answer))


def run_echo(variant):
    """Process: spin an :class:`Echo` until SIGINT."""
    share_the_gil()
    rclpy.init()
    node = Echo(variant)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    freeze_heap()
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node.thread is not None:
            node.thread.stop()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


# ---- the pinger ---------------------------------------------------------------------------------

class Pinger(Node):
    """Publish a JointState every PERIOD on the monotonic clock; record the answers raw."""

    def __init__(self, echo_pid):
        super().__init__('floor_ping')
        self.echo_pid = echo_pid
        self.publisher = self.create_publisher(JointState, STATES, 10)
        self.answers = []            # (monotonic receipt time, CDR of the answer)
        self.subscription = self.create_subscription(
            Float64MultiArray, ANSWERS, lambda msg: None, ALL_ANSWERS,
            callback_group=OnDemand(), raw=True)
        self.thread = SubscriptionThread(
            self, self.subscription, lambda data: self.answers.append((time.monotonic(), data)),
            threading.Lock(), 'floor_answers')
        names = RobotModel.load(ROBOT).joint_names
        self.msg = JointState(name=list(names))
        self.values = np.linspace(-1.0, 1.0, len(names))

    def matched(self):
        """Return True once the echo subscribes to the states and publishes answers."""
        return (self.publisher.get_subscription_count() > 0
                and self.subscription.get_publisher_count() > 0)

    def cpu(self):
        """Return the CPU times [s] of this process and of the echo so far."""
        return np.array([time.process_time(), cpu_seconds(self.echo_pid)])

    def publish_states(self, steps, window):
        """
        Publish ``steps`` states, step k at ``t0 + k PERIOD``, as the simulator's steps.

        Returns the system time of step 0 [ns], the monotonic time each state was published,
        and the CPU times of both processes over the steps from ``window`` on, with the wall
        time they took [s].
        """
        msg = self.msg
        published = np.full(steps, np.nan)
        start, start_ns = time.monotonic(), time.time_ns()
        for k in range(steps):
            if k == window:
                cpu, wall = self.cpu(), time.monotonic()
            due = start + k * PERIOD
            now = time.monotonic()
            if now < due:
                time.sleep(due - now)
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(start_ns + k * 1_000_000,
                                                                    NS_PER_S)
            # refilled every step, as the simulator refills its message
            msg.position = (self.values + 1e-6 * k).tolist()
            msg.velocity = self.values.tolist()
            msg.effort = self.values.tolist()
            published[k] = time.monotonic()
            self.publisher.publish(msg)
        return start_ns, published, self.cpu() - cpu, time.monotonic() - wall


def run_ping(out, echo_pid, seconds, warm):
    """Process: publish for ``warm + seconds``, then save states, answers and CPU to ``out``."""
    share_the_gil()
    rclpy.init()
    node = Pinger(echo_pid)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        deadline = time.monotonic() + MATCH_TIMEOUT
        while not node.matched():
            if time.monotonic() > deadline:
                raise RuntimeError(f'no echo on {STATES} / {ANSWERS} within {MATCH_TIMEOUT} s')
            executor.spin_once(timeout_sec=0.05)
        freeze_heap()
        window = round(warm / PERIOD)
        result = []
        thread = threading.Thread(
            target=lambda: result.append(node.publish_states(window + round(seconds / PERIOD),
                                                             window)),
            name='floor_states')
        thread.start()
        while thread.is_alive():
            executor.spin_once(timeout_sec=0.05)
        end = time.monotonic() + 0.1          # the last answers
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        node.thread.stop()
        start_ns, published, cpu, wall = result[0]
        # per answer: stamp sec, stamp nanosec, echo's answer time [s], receipt time [s]
        answers = np.array([struct.unpack_from('<3d', data, len(ANSWER_PREFIX)) + (t,)
                            for t, data in node.answers]).reshape(-1, 4)
        np.savez(out, published=published, answers=answers, start_ns=start_ns, window=window,
                 cpu=cpu, wall=wall)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


# ---- the bench's side ---------------------------------------------------------------------------

def floor_row(session, variant, seconds, warm):
    """Run the echo ``variant`` and the pinger as processes of ``session``; return the row."""
    script = str(Path(__file__).resolve())
    echo = session.processes.start('floor_echo', [sys.executable, script, '--echo', variant])
    out = session.tmp / 'floor.npz'
    ping = session.processes.start('floor_ping', [
        sys.executable, script, '--ping', str(out), '--echo-pid', str(echo.pid),
        '--seconds', str(seconds), '--warm', str(warm)])
    try:
        status = ping.wait(MATCH_TIMEOUT + warm + seconds + 30.0)
    finally:
        session.stop([echo])
    if status != 0:
        raise RuntimeError(f'the floor pinger exited with status {status}:\n'
                           f'{session.processes.output(ping)[-3000:]}')
    with np.load(out) as saved:
        row = figures(**saved)
    return {'table': 'loop floor, 1 kHz', 'echo': variant, 'seconds': seconds, **row}


def figures(published, answers, start_ns, window, cpu, wall):
    """Answered and on-time shares, latencies and CPU per period from a pinger's file."""
    states = len(published) - int(window)
    stamp_ns = answers[:, 0].astype(np.int64) * NS_PER_S + answers[:, 1].astype(np.int64)
    k = (stamp_ns - int(start_ns)) // 1_000_000
    keep = k >= int(window)
    k, answer_time, receipt = k[keep], answers[keep, 2], answers[keep, 3]
    if len(np.unique(k)) != len(k):
        raise RuntimeError('the floor echo answered a state twice')
    # on the grid of step 0 (float seconds near 1.7e9 keep ~0.2 us)
    latency = (answer_time - int(start_ns) * 1e-9) - k * PERIOD
    round_trip = receipt - published[k]
    cpu_us = np.asarray(cpu) / states * 1e6
    return {'states': states, 'answered_pct': 100.0 * len(k) / states,
            'on_time_pct': 100.0 * np.count_nonzero(latency <= PERIOD) / states,
            'latency_ms': float(np.median(latency)) * 1e3,
            'latency_p99_ms': float(np.percentile(latency, 99)) * 1e3,
            'round_trip_ms': float(np.median(round_trip)) * 1e3,
            'round_trip_p99_ms': float(np.percentile(round_trip, 99)) * 1e3,
            'cpu_ping_us': float(cpu_us[0]), 'cpu_echo_us': float(cpu_us[1]),
            'cpu_ping_pct': 100.0 * float(cpu[0]) / float(wall),
            'cpu_echo_pct': 100.0 * float(cpu[1]) / float(wall)}


def main(argv=None):
    """Command line: one of the floor's two processes (started by the bench)."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--echo', choices=VARIANTS, help='run the echo')
    parser.add_argument('--ping', metavar='FILE', help='run the pinger; results to FILE (.npz)')
    parser.add_argument('--echo-pid', type=int, help="the echo's process id (its CPU time)")
    parser.add_argument('--seconds', type=float, default=10.0, help='measured window [s]')
    parser.add_argument('--warm', type=float, default=1.0, help='warm-up before it [s]')
    args = parser.parse_args(argv)
    if args.echo:
        return run_echo(args.echo)
    if args.ping and args.echo_pid:
        return run_ping(args.ping, args.echo_pid, args.seconds, args.warm)
    parser.error('give --echo VARIANT, or --ping FILE --echo-pid PID')


if __name__ == '__main__':
    sys.exit(main())
