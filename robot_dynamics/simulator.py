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
A simulated arm's logic without ROS: the plant, its commands, pacing, lockstep, reset, status.

A :class:`Simulator` is the twin of :class:`~robot_dynamics.controller.Controller`: every
decision of the simulator node, on explicit inputs (times, commands with their source), with
plain outputs (what to publish, the :class:`Event` s to report). The node only moves messages,
clocks and threads around it.

**A step** of the loop, at ``rate_hz``:

1. :meth:`Simulator.tick` ``(now)``: the step begins at ``now`` [s, a monotonic clock]. In real
   time step k is due at ``t0 + k dt`` (:meth:`Simulator.wait` says how long until then): a
   step that begins more than ``dt`` late is counted late (and run, never dropped: the steps
   after it catch up), one more than ``STALL`` late is a stall (an event: the process did not
   run). The tick says whether the state is published (every ``publish_every`` steps, and at
   once after a reset) and with which stamp [ns]: the step's time on the grid, so a late state
   shows as an older one; on simulated time ``k`` whole steps from 0.
2. Commands, :meth:`Simulator.command` ``(values, now, source)``: one finite value per joint in
   model order; anything else is rejected (counted, an event) and the last good command stays.
   **One source**: the simulator follows the first source that sends a good command (an opaque
   label: the node passes the publisher's GID); a good command from another is ignored and
   counted, and the first from each other source is reported at once (an event naming both).
   When the followed source has been silent for ``command_timeout`` (a controller that died),
   the next source that sends a good command is followed instead (an event says so).
3. :meth:`Simulator.step` ``(now)``: the plant advances one step under the command in force:
   the newest good command; after ``command_timeout`` [s of ``now``'s clock] without one (0:
   never) the brakes, as a drive's watchdog engages them (``brake_on_timeout``: the arm does not
   move until commands return), or else the idle command
   (:meth:`~robot_dynamics.plant.Plant.idle_command`: zero effort, the arm falls); the brakes
   too before the first command with ``brake_until_command``. It says whether a
   status is due (every ``status_every`` steps and when a joint touches or leaves a stop).

**Lockstep** (``lockstep=True``): after a published state the simulator waits for the command
that answers it. :meth:`Simulator.tick` gives the wait's time-out: none before the first command
(the arm braked, a controller may start later), ``lockstep_timeout`` otherwise, and no wait after
an unanswered state until commands come again (a controller that died). While no controller
answers, the steps are paced to the wall clock (:meth:`Simulator.wait`), as with ``realtime``:
nothing sets the pace then, and a simulation as fast as possible would flood the graph with
states and ``/clock`` while a new controller starts. The caller measures the
wait on the time in which its process ran and calls :meth:`Simulator.waited` with it, which
counts the state as unanswered once the time-out has passed. A command answers the state only if
it was sent after the state was published (``sent_ns``, on the publisher's system clock,
against the tick's ``system_ns``): the commands a controller sent while the simulator stepped
without waiting, delivered in a burst once it is found, are taken in turn (the newest is in
force) but answer nothing, so that the simulator waits for the answer to the state it
published. A command sent before the first state was kept for late subscribers by a controller
that ran before: it is ignored. With ``realtime`` as well the steps are paced to the wall
clock, but waiting for the controller is no lateness: the grid moves on by the wait.

**External wrench** (:meth:`Simulator.set_wrench`): see :mod:`robot_dynamics.plant`; it applies
from the next step.

Joint arrays are (n,) in model order; positions rad or m, efforts N m or N; times in s, stamps
in ns.
"""

import enum
import math
from typing import NamedTuple, Optional

import numpy as np

from .errors import InputError, RobotDynamicsError
from .plant import Plant
from .trajectory import NS_PER_S as _NS

#: A step this late [s] says that the process stalled (a :class:`Kind.STALL` event).
STALL = 0.05
#: Steps whose start lateness is kept for the percentile of the status.
LATENESS_WINDOW = 4096
#: Default time [s] without a good command after which the idle command applies.
DEFAULT_COMMAND_TIMEOUT = 0.1
#: Default lockstep wait [s of time in which the process ran] for the answer to a state.
DEFAULT_LOCKSTEP_TIMEOUT = 1.0


class Kind(enum.Enum):
    """What an :class:`Event` reports."""

    STALL = 'stall'
    COMMAND_REJECTED = 'command rejected'
    SECOND_SOURCE = 'second command source'
    SOURCE_CHANGED = 'command source changed'
    COMMANDS_TIMED_OUT = 'commands timed out'
    COMMANDS_BACK = 'commands back'
    UNANSWERED = 'unanswered state'
    FAILED = 'simulation failed'


class Event(NamedTuple):
    """Something to report; ``sources`` (followed, other) for the command source events."""

    kind: Kind
    message: str
    sources: Optional[tuple] = None


class Tick(NamedTuple):
    """
    The beginning of a step.

    ``publish``: publish the state now, stamped ``stamp_ns``; ``reset``: the initial state was
    restored at this tick; ``lateness`` [s] of the step's start (0 off real time);
    ``answer_timeout`` [s]: lockstep's wait for the answer (``math.inf``: as long as it takes;
    None: no wait, take what came).
    """

    stamp_ns: int
    publish: bool
    reset: bool
    lateness: float
    answer_timeout: Optional[float]
    events: list


class Stepped(NamedTuple):
    """The end of a step: ``status`` due now; ``failed`` (then tick with ``reset``)."""

    status: bool
    failed: bool
    events: list


class Status(NamedTuple):
    """The figures of the simulator's status (SimulatorStatus); arrays in model order."""

    stamp_ns: int
    at_lower: np.ndarray
    at_upper: np.ndarray
    command_timed_out: bool
    interface: str
    steps: int
    late_steps: int
    rejected_commands: int
    ignored_commands: int
    lockstep: bool
    unanswered_states: int
    simulated_time: float
    real_time_factor: float
    step_lateness_p99: float
    wrench: np.ndarray
    wrench_frame: str


class Simulator:
    """
    A simulated arm stepped under commands with their times (see the module docstring).

    Parameters
    ----------
    model : RobotModel
        The simulated arm.
    rate_hz : float
        Steps per second [Hz] (RK4 in the effort interface).
    interface, friction, q0, qd0
        As :class:`~robot_dynamics.plant.Plant`.
    command_timeout : float
        Time [s] without a good command after which the idle command applies; 0: never.
    brake_until_command : bool
        The arm does not move before the first good command.
    brake_on_timeout : bool
        After ``command_timeout`` without a command (once one came) the brakes hold the arm
        until commands return; off: the idle command applies (zero effort: a simulated arm falls
        while its controller is starved).
    realtime : bool
        Pace the steps on the clock of ``now`` (see :meth:`wait`); off: as fast as they run.
    lockstep : bool
        Wait for the command that answers each published state.
    lockstep_timeout : float
        Lockstep: the longest wait [s] for an answer, after which the state is unanswered.
    publish_every, status_every : int
        Publish the state every this many steps; a status every this many.

    """

    def __init__(self, model, rate_hz, *, interface='effort', friction=True, q0=None, qd0=None,
                 command_timeout=DEFAULT_COMMAND_TIMEOUT, brake_until_command=True,
                 brake_on_timeout=True, realtime=True, lockstep=False,
                 lockstep_timeout=DEFAULT_LOCKSTEP_TIMEOUT,
                 publish_every=1, status_every=100):
        if not (math.isfinite(rate_hz) and rate_hz > 0.0):
            raise InputError(f'rate_hz: expected a positive rate in Hz, got {rate_hz!r}')
        for name, value in (('command_timeout', command_timeout),
                            ('lockstep_timeout', lockstep_timeout)):
            if not (math.isfinite(value) and value >= 0.0):
                raise InputError(f'{name}: expected a time >= 0 in seconds, got {value!r}')
        for name, value in (('publish_every', publish_every), ('status_every', status_every)):
            if int(value) != value or value < 1:
                raise InputError(f'{name}: expected a whole number of steps >= 1, got {value!r}')
        self.rate_hz = float(rate_hz)
        self.plant = Plant(model, 1.0 / rate_hz, interface=interface, friction=friction,
                           q0=q0, qd0=qd0)
        self.initial = (self.plant.q.copy(), self.plant.qd.copy())
        self.command_timeout = float(command_timeout)
        self.brake_until_command = bool(brake_until_command)
        self.brake_on_timeout = bool(brake_on_timeout)
        self.realtime = bool(realtime)
        self.lockstep = bool(lockstep)
        self.lockstep_timeout = float(lockstep_timeout)
        self.publish_every = int(publish_every)
        self.status_every = int(status_every)
        #: stamps are simulated time from 0 (and /clock is for the caller to publish)
        self.simulated_time = self.lockstep or not self.realtime
        self.ticks = 0              # steps begun (the real-time grid's index)
        self.steps = 0              # steps taken
        self.late_steps = 0
        self.stalls = 0             # late steps beyond STALL
        self.rejected_commands = 0
        self.ignored_commands = 0
        self.unanswered_states = 0
        self.command_timed_out = True
        self.failed = False
        self._step_ns = round(_NS / rate_hz)
        # (t0, tick index at t0) of the wall-clock grid: in real time, and in lockstep off real
        # time while no controller answers
        self._pace = None
        self._origin_ns = 0         # real time: the system time [ns] of tick 0 on the grid
        self._lateness = np.zeros(LATENESS_WINDOW)
        self._command = None        # (command in model order, time received)
        self._source = None         # the followed source of commands
        self._others = set()        # sources reported as second sources
        self._answering = False     # lockstep: a controller answers the states
        self._first_state_ns = None  # lockstep: system time of the first tick
        self._state_ns = None       # lockstep: system time of the newest published state
        #: lockstep: a command sent after the newest published state answered it
        self.answered = False
        self._status_mark = None    # (now, simulated time) of the last status

    # ---- state ----------------------------------------------------------------------------------

    @property
    def model(self):
        """Return the simulated arm."""
        return self.plant.model

    @property
    def stamp_ns(self):
        """Return the stamp [ns] of the present state (see the module docstring)."""
        if self.simulated_time:
            return self.steps * self._step_ns
        return self._origin_ns + round(self.ticks * _NS / self.rate_hz)

    # ---- the loop -------------------------------------------------------------------------------

    def wait(self, now):
        """
        Return the time [s] from ``now`` to the next step's due time.

        0 (now) off real time, except in lockstep while no controller answers the states.
        """
        if self._pace is None:
            return 0.0
        t0, k0 = self._pace
        return max(0.0, t0 + (self.ticks - k0) / self.rate_hz - now)

    def tick(self, now, *, reset=False, system_ns=None):
        """
        Begin a step at ``now`` [s, monotonic]; return the :class:`Tick`.

        ``reset``: restore the initial state first (the clock runs on; after a failed step the
        real-time grid starts again at ``now``). ``system_ns``: the system time [ns] now. In real
        time the stamps are on it: where the grid starts (the first tick, or again after a
        failed step) the tick is stamped ``system_ns`` and tick k ``k / rate_hz`` later, however
        late it runs (None there: stamps from 0). Lockstep needs it at the first tick (see
        :meth:`command`).
        """
        events = []
        if reset:
            if self.failed:
                self._pace = None
            self.failed = False
            self.plant.reset(*self.initial)
        lateness = 0.0
        if self.realtime:
            if self._pace is None:
                self._pace = (now, self.ticks)
                # stamped on the system clock where the grid starts, not where the simulator
                # was built: a warm-up in between would date every state that much too early
                self._origin_ns = (system_ns or 0) - round(self.ticks * _NS / self.rate_hz)
            t0, k0 = self._pace
            lateness = now - (t0 + (self.ticks - k0) / self.rate_hz)
            if self.lockstep:
                # waiting for the controller is the point: the grid moves on by the wait
                self._pace = (t0 + max(0.0, lateness), k0)
                lateness = 0.0
            if lateness > self.plant.dt:
                self.late_steps += 1
                if lateness > STALL:
                    self.stalls += 1
                    events.append(Event(Kind.STALL, (
                        f'step {self.ticks} started {lateness * 1e3:.0f} ms late: this process '
                        'did not run (a loaded host); the steps due since run at once, so joint '
                        'states come in a burst')))
            self._lateness[self.steps % LATENESS_WINDOW] = lateness
        elif self.lockstep:
            if self._answering:
                self._pace = None
            elif self._pace is None:
                self._pace = (now, self.ticks)
        stamp_ns = self.stamp_ns
        self.ticks += 1
        publish = reset or self.steps % self.publish_every == 0
        if self.lockstep and self._first_state_ns is None:
            # before the first state goes out: an answer to it is never older than this
            self._first_state_ns = system_ns
        answer_timeout = None
        if self.lockstep and publish:
            self._state_ns, self.answered = system_ns, False
            if self._command is None and self.brake_until_command:
                answer_timeout = math.inf
            elif self._answering:
                answer_timeout = self.lockstep_timeout
        return Tick(stamp_ns, publish, reset, lateness, answer_timeout, events)

    def waited(self, awake):
        """
        Lockstep: say that the answer has been waited for ``awake`` [s]; return the event or None.

        ``awake`` is the time in which the caller's process ran since the state was published
        (a host that stops the process stops the simulation too, and that is no wait). Once it
        reaches the tick's ``answer_timeout`` the state is unanswered: counted, and the
        simulator waits no more until commands come again (an :class:`Event`; None: wait on).
        """
        if awake < self.lockstep_timeout or (self._command is None
                                             and self.brake_until_command):
            return None
        self.unanswered_states += 1
        self._answering = False
        return Event(Kind.UNANSWERED, (
            f'lockstep: no command answered the state of t = {self.stamp_ns / _NS:.3f} s '
            f'within {self.lockstep_timeout:g} s ({self.unanswered_states} so far): stepping '
            'on in real time with the last command, without waiting, until commands come '
            'again'))

    def command(self, values, now, *, source=None, sent_ns=None):
        """
        Take a ``values`` (n,) command in model order, received at ``now`` [s].

        Returns ``(taken, events)``; ``taken``: it is the command in force from now on. In
        lockstep a taken command sent at or after the newest state's publication (or of unknown
        ``sent_ns``) answers it (:attr:`answered`). ``source`` labels its sender (compared for
        equality only); ``sent_ns`` is when it was sent [ns, the sender's system clock]
        (lockstep ignores one sent before the first state). A command of the wrong size or with
        a non-finite value is rejected; a good one from a source other than the followed one is
        ignored (see the module docstring).
        """
        if self.lockstep and sent_ns is not None and self._first_state_ns is not None \
                and sent_ns < self._first_state_ns:
            return False, []
        values = np.asarray(values, dtype=float)
        n = self.model.dof
        problem = None
        if values.shape != (n,):
            problem = f'expected {n} values (one per joint), got {values.size}'
        elif not np.isfinite(values).all():
            j = int(np.flatnonzero(~np.isfinite(values))[0])
            problem = f'joint {self.model.joint_names[j]!r} is {values[j]}: values must be finite'
        if problem is not None:
            self.rejected_commands += 1
            return False, [Event(Kind.COMMAND_REJECTED, (
                f'rejected command ({self.rejected_commands} so far): {problem}; keeping the '
                'last good one'))]
        events = []
        if self._command is not None and source != self._source:
            followed = self._source
            if not self._silent(now):
                self.ignored_commands += 1
                if source not in self._others:
                    self._others.add(source)
                    events.append(Event(Kind.SECOND_SOURCE, (
                        f'a second source of commands, {source}, besides {followed}, which is '
                        'followed: its commands are ignored'), (followed, source)))
                return False, events
            events.append(Event(Kind.SOURCE_CHANGED, (
                f'commands now come from {source}: {followed} was silent for '
                f'{self.command_timeout:g} s'), (followed, source)))
            self._others.discard(source)
        self._source = source
        self._command = (values.copy(), now)
        self._answering = True
        self.answered = self.answered or sent_ns is None or self._state_ns is None \
            or sent_ns >= self._state_ns
        return True, events

    def step(self, now):
        """Advance the arm one step under the command in force at ``now`` [s]: :class:`Stepped`."""
        plant = self.plant
        events = []
        command = self._command
        if command is None and self.brake_until_command:
            applied = None
        else:
            timed_out = self._silent(now)
            if timed_out != self.command_timed_out:
                self.command_timed_out = timed_out
                events.append(
                    Event(Kind.COMMANDS_TIMED_OUT, (
                        f'no valid command for {self.command_timeout:g} s: '
                        + ('the brakes hold the arm' if self.brake_on_timeout else
                           f'{plant.interface.value} commands stop')))
                    if timed_out else Event(Kind.COMMANDS_BACK, 'commands arrive: applying them'))
            if not timed_out:
                applied = command[0]
            elif command is not None and self.brake_on_timeout:
                applied = None      # the watchdog of a drive that has had commands
            else:
                applied = plant.idle_command()
        contacts = (plant.at_lower, plant.at_upper)    # a step replaces these arrays
        try:
            plant.step(applied)
        except RobotDynamicsError as exc:
            self.failed = True
            return Stepped(False, True, events + [Event(Kind.FAILED, (
                f'the simulation failed at t = {plant.t:.6f} s: {exc}; reset to start again'))])
        self.steps += 1
        status = self.steps % self.status_every == 0 or not (
            np.array_equal(contacts[0], plant.at_lower)
            and np.array_equal(contacts[1], plant.at_upper))
        return Stepped(status, False, events)

    def set_wrench(self, wrench, frame=''):
        """Apply the external wrench from the next step (see ``Plant.set_wrench``)."""
        self.plant.set_wrench(wrench, frame)

    def status(self, now):
        """
        Return the :class:`Status` at ``now`` [s].

        The real-time factor is the simulated time over ``now``'s time since the last status
        (0 for the first); the lateness percentile is over the last ``LATENESS_WINDOW`` steps
        (0 off real time).
        """
        plant = self.plant
        factor = 0.0
        if self._status_mark is not None and now > self._status_mark[0]:
            factor = (plant.t - self._status_mark[1]) / (now - self._status_mark[0])
        self._status_mark = (now, plant.t)
        window = self._lateness[:min(self.steps, LATENESS_WINDOW)] if self.realtime else ()
        return Status(self.stamp_ns, plant.at_lower.copy(), plant.at_upper.copy(),
                      bool(self.command_timed_out), plant.interface.value, self.steps,
                      self.late_steps, self.rejected_commands, self.ignored_commands,
                      self.lockstep, self.unanswered_states, plant.t, factor,
                      float(np.percentile(window, 99)) if len(window) else 0.0,
                      plant.wrench.copy(), plant.wrench_frame)

    # ---- internals ------------------------------------------------------------------------------

    def _silent(self, now):
        """Whether the command in force is older than ``command_timeout`` (or there is none)."""
        if self._command is None:
            return True
        return self.command_timeout > 0.0 and now - self._command[1] > self.command_timeout


__all__ = ['Event', 'Kind', 'Simulator', 'Status', 'Stepped', 'Tick', 'STALL']
