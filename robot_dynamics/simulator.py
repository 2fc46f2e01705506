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
   **One source** (:class:`~robot_dynamics.sources.Arbiter`, the controller's rule too): the
   simulator follows the first source that sends a good command (an opaque label: the node
   passes the publisher's GID); a good command from another is ignored and counted, and the
   first from each other source is reported at once (an event naming both). Only once the
   followed source has been silent for ``source_timeout`` (a controller that died), and so its
   commands timed out, is the next source that sends a good command followed (an event says
   so).
3. :meth:`Simulator.step` ``(now)``: the plant advances one step under the command in force:
   the newest good command; after ``command_timeout`` [s of ``now``'s clock] without one (0:
   never) the brakes, as a drive's watchdog engages them (``brake_on_timeout``: the arm does not
   move until commands return), or else the idle command
   (:meth:`~robot_dynamics.plant.Plant.idle_command`: zero effort, the arm falls); the brakes
   too before the first command with ``brake_until_command``. It says whether a
   status is due (every ``status_every`` steps and when a joint touches or leaves a stop).
   **A failed step** (the state would be non-finite or run away:
   :data:`~robot_dynamics.plant.RUNAWAY_SPEED`) is not taken: the brakes hold the arm at its
   last good state, at rest, from then until a reset (an event; :attr:`Simulator.failure` says
   why, and the status on /diagnostics is ERROR), so no state without meaning is published.

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
from the next step. A force above ``max_external_force`` or a torque above
``max_external_torque`` (their magnitudes), a non-finite value or an unknown frame is refused
(``InputError`` naming it) and the wrench in force stays. A reset removes it.

**Reset** (:meth:`Simulator.tick` with ``reset``): the initial state, no external wrench, no
failure; the clock runs on.

Joint arrays are (n,) in model order; positions rad or m, efforts N m or N; times in s, stamps
in ns.
"""

import math
import time
from typing import NamedTuple, Optional

import numpy as np

from .awake import AwakeTime
from .dh import inertia_tensor
from .diagnostics import SimulatorFigures
from .errors import as_array, InputError, RobotDynamicsError
from .events import Event, Kind
from .model import RobotModel
from .plant import Plant
from .sources import Arbiter, DEFAULT_SOURCE_TIMEOUT
from .stamps import NS_PER_S as _NS, ns_to_s
from .urdf import combine_inertia

#: A step this late [s] says that the process stalled (a :class:`Kind.STALL` event).
STALL = 0.05
#: Steps whose start lateness is kept for the percentile of the status.
LATENESS_WINDOW = 4096
#: Default time [s] without a good command after which the idle command applies.
DEFAULT_COMMAND_TIMEOUT = 0.1
#: Default lockstep wait [s of time in which the process ran] for the answer to a state.
DEFAULT_LOCKSTEP_TIMEOUT = 1.0
#: Default steps per second [Hz] and rate [Hz of simulated time] of the status.
DEFAULT_RATE_HZ = 1000.0
DEFAULT_STATUS_RATE_HZ = 10.0
#: Default largest external force [N] and torque [N m] accepted (:meth:`Simulator.set_wrench`):
#: a hard shove by a person, and a wrench that keeps the bundled arms' joints within
#: :data:`~robot_dynamics.plant.RUNAWAY_SPEED`.
DEFAULT_MAX_EXTERNAL_FORCE = 1000.0
DEFAULT_MAX_EXTERNAL_TORQUE = 100.0
#: Lockstep: longest single wait [s] for a command, between looks at the stop flag.
WAIT_SLICE = 0.1


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
    """The end of a step: ``status`` due now; ``failed``: this step failed, the arm is braked."""

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
    source_timeout : float
        Silence [s] of the followed source of commands after which another may be taken
        (:mod:`robot_dynamics.sources`).
    max_external_force, max_external_torque : float
        The largest magnitudes of the external wrench's force [N] and torque [N m] accepted.

    Attributes
    ----------
    failure : str
        Why a step failed, the arm braked since ('' while none has, and after a reset).

    """

    def __init__(self, model, rate_hz, *, interface='effort', friction=True, q0=None, qd0=None,
                 command_timeout=DEFAULT_COMMAND_TIMEOUT, brake_until_command=True,
                 brake_on_timeout=True, realtime=True, lockstep=False,
                 lockstep_timeout=DEFAULT_LOCKSTEP_TIMEOUT,
                 publish_every=1, status_every=100, source_timeout=DEFAULT_SOURCE_TIMEOUT,
                 max_external_force=DEFAULT_MAX_EXTERNAL_FORCE,
                 max_external_torque=DEFAULT_MAX_EXTERNAL_TORQUE):
        if not (math.isfinite(rate_hz) and rate_hz > 0.0):
            raise InputError(f'rate_hz: expected a positive rate in Hz, got {rate_hz!r}')
        for name, value, unit in (('max_external_force', max_external_force, 'N'),
                                  ('max_external_torque', max_external_torque, 'N m')):
            if not (math.isfinite(value) and value >= 0.0):
                raise InputError(f'{name}: expected a finite magnitude >= 0 in {unit}, got '
                                 f'{value!r}')
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
        self.max_external_force = float(max_external_force)
        self.max_external_torque = float(max_external_torque)
        #: stamps are simulated time from 0 (and /clock is for the caller to publish)
        self.simulated_time = self.lockstep or not self.realtime
        self.ticks = 0              # steps begun (the real-time grid's index)
        self.steps = 0              # steps taken
        self.late_steps = 0
        self.stalls = 0             # late steps beyond STALL
        self.rejected_commands = 0
        self.unanswered_states = 0
        self.command_timed_out = True
        self.failure = ''
        self._step_ns = round(_NS / rate_hz)
        # (t0, tick index at t0) of the wall-clock grid: in real time, and in lockstep off real
        # time while no controller answers
        self._pace = None
        self._origin_ns = 0         # real time: the system time [ns] of tick 0 on the grid
        self._lateness = np.zeros(LATENESS_WINDOW)
        self._command = None        # (command in model order, time received)
        self.sources = Arbiter(source_timeout, what='commands')
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

        ``reset``: first restore the initial state, remove the external wrench and clear a
        failure (the clock runs on). ``system_ns``: the system time [ns] now. In real time the
        stamps are on it: where the grid starts (the first tick) the tick is stamped
        ``system_ns`` and tick k ``k / rate_hz`` later, however late it runs (None there: stamps
        from 0). Lockstep needs it at the first tick (see :meth:`command`).
        """
        events = []
        if reset:
            self.failure = ''
            self.plant.reset(*self.initial)
            self.plant.set_wrench(np.zeros(6))
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
            f'lockstep: no command answered the state of t = {ns_to_s(self.stamp_ns):.3f} s '
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
        silence = math.inf if self._command is None else now - self._command[1]
        follow, events = self.sources.offer(source, silence, idle=lambda: self._silent(now))
        if not follow:
            return False, events
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
        failed = False
        try:
            plant.step(None if self.failure else applied)
        except RobotDynamicsError as exc:
            # the state it would reach means nothing: the brakes hold the last good one
            failed = True
            self.failure = f'the step at t = {plant.t:.6f} s failed: {exc}'
            events.append(Event(Kind.FAILED, (
                f'{self.failure}; the brakes hold the arm where it was until a reset')))
            plant.step(None)
        self.steps += 1
        status = failed or self.steps % self.status_every == 0 or not (
            np.array_equal(contacts[0], plant.at_lower)
            and np.array_equal(contacts[1], plant.at_upper))
        return Stepped(status, failed, events)

    def set_wrench(self, wrench, frame=''):
        """
        Apply the external wrench (6,) [N, N m] at link ``frame``'s origin from the next step.

        See ``Plant.set_wrench``. Raises ``InputError`` naming the refused value and why (the
        wrench in force stays) for a force above ``max_external_force`` or a torque above
        ``max_external_torque`` (their magnitudes), a non-finite value or an unknown frame.
        """
        wrench = as_array(wrench, (6,), 'wrench').reshape(6)
        for part, (name, bound, unit) in enumerate((('force', self.max_external_force, 'N'),
                                                    ('torque', self.max_external_torque, 'N m'))):
            size = float(np.linalg.norm(wrench[3 * part:3 * part + 3]))
            if size > bound:
                raise InputError(f'wrench: its {name} of {size:.4g} {unit} is above '
                                 f'max_external_{name}, {bound:g} {unit}')
        self.plant.set_wrench(wrench, frame)

    @property
    def ignored_commands(self):
        """Return how many good commands came from sources not followed."""
        return self.sources.ignored

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

    def figures(self, wall):
        """Return the cumulative figures of /diagnostics at ``wall`` [s, monotonic]."""
        return SimulatorFigures(wall, self.plant.t, self.steps, self.late_steps, self.stalls,
                                self.unanswered_states, bool(self.command_timed_out),
                                self.realtime, self.lockstep, self.failure)

    # ---- internals ------------------------------------------------------------------------------

    def _silent(self, now):
        """Whether the command in force is older than ``command_timeout`` (or there is none)."""
        if self._command is None:
            return True
        return self.command_timeout > 0.0 and now - self._command[1] > self.command_timeout


class Stepping:
    """
    The simulator's loop (see the module docstring), one step per :meth:`once`, over a port.

    What the simulator node's stepping thread runs, and a test's graph on a clock of its own.
    The ``port`` moves messages and makes no decision; it has:

    - ``sleep(seconds)``: wait so long (the pace); return True if the loop is to stop;
    - ``stopping()``: whether the loop is to stop (looked at between lockstep's waits);
    - ``reset_requested()``: whether a reset was asked for since the last step;
    - ``reset_done(stamp_ns)``: the reset state is published with this stamp;
    - ``commands(timeout)``: the commands that came, ``(values, source, sent_ns)`` each (values
      in model order), waiting up to ``timeout`` [s] for the first;
    - ``before_step()``: the inputs read once a step (the external wrench, parameters);
    - ``publish_state(stamp_ns)``, ``publish_status()``, ``report(events)``.

    ``clock()`` [s, monotonic] is the time of the steps and of lockstep's wait (counted while
    the process runs: :class:`~robot_dynamics.awake.AwakeTime`); ``system_ns()`` [ns] the
    system clock of the real-time stamps.
    """

    def __init__(self, sim, port, clock=time.monotonic, system_ns=time.time_ns):
        self.sim, self.port = sim, port
        self.clock, self.system_ns = clock, system_ns
        self._waited = AwakeTime(WAIT_SLICE, clock)

    def once(self):
        """Run one step: wait for it, publish, take commands, step; False: the port stopped."""
        sim, port = self.sim, self.port
        wait = sim.wait(self.clock())
        if wait > 0.0 and port.sleep(wait):
            return False
        now = self.clock()
        reset = port.reset_requested()
        tick = sim.tick(now, reset=reset, system_ns=self.system_ns())
        port.report(tick.events)
        if tick.publish:
            port.publish_state(tick.stamp_ns)
        if reset:
            port.reset_done(tick.stamp_ns)
        self._answer(tick.answer_timeout)
        port.before_step()
        stepped = sim.step(now)
        port.report(stepped.events)
        if stepped.status:
            port.publish_status()
        return True

    def _answer(self, timeout):
        """
        Take the commands that came; in lockstep, wait for the answer up to ``timeout`` [s].

        ``timeout`` None: no wait. The wait counts only time in which this process ran, and
        what came while it did not run is taken before the time-out counts.
        """
        if timeout is None:
            self._take(0.0)
            return
        self._waited.restart()
        while not self.port.stopping():
            if self._take(min(timeout - self._waited.elapsed, WAIT_SLICE)):
                return
            event = self.sim.waited(self._waited.look())
            if event is not None:
                self.port.report([event])
                return

    def _take(self, timeout):
        """Hand the commands that come within ``timeout`` [s] on; return if one answered."""
        for values, source, sent_ns in self.port.commands(timeout):
            _, events = self.sim.command(values, self.clock(), source=source, sent_ns=sent_ns)
            self.port.report(events)
        return self.sim.answered


def with_payload(model, mass, com=(0.0, 0.0, 0.0), inertia=None):
    """
    Return ``model`` carrying a payload rigidly attached at its tip (merged into the last body).

    Parameters
    ----------
    model : RobotModel
        The arm.
    mass : float
        Payload mass [kg], >= 0.
    com : array_like, shape (3,)
        Payload centre of mass [m] in the tip frame (``model.tip_link``).
    inertia : array_like, shape (3, 3) or (6,), optional
        Payload inertia about its centre of mass, tip axes [kg m^2]: a 3x3 matrix or
        ``[ixx, ixy, ixz, iyy, iyz, izz]``; default zero (a point mass).

    Returns
    -------
    RobotModel
        The same arm whose last body holds the payload too (parallel axes, as ``from_urdf``
        merges fixed links): what a real arm is after it grasps an object the controller's
        model does not know.

    """
    mass = float(mass)
    if not (np.isfinite(mass) and mass >= 0.0):
        raise InputError(f'payload mass: expected kg >= 0, got {mass}')
    com = as_array(com, (3,), 'payload com').reshape(3)
    tensor = inertia_tensor(inertia, 'payload inertia')
    _, T = model.frames[model.tip_link]
    R = T[:3, :3]
    m, c, inertia = combine_inertia([(model.mass[-1], model.com[-1], model.inertia[-1]),
                                     (mass, R @ com + T[:3, 3], R @ tensor @ R.T)])
    return model.replace(mass=np.append(model.mass[:-1], m),
                         com=np.vstack((model.com[:-1], c)),
                         inertia=np.concatenate((model.inertia[:-1], inertia[None])))


def configured_plant(model, parameter, chain):
    """
    Return the arm that the simulator node's parameters simulate for the described ``model``.

    ``parameter(name, default)`` gives ``plant_urdf_file`` (another URDF of the same joints,
    read with the ``chain`` keywords of ``RobotModel.from_urdf``; empty: ``model``) and
    ``payload_mass``, ``payload_com``, ``payload_inertia`` (:func:`with_payload`; a mass of 0:
    none). The node and :func:`~robot_dynamics.closed_loop.graph_loop` both build it here.
    """
    plant = model
    urdf_file = parameter('plant_urdf_file', '')
    if urdf_file:
        plant = RobotModel.from_urdf(urdf_file, **chain)
        if list(plant.joint_names) != list(model.joint_names):
            raise InputError(f'plant_urdf_file {urdf_file!r}: its chain has the joints '
                             f'{list(plant.joint_names)}, the robot description '
                             f'{list(model.joint_names)}')
    mass = parameter('payload_mass', 0.0)
    if mass > 0.0:
        plant = with_payload(plant, mass, parameter('payload_com', None) or (0.0, 0.0, 0.0),
                             parameter('payload_inertia', None) or None)
    return plant


def configured_simulator(model, parameter, *, q0=None, qd0=None, **fixed):
    """
    Return the :class:`Simulator` of ``model`` that the simulator node's parameters describe.

    ``parameter(name, default)`` gives each of them: ``rate_hz``, ``publish_rate_hz`` (0: every
    step), ``status_rate_hz``, ``command_interface``, ``friction``, ``command_timeout``,
    ``brake_until_command``, ``brake_on_timeout``, ``realtime``, ``lockstep``,
    ``lockstep_timeout``, ``max_external_force`` and ``max_external_torque``. ``q0`` and
    ``qd0`` (n,) are in model order; ``fixed`` sets constructor arguments outright (the library
    loop's lockstep on simulated time). The node and
    :func:`~robot_dynamics.closed_loop.graph_loop` both build the simulator here.
    """
    rate = float(parameter('rate_hz', DEFAULT_RATE_HZ))
    publish = float(parameter('publish_rate_hz', 0.0))
    options = {
        'interface': parameter('command_interface', 'effort'),
        'friction': parameter('friction', True),
        'command_timeout': parameter('command_timeout', DEFAULT_COMMAND_TIMEOUT),
        'brake_until_command': parameter('brake_until_command', True),
        'brake_on_timeout': parameter('brake_on_timeout', True),
        'realtime': parameter('realtime', True), 'lockstep': parameter('lockstep', False),
        'lockstep_timeout': parameter('lockstep_timeout', DEFAULT_LOCKSTEP_TIMEOUT),
        'publish_every': 1 if publish == 0.0 else max(1, round(rate / publish)),
        'status_every': max(1, round(rate / parameter('status_rate_hz',
                                                      DEFAULT_STATUS_RATE_HZ))),
        'max_external_force': parameter('max_external_force', DEFAULT_MAX_EXTERNAL_FORCE),
        'max_external_torque': parameter('max_external_torque', DEFAULT_MAX_EXTERNAL_TORQUE)}
    return Simulator(model, rate, q0=q0, qd0=qd0, **{**options, **fixed})


__all__ = ['configured_plant', 'configured_simulator', 'Simulator', 'Status', 'Stepped',
           'Stepping', 'Tick', 'STALL', 'with_payload']
