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
The graph's loop in one process, on a clock the test owns: no middleware, no wall time.

A :class:`TestClock` is the monotonic clock [s] of every part. Only waits move it: the pace of
real time (the simulator's sleep until its next step), lockstep's wait for an answer that does
not come, and the test (:meth:`TestClock.stall`: the host did not run the process meanwhile).
So a test reads the same numbers on a quiet machine and beside another suite.

:class:`SimulatorGraph` runs the simulator node's loop, the library's
:class:`~robot_dynamics.simulator.Stepping`, with an in-memory bus as its port: the commands
the test sends (with their source, as a publisher's GID names it, and when they were sent), a
controller that answers each state (``answer``), the joint states, statuses and events the
loop publishes, a reset as the node's ``~/reset`` asks for one. Joint arrays are in model order.

:class:`LoopGraph` closes the loop with the controller node's core: the
:class:`~robot_dynamics.controller.Controller` of the graph's parameter files in the node's loop
(:class:`~robot_dynamics.controller.Cycling`: each state answered, the watchdog looking on the
same clock, the publication grids), and either node killed or started again.

:func:`library_states` runs the library's closed loop (``robot-dynamics simulate``'s) as the
same parameter files configure it: what the graph's joint states are compared with.
"""

from typing import NamedTuple

import numpy as np
from robot_dynamics import parameter_files, RobotModel
from robot_dynamics.closed_loop import closed_loop, goal_from_points, graph_loop
from robot_dynamics.controller import configured_cycling, Mode
from robot_dynamics.errors import InputError
from robot_dynamics.model import chain_options
from robot_dynamics.simulator import configured_plant, configured_simulator, Stepping
from robot_dynamics.stamps import NS_PER_S, ns_to_s, s_to_ns
from robot_dynamics.task_space import configured_task_law, mask_axes, tip_state

#: The system clock [ns] when the test's clock reads 0 (the stamps of real time start there).
EPOCH_NS = 1_800_000_000 * NS_PER_S
#: The shortest wait for a command [s].
WAIT_FLOOR = 1e-6
#: Largest joint speed [rad/s or m/s] of an arm at rest.
REST_VELOCITY = 1e-3


class TestClock:
    """A monotonic clock [s] that moves only when a part waits or the test says so."""

    __test__ = False        # a helper, not a test class

    def __init__(self, start=0.0):
        self.now = float(start)

    def __call__(self):
        return self.now

    def system_ns(self):
        """Return the system clock's reading [ns] now."""
        return EPOCH_NS + s_to_ns(self.now)

    def advance(self, seconds):
        """Let ``seconds`` pass, as a part that waits."""
        self.now += seconds

    stall = advance     # the host does not run the process for so long: time passes all the same


class State(NamedTuple):
    """A published joint state: its stamp [ns] and the arm's q, qd, effort (model order)."""

    stamp_ns: int
    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray

    @property
    def t(self):
        """Return the stamp [s]."""
        return ns_to_s(self.stamp_ns)


def state_arrays(states):
    """Return the ``(t, q, qd, effort)`` arrays of the joint ``states``, a row each."""
    return (np.array([s.t for s in states]),
            *(np.array([getattr(s, field) for s in states]) for field in ('q', 'qd', 'effort')))


def library_states(robot, model, goals, start, end):
    """
    Run the library's loop as the graph is configured; return its record and states.

    ``goals``: ``(submitted, points, start_time, tag)`` each, the
    :class:`~robot_dynamics.trajectory.TrajectoryPoints` handed over once simulated time
    reaches ``submitted`` [s]. The states are :func:`state_arrays`' from ``start`` to ``end``.
    """
    files = [parameter_files.parameter_file(robot)]
    simulator, controller, tolerances = graph_loop(
        model, parameter_files.file_values(files, 'simulator'),
        parameter_files.file_values(files, 'controller'))
    record = closed_loop(simulator, controller, end + 0.002, goals=[
        (submitted, goal_from_points(model, points, tolerances, begin, tag))
        for submitted, points, begin, tag in goals])
    keep = (record.t >= start) & (record.t <= end + 1e-9)
    return record, (record.t[keep], record.q[keep], record.qd[keep], record.effort[keep])


def assert_same_states(graph, library, samples):
    """Assert that the :func:`state_arrays` of two runs, ``samples`` each, agree to 1e-9."""
    assert len(graph[0]) == len(library[0]) == samples
    np.testing.assert_allclose(graph[0], library[0], rtol=0, atol=1e-12)
    for ours, theirs, what in zip(library[1:], graph[1:],
                                  ('positions', 'velocities', 'efforts')):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9, err_msg=what)


class SimulatorGraph:
    """
    The simulator's loop over an in-memory bus, on a :class:`TestClock` (see the module).

    ``parameters`` are the simulator node's (``realtime=False``, ``initial_positions=[...]``,
    in model order), the node's defaults where not given. ``answer(state)``, when set, is a
    controller: it returns the command (model order) that answers each published state, or None
    (no answer: a controller that did not run). ``clock``: a :class:`TestClock` to share.
    """

    def __init__(self, robot, answer=None, clock=None, **parameters):
        self.model = RobotModel.load(robot)
        self.clock = clock or TestClock()
        q0, qd0 = (parameters.pop(name, None) for name in ('initial_positions',
                                                           'initial_velocities'))
        self.sim = configured_simulator(
            configured_plant(self.model, parameters.get, chain_options(parameters.get)),
            parameters.get,
            q0=None if q0 is None or not len(q0) else np.asarray(q0, float),
            qd0=None if qd0 is None or not len(qd0) else np.asarray(qd0, float))
        self.answer = answer
        self.states, self.statuses, self.events = [], [], []
        self.refused_wrenches = []      # what the node logs as a refused external wrench
        self._inbox = []
        self._reset = False
        self.reset_stamp_ns = None
        self._wrench = None
        self._from, self._for = (0.0, 0.0), 0.0
        self.stepping = Stepping(self.sim, self, self.clock, self.clock.system_ns)

    # ---- what the test does ---------------------------------------------------------------------

    def send(self, values, source='controller'):
        """Send a command (model order) from ``source``, now."""
        self._inbox.append((np.asarray(values, dtype=float), source,
                            self.clock.system_ns()))

    def push(self, wrench, frame=''):
        """Send an external wrench (force, torque) in ``frame`` (the tip's by default)."""
        self._wrench = (wrench, frame)

    def reset(self):
        """Ask for a reset; return its state's stamp [s] once it is published."""
        self._reset = True
        self.run_until(lambda: self.reset_stamp_ns is not None, 1.0, 'the reset')
        stamp, self.reset_stamp_ns = self.reset_stamp_ns, None
        return ns_to_s(stamp)

    def run_until(self, condition, within, what):
        """
        Step until ``condition()``; fail after ``within`` [s].

        Seconds of the test's clock or of simulated time, whichever runs faster (off real time
        the clock stands still).
        """
        self._start(within)
        while not condition():
            assert not self._over(), f'{what}: not within {within:g} s'
            self.stepping.once()

    def run_for(self, seconds):
        """Step for ``seconds`` of the test's clock or of simulated time (as :meth:`run_until`)."""
        self._start(seconds)
        while not self._over():
            self.stepping.once()

    def _start(self, seconds):
        self._from, self._for = (self.clock(), self.sim.plant.t), seconds

    def _over(self):
        (wall, t), seconds = self._from, self._for
        return max(self.clock() - wall, self.sim.plant.t - t) >= seconds

    def since(self, t0, t1=float('inf')):
        """Return the published states stamped from ``t0`` to ``t1`` [s]."""
        return [s for s in self.states if t0 <= s.t <= t1]

    def said(self, words):
        """Return the events whose message holds ``words``."""
        return [e for e in self.events if words in e.message]

    # ---- the port of the loop (robot_dynamics.simulator.Stepping) ------------------------------

    def sleep(self, seconds):
        self.clock.advance(seconds)
        return False

    def stopping(self):
        return False

    def reset_requested(self):
        requested, self._reset = self._reset, False
        return requested

    def reset_done(self, stamp_ns):
        self.reset_stamp_ns = stamp_ns

    def commands(self, timeout):
        if self.answer is not None and self.states and not self._inbox:
            values = self.answer(self.states[-1])
            if values is not None:
                self.send(values)
        came, self._inbox = self._inbox, []
        if not came and timeout > 0.0:
            # a wait for a command that never comes (lockstep before the first) would not end
            assert not self._over(), 'the loop waits for a command: none comes'
            # waited, and nothing came (a wait takes a moment, as on any clock)
            self.clock.advance(max(timeout, WAIT_FLOOR))
        elif not self.sim.lockstep:
            came = came[-1:]    # a history of one: the newest alone (NEWEST_ONLY)
        return came

    def before_step(self):
        if self._wrench is not None:
            try:
                self.sim.set_wrench(*self._wrench)
            except InputError as exc:
                self.refused_wrenches.append(str(exc))
            self._wrench = None

    def publish_state(self, stamp_ns):
        plant = self.sim.plant
        self.states.append(State(stamp_ns, plant.q.copy(), plant.qd.copy(),
                                 plant.effort.copy()))

    def publish_status(self):
        self.statuses.append(self.sim.status(self.clock()))

    def report(self, events):
        self.events.extend(events)


class LoopGraph:
    """
    The simulator and the controller of ``robot``'s parameter files on one :class:`TestClock`.

    ``lockstep``: the simulator waits for each answer, as fast as it runs, and the controller
    is on simulated time (the newest state's stamp is ``/clock``); else both on real time.
    ``simulator`` and ``controller`` override the nodes' parameters (``{name: value}``);
    ``model`` is the controller's (the model node's description), the robot's by default.
    The controller runs its node's loop (:class:`~robot_dynamics.controller.Cycling`, this
    graph its port): the cycles that sent a command are in :attr:`cycles`, its events in
    :attr:`events`, what it published in :attr:`published`. Goals and targets are handed to
    the controller as the node does once its goal process has converted them.
    """

    def __init__(self, robot, lockstep=True, simulator=None, controller=None, model=None):
        files = [parameter_files.parameter_file(robot)]
        self.lockstep = lockstep
        self._simulator_values = {**parameter_files.file_values(files, 'simulator'),
                                  'lockstep': lockstep, 'realtime': not lockstep,
                                  **(simulator or {})}
        self._controller_values = {**parameter_files.file_values(files, 'controller'),
                                   **(controller or {})}
        self.robot, self.clock = robot, TestClock()
        self.model = RobotModel.load(robot) if model is None else model
        self.cycles, self.events = [], []
        #: what the controller published, by kind: 'state', 'tip' (cycles), 'feedback'
        self.published = {'state': [], 'tip': [], 'feedback': []}
        self.simulators = 0
        self.sim = self.controller = self._stalled = None
        self.start_controller()
        self.start_simulator()

    # ---- the nodes ------------------------------------------------------------------------------

    def start_simulator(self):
        """Start a simulator (a new source of states), at its initial state."""
        self.simulators += 1
        self._source = f'simulator {self.simulators}'
        self.sim = SimulatorGraph(self.robot, answer=self._answer, clock=self.clock,
                                  **self._simulator_values)
        self._look_at = self.clock()

    def kill_simulator(self):
        """Kill the simulator: no states, no clock."""
        self.sim = None

    def stall_simulator(self):
        """Stop the simulator's process (no states, no clock) until :meth:`resume_simulator`."""
        self._stalled, self.sim = self.sim, None

    def resume_simulator(self):
        """Let the stalled simulator run on where it stopped (a SIGCONT)."""
        self.sim, self._stalled = self._stalled, None

    def start_controller(self):
        """Start a controller (as the node: the graph's parameters, its loop, a new watchdog)."""
        _, self.controller, self.tolerances = graph_loop(self.model, self._simulator_values,
                                                         self._controller_values)
        self.cycling = configured_cycling(self.controller, self, self._controller_values.get,
                                          sim_time=self.lockstep, clock=self.clock)
        self.watch = self.cycling.watch
        self._answered = self._sent = None
        self._look_at = self.clock()

    def kill_controller(self):
        """Kill the controller: no answers."""
        self.controller = None

    # ---- running --------------------------------------------------------------------------------

    def run_for(self, seconds):
        """Run what is alive for ``seconds`` of the test's clock or of simulated time."""
        if self.sim is not None:
            self.sim.run_for(seconds)
            return
        end = self.clock() + seconds
        while self.clock() < end:
            self.clock.advance(self.watch.period)
            self._look()

    def run_until(self, condition, within, what):
        """Run until ``condition()``; fail after ``within`` [s] (see :meth:`run_for`)."""
        if self.sim is not None:
            self.sim.run_until(condition, within, what)
            return
        end = self.clock() + within
        while not condition():
            assert self.clock() < end, f'{what}: not within {within:g} s'
            self.clock.advance(self.watch.period)
            self._look()

    def hold_at_rest(self, within=5.0):
        """Run until the controller holds the arm at rest (below REST_VELOCITY); return where."""
        self.run_until(lambda: self.mode() is Mode.HOLD
                       and np.abs(self.states[-1].qd).max() < REST_VELOCITY, within,
                       'the arm held at rest')
        return self.states[-1].q

    def submit(self, goal):
        """Hand ``goal`` (:class:`~robot_dynamics.follower.Goal`) to the controller, now."""
        self.events += self.controller.submit(goal)

    def cancel(self, tag):
        """Cancel the goal ``tag``, now."""
        self.events += self.controller.cancel(tag)

    def submit_cartesian(self, goal):
        """Hand ``goal`` (:class:`~robot_dynamics.cartesian_follower.CartesianGoal`) over, now."""
        self.events += self.controller.submit_cartesian(goal)

    def target(self, pose):
        """Stream a target pose (4, 4) to the controller, now; ``InputError`` if it is refused."""
        self.events += self.controller.set_target(pose)

    def set_task_parameters(self, changes):
        """
        Change the task law's parameters (``{name: value}``) now, as the node's parameter service.

        Over the graph's parameters, not over earlier changes; raises ``InputError`` naming a
        refused parameter, and nothing changes.
        """
        values = {**self._controller_values, **changes}
        self.controller.set_task_law(configured_task_law(self.model, values.get))

    def push(self, force):
        """Push the tip with ``force`` [N] (base frame) from the next step; zero ends the push."""
        self.sim.push(np.r_[force, 0.0, 0.0, 0.0])

    # ---- what came out --------------------------------------------------------------------------

    @property
    def states(self):
        """Return the joint states of the running simulator."""
        return self.sim.states

    def tip(self, states=None):
        """Return the tip's pose (4, 4) in the newest state, or (K, 4, 4) in ``states``."""
        if states is None:
            return self.model.fk(self.states[-1].q)
        return self.model.fk(np.array([s.q for s in states]))

    def cartesian_state(self):
        """Return the controlled axes and the condition number of the newest ~/cartesian_state."""
        cycle, mask = self.published['tip'][-1], self.controller.task_law.mask
        return mask_axes(mask), tip_state(self.model, cycle.q, cycle.qd, mask)[2]

    def mode(self):
        """Return the controller's mode after its newest cycle."""
        return self.cycles[-1].mode if self.cycles else None

    def ended(self, tag=None):
        """Return the events that ended goals (``tag``'s)."""
        return [e for e in self.events
                if e.outcome is not None and (tag is None or e.tag == tag)]

    def said(self, words):
        """Return the controller's events whose message holds ``words``."""
        return [e for e in self.events if words in e.message]

    # ---- the controller node's cycle ------------------------------------------------------------

    def _answer(self, state):
        self._look()
        if self.controller is None or state.stamp_ns == self._answered:
            return None
        self._answered, self._sent = state.stamp_ns, None
        # the node's clock: the stamp; on simulated time /clock, the newest state's stamp
        self.cycling.state(state.t, state.q, state.qd, self._source,
                           state.t if self.lockstep else None)
        return self._sent

    def _look(self):
        """Look as the node's watchdog does: every period of the clock."""
        if self.controller is None or self.clock() < self._look_at + self.watch.period:
            return
        self._look_at = self.clock()
        now = self.sim.states[-1].t if self.sim is not None and self.sim.states else \
            self.controller.time
        self.cycling.look(now)

    # ---- the port of the controller's loop (what the node publishes) ---------------------------

    def send_command(self, cycle):
        """Keep a cycle that sent a command; the command answers the state in hand."""
        self.cycles.append(cycle)
        self._sent = cycle.command

    def publish_state(self, cycle):
        self.published['state'].append(cycle)

    def publish_tip(self, cycle):
        self.published['tip'].append(cycle)

    def publish_feedback(self, cycle, goal):
        self.published['feedback'].append((cycle, goal.tag))

    def report(self, events):
        self.events += events
