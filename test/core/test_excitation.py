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
Excitation trajectories (robot_dynamics.excitation) and trajectory files (JointTrajectory YAML).

The optimised Fourier series start and end at rest where asked, keep to the position, velocity,
acceleration and effort limits between their samples too, are what the controller's follower
accepts (from the start and from elsewhere, through the lead-in), and condition the base
regressor better than the random series they start from; the same seed gives the same motion.
"""

from functools import lru_cache

import numpy as np
import pytest
from robot_dynamics import excitation, InputError, RobotModel, ShapeError
from robot_dynamics.follower import Goal, Outcome, Tolerances, TrajectoryFollower
from robot_dynamics.trajectory import check_limits, TrajectoryPoints
import yaml

DURATION = 10.0


@lru_cache(maxsize=None)
def optimised(name, iterations=excitation.MAX_ITERATIONS):
    model = RobotModel.load(name)
    return model, excitation.optimise(model, duration=DURATION, max_iterations=iterations)


# the position margins bound both arms' optimised motions; velocity, acceleration and effort
# stay below 0.75 of their bounds, as the PUMA 560's did: its optimisation (9 s of CPU, 4 s on
# a quiet machine) met no bound these two do not. A revolute arm and an RRP one
@pytest.mark.parametrize('name', ['planar_2r', 'scara'])
def test_excitation_keeps_the_limits_and_conditions_the_regressor(name):
    model, motion = optimised(name)
    assert motion.duration == pytest.approx(DURATION)
    assert motion.periods == 1 and motion.a.shape == (excitation.DEFAULT_HARMONICS, model.dof)
    # at rest at the start, at both ends, and periodic
    for t in (0.0, motion.duration):
        point = motion.sample(t)
        np.testing.assert_allclose(point.q, motion.start, rtol=0, atol=1e-12)
        np.testing.assert_allclose(point.qd, 0.0, atol=1e-12)
        np.testing.assert_allclose(point.qdd, 0.0, atol=1e-12)
    # the limits hold between the optimiser's samples too (10 kHz here): the margins, within
    # the overshoot between samples (a tenth of them), and the limits themselves
    point = motion.sample(np.linspace(0.0, motion.duration, 100001))
    finite = np.isfinite(model.lower)
    margin = np.where(finite, 0.9 * excitation.POSITION_MARGIN * (model.upper - model.lower), 0)
    assert np.all(point.q >= model.lower + margin) and np.all(point.q <= model.upper - margin)
    assert np.all(np.abs(point.qd) <= 1.02 * excitation.VELOCITY_FRACTION * model.velocity_limit)
    assert np.all(np.abs(point.qdd) <= 1.02 * motion.acceleration_limit)
    tau = model.inverse_dynamics(point.q, point.qd, point.qdd, friction=True)
    assert np.all(np.abs(tau) <= 1.02 * excitation.EFFORT_FRACTION * model.effort_limit)
    # the points the controller gets: check_limits accepts their spline, which follows the series
    trajectory = motion.trajectory()
    check_limits(model, trajectory)
    t = np.linspace(0.0, motion.duration, 2001)
    spline = trajectory.sample(excitation.LEAD_IN + t)
    np.testing.assert_allclose(spline.q, motion.sample(t).q, rtol=0, atol=1e-7)
    # better conditioned than the random series it started from
    _, start = optimised(name, 0)
    assert motion.condition_number < 0.7 * start.condition_number


def test_excitation_is_deterministic():
    # the same seed and path for every arm: the smallest one shows it
    model, motion = optimised('planar_2r')
    again = excitation.optimise(model, duration=DURATION)
    np.testing.assert_array_equal(again.a, motion.a)
    np.testing.assert_array_equal(again.start, motion.start)
    np.testing.assert_array_equal(again.b, motion.b)


def test_points_start_after_the_lead_in_and_the_follower_takes_them_from_elsewhere():
    model, motion = optimised('planar_2r')
    times, q, qd, qdd = motion.points(rate=50.0, lead_in=2.0)
    assert times[0] == 2.0 and times[-1] == pytest.approx(2.0 + DURATION)
    assert np.allclose(np.diff(times), 0.02)
    np.testing.assert_allclose(q[0], motion.start, atol=1e-12)
    np.testing.assert_allclose(qd[[0, -1]], 0.0, atol=1e-12)
    for where in (motion.start, motion.start + [0.3, -0.2]):
        follower = TrajectoryFollower(model)
        follower.hold(where, 100.0)
        goal = Goal('excite', 100.0, times, q, qd, qdd, Tolerances.unchecked(model.dof))
        assert follower.submit(goal, 100.0) == []
        reference, events = follower.update(100.0, where, np.zeros(2))
        assert events == []
        # at rest at the start when the series begins, whatever the arm did before
        point, _ = follower.update(102.0, motion.start, np.zeros(2))
        np.testing.assert_allclose(point.q, motion.start, atol=1e-12)
        np.testing.assert_allclose(point.qd, 0.0, atol=1e-12)
        point, _ = follower.update(103.7, motion.start, np.zeros(2))
        np.testing.assert_allclose(point.q, motion.sample(1.7).q, atol=1e-7)
        _, events = follower.update(112.5, motion.start, np.zeros(2))
        assert [e.outcome for e in events] == [Outcome.SUCCEEDED]


def test_acceleration_limits_from_the_effort_limits():
    """Planar 2R: M_11 = 11 + 4 cos q2 (seed-vectors.md B3) is largest at q2 = 0, M_22 = 2."""
    model = RobotModel.load('planar_2r')
    limits = excitation.acceleration_limits(model)
    exact = 0.5 * np.array([200.0 / 15.0, 100.0 / 2.0])
    np.testing.assert_allclose(limits, exact, rtol=1e-3)
    # from sampled configurations: never below the exact limit (the largest M_jj is sampled
    # or missed, never exceeded)
    assert np.all(limits >= exact * (1.0 - 1e-12))
    unlimited = model.replace(effort_limit=[np.inf, 100.0])
    assert excitation.acceleration_limits(unlimited)[0] == np.inf


def test_bad_excitation_requests_are_named():
    model = RobotModel.load('planar_2r')
    with pytest.raises(InputError, match="start: joint 'joint1' at 3.1 is within 0.05"):
        excitation.optimise(model, start=[3.1, 0.0])
    with pytest.raises(InputError, match='harmonics: expected an integer >= 2'):
        excitation.optimise(model, harmonics=1)
    with pytest.raises(InputError, match='duration and period'):
        excitation.optimise(model, duration=0.0)
    # holding the arm out straight needs (m1 lc1 + m2 (l1 + lc2)) g = 49.05 N m at joint 1: more
    # than half of a 50 N m limit
    weak = model.replace(effort_limit=[50.0, 100.0])
    with pytest.raises(InputError, match="0.981 of the effort limit of joint 'joint1'"):
        excitation.optimise(weak, start=[0.0, 0.0])
    _, motion = optimised('planar_2r')
    with pytest.raises(InputError, match='rate'):
        motion.points(rate=0.0)
    with pytest.raises(InputError, match='lead_in'):
        motion.points(lead_in=-1.0)


# ---- trajectory files ---------------------------------------------------------------------------

def test_trajectory_yaml_is_the_message_layout_and_reads_back_exactly():
    model, motion = optimised('scara')
    times, q, qd, qdd = motion.points()
    points = TrajectoryPoints(model.joint_names, times, q, qd, qdd)
    text = points.to_yaml()
    doc = yaml.safe_load(text)
    assert doc['joint_names'] == list(model.joint_names)
    first = doc['points'][0]
    assert set(first) == {'positions', 'velocities', 'accelerations', 'time_from_start'}
    assert first['time_from_start'] == {'sec': 2, 'nanosec': 0}
    assert doc['points'][1]['time_from_start'] == {'sec': 2, 'nanosec': 20_000_000}
    back = TrajectoryPoints.from_yaml(text)
    assert back.joint_names == model.joint_names
    np.testing.assert_array_equal(back.positions, q)
    np.testing.assert_array_equal(back.accelerations, qdd)
    np.testing.assert_allclose(back.time_from_start, times, rtol=0, atol=1e-9)
    # a FollowJointTrajectory goal's YAML, positions only, seconds as numbers
    goal = yaml.safe_dump({'trajectory': {'joint_names': ['a', 'b'], 'points': [
        {'positions': [0.0, 1.0], 'time_from_start': 0.5},
        {'positions': [0.5, 1.5], 'time_from_start': {'sec': 1, 'nanosec': 500000000}}]}})
    read = TrajectoryPoints.from_yaml(goal)
    assert read.velocities is None and read.accelerations is None
    np.testing.assert_array_equal(read.time_from_start, [0.5, 1.5])
    assert read.trajectory().sample(1.5).q.tolist() == [0.5, 1.5]


def test_trajectory_files_with_problems_are_named(tmp_path):
    two = {'joint_names': ['a', 'b']}
    cases = [
        ('not: [a, mapping', 'not YAML'),
        (yaml.safe_dump({'points': []}), 'joint_names'),
        (yaml.safe_dump({**two, 'points': [{'positions': [0, 0]}]}),
         'point 0 needs positions and time_from_start'),
        (yaml.safe_dump({**two, 'points': [{'positions': [0, 0], 'time_from_start': 1.0},
                                           {'positions': [0, 0], 'time_from_start': 1.0}]}),
         r'time_from_start\[1\] = 1.0 s is not after'),
        (yaml.safe_dump({**two, 'points': [
            {'positions': [0, 0], 'velocities': [0, 0], 'time_from_start': 1.0},
            {'positions': [0, 0], 'time_from_start': 2.0}]}),
         'point 1 has no velocities'),
        (yaml.safe_dump({**two, 'points': [{'positions': [0, 'x'], 'time_from_start': 1.0}]}),
         'positions must be lists of 2 numbers'),
        (yaml.safe_dump({**two, 'points': [{'positions': [0, 0], 'time_from_start': 'soon'}]}),
         'time_from_start must be'),
        (yaml.safe_dump({'joint_names': ['a', 'a'], 'points': [
            {'positions': [0, 0], 'time_from_start': 1.0}]}), 'distinct names'),
    ]
    for text, match in cases:
        with pytest.raises(InputError, match=match):
            TrajectoryPoints.from_yaml(text)
    with pytest.raises(ShapeError, match='3 positions per point for 2 joint_names'):
        TrajectoryPoints.from_yaml(yaml.safe_dump({**two, 'points': [
            {'positions': [0, 0, 0], 'time_from_start': 1.0}]}))
    with pytest.raises(InputError, match='trajectory file not found'):
        TrajectoryPoints.from_yaml(str(tmp_path / 'missing.yaml'))
    path = tmp_path / 'ok.yaml'
    path.write_text(yaml.safe_dump({**two, 'points': [
        {'positions': [0, 0], 'time_from_start': 1.0}]}))
    assert TrajectoryPoints.from_yaml(str(path)).positions.tolist() == [[0.0, 0.0]]
