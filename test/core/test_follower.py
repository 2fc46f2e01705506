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


"""The trajectory follower: start, preemption, cancel, tolerances, limits (no ROS)."""

import numpy as np
import pytest
from robot_dynamics import RobotModel
from robot_dynamics.follower import Event, Goal, Outcome, Tolerances, TrajectoryFollower
from robot_dynamics.trajectory import point_to_point


@pytest.fixture
def arm():
    return RobotModel.load('planar_2r')


def _goal(tag, start, q0, q1, duration=2.0, tolerances=None, points=11):
    path = point_to_point(q0, q1, duration, 'quintic')
    t = np.linspace(0.0, duration, points)
    s = path.sample(t)
    return Goal(tag, start, t, s.q, s.qd, s.qdd, tolerances or Tolerances.unchecked(2)), path


def _run(follower, times, track=True, q=None):
    """Advance through ``times`` with the arm on the reference (or at ``q``); collect events."""
    events, refs = [], []
    for t in times:
        point = follower.trajectory.sample(t)
        ref, ev = follower.update(t, point.q if track else q, point.qd if track else 0 * q)
        refs.append(ref)
        events += ev
    return events, refs


def test_a_goal_waits_for_its_start_and_follows_its_path(arm):
    f = TrajectoryFollower(arm)
    q0 = np.array([0.2, 0.3])
    f.hold(q0, 0.0)
    goal, path = _goal('a', 1.0, q0, [0.9, -0.4])
    assert f.submit(goal, 0.5) == []
    ref, events = f.update(0.9, q0, np.zeros(2))
    assert f.active is None and np.array_equal(ref.q, q0) and not events
    f.update(1.0, q0, np.zeros(2))
    assert f.active is not None
    times = np.arange(1.0, 3.0, 0.01)
    events, refs = _run(f, times)
    # a quintic sampled with its derivatives is reproduced by the quintic Hermite segments
    np.testing.assert_allclose([r.q for r in refs], path.sample(times - 1.0).q, atol=1e-12)
    ref, events = f.update(3.0, path.end, np.zeros(2))
    assert events == [Event.goal_ended(goal.tag, Outcome.SUCCEEDED, 'goal reached')]
    assert f.active is None
    np.testing.assert_allclose(f.update(5.0, path.end, np.zeros(2))[0].q, path.end)


def test_the_point_in_use_is_numbered_as_joint_trajectory_controller_does():
    # points at 1.0 + [0, 0.2, ..., 2.0] s: the last one whose time has come, 0 before the
    # first, the last one after the end
    goal, _ = _goal('a', 1.0, [0.0, 0.0], [1.0, 1.0])
    times = [0.0, 1.0, 1.1, 1.2, 1.35, 2.999, 3.0, 9.0]
    assert [goal.point_index(t) for t in times] == [0, 0, 0, 1, 1, 9, 10, 10]


def test_a_goal_starts_from_the_reference_with_its_velocity(arm):
    f = TrajectoryFollower(arm)
    f.hold([0.0, 0.0], 0.0)
    first, _ = _goal('a', 0.0, [0.0, 0.0], [1.0, 1.0])
    f.submit(first, 0.0)
    _run(f, np.arange(0.0, 1.0, 0.01))
    before = f.trajectory.sample(1.0)
    # a positions-only goal whose first point is elsewhere: no jump in position or velocity
    second = Goal('b', 1.0, np.array([0.5, 1.5]), np.array([[0.2, 0.2], [0.1, -0.3]]), None,
                  None, Tolerances.unchecked(2))
    events = f.submit(second, 1.0)
    ref, events = f.update(1.0, before.q, before.qd)
    assert events == [Event.goal_ended('a', Outcome.PREEMPTED, 'preempted by a newer goal')]
    np.testing.assert_allclose(ref.q, before.q, atol=1e-12)
    np.testing.assert_allclose(ref.qd, before.qd, atol=1e-12)
    np.testing.assert_allclose(f.update(1.5, before.q, before.qd)[0].q, [0.2, 0.2], atol=1e-12)


def _steps(follower, times):
    """Return the largest jump of the reference acceleration between neighbouring ``times``."""
    _, refs = _run(follower, times)
    return np.abs(np.diff([r.qdd for r in refs], axis=0)).max()


def test_positions_only_goals_keep_the_reference_acceleration_continuous(arm):
    f = TrajectoryFollower(arm)
    q0 = np.array([0.2, 0.3])
    f.hold(q0, 0.0)
    points = np.array([[0.6, -0.2], [1.0, 0.4], [0.8, 0.1]])
    goal = Goal('a', 1.0, np.array([1.0, 2.0, 3.0]), points, None, None, Tolerances.unchecked(2))
    f.submit(goal, 0.5)
    dt = 1e-4
    # the acceleration leaves zero and comes back to zero continuously: over a 0.1 ms step it
    # changes by no more than its largest slope allows (a cubic spline clamped by velocities
    # alone, scipy's CubicSpline(bc_type='clamped'), jumps by 1.2 to 3.04 rad/s^2 at the ends)
    around_start = np.arange(0.99, 1.01, dt)
    around_end = np.arange(3.99, 4.01, dt)
    body = np.arange(1.0, 4.0, dt)
    jerk = _steps(f, body) / dt
    assert _steps(f, around_start) <= 1.01 * jerk * dt and _steps(f, around_end) <= \
        1.01 * jerk * dt
    assert jerk * dt < 1e-2
    np.testing.assert_allclose(f.trajectory.sample(4.0).q, points[-1], atol=1e-12)
    # a positions-only goal that preempts a motion under way takes over its acceleration too
    first, _ = _goal('b', 5.0, points[-1], [0.0, 0.0])
    f.submit(first, 5.0)
    _run(f, np.arange(5.0, 5.5, 0.01))
    second = Goal('c', 5.5, np.array([1.0]), np.array([[0.3, 0.3]]), None, None,
                  Tolerances.unchecked(2))
    f.submit(second, 5.5)
    before = f.trajectory.sample(5.5)
    after, _ = f.update(5.5, before.q, before.qd)
    assert f.active.tag == 'c' and np.abs(before.qdd).max() > 0.5
    for a, b in zip(after, before):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_cancel_brings_the_reference_to_rest_and_holds(arm):
    f = TrajectoryFollower(arm, stop_time=0.4)
    f.hold([0.0, 0.0], 0.0)
    goal, _ = _goal('a', 0.0, [0.0, 0.0], [1.0, -1.0])
    f.submit(goal, 0.0)
    _run(f, np.arange(0.0, 1.0, 0.01))
    moving = f.trajectory.sample(1.0)
    assert np.abs(moving.qd).max() > 0.5
    assert f.cancel('a', 1.0) == [Event.goal_ended('a', Outcome.CANCELED, 'canceled; stopping')]
    _, refs = _run(f, np.arange(1.0, 2.0, 0.001))
    qdd = np.array([r.qdd for r in refs])
    # constant deceleration qd / stop_time down to rest, then a hold half-way further
    np.testing.assert_allclose(qdd[:300], np.broadcast_to(-moving.qd / 0.4, (300, 2)),
                               atol=1e-9)
    np.testing.assert_allclose(refs[-1].q, moving.q + 0.2 * moving.qd, atol=1e-12)
    assert np.abs(refs[-1].qd).max() == 0.0 and f.active is None
    assert f.cancel('a', 2.0) == []


def test_path_and_goal_tolerances(arm):
    tight = Tolerances(np.full(2, 0.01), np.full(2, np.inf), np.full(2, 0.001),
                       np.full(2, 0.01), 0.5)
    f = TrajectoryFollower(arm)
    f.hold([0.0, 0.0], 0.0)
    goal, _ = _goal('a', 0.0, [0.0, 0.0], [0.5, 0.5], tolerances=tight)
    f.submit(goal, 0.0)
    _run(f, np.arange(0.0, 0.5, 0.01))
    ref = f.trajectory.sample(0.5)
    _, events = f.update(0.5, ref.q + [0.0, 0.02], ref.qd)     # 2 cm off on joint2
    assert [e.outcome for e in events] == [Outcome.PATH_TOLERANCE_VIOLATED]
    assert 'joint2 position error -0.02' in events[0].message
    # goal tolerance: the arm never gets there, the goal fails goal_time after the end
    f.hold([0.0, 0.0], 10.0)
    goal, path = _goal('b', 10.0, [0.0, 0.0], [0.5, 0.5], tolerances=tight)
    f.submit(goal, 10.0)
    events, _ = _run(f, np.arange(10.0, 12.0, 0.01))
    off = path.end + [0.005, 0.0]
    events, _ = _run(f, [12.0, 12.3, 12.49], track=False, q=off)
    assert events == []
    events, _ = _run(f, [12.51], track=False, q=off)
    assert [e.outcome for e in events] == [Outcome.GOAL_TOLERANCE_VIOLATED]


def test_goals_outside_the_limits_or_in_the_past_are_refused(arm):
    f = TrajectoryFollower(arm)
    f.hold([3.0, 0.0], 0.0)
    # the points are inside the limits (pi) but the spline from 3.0 overshoots past pi
    goal = Goal('a', 0.0, np.array([0.2, 1.0]), np.array([[3.14, 0.0], [0.0, 0.0]]), None, None,
                Tolerances.unchecked(2))
    events = f.submit(goal, 0.0)
    assert events[0].outcome is Outcome.INVALID and 'joint1' in events[0].message
    fast, _ = _goal('b', 0.0, [3.0, 0.0], [-3.0, 0.0], duration=0.5)
    events = f.submit(fast, 0.0)
    assert events[0].outcome is Outcome.INVALID and 'velocity' in events[0].message
    old, _ = _goal('c', -5.0, [3.0, 0.0], [2.0, 0.0])
    events = f.submit(old, 0.0)
    assert events[0].outcome is Outcome.OLD_START_TIME
    assert f.active is None and f.pending is None


def test_a_goal_started_late_joins_its_path_without_a_velocity_spike(arm):
    f = TrajectoryFollower(arm)
    q0 = np.array([0.2, 0.3])
    f.hold(q0 + 1e-3, 0.0)                # held a millimetre off the goal's first point
    goal, path = _goal('a', 1.0, q0, [0.9, -0.4], points=21)     # a point every 0.1 s
    assert f.submit(goal, 0.5) == []
    # the first state after the start comes 99.9 ms late, 0.1 ms before the goal's next point
    ref, events = f.update(1.0999, q0 + 1e-3, np.zeros(2))
    assert events == [] and f.active is not None
    np.testing.assert_allclose(ref.q, q0 + 1e-3, atol=1e-12)
    # it joins the point after (1.2 s): a segment of 0.1 s, not of 0.1 ms
    times = np.concatenate((np.linspace(1.0999, 1.1, 11), np.arange(1.1, 1.3, 1e-3)))
    samples = f.trajectory.sample(times)
    assert np.abs(samples.qd).max() < 2 * np.abs(path.sample(times - 1.0).qd).max() + 0.1
    np.testing.assert_allclose(f.trajectory.sample(1.2).q, path.sample(0.2).q, atol=1e-12)


@pytest.mark.parametrize('change, words', [
    # the requested point is named, not the interpolated excursion it causes
    (lambda q, qd, t: q.__setitem__((3, 0), 10.0),
     "point 3: joint 'joint1' position 10 is outside its limits [-3.14159, 3.14159]"),
    (lambda q, qd, t: qd.__setitem__((5, 1), -40.0),
     "point 5: joint 'joint2' velocity -40 is above its limit"),
    (lambda q, qd, t: t.__setitem__(4, t[2]),
     'point 4: time_from_start 0.2 s is not increasing (point 3: 0.3 s)'),
    (lambda q, qd, t: t.__setitem__(1, np.nan), 'point 1: time_from_start nan is not finite'),
])
def test_a_goal_point_outside_the_limits_is_named_first(arm, change, words):
    f = TrajectoryFollower(arm)
    f.hold([0.0, 0.0], 0.0)
    goal, _ = _goal('a', 0.0, [0.0, 0.0], [1.0, -1.0], duration=1.0)
    goal = goal._replace(positions=goal.positions.copy(), velocities=goal.velocities.copy(),
                         time_from_start=goal.time_from_start.copy())
    change(goal.positions, goal.velocities, goal.time_from_start)
    [event] = f.submit(goal, 0.0)
    assert event.outcome is Outcome.INVALID and words in event.message, event.message


def _counting_builds(follower, monkeypatch):
    """Count the follower's trajectory builds (each a spline through every point)."""
    builds = []
    build = follower._build

    def counted(*args):
        builds.append(args[1])
        return build(*args)
    monkeypatch.setattr(follower, '_build', counted)
    return builds


def test_a_goal_prepared_off_the_cycle_costs_the_cycle_no_build(arm, monkeypatch):
    # the node prepares each goal in the executor; the cycle only takes it
    f = TrajectoryFollower(arm)
    q0 = np.array([0.2, 0.3])
    f.hold(q0, 0.0)
    goal, path = _goal('a', 1.0, q0, [0.9, -0.4], points=1001)
    prepared = f.prepare(goal, 0.5)
    assert prepared.joined.error is None and prepared.joined.reference is f.trajectory
    builds = _counting_builds(f, monkeypatch)
    assert f.submit(prepared, 0.6) == []
    f.update(1.0005, q0, np.zeros(2))                 # a cycle after its start: on time
    assert builds == [] and f.trajectory is prepared.joined.trajectory
    # built from the reference at its start time: the goal's own path from there on
    times = np.arange(1.001, 3.0, 0.01)
    np.testing.assert_allclose(f.trajectory.sample(times).q, path.sample(times - 1.0).q,
                               atol=1e-12)
    # a refusal found while preparing comes from submit, still without a build
    fast, _ = _goal('b', None, path.end, [-0.9, 0.4], duration=0.2)
    refused = f.prepare(fast, 1.5)
    events = f.submit(refused, 1.6)
    assert builds == [] and events[0].outcome is Outcome.INVALID
    assert 'velocity' in events[0].message and events[0].message == str(refused.joined.error)


def test_a_goal_prepared_from_a_reference_since_replaced_is_joined_again(arm, monkeypatch):
    f = TrajectoryFollower(arm)
    f.hold([0.2, 0.3], 0.0)
    goal, _ = _goal('a', None, [0.2, 0.3], [0.9, -0.4])
    prepared = f.prepare(goal, 0.0)
    f.hold([0.5, 0.5], 0.1)                           # e.g. a stop in the meantime
    builds = _counting_builds(f, monkeypatch)
    assert f.submit(prepared, 0.2) == []
    # a goal for "now" starts when it is submitted again, from where the reference is then
    assert builds == [0.2] and f.pending.start_time == 0.2
    f.update(0.2005, [0.5, 0.5], np.zeros(2))
    np.testing.assert_allclose(f.trajectory.sample(0.2).q, [0.5, 0.5], atol=1e-15)


def test_a_goal_for_now_taken_late_from_rest_is_the_same_motion_later(arm, monkeypatch):
    # a long goal's spline takes a while to build: the arm, at rest, held on meanwhile
    f = TrajectoryFollower(arm)
    q0 = np.array([0.2, 0.3])
    f.hold(q0, 0.0)
    goal, _ = _goal('a', None, q0, [0.9, -0.4], points=1001)
    prepared = f.prepare(goal, 1.0)
    builds = _counting_builds(f, monkeypatch)
    f.submit(prepared, 1.05)
    f.update(1.051, q0, np.zeros(2))
    built = f.trajectory
    assert builds == [] and built.start_time == pytest.approx(1.051, abs=1e-12)
    # what building it at 1.051 would have given, without the build
    monkeypatch.undo()
    again = TrajectoryFollower(arm)
    again.hold(q0, 0.0)
    again.submit(goal, 1.051)
    again.update(1.051, q0, np.zeros(2))
    times = np.linspace(1.051, 3.1, 500)
    np.testing.assert_allclose(built.sample(times).q, again.trajectory.sample(times).q,
                               atol=1e-12)
    np.testing.assert_allclose(built.sample(times).qd, again.trajectory.sample(times).qd,
                               atol=1e-9)
