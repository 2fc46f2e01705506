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
A pick-and-place in a robot's own workspace, planned within its limits by construction.

:func:`waypoints` chooses the tip poses from the robot itself: pick and place are the tip poses
of two bent configurations inside the joint limits that differ by the first joint, and the
approach poses lie a little above them (against gravity), or, for an arm that cannot move its
tip up (a planar arm in a horizontal plane), a little towards its base. :func:`plan` moves in
joint space from where the arm is to above pick (as a MoveIt user moves to a pre-grasp pose: a
straight tip line from an arbitrary start may cross a wrist singularity), then along straight
tip lines (:class:`~robot_dynamics.trajectory.CartesianLine`, a quintic time law from rest to
rest) down to pick, up, across to above place, down to place and up. It solves the inverse
kinematics at a few samples of each line (through the library, or any ``solve(pose, seed)``
such as a ``/compute_ik`` client), takes the joint velocities and accelerations that follow the
line there, and slows each motion down uniformly (:func:`~robot_dynamics.time_scaling.
time_scale`) until its inverse dynamics (with friction) needs at most ``effort_fraction`` of
every effort limit and ``velocity_fraction`` of every velocity limit. Every motion ends at
rest, so each is scaled on its own: a long swing slows down, a short approach does not. The
plan's points (positions, velocities, accelerations) are what a controller interpolates with
quintic Hermite segments (:func:`~robot_dynamics.trajectory.from_waypoints`), the same
polynomials that were scaled, so the limits hold between the points too. :meth:`Plan.lines`
gives the same lines as tip poses with their twists and accelerations, for a Cartesian
controller (``robot-dynamics demo --cartesian``); :func:`distance_to_lines` measures a tip path
against them.

Times in seconds from the start of the plan, joint values in rad or m.
"""

from typing import NamedTuple

import numpy as np

from .closed_loop import (AMPLITUDE_FRACTION, MAX_REVOLUTE_AMPLITUDE, REFERENCE_EFFORT_FRACTION,
                          REFERENCE_VELOCITY_FRACTION)
from .errors import InputError
from .limits import middle
from .time_scaling import time_scale
from .trajectory import (CARTESIAN_MAX_JOINT_STEP, CartesianLine, check_limits,
                         from_waypoints, point_to_point, TaskPoint)

#: Default duration of the motion before any slowing down [s], split equally among the lines.
DEFAULT_DURATION = 8.0
#: IK samples per line (after its start pose).
SAMPLES_PER_SEGMENT = 8
#: Distance of the approach poses from pick and place, as a fraction of the arm's reach.
LIFT_FRACTION = 0.08
#: An approach offset below this [m] is not worth a line: the IK cannot move the tip there.
MIN_LIFT = 1e-3
#: Largest share of the world's z axis that must lie in the tip's reachable directions for the
#: approach to go up; otherwise it goes towards the base.
UP_SHARE = 0.5


class Waypoint(NamedTuple):
    """A named tip ``pose`` (4, 4), base frame, and the configuration ``q`` (n,) it came from."""

    name: str
    pose: np.ndarray
    q: np.ndarray


class Plan(NamedTuple):
    """
    A planned pick-and-place.

    Attributes
    ----------
    names : list of str
        The motions' names (``'start -> above pick'``, ...), one per segment.
    waypoints : list of Waypoint
        The tip poses the segments join.
    times : numpy.ndarray, shape (K,)
        Times of the points [s] from the start.
    q, qd, qdd : numpy.ndarray, shape (K, n)
        Joint positions, velocities and accelerations at the points.
    slowdown : numpy.ndarray, shape (S,)
        How much each segment was slowed down for the limits (1: not at all).
    nominal_duration : float
        The duration before slowing down [s].
    ik_calls : int
        How many poses were solved.

    """

    names: list
    waypoints: list
    times: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    slowdown: np.ndarray
    nominal_duration: float
    ik_calls: int

    @property
    def duration(self):
        """Return the planned motion's duration [s]."""
        return float(self.times[-1])

    def trajectory(self):
        """Return the joint trajectory a controller makes of the points (quintic Hermite)."""
        return from_waypoints(self.times, self.q, self.qd, self.qdd)

    @property
    def corners(self):
        """Return the indices of the points at the waypoints, (S + 1,): each segment's ends."""
        return np.linspace(0, len(self.times) - 1, len(self.names) + 1).round().astype(int)

    def first_motion(self):
        """Return the plan of its first segment alone (the joint move to above pick)."""
        end = self.corners[1] + 1
        return self._replace(names=self.names[:1], waypoints=self.waypoints[:2],
                             times=self.times[:end], q=self.q[:end], qd=self.qd[:end],
                             qdd=self.qdd[:end], slowdown=self.slowdown[:1])

    def lines(self, samples=SAMPLES_PER_SEGMENT):
        """
        Return the straight tip lines after the first motion: ``(times (K,), TaskPoint (K,))``.

        Each line of the plan from above pick on (:class:`~robot_dynamics.trajectory.
        CartesianLine` over its slowed-down duration, rest to rest) at ``samples`` points after
        its start, with pose, twist and acceleration: a Hermite interpolation through them is
        the lines. Times [s] from the end of the first motion (above pick at 0), base frame.
        """
        ends = self.times[self.corners[1:]]
        times, points = [], []
        for k, (start, goal) in enumerate(zip(self.waypoints[1:-1], self.waypoints[2:])):
            duration = ends[k + 1] - ends[k]
            local = duration * np.arange(k > 0, samples + 1) / samples
            times.append(ends[k] - ends[0] + local)
            points.append(CartesianLine(start.pose, goal.pose, duration).sample(local))
        return np.concatenate(times), TaskPoint(*(np.concatenate(f) for f in zip(*points)))

    @property
    def line_corners(self):
        """Return the tip positions the lines join, (S, 3) [m], base frame: above pick on."""
        return np.array([w.pose[:3, 3] for w in self.waypoints[1:]])


def _library_ik(model):
    def solve(pose, seed):
        result = model.ik(pose, seed=seed)
        if not result.success:
            raise InputError(f'no IK solution for the tip at {np.round(pose[:3, 3], 4).tolist()}'
                             f': {result.reason}')
        return result.q
    return solve


def _approach_direction(model, q, tip):
    """Return the approach direction at ``q``: up if the tip can move up, else to the base."""
    Jv = model.jacobian(q)[:3]
    reachable = Jv @ np.linalg.pinv(Jv)          # projector on the tip's linear velocities
    up = reachable @ np.array([0.0, 0.0, 1.0])
    if np.linalg.norm(up) >= UP_SHARE:
        return up / np.linalg.norm(up)
    inward = reachable @ (model.fk(q, model.base_link)[:3, 3] - tip)
    return inward / np.linalg.norm(inward)


def waypoints(model, q_start):
    """
    Return the :class:`Waypoint` list of the pick-and-place.

    The tip at ``q_start``, above pick, pick, above pick, above place, place and above place.
    Pick and place are the tip poses of the middle of the joint limits plus a bent offset (a
    fraction of each joint's range, at most ``MAX_REVOLUTE_AMPLITUDE`` for revolute joints,
    the first joint's sign flipped for place), one IK branch all the way and away from the
    straight-arm singularity. The approach poses lie ``LIFT_FRACTION`` of the arm's reach from
    them along :func:`_approach_direction`, brought closer until the library's IK reaches them.
    """
    q_start = np.array(q_start, dtype=float)
    mid = middle(model.lower, model.upper)
    half = np.where(np.isfinite(model.lower) & np.isfinite(model.upper),
                    0.5 * (model.upper - model.lower), np.pi)
    amplitude = np.where(model.is_prismatic, AMPLITUDE_FRACTION * half,
                         np.minimum(AMPLITUDE_FRACTION * half, MAX_REVOLUTE_AMPLITUDE))
    swing = np.ones(model.dof)
    swing[0] = -1.0
    reach = np.linalg.norm(model.fk(mid)[:3, 3] - model.fk(mid, model.base_link)[:3, 3])
    points = [Waypoint('start', model.fk(q_start), q_start)]
    for name, q in (('pick', mid + amplitude), ('place', mid + swing * amplitude)):
        pose = model.fk(q)
        direction = _approach_direction(model, q, pose[:3, 3])
        above, lift = pose.copy(), LIFT_FRACTION * reach
        while True:
            above[:3, 3] = pose[:3, 3] + lift * direction
            if model.ik(above, seed=q).success or lift < MIN_LIFT:
                break
            lift *= 0.5
        points += [Waypoint(f'above {name}', above, q), Waypoint(name, pose, q),
                   Waypoint(f'above {name}', above, q)]
    return points


def plan(model, q_start, duration=DEFAULT_DURATION, solve=None, *,
         samples=SAMPLES_PER_SEGMENT, effort_fraction=REFERENCE_EFFORT_FRACTION,
         velocity_fraction=REFERENCE_VELOCITY_FRACTION):
    """
    Plan the pick-and-place of :func:`waypoints` from ``q_start`` within the model's limits.

    Parameters
    ----------
    model : RobotModel
        The robot: workspace, limits, dynamics (with its friction).
    q_start : array_like, shape (n,)
        Joint positions at the start [rad or m], at rest.
    duration : float
        Nominal duration [s], split equally among the segments before each is slowed down.
    solve : callable, optional
        ``solve(pose (4, 4), seed (n,)) -> q (n,)``, raising when there is no solution; default
        the library's IK. Called once for above pick (seeded with the pick configuration), then
        ``samples`` times along each line, each seeded with the solution before.
    samples : int
        Points per segment, after its start.
    effort_fraction, velocity_fraction : float
        The largest share of each effort and velocity limit the plan may need (the rest is the
        controller's, for feedback).

    Returns
    -------
    Plan

    Raises
    ------
    InputError
        A pose without an IK solution (from ``solve``), a joint that jumps between neighbouring
        samples (a branch flip), a plan outside the joint limits, or gravity alone needing more
        than ``effort_fraction`` of an effort limit.

    """
    solve = solve or _library_ik(model)
    points = waypoints(model, q_start)
    segment_time = float(duration) / (len(points) - 1)
    local = segment_time * np.arange(samples + 1) / samples
    zero = np.zeros(model.dof)
    names, slowdown = [], []
    times, q, qd, qdd = [0.0], [points[0].q], [zero], [zero]
    calls = 0
    for start, goal in zip(points[:-1], points[1:]):
        name = f'{start.name} -> {goal.name}'
        if start.name == 'start':
            target = np.asarray(solve(goal.pose, goal.q), dtype=float)
            calls += 1
            path, *rates = point_to_point(q[-1], target, segment_time, 'quintic').sample(local)
        else:
            line = CartesianLine(start.pose, goal.pose, segment_time)
            path = [q[-1]]
            for pose in line.sample(local[1:]).pose:
                path.append(np.asarray(solve(pose, path[-1]), dtype=float))
            calls += samples
            path = np.array(path)
            _check_steps(model, path, name)
            rates = line.joint_rates(model, path, local)
        try:
            _, report = time_scale(from_waypoints(local, path, *rates), model, friction=True,
                                   margin=1.0 - effort_fraction,
                                   velocity_margin=1.0 - velocity_fraction)
        except InputError as exc:
            raise InputError(f'{name}: {exc}') from None
        k = max(1.0, report.factor)
        names.append(name)
        slowdown.append(k)
        times.extend(times[-1] + k * local[1:])
        q.extend(path[1:])
        qd.extend(rates[0][1:] / k)
        qdd.extend(rates[1][1:] / k ** 2)
    result = Plan(names, points, np.array(times), np.array(q), np.array(qd), np.array(qdd),
                  np.array(slowdown), float(duration), calls)
    check_limits(model, result.trajectory())
    return result


def _check_steps(model, path, name):
    """Raise unless neighbouring IK samples (K, n) stay within ``CARTESIAN_MAX_JOINT_STEP``."""
    step = np.abs(np.diff(path, axis=0))
    if step.max() > CARTESIAN_MAX_JOINT_STEP:
        k, j = np.unravel_index(int(np.argmax(step)), step.shape)
        raise InputError(f'{name}: joint {model.joint_names[j]!r} jumps by {step[k, j]:.3g} '
                         f'between IK samples {k} and {k + 1}: a branch flip or a singularity on '
                         'the line')


def distance_to_lines(points, corners):
    """
    Return each point's distance [m] to the polyline through ``corners`` (L, 3), base frame.

    ``points`` (..., 3) [m]; the result has their leading shape: the distance to the nearest
    point of the nearest segment.
    """
    corners = np.asarray(corners, dtype=float)
    a, d = corners[:-1], np.diff(corners, axis=0)
    p = np.asarray(points, dtype=float)[..., None, :]
    along = ((p - a) * d).sum(axis=-1) / np.maximum((d * d).sum(axis=-1), np.finfo(float).tiny)
    nearest = a + np.clip(along, 0.0, 1.0)[..., None] * d
    return np.linalg.norm(p - nearest, axis=-1).min(axis=-1)


def limit_ratios(model, motion, rate=1000.0):
    """
    Return the peak shares of the limits the plan needs: ``(velocity (n,), effort (n,))``.

    Sampled at ``rate`` [Hz] on :meth:`Plan.trajectory`; effort by the model's inverse
    dynamics with its friction.
    """
    trajectory = motion.trajectory()
    point = trajectory.sample(np.arange(0.0, trajectory.end_time, 1.0 / rate))
    tau = model.inverse_dynamics(*point, friction=True)
    return (np.abs(point.qd).max(axis=0) / model.velocity_limit,
            np.abs(tau).max(axis=0) / model.effort_limit)
