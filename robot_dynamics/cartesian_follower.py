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
Following Cartesian goals in time: the tip reference that a task-space controller tracks.

The semantics of the joint follower (:mod:`robot_dynamics.follower`) for the tip:

- Without a goal the reference holds a pose, at rest (:meth:`CartesianFollower.hold`).
- A goal (:class:`CartesianGoal`) starts at its start time from the reference in force then
  (pose, twist and acceleration: a goal that preempts a motion under way continues it
  smoothly), as a :class:`~robot_dynamics.cartesian_trajectory.CartesianTrajectory`; it is
  checked when submitted, before anything moves: every pose reachable, the joints within their
  position and velocity limits (:func:`~robot_dynamics.cartesian_trajectory.check_motion`).
- A streamed target (:meth:`CartesianFollower.target`) replaces whatever runs by the
  velocity-limited motion to it (:func:`~robot_dynamics.cartesian_trajectory.to_target`).
- While a goal runs, the tip error is checked against its path tolerances; after its last
  point, against its goal tolerances until they hold (``SUCCEEDED``) or ``goal_time`` has
  passed. A violated path tolerance, a cancel or a stop bring the tip to rest smoothly over
  ``stop_time`` (the twist falls linearly to zero) and hold there.

Times are seconds on the controller's clock; poses (4, 4) in the base frame.
"""

from typing import NamedTuple, Optional

import numpy as np

from .cartesian_trajectory import (CartesianTrajectory, check_motion, quaternions_to_matrices,
                                   to_target, within_reach)
from .errors import InputError
from .follower import DEFAULT_STOP_TIME, Event, Outcome
from .scene import reach
from .spatial import matrix_to_rotvec, rotvec_to_matrix
from .trajectory import check_duration, TaskPoint, TrajectoryPoint


class CartesianTolerances(NamedTuple):
    """
    Limits on the tip error ``reference - actual``; inf: unchecked.

    Position [m] per base axis (3,), orientation [rad] per axis of the rotation vector
    ``rotvec(R_ref R^T)`` (3,) and twist [m/s, rad/s] per component ``vx vy vz wx wy wz``
    (6,; None: unchecked): ``path_*`` while the goal moves, ``goal_*`` after its last point;
    ``goal_time`` [s] after the last point for the goal tolerances to hold (0: no limit).
    """

    path_position: np.ndarray
    path_orientation: np.ndarray
    goal_position: np.ndarray
    goal_orientation: np.ndarray
    goal_time: float = 0.0
    path_twist: Optional[np.ndarray] = None
    goal_twist: Optional[np.ndarray] = None

    @classmethod
    def unchecked(cls):
        """Check nothing."""
        inf = np.full(3, np.inf)
        return cls(inf, inf, inf, inf, 0.0)


class CartesianGoal(NamedTuple):
    """
    Tip poses to pass through at ``start_time + time_from_start`` (K,) [s].

    ``positions`` (K, 3) [m], ``orientations`` (K, 4) unit quaternions ``(x, y, z, w)`` or
    (K, 3, 3); ``twists``, ``accelerations`` (K, 6) optional (see
    :class:`~robot_dynamics.cartesian_trajectory.CartesianTrajectory`); ``start_time`` None:
    the newest state's time. ``tag`` is the caller's handle, returned with the outcome.
    """

    tag: object
    start_time: Optional[float]
    time_from_start: np.ndarray
    positions: np.ndarray
    orientations: np.ndarray
    twists: Optional[np.ndarray] = None
    accelerations: Optional[np.ndarray] = None
    tolerances: CartesianTolerances = CartesianTolerances.unchecked()


def check_goal(goal):
    """
    Raise ``InputError`` naming what is malformed in ``goal`` (a :class:`CartesianGoal`).

    What does not depend on the reference, in time linear in the goal's size (a caller can check
    a goal before it takes the controller's lock): the shapes, finite values, strictly
    increasing times from 0 on, the last at most MAX_GOAL_DURATION, unit quaternions,
    accelerations only with twists. Reach and joint limits need the reference and are checked
    when the goal is submitted.
    """
    times = np.asarray(goal.time_from_start, dtype=float)
    if times.ndim == 1 and times.size and times[0] < 0.0:
        raise InputError(f'time_from_start[0] is {times[0]:g} s: times must be >= 0')
    CartesianTrajectory(times, goal.positions, goal.orientations, goal.twists,
                        goal.accelerations)
    check_duration(times[-1], f'time_from_start[{times.size - 1}]')


def arm_reach(model):
    """
    Return the farthest [m] the tip gets from the base origin.

    :func:`robot_dynamics.scene.reach`, the lengths between joint origins and the prismatic
    strokes; inf when a prismatic joint has an unlimited stroke.
    """
    unlimited = model.is_prismatic & ~np.isfinite(model.upper - model.lower)
    return np.inf if unlimited.any() else reach(model)


def check_reach(model, motion, q):
    """
    Raise ``InputError`` unless ``motion`` from the tip where it is at rest is reachable.

    ``motion`` a :class:`CartesianGoal` or a target pose (4, 4) (with ``(max_linear_velocity,
    max_angular_velocity)`` as ``motion = (pose, limits)``); ``q`` (n,) the measured joint
    positions. The goal's or target's motion from the measured tip at rest is checked as
    :meth:`CartesianFollower.submit` checks it (reach, joint position and velocity limits),
    without the follower: a caller runs this, the costly part, outside its control cycle and
    submits with ``check=False``. A motion that preempts one under way starts with its twist,
    which this check takes as rest.
    """
    start = CartesianFollower(model)
    start.hold(model.fk(q), 0.0)
    if isinstance(motion, CartesianGoal):
        built = start._build(motion._replace(start_time=0.0), 0.0)
    else:
        pose, (linear, angular) = motion
        built = to_target(start.motion.sample(0.0), pose, linear, angular, reach=start.reach)
    check_motion(model, built, q)


class CartesianFollower:
    """
    The tip reference of a task-space controller: hold, follow goals and targets, stop.

    Parameters
    ----------
    model : RobotModel
        Goals are checked on it (reach, joint limits); a goal's point or a target farther from
        the base than ``reach`` (:func:`arm_reach`) is refused before its motion is built.
    stop_time : float
        Time [s] to bring the tip to rest after a cancel, an abort or a stop.

    """

    def __init__(self, model, *, stop_time=DEFAULT_STOP_TIME):
        self.model = model
        self.reach = arm_reach(model)
        self.stop_time = float(stop_time)
        if not self.stop_time > 0.0:
            raise InputError(f'stop_time: expected a positive number of seconds, got {stop_time}')
        self.motion = None
        self.active = None

    def hold(self, pose, t):
        """Hold the tip pose (4, 4) at rest from ``t`` on; a running goal is dropped."""
        pose = np.asarray(pose, dtype=float)
        self.motion = CartesianTrajectory([0.0], pose[None, :3, 3], pose[None, :3, :3],
                                          start_time=t)
        self.active = None

    def goals(self):
        """Return the tag of the running goal, if any (a goal starts when it is submitted)."""
        return [] if self.active is None else [self.active.tag]

    def handover(self, t, q):
        """Return where a joint follower continues from: the arm's position ``q``, at rest."""
        return TrajectoryPoint.at_rest(q)

    def take_over(self, point, t):
        """
        Continue at ``t`` from the joint-space ``point``, brought to rest.

        The tip's pose, twist ``J qd`` and acceleration ``J qdd + Jd qd`` at the point.
        """
        q, qd = point.q, point.qd
        J = self.model.jacobian(q)
        self.active = None
        self._to_rest(TaskPoint(self.model.fk(q), J @ qd,
                                J @ point.qdd + self.model.jacobian_dot(q, qd) @ qd), t)

    def submit(self, goal, t, q, *, check=True):
        """
        Start ``goal`` (at its start time, or ``t`` if None) from the reference; return events.

        ``q`` (n,) seeds the reach check (``check`` False: the caller checked the goal with
        :func:`check_reach`). A goal that cannot run ends at once as ``INVALID`` (or
        ``OLD_START_TIME``) with the reason and nothing changes; else the running goal ends as
        ``PREEMPTED``.
        """
        start = t if goal.start_time is None else float(goal.start_time)
        times = start + np.asarray(goal.time_from_start, dtype=float)
        if times.size and times[-1] <= t:
            return [Event.goal_ended(goal.tag, Outcome.OLD_START_TIME,
                                     f'every point of the goal is in the past (its last point '
                                     f'was due {t - times[-1]:.3f} s ago)')]
        try:
            motion = self._build(goal, max(start, t))
            if check:
                check_motion(self.model, motion, q)
        except InputError as exc:
            return [Event.goal_ended(goal.tag, Outcome.INVALID, str(exc))]
        events = self.drop(Outcome.PREEMPTED, 'preempted by a newer goal')
        self.motion, self.active = motion, goal
        return events

    def target(self, pose, t, max_linear_velocity, max_angular_velocity, q, *, check=True):
        """
        Move to ``pose`` (4, 4) within the speed limits [m/s, rad/s], from the reference at ``t``.

        Replaces what runs (a running goal ends as ``PREEMPTED``); checked as a goal (raises
        ``InputError`` and changes nothing when it cannot run; ``check`` False: the caller
        checked it with :func:`check_reach`). Returns the events.
        """
        motion = to_target(self.motion.sample(t), pose, max_linear_velocity,
                           max_angular_velocity, start_time=t, reach=self.reach)
        if check:
            check_motion(self.model, motion, q)
        events = self.drop(Outcome.PREEMPTED, 'preempted by a target pose')
        self.motion = motion
        return events

    def cancel(self, tag, t):
        """End the goal ``tag`` (brought to rest smoothly); return its events."""
        if self.active is not None and self.active.tag is tag:
            return self._end_active(t, Outcome.CANCELED, 'canceled; stopping')
        return []

    def stop(self, t, message):
        """Bring the tip to rest smoothly and end the goal (``STOPPED``); return the events."""
        if self.motion is None:
            return []
        return self._end_active(t, Outcome.STOPPED, message)

    def update(self, t, q, qd):
        """
        Advance to ``t`` with the measured joint state ``(q, qd)`` (n,).

        Returns ``(reference, events)``: the :class:`~robot_dynamics.trajectory.TaskPoint` at
        ``t`` and the running goal's end, if it ends (its tolerances are checked on the tip's
        pose and twist ``J qd``).
        """
        point = self.motion.sample(t)
        goal = self.active
        if goal is None:
            return point, []
        pose, twist = self.model.fk(q), self.model.jacobian(q) @ qd
        tol = goal.tolerances
        errors = (point.pose[:3, 3] - pose[:3, 3],
                  matrix_to_rotvec(point.pose[:3, :3] @ pose[:3, :3].T),
                  np.asarray(point.twist, dtype=float) - twist)
        end = self.motion.end_time
        limits = (tol.path_position, tol.path_orientation, tol.path_twist) if t < end else \
            (tol.goal_position, tol.goal_orientation, tol.goal_twist)
        bad = _violations(errors, limits)
        if t < end:
            if bad:
                return point, self._end_active(t, Outcome.PATH_TOLERANCE_VIOLATED,
                                               f'path tolerance violated: {bad}')
            return point, []
        if not bad:
            self.active = None
            return point, [Event.goal_ended(goal.tag, Outcome.SUCCEEDED, 'goal reached')]
        if tol.goal_time > 0.0 and t > end + tol.goal_time:
            self.active = None
            return point, [Event.goal_ended(goal.tag, Outcome.GOAL_TOLERANCE_VIOLATED,
                                            f'goal tolerance violated {tol.goal_time:g} s after '
                                            f'the last point: {bad}')]
        return point, []

    # ---- internals ------------------------------------------------------------------------------

    def _build(self, goal, t):
        """Return the goal's trajectory from the reference at ``t``, its points after ``t``."""
        within_reach(np.asarray(goal.positions, dtype=float), self.reach, 'point {k}')
        times = (t if goal.start_time is None else goal.start_time) + \
            np.asarray(goal.time_from_start, dtype=float)
        keep = times > t
        ref = self.motion.sample(t)
        twists = accs = None
        start = {'start_twist': ref.twist, 'start_acceleration': ref.acceleration}
        if goal.twists is not None:
            twists = np.vstack((ref.twist, np.asarray(goal.twists, dtype=float)[keep]))
            start = {}
            if goal.accelerations is not None:
                accs = np.vstack((ref.acceleration,
                                  np.asarray(goal.accelerations, dtype=float)[keep]))
        orientations = np.asarray(goal.orientations, dtype=float)[keep]
        if orientations.shape[1:] == (4,):
            orientations = quaternions_to_matrices(orientations)
        return CartesianTrajectory(
            np.concatenate(([0.0], times[keep] - t)),
            np.vstack((ref.pose[:3, 3], np.asarray(goal.positions, dtype=float)[keep])),
            np.concatenate((ref.pose[None, :3, :3], orientations)), twists, accs,
            start_time=t, **start)

    def drop(self, outcome, message):
        """End the running goal with ``outcome`` (``message``); the reference runs on."""
        events = [] if self.active is None else [
            Event.goal_ended(self.active.tag, outcome, message)]
        self.active = None
        return events

    def _end_active(self, t, outcome, message):
        events = self.drop(outcome, message)
        self._to_rest(self.motion.sample(t), t)
        return events

    def _to_rest(self, point, t):
        """Bring ``point``'s twist linearly to zero over ``stop_time`` and hold there."""
        twist = np.asarray(point.twist, dtype=float)
        pose = point.pose
        if not np.any(twist != 0.0):
            self.hold(pose, t)
            return
        half = 0.5 * self.stop_time
        end = np.eye(4)
        end[:3, 3] = pose[:3, 3] + half * twist[:3]
        end[:3, :3] = rotvec_to_matrix(half * twist[3:]) @ pose[:3, :3]
        self.motion = CartesianTrajectory([0.0, self.stop_time], [pose[:3, 3], end[:3, 3]],
                                          np.stack((pose[:3, :3], end[:3, :3])),
                                          np.stack((twist, np.zeros(6))), start_time=t)


#: The components of the checked errors, by kind, for the messages.
_COMPONENTS = (('position', 'xyz'), ('orientation', 'xyz'),
               ('twist', ('vx', 'vy', 'vz', 'wx', 'wy', 'wz')))


def _violations(errors, limits):
    """Return the violated tolerances in words ('' when none); a limit None checks nothing."""
    out = []
    for (what, names), error, limit in zip(_COMPONENTS, errors, limits):
        if limit is None:
            continue
        limit = np.broadcast_to(np.asarray(limit, dtype=float), error.shape)
        out += [f'{what} {names[i]} error {error[i]:.3g} > {limit[i]:.3g}'
                for i in np.flatnonzero(np.abs(error) > limit)]
    return ', '.join(out)
