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

"""Trajectories: boundary conditions, derivatives, limits, waypoints, Cartesian lines, scaling."""

import numpy as np
import pytest

from robot_dynamics import InputError, RobotModel, ShapeError
from robot_dynamics import trajectory as tr
from robot_dynamics.spatial import (matrix_to_quaternion, pose_error, quaternion_slerp,
                                    quaternion_to_matrix, rot_z)

FD_STEP = 1e-6      # s, central differences
FD_ATOL = 1e-6      # absolute tolerance of a central difference of a smooth polynomial


def assert_derivatives(traj, t, atol=FD_ATOL):
    """Check qd and qdd against central differences of q and qd at times ``t``."""
    p = traj.sample(t)
    plus, minus = traj.sample(t + FD_STEP), traj.sample(t - FD_STEP)
    np.testing.assert_allclose((plus.q - minus.q) / (2 * FD_STEP), p.qd, atol=atol)
    np.testing.assert_allclose((plus.qd - minus.qd) / (2 * FD_STEP), p.qdd, atol=atol)


def interior(traj, count=401, guard=1e-4):
    """Sample times inside the segments (away from the breaks, where qdd may jump)."""
    t = np.linspace(traj.start_time, traj.end_time, count)
    near = np.min(np.abs(t[:, None] - traj.breaks[None, :]), axis=1) < guard
    return t[~near]


# ---- point to point ----------------------------------------------------------------------------

Q0 = np.array([0.1, -0.5, 0.3])
Q1 = np.array([1.2, 0.4, 0.3])


@pytest.mark.parametrize('profile', ['cubic', 'quintic', 'min_jerk'])
def test_point_to_point_rest_to_rest_boundaries_exact(profile):
    traj = tr.point_to_point(Q0, Q1, 2.0, profile, start_time=0.5)
    start, end = traj.sample(0.5), traj.sample(2.5)
    np.testing.assert_array_equal(start.q, Q0)
    np.testing.assert_array_equal(end.q, Q1)
    np.testing.assert_allclose(start.qd, 0.0, atol=1e-15)
    np.testing.assert_allclose(end.qd, 0.0, atol=1e-14)
    if profile != 'cubic':
        np.testing.assert_allclose(start.qdd, 0.0, atol=1e-14)
        np.testing.assert_allclose(end.qdd, 0.0, atol=1e-13)
    assert traj.duration == 2.0 and traj.dof == 3
    assert_derivatives(traj, interior(traj))


def test_quintic_general_boundaries_exact():
    v0, v1 = np.array([0.5, 0.0, -0.2]), np.array([-0.1, 0.3, 0.0])
    a0, a1 = np.array([1.0, -2.0, 0.0]), np.array([0.0, 0.5, 3.0])
    traj = tr.point_to_point(Q0, Q1, 1.5, 'quintic', qd_start=v0, qd_goal=v1, qdd_start=a0,
                             qdd_goal=a1)
    s, e = traj.sample(0.0), traj.sample(1.5)
    np.testing.assert_allclose(np.stack((s.q, s.qd, s.qdd, e.q, e.qd, e.qdd)),
                               np.stack((Q0, v0, a0, Q1, v1, a1)), atol=1e-12)
    cubic = tr.point_to_point(Q0, Q1, 1.5, 'cubic', qd_start=v0, qd_goal=v1)
    s, e = cubic.sample(0.0), cubic.sample(1.5)
    np.testing.assert_allclose(np.stack((s.q, s.qd, e.q, e.qd)), np.stack((Q0, v0, Q1, v1)),
                               atol=1e-12)


def test_min_jerk_is_the_10_15_6_law():
    traj = tr.point_to_point(Q0, Q1, 2.0, 'min_jerk')
    tau = np.linspace(0.0, 1.0, 11)
    s = 10 * tau ** 3 - 15 * tau ** 4 + 6 * tau ** 5
    np.testing.assert_allclose(traj.sample(2.0 * tau).q, Q0 + s[:, None] * (Q1 - Q0), atol=1e-14)


def test_point_to_point_synchronised():
    traj = tr.point_to_point(Q0, Q1, 2.0, 'quintic')
    t = np.linspace(0.0, 2.0, 50)
    frac = (traj.sample(t).q - Q0) / np.where(Q1 != Q0, Q1 - Q0, 1.0)
    np.testing.assert_allclose(frac[:, 0], frac[:, 1], atol=1e-14)   # same time law


def test_sampling_batch_shapes_and_holds():
    traj = tr.point_to_point(Q0, Q1, 2.0, 'quintic', start_time=1.0)
    t = np.array([[0.0, 1.3, 2.0], [2.9, 3.0, 5.0]])
    batch = traj.sample(t)
    assert batch.q.shape == (2, 3, 3) and batch.qdd.shape == (2, 3, 3)
    for index in np.ndindex(t.shape):
        one = traj.sample(float(t[index]))
        np.testing.assert_allclose(batch.q[index], one.q, atol=1e-15)
        np.testing.assert_allclose(batch.qd[index], one.qd, atol=1e-15)
        np.testing.assert_allclose(batch.qdd[index], one.qdd, atol=1e-15)
    before, after = traj.sample(-3.0), traj.sample(10.0)
    np.testing.assert_array_equal(before.q, Q0)
    np.testing.assert_array_equal(after.q, traj.end)
    for p in (before, after):
        np.testing.assert_array_equal(p.qd, 0.0)
        np.testing.assert_array_equal(p.qdd, 0.0)


def test_point_to_point_rejects_bad_input():
    with pytest.raises(InputError, match='profile'):
        tr.point_to_point(Q0, Q1, 1.0, 'septic')
    with pytest.raises(ShapeError, match='q_goal'):
        tr.point_to_point(Q0, Q1[:2], 1.0)
    with pytest.raises(InputError, match='non-finite'):
        tr.point_to_point(Q0, [0.0, np.nan, 0.0], 1.0)
    with pytest.raises(InputError, match='duration'):
        tr.point_to_point(Q0, Q1, -1.0)
    with pytest.raises(InputError, match='cubic'):
        tr.point_to_point(Q0, Q1, 1.0, 'cubic', qdd_start=1.0)
    with pytest.raises(InputError, match='non-finite time'):
        tr.point_to_point(Q0, Q1, 1.0).sample([0.0, np.nan])


# ---- trapezoidal velocity ----------------------------------------------------------------------

VMAX = np.array([1.0, 2.0, 0.5])
AMAX = np.array([2.0, 3.0, 4.0])


def peaks(traj, count=20001):
    p = traj.sample(np.linspace(traj.start_time, traj.end_time, count))
    return np.abs(p.qd).max(axis=0), np.abs(p.qdd).max(axis=0)


def test_trapezoidal_respects_limits_and_binding_joint_reaches_them():
    q1 = np.array([2.0, -1.0, 0.5])
    traj = tr.trapezoidal(np.zeros(3), q1, VMAX, AMAX)
    assert traj.breaks.size == 4                      # accelerate, cruise, decelerate
    vpeak, apeak = peaks(traj)
    assert np.all(vpeak <= VMAX * (1 + 1e-12)) and np.all(apeak <= AMAX * (1 + 1e-12))
    # joint 0 sets both V = min(vmax/|dq|) and A = min(amax/|dq|): it reaches its limits
    np.testing.assert_allclose(vpeak[0], VMAX[0], rtol=1e-9)
    np.testing.assert_allclose(apeak[0], AMAX[0], rtol=1e-9)
    # the fastest time: 1/V + V/A in normalised units
    V, A = np.min(VMAX / np.abs(q1)), np.min(AMAX / np.abs(q1))
    assert traj.duration == pytest.approx(1 / V + V / A, rel=1e-12)
    # exact boundaries, synchronised velocity profiles
    np.testing.assert_allclose(traj.sample(traj.end_time).q, q1, atol=1e-14)
    p = traj.sample(np.linspace(0.0, traj.end_time, 101))
    np.testing.assert_allclose(p.qd[:, 1] / q1[1], p.qd[:, 0] / q1[0], atol=1e-12)
    assert_derivatives(traj, interior(traj))


def test_trapezoidal_triangular_when_cruise_is_not_reached():
    q1 = np.array([0.2, 0.1, 0.05])
    traj = tr.trapezoidal(np.zeros(3), q1, VMAX, AMAX)
    assert traj.breaks.size == 3                      # accelerate, decelerate
    vpeak, apeak = peaks(traj)
    assert np.all(vpeak < VMAX) and np.all(apeak <= AMAX * (1 + 1e-12))
    A = np.min(AMAX / q1)
    assert traj.duration == pytest.approx(2.0 / np.sqrt(A), rel=1e-12)
    assert apeak.max() / AMAX[np.argmax(apeak / AMAX)] == pytest.approx(1.0, rel=1e-9)
    np.testing.assert_allclose(traj.sample(traj.end_time).q, q1, atol=1e-15)


def test_trapezoidal_stretched_duration_and_errors():
    q1 = np.array([2.0, -1.0, 0.5])
    fastest = tr.trapezoidal(np.zeros(3), q1, VMAX, AMAX).duration
    slow = tr.trapezoidal(np.zeros(3), q1, VMAX, AMAX, duration=fastest + 1.0)
    assert slow.duration == pytest.approx(fastest + 1.0)
    vpeak, apeak = peaks(slow)
    assert np.all(vpeak < VMAX) and np.all(apeak <= AMAX * (1 + 1e-12))
    np.testing.assert_allclose(slow.sample(slow.end_time).q, q1, atol=1e-14)
    with pytest.raises(InputError, match='shorter than the fastest'):
        tr.trapezoidal(np.zeros(3), q1, VMAX, AMAX, duration=0.5 * fastest)
    with pytest.raises(InputError, match=r'velocity_limit\[1\]'):
        tr.trapezoidal(np.zeros(3), q1, [1.0, 0.0, 1.0], AMAX)
    still = tr.trapezoidal(q1, q1, VMAX, AMAX)
    assert still.duration == 0.0
    np.testing.assert_array_equal(still.sample(1.0).q, q1)


# ---- waypoints (trajectory_msgs/JointTrajectory) -----------------------------------------------

TIMES = np.array([0.0, 1.0, 2.5, 3.0, 4.2])
POINTS = np.array([[0.0, 0.0], [1.0, 2.0], [0.5, 1.0], [0.7, -1.0], [0.0, 0.0]])


def test_waypoints_positions_only_is_c2_from_rest_to_rest_in_acceleration():
    from scipy.interpolate import CubicSpline
    traj = tr.from_waypoints(TIMES, POINTS)
    at = traj.sample(TIMES)
    np.testing.assert_allclose(at.q, POINTS, atol=1e-14)
    # at rest at both ends, velocity and acceleration: no step when the hold before and after
    # (zero acceleration) hands over
    ends = traj.sample(TIMES[[0, -1]] + [0.0, -1e-12])
    np.testing.assert_allclose(np.stack((ends.qd, ends.qdd)), 0.0, atol=1e-10)
    # C2 at the interior knots: qdd equal from both sides
    left, right = traj.sample(TIMES[1:-1] - 1e-9), traj.sample(TIMES[1:-1] + 1e-9)
    np.testing.assert_allclose(left.qdd, right.qdd, atol=1e-6)
    # the interior segments are the clamped cubic spline's; the end segments meet it at the
    # inner knots in position, velocity and acceleration
    reference = CubicSpline(TIMES, POINTS, bc_type='clamped')
    t = np.linspace(TIMES[1], TIMES[-2], 301)
    np.testing.assert_allclose(traj.sample(t).q, reference(t), atol=1e-13)
    np.testing.assert_allclose(traj.sample(t).qdd, reference(t, 2), atol=1e-11)
    for derivative, value in enumerate(traj.sample(t[[0, -1]])):
        np.testing.assert_allclose(value, reference(t[[0, -1]], derivative), atol=1e-11)
    assert traj.coefficients.shape == (4, 6, 2)
    assert_derivatives(traj, interior(traj))


def test_waypoints_positions_only_from_a_motion_under_way():
    """A goal that takes over a moving reference starts with its velocity and acceleration."""
    v0, a0 = np.array([0.4, -0.2]), np.array([-1.5, 3.0])
    for k in (2, 3, 5):
        traj = tr.from_waypoints(TIMES[:k], POINTS[:k], start_velocity=v0, start_acceleration=a0,
                                 start_time=1.0)
        start = traj.sample(1.0)
        np.testing.assert_allclose(np.stack(start), np.stack((POINTS[0], v0, a0)), atol=1e-12)
        end = traj.sample(1.0 + TIMES[k - 1] - 1e-12)
        np.testing.assert_allclose(np.stack((end.qd, end.qdd)), 0.0, atol=1e-9)
        assert_derivatives(traj, interior(traj), atol=1e-5)
    # one segment: the quintic Hermite, rest to rest when nothing moves at the start
    single = tr.from_waypoints(TIMES[:2], POINTS[:2])
    exact = tr.point_to_point(POINTS[0], POINTS[1], TIMES[1], 'quintic')
    t = np.linspace(0.0, TIMES[1], 51)
    for got, want in zip(single.sample(t), exact.sample(t)):
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_waypoints_hermite_and_quintic_match_every_given_value():
    rng = np.random.default_rng(5)
    v = rng.normal(size=POINTS.shape)
    a = rng.normal(size=POINTS.shape)
    cubic = tr.from_waypoints(TIMES, POINTS, v, start_time=2.0)
    at = cubic.sample(TIMES + 2.0)
    np.testing.assert_allclose(at.q, POINTS, atol=1e-13)
    np.testing.assert_allclose(at.qd[:-1], v[:-1], atol=1e-12)   # after the end qd is held 0
    np.testing.assert_allclose(cubic.sample(TIMES[-1] + 2.0 - 1e-12).qd, v[-1], atol=1e-9)
    assert_derivatives(cubic, interior(cubic))
    quintic = tr.from_waypoints(TIMES, POINTS, v, a)
    at = quintic.sample(TIMES[:-1])
    np.testing.assert_allclose(at.q, POINTS[:-1], atol=1e-13)
    np.testing.assert_allclose(at.qd, v[:-1], atol=1e-12)
    np.testing.assert_allclose(at.qdd, a[:-1], atol=1e-11)
    end = quintic.sample(TIMES[-1])
    np.testing.assert_allclose(np.stack((end.q, end.qd, end.qdd)),
                               np.stack((POINTS[-1], v[-1], a[-1])), atol=1e-10)
    assert_derivatives(quintic, interior(quintic), atol=1e-5)


def test_waypoints_single_point_holds_it():
    traj = tr.from_waypoints([0.5], [[1.0, 2.0]])
    np.testing.assert_array_equal(traj.sample([0.0, 0.5, 9.0]).q, [[1.0, 2.0]] * 3)


@pytest.mark.parametrize('times, message', [
    ([0.0, 1.0, 1.0, 2.0, 3.0], r'time_from_start\[2\] = 1.0 s is not after '
                                r'time_from_start\[1\]'),
    ([0.0, 1.0, 0.5, 2.0, 3.0], r'time_from_start\[2\] = 0.5 s is not after'),
    ([0.0, 1.0, np.inf, 2.0, 3.0], r'time_from_start\[2\] is inf'),
    ([0.0, np.nan, 1.0, 2.0, 3.0], r'time_from_start\[1\] is nan'),
])
def test_waypoints_reject_bad_times(times, message):
    with pytest.raises(InputError, match=message):
        tr.from_waypoints(times, POINTS)


def test_waypoints_reject_mismatched_lengths_and_non_finite_values():
    with pytest.raises(ShapeError, match='positions: expected 5 points'):
        tr.from_waypoints(TIMES, POINTS[:4])
    with pytest.raises(ShapeError, match='velocities: expected 5 points'):
        tr.from_waypoints(TIMES, POINTS, np.zeros((4, 2)))
    with pytest.raises(ShapeError, match='accelerations: expected 2 values per point'):
        tr.from_waypoints(TIMES, POINTS, np.zeros((5, 2)), np.zeros((5, 3)))
    bad = POINTS.copy()
    bad[3, 1] = np.nan
    with pytest.raises(InputError, match=r'positions\[3\]\[1\] \(point 3, joint 1\) is nan'):
        tr.from_waypoints(TIMES, bad)
    v = np.zeros((5, 2))
    v[4, 0] = -np.inf
    with pytest.raises(InputError, match=r'velocities\[4\]\[0\]'):
        tr.from_waypoints(TIMES, POINTS, v)
    with pytest.raises(InputError, match='accelerations given without velocities'):
        tr.from_waypoints(TIMES, POINTS, accelerations=np.zeros((5, 2)))
    with pytest.raises(ShapeError, match='time_from_start'):
        tr.from_waypoints([], np.zeros((0, 2)))


def test_time_scaled_follows_the_same_path():
    traj = tr.from_waypoints(TIMES, POINTS, start_time=1.0)
    slow = traj.time_scaled(2.5)
    assert slow.duration == pytest.approx(2.5 * traj.duration)
    u = np.linspace(0.0, traj.duration, 57)
    a, b = traj.sample(1.0 + u), slow.sample(1.0 + 2.5 * u)
    np.testing.assert_allclose(b.q, a.q, atol=1e-12)
    np.testing.assert_allclose(b.qd, a.qd / 2.5, atol=1e-12)
    np.testing.assert_allclose(b.qdd, a.qdd / 2.5 ** 2, atol=1e-11)


# ---- Cartesian line ----------------------------------------------------------------------------

def line_poses(model, q0, shift, yaw=0.0):
    T0 = model.fk(q0)
    T1 = T0.copy()
    T1[:3, 3] += shift
    T1[:3, :3] = rot_z(yaw) @ T0[:3, :3]
    return T0, T1


def test_cartesian_line_is_straight_slerped_and_consistent(scara):
    T0, T1 = line_poses(scara, [0.3, 1.0, 0.1], [-0.2, 0.15, 0.05], yaw=0.7)
    line = tr.CartesianLine(T0, T1, 1.5, start_time=0.5)
    t = np.linspace(0.5, 2.0, 31)
    p = line.sample(t)
    s = (p.pose[:, :3, 3] - T0[:3, 3]) @ (T1[:3, 3] - T0[:3, 3]) / np.sum((T1 - T0)[:3, 3] ** 2)
    np.testing.assert_allclose(p.pose[:, :3, 3], T0[:3, 3] + s[:, None] * (T1 - T0)[:3, 3],
                               atol=1e-15)                                   # on the line
    slerp = quaternion_to_matrix(quaternion_slerp(matrix_to_quaternion(T0[:3, :3]),
                                                  matrix_to_quaternion(T1[:3, :3]), s))
    np.testing.assert_allclose(p.pose[:, :3, :3], slerp, atol=1e-14)
    np.testing.assert_allclose(line.sample(0.5).pose, T0, atol=1e-15)
    np.testing.assert_allclose(line.sample(2.0).pose, T1, atol=1e-14)
    # twist and acceleration are the derivatives of the pose and of the twist
    h = 1e-6
    plus, minus = line.sample(t[1:-1] + h), line.sample(t[1:-1] - h)
    dpose = pose_error(minus.pose, plus.pose) / (2 * h)
    np.testing.assert_allclose(dpose, p.twist[1:-1], atol=1e-7)
    np.testing.assert_allclose((plus.twist - minus.twist) / (2 * h), p.acceleration[1:-1],
                               atol=1e-6)


def test_cartesian_line_to_joint_trajectory_on_scara(scara):
    q0 = np.array([0.3, 1.0, 0.1])
    T0, T1 = line_poses(scara, q0, [-0.2, 0.15, 0.05])
    line = tr.CartesianLine(T0, T1, 1.5)
    joint = line.to_joint_trajectory(scara, q0)
    t = np.linspace(0.0, 1.5, 301)
    p = joint.sample(t)
    ref = line.sample(t)
    np.testing.assert_allclose(scara.fk(p.q)[:, :3, 3], ref.pose[:, :3, 3], atol=1e-8)
    v = (scara.jacobian(p.q) @ p.qd[..., None])[..., 0]
    np.testing.assert_allclose(v[:, :3], ref.twist[:, :3], atol=1e-6)
    np.testing.assert_allclose(joint.sample(0.0).q, q0, atol=1e-6)   # same branch as the seed


def test_cartesian_line_explicit_mask_none_means_the_task_mask(scara):
    """``mask=None`` passed on to the IK is its default: every task row, not just vx."""
    q0 = np.array([0.3, 1.0, 0.1])
    T0, T1 = line_poses(scara, q0, [-0.2, 0.15, 0.05])
    line = tr.CartesianLine(T0, T1, 1.5)
    joint = line.to_joint_trajectory(scara, q0, mask=None)
    t = np.linspace(0.0, 1.5, 301)
    p, ref = joint.sample(t), line.sample(t)
    rows = np.flatnonzero(scara.task_mask)
    np.testing.assert_array_equal(rows, [0, 1, 2])          # the tip position
    v = (scara.jacobian(p.q) @ p.qd[..., None])[..., 0]
    np.testing.assert_allclose(v[:, rows], ref.twist[:, rows], atol=1e-6)
    np.testing.assert_array_equal(joint.coefficients,
                                  line.to_joint_trajectory(scara, q0).coefficients)


def test_cartesian_line_unreachable_names_the_sample(scara):
    q0 = np.array([0.3, 1.0, 0.1])
    T0, T1 = line_poses(scara, q0, [2.0, 0.0, 0.0])
    with pytest.raises(InputError, match=r'sample \d+ of 51 \(t = [0-9.]+ s.*unreachable'):
        tr.CartesianLine(T0, T1, 1.0).to_joint_trajectory(scara, q0)


@pytest.mark.parametrize('k', [2, 3, 6])
def test_positions_only_spline_with_a_start_velocity(k, rng):
    t = np.cumsum(rng.uniform(0.2, 1.0, k)) - 0.2
    p = rng.uniform(-1.0, 1.0, (k, 3))
    v0 = np.array([0.5, -1.0, 2.0])
    traj = tr.from_waypoints(t, p, start_velocity=v0, start_time=1.0)
    at = traj.sample(1.0 + t)
    np.testing.assert_allclose(at.q, p, atol=1e-12)
    np.testing.assert_allclose(at.qd[0], v0, atol=1e-12)
    np.testing.assert_allclose(traj.sample(1.0 + t[-1] - 1e-9).qd, 0.0, atol=1e-6)
    # C2 at the interior knots: the acceleration is continuous
    for tk in t[1:-1]:
        np.testing.assert_allclose(traj.sample(1.0 + tk - 1e-7).qdd,
                                   traj.sample(1.0 + tk + 1e-7).qdd, atol=1e-4)
    # zero start velocity gives the plain spline from rest
    plain = tr.from_waypoints(t, p)
    zero = tr.from_waypoints(t, p, start_velocity=np.zeros(3))
    np.testing.assert_allclose(plain.coefficients, zero.coefficients, atol=1e-14)


def test_start_velocity_with_point_velocities_is_an_error():
    with pytest.raises(InputError, match='start_velocity'):
        tr.from_waypoints([0.0, 1.0], [[0.0], [1.0]], velocities=[[0.0], [0.0]],
                          start_velocity=[1.0])
    with pytest.raises(InputError, match='start_acceleration'):
        tr.from_waypoints([0.0, 1.0], [[0.0], [1.0]], velocities=[[0.0], [0.0]],
                          start_acceleration=[1.0])


def test_check_limits_gives_times_from_the_trajectory_start():
    """On a controller's clock a goal starts ~1.8e9 s after the epoch: messages count from it."""
    model = RobotModel.load('planar_2r')          # 5 rad/s on both joints
    t0, d, x = 1.7955e9, 1.0, 3.0
    fast = tr.point_to_point([0.0, 0.0], [x, 0.0], d, 'quintic', start_time=t0)
    with pytest.raises(InputError) as info:
        tr.check_limits(model, fast)
    # the quintic's speed 30 s^2 (1 - s)^2 x / d first reaches 5 rad/s at s = 0.3053...
    s = np.roots([1.0, -2.0, 1.0, 0.0, -5.0 * d / (30.0 * x)])
    first = min(r.real for r in s if abs(r.imag) < 1e-12 and 0.0 < r.real < 0.5) * d
    message = str(info.value)
    assert message.startswith("joint 'joint1': velocity ") and 'above its limit 5' in message
    reported = float(message.split(' s after the start')[0].rsplit(' ', 1)[1])
    assert first <= reported <= first + 1.0 / tr.LIMIT_CHECK_RATE
    outside = tr.point_to_point([0.0, 0.0], [0.0, 4.0], 10.0, start_time=t0)
    with pytest.raises(InputError, match=r"joint 'joint2': position 3\.14\d* 6\.\d{3} s after "
                                         r'the start is outside its limits'):
        tr.check_limits(model, outside)
