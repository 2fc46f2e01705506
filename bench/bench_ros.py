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
ROS 2 benchmark: the IK service round trip and the simulator node, across processes over DDS.

The nodes run as processes started here from the declared node set
(``robot_dynamics.ros.tools.graph``: executables, ``config/<robot>.yaml``, remappings), on a
``ROS_DOMAIN_ID`` of their own (the lock files of ``test/ros/isolation.py``, shared with the
ROS tests), discovery on loopback, logs in a temporary folder; every process is stopped by its
process group at the end, also on error. The bench process is the client and the subscriber,
spinning one single-threaded executor in its own thread of control (spun until each call's
future completes, as an rclpy script does, with ``compat.spin_until_complete``: Jazzy's
``spin_until_future_complete`` costs more at each call).

Tables (``bench/run.py`` prints one per ``table``):

- ``ik service``: ``/compute_ik`` (model and kinematics nodes) on ``N_TARGETS`` random reachable
  poses (fk of joint positions uniform inside the limits), no seed in the request (the node then
  starts from the middle of the limits, as no ``/joint_states`` are published). Median and p99
  round trip over the calls of each of ``REPEATS`` passes; the row gives the median of the
  passes and their spread (min-max of the pass medians). The floor is the round trip of an
  empty ``std_srvs/Trigger`` service in another process (same runner and executor as the
  nodes); ``vs_trigger`` is the round trip over that floor. Where the time goes, measured in
  this process on the same targets (medians): ``callback_ms`` the node's whole
  ``solve_ik_callback`` (request checks, library, response), of which ``library_ms`` is
  ``model.ik`` (plus ``model.ik_all`` for the branches of a closed form, as the node calls it);
  ``messages_ms`` is rclpy's serialisation and deserialisation of request and response (Python
  message <-> CDR, both ends); ``other_ms`` = round trip - floor - callback - messages (executor
  and transport beyond the floor's).
- ``simulator, as fast as possible``: ``realtime:=false`` at 1 kHz RK4, publishing
  ``/joint_states`` (and ``/clock``) every step or at 100 Hz. The real-time factor is simulated
  over wall time between ``/simulator/status`` messages received over a window, the median of
  ``FAST_WINDOWS`` windows and their spread (min-max); ``step_us`` is the wall time per step it
  implies, ``plant_step_us`` the library's ``Plant.step`` alone (best of several timings here),
  ``node_us`` their difference (publishing, status, the stepping loop).
- ``simulator, real time``: 1 kHz paced on the monotonic clock for ``RT_SECONDS``; late steps
  (started more than one step late) over the window and the node's own p99 of step-start
  lateness (``/simulator/status``); ``/joint_states`` as received by this process: rate,
  inter-arrival p99 and max, and latency (receive time - header stamp, one machine clock).

- ``control loop, 1 kHz``: model, simulator (real time, 1 kHz) and controller (computed torque,
  a cycle per joint state) as three processes, as the demo runs them, following a slow sine
  through ``~/joint_trajectory`` for ``LOOP_SECONDS``. From the ``ControllerState`` messages
  (100 Hz, the default: every tenth cycle, while the cycle counters count all): ``rate_hz``
  cycles over the stamps' span, ``missed_pct`` the cycles the controller counted as missed (the
  simulator stamps each state with its step's time on the 1 kHz grid, so a gap in the stamps
  the controller took is a state it never answered: a newer one arrived first, after a late
  cycle of the controller or a late step of the simulator), ``late_pct`` the sampled cycles
  whose command left more than one period after the state's stamp, ``latency_ms``/
  ``latency_p99_ms`` from the joint state's stamp to its command (one machine clock; the
  simulator's own lateness included), and ``jitter_p99_ms`` the p99 of |latency - its median|:
  how far cycle starts stray from the 1 kHz grid. ``process_us``: the CPU time of the
  controller process per cycle (``/proc``) minus ``cycle_us``: its cycle thread waking up and
  taking the message, the executor (watchdog, goals), the DDS threads. Where a cycle's time
  goes, measured in this process on a
  ``ControllerNode`` fed the same messages: ``cycle_us`` its ``joint_state_callback``
  (reading the serialized JointState included; the median cycle, without the
  ControllerState),
  ``library_us`` the follower and the control law (numpy), ``messages_us`` the rest (rclpy
  messages in and out, publishing the command, Python around them). ``cpu_simulator_us``/
  ``cpu_controller_us``: each process's CPU time per 1 ms period.
- ``loop floor, 1 kHz``: the same exchange between two plain rclpy processes, a JointState out
  every 1 ms and a Float64MultiArray back (``ros_floor.py`` documents it and its variants), run
  in the same session just before the loop rows.
- ``control loop over the floor (executor)``: each loop row over the plain floor: ``missed``
  (missed cycles over the floor's unanswered states), ``latency``/``latency_p99`` (the same
  state-to-command latency, p50 and p99), ``cpu_simulator``/``cpu_controller`` (CPU per period
  over the floor's pinger and echo), and the targets: p99 <= ``P99_TARGET`` x and missed <=
  ``MISSED_TARGET`` x the floor's (``-``: the floor answered every state).
- ``soak``: the same loop for ``SOAK_SECONDS`` (10 minutes; 1 with ``--quick``), a new sine goal
  every ``LOOP_SECONDS``. Per minute: the control rate and the missed cycles; the resident
  memory of each process after the first minute and at the end (``rss_growth_mb``, bound
  ``RSS_BOUND_MB``), and the rate's drift (last minute - first).

The machine is shared: the figures move with its load. Run ``python bench/bench_ros.py`` for
the tables alone.
"""

import argparse
import os
from pathlib import Path
import shutil
import sys
import tempfile
import time

from bench_ik import random_targets
from common import best_us
from geometry_msgs.msg import PoseStamped
from isolation import environment, lock_domain, Processes   # test/ros, on the path (common)
import numpy as np
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.serialization import deserialize_message, serialize_message
from robot_dynamics import parameter_files, RobotModel
from robot_dynamics.ik import closed_form
from robot_dynamics.limits import middle
from robot_dynamics.plant import Plant
from robot_dynamics.ros.nodes.controller_node import ControllerNode
from robot_dynamics.ros.nodes.goals import JOINT, joint_goal
from robot_dynamics.ros.nodes.kinematics_node import KinematicsNode
from robot_dynamics.ros.nodes.runner import run_node
from robot_dynamics.ros.tools import graph
from robot_dynamics.ros.wire.compat import spin_until_complete
from robot_dynamics.ros.wire.conversions import duration_msg, matrix_to_pose, to_seconds
from robot_dynamics.ros.wire.qos import SERVICE_CLIENT
from robot_dynamics_interfaces.msg import ControllerState, SimulatorStatus
from robot_dynamics_interfaces.srv import SolveIK
from ros_floor import cpu_seconds, floor_row, VARIANTS as FLOOR_VARIANTS
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

IK_ROBOTS = ('planar_2r', 'scara', 'puma560', 'iiwa14')
SIM_ROBOTS = ('planar_2r', 'scara', 'puma560')
N_TARGETS = 1000
REPEATS = 3
#: As-fast-as-possible windows per run, and the wall time of each [s], after WARM_SECONDS.
FAST_WINDOWS = 5
FAST_SECONDS = 2.0
WARM_SECONDS = 1.0
RT_SECONDS = 20.0
LOOP_ROBOTS = ('planar_2r', 'scara', 'puma560')
LOOP_SECONDS = 10.0
SOAK_ROBOT = 'scara'
SOAK_SECONDS = 600.0
#: Targets of the loop over the floor (the plain rclpy echo): state-to-command p99, missed share.
P99_TARGET = 1.5
MISSED_TARGET = 2.0
#: Resident memory a process may gain between the soak's first minute and its end [MB].
RSS_BOUND_MB = 5.0
#: Longest wait for a node to come up (the first start of a new install compiles kernels) [s].
START_TIMEOUT = 180.0
CALL_TIMEOUT = 10.0
TRIGGER = '/bench/trigger'


class TriggerNode(Node):
    """An empty std_srvs/Trigger service: the floor of a service round trip."""

    def __init__(self):
        super().__init__('bench_trigger')
        self.create_service(Trigger, TRIGGER, lambda request, response: response)


class Session:
    """
    A domain of our own, the processes started on it, and this process's node and executor.

    Use as a context manager: leaving it (also on error) stops every process by its group,
    shuts the context down, releases the domain and removes the temporary folder.
    """

    def __enter__(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='robot_dynamics_bench_ros_'))
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        os.environ['ROS_LOG_DIR'] = str(self.tmp / 'log')
        self.domain, self._lock = lock_domain()
        self.processes = Processes(environment(self.domain, self.tmp / 'log'), self.tmp)
        self.context, self.node = Context(), None
        try:
            rclpy.init(context=self.context, domain_id=self.domain)
            self.node = Node('bench_ros', context=self.context)
            self.executor = SingleThreadedExecutor(context=self.context)
            self.executor.add_node(self.node)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        try:
            self.processes.stop_all()
        finally:
            if self.node is not None:
                self.node.destroy_node()
            rclpy.try_shutdown(context=self.context)
            self._lock.close()
            shutil.rmtree(self.tmp, ignore_errors=True)

    def start(self, robot, node_name, **overrides):
        """Start a node of the graph for ``robot`` with its parameter file and overrides."""
        spec = next(s for s in graph.NODES if s.name == node_name)
        args = graph.ros_arguments(spec, [parameter_files.parameter_file(robot)],
                                   [(k, v) for k, v in overrides.items()])
        return self.processes.start(f'{robot}_{node_name}', [spec.executable] + args)

    def stop(self, procs):
        """Stop ``procs``; raise with its output if one of them did not exit cleanly."""
        for proc in procs:
            status = self.processes.stop(proc)
            if status != 0:
                raise RuntimeError(f'{proc.name} exited with status {status}:\n'
                                   f'{self.processes.output(proc)[-3000:]}')

    def check_running(self, procs, what):
        """Raise with its output if one of ``procs`` exited (while doing ``what``)."""
        for proc in procs:
            if proc.poll() is not None:
                raise RuntimeError(f'{proc.name} exited ({proc.returncode}) during {what}:\n'
                                   f'{self.processes.output(proc)[-3000:]}')

    def spin_until(self, condition, timeout, what, procs=()):
        """Spin until ``condition()``; raise naming ``what`` (and any dead process) on timeout."""
        deadline = time.monotonic() + timeout
        while not condition():
            self.check_running(procs, f'the wait for {what}')
            if time.monotonic() > deadline:
                raise RuntimeError(f'timed out after {timeout:g} s waiting for {what}')
            self.executor.spin_once(timeout_sec=0.05)

    def spin_for(self, seconds, procs, what):
        """Spin (run callbacks) for ``seconds`` of wall time; ``procs`` must keep running."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0.0:
            self.executor.spin_once(timeout_sec=left)
        self.check_running(procs, what)

    def client(self, srv_type, name, procs):
        """Return a client of ``name`` once the service is there."""
        client = self.node.create_client(srv_type, name, qos_profile=SERVICE_CLIENT)
        self.spin_until(client.service_is_ready, START_TIMEOUT, f'service {name}', procs)
        return client

    def call(self, client, request):
        """Call a service; return ``(response, round trip [s])``."""
        t0 = time.perf_counter()
        future = client.call_async(request)
        spin_until_complete(self.executor, future, CALL_TIMEOUT)
        elapsed = time.perf_counter() - t0
        if not future.done():
            raise RuntimeError(f'no reply from {client.srv_name} within {CALL_TIMEOUT} s')
        return future.result(), elapsed


def _ms(times):
    return np.asarray(times) * 1e3


def _passes(times_per_pass):
    """Return the median over passes of the pass medians and p99s, and the medians' range."""
    medians = [np.median(t) for t in times_per_pass]
    p99s = [np.percentile(t, 99) for t in times_per_pass]
    return float(np.median(medians)), float(np.median(p99s)), (min(medians), max(medians))


def _spread(low_high, digits=3):
    return f'{low_high[0]:.{digits}g}-{low_high[1]:.{digits}g}'


def _median_time(fn, items):
    """Median wall time [s] of ``fn(item)`` over ``items``."""
    times = np.empty(len(items))
    for i, item in enumerate(items):
        t0 = time.perf_counter()
        fn(item)
        times[i] = time.perf_counter() - t0
    return float(np.median(times))


def _timed_calls(session, client, requests, repeats):
    """Round trips [s] of every request, ``repeats`` passes; and the share of successes."""
    passes, ok = [], []
    for _ in range(repeats):
        times = np.empty(len(requests))
        for i, request in enumerate(requests):
            response, times[i] = session.call(client, request)
            ok.append(bool(getattr(response, 'success', True)))
        passes.append(_ms(times))
    return passes, float(np.mean(ok))


def trigger_row(session, n_calls, repeats):
    """Round trip of an empty std_srvs/Trigger service in another process: the floor."""
    proc = session.processes.start('trigger', [sys.executable, str(Path(__file__).resolve()),
                                               '--trigger-server'])
    client = session.client(Trigger, TRIGGER, [proc])
    requests = [Trigger.Request()] * n_calls
    _timed_calls(session, client, requests[:50], 1)
    passes, _ = _timed_calls(session, client, requests, repeats)
    session.node.destroy_client(client)
    session.stop([proc])
    median, p99, spread = _passes(passes)
    return {'table': 'ik service', 'robot': '-', 'solver': 'std_srvs/Trigger (floor)',
            'calls': n_calls, 'success': None, 'median_ms': median, 'spread_ms': _spread(spread),
            'p99_ms': p99}


def ik_row(session, name, n_targets, repeats, floor_ms):
    """Round trip of /compute_ik for ``name`` and where its time goes."""
    model = RobotModel.load(name)
    _, targets = random_targets(model, n_targets, seed=0)
    requests = []
    for T in targets:
        request = SolveIK.Request()
        request.pose_stamped = PoseStamped(pose=matrix_to_pose(T))
        requests.append(request)
    procs = [session.start(name, 'model'), session.start(name, 'kinematics')]
    client = session.client(SolveIK, '/compute_ik', procs)
    _timed_calls(session, client, requests[:50], 1)
    passes, success = _timed_calls(session, client, requests, repeats)
    session.node.destroy_client(client)
    session.stop(procs)

    # the same work in this process: the node's callback (not spun: its services stay idle)
    local = KinematicsNode(context=session.context)
    try:
        local.on_model(model)
        callback = _median_time(lambda r: local.solve_ik_callback(r, SolveIK.Response()),
                                requests)
        responses = [local.solve_ik_callback(r, SolveIK.Response()) for r in requests[:100]]
    finally:
        local.destroy_node()
    branches = closed_form(model) is not None
    library = _median_time(
        lambda T: (model.ik(T), model.ik_all(T) if branches else None), targets)
    messages = _median_time(
        lambda pair: [deserialize_message(serialize_message(m), type(m)) for m in pair],
        list(zip(requests, responses)))
    median, p99, spread = _passes(passes)
    callback_ms, library_ms, messages_ms = callback * 1e3, library * 1e3, messages * 1e3
    return {'table': 'ik service', 'robot': name,
            'solver': 'closed form' if branches else 'numeric', 'calls': n_targets,
            'success': success, 'median_ms': median, 'spread_ms': _spread(spread),
            'p99_ms': p99, 'vs_trigger': median / floor_ms, 'callback_ms': callback_ms,
            'library_ms': library_ms, 'messages_ms': messages_ms,
            'other_ms': median - floor_ms - callback_ms - messages_ms}


def _status_stream(session):
    received = []
    subscription = session.node.create_subscription(
        SimulatorStatus, '/simulator/status',
        lambda msg: received.append((time.monotonic(), msg)), 100)
    return received, subscription


def _start_simulator(session, name, **overrides):
    # no controller here: the arm must move (fall) from the start, not wait braked
    procs = [session.start(name, 'model'),
             session.start(name, 'simulator', brake_until_command='false', **overrides)]
    status, subscription = _status_stream(session)
    session.spin_until(lambda: status, START_TIMEOUT, f'{name} simulator status', procs)
    return procs, status, subscription


def _plant_step_us(name, quick):
    model = RobotModel.load(name)
    model.warm_up()
    plant = Plant(model, 1e-3)
    zero = np.zeros(model.dof)
    return best_us(lambda: plant.step(zero), budget_s=0.5 if quick else 2.0)


def fast_rows(session, name, quick):
    """Real-time factor as fast as possible, publishing every step and at 100 Hz."""
    rows = []
    plant_us = _plant_step_us(name, quick)
    windows = 1 if quick else FAST_WINDOWS
    seconds = 1.0 if quick else FAST_SECONDS
    for publish in ('every step', '100 Hz'):
        rate = 0.0 if publish == 'every step' else 100.0
        procs, status, subscription = _start_simulator(session, name, realtime='false',
                                                       publish_rate_hz=rate)
        session.spin_for(WARM_SECONDS, procs, f'the warm-up of {name}')
        factors = []
        for _ in range(windows):
            first = len(status)
            session.spin_for(seconds, procs, f'the {name} run')
            if len(status) - first < 2:
                raise RuntimeError(f'{name}: {len(status) - first} status messages in '
                                   f'{seconds:g} s')
            (w0, s0), (w1, s1) = status[first - 1], status[-1]
            factors.append((s1.simulated_time - s0.simulated_time) / (w1 - w0))
        session.node.destroy_subscription(subscription)
        session.stop(procs)
        rtf = float(np.median(factors))
        step_us = 1e6 / (1000.0 * rtf)
        rows.append({'table': 'simulator, as fast as possible', 'robot': name,
                     'joint_states': publish, 'real_time_factor': rtf,
                     'spread': _spread((min(factors), max(factors))),
                     'step_us': step_us, 'plant_step_us': plant_us,
                     'node_us': step_us - plant_us})
    return rows


def realtime_row(session, name, seconds):
    """Late steps and lateness at 1 kHz real time; /joint_states as another process sees it."""
    procs, status, subscription = _start_simulator(session, name)
    arrivals = []

    def on_state(msg):
        arrivals.append((time.monotonic(), time.time_ns(), msg.header.stamp.sec * 1_000_000_000
                         + msg.header.stamp.nanosec))
    states = session.node.create_subscription(JointState, '/joint_states', on_state, 10)
    session.spin_for(WARM_SECONDS, procs, f'the warm-up of {name}')
    first_status, first_state = len(status), len(arrivals)
    session.spin_for(seconds, procs, f'the {name} run')
    if len(status) - first_status < 2 or len(arrivals) - first_state < 2:
        raise RuntimeError(f'{name}: {len(status) - first_status} status messages and '
                           f'{len(arrivals) - first_state} joint states in {seconds:g} s')
    session.node.destroy_subscription(states)
    session.node.destroy_subscription(subscription)
    session.stop(procs)
    s0, s1 = status[first_status - 1][1], status[-1][1]
    window = status[first_status:]
    got = np.array(arrivals[first_state:], dtype=float)
    gaps = np.diff(got[:, 0]) * 1e3
    latency = (got[:, 1] - got[:, 2]) * 1e-6
    p99s = [msg.step_lateness_p99 * 1e3 for _, msg in window]
    return {'table': 'simulator, real time', 'robot': name, 'seconds': seconds,
            'steps': s1.steps - s0.steps,
            'late_steps_pct': 100.0 * (s1.late_steps - s0.late_steps) / (s1.steps - s0.steps),
            'lateness_p99_ms': float(np.median(p99s)), 'lateness_p99_max_ms': float(max(p99s)),
            'received_hz': (len(got) - 1) / (got[-1, 0] - got[0, 0]),
            'gap_p99_ms': float(np.percentile(gaps, 99)), 'gap_max_ms': float(gaps.max()),
            'latency_ms': float(np.median(latency)),
            'latency_p99_ms': float(np.percentile(latency, 99))}


# ---- the control loop ---------------------------------------------------------------------------

def _sine_goal(model, q0, seconds, step=0.05):
    """Return a JointTrajectory q0 + a sin(2 pi t / seconds) per joint (slow), starting now."""
    amplitude = np.where(model.is_prismatic, 0.02, 0.2)
    t = np.arange(0.0, seconds + step / 2, step)
    w = 2.0 * np.pi / seconds
    msg = JointTrajectory(joint_names=list(model.joint_names))
    for tk in t:
        msg.points.append(JointTrajectoryPoint(
            positions=(q0 + amplitude * np.sin(w * tk)).tolist(),
            velocities=(amplitude * w * np.cos(w * tk)).tolist(),
            accelerations=(-amplitude * w * w * np.sin(w * tk)).tolist(),
            time_from_start=duration_msg(tk)))
    return msg


class LoopRun:
    """Model, simulator and controller processes for ``name``, and the ControllerStates seen."""

    def __init__(self, session, name):
        self.session, self.model = session, RobotModel.load(name)
        self.states = []
        self.procs = [session.start(name, 'model'), session.start(name, 'simulator'),
                      session.start(name, 'controller')]
        self.subscription = session.node.create_subscription(
            ControllerState, '/controller/state', self.states.append, 100)
        self.goals = session.node.create_publisher(JointTrajectory,
                                                   '/controller/joint_trajectory', 10)
        session.spin_until(lambda: self.states and self.states[-1].mode == 'hold',
                           START_TIMEOUT, f'the {name} controller holding', self.procs)
        self.q0 = np.array(self.states[-1].feedback.positions)

    def move(self, seconds):
        """Send a sine goal of ``seconds`` and spin through it; return its ControllerStates."""
        first = len(self.states)
        self.goals.publish(_sine_goal(self.model, self.q0, seconds))
        self.session.spin_for(seconds, self.procs, 'the motion')
        return self.states[first:]

    def close(self):
        self.session.node.destroy_subscription(self.subscription)
        self.session.node.destroy_publisher(self.goals)
        self.session.stop(self.procs)


def _loop_figures(states):
    """Rate, missed and late cycles, jitter and latency from a run's ControllerStates."""
    stamps = np.array([to_seconds(m.header.stamp) for m in states])
    latency = stamps - np.array([to_seconds(m.state_stamp) for m in states])
    missed = states[-1].missed_cycles - states[0].missed_cycles
    counted = states[-1].cycles - states[0].cycles
    jitter = np.abs(latency - np.median(latency))
    return {'rate_hz': counted / (stamps[-1] - stamps[0]), 'cycles': counted,
            'missed_pct': 100.0 * missed / (counted + missed),
            'late_pct': 100.0 * np.mean(latency > 1e-3),
            'jitter_p99_ms': float(np.percentile(jitter, 99)) * 1e3,
            'latency_ms': float(np.median(latency)) * 1e3,
            'latency_p99_ms': float(np.percentile(latency, 99)) * 1e3}


def _cycle_cost_us(session, name, n_states):
    """Median cost of one cycle in a ControllerNode here [us]: the whole callback, the library."""
    model = RobotModel.load(name)
    local = ControllerNode(context=session.context)
    try:
        local.on_model(model)
        start = time.time()
        q0 = middle(model.lower, model.upper)
        messages = []
        for k in range(2 * n_states + 1):
            msg = JointState(name=list(model.joint_names), position=q0.tolist(),
                             velocity=[0.0] * model.dof)
            t = start + k * 1e-3
            msg.header.stamp.sec, msg.header.stamp.nanosec = int(t), int(t % 1.0 * 1e9)
            messages.append(serialize_message(msg))     # the node takes them raw
        # as the node's state thread calls it (no publisher GID: one source)
        local.joint_state_callback(messages[0], {})
        # a trajectory on the topic (no action handle), as the goal process passes one on: the
        # node judges and takes it
        local._checked(JOINT, None, joint_goal(_sine_goal(model, q0, 10.0), model))
        cycle = _median_time(lambda data: local.joint_state_callback(data, {}),
                             messages[1:n_states + 1])
        controller = local.controller

        def library(k):
            controller.update(start + (n_states + 1 + k) * 1e-3, q0, np.zeros(model.dof))
        library_time = _median_time(library, range(n_states))
    finally:
        local.destroy_node()
    return cycle * 1e6, library_time * 1e6


def loop_row(session, name, seconds, quick):
    """Measure the 1 kHz loop across processes for ``name``, and where a cycle's time goes."""
    run = LoopRun(session, name)
    try:
        run.move(WARM_SECONDS)
        cpu = [cpu_seconds(p.pid) for p in run.procs]
        figures = _loop_figures(run.move(seconds))
        cpu = [cpu_seconds(p.pid) - c for p, c in zip(run.procs, cpu)]
    finally:
        run.close()
    cycle_us, library_us = _cycle_cost_us(session, name, 500 if quick else 3000)
    controller_us = cpu[2] / figures['cycles'] * 1e6
    return {'table': 'control loop, 1 kHz', 'robot': name, 'seconds': seconds, **figures,
            'cpu_simulator_pct': 100.0 * cpu[1] / seconds,
            'cpu_controller_pct': 100.0 * cpu[2] / seconds,
            'cpu_simulator_us': cpu[1] / seconds * 1e3,
            'cpu_controller_us': cpu[2] / seconds * 1e3,
            'cycle_us': cycle_us, 'library_us': library_us,
            'messages_us': cycle_us - library_us, 'process_us': controller_us - cycle_us}


def _ratio(value, floor):
    return value / floor if floor > 0.0 else None


def versus_floor(loop, floor):
    """Return a loop row's figures over the floor's (``ros_floor.figures``), with the targets."""
    unanswered = 100.0 - floor['answered_pct']
    p99, missed = (_ratio(loop['latency_p99_ms'], floor['latency_p99_ms']),
                   _ratio(loop['missed_pct'], unanswered))
    met = p99 is not None and p99 <= P99_TARGET and (
        loop['missed_pct'] == 0.0 or missed is not None and missed <= MISSED_TARGET)
    return {'table': f'control loop over the floor ({floor["echo"]})', 'robot': loop['robot'],
            'missed': missed,
            'latency': _ratio(loop['latency_ms'], floor['latency_ms']),
            'latency_p99': p99,
            'cpu_simulator': _ratio(loop['cpu_simulator_us'], floor['cpu_ping_us']),
            'cpu_controller': _ratio(loop['cpu_controller_us'], floor['cpu_echo_us']),
            'target': f'p99 <= {P99_TARGET:g}x, missed <= {MISSED_TARGET:g}x: '
                      + ('met' if met else 'MISSED')}


def _rss_mb(proc):
    """Resident memory of ``proc`` [MB] (Linux /proc)."""
    for line in Path(f'/proc/{proc.pid}/status').read_text().splitlines():
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024.0
    raise RuntimeError(f'no VmRSS for {proc.name}')


def soak_rows(session, name, seconds):
    """Run the loop for ``seconds``: per-minute rate and missed cycles, memory per process."""
    run = LoopRun(session, name)
    minutes, rss = [], []
    try:
        run.move(WARM_SECONDS)
        while len(minutes) * 60.0 < seconds:
            states = []
            for _ in range(int(60.0 / LOOP_SECONDS)):
                states += run.move(LOOP_SECONDS)
            minutes.append(_loop_figures(states))
            rss.append([_rss_mb(p) for p in run.procs])
    finally:
        run.close()
    rows = [{'table': 'soak', 'robot': name, 'minute': k + 1, **m}
            for k, m in enumerate(minutes)]
    growth = np.array(rss[-1]) - np.array(rss[0])
    rates = [m['rate_hz'] for m in minutes]
    rows.append({'table': 'soak summary', 'robot': name, 'minutes': len(minutes),
                 'rate_drift_hz': rates[-1] - rates[0],
                 'rate_min_hz': min(rates), 'rate_max_hz': max(rates),
                 'missed_pct': float(np.mean([m['missed_pct'] for m in minutes])),
                 **{f'rss_{p.name.split("_", 1)[1]}_mb': r for p, r in zip(run.procs, rss[-1])},
                 'rss_growth_mb': float(growth.max()), 'bound_mb': RSS_BOUND_MB,
                 'within_bound': bool(growth.max() <= RSS_BOUND_MB)})
    return rows


def run(quick=False):
    """Start the nodes, measure, stop them; return the rows of the tables."""
    n_targets = 200 if quick else N_TARGETS
    repeats = 1 if quick else REPEATS
    rows = []
    with Session() as session:
        floor = trigger_row(session, n_targets, repeats)
        rows.append(floor)
        for name in IK_ROBOTS:
            rows.append(ik_row(session, name, n_targets, repeats, floor['median_ms']))
        for name in SIM_ROBOTS:
            rows.extend(fast_rows(session, name, quick))
        for name in SIM_ROBOTS:
            rows.append(realtime_row(session, name, 3.0 if quick else RT_SECONDS))
        floors = [floor_row(session, variant, 3.0 if quick else LOOP_SECONDS, WARM_SECONDS)
                  for variant in FLOOR_VARIANTS]
        loops = [loop_row(session, name, 3.0 if quick else LOOP_SECONDS, quick)
                 for name in LOOP_ROBOTS]
        rows += floors + loops + [versus_floor(loop, floors[0]) for loop in loops]
        rows.extend(soak_rows(session, SOAK_ROBOT, 60.0 if quick else SOAK_SECONDS))
    return rows


def main(argv=None):
    """Command line: the tables, or (``--trigger-server``) the floor's service process."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='fewer calls and shorter windows')
    parser.add_argument('--trigger-server', action='store_true',
                        help='run the std_srvs/Trigger service (started by the bench itself)')
    args = parser.parse_args(argv)
    if args.trigger_server:
        return run_node(TriggerNode, 'bench_trigger')
    from run import main as run_main
    return run_main(['--only', 'ros'] + (['--quick'] if args.quick else []))


if __name__ == '__main__':
    sys.exit(main())
