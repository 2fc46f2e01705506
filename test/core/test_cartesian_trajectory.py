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
Cartesian trajectories through poses: exact at the points, C2, and consistent with themselves.

Truth: the given poses, twists and accelerations at the points; central differences of the
sampled poses (twist) and twists (acceleration); continuity from both sides of every point;
the slerp of :class:`CartesianLine` for two points; the speed limits of a streamed target.
"""

import numpy as np
import pytest
from robot_dynamics import RobotModel
from robot_dynamics.cartesian_trajectory import (CartesianTrajectory, check_motion,
                                                 to_target)
from robot_dynamics.errors import InputError
from robot_dynamics.trajectory import CartesianLine, TaskPoint
from scipy.spatial.transform import Rotation

EPS = 1e-5


def points(rng, k=5):
    times = np.cumsum(rng.uniform(0.4, 1.0, k)) - 0.5
    times[0] = 0.0
    positions = rng.normal(scale=0.3, size=(k, 3))
    rotations = Rotation.from_rotvec(np.cumsum(rng.normal(scale=0.8, size=(k, 3)), axis=0))
    return times, positions, rotations.as_quat()


def differences(traj, t):
    """Twist and acceleration by central differences of the sampled poses and twists."""
    before, after = traj.sample(t - EPS), traj.sample(t + EPS)
    v = (after.pose[..., :3, 3] - before.pose[..., :3, 3]) / (2 * EPS)
    rel = after.pose[..., :3, :3] @ np.swapaxes(before.pose[..., :3, :3], -1, -2)
    w = Rotation.from_matrix(rel).as_rotvec() / (2 * EPS)
    return np.concatenate((v, w), -1), (after.twist - before.twist) / (2 * EPS)


@pytest.mark.parametrize('given', ['poses', 'twists', 'accelerations'])
def test_passes_the_points_and_is_consistent(given, rng):
    times, positions, quats = points(rng)
    twists = rng.normal(size=(5, 6)) if given != 'poses' else None
    accs = rng.normal(size=(5, 6)) if given == 'accelerations' else None
    traj = CartesianTrajectory(times, positions, quats, twists, accs, start_time=2.0)
    at = traj.sample(2.0 + times)
    assert np.allclose(at.pose[:, :3, 3], positions, atol=1e-12)
    assert np.allclose(at.pose[:, :3, :3], Rotation.from_quat(quats).as_matrix(), atol=1e-12)
    if twists is not None:
        assert np.allclose(at.twist, twists, atol=1e-9)
    if accs is not None:
        assert np.allclose(at.acceleration, accs, atol=1e-8)
    if given == 'poses':
        # from rest to rest
        assert np.abs(at.twist[[0, -1]]).max() < 1e-12
        assert np.abs(at.acceleration[[0, -1]]).max() < 1e-12
    # twist = d pose / dt, acceleration = d twist / dt, between and at the points
    t = 2.0 + np.linspace(times[0] + 0.01, times[-1] - 0.01, 57)
    v, a = differences(traj, t)
    s = traj.sample(t)
    assert np.abs(v - s.twist).max() < 1e-6 * (1 + np.abs(s.twist).max())
    assert np.abs(a - s.acceleration).max() < 1e-4 * (1 + np.abs(s.acceleration).max())
    # continuous through the interior points (C2 in orientation, and in position unless the
    # points give twists without accelerations: cubic Hermite, C1, as the joint follower)
    inner = 2.0 + times[1:-1]
    left, right = traj.sample(inner - 1e-9), traj.sample(inner + 1e-9)
    assert np.abs(left.twist - right.twist).max() < 1e-6
    rows = slice(0, 6) if given != 'twists' else slice(3, 6)
    assert np.abs(left.acceleration[:, rows] - right.acceleration[:, rows]).max() < 1e-5


def test_two_points_are_the_slerp_of_a_cartesian_line(rng):
    T0, T1 = np.eye(4), np.eye(4)
    T0[:3, :3] = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()
    T1[:3, :3] = Rotation.from_rotvec([-1.0, 0.9, 2.0]).as_matrix()
    T0[:3, 3], T1[:3, 3] = [0.1, 0.2, 0.3], [0.5, -0.1, 0.2]
    line = CartesianLine(T0, T1, 1.7, 'quintic')
    traj = CartesianTrajectory([0.0, 1.7], [T0[:3, 3], T1[:3, 3]],
                               np.stack((T0[:3, :3], T1[:3, :3])))
    t = np.linspace(-0.2, 1.9, 41)
    a, b = line.sample(t), traj.sample(t)
    for x, y in zip(a, b):
        assert np.abs(x - y).max() < 1e-10


def test_a_motion_under_way_continues_smoothly(rng):
    times, positions, quats = points(rng, 3)
    start = rng.normal(size=(2, 6))
    traj = CartesianTrajectory(times, positions, quats, start_twist=start[0],
                               start_acceleration=start[1])
    first = traj.sample(0.0)
    assert np.allclose(first.twist, start[0], atol=1e-10)
    assert np.allclose(first.acceleration, start[1], atol=1e-9)


@pytest.mark.parametrize('given', ['poses', 'twists'])
def test_after_the_last_point_the_tip_rests_at_it(given, rng):
    times, positions, quats = points(rng, 3)
    twists = rng.normal(size=(3, 6)) if given == 'twists' else None
    traj = CartesianTrajectory(times, positions, quats, twists, start_time=1.0)
    end = 1.0 + times[-1]
    later = [end + 1e-9, end + 0.5, end + 1e3]
    batch = traj.sample(later)               # the batch's path: no shortcut for arrays
    first = traj.sample(later[0])
    for k, t in enumerate(later):
        point = traj.sample(t)
        for x, y in zip(point, batch):
            np.testing.assert_array_equal(x, y[k])
            assert x.flags.writeable     # numba takes it with its compiled kernels' types
    np.testing.assert_allclose(first.pose[:3, 3], positions[-1], atol=1e-12)
    np.testing.assert_allclose(first.pose[:3, :3], Rotation.from_quat(quats[-1]).as_matrix(),
                               atol=1e-12)
    assert not first.twist.any() and not first.acceleration.any()
    # a caller's change to a point it was given is its own
    first.pose[0, 3] += 1.0
    np.testing.assert_array_equal(traj.sample(end + 2.0).pose, batch.pose[0])
    # at the last point itself, its own twist (given, or rest), not the held one
    np.testing.assert_allclose(traj.sample(end).twist,
                               np.zeros(6) if twists is None else twists[-1], atol=1e-9)


def test_bad_points_are_refused(rng):
    times, positions, quats = points(rng, 3)
    with pytest.raises(InputError, match=r'orientations\[1\] has norm 1.00001'):
        bad = quats.copy()
        bad[1] *= 1.00001
        CartesianTrajectory(times, positions, bad)
    with pytest.raises(InputError, match=r'orientations\[2\] is .*finite'):
        bad = quats.copy()
        bad[2, 0] = np.nan
        CartesianTrajectory(times, positions, bad)
    with pytest.raises(InputError, match=r'time_from_start\[2\].*strictly increasing'):
        CartesianTrajectory([0.0, 1.0, 1.0], positions, quats)
    with pytest.raises(InputError, match='positions: contains non-finite'):
        bad = positions.copy()
        bad[1, 0] = np.inf
        CartesianTrajectory(times, bad, quats)


def test_a_streamed_target_is_reached_within_the_speed_limits():
    T0, T1 = np.eye(4), np.eye(4)
    T1[:3, :3] = Rotation.from_rotvec([0.0, 0.0, 1.2]).as_matrix()
    T1[:3, 3] = [0.3, 0.0, -0.1]
    for lin, ang in ((0.25, 2.0), (1.0, 0.5)):
        traj = to_target(TaskPoint(T0, None, None), T1, lin, ang, start_time=5.0)
        s = traj.sample(np.linspace(5.0, traj.end_time, 2001))
        v = np.linalg.norm(s.twist[:, :3], axis=1).max()
        w = np.linalg.norm(s.twist[:, 3:], axis=1).max()
        assert v <= lin * (1 + 1e-6) and w <= ang * (1 + 1e-6)
        # the binding limit is reached: the least time
        assert max(v / lin, w / ang) == pytest.approx(1.0, rel=1e-4)
        assert np.allclose(s.pose[-1], T1, atol=1e-12)
    with pytest.raises(InputError, match='max_linear_velocity'):
        to_target(TaskPoint(T0, None, None), T1, 0.0, 1.0)


def test_check_motion_refuses_poses_out_of_reach_and_motions_too_fast():
    model = RobotModel.load('planar_2r')
    q0 = np.array([0.4, 1.1])
    T0 = model.fk(q0)
    far = T0.copy()
    far[:3, 3] *= 1.5                      # beyond the 4 m reach
    with pytest.raises(InputError, match='unreachable'):
        check_motion(model, CartesianLine(T0, far, 2.0), q0)
    near = T0.copy()
    near[:3, 3] *= 0.8
    check_motion(model, CartesianLine(T0, near, 3.0), q0)
    with pytest.raises(InputError, match='above its limit'):
        check_motion(model, CartesianLine(T0, near, 0.05), q0)
