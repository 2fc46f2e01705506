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
Rotation and transform utilities (robot_dynamics.spatial).

Worked examples: Hayes, Introduction to Robotics §2.5.2, §2.6.2, §2.6.3 and §2.9 (fixed
angles / ZYX Euler, axis-angle, Euler-Rodrigues, Cayley, Z-Y-Z rate map). Independent references
are written out here (elementary matrices, scipy's Rotation, scipy.linalg.expm).
"""

import numpy as np
import pytest
from robot_dynamics import spatial
from robot_dynamics.errors import InputError, ShapeError
from robot_dynamics.kinematics import force_cross6, motion_cross6
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

BATCH_SHAPES = [(), (5,), (2, 3)]
DEG = np.pi / 180.0


def Rx(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def Ry(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def Rz(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def S(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def random_rotations(rng, shape):
    return Rotation.random(int(np.prod(shape, dtype=int)), random_state=rng).as_matrix() \
        .reshape(tuple(shape) + (3, 3))


def assert_rotation(R, tol=1e-12):
    R = np.asarray(R)
    assert np.allclose(np.swapaxes(R, -1, -2) @ R, np.eye(3), atol=tol)
    assert np.allclose(np.linalg.det(R), 1.0, atol=tol)


# ---- elementary rotations and helpers -------------------------------------------------------


@pytest.mark.parametrize('angle', [0.0, 0.3, -1.2, np.pi / 2, np.pi, 2.5 * np.pi])
def test_elementary_rotations_match_seed_matrices(angle):
    # Hayes §2.2: columns are the images of the basis vectors
    assert np.allclose(spatial.rot_x(angle), Rx(angle), atol=1e-15)
    assert np.allclose(spatial.rot_y(angle), Ry(angle), atol=1e-15)
    assert np.allclose(spatial.rot_z(angle), Rz(angle), atol=1e-15)


def test_elementary_rotations_positive_angle_is_counter_clockwise():
    assert np.allclose(spatial.rot_z(np.pi / 2) @ [1, 0, 0], [0, 1, 0], atol=1e-15)
    assert np.allclose(spatial.rot_x(np.pi / 2) @ [0, 1, 0], [0, 0, 1], atol=1e-15)
    assert np.allclose(spatial.rot_y(np.pi / 2) @ [0, 0, 1], [1, 0, 0], atol=1e-15)


@pytest.mark.parametrize('shape', BATCH_SHAPES)
def test_elementary_rotations_batch(rng, shape):
    angles = rng.uniform(-np.pi, np.pi, shape)
    for fn, ref in ((spatial.rot_x, Rx), (spatial.rot_y, Ry), (spatial.rot_z, Rz)):
        R = fn(angles)
        assert R.shape == tuple(shape) + (3, 3)
        expected = np.array([ref(a) for a in np.ravel(angles)]).reshape(R.shape)
        assert np.allclose(R, expected, atol=1e-15)


def test_skew_and_cross(rng):
    a, b = rng.normal(size=(2, 7, 3))
    assert np.allclose(spatial.skew(a) @ b[..., None], np.cross(a, b)[..., None], atol=1e-14)
    assert np.allclose(spatial.cross(a, b), np.cross(a, b), atol=1e-14)
    assert np.allclose(spatial.skew(a[0]), S(a[0]), atol=0)
    # R S(a) R^T = S(R a) (Hayes eq 3.22)
    R = random_rotations(rng, ())
    assert np.allclose(R @ spatial.skew(a[0]) @ R.T, spatial.skew(R @ a[0]), atol=1e-14)


def test_motion_and_force_cross_products(rng):
    """The compiled kernels' cross products against 3-vector cross products and duality."""
    for v, m, f in rng.normal(size=(4, 3, 6)):
        expected = np.concatenate((np.cross(v[3:], m[:3]) + np.cross(v[:3], m[3:]),
                                   np.cross(v[3:], m[3:])))
        vm, vf = np.empty(6), np.empty(6)
        motion_cross6(v, m, vm)
        force_cross6(v, f, vf)
        assert np.allclose(vm, expected, atol=1e-14)
        # Featherstone's force cross product: v x* f = -crm(v)^T f, so (v x* f) . m = -f . (v x m)
        assert np.allclose(vf, np.concatenate((np.cross(v[3:], f[:3]),
                                               np.cross(v[3:], f[3:]) + np.cross(v[:3], f[:3]))),
                           atol=1e-14)
        assert vf @ m == pytest.approx(-(f @ vm), abs=1e-13)


# ---- seed A1-A3: homogeneous transforms ------------------------------------------------------


def test_seed_a1_transform_mapping():
    T01 = spatial.transform(spatial.rot_z(30 * DEG), [10.0, 5.0, 0.0])
    expected = [[np.cos(30 * DEG), -0.5, 0, 10], [0.5, np.cos(30 * DEG), 0, 5], [0, 0, 1, 0],
                [0, 0, 0, 1]]
    assert np.allclose(T01, expected, atol=1e-15)
    p0 = T01 @ [3.0, 7.0, 0.0, 1.0]
    assert np.allclose(p0, [9.0980762114, 12.5621778265, 0.0, 1.0], atol=1e-9)
    assert np.allclose(p0[:2], [9.098, 12.562], atol=5e-4)   # as printed
    Tinv = np.linalg.inv(T01)
    assert np.allclose(Tinv, [[0.8660254038, 0.5, 0, -11.1602540378],
                              [-0.5, 0.8660254038, 0, 0.6698729811],
                              [0, 0, 1, 0], [0, 0, 0, 1]], atol=1e-9)
    assert np.allclose(Tinv @ p0, [3.0, 7.0, 0.0, 1.0], atol=1e-12)


def test_seed_a2_rotation_operator():
    p = spatial.rot_z(30 * DEG) @ [0.0, 2.0, 0.0]
    assert np.allclose(p, [-1.0, 1.7320508076, 0.0], atol=1e-9)


def test_seed_a3_transform_operator():
    # rotate (3, 7, 0) by 30 degrees about z0, then translate by (10, 5, 0): same numbers as A1
    p = spatial.rot_z(30 * DEG) @ [3.0, 7.0, 0.0] + [10.0, 5.0, 0.0]
    T = spatial.xyz_rpy_to_transform([10.0, 5.0, 0.0], [0.0, 0.0, 30 * DEG])
    assert np.allclose(p, [9.0980762114, 12.5621778265, 0.0], atol=1e-9)
    assert np.allclose((T @ [3.0, 7.0, 0.0, 1.0])[:3], p, atol=1e-12)


def test_check_transform_accepts_rigid_transforms(rng):
    T = spatial.transform(random_rotations(rng, (4,)), rng.normal(size=(4, 3)))
    out = spatial.check_transform(T.tolist())
    assert out.dtype == np.float64 and np.array_equal(out, T)


@pytest.mark.parametrize('bad, error, words', [
    (np.diag([1.0, 1.0, 1.1, 1.0]), InputError, 'rotation'),               # not orthonormal
    (np.diag([1.0, 1.0, -1.0, 1.0]), InputError, 'det'),                   # a reflection
    (np.array([[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0.5, 1]]), InputError,
     'last row'),
    (np.eye(3), ShapeError, '(..., 4, 4)'),
    (np.full((4, 4), np.nan), InputError, 'non-finite'),
    ('abc', InputError, 'numbers'),
])
def test_check_transform_errors(bad, error, words):
    with pytest.raises(error) as info:
        spatial.check_transform(bad, name='goal')
    assert isinstance(info.value, ValueError)
    assert words in str(info.value) and 'goal' in str(info.value)


# ---- B15: fixed angles XYZ / Euler ZYX ---------------------------------------------------------


def eq_2_6(a, b, c):
    """Hayes eq 2.6: R = Rz(a) Ry(b) Rx(c) written out."""
    ca, sa, cb, sb, cc, sc = np.cos(a), np.sin(a), np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    return np.array([[ca * cb, ca * sb * sc - sa * cc, ca * sb * cc + sa * sc],
                     [sa * cb, sa * sb * sc + ca * cc, sa * sb * cc - ca * sc],
                     [-sb, cb * sc, cb * cc]])


def test_seed_b15_zyx_euler_and_fixed_angles():
    a, b, c = 0.3, -0.7, 1.1
    R = spatial.euler_zyx_to_matrix([a, b, c])
    assert np.allclose(R, eq_2_6(a, b, c), atol=1e-15)
    assert np.allclose(R, Rz(a) @ Ry(b) @ Rx(c), atol=1e-15)
    # fixed angles XYZ (gamma about x first, then beta about y, alpha about z) = roll-pitch-yaw
    assert np.allclose(spatial.rpy_to_matrix([c, b, a]), R, atol=1e-15)
    assert np.allclose(spatial.matrix_to_euler_zyx(R), [a, b, c], atol=1e-12)
    assert np.allclose(spatial.matrix_to_rpy(R), [c, b, a], atol=1e-12)
    # the inverse formulas of the fixed angles (Hayes §2.9), + branch
    beta = np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0]))
    alpha = np.arctan2(R[1, 0] / np.cos(beta), R[0, 0] / np.cos(beta))
    gamma = np.arctan2(R[2, 1] / np.cos(beta), R[2, 2] / np.cos(beta))
    assert np.allclose([alpha, beta, gamma], [a, b, c], atol=1e-12)
    # URDF rpy = scipy's extrinsic 'xyz'
    assert np.allclose(Rotation.from_euler('xyz', [c, b, a]).as_matrix(), R, atol=1e-15)


@pytest.mark.parametrize('shape', BATCH_SHAPES)
def test_euler_and_rpy_round_trip(rng, shape):
    angles = np.stack((rng.uniform(-np.pi, np.pi, shape), rng.uniform(-1.5, 1.5, shape),
                       rng.uniform(-np.pi, np.pi, shape)), axis=-1)
    R = spatial.euler_zyx_to_matrix(angles)
    assert R.shape == tuple(shape) + (3, 3)
    assert_rotation(R)
    assert np.allclose(spatial.matrix_to_euler_zyx(R), angles, atol=1e-10)
    assert np.allclose(spatial.rpy_to_matrix(angles[..., ::-1]), R, atol=1e-15)
    assert np.allclose(spatial.matrix_to_rpy(R), angles[..., ::-1], atol=1e-10)
    # any rotation comes back as angles that reproduce it
    Rr = random_rotations(rng, shape)
    e = spatial.matrix_to_euler_zyx(Rr)
    assert np.all(np.abs(e[..., 1]) <= np.pi / 2 + 1e-15)
    assert np.allclose(spatial.euler_zyx_to_matrix(e), Rr, atol=1e-12)
    assert np.allclose(spatial.rpy_to_matrix(spatial.matrix_to_rpy(Rr)), Rr, atol=1e-12)


@pytest.mark.parametrize('beta', [np.pi / 2, -np.pi / 2])
@pytest.mark.parametrize('alpha, gamma', [(0.3, 1.1), (-2.0, 2.5), (0.0, 0.0), (3.0, -3.0)])
def test_gimbal_lock_reproduces_the_matrix(alpha, beta, gamma):
    R = spatial.euler_zyx_to_matrix([alpha, beta, gamma])
    a, b, c = spatial.matrix_to_euler_zyx(R)
    assert np.all(np.isfinite([a, b, c]))
    assert b == pytest.approx(beta, abs=1e-12)
    assert np.allclose(spatial.euler_zyx_to_matrix([a, b, c]), R, atol=1e-12)
    assert np.allclose(spatial.rpy_to_matrix(spatial.matrix_to_rpy(R)), R, atol=1e-12)
    # only alpha -+ gamma is determined (Hayes §2.9): alpha - gamma at +pi/2, + at -pi/2
    sign = -1.0 if beta > 0 else 1.0
    diff = (a + sign * c) - (alpha + sign * gamma)
    assert np.isclose(np.cos(diff), 1.0, atol=1e-12)


@pytest.mark.parametrize('offset', [1e-4, 1e-7, 1e-9, 1e-11, 0.0])
def test_near_gimbal_lock_reproduces_the_matrix(offset):
    for beta in (np.pi / 2 - offset, -np.pi / 2 + offset):
        R = spatial.euler_zyx_to_matrix([0.4, beta, -1.3])
        e = spatial.matrix_to_euler_zyx(R)
        assert np.allclose(spatial.euler_zyx_to_matrix(e), R, atol=1e-9)
        rpy = spatial.matrix_to_rpy(R)
        assert np.allclose(spatial.rpy_to_matrix(rpy), R, atol=1e-9)


# ---- B15: axis-angle, Euler-Rodrigues, Cayley ---------------------------------------------------

K_SEED = np.array([1.0, 2.0, 2.0]) / 3.0
THETA_SEED = 120 * DEG
R_SEED = np.array([[-0.3333333333, -0.2440169359, 0.9106836025],
                   [0.9106836025, 0.1666666667, 0.3779915321],
                   [-0.2440169359, 0.9553418013, 0.1666666667]])
C_SEED = np.array([0.2886751346, 0.5773502692, 0.5773502692, 0.5])


def test_seed_b15_axis_angle():
    R = spatial.axis_angle_to_matrix(K_SEED, THETA_SEED)
    assert np.allclose(R, R_SEED, atol=1e-9)
    assert np.allclose(R, expm(THETA_SEED * S(K_SEED)), atol=1e-14)
    v = spatial.matrix_to_rotvec(R)
    theta = np.linalg.norm(v)
    k = v / theta
    assert theta == pytest.approx(THETA_SEED, abs=1e-12)
    assert np.allclose(k, [0.3333333333, 0.6666666667, 0.6666666667], atol=1e-9)
    eig = np.sort_complex(np.linalg.eigvals(R))
    assert np.allclose(eig, np.sort_complex([1.0, -0.5 + 0.8660254038j, -0.5 - 0.8660254038j]),
                       atol=1e-9)
    # axis is the eigenvector of eigenvalue 1
    assert np.allclose(R @ k, k, atol=1e-12)
    # the scaling of the axis does not matter
    assert np.allclose(spatial.axis_angle_to_matrix(3 * K_SEED, THETA_SEED), R, atol=1e-15)


def test_seed_b15_euler_rodrigues_is_the_xyzw_quaternion():
    q = spatial.matrix_to_quaternion(R_SEED)
    assert np.allclose(q, C_SEED, atol=1e-9)
    c1, c2, c3, c4 = spatial.matrix_to_quaternion(
        spatial.axis_angle_to_matrix(K_SEED, THETA_SEED))
    assert np.allclose([c1, c2, c3, c4], C_SEED, atol=1e-10)
    # eq 2.8 with the corrected R11 (its printed last sign is a misprint: +) reproduces R_k
    R = np.array([
        [c1**2 - c2**2 - c3**2 + c4**2, 2 * (c1 * c2 - c3 * c4), 2 * (c1 * c3 + c2 * c4)],
        [2 * (c1 * c2 + c3 * c4), -c1**2 + c2**2 - c3**2 + c4**2, 2 * (c2 * c3 - c1 * c4)],
        [2 * (c1 * c3 - c2 * c4), 2 * (c2 * c3 + c1 * c4), -c1**2 - c2**2 + c3**2 + c4**2]])
    assert np.allclose(R, R_SEED, atol=1e-9)
    assert np.allclose(spatial.quaternion_to_matrix([c1, c2, c3, c4]), R, atol=1e-14)
    # the printed R11 would give -0.8333333333
    assert c1**2 - c2**2 - c3**2 - c4**2 == pytest.approx(-0.8333333333, abs=1e-9)
    # inverse formulas (eq 2.9)
    r = R_SEED
    c4i = 0.5 * np.sqrt(1 + r[0, 0] + r[1, 1] + r[2, 2])
    ci = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]]) / (4 * c4i)
    assert np.allclose([*ci, c4i], C_SEED, atol=1e-9)
    # scipy uses the same (x, y, z, w) order
    assert np.allclose(Rotation.from_quat(C_SEED).as_matrix(), R_SEED, atol=1e-9)


def test_seed_b15_cayley_form():
    Sk = S(np.tan(THETA_SEED / 2) * K_SEED)
    R = np.linalg.solve(np.eye(3) - Sk, np.eye(3) + Sk)
    assert np.allclose(R, spatial.axis_angle_to_matrix(K_SEED, THETA_SEED), atol=1e-13)
    # Rodrigues parameters are the homogenized Euler-Rodrigues parameters: S_i = c_i / c4
    q = spatial.matrix_to_quaternion(R)
    assert np.allclose(q[:3] / q[3], np.tan(THETA_SEED / 2) * K_SEED, atol=1e-12)


def test_seed_b15_zyz_euler_rate_map():
    a, b, g = 0.4, 0.9, -0.3
    rates = np.array([0.7, -0.2, 1.3])

    def R_of(t):
        aa, bb, gg = np.array([a, b, g]) + t * rates
        return spatial.rot_z(aa) @ spatial.rot_y(bb) @ spatial.rot_z(gg)

    h = 1e-6
    R = R_of(0.0)
    Rdot = (R_of(h) - R_of(-h)) / (2 * h)
    W = Rdot @ R.T
    assert np.allclose(W, -W.T, atol=1e-8)
    omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
    JE = np.array([[0, -np.sin(a), np.cos(a) * np.sin(b)],
                   [0, np.cos(a), np.sin(a) * np.sin(b)],
                   [1, 0, np.cos(b)]])
    assert np.allclose(JE @ rates, omega, atol=1e-8)
    # component formulas w_x = sum_k rdot_3k r_2k, w_y = sum rdot_1k r_3k, w_z = sum rdot_2k r_1k
    comps = [Rdot[2] @ R[1], Rdot[0] @ R[2], Rdot[1] @ R[0]]
    assert np.allclose(comps, omega, atol=1e-8)
    # rotation vector of the small relative rotation agrees too
    assert np.allclose(spatial.matrix_to_rotvec(R_of(h) @ R_of(-h).T) / (2 * h), omega,
                       atol=1e-8)


def test_seed_b15_planar_rotation_derivative():
    theta, rate, h = 0.7, 1.9, 1e-6
    R = spatial.rot_z(theta)[:2, :2]
    Rdot = (spatial.rot_z(theta + rate * h) - spatial.rot_z(theta - rate * h))[:2, :2] / (2 * h)
    assert np.allclose(Rdot @ R.T, rate * np.array([[0, -1], [1, 0]]), atol=1e-8)


# ---- quaternions --------------------------------------------------------------------------------


@pytest.mark.parametrize('shape', BATCH_SHAPES)
def test_quaternion_round_trip(rng, shape):
    R = random_rotations(rng, shape)
    q = spatial.matrix_to_quaternion(R)
    assert q.shape == tuple(shape) + (4,)
    assert np.allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-14)
    assert np.all(q[..., 3] >= 0.0)
    assert np.allclose(spatial.quaternion_to_matrix(q), R, atol=1e-14)
    ref = Rotation.from_matrix(R.reshape(-1, 3, 3)).as_quat().reshape(q.shape)
    ref = np.where(ref[..., 3:] < 0, -ref, ref)
    assert np.allclose(q, ref, atol=1e-12)


def test_quaternion_negative_w_and_unnormalized_inputs(rng):
    q = rng.normal(size=(50, 4))
    q[:, 3] = -np.abs(q[:, 3])                                  # every w < 0
    R = spatial.quaternion_to_matrix(q)                        # normalised first
    assert_rotation(R)
    assert np.allclose(R, Rotation.from_quat(q).as_matrix(), atol=1e-13)
    assert np.allclose(spatial.quaternion_to_matrix(-q), R, atol=1e-14)   # q and -q
    back = spatial.matrix_to_quaternion(R)
    unit = q / np.linalg.norm(q, axis=-1, keepdims=True)
    assert np.allclose(back, -unit, atol=1e-12)                 # w >= 0 representative


@pytest.mark.parametrize('axis', [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 2, 2],
                                  [-0.3, 0.1, 0.95], [0.6, -0.8, 0.0]])
@pytest.mark.parametrize('angle', [np.pi, np.pi - 1e-9, np.pi - 1e-6, np.pi - 1e-3])
def test_quaternion_near_180_degrees(axis, angle):
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    R = spatial.axis_angle_to_matrix(k, angle)
    q = spatial.matrix_to_quaternion(R)
    assert np.allclose(np.linalg.norm(q), 1.0, atol=1e-15)
    assert q[3] >= 0.0
    # (k sin(theta/2), cos(theta/2)) up to the sign, which is free at exactly 180 degrees
    expected = np.append(k * np.sin(angle / 2), np.cos(angle / 2))
    assert min(np.abs(q - expected).max(), np.abs(q + expected).max()) < 1e-12
    assert np.allclose(spatial.quaternion_to_matrix(q), R, atol=1e-14)


def test_quaternion_identity_and_zero():
    assert np.allclose(spatial.matrix_to_quaternion(np.eye(3)), [0, 0, 0, 1], atol=0)
    assert np.allclose(spatial.quaternion_to_matrix([0, 0, 0, 2.0]), np.eye(3), atol=0)
    with pytest.raises(InputError, match='zero'):
        spatial.quaternion_to_matrix([0.0, 0.0, 0.0, 0.0])


# ---- axis-angle and rotation vectors ------------------------------------------------------------


@pytest.mark.parametrize('angle', [0.0, 1e-12, 1e-9, 1e-6, 1e-3, 0.5, 2.0, np.pi - 1e-3,
                                   np.pi - 1e-6, np.pi - 1e-9, np.pi])
def test_axis_angle_round_trip(rng, angle):
    for k in list(np.eye(3)) + [rng.normal(size=3) for _ in range(5)]:
        k = k / np.linalg.norm(k)
        R = spatial.axis_angle_to_matrix(k, angle)
        assert_rotation(R, 1e-14)
        assert np.allclose(R, expm(angle * S(k)), atol=1e-14)
        v = spatial.matrix_to_rotvec(R)
        theta = np.linalg.norm(v)
        assert 0.0 <= theta <= np.pi + 1e-15
        assert theta == pytest.approx(angle, abs=1e-12)
        assert np.allclose(expm(S(v)), R, atol=1e-14)
        if angle < np.pi - 1e-6:
            # the axis is determined (up to the sign ambiguity that only exists at pi)
            assert np.allclose(v, angle * k, atol=1e-9 * angle + 1e-15)
        if angle >= np.pi - 1e-9:
            axis = v / theta
            assert min(np.abs(axis - k).max(), np.abs(axis + k).max()) < 1e-6


def test_axis_angle_identity_and_zero_axis():
    assert np.array_equal(spatial.matrix_to_rotvec(np.eye(3)), np.zeros(3))
    with pytest.raises(InputError, match='axis'):
        spatial.axis_angle_to_matrix([0.0, 0.0, 0.0], 0.3)


def test_axis_angle_beyond_pi_wraps_to_the_short_way():
    k = np.array([0.0, 0.6, 0.8])
    v = spatial.matrix_to_rotvec(spatial.axis_angle_to_matrix(k, 1.5 * np.pi))
    assert np.allclose(v, -0.5 * np.pi * k, atol=1e-12)


@pytest.mark.parametrize('shape', BATCH_SHAPES)
def test_rotvec_log(rng, shape):
    k = rng.normal(size=tuple(shape) + (3,))
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    theta = rng.uniform(0.0, np.pi - 1e-3, shape)
    v = k * theta[..., None]
    R = Rotation.from_rotvec(v.reshape(-1, 3)).as_matrix().reshape(tuple(shape) + (3, 3))
    log = spatial.matrix_to_rotvec(R)
    assert log.shape == tuple(shape) + (3,)
    assert np.allclose(log, v, atol=1e-12)


@pytest.mark.parametrize('scale', [0.0, 1e-15, 1e-12, 1e-9, 1e-7, 1e-5])
def test_rotvec_near_zero(rng, scale):
    v = scale * rng.normal(size=3)
    R = expm(S(v))
    back = spatial.matrix_to_rotvec(R)
    assert np.allclose(back, v, rtol=1e-6, atol=1e-300)


@pytest.mark.parametrize('offset', [0.0, 1e-12, 1e-8, 1e-5])
def test_rotvec_near_pi(rng, offset):
    for _ in range(5):
        k = rng.normal(size=3)
        k /= np.linalg.norm(k)
        R = Rotation.from_rotvec((np.pi - offset) * k).as_matrix()
        v = spatial.matrix_to_rotvec(R)
        assert np.linalg.norm(v) == pytest.approx(np.pi - offset, abs=1e-12)
        assert np.allclose(Rotation.from_rotvec(v).as_matrix(), R, atol=1e-14)


@pytest.mark.parametrize('scale', [0.0, 1e-12, 1e-9, 1e-5, 1.0, np.pi - 1e-6])
def test_rotvec_exp_is_the_matrix_exponential(rng, scale):
    v = rng.normal(size=(4, 3))
    v *= scale / np.linalg.norm(v, axis=-1, keepdims=True)
    R = spatial.rotvec_to_matrix(v)
    assert R.shape == (4, 3, 3)
    for vi, Ri in zip(v, R):
        assert np.allclose(Ri, expm(S(vi)), atol=1e-14)


# ---- slerp and pose error -----------------------------------------------------------------------


def quat_angle(q0, q1):
    """Rotation angle between quaternions (the shorter way), by scipy."""
    return (Rotation.from_quat(q0).inv() * Rotation.from_quat(q1)).magnitude()


def test_slerp_endpoints_and_constant_speed(rng):
    for _ in range(10):
        q0, q1 = Rotation.random(2, random_state=rng).as_quat()
        R0, R1 = spatial.quaternion_to_matrix(q0), spatial.quaternion_to_matrix(q1)
        assert np.allclose(spatial.quaternion_to_matrix(spatial.quaternion_slerp(q0, q1, 0.0)),
                           R0, atol=1e-14)
        assert np.allclose(spatial.quaternion_to_matrix(spatial.quaternion_slerp(q0, q1, 1.0)),
                           R1, atol=1e-14)
        s = np.linspace(0.0, 1.0, 11)
        qs = spatial.quaternion_slerp(q0, q1, s)
        assert qs.shape == (11, 4)
        assert np.allclose(np.linalg.norm(qs, axis=-1), 1.0, atol=1e-14)
        total = quat_angle(q0, q1)
        assert total <= np.pi + 1e-12                              # the shorter arc
        assert np.allclose(quat_angle(q0, qs), s * total, atol=1e-10)
        steps = quat_angle(qs[:-1], qs[1:])
        assert np.allclose(steps, total / 10, atol=1e-10)        # constant angular speed
        # one fixed axis: the geodesic
        logs = [spatial.matrix_to_rotvec(spatial.quaternion_to_matrix(q) @ R0.T) for q in qs[1:]]
        axes = [v / np.linalg.norm(v) for v in logs]
        assert np.allclose(axes, axes[0], atol=1e-8)
        # q1 and -q1 are the same rotation: same path
        assert np.allclose(spatial.quaternion_to_matrix(spatial.quaternion_slerp(q0, -q1, s)),
                           spatial.quaternion_to_matrix(qs), atol=1e-13)


def test_slerp_nearly_equal_quaternions():
    q0 = np.array([0.0, 0.0, 0.0, 1.0])
    q1 = np.array([1e-12, 0.0, 0.0, 1.0])
    q = spatial.quaternion_slerp(q0, q1, 0.5)
    assert np.all(np.isfinite(q)) and np.allclose(q, [5e-13, 0, 0, 1], atol=1e-15)


def test_pose_error(rng):
    T = spatial.transform(random_rotations(rng, ()), rng.normal(size=3))
    assert np.allclose(spatial.pose_error(T, T), 0.0, atol=1e-15)
    twist = np.array([0.1, -0.2, 0.3, 0.4, -0.1, 0.2])
    T2 = T.copy()
    T2[:3, 3] += twist[:3]
    T2[:3, :3] = Rotation.from_rotvec(twist[3:]).as_matrix() @ T[:3, :3]
    assert np.allclose(spatial.pose_error(T, T2), twist, atol=1e-12)


# ---- batch shapes for every conversion ----------------------------------------------------------


@pytest.mark.parametrize('shape', BATCH_SHAPES)
def test_conversions_batch_equals_loop(rng, shape):
    R = random_rotations(rng, shape)
    flat = R.reshape(-1, 3, 3)
    for fn, out_shape in ((spatial.matrix_to_quaternion, (4,)),
                          (spatial.matrix_to_rotvec, (3,)),
                          (spatial.matrix_to_euler_zyx, (3,)),
                          (spatial.matrix_to_rpy, (3,))):
        out = fn(R)
        assert out.shape == tuple(shape) + out_shape, fn.__name__
        loop = np.array([fn(r) for r in flat]).reshape(out.shape)
        assert np.allclose(out, loop, atol=1e-15), fn.__name__
    q = spatial.matrix_to_quaternion(R)
    for fn, x in ((spatial.quaternion_to_matrix, q),
                  (spatial.euler_zyx_to_matrix, spatial.matrix_to_euler_zyx(R)),
                  (spatial.rpy_to_matrix, spatial.matrix_to_rpy(R))):
        out = fn(x)
        assert out.shape == tuple(shape) + (3, 3), fn.__name__
        assert np.allclose(out, R, atol=1e-12), fn.__name__
    T = spatial.xyz_rpy_to_transform(rng.normal(size=tuple(shape) + (3,)),
                                     spatial.matrix_to_rpy(R))
    assert T.shape == tuple(shape) + (4, 4)
    assert np.allclose(T[..., :3, :3], R, atol=1e-12)
    assert spatial.check_transform(T).shape == T.shape


@pytest.mark.parametrize('offset', [1e-3, 1e-5, 1e-7, 1e-9, 1e-11, 0.0])
def test_near_gimbal_lock_with_round_off_reproduces_the_matrix(rng, offset):
    # A rotation from a kinematic chain carries round-off ~1e-16 in every entry. Near the lock
    # cos(pitch) is tiny, and taking yaw and roll each from entries of size cos(pitch) loses
    # ~1e-16 / cos(pitch) in both (bug, see the report: 3e-7 error at 1e-9 from the lock).
    worst = 0.0
    for _ in range(100):
        beta = (np.pi / 2 - offset) * rng.choice([-1.0, 1.0])
        R = spatial.euler_zyx_to_matrix([rng.uniform(-3, 3), beta, rng.uniform(-3, 3)])
        A = Rotation.random(random_state=rng).as_matrix()
        R = (R @ A) @ A.T                     # same rotation, realistic round-off
        worst = max(worst,
                    np.abs(spatial.euler_zyx_to_matrix(spatial.matrix_to_euler_zyx(R)) - R).max(),
                    np.abs(spatial.rpy_to_matrix(spatial.matrix_to_rpy(R)) - R).max())
    assert worst < 1e-12
