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
Tests of robot_dynamics.linalg: damped least squares, the Cholesky solve, the singular-pivot test.

Truth: numpy's ``lstsq`` / ``pinv`` / ``solve``, the Tikhonov form of damped least squares
(``min |J x - b|^2 + d^2 |x|^2`` is the least-squares solution of ``[J; d I] x = [b; 0]``), and,
for the mass-matrix test, the scaling law of rigid-body dynamics: masses times a and lengths
times b multiply a revolute joint's torques by a b^2 at the same accelerations when gravity is
scaled by b, so the verdict of a dimensionally sound singularity test cannot change.
"""

import numpy as np
import pytest

from robot_dynamics import InputError, RobotModel, SingularMassMatrixError
from robot_dynamics.linalg import (cholesky_solve, damped_least_squares, damped_solve,
                                   SINGULAR_PIVOT_RATIO, spd_solve)

METHODS = ('aba', 'crba', 'strobe')


def tikhonov(J, b, damping):
    """Damped least squares as the least-squares solution of the stacked system."""
    m, n = J.shape
    A = np.vstack((J, damping * np.eye(n)))
    rhs = np.concatenate((b, np.zeros((n,) + b.shape[1:])))
    return np.linalg.lstsq(A, rhs, rcond=None)[0]


@pytest.mark.parametrize('m, n', [(3, 6), (6, 6), (6, 3), (2, 7)])
@pytest.mark.parametrize('damping', [0.0, 1e-3, 0.5])
def test_damped_least_squares_matches_numpy(rng, m, n, damping):
    J = rng.normal(size=(m, n))
    b = rng.normal(size=(m, 3))
    x = damped_least_squares(J, b, damping)
    if damping > 0.0:
        expected = tikhonov(J, b, damping)
    else:
        # full rank: minimum norm (m < n), least squares (m > n), the solution (m == n)
        expected = np.linalg.lstsq(J, b, rcond=None)[0]
    np.testing.assert_allclose(x, expected, rtol=1e-9, atol=1e-12)
    # both printed forms of the same solution
    closed = J.T @ np.linalg.solve(J @ J.T + damping ** 2 * np.eye(m), b) if m <= n else \
        np.linalg.solve(J.T @ J + damping ** 2 * np.eye(n), J.T @ b)
    np.testing.assert_allclose(x, closed, rtol=1e-9, atol=1e-12)


def test_damped_least_squares_broadcasts_batches(rng):
    J = rng.normal(size=(4, 1, 3, 5))
    b = rng.normal(size=(2, 3, 1))
    x = damped_least_squares(J, b, 0.1)
    assert x.shape == (4, 2, 5, 1)
    for i in range(4):
        for k in range(2):
            np.testing.assert_allclose(x[i, k], tikhonov(J[i, 0], b[k], 0.1), rtol=1e-9)


def test_damped_least_squares_rejects_a_rank_loss_without_damping():
    J = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0]])      # rank 1
    with pytest.raises(InputError, match='loses rank'):
        damped_least_squares(J, np.ones((2, 1)), 0.0)
    np.testing.assert_allclose(damped_least_squares(J, np.ones((2, 1)), 0.1),
                               tikhonov(J, np.ones((2, 1)), 0.1), rtol=1e-9)


@pytest.mark.parametrize('m, n', [(6, 7), (6, 4)])
def test_damped_solve_leaves_out_blocked_joints(rng, m, n):
    """The IK's active set: the columns of blocked joints are dropped, their step is 0."""
    J = rng.normal(size=(m, n))
    b = rng.normal(size=(m, 1))
    free = np.ones(n, dtype=bool)
    free[[1, 3]] = False
    s = min(m, n)
    A, Y, D, X = np.empty((s, s)), np.empty((s, 1)), np.empty(s), np.empty((n, 1))
    assert damped_solve(J, b, 0.01, free, A, Y, D, X)
    expected = np.zeros((n, 1))
    expected[free] = tikhonov(J[:, free], b, 0.1)
    np.testing.assert_allclose(X, expected, rtol=1e-9, atol=1e-12)


def test_cholesky_solve_and_its_singular_pivot(rng):
    B = rng.normal(size=(5, 5))
    A = B @ B.T + 0.1 * np.eye(5)
    b = rng.normal(size=(5, 2))
    L, x = A.copy(), b.copy()
    assert cholesky_solve(L, x, 5, np.diag(A).copy()) == -1
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-10)
    np.testing.assert_allclose(np.tril(L), np.linalg.cholesky(A), rtol=1e-12)
    # column 3 a combination of columns 0 and 1 (to rounding): pivot 3 is singular
    V = rng.normal(size=(5, 5))
    V[:, 3] = V[:, 0] - 2.0 * V[:, 1]
    S = V.T @ V
    assert cholesky_solve(S.copy(), b.copy(), 5, np.diag(S).copy()) == 3
    # the batched form reports the system and the pivot
    x, bad = spd_solve(np.stack((A, S)), np.stack((b[:, 0], b[:, 0])), np.stack((np.diag(A),
                                                                                np.diag(S))))
    assert bad == (1, 3)
    np.testing.assert_allclose(x[0], np.linalg.solve(A, b[:, 0]), rtol=1e-10)


# ---- the singular mass matrix: one test, in the units of each joint ----------------------------

def scaled(model, mass, length):
    """Return the arm with masses times ``mass`` and lengths times ``length`` (and gravity)."""
    placement = model.joint_placement.copy()
    placement[:, :3, 3] *= length
    return model.replace(mass=model.mass * mass, com=model.com * length,
                         inertia=model.inertia * mass * length ** 2,
                         joint_placement=placement, gravity=model.gravity * length)


def test_an_arm_in_grams_and_millimetres_is_not_singular(rng):
    """
    The PUMA 560 at 1/1000 of its size and mass: no pivot is singular, on every route.

    Each joint's torque scales by 1e-9 at the same accelerations, so qdd must not change. The
    former absolute threshold (1e-12 kg m^2 and kg mixed) rejected this model as singular.
    """
    puma = RobotModel.load('puma560')
    small = scaled(puma, 1e-3, 1e-3)
    q = rng.uniform(puma.lower, puma.upper, (5, 6))
    qd, tau = rng.normal(size=(2, 5, 6))
    expected = puma.forward_dynamics(q, qd, tau)
    for method in METHODS:
        qdd = small.forward_dynamics(q, qd, tau * 1e-9, method=method)
        np.testing.assert_allclose(qdd, expected, rtol=1e-8, atol=1e-8)


def two_joints_on_nearly_one_axis(offset):
    """
    Planar 2R whose first body is empty and whose second axis is ``offset`` [m] from the first.

    Both joints turn the same body about axes ``offset`` apart: M is singular at offset 0 and
    its pivots are ~(offset / 1 m)^2 of its diagonal.
    """
    model = RobotModel.load('planar_2r')
    placement = model.joint_placement.copy()
    placement[1, :3, 3] = [offset, 0.0, 0.0]
    inertia = model.inertia.copy()
    inertia[0] = 0.0
    return model.replace(mass=[0.0, model.mass[1]], inertia=inertia, joint_placement=placement)


@pytest.mark.parametrize('units', [(1.0, 1.0), (1e-3, 1e-3)])
def test_near_singular_verdict_is_the_same_on_every_route_and_in_any_units(units):
    q, qd, tau = np.array([0.4, -0.7]), np.array([0.3, 0.1]), np.array([1.0, -2.0])
    near = scaled(two_joints_on_nearly_one_axis(1e-7), *units)        # pivots ~1e-14
    M = near.mass_matrix(q)
    assert np.linalg.eigvalsh(M).min() < SINGULAR_PIVOT_RATIO * np.trace(M)
    for method in METHODS:
        with pytest.raises(SingularMassMatrixError, match='singular'):
            near.forward_dynamics(q, qd, tau, method=method)
    apart = scaled(two_joints_on_nearly_one_axis(1e-4), *units)       # pivots ~1e-8
    qdd = apart.forward_dynamics(q, qd, tau)
    bias = apart.nonlinear_effects(q, qd)
    # independent truth: numpy's solve of M qdd = tau - C qd - g
    np.testing.assert_allclose(qdd, np.linalg.solve(apart.mass_matrix(q), tau - bias),
                               rtol=1e-6)
    for method in METHODS[1:]:
        np.testing.assert_allclose(apart.forward_dynamics(q, qd, tau, method=method), qdd,
                                   rtol=1e-6)
