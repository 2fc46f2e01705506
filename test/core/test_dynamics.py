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
Acceptance tests of the rigid-body dynamics (robot_dynamics.dynamics).

- Textbook numbers (with their misprints corrected): Hayes' planar 2R mass matrix and its
  eigenvectors; the two-link elbow of Spong, Hutchinson and Vidyasagar (M, C, dM/dt - 2C, g,
  tau, the 5-parameter regressor, forward dynamics, one Euler step); the tip wrench
  ``N = J^T F``; the rotary-prismatic arm; the spatial RR arm (the printed M, V, G1 are wrong,
  the derived closed forms are used).
- Pinocchio on every bundled robot (``to_urdf()``) and on random URDFs: inverse dynamics, mass
  matrix, gravity, forward dynamics (aba, crba, strobe), the Coriolis matrix, the regressor;
  1e-9 relative. The Christoffel-form Coriolis matrix also against Christoffel symbols from
  finite differences of M and against Robotics Toolbox's ``coriolis`` on the PUMA 560.
- Cross-identities, energy along simulated trajectories, batch shapes and bad input.

The bundled planar arms move in the x-z plane (joint axes -y, gravity -z): the textbooks' (x, y, z)
are our (x, z, -y), and their joint angles apply unchanged.
"""

import functools
from functools import lru_cache

import numba
import numpy as np
import pytest
from randomchain import PinDynamics, random_models, random_q, random_rotation
from robot_dynamics import (dynamics, InputError, kinematics, RobotModel, ShapeError,
                            SingularMassMatrixError)
from robot_dynamics.dynamics import (body_inertia, CoriolisForm, COULOMB_VELOCITY_SCALE,
                                     friction_torques, inertia_matrix, inertia_times,
                                     INERTIAL_PARAMETER_NAMES)
from robot_dynamics.integrators import semi_implicit_euler_step, simulate
from robot_dynamics.spatial import skew

BUNDLED = ('iiwa14', 'planar_2r', 'planar_3r', 'puma560', 'rp_arm', 'scara')
N_RANDOM = 20
RTOL = 1e-9       # agreement with Pinocchio and closed forms, relative
SEED_TOL = 1e-9   # 10-digit seed numbers
FD_TOL = 1e-6     # anything that uses finite differences
H = 1e-6          # central-difference step
G = 9.81
BATCH_SHAPES = [(), (1,), (5,), (2, 3)]
METHODS = ('aba', 'crba', 'strobe')
FORMS = tuple(form.value for form in CoriolisForm)

# the parameters of Hayes §5.4, also used for Spong et al.'s elbow
L1, L2, LC1, LC2, M1, M2, I1, I2 = 2.0, 2.0, 1.0, 1.0, 2.0, 1.0, 3.0, 1.0
Q_SEED = np.array([np.pi / 6, np.pi / 3])
QD_SEED = np.array([1.0, 2.0])
QDD_SEED = np.array([0.5, -1.0])
# seed frame -> our frame for the planar arms: seed x, y, z are our x, z, -y
P_SEED = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
F3_SEED = np.array([3.0, -1.0, 0.5])
N3_SEED = np.array([0.2, -0.4, 0.7])


# ---- helpers ------------------------------------------------------------------------------------

def assert_rel(actual, desired, rtol=RTOL, what='', floor=1.0):
    """
    Assert ``max|actual - desired| <= rtol * max(max|desired|, floor)``.

    Relative to the size of the whole reference array (a norm-relative test), so that small
    entries of a large vector do not need to match to 1e-9 of themselves.
    """
    actual = np.asarray(actual, dtype=float)
    desired = np.asarray(desired, dtype=float)
    assert actual.shape == desired.shape, f'{what}: shape {actual.shape} != {desired.shape}'
    scale = max(float(np.abs(desired).max(initial=0.0)), floor)
    err = float(np.abs(actual - desired).max(initial=0.0))
    assert err <= rtol * scale, \
        f'{what}: differs by {err:.3g} (relative {err / scale:.3g} > {rtol:g})'


@lru_cache(maxsize=None)
def load(name):
    return RobotModel.load(name)


@lru_cache(maxsize=None)
def random_chains():
    # revolute, continuous and prismatic joints, random axes and origins, fixed joints in between,
    # full inertia tensors with rotated inertial frames
    return random_models(N_RANDOM, seed=303, min_joints=1, max_joints=8, fixed_prob=0.3)


def get_case(case):
    """Return ``(model, urdf_xml)`` for a bundled robot name or a random-chain index."""
    if isinstance(case, str):
        model = load(case)
        return model, model.to_urdf()
    xml, model = random_chains()[case]
    return model, xml


def pin_cases():
    return [pytest.param(name, id=name) for name in BUNDLED] + \
        [pytest.param(i, id=f'random{i}') for i in range(N_RANDOM)]


def identity_cases():
    return [pytest.param(name, id=name) for name in BUNDLED] + \
        [pytest.param(i, id=f'random{i}') for i in (0, 3, 7, 12)]


def states(rng, model, shape=()):
    """Random ``q`` (within limits), ``qd``, ``qdd``, ``tau`` of the given batch shape."""
    q = random_q(rng, model, shape)
    qd, qdd, tau = rng.normal(size=(3,) + tuple(shape) + (model.dof,))
    return q, qd, qdd, tau


def elbow_closed_form(q, qd, qdd):
    """
    Two-link planar elbow of Spong, Hutchinson and Vidyasagar with Hayes' parameters.

    Returns a dict of ``D, C, g, tau``, the 5-parameter regressor ``Y`` and its parameters
    ``Theta`` (the linearity in the inertia parameters).
    """
    c1, c2, c12 = np.cos(q[0]), np.cos(q[1]), np.cos(q[0] + q[1])
    s2 = np.sin(q[1])
    h = -M2 * L1 * LC2 * s2
    d11 = M1 * LC1 ** 2 + M2 * (L1 ** 2 + LC2 ** 2 + 2 * L1 * LC2 * c2) + I1 + I2
    d12 = M2 * (LC2 ** 2 + L1 * LC2 * c2) + I2
    d22 = M2 * LC2 ** 2 + I2
    D = np.array([[d11, d12], [d12, d22]])
    C = np.array([[h * qd[1], h * (qd[0] + qd[1])], [-h * qd[0], 0.0]])
    g = np.array([(M1 * LC1 + M2 * L1) * G * c1 + M2 * LC2 * G * c12, M2 * LC2 * G * c12])
    tau = np.array([d11 * qdd[0] + d12 * qdd[1] + 2 * h * qd[0] * qd[1] + h * qd[1] ** 2 + g[0],
                    d12 * qdd[0] + d22 * qdd[1] - h * qd[0] ** 2 + g[1]])
    Y = np.array([[qdd[0], c2 * (2 * qdd[0] + qdd[1]) - s2 * (qd[1] ** 2 + 2 * qd[0] * qd[1]),
                   qdd[1], G * c1, G * c12],
                  [0.0, c2 * qdd[0] + s2 * qd[0] ** 2, qdd[0] + qdd[1], 0.0, G * c12]])
    theta = np.array([M1 * LC1 ** 2 + M2 * (L1 ** 2 + LC2 ** 2) + I1 + I2, M2 * L1 * LC2,
                      M2 * LC2 ** 2 + I2, M1 * LC1 + M2 * L1, M2 * LC2])
    return {'D': D, 'C': C, 'g': g, 'tau': tau, 'Y': Y, 'Theta': theta}


def mass_matrix_rate(model, q, qd):
    """``dM/dt`` along ``qd`` by central differences."""
    return (model.mass_matrix(q + H * qd) - model.mass_matrix(q - H * qd)) / (2 * H)


def christoffel_coriolis(model, q, qd):
    """
    Coriolis matrix from the Christoffel symbols of M, with dM/dq by central differences.

    ``c_kj = sum_i 0.5 (dM_kj/dq_i + dM_ki/dq_j - dM_ij/dq_k) qd_i`` (Spong, Hutchinson and
    Vidyasagar, Robot Modeling and Control, 2nd ed., 2020, §6.3).
    """
    n = model.dof
    dM = np.stack([(model.mass_matrix(q + H * e) - model.mass_matrix(q - H * e)) / (2 * H)
                   for e in np.eye(n)])                        # dM[i] = dM/dq_i
    gamma = 0.5 * (dM + np.transpose(dM, (2, 1, 0)) - np.transpose(dM, (1, 0, 2)))
    # gamma[i, k, j] = 0.5 (dM_kj/dq_i + dM_ki/dq_j - dM_ij/dq_k)
    return np.einsum('ikj,i->kj', gamma, qd)


def spatial_inertia_reference(T, mass, com, inertia):
    """
    Return the 6x6 spatial inertia of a body at pose ``T`` about the base origin.

    ``[[m 1, -m S(c)], [m S(c), I_c - m S(c) S(c)]]`` in the body frame (Featherstone, Rigid
    Body Dynamics Algorithms, 2008, ch. 2), carried to the base with the force transform.
    """
    R, p = T[:3, :3], T[:3, 3]
    Sc = skew(com)
    body = np.block([[mass * np.eye(3), -mass * Sc], [mass * Sc, inertia - mass * Sc @ Sc]])
    Xf = np.block([[R, np.zeros((3, 3))], [skew(p) @ R, R]])      # force transform body -> base
    return Xf @ body @ Xf.T


def tip_wrench_from_seed_frame(model, q, f3, n3, permutation=P_SEED):
    """Base-frame ``f_ext`` from a wrench given in the textbook's tip frame {3}."""
    R = model.fk(q)[:3, :3] @ permutation
    return np.concatenate((R @ f3, R @ n3))


# ---- A4: planar 2R mass matrix and eigenvectors -------------------------------------------------

def test_a4_mass_matrix_and_eigenvectors():
    model = load('planar_2r')
    M = model.mass_matrix(Q_SEED)
    np.testing.assert_allclose(M, [[13.0, 3.0], [3.0, 2.0]], rtol=0, atol=1e-12)
    w, V = np.linalg.eigh(M)   # ascending; the textbook prints descending
    np.testing.assert_allclose(w, [(15 - np.sqrt(157)) / 2, (15 + np.sqrt(157)) / 2],
                               rtol=1e-12)
    np.testing.assert_allclose(w, [1.2350179569291661058, 13.7649820430708338942], rtol=1e-12)
    # (lambda_max, lambda_min) as the textbook prints them: 30-digit values and the Matlab print
    # (the printed 0.9689931823 is off in its 10th digit)
    computed = [[0.968993181842469, 0.247087461322520], [-0.247087461322520, 0.968993181842469]]
    printed = [[-0.9689931823, -0.2470874613], [0.2470874613, -0.9689931823]]
    for k in range(2):
        v = V[:, 1 - k]                                  # eigh's order is ascending
        np.testing.assert_allclose(M @ v, w[1 - k] * v, rtol=0, atol=1e-12)
        for e, tol in ((computed[k], 1e-12), (printed[k], 1e-8)):
            e = np.asarray(e)
            np.testing.assert_allclose(np.sign(v @ e) * v, e, rtol=0, atol=tol)


def test_a4_mass_matrix_formula_at_random_states(rng):
    model = load('planar_2r')
    q = rng.uniform(-np.pi, np.pi, (6, 2))
    c2 = np.cos(q[:, 1])
    m11 = I1 + I2 + M1 * LC1 ** 2 + M2 * LC2 ** 2 + M2 * L1 ** 2 + 2 * M2 * L1 * LC2 * c2
    m12 = M2 * LC2 ** 2 + M2 * L1 * LC2 * c2 + I2
    m22 = np.full_like(c2, M2 * LC2 ** 2 + I2)
    expected = np.stack((np.stack((m11, m12), -1), np.stack((m12, m22), -1)), -2)
    assert_rel(model.mass_matrix(q), expected, what='A4 M(q)')


# ---- B3: two-link planar elbow (Spong), closed form and the derived vector ---------------------

def test_b3_derived_vector():
    model = load('planar_2r')
    q, qd, qdd = Q_SEED, QD_SEED, QDD_SEED

    def check(actual, printed, what):
        np.testing.assert_allclose(actual, printed, rtol=SEED_TOL, atol=SEED_TOL, err_msg=what)

    check(model.mass_matrix(q), [[13, 3], [3, 2]], 'D')
    C = model.coriolis_matrix(q, qd)
    check(C, [[-3.4641016151, -5.1961524227], [1.7320508076, 0]], 'C')
    check(C @ qd, [-13.8564064606, 1.7320508076], 'C qd')
    check(model.nonlinear_effects(q, qd) - model.gravity_torques(q),
          [-13.8564064606, 1.7320508076], 'C qd by RNEA')
    Md = mass_matrix_rate(model, q, qd)
    np.testing.assert_allclose(Md, [[-6.9282032303, -3.4641016151], [-3.4641016151, 0]],
                               rtol=FD_TOL, atol=FD_TOL, err_msg='dD/dt')
    np.testing.assert_allclose(Md - 2 * C, [[0, 6.9282032303], [-6.9282032303, 0]],
                               rtol=FD_TOL, atol=FD_TOL, err_msg='dD/dt - 2C')
    check(model.gravity_torques(q), [33.9828368445, 0], 'g(q)')
    tau = model.inverse_dynamics(q, qd, qdd)
    check(tau, [23.6264303840, 1.2320508076], 'tau')
    # the textbook's 5-parameter (minimal) regressor and our 10 n-parameter one give the same tau
    theta = np.array([11.0, 2.0, 2.0, 4.0, 1.0])
    Y5 = np.array([[0.5, -6.9282032303, -1, 8.4957092111, 0], [0, 1.1160254038, -0.5, 0, 0]])
    closed_form = elbow_closed_form(q, qd, qdd)
    check(closed_form['Y'], Y5, 'seed Y')
    check(closed_form['Theta'], theta, 'seed Theta')
    check(Y5 @ theta, tau, 'seed Y Theta = our inverse_dynamics')
    check(model.regressor(q, qd, qdd) @ model.inertial_parameters(), tau, 'our Y pi')
    # forward dynamics with tau = 0
    for method in METHODS:
        check(model.forward_dynamics(q, qd, np.zeros(2), method=method),
              [-2.0621593144, 2.2272135679], f'forward dynamics ({method})')


def test_b3_theta_from_our_inertial_parameters():
    """Spong et al.'s five parameters are combinations of our ten per link (planar, axis -y)."""
    model = load('planar_2r')
    pi = model.inertial_parameters().reshape(2, 10)
    k = {name: i for i, name in enumerate(INERTIAL_PARAMETER_NAMES)}
    l1 = model.joint_placement[1][0, 3]
    # inertia about the joint axis (-y) at the link frame origin: iyy
    i1o, i2o = pi[0, k['iyy']], pi[1, k['iyy']]
    theta = [i1o + i2o + pi[1, k['m']] * l1 ** 2, l1 * pi[1, k['mcx']], i2o,
             pi[0, k['mcx']] + pi[1, k['m']] * l1, pi[1, k['mcx']]]
    np.testing.assert_allclose(theta, [11, 2, 2, 4, 1], rtol=1e-12)


def test_b3_one_euler_step_from_rest():
    model = load('planar_2r')
    dt, q0, qd0 = 0.01, Q_SEED, np.zeros(2)
    qdd0 = model.forward_dynamics(q0, qd0, np.zeros(2))
    np.testing.assert_allclose(qdd0, [-3.9979808052, 5.9969712079], rtol=SEED_TOL, atol=SEED_TOL)
    qd1 = qd0 + dt * qdd0
    # Hayes §5.3.2 advances q with the constant acceleration: q + dt qd + dt^2/2 qdd
    q1 = q0 + dt * qd0 + 0.5 * dt ** 2 * qdd0
    np.testing.assert_allclose(qd1, [-0.0399798081, 0.0599697121], rtol=SEED_TOL, atol=SEED_TOL)
    np.testing.assert_allclose(q1, [0.5233988766, 1.0474973998], rtol=SEED_TOL, atol=SEED_TOL)
    # our semi-implicit Euler step has the same velocity and moves q with the new velocity
    q_se, qd_se = semi_implicit_euler_step(model, q0, qd0, np.zeros(2), dt)
    np.testing.assert_allclose(qd_se, qd1, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(q_se, q0 + dt * qd1, rtol=1e-12, atol=1e-15)


def test_b3_closed_form_at_random_states(rng):
    model = load('planar_2r')
    for _ in range(5):
        q, qd, qdd = rng.uniform(-2.5, 2.5, (3, 2))
        cf = elbow_closed_form(q, qd, qdd)
        C, tau = cf['C'], cf['tau']
        assert_rel(model.mass_matrix(q), cf['D'], what='D')
        assert_rel(model.coriolis_matrix(q, qd), C, what='C (Christoffel form)')
        assert_rel(model.gravity_torques(q), cf['g'], what='g')
        assert_rel(model.inverse_dynamics(q, qd, qdd), tau, what='tau (6.90)')
        assert_rel(cf['Y'] @ cf['Theta'], tau, what='seed regressor')
        assert_rel(model.regressor(q, qd, qdd) @ model.inertial_parameters(), tau, what='Y pi')
        skew = mass_matrix_rate(model, q, qd) - 2 * C
        s2 = np.sin(q[1])
        expected = M2 * L1 * LC2 * (2 * qd[0] + qd[1]) * s2 * np.array([[0, 1], [-1, 0]])
        assert_rel(skew, expected, rtol=FD_TOL, what='dD/dt - 2C')


# ---- B4: Hayes' Newton-Euler with the end-effector wrench ---------------------------------------

def test_b4_tip_wrench_derived_vector():
    model = load('planar_2r')
    q, qd, qdd = Q_SEED, QD_SEED, QDD_SEED
    F = tip_wrench_from_seed_frame(model, q, F3_SEED, N3_SEED)
    base = model.inverse_dynamics(q, qd, qdd)
    N = model.inverse_dynamics(q, qd, qdd, f_ext=F) - base
    np.testing.assert_allclose(N, [2.8961524227, -1.3], rtol=SEED_TOL, atol=SEED_TOL)
    np.testing.assert_allclose(model.jacobian(q).T @ F, N, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(base, [23.6264303840, 1.2320508076], rtol=SEED_TOL, atol=SEED_TOL)
    # V = C qd and G of the corrected split
    np.testing.assert_allclose(model.coriolis_matrix(q, qd) @ qd, [-13.8564064606, 1.7320508076],
                               rtol=SEED_TOL, atol=SEED_TOL)
    np.testing.assert_allclose(model.gravity_torques(q), [33.9828368445, 0], rtol=SEED_TOL,
                               atol=SEED_TOL)


def test_b4_torques_closed_form_at_random_states(rng):
    model = load('planar_2r')
    for _ in range(5):
        q, qd, qdd = rng.uniform(-2.5, 2.5, (3, 2))
        f3, n3 = rng.normal(size=(2, 3))
        s2, c2, c1, c12 = np.sin(q[1]), np.cos(q[1]), np.cos(q[0]), np.cos(q[0] + q[1])
        fx, fy, nz = f3[0], f3[1], n3[2]
        k = M2 * L1 * LC2
        m11 = I1 + I2 + M1 * LC1 ** 2 + M2 * LC2 ** 2 + M2 * L1 ** 2 + 2 * k * c2
        m12 = M2 * (LC2 ** 2 + L1 * LC2 * c2) + I2
        tau1 = (m11 * qdd[0] + m12 * qdd[1] - 2 * k * s2 * qd[0] * qd[1] - k * s2 * qd[1] ** 2
                + G * ((M1 * LC1 + M2 * L1) * c1 + M2 * LC2 * c12)
                + L1 * s2 * fx + (L1 * c2 + L2) * fy + nz)
        tau2 = ((M2 * LC2 ** 2 + I2) * qdd[1] + m12 * qdd[0] + k * s2 * qd[0] ** 2
                + M2 * LC2 * G * c12 + L2 * fy + nz)
        F = tip_wrench_from_seed_frame(model, q, f3, n3)
        assert_rel(model.inverse_dynamics(q, qd, qdd, f_ext=F), [tau1, tau2], what='B4 tau')


# ---- B2: rotary-prismatic arm with point masses -------------------------------------------------

def rp_closed_form(q, qd, qdd, m1=1.0, m2=2.0, alpha=0.5):
    theta, d = q
    r = alpha + d
    M = np.array([[m1 * alpha ** 2 + m2 * r ** 2, 0.0], [0.0, m2]])
    c = np.array([2 * m2 * r * qd[0] * qd[1], -m2 * r * qd[0] ** 2])
    g = np.array([(m1 * alpha + m2 * r) * G * np.cos(theta), m2 * G * np.sin(theta)])
    return M, c, g, M @ qdd + c + g


def test_b2_rp_arm_derived_vector():
    model = load('rp_arm')
    q, qd, qdd = np.array([0.3, 0.2]), np.array([1.0, 0.5]), np.array([2.0, -1.0])
    kw = {'rtol': SEED_TOL, 'atol': SEED_TOL}
    np.testing.assert_allclose(model.mass_matrix(q), [[1.23, 0], [0, 2]], **kw)
    np.testing.assert_allclose(model.coriolis_matrix(q, qd) @ qd, [1.4, -1.4], **kw)
    np.testing.assert_allclose(model.gravity_torques(q), [17.8065168208, 5.7981064547], **kw)
    np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd),
                               [21.6665168208, 2.3981064547], **kw)
    np.testing.assert_allclose(rp_closed_form(q, qd, qdd)[3], [21.6665168208, 2.3981064547],
                               **kw)


def test_b2_rp_arm_closed_form_at_random_states(rng):
    model = load('rp_arm')
    for _ in range(5):
        q = random_q(rng, model)
        qd, qdd = rng.normal(size=(2, 2))
        M, c, g, u = rp_closed_form(q, qd, qdd)
        assert_rel(model.mass_matrix(q), M, what='M')
        assert_rel(model.coriolis_matrix(q, qd) @ qd, c, what='c')
        assert_rel(model.gravity_torques(q), g, what='g')
        assert_rel(model.inverse_dynamics(q, qd, qdd), u, what='u')
        for method in METHODS:
            assert_rel(model.forward_dynamics(q, qd, u, method=method), qdd, what=method)
        # kinetic and potential energy of Becker and Klink (with 1/2 m2 qd^2, misprinted there)
        m1, m2, alpha = 1.0, 2.0, 0.5
        r = alpha + q[1]
        K = 0.5 * m1 * alpha ** 2 * qd[0] ** 2 + 0.5 * m2 * (r ** 2 * qd[0] ** 2 + qd[1] ** 2)
        P = (m1 * alpha + m2 * r) * G * np.sin(q[0])
        assert_rel(model.kinetic_energy(q, qd), K, what='K')
        assert_rel(model.potential_energy(q), P, what='P')


# ---- B10: spatial RR arm (Hayes §5.4 Newton-Euler example, derived closed form) ----------------

IXX2, IYY2, IZZ1, IZZ2 = 3.0, 2.0, 3.0, 1.0


@lru_cache(maxsize=None)
def spatial_rr():
    """Build the B10 arm: MDH rows (0, 0, 0, q1), (-90 deg, l1, 0, q2), tool Tx(l2), gravity +y."""
    tool = np.eye(4)
    tool[0, 3] = L2
    rows = [{'a': 0.0, 'alpha': 0.0, 'd': 0.0, 'theta': 0.0, 'type': 'revolute', 'mass': M1,
             'com': [LC1, 0.0, 0.0], 'inertia': np.diag([1.0, 2.0, IZZ1]).tolist()},
            {'a': L1, 'alpha': -np.pi / 2, 'd': 0.0, 'theta': 0.0, 'type': 'revolute',
             'mass': M2, 'com': [LC2, 0.0, 0.0], 'inertia': np.diag([IXX2, IYY2, IZZ2]).tolist()}]
    # seed: 0a0 = (0, -g, 0) with Craig's a0 = -g_vec, i.e. gravity along +y_0
    return RobotModel.from_dh({'joints': rows, 'convention': 'modified', 'tool': tool.tolist(),
                               'gravity': [0.0, G, 0.0]})


def spatial_rr_closed_form(q, qd, f3, n3):
    s1, c1, s2, c2 = np.sin(q[0]), np.cos(q[0]), np.sin(q[1]), np.cos(q[1])
    r = L1 + LC2 * c2
    M = np.diag([M1 * LC1 ** 2 + IZZ1 + M2 * r ** 2 + IXX2 * s2 ** 2 + IYY2 * c2 ** 2,
                 M2 * LC2 ** 2 + IZZ2])
    V = np.array([(-2 * M2 * LC2 * s2 * r + 2 * (IXX2 - IYY2) * s2 * c2) * qd[0] * qd[1],
                  (M2 * LC2 * s2 * r + (IYY2 - IXX2) * s2 * c2) * qd[0] ** 2])
    Gv = np.array([-G * c1 * (M1 * LC1 + M2 * L1 + M2 * LC2 * c2), G * M2 * LC2 * s1 * s2])
    N = np.array([(L1 + L2 * c2) * f3[2] - n3[0] * s2 - n3[1] * c2, L2 * f3[1] + n3[2]])
    return M, V, Gv, N


def test_b10_spatial_rr_derived_vector():
    model = spatial_rr()
    q, qd = Q_SEED, QD_SEED
    kw = {'rtol': SEED_TOL, 'atol': SEED_TOL}
    np.testing.assert_allclose(model.fk(q)[:3, 3], [2.5980762114, 1.5, -1.7320508076], **kw)
    np.testing.assert_allclose(model.mass_matrix(q), [[14, 0], [0, 2]], **kw)
    np.testing.assert_allclose(model.coriolis_matrix(q, qd) @ qd, [-6.9282032303, 1.7320508076],
                               **kw)
    np.testing.assert_allclose(model.gravity_torques(q), [-38.2306914501, 4.2478546056], **kw)
    F = tip_wrench_from_seed_frame(model, q, F3_SEED, N3_SEED, permutation=np.eye(3))
    N = model.inverse_dynamics(q, qd, QDD_SEED, f_ext=F) - model.inverse_dynamics(q, qd, QDD_SEED)
    np.testing.assert_allclose(N, [1.5267949192, -1.3], **kw)


def test_b10_spatial_rr_closed_form_at_random_states(rng):
    model = spatial_rr()
    for _ in range(5):
        q, qd, qdd = rng.uniform(-2.5, 2.5, (3, 2))
        f3, n3 = rng.normal(size=(2, 3))
        M, V, Gv, N = spatial_rr_closed_form(q, qd, f3, n3)
        assert_rel(model.mass_matrix(q), M, what='M')
        assert_rel(model.coriolis_matrix(q, qd) @ qd, V, what='V')
        assert_rel(model.gravity_torques(q), Gv, what='G')
        F = tip_wrench_from_seed_frame(model, q, f3, n3, permutation=np.eye(3))
        assert_rel(model.inverse_dynamics(q, qd, qdd, f_ext=F), M @ qdd + V + Gv + N,
                   what='M qdd + V + G + N')


# ---- against Pinocchio --------------------------------------------------------------------------

@pytest.mark.parametrize('case', pin_cases())
def test_inverse_dynamics_mass_matrix_gravity_match_pinocchio(case, rng):
    model, xml = get_case(case)
    ref = PinDynamics(model, xml)
    for _ in range(3):
        q, qd, qdd, _ = states(rng, model)
        assert_rel(model.inverse_dynamics(q, qd, qdd), ref.rnea(q, qd, qdd), what='rnea')
        assert_rel(model.mass_matrix(q), ref.crba(q), what='crba')
        assert_rel(model.gravity_torques(q), ref.gravity(q), what='gravity')
    # per-call gravity override against Pinocchio with that gravity
    g = rng.normal(size=3) * 5.0
    ref = PinDynamics(model, xml, gravity=g)
    q, qd, qdd, _ = states(rng, model)
    assert_rel(model.inverse_dynamics(q, qd, qdd, gravity=g), ref.rnea(q, qd, qdd),
               what='rnea, gravity override')
    assert_rel(model.gravity_torques(q, gravity=g), ref.gravity(q), what='gravity override')


@pytest.mark.parametrize('method', METHODS)
@pytest.mark.parametrize('case', pin_cases())
def test_forward_dynamics_matches_pinocchio_aba(case, method, rng):
    model, xml = get_case(case)
    ref = PinDynamics(model, xml)
    for _ in range(3):
        q, qd, _, tau = states(rng, model)
        # relative to |qdd|: the PUMA's M is badly conditioned (link 1 has no mass)
        assert_rel(model.forward_dynamics(q, qd, tau, method=method), ref.aba(q, qd, tau),
                   what=f'forward_dynamics({method!r})', floor=1e-3)


@pytest.mark.parametrize('form', FORMS)
@pytest.mark.parametrize('case', pin_cases())
def test_coriolis_matches_pinocchio_and_is_skew(case, form, rng):
    model, xml = get_case(case)
    ref = PinDynamics(model, xml)
    for _ in range(3):
        q, qd, _, _ = states(rng, model)
        C = model.coriolis_matrix(q, qd, form=form)
        if form == 'christoffel':
            assert_rel(C, ref.coriolis(q, qd), what='C == computeCoriolisMatrix')
        assert_rel(C @ qd, ref.coriolis(q, qd) @ qd, what='C qd')
        assert_rel(C @ qd + model.gravity_torques(q), model.nonlinear_effects(q, qd),
                   what='C qd + g == nonlinear_effects')
        Md = mass_matrix_rate(model, q, qd)
        scale = max(1.0, np.abs(model.mass_matrix(q)).max() * np.abs(qd).max())
        S = Md - 2 * C
        assert np.abs(S + S.T).max() <= FD_TOL * scale, 'dM/dt - 2C is not skew-symmetric'
        assert np.abs(C + C.T - Md).max() <= FD_TOL * scale, 'C + C^T != dM/dt'


@pytest.mark.parametrize('case', identity_cases())
def test_coriolis_is_built_from_christoffel_symbols(case, rng):
    """The default C equals the Christoffel symbols of finite-differenced M contracted with qd."""
    model, _ = get_case(case)
    q, qd, _, _ = states(rng, model, (3,))
    C = model.coriolis_matrix(q, qd)
    np.testing.assert_array_equal(C, model.coriolis_matrix(q, qd, form='christoffel'))
    np.testing.assert_array_equal(C, model.coriolis_matrix(q, qd, form=CoriolisForm.CHRISTOFFEL))
    for k in range(3):
        scale = max(1.0, np.abs(model.mass_matrix(q[k])).max() * np.abs(qd[k]).max())
        assert_rel(C[k], christoffel_coriolis(model, q[k], qd[k]), rtol=FD_TOL, floor=scale,
                   what='C == Christoffel symbols of M')
    # the symbols are symmetric in the two velocity slots: C(q, x) y == C(q, y) x
    x, y = rng.normal(size=(2,) + qd.shape)
    assert_rel(np.einsum('bkj,bj->bk', model.coriolis_matrix(q, x), y),
               np.einsum('bkj,bj->bk', model.coriolis_matrix(q, y), x), what='C(x) y == C(y) x')


def test_coriolis_forms_differ_where_the_textbook_says(rng):
    """
    On the PUMA 560 the Newton-Euler split has entries far from the Christoffel symbols.

    The Christoffel form is the one Robotics Toolbox's ``coriolis`` returns (with its motor
    inertia and friction removed, as our model has none).
    """
    import roboticstoolbox as rtb
    puma = rtb.models.DH.Puma560().nofriction(coulomb=True, viscous=True)
    for link in puma.links:
        link.Jm = 0.0
    model = load('puma560')
    q, qd, _, _ = states(rng, model, (5,))
    newton_euler = model.coriolis_matrix(q, qd, form='newton_euler')
    largest = 0.0
    for k in range(5):
        C = model.coriolis_matrix(q[k], qd[k])
        assert_rel(C, puma.coriolis(q[k], qd[k]), what='C == Robotics Toolbox coriolis')
        christoffel = christoffel_coriolis(model, q[k], qd[k])
        largest = max(largest, np.abs(newton_euler[k] - christoffel).max())
    assert largest > 0.1, 'the two forms should differ on a spatial arm'


def test_unknown_coriolis_form():
    model = load('planar_2r')
    with pytest.raises(InputError, match=r"^form: expected one of .'christoffel', 'newton_e"):
        model.coriolis_matrix(np.zeros(2), np.zeros(2), form='lagrange')


def test_spatial_inertia_helpers_match_the_textbook_matrix(rng):
    """body_inertia, inertia_times and inertia_matrix against Featherstone's 6x6 formula."""
    for case in ('iiwa14', 'scara', 0, 3):
        model, _ = get_case(case)
        for i in range(model.dof):
            Ti = np.eye(4)
            Ti[:3, :3], Ti[:3, 3] = random_rotation(rng), rng.normal(size=3)
            params = np.empty(10)
            body_inertia(Ti, model.mass[i], model.com[i], model.inertia[i], params)
            expected = spatial_inertia_reference(Ti, model.mass[i], model.com[i],
                                                 model.inertia[i])
            matrix = np.empty((6, 6))
            inertia_matrix(params, matrix)
            assert_rel(matrix, expected, rtol=1e-12, what='inertia_matrix(body_inertia)')
            v, out = rng.normal(size=6), np.empty(6)
            inertia_times(params, v, out)
            assert_rel(out, expected @ v, rtol=1e-12, what='inertia_times')


@pytest.mark.parametrize('case', pin_cases())
def test_regressor_matches_pinocchio(case, rng):
    model, xml = get_case(case)
    ref = PinDynamics(model, xml)
    pi = model.inertial_parameters()
    assert pi.shape == (10 * model.dof,)
    assert_rel(pi, ref.parameters(), rtol=1e-12, what='inertial_parameters (Pinocchio order)')
    for _ in range(3):
        q, qd, qdd, _ = states(rng, model)
        Y = model.regressor(q, qd, qdd)
        assert Y.shape == (model.dof, 10 * model.dof)
        assert_rel(Y, ref.regressor(q, qd, qdd), what='regressor')
        assert_rel(Y @ pi, model.inverse_dynamics(q, qd, qdd), what='Y pi == inverse_dynamics')
    g = rng.normal(size=3)
    assert_rel(model.regressor(q, qd, qdd, gravity=g) @ pi,
               model.inverse_dynamics(q, qd, qdd, gravity=g), what='Y pi, gravity override')


@pytest.mark.parametrize('case', identity_cases())
def test_slotine_li_regressor_is_m_qdd_r_plus_c_qd_r_plus_g(case, rng):
    """``Y(q, qd, qd_r, qdd_r) pi = M qdd_r + C(q, qd) qd_r + g`` with the Christoffel C."""
    model, xml = get_case(case)
    ref = PinDynamics(model, xml)
    pi = model.inertial_parameters()
    q, qd, qdd, _ = states(rng, model, (4,))
    qd_r = rng.normal(size=qd.shape)
    Y = model.slotine_li_regressor(q, qd, qd_r, qdd)
    assert Y.shape == (4, model.dof, 10 * model.dof)
    for k in range(4):
        # Pinocchio's M, Christoffel C and g: independent of our algorithms
        expected = ref.crba(q[k]) @ qdd[k] + ref.coriolis(q[k], qd[k]) @ qd_r[k] + \
            ref.gravity(q[k])
        assert_rel(Y[k] @ pi, expected, rtol=1e-10, what='Y(q, qd, qd_r, qdd_r) pi')
    # equal velocities: the ordinary regressor
    assert_rel(model.slotine_li_regressor(q, qd, qd, qdd), model.regressor(q, qd, qdd),
               rtol=1e-12, what='qd_r = qd')
    # the check above tells C(q, qd) qd_r from C^T qd_r (dM/dt = C + C^T is not zero here)
    C = model.coriolis_matrix(q, qd)
    transposed = np.einsum('bji,bj->bi', C, qd_r) - np.einsum('bij,bj->bi', C, qd_r)
    assert np.abs(transposed).max() > 1e-6 * np.abs(Y @ pi).max()
    g = rng.normal(size=3)
    assert_rel(model.slotine_li_regressor(q, np.zeros_like(q), np.zeros_like(q),
                                          np.zeros_like(q), gravity=g) @ pi,
               model.gravity_torques(q, gravity=g), rtol=1e-12, what='gravity override')


# ---- cross-identities ---------------------------------------------------------------------------

@pytest.mark.parametrize('case', identity_cases())
def test_strobing_reproduces_mass_matrix(case, rng):
    model, _ = get_case(case)
    q, qd, _, _ = states(rng, model, (4,))
    n = model.dof
    M = model.mass_matrix(q)
    for k in range(q.shape[0]):
        # Turney, Mudge and Lee (1981) §8: unit accelerations, no velocity, no gravity
        cols = [model.inverse_dynamics(q[k], np.zeros(n), e, gravity=np.zeros(3))
                for e in np.eye(n)]
        assert_rel(M[k], np.column_stack(cols), what='strobed M')
        # with velocity and gravity: columns are RNEA(e_j) minus the bias
        bias = model.inverse_dynamics(q[k], qd[k], np.zeros(n))
        cols = [model.inverse_dynamics(q[k], qd[k], e) - bias for e in np.eye(n)]
        assert_rel(M[k], np.column_stack(cols), what='M columns = RNEA(e_j) - bias')
    np.testing.assert_array_equal(M, np.swapaxes(M, -1, -2))
    assert np.all(np.linalg.eigvalsh(M) > 0), 'M is not positive definite'


@pytest.mark.parametrize('case', identity_cases())
def test_forward_dynamics_inverts_inverse_dynamics(case, rng):
    model, _ = get_case(case)
    q, qd, qdd, tau = states(rng, model, (4,))
    tau_id = model.inverse_dynamics(q, qd, qdd)
    for method in METHODS:
        assert_rel(model.forward_dynamics(q, qd, tau_id, method=method), qdd, floor=1e-3,
                   what=f'FD(ID(qdd)) ({method})')
        assert_rel(model.inverse_dynamics(q, qd, model.forward_dynamics(q, qd, tau,
                                                                        method=method)),
                   tau, what=f'ID(FD(tau)) ({method})')


@pytest.mark.parametrize('case', identity_cases())
def test_gravity_and_nonlinear_effects_are_rnea_special_cases(case, rng):
    model, _ = get_case(case)
    q, qd, _, _ = states(rng, model, (3,))
    zero = np.zeros_like(q)
    np.testing.assert_array_equal(model.gravity_torques(q), model.inverse_dynamics(q, zero, zero))
    np.testing.assert_array_equal(model.nonlinear_effects(q, qd),
                                  model.inverse_dynamics(q, qd, zero))
    assert_rel(model.nonlinear_effects(q, qd),
               np.einsum('bij,bj->bi', model.coriolis_matrix(q, qd), qd)
               + model.gravity_torques(q), what='C qd + g')
    np.testing.assert_array_equal(model.gravity_torques(q, gravity=np.zeros(3)), 0.0 * q)


@pytest.mark.parametrize('case', identity_cases())
def test_tip_wrench_adds_jacobian_transpose(case, rng):
    model, _ = get_case(case)
    q, qd, qdd, tau = states(rng, model, (3,))
    F = rng.normal(size=(3, 6))
    JT_F = np.einsum('bki,bk->bi', model.jacobian(q), F)
    assert_rel(model.inverse_dynamics(q, qd, qdd, f_ext=F) - model.inverse_dynamics(q, qd, qdd),
               JT_F, what='ID(f_ext) - ID == J^T f_ext')
    # one wrench (6,) for the whole batch
    assert_rel(model.inverse_dynamics(q, qd, qdd, f_ext=F[0]),
               model.inverse_dynamics(q, qd, qdd, f_ext=np.broadcast_to(F[0], (3, 6))),
               what='f_ext (6,) broadcast over the batch')
    for method in METHODS:
        assert_rel(model.forward_dynamics(q, qd, tau, f_ext=F, method=method),
                   model.forward_dynamics(q, qd, tau - JT_F, method=method), floor=1e-3,
                   what=f'forward_dynamics with f_ext ({method})')


@pytest.mark.parametrize('case', ['planar_2r', 'scara', 0, 3, 7])
def test_friction_terms_match_their_definition(case, rng):
    model, _ = get_case(case)
    if not np.any(model.friction) or not np.any(model.damping):
        model = model.replace(damping=rng.uniform(0.1, 1.0, model.dof),
                              friction=rng.uniform(0.1, 1.0, model.dof))
    q, qd, qdd, tau = states(rng, model, (4,))
    qd[0, 0] = 0.0                      # at rest: no Coulomb term
    qd[1, -1] = 3e-4                    # inside the smoothing band
    expected = model.damping * qd + model.friction * np.tanh(qd / 1e-3)
    assert COULOMB_VELOCITY_SCALE == 1e-3
    np.testing.assert_array_equal(friction_torques(model, qd), expected)
    assert_rel(model.inverse_dynamics(q, qd, qdd, friction=True)
               - model.inverse_dynamics(q, qd, qdd), expected, rtol=1e-12, what='friction')
    for method in METHODS:
        assert_rel(model.forward_dynamics(q, qd, tau, friction=True, method=method),
                   model.forward_dynamics(q, qd, tau - expected, method=method), floor=1e-3,
                   what=f'forward_dynamics with friction ({method})')
    # friction never adds energy
    assert np.all(expected * qd >= 0.0)


@pytest.mark.parametrize('case', identity_cases())
def test_gravity_override_per_call(case, rng):
    model, _ = get_case(case)
    g0 = model.gravity.copy()
    g = rng.normal(size=3) * 4.0
    other = model.replace(gravity=g)
    q, qd, qdd, tau = states(rng, model, (3,))
    pairs = [
        (model.inverse_dynamics(q, qd, qdd, gravity=g), other.inverse_dynamics(q, qd, qdd)),
        (model.gravity_torques(q, gravity=g), other.gravity_torques(q)),
        (model.nonlinear_effects(q, qd, gravity=g), other.nonlinear_effects(q, qd)),
        (model.potential_energy(q, gravity=g), other.potential_energy(q)),
        (model.regressor(q, qd, qdd, gravity=g), other.regressor(q, qd, qdd)),
    ] + [(model.forward_dynamics(q, qd, tau, gravity=g, method=m),
          other.forward_dynamics(q, qd, tau, method=m)) for m in METHODS]
    for k, (a, b) in enumerate(pairs):
        np.testing.assert_array_equal(a, b, err_msg=f'gravity override, pair {k}')
    # and the model's own gravity is untouched
    np.testing.assert_array_equal(model.gravity, g0)
    assert not np.allclose(model.inverse_dynamics(q, qd, qdd), pairs[0][0])


@pytest.mark.parametrize('case', identity_cases())
def test_energies(case, rng):
    model, _ = get_case(case)
    q, qd, _, _ = states(rng, model, (4,))
    K = model.kinetic_energy(q, qd)
    assert_rel(K, 0.5 * np.einsum('bi,bij,bj->b', qd, model.mass_matrix(q), qd),
               what='K = 0.5 qd^T M qd')
    assert np.all(K >= 0)
    # dP/dq = g(q), by central differences
    n = model.dof
    grad = np.stack([(model.potential_energy(q + H * e) - model.potential_energy(q - H * e))
                     / (2 * H) for e in np.eye(n)], axis=-1)
    assert_rel(grad, model.gravity_torques(q), rtol=FD_TOL, what='dP/dq == gravity_torques')


# ---- batches and shapes -------------------------------------------------------------------------

def function_table(model, q, qd, qdd, tau, F):
    """Return every dynamics function of one (batch of) state(s) as ``{name: thunk}``."""
    table = {
        'inverse_dynamics': lambda: model.inverse_dynamics(q, qd, qdd),
        'inverse_dynamics(f_ext, friction)': lambda: model.inverse_dynamics(
            q, qd, qdd, f_ext=F, friction=True),
        'mass_matrix': lambda: model.mass_matrix(q),
        'coriolis_matrix': lambda: model.coriolis_matrix(q, qd),
        'coriolis_matrix(newton_euler)': lambda: model.coriolis_matrix(
            q, qd, form='newton_euler'),
        'gravity_torques': lambda: model.gravity_torques(q),
        'nonlinear_effects': lambda: model.nonlinear_effects(q, qd),
        'kinetic_energy': lambda: model.kinetic_energy(q, qd),
        'potential_energy': lambda: model.potential_energy(q),
        'regressor': lambda: model.regressor(q, qd, qdd),
        'slotine_li_regressor': lambda: model.slotine_li_regressor(q, qd, qdd, tau),
        'friction_torques': lambda: friction_torques(model, qd),
    }
    for method in METHODS:
        table[f'forward_dynamics({method})'] = functools.partial(
            model.forward_dynamics, q, qd, tau, method=method)
        table[f'forward_dynamics({method}, f_ext, friction)'] = functools.partial(
            model.forward_dynamics, q, qd, tau, f_ext=F, friction=True, method=method)
    return table


def all_functions(model, q, qd, qdd, tau, F):
    """Evaluate :func:`function_table`: ``{name: result}``."""
    return {name: f() for name, f in function_table(model, q, qd, qdd, tau, F).items()}


def expected_shape(name, shape, n):
    if name == 'mass_matrix' or name.startswith('coriolis_matrix'):
        return shape + (n, n)
    if name.endswith('energy'):
        return shape
    if name.endswith('regressor'):
        return shape + (n, 10 * n)
    return shape + (n,)


@pytest.mark.parametrize('case', ['scara', 'puma560', 3])
def test_batch_equals_loop(case, rng):
    model, _ = get_case(case)
    q, qd, qdd, tau = states(rng, model, (6,))
    F = rng.normal(size=(6, 6))
    batch = all_functions(model, q, qd, qdd, tau, F)
    singles = [all_functions(model, q[k], qd[k], qdd[k], tau[k], F[k]) for k in range(6)]
    for name, value in batch.items():
        loop = np.stack([s[name] for s in singles])
        assert_rel(value, loop, rtol=1e-12, what=f'{name}: batch != loop', floor=1e-3)


@pytest.mark.parametrize('shape', BATCH_SHAPES, ids=str)
def test_output_shapes(shape, rng):
    model = load('scara')
    n = model.dof
    q, qd, qdd, tau = states(rng, model, shape)
    F = rng.normal(size=shape + (6,))
    inputs = [x.copy() for x in (q, qd, qdd, tau, F)]
    for name, value in all_functions(model, q, qd, qdd, tau, F).items():
        # (an energy of one state may come back as a numpy float64 scalar)
        scalar_ok = name.endswith('energy') and shape == ()
        assert isinstance(value, (np.ndarray, np.float64) if scalar_ok else np.ndarray), name
        assert value.dtype == np.float64, name
        assert value.shape == expected_shape(name, shape, n), f'{name}: shape {value.shape}'
        assert np.all(np.isfinite(value)), name
    # inputs are never modified
    for x, x0 in zip((q, qd, qdd, tau, F), inputs):
        np.testing.assert_array_equal(x, x0)


def test_read_only_inputs_reuse_the_compiled_kernels(monkeypatch, rng):
    """
    Read-only inputs must run the kernels already compiled for writable ones.

    numba types a read-only array (``np.broadcast_to``, a ROS message buffer, an array with
    ``setflags(write=False)``) apart from a writable one, so a kernel fed one compiles a second
    specialization: tens of seconds inside a control loop, on the first call after each install
    or edit. The spy reports such a call instead of letting it compile.
    """
    model = load('scara')
    q, qd, qdd, tau = states(rng, model, (3,))
    F = rng.normal(size=(3, 6))
    table = function_table(model, q, qd, qdd, tau, F)
    for f in table.values():
        f()                                    # compiled (or loaded) for writable inputs

    class NewSpecialization(Exception):
        pass

    def spy(kernel, name):
        def call(*args):
            signature = tuple(numba.typeof(a) for a in args)
            if signature not in kernel.signatures:
                read_only = [k for k, a in enumerate(args)
                             if isinstance(a, np.ndarray) and not a.flags.writeable]
                raise NewSpecialization(f'{name} (read-only arguments {read_only})')
            return kernel(*args)
        return call

    for module in (dynamics, kinematics):
        for name, value in list(vars(module).items()):
            if isinstance(value, numba.core.dispatcher.Dispatcher):
                monkeypatch.setattr(module, name, spy(value, f'{module.__name__}.{name}'))
    for x in (q, qd, qdd, tau, F):
        x.setflags(write=False)
    recompiled = {}
    for name, f in table.items():
        try:
            f()
        except NewSpecialization as exc:
            recompiled[name] = str(exc)
    assert not recompiled, 'read-only inputs would compile new kernel specializations:\n' + \
        '\n'.join(f'{k}: {v}' for k, v in recompiled.items())


def test_list_inputs_are_accepted():
    model = load('planar_2r')
    tau = model.inverse_dynamics([0.1, 0.2], [0, 0], (0, 0))
    np.testing.assert_array_equal(tau, model.gravity_torques(np.array([0.1, 0.2])))


# ---- energy along simulated trajectories --------------------------------------------------------

def total_energy(model, traj):
    return model.kinetic_energy(traj.q, traj.qd) + model.potential_energy(traj.q)


PUMA_Q0 = np.array([0.3, -0.2, 0.4, 0.5, 0.6, -0.7])
PUMA_QD0 = np.array([0.5, -0.4, 0.6, 1.0, -1.0, 2.0])


def test_rk4_energy_drift_of_the_6dof_arm():
    model = load('puma560')
    traj = simulate(model, PUMA_Q0, PUMA_QD0, None, dt=1e-3, duration=10.0, method='rk4')
    assert traj.q.shape == (10001, 6)
    E = total_energy(model, traj)
    assert abs(E[0]) > 10.0
    drift = np.abs(E - E[0]).max() / abs(E[0])
    assert drift < 1e-6, f'RK4 energy drift {drift:.3g} over 10 s'
    # and the arm really moved (energy sloshed between kinetic and potential)
    assert np.ptp(model.kinetic_energy(traj.q, traj.qd)) > 1.0


def test_energy_never_increases_with_friction():
    model = load('puma560')
    # per-joint damping [N m s/rad] and Coulomb friction [N m] scaled to each joint's inertia, so
    # that the smooth Coulomb term (slope friction / 1e-3 at rest) stays stable at dt = 1 ms
    inertia = np.diag(model.mass_matrix(PUMA_Q0))
    lossy = model.replace(damping=0.5 * inertia, friction=0.02 * inertia)
    traj = simulate(lossy, PUMA_Q0, PUMA_QD0, None, dt=1e-3, duration=3.0, friction=True)
    E = total_energy(lossy, traj)
    dE = np.diff(E)
    assert dE.max() <= 1e-9 * abs(E[0]), f'energy increased by {dE.max():.3g} J in one step'
    assert E[-1] < E[0] - 1.0, 'friction dissipated almost nothing'


def test_power_balance_along_a_driven_trajectory():
    """
    Check ``dE/dt = qd . tau`` along a trajectory driven by a time-varying torque.

    Per step the torque is constant, so ``E_{k+1} - E_k = tau_k . (q_{k+1} - q_k)``.
    """
    model = load('puma560')
    dt = 1e-3

    def torque(t, q, qd):
        # amplitudes follow the joints' inertias (the wrist's are ~1e-3 kg m^2)
        return np.array([5.0, 20.0, 8.0, 0.02, 0.02, 0.005]) * np.sin(2.0 * t + np.arange(6))

    traj = simulate(model, PUMA_Q0, PUMA_QD0, torque, dt=dt, duration=2.0)
    E = total_energy(model, traj)
    work = np.einsum('ki,ki->k', traj.tau[:-1], np.diff(traj.q, axis=0))
    scale = np.abs(np.diff(E)).max()
    assert_rel(np.diff(E), work, rtol=1e-6, what='E_{k+1} - E_k == tau_k . dq', floor=scale)
    # finite-difference power against qd . tau at the samples (tau is held over each step, so
    # the central difference sees the average of two torques: an O(dt) difference)
    dEdt = (E[2:] - E[:-2]) / (2 * dt)
    power = np.einsum('ki,ki->k', traj.qd[1:-1], 0.5 * (traj.tau[:-2] + traj.tau[1:-1]))
    assert_rel(dEdt, power, rtol=1e-3, what='dE/dt == qd . tau')
    assert np.abs(power).max() > 1.0


def test_semi_implicit_euler_energy_error_is_bounded():
    model = load('planar_2r')
    q0, qd0 = np.array([0.4, -0.3]), np.array([1.0, -2.0])
    errors = []
    for dt in (2e-3, 1e-3):
        traj = simulate(model, q0, qd0, None, dt=dt, duration=10.0,
                        method='semi_implicit_euler')
        E = total_energy(model, traj)
        errors.append(np.abs(E - E[0]).max() / abs(E[0]))
    assert errors[1] < 0.02, f'semi-implicit Euler energy error {errors[1]:.3g}'
    # first order: halving dt roughly halves the (bounded) energy error
    assert 1.5 < errors[0] / errors[1] < 3.0, errors


# ---- bad input ----------------------------------------------------------------------------------

def test_wrong_shapes_name_the_argument():
    model = load('puma560')
    q = np.zeros(6)
    cases = [
        (lambda: model.inverse_dynamics(np.zeros(5), q, q), r'q: expected shape \(\.\.\., 6\)'),
        (lambda: model.inverse_dynamics(q, np.zeros(7), q), r'qd: expected shape'),
        (lambda: model.inverse_dynamics(q, q, np.zeros((2, 6))), r'qdd: expected shape'),
        (lambda: model.inverse_dynamics(q, q, q, f_ext=np.zeros(3)), r'f_ext: expected shape'),
        (lambda: model.inverse_dynamics(q, q, q, gravity=np.zeros(2)), r'gravity: expected'),
        (lambda: model.inverse_dynamics(np.zeros((4, 6)), q, q), r'qd: expected shape'),
        (lambda: model.mass_matrix(1.0), r'q: expected shape'),
        (lambda: model.forward_dynamics(q, q, np.zeros(3)), r'tau: expected shape'),
        (lambda: model.forward_dynamics(np.zeros((3, 6)), np.zeros((3, 6)), np.zeros((3, 6)),
                                        f_ext=np.zeros((2, 6))), r'f_ext: expected shape'),
        (lambda: model.coriolis_matrix(q, np.zeros(4)), r'qd: expected shape'),
        (lambda: model.regressor(q, q, np.zeros(1)), r'qdd: expected shape'),
        (lambda: model.slotine_li_regressor(q, q, q[:2], q), r'qd_r: expected shape'),
        (lambda: model.kinetic_energy(np.zeros(2), q), r'q: expected shape'),
    ]
    for call, match in cases:
        with pytest.raises(ShapeError, match=match):
            call()


def test_non_finite_and_non_numeric_inputs():
    model = load('scara')
    q = np.zeros(3)
    bad = np.array([0.0, np.nan, 0.0])
    cases = [
        (lambda: model.inverse_dynamics(bad, q, q), 'q'),
        (lambda: model.inverse_dynamics(q, q + np.inf, q), 'qd'),
        (lambda: model.inverse_dynamics(q, q, bad), 'qdd'),
        (lambda: model.forward_dynamics(q, q, bad), 'tau'),
        (lambda: model.inverse_dynamics(q, q, q, f_ext=[0, 0, np.nan, 0, 0, 0]), 'f_ext'),
        (lambda: model.gravity_torques(q, gravity=[0, 0, -np.inf]), 'gravity'),
        (lambda: model.mass_matrix(bad), 'q'),
    ]
    for call, name in cases:
        with pytest.raises(InputError, match=rf'^{name}: .*non-finite'):
            call()
    with pytest.raises(InputError, match='q: expected numbers'):
        model.mass_matrix('not a configuration')
    with pytest.raises(InputError, match='q: expected numbers'):
        model.mass_matrix([[0.0, 0.1, 0.2], [0.3]])


def test_unknown_forward_dynamics_method():
    model = load('planar_2r')
    with pytest.raises(InputError, match=r"method: expected one of \('aba', 'crba', 'strobe'\), "
                                         r"got 'lu'"):
        model.forward_dynamics(np.zeros(2), np.zeros(2), np.zeros(2), method='lu')
    assert issubclass(InputError, ValueError)


def degenerate_planar(com, mass=0.0):
    """Return the planar 2R with a last body of mass ``mass`` at ``com`` and no inertia."""
    model = load('planar_2r')
    inertia = model.inertia.copy()
    inertia[1] = 0.0
    return model.replace(mass=[model.mass[0], mass], com=[model.com[0], com], inertia=inertia)


def test_singular_mass_matrix_raises_from_every_method(rng):
    # the last body has no mass and no inertia: joint 2 moves nothing
    model = degenerate_planar([1.0, 0.0, 0.0])
    assert issubclass(SingularMassMatrixError, ValueError)
    q = np.array([[0.3, 0.7], [0.1, -2.0]])
    np.testing.assert_array_equal(model.mass_matrix(q)[:, 1], 0.0)
    for method in METHODS:
        with pytest.raises(SingularMassMatrixError, match=r'singular|not positive definite'):
            model.forward_dynamics(q, np.zeros((2, 2)), np.ones((2, 2)), method=method)
    # a random chain whose last body is emptied the same way
    xml, chain = random_chains()[7]
    mass, inertia = chain.mass.copy(), chain.inertia.copy()
    mass[-1], inertia[-1] = 0.0, 0.0
    empty = chain.replace(mass=mass, inertia=inertia)
    q, qd, _, tau = states(rng, empty)
    for method in METHODS:
        with pytest.raises(SingularMassMatrixError):
            empty.forward_dynamics(q, qd, tau, method=method)


def test_near_singular_mass_matrix_raises_from_every_method():
    """
    A point mass on the last joint's axis: M is singular up to rounding (entries ~1e-16).

    ABA detects it (relative pivot threshold); the Cholesky routes must not return accelerations
    of 1e15 instead.
    """
    model = degenerate_planar([0.0, 0.3, 0.0], mass=1.0)   # on the axis of joint 2 (-y)
    q = np.array([1.1, 0.4])
    assert np.abs(model.mass_matrix(q)[1]).max() < 1e-12
    for method in METHODS:
        with pytest.raises(SingularMassMatrixError):
            qdd = model.forward_dynamics(q, np.zeros(2), np.ones(2), method=method)
            pytest.fail(f'{method}: no error, qdd = {qdd}')
