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
The demo's pick-and-place plan on every bundled robot, without ROS: limits, poses, lines.

The plan starts where the demo's simulator starts the arm (``initial_positions`` of the robot's
parameter file) or, as the simulator does without them, in the middle of the limits. Its limits
are checked on the trajectory a controller builds from its points, sampled at 2 kHz: velocities
and positions directly, efforts by the inverse dynamics with friction (Pinocchio agrees with the
library's RNEA: test_pinocchio.py). The demo's run itself, its plan executed by the graph's
nodes, is here in one process too (``test/graph_harness.py``), on every robot (the redundant
iiwa14 included); its goal as the demo's client sends it, run twice: test_demo_goals.py; through
the processes: test/ros/test_demo.py.
"""

from pathlib import Path

from graph_harness import LoopGraph
import numpy as np
import pytest
from robot_dynamics import closed_loop, control, InputError, pick_and_place as pp, RobotModel
from robot_dynamics.closed_loop import REFERENCE_EFFORT_FRACTION, REFERENCE_VELOCITY_FRACTION
from robot_dynamics.controller import Mode
from robot_dynamics.events import Outcome
from robot_dynamics.follower import Goal
from robot_dynamics.limits import middle
from robot_dynamics.spatial import pose_error
import yaml

# not from test/conftest.py: under test/ros another conftest module takes that name
CONFIG_DIR = Path(__file__).resolve().parents[2] / 'config'
BUNDLED = RobotModel.available()
#: What sampling between time_scale's samples may add to a peak (relative).
BETWEEN_SAMPLES = 2e-3


def start_positions(model):
    """Return the simulator's initial positions of the robot's parameter file."""
    data = yaml.safe_load((CONFIG_DIR / f'{model.name}.yaml').read_text())
    return np.array(data['simulator']['ros__parameters']['initial_positions'])


def dense(motion, rate=2000.0):
    return motion.trajectory().sample(np.arange(0.0, motion.duration, 1.0 / rate))


@pytest.fixture(params=['file', 'middle'])
def planned(request, bundled_model):
    model = bundled_model
    q0 = start_positions(model) if request.param == 'file' else middle(model.lower, model.upper)
    return model, q0, pp.plan(model, q0)


def test_the_plan_keeps_within_every_limit(planned):
    model, _, motion = planned
    point = dense(motion)
    assert np.all(point.q >= model.lower) and np.all(point.q <= model.upper)
    velocity = np.abs(point.qd).max(axis=0) / model.velocity_limit
    effort = np.abs(model.inverse_dynamics(*point, friction=True)).max(axis=0) \
        / model.effort_limit
    assert velocity.max() <= REFERENCE_VELOCITY_FRACTION * (1.0 + BETWEEN_SAMPLES), velocity
    assert effort.max() <= REFERENCE_EFFORT_FRACTION * (1.0 + BETWEEN_SAMPLES), effort
    np.testing.assert_allclose(pp.limit_ratios(model, motion), (velocity, effort), rtol=1e-2)
    assert motion.duration >= motion.nominal_duration * (1.0 - 1e-12)


def test_the_plan_passes_the_poses_on_straight_lines(planned):
    model, q0, motion = planned
    mask = model.task_mask.astype(bool)
    np.testing.assert_array_equal(motion.q[0], q0)
    assert np.all(np.diff(motion.times) > 0.0)
    samples = pp.SAMPLES_PER_SEGMENT
    ends = motion.q[samples::samples]
    assert len(ends) == len(motion.waypoints) - 1 == len(motion.names) == len(motion.slowdown)
    for q, waypoint in zip(ends, motion.waypoints[1:]):
        assert np.abs(pose_error(model.fk(q), waypoint.pose)[mask]).max() < 1e-6, waypoint.name
    # at rest at every pose (every motion is rest to rest), velocities and accelerations
    rest = np.concatenate(([0], np.arange(samples, len(motion.times), samples)))
    np.testing.assert_allclose(motion.qd[rest], 0.0, atol=1e-9)
    np.testing.assert_allclose(motion.qdd[rest], 0.0, atol=1e-9)
    # after the joint move to above pick, the tip stays on the straight line between the poses
    tips = model.fk(motion.q)[:, :3, 3]
    for k in range(1, len(motion.names)):
        a, b = motion.waypoints[k].pose[:3, 3], motion.waypoints[k + 1].pose[:3, 3]
        on = tips[k * samples:(k + 1) * samples + 1] - a
        along = b - a
        off = on - np.outer(on @ along / max(along @ along, 1e-300), along)
        assert np.linalg.norm(off, axis=1).max() < 1e-6, motion.names[k]


def test_the_lines_as_cartesian_points_are_the_plans_lines(planned):
    model, _, motion = planned
    first = motion.first_motion()
    assert first.names == motion.names[:1] and first.duration == motion.times[motion.corners[1]]
    np.testing.assert_array_equal(first.q[-1], motion.q[motion.corners[1]])
    times, point = motion.lines()
    lines = len(motion.names) - 1
    assert len(times) == lines * pp.SAMPLES_PER_SEGMENT + 1 and np.all(np.diff(times) > 0.0)
    # the same times and tip poses as the joint plan's samples (its IK within 1e-6)
    np.testing.assert_allclose(times, motion.times[motion.corners[1]:] - first.duration,
                               atol=1e-12)
    mask = model.task_mask.astype(bool)
    tips = model.fk(motion.q[motion.corners[1]:])
    errors = [np.abs(pose_error(T, P)[mask]).max() for T, P in zip(tips, point.pose)]
    assert max(errors) < 1e-6
    # on the lines, at rest at their corners, and the plan's tip velocity between them
    assert pp.distance_to_lines(point.pose[:, :3, 3], motion.line_corners).max() < 1e-12
    corners = np.arange(0, len(times), pp.SAMPLES_PER_SEGMENT)
    np.testing.assert_allclose(point.twist[corners], 0.0, atol=1e-12)
    np.testing.assert_allclose(point.acceleration[corners], 0.0, atol=1e-12)
    J = model.jacobian(motion.q[motion.corners[1]:])
    tip_velocity = (J @ motion.qd[motion.corners[1]:, :, None])[..., 0]
    np.testing.assert_allclose(point.twist[:, :3], tip_velocity[:, :3], atol=1e-5)


def test_distance_to_lines_on_a_corner():
    corners = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    points = np.array([[[0.5, 0.2, 0.0], [2.0, 0.5, 0.0]],          # beside each segment
                       [[-3.0, 4.0, 0.0], [1.0, 2.0, 2.0]]])        # beyond either end
    np.testing.assert_allclose(pp.distance_to_lines(points, corners),
                               [[0.2, 1.0], [5.0, np.sqrt(5.0)]], atol=1e-15)


@pytest.mark.parametrize('robot', BUNDLED)
def test_a_short_duration_is_slowed_down_to_the_binding_limit(robot, bundled):
    model = bundled[robot]
    motion = pp.plan(model, start_positions(model), duration=0.6)
    assert np.any(motion.slowdown > 1.0)
    velocity, effort = pp.limit_ratios(model, motion)
    # each motion is slowed until one limit binds: the plan's peak share of a limit is the
    # fraction allowed (not less: not slower than needed)
    binding = max(velocity.max() / REFERENCE_VELOCITY_FRACTION,
                  effort.max() / REFERENCE_EFFORT_FRACTION)
    assert 1.0 - 1e-2 <= binding <= 1.0 + BETWEEN_SAMPLES
    assert motion.duration > 0.6


def test_approach_poses_go_up_or_towards_the_base(bundled):
    for name in ('scara', 'planar_2r', 'puma560'):
        points = pp.waypoints(bundled[name], middle(bundled[name].lower, bundled[name].upper))
        for above, at in ((points[1], points[2]), (points[4], points[5])):
            lift = above.pose[:3, 3] - at.pose[:3, 3]
            assert lift[2] > 1e-2 and np.allclose(lift[:2], 0.0, atol=1e-12), name
    # the planar 3R moves in the horizontal plane: it approaches along the line to its base
    model = bundled['planar_3r']
    points = pp.waypoints(model, middle(model.lower, model.upper))
    for above, at in ((points[1], points[2]), (points[4], points[5])):
        lift, tip = above.pose[:3, 3] - at.pose[:3, 3], at.pose[:3, 3]
        assert lift[2] == 0.0 and np.linalg.norm(lift) > 1e-2
        np.testing.assert_allclose(lift / np.linalg.norm(lift), -tip / np.linalg.norm(tip),
                                   atol=1e-9)


def test_the_plan_asks_its_solver_once_per_pose_seeded_with_the_previous_answer(scara):
    calls = []

    def solve(pose, seed):
        calls.append((pose, np.array(seed)))
        result = scara.ik(pose, seed=seed)
        return result.q
    motion = pp.plan(scara, start_positions(scara), solve=solve)
    assert len(calls) == motion.ik_calls == 1 + 5 * pp.SAMPLES_PER_SEGMENT
    # above pick seeded with the pick configuration, every line sample with the sample before
    np.testing.assert_array_equal(calls[0][1], motion.waypoints[2].q)
    np.testing.assert_array_equal([seed for _, seed in calls[1:]],
                                  motion.q[pp.SAMPLES_PER_SEGMENT:-1])


def test_a_solver_that_fails_names_the_pose(scara):
    def solve(pose, seed):
        raise InputError(f'no solution at {pose[:3, 3]}')
    with pytest.raises(InputError, match='no solution at'):
        pp.plan(scara, start_positions(scara), solve=solve)


@pytest.mark.parametrize('robot', BUNDLED)
def test_computed_torque_follows_the_plan_without_saturating(robot, bundled):
    """The demo's loop without ROS: the plant at 1 kHz (RK4, friction) under computed torque."""
    model = bundled[robot]
    motion = pp.plan(model, start_positions(model))
    reference = motion.trajectory()
    controller = control.default_law('computed_torque', model,
                                     middle(model.lower, model.upper))
    record = closed_loop.track_reference(model, controller, reference, motion.duration + 0.5)
    assert record.stable and not record.saturated.any()
    error = reference.sample(record.t).q - record.q
    assert np.sqrt(np.mean(error ** 2)) < 1e-4 and np.abs(error).max() < 1e-3
    # the commanded effort stays within the plan's share of the limits, plus what feedback adds
    assert np.all(np.abs(record.tau).max(axis=0) <= 0.6 * model.effort_limit)


@pytest.mark.parametrize('robot', BUNDLED)
def test_the_demo_on_the_graphs_loop_ends_where_its_plan_does_without_clipping(robot):
    """The demo's run on the nodes' cores in lockstep, its IK the library's."""
    arm = LoopGraph(robot)
    arm.run_until(lambda: arm.mode() is Mode.HOLD, 1.0, 'the controller holding')
    # planned from where the held arm is, within the limits with the controller's margins
    motion = pp.plan(arm.model, arm.states[-1].q)
    assert motion.ik_calls == 1 + 5 * pp.SAMPLES_PER_SEGMENT
    velocity, effort = pp.limit_ratios(arm.model, motion)
    assert velocity.max() <= REFERENCE_VELOCITY_FRACTION * (1.0 + BETWEEN_SAMPLES)
    assert effort.max() <= REFERENCE_EFFORT_FRACTION * (1.0 + BETWEEN_SAMPLES)
    assert motion.duration >= motion.nominal_duration * (1.0 - 1e-9)
    # the files' goal_time (1 s) is stricter than the demo's (2 s)
    arm.submit(Goal('demo', None, motion.times, motion.q, motion.qd, motion.qdd,
                    arm.tolerances))
    arm.run_until(arm.ended, motion.duration + 2.0, 'the goal ending')
    [ended] = arm.ended()
    assert ended.outcome is Outcome.SUCCEEDED, ended.message
    arm.run_for(0.5)
    moving = [c for c in arm.cycles if c.mode is Mode.TRAJECTORY]
    error = np.array([c.reference.q - c.q for c in moving])
    assert np.sqrt(np.mean(error ** 2)) < 1e-2
    assert not any(c.saturated.any() for c in moving)
    # held where the plan ended: above the place pose
    np.testing.assert_allclose(arm.states[-1].q, moving[-1].reference.q, atol=5e-3)
