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
Goals due far away or far from the base: refused before anything is sized by them (no ROS).

A joint point due in 2^31 s made the limit check ask 3.12 TiB, a Cartesian goal as late 800 GiB
of IK samples and a target 1e9 m away 2.73 TiB: each is refused now naming the bound, within a
small peak of traced memory, and goals just inside the bounds still run.
"""

import tracemalloc

import numpy as np
import pytest
from robot_dynamics import RobotModel
from robot_dynamics.cartesian_follower import (arm_reach, CartesianFollower, CartesianGoal,
                                               check_goal, check_reach)
from robot_dynamics.closed_loop import goal_from_points
from robot_dynamics.errors import InputError
from robot_dynamics.follower import check_points, Goal, Outcome, Tolerances, TrajectoryFollower
from robot_dynamics.trajectory import (CartesianLine, check_limits, from_waypoints,
                                       LIMIT_CHECK_RATE, MAX_GOAL_DURATION, TrajectoryPoints)

#: 2^31 - 1 s, the largest ``sec`` of a ``builtin_interfaces/Duration``.
FAR = 2147483647.0
#: Peak of traced memory [bytes] a refusal may take: nothing sized by the duration.
REFUSAL_PEAK = 1_000_000


@pytest.fixture
def scara():
    return RobotModel.load('scara')


@pytest.fixture
def q():
    return np.array([0.5, 0.8, 0.1])


def refused(call, *words):
    """Run ``call``, which must raise InputError naming ``words``, in little traced memory."""
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as info:
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    for word in words:
        assert word in str(info.value)
    assert peak < REFUSAL_PEAK
    return str(info.value)


def joint_goal(q, times, step=0.1):
    times = np.asarray(times, dtype=float)
    positions = q + step * np.arange(1, times.size + 1)[:, None] / times.size
    return Goal('g', 0.0, times, positions, None, None, Tolerances.unchecked(q.size))


def test_a_joint_point_due_in_2_31_s_is_refused_naming_the_bound(scara, q):
    follower = TrajectoryFollower(scara)
    follower.hold(q, 0.0)
    goal = joint_goal(q, [1.0, FAR])
    message = refused(lambda: check_points(scara, goal), 'point 1', '2.14748365e+09 s',
                      f'MAX_GOAL_DURATION = {MAX_GOAL_DURATION:g} s')
    assert message.startswith('point 1: time_from_start is')
    # the controller's path: the goal ends INVALID, the reference is untouched
    tracemalloc.start()
    events = follower.submit(goal, 0.0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [(e.tag, e.outcome) for e in events] == [('g', Outcome.INVALID)]
    assert 'MAX_GOAL_DURATION' in events[0].message and peak < REFUSAL_PEAK
    assert follower.pending is None and follower.trajectory.duration == 0.0
    # the spline and the limit check refuse it too, whoever calls them
    refused(lambda: from_waypoints([0.0, FAR], np.vstack((q, q))), 'span', 'MAX_GOAL_DURATION')
    long = from_waypoints([0.0, 1.0], np.vstack((q, q))).time_scaled(FAR)
    refused(lambda: check_limits(scara, long), 'duration', 'MAX_GOAL_DURATION')


def test_a_trajectory_file_due_in_2_31_s_is_refused_before_it_is_sent_or_simulated(scara, q):
    text = ('joint_names: [shoulder, elbow, quill]\npoints:\n'
            '- {positions: [0.5, 0.8, 0.1], time_from_start: {sec: 1, nanosec: 0}}\n'
            '- {positions: [0.6, 0.9, 0.1], time_from_start: {sec: 2147483647, nanosec: 0}}\n')
    assert list(scara.joint_names) == ['shoulder', 'elbow', 'quill']
    refused(lambda: TrajectoryPoints.from_yaml(text), 'MAX_GOAL_DURATION')
    # simulate --goal: its goal passes the goal process's checks before the loop is sized by it
    points = TrajectoryPoints(scara.joint_names, np.array([1.0, FAR]), np.vstack((q, q + 0.1)))
    tolerances = Tolerances.unchecked(3)
    refused(lambda: goal_from_points(scara, points, tolerances), 'point 1', 'MAX_GOAL_DURATION')
    outside = points._replace(time_from_start=np.array([1.0, 2.0]),
                              positions=np.vstack((q, [0.5, 0.8, 0.9])))
    refused(lambda: goal_from_points(scara, outside, tolerances), "joint 'quill'", '[0, 0.3]')


def test_a_joint_goal_just_inside_the_bound_runs_and_is_checked_in_bounded_memory(scara, q):
    follower = TrajectoryFollower(scara)
    follower.hold(q, 0.0)
    goal = joint_goal(q, [0.5 * MAX_GOAL_DURATION, MAX_GOAL_DURATION])
    events = follower.submit(goal, 0.0)
    assert events == [] and follower.pending.tag == 'g'
    assert follower.pending.joined.trajectory.end_time == MAX_GOAL_DURATION
    # the check samples 120,000 times at LIMIT_CHECK_RATE a block at a time: a 7-joint arm
    iiwa = RobotModel.load('iiwa14')
    q7 = 0.5 * (iiwa.lower + iiwa.upper)
    trajectory = from_waypoints([0.0, 300.0, MAX_GOAL_DURATION],
                                np.vstack((q7, q7 + 0.1, q7)))
    tracemalloc.start()
    check_limits(iiwa, trajectory)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert MAX_GOAL_DURATION * LIMIT_CHECK_RATE == 120_000
    assert peak < 40e6


def test_the_limit_check_by_blocks_finds_a_violation_late_in_a_long_goal(scara, q):
    upper = scara.upper[0]
    # at the shoulder's upper limit at 595 s and still rising: beyond it just after
    positions = np.array([q, q, [upper, q[1], q[2]], q])
    velocities = np.array([np.zeros(3), np.zeros(3), [0.5, 0.0, 0.0], np.zeros(3)])
    trajectory = from_waypoints([0.0, 594.0, 595.0, MAX_GOAL_DURATION], positions, velocities)
    with pytest.raises(InputError) as info:
        check_limits(scara, trajectory)
    # found at the sample after 595 s (119,001), in the twelfth block of 10,000
    since = float(str(info.value).split(' s after')[0].split()[-1])
    assert "joint 'shoulder'" in str(info.value) and 595.0 < since < 595.1


def test_a_cartesian_goal_due_in_2_31_s_is_refused_naming_the_bound(scara, q):
    T = scara.fk(q)
    goal = CartesianGoal('c', None, np.array([1.0, FAR]), np.vstack((T[:3, 3], T[:3, 3])),
                         np.stack((T[:3, :3], T[:3, :3])))
    refused(lambda: check_goal(goal), 'MAX_GOAL_DURATION = 600 s')
    refused(lambda: check_reach(scara, goal, q), 'MAX_GOAL_DURATION')
    follower = CartesianFollower(scara)
    follower.hold(T, 0.0)
    tracemalloc.start()
    events = follower.submit(goal, 0.0, q)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [(e.tag, e.outcome) for e in events] == [('c', Outcome.INVALID)]
    assert 'MAX_GOAL_DURATION' in events[0].message and peak < REFUSAL_PEAK
    # the first point late, the span short: the motion from the reference is what is bounded
    late = goal._replace(time_from_start=np.array([MAX_GOAL_DURATION, MAX_GOAL_DURATION + 1]))
    refused(lambda: check_goal(late), 'time_from_start[1] is 601 s')
    # the IK of any tip motion (a line of the library) is bounded the same way
    refused(lambda: CartesianLine(T, T, FAR).to_joint_trajectory(scara, q),
            'Cartesian motion: the duration', 'MAX_GOAL_DURATION')


def test_a_cartesian_goal_just_inside_the_bound_passes_its_checks(scara, q):
    T = scara.fk(q)
    goal = CartesianGoal('c', None, np.array([1.0, MAX_GOAL_DURATION]),
                         np.vstack((T[:3, 3], T[:3, 3])), np.stack((T[:3, :3], T[:3, :3])))
    check_goal(goal)


def test_a_target_beyond_the_reach_of_the_arm_is_refused_before_its_motion_is_built(scara, q):
    far = scara.fk(q)
    far[0, 3] = 1e9
    words = ('target', '1e+09 m from the base', f'{arm_reach(scara):.6g} m')
    refused(lambda: check_reach(scara, (far, (0.25, 1.0)), q), *words)
    follower = CartesianFollower(scara)
    follower.hold(scara.fk(q), 0.0)
    before = follower.motion
    refused(lambda: follower.target(far, 0.0, 0.25, 1.0, q), *words)
    assert follower.motion is before
    # a goal's point as far
    T = scara.fk(q)
    goal = CartesianGoal('c', None, np.array([1.0, 2.0]), np.vstack((T[:3, 3], far[:3, 3])),
                         np.stack((T[:3, :3], T[:3, :3])))
    refused(lambda: check_reach(scara, goal, q), 'point 1', '1e+09 m from the base')


def test_the_reach_bound_holds_every_pose_of_the_arm_and_is_met_stretched():
    arm = RobotModel.load('planar_2r')
    rng = np.random.default_rng(40)
    for name in ('planar_2r', 'scara', 'puma560', 'iiwa14', 'rp_arm'):
        model = RobotModel.load(name)
        qs = rng.uniform(model.lower, model.upper, (2000, model.dof))
        assert np.linalg.norm(model.fk(qs)[:, :3, 3], axis=1).max() <= arm_reach(model)
    stretched = arm.fk(np.zeros(2))
    assert np.linalg.norm(stretched[:3, 3]) == pytest.approx(arm_reach(arm), rel=1e-12)
    follower = CartesianFollower(arm)
    follower.hold(arm.fk(np.array([0.3, 0.6])), 0.0)
    follower.target(stretched, 0.0, 0.25, 1.0, np.array([0.3, 0.6]), check=False)
    beyond = stretched.copy()
    beyond[:3, 3] *= 1.0 + 1e-6
    with pytest.raises(InputError, match='beyond the reach of the arm'):
        follower.target(beyond, 0.0, 0.25, 1.0, np.array([0.3, 0.6]), check=False)
