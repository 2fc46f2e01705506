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
A joint controller's logic without ROS: modes, goals, the control law and the safety policy.

A :class:`Controller` turns measured joint states into commands for one of ros2_control's
command interfaces (effort, position or velocity), following goals with the semantics of
ros2_controllers' joint_trajectory_controller (:class:`~robot_dynamics.follower.
TrajectoryFollower`). A ROS node only converts messages around it; every decision is here, on
explicit inputs, so that each one can be tested without a middleware or a clock.

**One clock.** Every time is the time a joint state was measured (its stamp), on the clock the
states come on: wall time on a real arm, simulated time in a simulation. The cycle, holding, a
goal's start (the newest state, when the goal names none), cancels and stops all happen at the
newest state's time, so a simulation on simulated time runs exactly as an arm on wall time.

**Inputs**, each returning what to send (a :class:`Cycle`) or the :class:`Event` s to report:

- :meth:`update` ``(t, q, qd)``: a state measured at ``t`` and the cycle that answers it, for a
  controller driven by its joint states (every usable state gets exactly one command);
- :meth:`observe` then :meth:`cycle` ``(t)``: a controller driven by a timer keeps the newest
  state and runs its cycles at the timer's times, the reference sampled at each;
- :meth:`no_state` ``(elapsed)``: time passed with no usable state (the watchdog's question);
- :meth:`submit`, :meth:`cancel`, :meth:`set_law`, :meth:`fault`, :meth:`final_command`.

**Modes** (:class:`Mode`): ``waiting`` until the first usable state (nothing is sent), then
``hold`` (the position where the arm was found or where a motion ended), ``trajectory`` while a
goal runs, ``safe`` while the states are stale.

**Safety.** ros2_control's forward_command_controller keeps applying the last command it got, so
the controller always says what the drives should do when it cannot control: the *safe command*
(:meth:`safe_command`) is

- effort: zero (:attr:`SafeMode.ZERO_EFFORT`, for arms whose brakes engage without torque), or
  the gravity torques at the last measured position (:attr:`SafeMode.GRAVITY_COMPENSATION`, no
  term built from a velocity that is no longer measured), clipped to the effort limits;
- velocity: zero;
- position: the last measured position.

It is sent when the newest state is older than ``state_timeout`` (and every time the watchdog asks
while they stay stale; goals end as ``STOPPED``); for a cycle that fails (the law or the follower
raised: the goal is aborted with the reason, and the next state is held where it is); and as the
final command when the controller stops (:meth:`final_command`). A state with a non-finite value
is not used and counts as no state; a state no newer than the newest is a repeat and is not
answered again; an older one means that its clock went back (a simulation started again): the
controller holds where the arm is, on the new clock.

**One source.** Each state comes with its ``source``, an opaque identifier of who measured it (a
ROS node passes the publisher's GID), and the controller follows one, by the rule of
:mod:`robot_dynamics.sources`: the one given to it (``source=``), else the first that sends a
usable state. Another source's states are ignored and counted (:attr:`Controller.ignored_states`)
and reported once. Another source is taken only after the followed one was silent for
``source_timeout`` (as :meth:`no_state` measures it: a simulator that died or was restarted, not
one that a loaded host held back) while nothing is commanded (safe mode, goals ended) and its
state is at rest (every joint slower than ``REST_VELOCITY``); taking it is a ``SOURCE_CHANGED``
event and counted (:attr:`Controller.source_changes`). A clock going back from the *same* source
is a restarted simulation, as above. A ``source`` of None is no identity: such states are taken
as from the followed source.

**Jumps.** A state further from the newest than ``JUMP_SPEED`` times any joint's velocity limit
allows in the time between them (plus ``JUMP_TOLERANCE``) is no motion of the arm: a simulation
reset, or a fault of the measurement. Its goals end (``STOPPED``) and the controller holds
where the arm now is (a ``STATES_JUMPED`` event), rather than driving the arm back to where it
was.

Joint arrays are (n,) in model order; times in s; positions rad or m; efforts N m or N.
"""

import copy
import enum
import math
import time
from typing import Callable, NamedTuple, Optional, Union

import numpy as np

from . import gains
from .awake import AwakeTime
from .cartesian_follower import CartesianFollower, CartesianGoal, check_reach
from .control import Law
from .errors import choice, InputError
from .events import Event, Kind, Outcome
from .follower import DEFAULT_STOP_TIME, Follower, Goal, TrajectoryFollower
from .limits import middle
from .plant import Interface
from .sources import Arbiter, DEFAULT_SOURCE_TIMEOUT
from .stamps import Grid
from .trajectory import TaskPoint, TrajectoryPoint

#: Default age [s, on the states' clock] of the newest state beyond which the states are stale.
DEFAULT_STATE_TIMEOUT = 0.05
#: Default wall time [s] without a state after which a controller on simulated time counts the
#: states as stale too (see :meth:`Controller.no_state`).
DEFAULT_WALL_STATE_TIMEOUT = 2.0
#: Largest joint speed [rad/s or m/s] of a state from a new source that may be taken (at rest).
REST_VELOCITY = 0.05
#: A joint that moved between two states farther than JUMP_SPEED times its velocity limit allows,
#: plus JUMP_TOLERANCE [rad or m], jumped: no drive moves that fast (a push or a fall past the
#: limit, and measurement noise, are no jump).
JUMP_SPEED = 2.0
JUMP_TOLERANCE = 0.01
#: The watchdog looks at the states this many times per time-out (:class:`StateWatch`).
WATCHDOG_LOOKS = 4
#: Default control rate [Hz]: the expected rate of the states (missed cycles count against it).
DEFAULT_RATE_HZ = 1000.0
#: Default velocity interface feedback [1/s]: command = reference velocity + this x error.
DEFAULT_VELOCITY_FEEDBACK = 10.0
#: Default peak tip speeds [m/s, rad/s] of the motion to a target pose.
DEFAULT_MAX_LINEAR_VELOCITY = 0.25
DEFAULT_MAX_ANGULAR_VELOCITY = 1.0
#: A gap between cycles longer than this many periods counts the cycles in between as missed.
MISSED_GAP = 1.5
#: Default rates [Hz, on the states' clock] of the controller's state, of its tip's state and of
#: a running goal's feedback (:class:`Cycling`).
DEFAULT_STATE_RATE_HZ = 100.0
DEFAULT_TIP_RATE_HZ = 100.0
DEFAULT_FEEDBACK_RATE_HZ = 20.0


class Mode(enum.Enum):
    """What the controller does; the values are ControllerState's ``mode`` strings."""

    WAITING = 'waiting'
    HOLD = 'hold'
    TRAJECTORY = 'trajectory'
    SAFE = 'safe'


class Trigger(enum.Enum):
    """What starts a control cycle (:class:`Cycling`)."""

    STATE = 'state'
    TIMER = 'timer'


class SafeMode(enum.Enum):
    """What an effort interface sends when the controller cannot control (see module doc)."""

    ZERO_EFFORT = 'zero_effort'
    GRAVITY_COMPENSATION = 'gravity_compensation'


class Cycle(NamedTuple):
    """
    What one call produced: the command to send now, and what to report.

    ``command`` (n,) is None when nothing is to be sent. ``reference`` is the followed point
    (a joint :class:`~robot_dynamics.trajectory.TrajectoryPoint`, or a tip
    :class:`~robot_dynamics.trajectory.TaskPoint` in task space), ``q`` and ``qd`` the state it
    was compared with, ``requested`` what the law asked for before
    saturation (the command itself for the position and velocity interfaces and for the safe
    command), ``saturated`` (n,) the joints clipped to their effort limits; these are None when
    nothing is sent. ``t`` is the time of the call on the states' clock.
    """

    t: float
    mode: Mode
    command: Optional[np.ndarray]
    reference: Optional[Union[TrajectoryPoint, TaskPoint]]
    q: Optional[np.ndarray]
    qd: Optional[np.ndarray]
    requested: Optional[np.ndarray]
    saturated: Optional[np.ndarray]
    events: list

    @property
    def joint_reference(self):
        """Return the reference as a joint TrajectoryPoint, or None in task space."""
        return self.reference if isinstance(self.reference, TrajectoryPoint) else None

    def tip_reference(self, model):
        """
        Return the reference as a tip :class:`~robot_dynamics.trajectory.TaskPoint` of ``model``.

        In joint space the tip's pose and twist ``J qd`` at the joint reference (its
        acceleration None: not worked out for a report).
        """
        if isinstance(self.reference, TaskPoint):
            return self.reference
        q, qd = self.reference.q, self.reference.qd
        return TaskPoint(model.fk(q), model.jacobian(q) @ qd, None)


class _Space(NamedTuple):
    """A space the controller runs in: its follower, its command, what starts it."""

    follower: Follower
    #: ``(t, q, qd, reference) -> (command, requested, saturated, events)``
    command: Callable
    start: Callable


class Controller:
    """
    Goals, a control law and the safety policy over joint states (see the module docstring).

    Parameters
    ----------
    model : RobotModel
        The controller's model: joint limits for goals, dynamics for the safe command and laws.
    law : object, optional
        A control law of :mod:`robot_dynamics.control` (``compute(t, q, qd, reference)``);
        required for the effort interface, unused by the others.
    interface : str
        ``'effort'``, ``'position'`` or ``'velocity'``: what the commands are.
    safe_mode : str
        ``'zero_effort'`` or ``'gravity_compensation'`` (effort interface; see :class:`SafeMode`).
    state_timeout : float
        Age [s, on the states' clock] of the newest state beyond which the states are stale.
    wall_state_timeout : float
        Wall time [s] without a state beyond which :meth:`no_state` also counts the states as
        stale when it is given the wall time (a controller on simulated time).
    rate_hz : float
        Expected cycle rate [Hz]: a gap longer than ``MISSED_GAP`` periods between cycles counts
        the cycles in between as missed.
    velocity_feedback : float
        Velocity interface: command = reference velocity + this gain [1/s] x position error.
    stop_time : float
        Time [s] to bring a motion to rest after a cancel, an abort or a stop.
    source : object, optional
        The source of joint states to follow (see the module docstring); None: the first one.
    task_law : OperationalSpace, optional
        The task-space law of Cartesian goals and targets (effort interface); None: they are
        refused. Its posture None means "where the Cartesian motion started".
    max_linear_velocity, max_angular_velocity : float
        Peak tip speeds [m/s, rad/s] of the motion to a target pose (:meth:`set_target`).

    """

    def __init__(self, model, law=None, *, interface='effort', safe_mode='zero_effort',
                 state_timeout=DEFAULT_STATE_TIMEOUT,
                 wall_state_timeout=DEFAULT_WALL_STATE_TIMEOUT, rate_hz=DEFAULT_RATE_HZ,
                 velocity_feedback=DEFAULT_VELOCITY_FEEDBACK, stop_time=DEFAULT_STOP_TIME,
                 source=None, source_timeout=DEFAULT_SOURCE_TIMEOUT, task_law=None,
                 max_linear_velocity=DEFAULT_MAX_LINEAR_VELOCITY,
                 max_angular_velocity=DEFAULT_MAX_ANGULAR_VELOCITY):
        self.model = model
        self.interface = choice(interface, Interface, 'interface')
        self.safe_mode = choice(safe_mode, SafeMode, 'safe_mode')
        if self.interface is Interface.EFFORT and law is None:
            raise InputError('law: the effort interface needs a control law')
        for name, value in (('state_timeout', state_timeout),
                            ('wall_state_timeout', wall_state_timeout), ('rate_hz', rate_hz)):
            if not (math.isfinite(value) and value > 0.0):
                raise InputError(f'{name}: expected a positive number, got {value!r}')
        self.period = 1.0 / rate_hz
        # q_k+1 = q_k + T k e_k: the error shrinks by (1 - k T) per cycle
        if not (math.isfinite(velocity_feedback) and 0.0 <= velocity_feedback * self.period < 2.0):
            raise InputError(f'velocity_feedback: expected a gain in [0, {2.0 / self.period:g}) '
                             f'[1/s] (below 2 / T, the largest stable at {rate_hz:g} Hz), got '
                             f'{velocity_feedback!r}')
        self._inertia = None            # each joint's inertia range, once a law needs it
        self.set_law(law)
        self.state_timeout = float(state_timeout)
        self.wall_state_timeout = float(wall_state_timeout)
        self.velocity_feedback = float(velocity_feedback)
        self.follower = TrajectoryFollower(model, stop_time=stop_time)
        # task space: Cartesian goals and targets, then a compliant hold, until a joint goal
        self.cartesian = CartesianFollower(model, stop_time=stop_time)
        self._joints = _Space(self.follower, self._joint_command, self._start_joints)
        self._task = _Space(self.cartesian, self._task_command, self._start_task)
        self._space = self._joints
        self._posture = None            # where the arm was when task space began
        self._task_compute = None
        self._start_joints()
        self.max_linear_velocity = float(max_linear_velocity)
        self.max_angular_velocity = float(max_angular_velocity)
        self.set_task_law(task_law)
        self.mode = Mode.WAITING
        self.time = None          # the newest usable state's time
        self.q = self.qd = None   # and that state
        self.cycles = 0
        self.missed_cycles = 0
        #: per joint, the controlled cycles whose command was clipped to the effort limits
        self.saturated_cycles = np.zeros(model.dof, dtype=int)
        self._last_cycle = None
        self.sources = Arbiter(source_timeout, what='joint states', source=source)
        self.stale_states = 0           # states older than state_timeout on arrival
        self._skipping = False          # the newest state was stale on arrival
        self._unjudged = None           # the time of the state held if no clock judged it yet
        self._silence = 0.0             # the longest no_state elapsed since the newest state
        self._resume = 'first joint state'   # what the next usable state ends, in words

    @property
    def source(self):
        """Return the followed source of joint states (None: not chosen yet)."""
        return self.sources.followed

    @property
    def ignored_states(self):
        """Return how many states came from sources not followed."""
        return self.sources.ignored

    @property
    def source_changes(self):
        """Return how many sources of states were taken after the first."""
        return self.sources.changes

    # ---- states and cycles ----------------------------------------------------------------------

    def update(self, t, q, qd, source=None, now=None):
        """
        Take the state ``(q, qd)`` measured at ``t`` [s] by ``source`` and run its cycle.

        Returns the :class:`Cycle`: its command answers this state. A state that is not used
        (a non-finite value; a repeat of the newest; another source's; stale on arrival) gets
        no command. ``now`` [s]: the states' clock as the state arrives, where it is known
        apart from the states (simulated time: ``/clock``); a state older than
        ``state_timeout`` then is stale, and not used (:attr:`stale_states`): a simulator's
        history, which a controller that starts beside a running simulation receives first. A
        state taken before the clock was known, which the clock then shows stale, is not held
        either: its goals end and the controller waits for a fresh state.
        """
        taken, events = self._take(t, q, qd, source, now)
        if not taken:
            return self._nothing(t, events)
        cycle = self.cycle(t)
        return cycle._replace(events=events + cycle.events)

    def observe(self, t, q, qd, source=None, now=None):
        """Keep the state ``(q, qd)`` measured at ``t`` by ``source``; return the events."""
        return self._take(t, q, qd, source, now)[1]

    def cycle(self, t):
        """
        Run a control cycle at time ``t`` [s] on the newest state; return the :class:`Cycle`.

        ``t`` is the newest state's time (a controller driven by its states) or later (a timer's
        time on the states' clock: the reference is sampled there). Nothing is sent before the
        first state or in safe mode. A failing law or follower gives the safe command instead,
        a ``FAULT`` event and the goal aborted with the reason (:meth:`fault`).
        """
        if self.mode in (Mode.WAITING, Mode.SAFE):
            return self._nothing(t, [])
        if self._last_cycle is not None:
            gap = (t - self._last_cycle) / self.period
            if gap > MISSED_GAP:
                self.missed_cycles += int(round(gap)) - 1
        self._last_cycle = t
        q, qd = self.q, self.qd
        space, events = self._space, []
        try:
            reference, ended = space.follower.update(t, q, qd)
            events += ended
            values, requested, saturated, said = space.command(t, q, qd, reference)
            events += said
        except Exception as exc:  # noqa: B902 - whatever failed, the drives get the safe command
            failed = self.fault(f'control cycle failed: {type(exc).__name__}: {exc}')
            return failed._replace(events=events + failed.events)
        self.cycles += 1
        self.saturated_cycles += saturated
        self.mode = Mode.TRAJECTORY if space.follower.active is not None else Mode.HOLD
        return Cycle(t, self.mode, values, reference, q, qd, requested, saturated, events)

    def no_state(self, elapsed, wall_elapsed=None):
        """
        Say that ``elapsed`` [s] passed since the newest state; return the :class:`Cycle`.

        ``elapsed`` is measured on the states' clock. On wall time that is all; on simulated
        time a host that stalls stops the clock too (not a fault), and so does a simulator that
        died, which ``wall_elapsed`` [s], the wall time since the newest state arrived, still
        shows (stale beyond ``wall_state_timeout``). Stale states enter the safe mode (once: a
        ``SAFE_MODE`` event, goals ``STOPPED``) and every call while they stay stale returns the
        safe command; otherwise nothing is sent.
        """
        if not math.isfinite(elapsed):
            raise InputError(f'elapsed: expected a finite time in seconds, got {elapsed!r}')
        if self.mode is Mode.WAITING:
            return self._nothing(self.time, [])
        t = self.time + max(0.0, elapsed)
        stale = elapsed > self.state_timeout
        reason = f'no joint state for {self.state_timeout:g} s'
        if wall_elapsed is not None and wall_elapsed > self.wall_state_timeout:
            stale = True
            reason = (f'no joint state for {self.wall_state_timeout:g} s of wall time (their '
                      'clock stopped with them)')
        if not stale:
            return self._nothing(t, [])
        events = []
        self._silence = max(self._silence, elapsed, wall_elapsed or 0.0)
        if self.mode is not Mode.SAFE:
            self.mode = Mode.SAFE
            self._resume = 'joint states are back'
            events.append(Event(Kind.SAFE_MODE, f'{reason}: safe mode '
                                                f'({self._safe_words()}) until they return'))
            events += self._end_goals(t, 'joint states stopped: safe mode')
        return self._safe(t, events)

    def fault(self, reason):
        """
        Give up the cycle at the newest state's time for ``reason``; return the safe command.

        For a failure the caller met around the controller as well (a command that could not be
        built or sent). The running goal is aborted with ``reason``, the next state is held
        where it is, and a ``FAULT`` event says why.
        """
        t = self.time
        events = [Event(Kind.FAULT, f'{reason}; sent the safe command ({self._safe_words()})')]
        if self.mode is Mode.WAITING:
            return self._safe(t, events)
        events += self._end_goals(t, reason)
        # the next state starts from a reference known to be sane: where the arm is then
        self.mode = Mode.SAFE
        self._resume = 'after the failed cycle'
        return self._safe(t, events)

    def final_command(self, reason='the controller stops'):
        """Return the :class:`Cycle` of the last command to send when stopping; goals end."""
        t = self.time
        events = [] if self.mode is Mode.WAITING else self._end_goals(t, reason)
        return self._safe(t, events)

    def safe_command(self):
        """Return the safe command (n,) for the newest state, or None if there is none to send."""
        if self.interface is Interface.VELOCITY:
            return np.zeros(self.model.dof)
        if self.interface is Interface.POSITION:
            return None if self.q is None else self.q.copy()
        if self.safe_mode is SafeMode.ZERO_EFFORT or self.q is None:
            return np.zeros(self.model.dof)
        limit = self.model.effort_limit
        return np.clip(self.model.gravity_torques(self.q), -limit, limit)

    # ---- goals and gains ------------------------------------------------------------------------

    def prepare(self, goal):
        """
        Return ``goal`` with its start time and its trajectory from the reference in force.

        Changes nothing, so it can run outside the control cycle (the node calls it off the
        cycle's lock, so that a long goal's spline costs no cycle); :meth:`submit` then only
        takes it, or its refusal, unless the reference changed meanwhile. Before the first state
        it is built when submitted, and so it is again when the joint reference restarted where
        the arm is meanwhile (a joint goal in task space).
        """
        time = self.time
        if time is None:
            return goal
        return self.follower.prepare(goal, time)

    def submit(self, goal):
        """
        Take ``goal`` (a :class:`~robot_dynamics.follower.Goal`); return the events.

        A ``start_time`` of None starts it at the newest state's time. Without fresh states
        (``waiting``, ``safe``) it ends at once as ``INVALID``; a goal that breaks a limit ends
        as ``INVALID`` or ``OLD_START_TIME``; otherwise a ``GOAL_ACCEPTED`` event, and a goal
        waiting for its start that it replaces ends as ``PREEMPTED``.
        """
        if self.mode in (Mode.WAITING, Mode.SAFE):
            return [Event(Kind.GOAL_ENDED, f'the controller is {self.mode.value}: no fresh joint '
                                           'states', goal.tag, Outcome.INVALID)]
        left = self._switch(self._joints)
        events = self.follower.submit(goal, self.time)
        if any(e.tag is goal.tag for e in events):
            self._restore(left)
            return events
        events += self._preempted(left, 'preempted by a joint goal')
        times = np.asarray(goal.time_from_start, dtype=float)
        delay = 0.0 if goal.start_time is None else goal.start_time - self.time
        when = 'now' if delay <= 0.0 else f'in {delay:.3f} s'
        return [Event(Kind.GOAL_ACCEPTED, f'accepted: {len(times)} points over '
                                          f'{times[-1]:.3f} s, starting {when}', goal.tag)] \
            + (events)

    def judge(self, goal, q=None):
        """
        Return ``goal`` judged against the arm, ready for :meth:`take`; changes nothing.

        ``goal``: a joint :class:`~robot_dynamics.follower.Goal` (its trajectory from the
        reference in force, :meth:`prepare`: a refusal comes from :meth:`take`), a
        :class:`~robot_dynamics.cartesian_follower.CartesianGoal` or a target pose (4, 4) (their
        motion's reach and limits from the arm at rest at ``q``, the newest state's by default:
        ``InputError`` if not). The costly part of taking a goal, for a caller to run outside
        the control cycle.
        """
        if isinstance(goal, Goal):
            return self.prepare(goal)
        q = self.q if q is None else q
        if q is None:
            raise InputError('no joint state yet: nothing can move')
        check_reach(self.model, goal if isinstance(goal, CartesianGoal) else
                    (goal, (self.max_linear_velocity, self.max_angular_velocity)), q)
        return goal

    def take(self, goal, *, judged=False):
        """
        Take a joint goal, a Cartesian goal or a target pose (see :meth:`judge`); the events.

        :meth:`submit`, :meth:`submit_cartesian` or :meth:`set_target` (``InputError`` for a
        target that cannot be followed), the reach checked here unless ``judged``.
        """
        if isinstance(goal, Goal):
            return self.submit(goal)
        if isinstance(goal, CartesianGoal):
            return self.submit_cartesian(goal, check=not judged)
        return self.set_target(goal, check=not judged)

    def cancel(self, tag):
        """End the goal ``tag`` at the newest state's time (a running one stops smoothly)."""
        return self._space.follower.cancel(tag, self.time)

    @property
    def goals(self):
        """Return the tags of the goal waiting for its start and of the running one (if any)."""
        return self._space.follower.goals()

    @property
    def followed(self):
        """Return the follower in force: :attr:`follower` (joint space) or :attr:`cartesian`."""
        return self._space.follower

    # ---- task space -----------------------------------------------------------------------------

    def set_task_law(self, task_law):
        """Use ``task_law`` (an OperationalSpace law) for Cartesian goals from the next cycle."""
        self.task_law = task_law
        # built where task space begins (its posture), and again for a new law after that
        self._task_compute = None if task_law is None or self._posture is None else \
            self._posture_law().for_one_state()

    def submit_cartesian(self, goal, *, check=True):
        """
        Take a :class:`~robot_dynamics.cartesian_follower.CartesianGoal`; return the events.

        It preempts whatever runs, joint goals included, once it is checked (reach, limits:
        ``INVALID`` with the reason, and nothing changes; ``check`` False: the caller checked
        it, :func:`~robot_dynamics.cartesian_follower.check_reach`); it starts at its start
        time (None: the newest state's) from the reference in force. After it the arm holds
        compliantly (the task law about the last reference pose, the null space at the posture).
        """
        refused = self._task_refusal()
        if refused:
            return [Event(Kind.GOAL_ENDED, refused, goal.tag, Outcome.INVALID)]
        left = self._switch(self._task)
        events = self.cartesian.submit(goal, self.time, self.q, check=check)
        if any(e.tag is goal.tag for e in events):
            self._restore(left)
            return events
        accepted = Event(Kind.GOAL_ACCEPTED, f'accepted: a Cartesian goal of '
                                             f'{len(goal.time_from_start)} points over '
                                             f'{self.cartesian.motion.duration:.3f} s', goal.tag)
        return [accepted] + events + self._preempted(left, 'preempted by a Cartesian goal')

    def set_target(self, pose, *, check=True):
        """
        Move the tip to ``pose`` (4, 4) within the speed limits, then hold; return the events.

        Raises ``InputError`` naming the problem (no fresh states, out of reach, beyond the
        limits; ``check`` False: the caller checked the reach) and changes nothing; a running
        goal of either kind ends as ``PREEMPTED``.
        """
        refused = self._task_refusal()
        if refused:
            raise InputError(refused)
        left = self._switch(self._task)
        try:
            events = self.cartesian.target(pose, self.time, self.max_linear_velocity,
                                           self.max_angular_velocity, self.q, check=check)
        except InputError:
            self._restore(left)
            raise
        return events + self._preempted(left, 'preempted by a Cartesian goal')

    def _task_refusal(self):
        if self.mode in (Mode.WAITING, Mode.SAFE):
            return f'the controller is {self.mode.value}: no fresh joint states'
        if self.task_law is None or self.interface is not Interface.EFFORT:
            return 'Cartesian goals need the effort interface and a task-space law'
        return ''

    def _switch(self, space, t=None):
        """
        Bring ``space`` in force at ``t`` (the newest state's time), continuing the reference.

        Returns what was left (None: ``space`` was in force): the space, whose goals are still
        to end (:meth:`_preempted`), and its figures, or :meth:`_restore` brings both back (a
        refused goal changes nothing).
        """
        if space is self._space:
            return None
        left = (self._space, self.condition_number, self._near_singularity)
        t = self.time if t is None else t
        space.follower.take_over(self._space.follower.handover(t, self.q), t)
        self._space = space
        space.start()
        return left

    def _restore(self, left):
        """Undo :meth:`_switch`: what was left is in force again, its reference unchanged."""
        if left is not None:
            self._space, self.condition_number, self._near_singularity = left

    @staticmethod
    def _preempted(left, message):
        """End the goals of the space left by :meth:`_switch` (``PREEMPTED``); the events."""
        return [] if left is None else left[0].follower.drop(Outcome.PREEMPTED, message)

    def _start_joints(self):
        """Joint space begins: no task-space figures."""
        #: The task law's condition number of the controlled rows of J at the newest cycle in
        #: task space (nan before the first, and in joint space).
        self.condition_number = math.nan
        self._near_singularity = False

    def _start_task(self):
        """Task space begins: the null space holds the posture where the arm is now."""
        self._start_joints()
        self._posture = self.q.copy()
        self.set_task_law(self.task_law)

    def _joint_command(self, t, q, qd, reference):
        """Return the joint reference's command: the law's effort, or the drives' reference."""
        if self.interface is Interface.EFFORT:
            command = self._compute(t, q, qd, reference)
            return command.tau, command.tau_requested, command.saturated, []
        values = reference.q if self.interface is Interface.POSITION else \
            reference.qd + self.velocity_feedback * (reference.q - q)
        return values, values, np.zeros(self.model.dof, dtype=bool), []

    def _task_command(self, t, q, qd, reference):
        """Return the tip reference's command: the task law's effort and its singularity."""
        command = self._task_compute(t, q, qd, reference)
        return (command.tau, command.tau_requested, command.saturated,
                self._singularity_events(command))

    @property
    def near_singularity(self):
        """Return whether the task law damped its inverse at the newest cycle in task space."""
        return self._near_singularity

    def _posture_law(self):
        """Return the task law, its posture where the Cartesian motion started if it has none."""
        law = self.task_law
        return law if law.posture is not None else law.with_gains(posture=self._posture)

    def _singularity_events(self, command):
        """Say once when the task law starts (and stops) damping near a singularity."""
        near = bool(command.near_singularity)
        self.condition_number = float(command.condition_number)
        if near == self._near_singularity:
            return []
        self._near_singularity = near
        words = ('near a singularity: the task inertia is damped' if near else
                 'away from the singularity again')
        return [Event(Kind.NEAR_SINGULARITY, f'{words} (condition number '
                                             f'{float(command.condition_number):.3g})')]

    def set_law(self, law):
        """
        Use ``law`` from the next cycle on (new gains: see ``law.with_gains``).

        Raises ``InputError`` for gains the loop cannot bear at its rate (:meth:`check_gains`);
        the law in use stays.
        """
        if law is not None:
            self.check_gains(law)
        self.law = law
        # the law's fast path for one state: the states are checked here, once
        self._compute = None if law is None else law.for_one_state()

    def check_gains(self, law):
        """Raise ``InputError`` for gains this arm's loop cannot bear (:mod:`.gains`)."""
        if self._inertia is None:
            self._inertia = gains.inertia_range(self.model)
        gains.check_gains(self.model, law, self.period, self._inertia)

    def warm_up(self):
        """Run every kernel of a cycle and of the safe command once, on a scratch copy."""
        self.model.warm_up()
        scratch = Controller(self.model, copy.copy(self.law), interface=self.interface,
                             safe_mode=SafeMode.GRAVITY_COMPENSATION, rate_hz=1.0 / self.period,
                             stop_time=self.follower.stop_time)
        q = middle(self.model.lower, self.model.upper)
        scratch.update(0.0, q, np.zeros_like(q))
        scratch.no_state(1.0)
        if self.task_law is not None:
            zero = np.zeros(6)
            self.task_law.for_one_state()(0.0, q, np.zeros_like(q),
                                          (self.model.fk(q), zero, zero))

    # ---- internals ------------------------------------------------------------------------------

    def _take(self, t, q, qd, source, now):
        """Keep a usable state as the newest: ``(taken, events)``."""
        q = np.asarray(q, dtype=float)
        qd = np.asarray(qd, dtype=float)
        n = self.model.dof
        if q.shape != (n,) or qd.shape != (n,):
            return False, [Event(Kind.STATE_REJECTED, f'a state of {q.size} positions and '
                                                      f'{qd.size} velocities for {n} joints')]
        finite = np.isfinite(q) & np.isfinite(qd)
        if not (finite.all() and math.isfinite(t)):
            j = int(np.argmin(finite))
            return False, [Event(Kind.STATE_REJECTED, f'joint {self.model.joint_names[j]!r}: '
                                                      f'position {q[j]}, velocity {qd[j]} at '
                                                      f't = {t}: values must be finite')]
        followed = self.source
        follow, events = self.sources.offer(
            source, self._silence, idle=lambda: self.mode in (Mode.WAITING, Mode.SAFE)
            and bool(np.all(np.abs(qd) <= REST_VELOCITY)))
        if not follow:
            return False, events
        if self.source != followed and followed is not None:
            self.time = self._last_cycle = None     # a new source, a new clock
        if self._unjudged is not None and now is not None:
            if now - self._unjudged > self.state_timeout:
                # the state held was taken before the clock came, from a history delivered
                # late: the arm is no longer where it was then, and what was held there is not
                # held. (Live states may have come before the clock too, interleaved with that
                # history: the newest state is no judge.)
                events += self._end_goals(self.time, 'the state held was stale')
                self.mode = Mode.WAITING
                self._resume = 'first fresh joint state'
                self._last_cycle = None
            self._unjudged = None
        if now is not None and now - t > self.state_timeout:
            self.stale_states += 1
            if self._skipping:
                return False, events
            self._skipping = True
            return False, events + [Event(Kind.STALE_STATES, (
                f'skipping joint states older than the clock by more than '
                f'{self.state_timeout:g} s (the first: t = {t:.3f} s, at {now:.3f} s): a '
                'history delivered late, as to a controller started beside a running '
                'simulation'))]
        self._skipping = False
        self._silence = 0.0
        if self.time is not None and t <= self.time:
            if t == self.time:
                return False, []          # a repeat: answered already
            # a simulation started again: a new arm on a new clock
            events += self._end_goals(self.time, "the states' clock went back")
            self.mode = Mode.WAITING
            self._resume = f"the states' clock went back {self.time - t:.6g} s"
            self._last_cycle = None
        elif self.time is not None and self.mode not in (Mode.WAITING, Mode.SAFE):
            events += self._jumped(t, q)
        self.time, self.q, self.qd = float(t), q, qd
        if self.mode in (Mode.WAITING, Mode.SAFE):
            events.append(Event(Kind.HOLDING, f'{self._resume}: holding '
                                              f'{np.round(q, 4).tolist()}'))
            self.follower.hold(q, t)
            self._unjudged = t if now is None else None
            if self.law is not None and self.law.law is Law.PID:
                self.law.reset()        # an integral of errors from before the gap
            elif self.law is not None and self.law.law is Law.ADAPTIVE:
                self.law.restart()      # what it learned holds; the gap is no time to adapt in
            self.mode = Mode.HOLD
        return True, events

    def _jumped(self, t, q):
        """End the goals of a state that jumped (see the module docstring); return the events."""
        step = np.abs(q - self.q)
        excess = step - (JUMP_SPEED * self.model.velocity_limit * (t - self.time)
                         + JUMP_TOLERANCE)
        j = int(np.argmax(excess))
        if not excess[j] > 0.0:
            return []
        why = (f'joint {self.model.joint_names[j]!r} jumped {step[j]:.4g} in {t - self.time:.4g} '
               f's, beyond twice its velocity limit {self.model.velocity_limit[j]:g}: a reset or '
               'a measurement fault')
        events = [Event(Kind.STATES_JUMPED, why)] + self._end_goals(self.time, why)
        self.mode = Mode.WAITING
        self._resume = why
        self._last_cycle = None
        return events

    def _end_goals(self, t, reason):
        """End every goal (``STOPPED``) and bring the reference to rest; return the events."""
        followed = self._space.follower
        try:
            ended = followed.stop(t, reason)
        except Exception:  # noqa: B902 - a follower that failed: end its goals without it
            ended = followed.drop(Outcome.STOPPED, reason)
            followed.take_over(TrajectoryPoint.at_rest(self.q), t)
        # what the controller holds after a fault or a gap: the joint reference, as ever
        self._switch(self._joints, t)
        return ended

    def _safe(self, t, events):
        command = self.safe_command()
        if command is None:
            return self._nothing(t, events)
        q = self.q if self.q is not None else np.zeros(self.model.dof)
        return Cycle(t, self.mode, command, TrajectoryPoint.at_rest(q), self.q, self.qd,
                     command, np.zeros(self.model.dof, dtype=bool), events)

    def _safe_words(self):
        if self.interface is Interface.EFFORT:
            return self.safe_mode.value.replace('_', ' ')
        return ('zero velocity' if self.interface is Interface.VELOCITY
                else 'the last measured position')

    def _nothing(self, t, events):
        return Cycle(t, self.mode, None, None, None, None, None, None, events)


class StateWatch:
    """
    The controller's watchdog: how long since the newest state, for :meth:`Controller.no_state`.

    On wall time (``sim_time`` False) the ``clock`` [s, monotonic] since the newest state was
    taken. On simulated time the states' clock (``now`` [s], ``/clock``) since its stamp, and
    the wall time since it arrived in which this process ran
    (:class:`~robot_dynamics.awake.AwakeTime`): a dead simulator stops its clock too. The
    caller looks (:meth:`look`) every :attr:`period` [s] or sooner, and says when a state was
    taken (:meth:`taken`).
    """

    def __init__(self, controller, sim_time, clock=time.monotonic):
        self.controller, self.sim_time, self.clock = controller, sim_time, clock
        timeout = min(controller.state_timeout, controller.wall_state_timeout) if sim_time \
            else controller.state_timeout
        self.period = timeout / WATCHDOG_LOOKS
        self._awake = AwakeTime(self.period, clock)
        self._received = None

    def taken(self):
        """Say that the controller took its newest state now."""
        self._received = self.clock()
        self._awake.restart(self._received)

    def elapsed(self, now=None):
        """Return the time [s] since the newest state on the states' clock (``now``: its time)."""
        if self.sim_time:
            return now - self.controller.time
        return self.clock() - self._received

    def look(self, now=None):
        """Return the controller's :meth:`~Controller.no_state` cycle now (``now`` as above)."""
        wall = self._awake.look() if self.sim_time else None
        return self.controller.no_state(self.elapsed(now), wall)


class Cycling:
    """
    The controller node's loop over a port: joint states in; commands and reports out.

    What the controller node runs in its cycle's thread, and a test's graph on a clock of its own
    (as :class:`~robot_dynamics.simulator.Stepping` is the simulator's). Each usable joint state
    (:meth:`state`) is answered at once (``trigger`` ``'state'``) or kept for the timer's
    cycles (:meth:`tick`, ``'timer'``); the watchdog (:class:`StateWatch`, on ``clock``) answers
    :meth:`look`; whatever fails on the way gives the safe command (:meth:`Controller.fault`).
    The ``port`` moves messages and makes no decision:

    - ``send_command(cycle)``: send the cycle's command (n,) in model order;
    - ``publish_state(cycle)``, ``publish_tip(cycle)``, ``publish_feedback(cycle, goal)``: the
      controller's state, its tip's state and the running ``goal``'s feedback (a goal with a
      tag), each on a grid of the states' clock (``rates``: ``(state, tip, feedback)`` [Hz],
      0: none); the state also at once when the mode changes, the tip's not in safe mode;
    - ``report(events)``.

    ``sim_time``: the states are on simulated time (:class:`StateWatch`); the times ``now`` [s]
    given below are the node's clock (``/clock`` there), unused on wall time.
    """

    def __init__(self, controller, port, *, sim_time, trigger=Trigger.STATE,
                 rates=(DEFAULT_STATE_RATE_HZ, DEFAULT_TIP_RATE_HZ, DEFAULT_FEEDBACK_RATE_HZ),
                 clock=time.monotonic):
        self.controller, self.port = controller, port
        self.trigger = choice(trigger, Trigger, 'trigger')
        self.watch = StateWatch(controller, sim_time, clock)
        self._state_grid, self._tip_grid, self._feedback_grid = (Grid(r) for r in rates)
        self._published_mode = None

    def state(self, t, q, qd, source=None, now=None):
        """Take the state ``(q, qd)`` measured at ``t`` by ``source`` (``Controller.update``)."""
        c = self.controller
        if self.trigger is Trigger.STATE:
            self._run(c.update, t, q, qd, source, now)
        else:
            self.port.report(c.observe(t, q, qd, source, now))
        if c.time == t:
            self.watch.taken()

    def tick(self, now=None):
        """Run the timer's cycle on the newest state, at its time plus the time since."""
        c = self.controller
        if c.time is not None:
            self._run(c.cycle, c.time + max(0.0, self.watch.elapsed(now)))

    def look(self, now=None):
        """Look at the states' age (every :attr:`StateWatch.period` or sooner)."""
        if self.controller.time is not None:
            self._run(self.watch.look, now)

    def send(self, cycle):
        """Send a cycle's command and publish what is due; report its events."""
        port = self.port
        if cycle.command is not None:
            port.send_command(cycle)
            if self._state_grid.due(cycle.t, now=cycle.mode is not self._published_mode):
                self._published_mode = cycle.mode
                port.publish_state(cycle)
            if cycle.mode is not Mode.SAFE and self._tip_grid.due(cycle.t):
                port.publish_tip(cycle)
            goal = self.controller.followed.active
            # (a goal from a topic has no tag: no client to tell)
            if goal is not None and goal.tag is not None and self._feedback_grid.due(cycle.t):
                port.publish_feedback(cycle, goal)
        port.report(cycle.events)

    def _run(self, step, *args):
        """Send what ``step(*args)`` gives; anything that fails on the way: the safe command."""
        try:
            self.send(step(*args))
        except Exception as exc:  # noqa: B902 - the loop goes on; the drives get the safe command
            cycle = self.controller.fault(f'control cycle failed in the node: '
                                          f'{type(exc).__name__}: {exc}')
            try:
                if cycle.command is not None:
                    self.port.send_command(cycle)
            finally:
                self.port.report(cycle.events)


def configured_controller(model, law, parameter, *, interface='effort', task_law=None):
    """
    Return the :class:`Controller` of ``model`` and ``law`` that the controller node describes.

    ``parameter(name, default)`` gives the node's ``safe_mode``, ``state_timeout``,
    ``wall_state_timeout``, ``rate_hz``, ``velocity_feedback``, ``stop_time``,
    ``cartesian.max_linear_velocity`` and ``cartesian.max_angular_velocity``. The node and
    :func:`~robot_dynamics.closed_loop.graph_loop` both build the controller here.
    """
    return Controller(
        model, law, interface=interface, task_law=task_law,
        safe_mode=parameter('safe_mode', SafeMode.ZERO_EFFORT.value),
        state_timeout=parameter('state_timeout', DEFAULT_STATE_TIMEOUT),
        wall_state_timeout=parameter('wall_state_timeout', DEFAULT_WALL_STATE_TIMEOUT),
        rate_hz=parameter('rate_hz', DEFAULT_RATE_HZ),
        velocity_feedback=parameter('velocity_feedback', DEFAULT_VELOCITY_FEEDBACK),
        stop_time=parameter('stop_time', DEFAULT_STOP_TIME),
        max_linear_velocity=parameter('cartesian.max_linear_velocity',
                                      DEFAULT_MAX_LINEAR_VELOCITY),
        max_angular_velocity=parameter('cartesian.max_angular_velocity',
                                       DEFAULT_MAX_ANGULAR_VELOCITY))


def configured_cycling(controller, port, parameter, *, sim_time, clock=time.monotonic):
    """
    Return the :class:`Cycling` of ``controller`` over ``port`` that the controller node runs.

    ``parameter(name, default)`` gives the node's ``trigger``, ``state_publish_rate_hz``,
    ``cartesian.state_publish_rate_hz`` and ``action_monitor_rate_hz``.
    """
    return Cycling(controller, port, sim_time=sim_time,
                   trigger=parameter('trigger', Trigger.STATE.value),
                   rates=(parameter('state_publish_rate_hz', DEFAULT_STATE_RATE_HZ),
                          parameter('cartesian.state_publish_rate_hz', DEFAULT_TIP_RATE_HZ),
                          parameter('action_monitor_rate_hz', DEFAULT_FEEDBACK_RATE_HZ)),
                   clock=clock)


__all__ = ['configured_controller', 'configured_cycling', 'Controller', 'Cycle', 'Cycling',
           'Event', 'Goal', 'Kind', 'Mode', 'SafeMode', 'StateWatch', 'Trigger']
