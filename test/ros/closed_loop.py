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


"""Test helpers: a closed loop of model, simulator and controller processes, and goals."""

from contextlib import contextmanager
import os
import signal
import subprocess
import time

from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
import numpy as np
import pytest
from robot_dynamics import parameter_files, RobotModel
from robot_dynamics.controller import DEFAULT_WALL_STATE_TIMEOUT
from robot_dynamics.ros.tools import graph
from robot_dynamics.ros.wire.compat import ActionClient
from robot_dynamics.ros.wire.conversions import duration_msg, to_seconds
from robot_dynamics.trajectory import point_to_point
from robot_dynamics_interfaces.msg import ControllerState, SimulatorStatus
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

SUCCEEDED, CANCELED, ABORTED = 4, 5, 6     # action_msgs/GoalStatus
#: ControllerState rate of the tests' controllers [Hz] (of the 1 kHz cycles).
STATE_RATE_HZ = 250
#: Largest joint speed [rad/s or m/s] of an arm at rest.
REST_VELOCITY = 1e-3
#: The simulator's parameters for lockstep paced to the wall clock (the demo's clock): a test's
#: set-up then takes about as much simulated time as wall time, and the probe keeps up.
PACED = ('realtime:=true',)
#: Longest wall time [s] for a goal's result while its joint states keep coming (a goal that
#: never ends, on a loop that runs, still fails).
RESULT_BOUND = 600.0
#: While a request travels (Loop.hold_while), the simulator is stopped for HOLD [s of wall
#: time] at a time, well within the controller's wall_state_timeout (which a longer stop
#: trips), and runs PULSE [s] in between: simulated time nearly stands still however long the
#: transit (3-5 s in runs beside another suite), and the controller keeps receiving states.
HOLD, PULSE = DEFAULT_WALL_STATE_TIMEOUT / 4, 0.002


class Loop:
    """
    Model, simulator and controller processes, and the probe's view of them.

    ``lockstep`` (default) runs them as ``bringup --lockstep`` does: deterministic, on
    simulated time, at the shipped defaults; ``lockstep=False`` in real time, as on an arm.
    """

    def __init__(self, processes, probe, robot, controller=(), simulator=(), lockstep=True):
        self.processes, self.probe = processes, probe
        self.model = RobotModel.load(robot)
        self.robot = robot
        self.lockstep = lockstep
        self.states = probe.collect(JointState, '/joint_states')
        self.controller_states = probe.collect(ControllerState, '/controller/state')
        self.statuses = probe.collect(SimulatorStatus, '/simulator/status')
        self.names = {}                 # process -> its node's name
        self.killed = set()             # the killed nodes' endpoints
        self.procs = [processes.start('model', ['model_node', '--ros-args', '-r',
                                                '__node:=model', '-p', f'robot:={robot}'])]
        # the parameters bringup gives: its clock rule, then the test's own
        self.files = [parameter_files.parameter_file(robot)]
        given = graph.overrides('sim', {'lockstep': 'true' if lockstep else 'false'})
        given.setdefault('controller', []).append(('state_publish_rate_hz',
                                                   f'{STATE_RATE_HZ:.1f}'))
        clock = graph.complete_overrides('sim', self.files, given)
        self.simulator_args = [f'{n}:={v}' for n, v in clock.get('simulator', ())] \
            + list(simulator)
        self.controller_args = [f'{n}:={v}' for n, v in clock['controller']] + list(controller)
        self.start_simulator()
        self.start_controller()
        self.action = ActionClient(probe.node, FollowJointTrajectory,
                                   '/controller/follow_joint_trajectory')
        probe.wait_for(lambda: self.action.server_is_ready(), what='the action server')
        probe.wait_for(lambda: self.mode() == 'hold', what='the controller holding')
        # the loop is closed once the simulator applies the commands (a loaded host can take a
        # while to match their reader; until then the arm is braked, whatever the controller says)
        probe.wait_for(lambda: self.statuses and not self.statuses[-1][0].command_timed_out,
                       what="the simulator applying the controller's commands")
        # a controller stalled on a loaded machine after its first command holds the arm where it
        # finds it (the simulator's brakes or its own safe mode in between): a test's motion
        # starts from rest
        probe.wait_for(lambda: at_rest(self.states), what='the held arm at rest')

    def _start(self, executable, name, parameters):
        args = [executable, '--ros-args', '-r', f'__node:={name}',
                '--params-file', str(self.files[0])]
        for p in parameters:
            # node-scoped, as bringup writes them: a plain -p loses to the file's node section
            args += ['-p', f'{name}:{p}']
        proc = self.processes.start(name, args)
        self.procs.append(proc)
        self.names[proc] = name
        return proc

    def start_simulator(self):
        """Start (or restart) the simulator process."""
        self.simulator = self._start('simulator_node', 'simulator', self.simulator_args)

    def start_controller(self):
        """Start (or restart) the controller process."""
        self.controller = self._start('controller_node', 'controller', self.controller_args)

    def kill(self, proc):
        """SIGKILL ``proc`` (a crash): it is gone without a word."""
        self.killed |= self._endpoints(self.names.pop(proc))
        self.processes.stop(proc, signal.SIGKILL)
        self.procs.remove(proc)

    def _endpoints(self, name=None):
        """Return the ids of the publishers and subscriptions the probe knows of (``name``'s)."""
        node = self.probe.node
        return {bytes(e.endpoint_gid) for topic, _ in node.get_topic_names_and_types()
                for info in (node.get_publishers_info_by_topic,
                             node.get_subscriptions_info_by_topic)
                for e in info(topic) if name in (None, e.node_name)}

    @contextmanager
    def stopped(self, *procs):
        """Stop ``procs`` meanwhile (SIGSTOP in turn, SIGCONT in reverse), as a host stalls."""
        stopped = []
        try:
            for proc in procs:
                os.kill(proc.pid, signal.SIGSTOP)
                stopped.append(proc)
            yield
        finally:
            for proc in reversed(stopped):
                os.kill(proc.pid, signal.SIGCONT)

    def stall(self, seconds):
        """Stop the simulator and the controller for ``seconds`` of wall time, as a host stalls."""
        # one after the other, so that between the two the controller is the one that runs: it
        # waits for states (and only after wall_state_timeout of that is it a fault), where a
        # simulator running alone would wait for its answer (lockstep_timeout)
        with self.stopped(self.simulator, self.controller):
            time.sleep(seconds)

    @contextmanager
    def time_held(self):
        """
        Hold simulated time meanwhile: the simulator is stopped, but for PULSE after each HOLD.

        So that requests reach the controller at a known simulated time however busy the host,
        and the controller, which runs, keeps receiving states. A process of its own stops and
        continues the simulator: this one can run late on a busy host (a hold kept from here
        once lasted over 2 s, and the controller went to safe mode).
        """
        pid = self.simulator.pid
        with self.stopped(self.simulator):
            pulses = subprocess.Popen(['sh', '-c', f'while :; do sleep {HOLD}; kill -s CONT '
                                                   f'{pid}; sleep {PULSE}; kill -s STOP {pid}; '
                                                   'done'])
            try:
                yield
            finally:
                pulses.kill()       # before the simulator is continued (stopped), for good
                pulses.wait()

    def hold_while(self, send, before=None):
        """
        Return the future that ``send()`` returns (a goal's or a cancel's response), done.

        Simulated time is held meanwhile (:meth:`time_held`). ``before`` [s]: a simulated time
        that the clock must not have reached when the request is sent.
        """
        with self.time_held():
            if before is not None:
                assert self.now() < before, \
                    f'simulated time was at {self.now():.3f} s, past {before} s'
            future = send()
            self.probe.wait_for(future.done, what='the response, simulated time held')
        return future

    def held(self, send, before=None):
        """Return the handle of the goal that ``send()`` sends, :meth:`hold_while` it travels."""
        return self.accepted(self.hold_while(send, before))

    def send_before(self, start, trajectory, **kwargs):
        """:meth:`send` ``trajectory`` :meth:`held`, before simulated time reaches ``start``."""
        return self.held(lambda: self.action.send_goal_async(goal(trajectory, **kwargs)),
                         before=start)

    def mode(self):
        return self.controller_states[-1][0].mode if self.controller_states else None

    def safe_mode(self, words):
        """Wait for the controller's first safe-mode state and its log line; return the state."""
        safe = self.probe.wait_for(lambda: [m for m, _ in self.controller_states
                                            if m.mode == 'safe'], what='the safe mode')[0]
        self.probe.wait_for(lambda: words in self.processes.output(self.controller),
                            what=f'{words!r} in the log')
        return safe

    def holding(self):
        """Return whether the controller holds a reference at rest (no goal, no stop ramp left)."""
        return self.mode() == 'hold' and not any(
            self.controller_states[-1][0].reference.velocities)

    def held_at_rest(self):
        """Return whether the controller holds (no goal) and the newest state is at rest."""
        return self.mode() == 'hold' and at_rest(self.states)

    def position(self):
        return np.array(self.states[-1][0].position)

    def now(self):
        """Return the newest joint state's time [s]: the clock the controller runs on."""
        return to_seconds(self.states[-1][0].header.stamp)

    def send(self, trajectory, **kwargs):
        """Send ``trajectory`` (:func:`goal`'s keywords); return the accepted goal's handle."""
        return self.accepted(self.action.send_goal_async(goal(trajectory, **kwargs)))

    def accepted(self, future):
        """Wait for the goal response ``future``; return the handle of the accepted goal."""
        handle = self.probe.wait_for(lambda: future.done() and future.result(),
                                     what='the goal response')
        assert handle.accepted
        return handle

    def result(self, handle, timeout=60.0):
        """
        Return the goal's result once it comes.

        Fails after ``timeout`` [s] of wall time in which no joint state came: the goal's own
        time is simulated, and a loaded host slows it down (a 30 s goal may take minutes of
        wall time beside another suite) without anything being wrong.
        """
        future = handle.get_result_async()
        newest = [len(self.states), time.monotonic()]

        def done():
            if future.done():
                return True
            if len(self.states) != newest[0]:
                newest[:] = [len(self.states), time.monotonic()]
            elif time.monotonic() - newest[1] > timeout:
                pytest.fail(f'no joint state for {timeout:g} s and no result of the goal')
            return False

        self.probe.wait_for(done, RESULT_BOUND, 'the goal result')
        return future.result()

    def caught_up(self, t):
        """
        Wait until the probe holds the joint states and the controller states up to ``t`` [s].

        The probe takes its messages on one thread, behind a lockstep loop that runs as fast as
        it can: a goal's result (from another process, the goal process) can reach it before
        the states of the motion it ends (none of a 2 s motion's 500 states, beside a suite).
        """
        self.probe.wait_for(lambda: self.now() >= t and to_seconds(
            self.controller_states[-1][0].header.stamp) >= t, what=f'the states up to {t:.3f} s')

    def stop(self):
        # a participant that drops a silent peer (its lease, 5 s) while it destroys a writer of
        # its own can deadlock in Fast DDS (eProsima/Fast-DDS#6502): the probe's teardown after
        # a kill hung a suite so; the killed nodes are dropped first
        self.probe.wait_for(lambda: not self.killed & self._endpoints(),
                            what='the middleware dropping the killed nodes')
        for proc in reversed(self.procs):
            assert self.processes.stop(proc) == 0, self.processes.output(proc)


def goal(trajectory, path_tolerance=(), goal_tolerance=(), goal_time=0.0):
    """Return the FollowJointTrajectory goal of ``trajectory``."""
    return FollowJointTrajectory.Goal(trajectory=trajectory, path_tolerance=list(path_tolerance),
                                      goal_tolerance=list(goal_tolerance),
                                      goal_time_tolerance=duration_msg(goal_time))


def at_rest(states):
    """Return whether the newest of the collected joint ``states`` is of an arm at rest."""
    return bool(states) and np.abs(states[-1][0].velocity).max() < REST_VELOCITY


def quintic(model, q0, q1, duration, points=21, names=None):
    """Return a JointTrajectory sampling the rest-to-rest quintic from q0 to q1."""
    path = point_to_point(q0, q1, duration, 'quintic')
    times = np.linspace(0.0, duration, points)
    sample = path.sample(times)
    msg = JointTrajectory(joint_names=list(names or model.joint_names))
    order = [list(model.joint_names).index(j) for j in msg.joint_names]
    msg.points = [JointTrajectoryPoint(positions=sample.q[k, order].tolist(),
                                       velocities=sample.qd[k, order].tolist(),
                                       accelerations=sample.qdd[k, order].tolist(),
                                       time_from_start=duration_msg(t))
                  for k, t in enumerate(times)]
    return msg, path


def tolerances(model, value):
    return [JointTolerance(name=j, position=value) for j in model.joint_names]
