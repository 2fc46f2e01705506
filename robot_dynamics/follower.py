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
Following joint trajectories in time: the reference that a joint controller tracks.

The goal semantics of ros2_controllers' joint_trajectory_controller, without ROS, so that the
controller node only converts messages:

- Without a goal the reference holds a position (:meth:`TrajectoryFollower.hold`).
- A goal (:class:`Goal`: points with times from its start, tolerances) is checked when it is
  submitted and waits until its start time; then it replaces whatever runs (that goal ends as
  ``PREEMPTED``). Its trajectory starts from the reference in force at its start time, or when
  it was submitted if that is later (position, velocity, and acceleration for a goal of
  positions only), so a goal whose first point is not where the arm is, or that preempts a
  motion under way, continues smoothly; points whose time has already passed are dropped, and
  so is the next one when less than half of its interval is left (a goal that starts late joins
  its path at the point after, not through a segment of a fraction of a millisecond).
- That trajectory can be built and checked away from the control cycle
  (:meth:`TrajectoryFollower.prepare`, e.g. in a thread that receives goals): the goal then
  carries it (:class:`Joined`), and submitting or starting it costs the cycle nothing as long as
  the reference it joins is still the one in force; otherwise it is built again when needed.
- While a goal runs, the tracking error is checked against its path tolerances; after its last
  point, against its goal tolerances until they hold (``SUCCEEDED``) or ``goal_time`` has
  passed (``GOAL_TOLERANCE_VIOLATED``; ``goal_time`` 0 waits indefinitely). A violated path
  tolerance, a cancel or a stop from outside bring the reference to rest smoothly (constant
  deceleration over ``stop_time``) and hold there.

Both followers of a controller, this one and the task-space
:class:`~robot_dynamics.cartesian_follower.CartesianFollower`, keep one protocol
(:class:`Follower`), so that the controller runs either without asking which it has.

Times are seconds on the controller's clock; joint arrays are (n,) in model order.
"""

from typing import NamedTuple, Optional, Protocol

import numpy as np

from .errors import InputError
from .events import Event, Outcome
from .trajectory import check_duration, check_limits, from_waypoints

#: Default time [s] to bring a motion to rest after a cancel or an abort.
DEFAULT_STOP_TIME = 0.25
#: Default largest velocity [rad/s or m/s] at which a joint counts as stopped at the goal.
DEFAULT_STOPPED_VELOCITY = 0.01
#: A goal taken at most this long [s] after the time its trajectory was built from (a cycle or
#: two at 1 kHz) is sampled from there, as ros2_controllers' JTC samples a trajectory from its
#: start; one taken later (a stalled state stream) joins the reference again where it is then.
ON_TIME = 0.002


class Tolerances(NamedTuple):
    """
    Tracking limits of a goal on the reference minus the measured state; inf: unchecked.

    Per joint (n,), in rad and rad/s (m and m/s for prismatic joints). ``path_*`` apply while the
    goal moves, ``goal_*`` after its last point (the reference is then at rest, so
    ``goal_velocity`` says how still the arm must be); ``goal_time`` [s] is how long after the
    last point the goal tolerances may take to hold (0: no limit). Joint states carry no
    accelerations, so accelerations are not checked.
    """

    path_position: np.ndarray
    path_velocity: np.ndarray
    goal_position: np.ndarray
    goal_velocity: np.ndarray
    goal_time: float = 0.0

    @classmethod
    def from_constraints(cls, joint_names, parameter):
        """
        Return the tolerances of goals that give none, from the ``constraints`` parameters.

        The parameters of ros2_controllers' joint_trajectory_controller: ``parameter(name,
        default)`` gives ``constraints.<joint>.trajectory`` and ``.goal``
        [rad or m], ``constraints.stopped_velocity_tolerance`` [rad/s or m/s] (0 in any of them:
        unchecked) and ``constraints.goal_time`` [s]. The controller node and the library's loop
        (:func:`robot_dynamics.closed_loop.graph_loop`) both read them here.
        """
        def bound(name, default=0.0):
            value = float(parameter(name, default))
            return value if value > 0.0 else np.inf
        n = len(joint_names)
        return cls(np.array([bound(f'constraints.{j}.trajectory') for j in joint_names]),
                   np.full(n, np.inf),
                   np.array([bound(f'constraints.{j}.goal') for j in joint_names]),
                   np.full(n, bound('constraints.stopped_velocity_tolerance',
                                    DEFAULT_STOPPED_VELOCITY)),
                   float(parameter('constraints.goal_time', 0.0)))

    @classmethod
    def unchecked(cls, n, stopped_velocity=DEFAULT_STOPPED_VELOCITY):
        """Check nothing but that the arm has stopped at the end (``|qd| <= stopped_velocity``)."""
        inf = np.full(n, np.inf)
        return cls(inf, inf, inf, np.full(n, float(stopped_velocity)), 0.0)


class StartTimePassed(InputError):
    """Every point of a goal is due before the time it would start."""


class Goal(NamedTuple):
    """
    A trajectory to follow: ``positions`` (K, n) at ``start_time + time_from_start`` (K,).

    ``velocities`` and ``accelerations`` (K, n) are optional (see
    :func:`robot_dynamics.trajectory.from_waypoints`). ``tag`` is the caller's handle of the goal
    (e.g. an action goal handle), returned with its outcome.
    """

    tag: object
    start_time: float
    time_from_start: np.ndarray
    positions: np.ndarray
    velocities: Optional[np.ndarray]
    accelerations: Optional[np.ndarray]
    tolerances: Tolerances
    joined: Optional['Joined'] = None

    def point_index(self, t):
        """
        Return the index of the point whose segment is followed at ``t`` [s].

        The last point whose time has come (0 before the first), as joint_trajectory_controller
        numbers the point in use in its feedback.
        """
        times = self.start_time + np.asarray(self.time_from_start, dtype=float)
        return max(int(np.searchsorted(times, t, side='right')) - 1, 0)


class Joined(NamedTuple):
    """
    A goal's trajectory built from ``reference`` (the trajectory in force when it was built).

    ``error`` is the InputError that building or checking it raised (``trajectory`` None).
    """

    reference: object
    trajectory: object
    error: Optional[InputError] = None
    now: bool = False       # the goal had no start time: it starts when it is taken


class Follower(Protocol):
    """
    A reference that a controller follows, in joint space or in task space, with its goals.

    The controller measures joint states ``(q, qd)`` (n,) and asks:

    - :meth:`update` ``(t, q, qd)``: ``(reference, events)``, the reference at ``t`` and the
      events of its goals (started, succeeded, a tolerance violated);
    - :meth:`goals`: the tags of its goals, waiting and running; ``active``: the running one;
    - :meth:`cancel` ``(tag, t)`` and :meth:`stop` ``(t, message)``: goals end, the reference
      comes to rest smoothly; :meth:`drop` ``(outcome, message)``: goals end, the reference
      runs on (another follower takes over);
    - :meth:`handover` ``(t, q)``: the joint-space point (a
      :class:`~robot_dynamics.trajectory.TrajectoryPoint`) from which another follower
      continues at ``t`` (``q``: where the arm is), and :meth:`take_over` ``(point, t)``:
      continue from such a point.
    """

    active: Optional[object]

    def update(self, t, q, qd):
        """Return ``(reference, events)`` at ``t`` from the measured state ``(q, qd)``."""

    def goals(self):
        """Return the tags of the goals, waiting and running."""

    def cancel(self, tag, t):
        """End the goal ``tag`` (brought to rest smoothly); return its events."""

    def stop(self, t, message):
        """Bring the reference to rest smoothly, every goal ``STOPPED``; return the events."""

    def drop(self, outcome, message):
        """End every goal with ``outcome``, the reference unchanged; return the events."""

    def handover(self, t, q):
        """Return the joint-space point at ``t`` from which another follower continues."""

    def take_over(self, point, t):
        """Continue from the joint-space ``point`` at ``t``, at rest when it is (no goal)."""


class TrajectoryFollower:
    """
    The reference of a joint controller: hold, follow goals, stop; one per controller.

    Parameters
    ----------
    model : RobotModel
        Gives the joint limits that goals are checked against.
    stop_time : float
        Time [s] to bring the reference to rest after a cancel, an abort or a stop.

    """

    def __init__(self, model, *, stop_time=DEFAULT_STOP_TIME):
        self.model = model
        self.stop_time = float(stop_time)
        if not self.stop_time > 0.0:
            raise InputError(f'stop_time: expected a positive number of seconds, got {stop_time}')
        self.trajectory = None
        self.active = None          # the running Goal, until it ends
        self.pending = None         # a Goal waiting for its start time

    def hold(self, q, t):
        """Hold the positions ``q`` from time ``t`` on; a running or waiting goal is dropped."""
        q = np.array(q, dtype=float)
        self.trajectory = from_waypoints([0.0], q[None, :], start_time=t)
        self.active = self.pending = None

    def check(self, goal, t, reference=None):
        """
        Return the trajectory of ``goal`` from ``reference`` (the current one by default).

        Raises ``InputError`` if it breaks a limit: its own points first (:func:`check_points`:
        the message names the point the caller wrote), then the motion between them, sampled
        (an excursion of the spline).
        """
        check_points(self.model, goal)
        trajectory = self._build(goal, max(t, goal.start_time), reference)
        check_limits(self.model, trajectory)
        return trajectory

    def prepare(self, goal, t):
        """
        Return ``goal`` carrying its trajectory from the reference in force (:class:`Joined`).

        Changes nothing, so it may run outside the control cycle, at the time ``t`` of the
        newest state; :meth:`submit` then only takes the goal (or its refusal) while that
        reference is still the one in force. A ``start_time`` of None becomes ``t`` (a goal
        that starts when it is taken).
        """
        reference, now = self.trajectory, goal.start_time is None
        if now:
            goal = goal._replace(start_time=t)
        try:
            joined = Joined(reference, self.check(goal, t, reference), now=now)
        except InputError as exc:
            joined = Joined(reference, None, exc, now)
        return goal._replace(joined=joined)

    def submit(self, goal, t):
        """
        Take ``goal``: it starts at its start time, replacing what runs then.

        Returns the events this causes now: the goal itself ``INVALID`` or ``OLD_START_TIME``
        when it cannot run, or the waiting goal it replaces ``PREEMPTED``.
        """
        if self.trajectory is None:
            raise InputError('the follower has no reference yet: call hold() first')
        if not self._joins_now(goal):
            goal = self.prepare(_unjoined(goal), t)
        if goal.joined.error is not None:
            return [_rejected(goal, goal.joined.error)]
        events = []
        if self.pending is not None:
            events.append(Event.goal_ended(self.pending.tag, Outcome.PREEMPTED,
                                           'preempted by a newer goal before it started'))
        self.pending = goal
        return events

    def goals(self):
        """Return the tags of the goal waiting for its start and of the running one."""
        return [g.tag for g in (self.pending, self.active) if g is not None]

    def handover(self, t, q):
        """Return the reference at ``t``: where another follower continues from."""
        return self.trajectory.sample(t)

    def take_over(self, point, t):
        """Hold the position of ``point`` from ``t`` on (the arm is there, at rest)."""
        self.hold(point.q, t)

    def drop(self, outcome, message):
        """End the waiting and the running goal with ``outcome``; the reference runs on."""
        events = [Event.goal_ended(g.tag, outcome, message)
                  for g in (self.pending, self.active) if g is not None]
        self.pending = self.active = None
        return events

    def cancel(self, tag, t):
        """End the goal ``tag`` (running: brought to rest smoothly); return its events."""
        if self.pending is not None and self.pending.tag is tag:
            self.pending = None
            return [Event.goal_ended(tag, Outcome.CANCELED, 'canceled before it started')]
        if self.active is not None and self.active.tag is tag:
            return self._end_active(t, Outcome.CANCELED, 'canceled; stopping')
        return []

    def stop(self, t, message):
        """Bring any motion to rest smoothly and end every goal (``STOPPED``); return events."""
        events = []
        if self.pending is not None:
            events.append(Event.goal_ended(self.pending.tag, Outcome.STOPPED, message))
            self.pending = None
        if self.trajectory is not None:
            events += self._end_active(t, Outcome.STOPPED, message)
        return events

    def update(self, t, q, qd):
        """
        Advance to time ``t`` with the measured state ``(q, qd)``: ``(reference, events)``.

        Starts a waiting goal whose time has come, samples the reference, and checks the
        running goal's tolerances. ``reference`` is a :class:`TrajectoryPoint` of (n,) arrays.
        """
        events = []
        if self.pending is not None and t >= self.pending.start_time:
            events += self._activate(t)
        point = self.trajectory.sample(t)
        goal = self.active
        if goal is None:
            return point, events
        tol = goal.tolerances
        if t < self.trajectory.end_time:
            bad = _violations(point, q, qd, tol.path_position, tol.path_velocity,
                              self.model.joint_names)
            if bad:
                events += self._end_active(t, Outcome.PATH_TOLERANCE_VIOLATED,
                                           f'path tolerance violated: {bad}')
            return point, events
        bad = _violations(point, q, qd, tol.goal_position, tol.goal_velocity,
                          self.model.joint_names)
        if not bad:
            self.active = None
            events.append(Event.goal_ended(goal.tag, Outcome.SUCCEEDED, 'goal reached'))
        elif tol.goal_time > 0.0 and t > self.trajectory.end_time + tol.goal_time:
            self.active = None
            events.append(Event.goal_ended(goal.tag, Outcome.GOAL_TOLERANCE_VIOLATED,
                                           f'goal tolerance violated {tol.goal_time:g} s after '
                                           f'the last point: {bad}'))
        return point, events

    # ---- internals ------------------------------------------------------------------------------

    def _joins_now(self, goal):
        """Return whether ``goal`` carries a trajectory from the reference in force."""
        return goal.joined is not None and goal.joined.reference is self.trajectory

    def _taken(self, goal, t):
        """Return the trajectory that ``goal`` brought, as it starts at ``t``, or None."""
        if not self._joins_now(goal):
            return None
        trajectory = goal.joined.trajectory
        late = t - trajectory.start_time
        if late <= ON_TIME:
            return trajectory
        if goal.joined.now and trajectory.start_time >= self.trajectory.end_time:
            # from a reference at rest: the same motion as one built now, only later
            return trajectory.shifted(late)
        return None

    def _build(self, goal, t, reference=None):
        """Build the goal's trajectory, started at time ``t`` from ``reference`` (or ours)."""
        times = goal.start_time + np.asarray(goal.time_from_start, dtype=float)
        keep = times > t
        if not keep.any():
            raise StartTimePassed(f'every point of the goal is in the past (its last point was '
                                  f'due {t - times[-1]:.3f} s before it could start)')
        # join the goal no nearer than half of its own interval: started late (a stalled state
        # stream), the segment to a point just ahead would be a fraction of a millisecond long,
        # a velocity spike; the point after it is close to the goal's own path anyway
        first = np.argmax(keep)
        if 0 < first < len(times) - 1 and \
                times[first] - t < 0.5 * (times[first] - times[first - 1]):
            keep[first] = False
        point = (self.trajectory if reference is None else reference).sample(t)
        positions = np.vstack((point.q, goal.positions[keep]))
        times = np.concatenate(([t], times[keep]))
        velocities = accelerations = start_velocity = start_acceleration = None
        if goal.velocities is None:
            start_velocity, start_acceleration = point.qd, point.qdd
        else:
            velocities = np.vstack((point.qd, goal.velocities[keep]))
            if goal.accelerations is not None:
                accelerations = np.vstack((point.qdd, goal.accelerations[keep]))
        return from_waypoints(times - t, positions, velocities, accelerations, start_time=t,
                              start_velocity=start_velocity,
                              start_acceleration=start_acceleration)

    def _activate(self, t):
        goal, self.pending = self.pending, None
        trajectory = self._taken(goal, t)
        if trajectory is None:
            # the reference changed since it was built (a stop, a hold), or it is late: join
            # the reference where it is now
            goal = self.prepare(_unjoined(goal), t)
            if goal.joined.error is not None:
                return [_rejected(goal, goal.joined.error)]
            trajectory = goal.joined.trajectory
        events = []
        if self.active is not None:
            events.append(Event.goal_ended(self.active.tag, Outcome.PREEMPTED,
                                           'preempted by a newer goal'))
        self.trajectory, self.active = trajectory, goal
        return events

    def _end_active(self, t, outcome, message):
        """End the running goal with ``outcome`` and bring the reference to rest."""
        events = ([] if self.active is None
                  else [Event.goal_ended(self.active.tag, outcome, message)])
        self.active = None
        point = self.trajectory.sample(t)
        if np.any(point.qd != 0.0):
            # constant deceleration to rest: the cubic through (q, qd) and (q + qd T / 2, 0)
            end = np.clip(point.q + 0.5 * self.stop_time * point.qd, self.model.lower,
                          self.model.upper)
            self.trajectory = from_waypoints([0.0, self.stop_time], np.vstack((point.q, end)),
                                             np.vstack((point.qd, np.zeros_like(point.qd))),
                                             start_time=t)
        else:
            self.trajectory = from_waypoints([0.0], point.q[None, :], start_time=t)
        return events


def check_points(model, goal):
    """
    Raise ``InputError`` unless the points of ``goal`` keep to the model's limits by themselves.

    Times finite and strictly increasing, the last at most MAX_GOAL_DURATION; positions within
    ``[lower, upper]``; given velocities within ``velocity_limit``. The message names the
    point's index, the joint, the value and the limit: what the caller wrote. Needs no
    reference (it can run before a goal is taken); the motion between the points is
    :meth:`TrajectoryFollower.check`'s.
    """
    times = np.asarray(goal.time_from_start, dtype=float)
    if not np.isfinite(times).all():
        k = int(np.argmin(np.isfinite(times)))
        raise InputError(f'point {k}: time_from_start {times[k]} is not finite')
    step = np.diff(times)
    if (step <= 0.0).any():
        k = int(np.argmax(step <= 0.0)) + 1
        raise InputError(f'point {k}: time_from_start {times[k]:.9g} s is not increasing (point '
                         f'{k - 1}: {times[k - 1]:.9g} s)')
    check_duration(times[-1], f'point {times.size - 1}: time_from_start')
    names = model.joint_names
    q = goal.positions
    outside = (q < model.lower) | (q > model.upper)
    if outside.any():
        k, j = np.argwhere(outside)[0]
        raise InputError(f'point {k}: joint {names[j]!r} position {q[k, j]:.6g} is outside its '
                         f'limits [{model.lower[j]:g}, {model.upper[j]:g}]')
    if goal.velocities is not None:
        fast = np.abs(goal.velocities) > model.velocity_limit
        if fast.any():
            k, j = np.argwhere(fast)[0]
            raise InputError(f'point {k}: joint {names[j]!r} velocity '
                             f'{goal.velocities[k, j]:.6g} is above its limit '
                             f'{model.velocity_limit[j]:g}')


def _unjoined(goal):
    """Return ``goal`` without the trajectory it brought (one for 'now' starts anew)."""
    joined = goal.joined
    if joined is None:
        return goal
    return goal._replace(joined=None, start_time=None if joined.now else goal.start_time)


def _rejected(goal, exc):
    """Return the event of a goal that cannot run."""
    outcome = Outcome.OLD_START_TIME if isinstance(exc, StartTimePassed) else Outcome.INVALID
    return Event.goal_ended(goal.tag, outcome, str(exc))


def _violations(point, q, qd, position, velocity, names):
    """Return the violated tolerances in words ('' when none)."""
    out = []
    for what, error, limit in (('position', point.q - q, position),
                               ('velocity', point.qd - qd, velocity)):
        bad = np.abs(error) > limit
        out += [f'{names[j]} {what} error {error[j]:.3g} > {limit[j]:.3g}'
                for j in np.flatnonzero(bad)]
    return ', '.join(out)
