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
Closed-form equations (robot_dynamics.symbolic) against the recursions, Pinocchio and the seeds.

The seeds' worked examples: Spong, Hutchinson and Vidyasagar's planar elbow (ch. 6: D, the
Christoffel symbols, g, the skew symmetry of dD/dt - 2C), Hayes' 2R numbers (the bundled
planar_2r: l1 = l2 = 2, lc = 1, m = (2, 1), I = (3, 1) about the joint axis), Becker and Klink's
RP arm (point masses at alpha and alpha + q). The PUMA 560's equations (minutes of sympy in
closed form) are checked through its generated code against Pinocchio in test_generated.py.
"""

from functools import lru_cache

import numpy as np
import pytest
from randomchain import PinDynamics
from robot_dynamics import RobotModel, robots, symbolic
import sympy as sp

TOL = 1e-10
G = 9.81


@lru_cache(maxsize=None)
def random_model(name):
    """Return the bundled robot with random inertial parameters (physically consistent)."""
    model = RobotModel.load(name)
    rng = np.random.default_rng(sum(map(ord, name)))
    n = model.dof
    A = rng.normal(size=(n, 3, 3))
    inertia = 0.05 * A @ np.swapaxes(A, 1, 2) + 0.01 * np.eye(3)
    return model.replace(mass=rng.uniform(0.5, 3.0, n),
                         com=np.asarray(model.com) + rng.uniform(-0.1, 0.1, (n, 3)),
                         inertia=inertia)


@lru_cache(maxsize=None)
def equations(name, symbolic_parameters=False):
    model = random_model(name)
    return symbolic.derive(model, symbolic_parameters=symbolic_parameters,
                           simplify=model.dof <= 3)


def evaluate(eq):
    """Return a function of one state giving D, C, g, tau as arrays (the model's numbers in)."""
    ch = eq.chain
    parts = {'D': eq.D, 'C': eq.C, 'g': eq.g, 'tau': eq.tau}
    funcs = {k: symbolic.lambdified(ch, v) for k, v in parts.items()}
    return lambda q, qd, qdd: {k: f(q, qd, qdd) for k, f in funcs.items()}


def close(a, b, what):
    a, b = np.asarray(a, dtype=float).reshape(np.shape(b)), np.asarray(b, dtype=float)
    err = np.abs(a - b).max() / max(1.0, np.abs(b).max())
    assert err < TOL, f'{what}: differs by {err:.3g}\n{a}\n{b}'


def state(rng, model):
    q = rng.uniform(np.maximum(model.lower, -np.pi), np.minimum(model.upper, np.pi))
    return q, rng.normal(size=model.dof), rng.normal(size=model.dof)


@pytest.mark.parametrize('name', ['planar_2r', 'rp_arm', 'scara'])
def test_equations_equal_the_recursions_and_pinocchio(name, rng):
    model = random_model(name)
    pin = PinDynamics(model, model.to_urdf())
    value = evaluate(equations(name))
    for _ in range(3):
        q, qd, qdd = state(rng, model)
        got = value(q, qd, qdd)
        close(got['D'], model.mass_matrix(q), f'{name} D')
        close(got['D'], pin.crba(q), f'{name} D (Pinocchio)')
        close(got['C'], model.coriolis_matrix(q, qd), f'{name} C')
        close(got['C'], pin.coriolis(q, qd), f'{name} C (Pinocchio)')
        close(got['g'], model.gravity_torques(q), f'{name} g')
        close(got['g'], pin.gravity(q), f'{name} g (Pinocchio)')
        close(got['tau'], model.inverse_dynamics(q, qd, qdd), f'{name} tau')
        close(got['tau'], pin.rnea(q, qd, qdd), f'{name} tau (Pinocchio)')


@pytest.mark.parametrize('name', ['planar_3r', 'scara'])
def test_dh_tables_standard_and_modified(name, rng):
    """The DH tables with their own symbols (planar_3r: modified; scara: standard, RRP)."""
    table = str(robots.share_directory() / 'config' / f'{name}.dh.yaml')
    model = RobotModel.from_dh(table)
    ch = symbolic.dh_chain(table)
    names = {s.name for s in ch.parameters}
    assert {'a_2', 'm_2', 'g'} <= names and 'alpha_1' not in names
    eq = symbolic.derive(ch, simplify=False)
    value = evaluate(eq)
    for _ in range(2):
        q, qd, qdd = state(rng, model)
        got = value(q, qd, qdd)
        close(got['D'], model.mass_matrix(q), f'{name} D')
        close(got['C'], model.coriolis_matrix(q, qd), f'{name} C')
        close(got['g'], model.gravity_torques(q), f'{name} g')
        close(got['tau'], model.inverse_dynamics(q, qd, qdd), f'{name} tau')


@pytest.mark.parametrize('name', ['planar_2r', 'rp_arm'])
def test_symbolic_parameters_evaluate_to_the_same_numbers(name, rng):
    model = random_model(name)
    eq = equations(name, symbolic_parameters=True)
    assert eq.chain.parameters, 'no parameter became a symbol'
    value = evaluate(eq)
    q, qd, qdd = state(rng, model)
    got = value(q, qd, qdd)
    close(got['D'], model.mass_matrix(q), f'{name} D, symbolic parameters')
    close(got['tau'], model.inverse_dynamics(q, qd, qdd), f'{name} tau, symbolic parameters')


@pytest.mark.parametrize('name', ['planar_2r', 'rp_arm'])
def test_regressor_is_the_library_and_pinocchio_regressor(name, rng):
    model = random_model(name)
    Y, theta = symbolic.regressor(model, simplify=False)
    assert Y.shape == (model.dof, 10 * model.dof) and theta.shape == (10 * model.dof, 1)
    ch = symbolic.chain(model, barycentric=True)
    f = sp.lambdify((ch.q, ch.qd, ch.qdd), Y, 'numpy')
    pin = PinDynamics(model, model.to_urdf())
    for _ in range(2):
        q, qd, qdd = state(rng, model)
        y = np.array(f(q, qd, qdd), dtype=float)
        close(y, model.regressor(q, qd, qdd), f'{name} Y')
        close(y, pin.regressor(q, qd, qdd), f'{name} Y (Pinocchio)')
        close(y @ model.inertial_parameters(), model.inverse_dynamics(q, qd, qdd),
              f'{name} Y theta == tau')


# ---- the planar 2R: Spong's closed forms, Hayes' numbers ----------------------------------------

@lru_cache(maxsize=None)
def spong_2r():
    """Return the bundled 2R's equations with symbols, and Spong's names for them."""
    eq = symbolic.derive(RobotModel.load('planar_2r'), symbolic_parameters=True)
    s = {sym.name: sym for sym in eq.chain.parameters}
    names = {'m1': s['m_1'], 'm2': s['m_2'], 'lc1': s['c_1x'], 'lc2': s['c_2x'], 'l1': s['l_1x'],
             'I1': s['I_1yy'], 'I2': s['I_2yy'], 'g': s['g']}
    return eq, names


def test_planar_2r_mass_matrix_is_spongs_symbol_by_symbol():
    eq, p = spong_2r()
    q1, q2 = eq.chain.q
    m1, m2, lc1, lc2, l1, I1, I2 = (p[k] for k in ('m1', 'm2', 'lc1', 'lc2', 'l1', 'I1', 'I2'))
    spong = sp.Matrix([
        [m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * sp.cos(q2)) + I1 + I2,
         m2 * (lc2**2 + l1 * lc2 * sp.cos(q2)) + I2],
        [m2 * (lc2**2 + l1 * lc2 * sp.cos(q2)) + I2, m2 * lc2**2 + I2]])
    assert sp.expand(eq.D - spong) == sp.zeros(2, 2)
    # every symbol of D is one of Spong's (the out-of-plane inertias drop out)
    assert eq.D.free_symbols == {q2, m1, m2, lc1, lc2, l1, I1, I2}


def test_planar_2r_christoffel_symbols_gravity_and_skew_symmetry():
    eq, p = spong_2r()
    q1, q2 = eq.chain.q
    qd = sp.Matrix(eq.chain.qd)
    h = -p['m2'] * p['l1'] * p['lc2'] * sp.sin(q2)
    c = eq.christoffel        # c[i][j][k] = c_{i+1, j+1, k+1}
    expected = {(0, 0, 0): 0, (0, 1, 0): h, (1, 0, 0): h, (1, 1, 0): h, (0, 0, 1): -h,
                (0, 1, 1): 0, (1, 0, 1): 0, (1, 1, 1): 0}
    for (i, j, k), value in expected.items():
        assert sp.simplify(c[i][j][k] - value) == 0, f'c{i + 1}{j + 1}{k + 1}'
    g1 = ((p['m1'] * p['lc1'] + p['m2'] * p['l1']) * p['g'] * sp.cos(q1)
          + p['m2'] * p['lc2'] * p['g'] * sp.cos(q1 + q2))
    g2 = p['m2'] * p['lc2'] * p['g'] * sp.cos(q1 + q2)
    assert sp.simplify(eq.g - sp.Matrix([g1, g2])) == sp.zeros(2, 1)
    Dd = sum((eq.D.diff(q) * v for q, v in zip(eq.chain.q, qd)), sp.zeros(2, 2))
    S = Dd - 2 * eq.C
    assert sp.simplify(S + S.T) == sp.zeros(2, 2), 'dD/dt - 2C is not skew-symmetric'
    assert sp.simplify(S[0, 1] - p['m2'] * p['l1'] * p['lc2'] * (2 * qd[0] + qd[1])
                       * sp.sin(q2)) == 0


def test_planar_2r_hayes_worked_example():
    eq = equations_bundled('planar_2r')
    value = evaluate(eq)
    got = value(np.array([np.pi / 6, np.pi / 3]), np.array([1.0, 2.0]), np.array([0.5, -1.0]))
    h = -1.7320508076
    np.testing.assert_allclose(got['D'], [[13, 3], [3, 2]], atol=1e-12)
    np.testing.assert_allclose(got['C'], [[h * 2, h * 3], [-h, 0]], atol=1e-9)
    np.testing.assert_allclose(got['g'].ravel(), [33.9828368445, 0], atol=1e-9)
    np.testing.assert_allclose(got['tau'].ravel(), [23.6264303840, 1.2320508076], atol=1e-9)


@lru_cache(maxsize=None)
def equations_bundled(name, symbolic_parameters=False):
    return symbolic.derive(RobotModel.load(name), symbolic_parameters=symbolic_parameters)


def test_rp_arm_is_becker_and_klink():
    eq = equations_bundled('rp_arm', symbolic_parameters=True)
    s = {sym.name: sym for sym in eq.chain.parameters}
    theta, q = eq.chain.q
    thd, qd = eq.chain.qd
    m1, m2, alpha, g = s['m_1'], s['m_2'], s['c_1x'], s['g']
    # both masses sit at alpha from their joint: one symbol for the notes' alpha
    same = {s['c_2x']: alpha}
    M = sp.Matrix([[m1 * alpha**2 + m2 * (alpha + q)**2, 0], [0, m2]])
    c = sp.Matrix([2 * m2 * (alpha + q) * thd * qd, -m2 * (alpha + q) * thd**2])
    grav = sp.Matrix([(m1 * alpha + m2 * (alpha + q)) * g * sp.cos(theta),
                      m2 * g * sp.sin(theta)])
    assert sp.simplify(eq.D.xreplace(same) - M) == sp.zeros(2, 2)
    assert sp.simplify((eq.C * sp.Matrix(eq.chain.qd)).xreplace(same) - c) == sp.zeros(2, 1)
    assert sp.simplify(eq.g.xreplace(same) - grav) == sp.zeros(2, 1)
    value = evaluate(equations_bundled('rp_arm'))
    got = value(np.array([0.3, 0.2]), np.array([1.0, 0.5]), np.array([2.0, -1.0]))
    np.testing.assert_allclose(got['D'], np.diag([1.23, 2.0]), atol=1e-12)
    np.testing.assert_allclose((got['C'] @ [1.0, 0.5]).ravel(), [1.4, -1.4], atol=1e-12)
    np.testing.assert_allclose(got['g'].ravel(), [17.8065168208, 5.7981064547], atol=1e-9)
    np.testing.assert_allclose(got['tau'].ravel(), [21.6665168208, 2.3981064547], atol=1e-9)


def test_scara_dh_table_gives_the_lecture_symbols():
    """
    D11 of the RRP SCARA in its DH lengths a_1, a_2 (the notes' r1, r2).

    The COM ``c_ix`` is given in DH frame i, at the link's far end: link i's COM is
    ``a_i + c_ix`` from joint i along the link; the quill's mass sits at the end of link 2.
    """
    ch = symbolic.dh_chain(str(robots.share_directory() / 'config' / 'scara.dh.yaml'))
    s = {sym.name: sym for sym in ch.parameters}
    D = symbolic.mass_matrix(ch)
    q2 = ch.q[1]
    a1, a2, m1, m2, m3, c1, c2 = (s[k] for k in ('a_1', 'a_2', 'm_1', 'm_2', 'm_3', 'c_1x',
                                                 'c_2x'))
    inertias = s['I_1zz'] + s['I_2zz'] + s['I_3zz']
    r1, r2 = a1 + c1, a2 + c2
    d11 = (inertias + m1 * r1**2 + m2 * (a1**2 + r2**2 + 2 * a1 * r2 * sp.cos(q2))
           + m3 * (a1**2 + a2**2 + 2 * a1 * a2 * sp.cos(q2)))
    assert sp.expand(D[0, 0] - d11) == 0
    assert D[2, 2] == m3 and D[0, 2] == 0


def test_chain_rejects_two_parametrizations():
    with pytest.raises(ValueError, match='two parametrizations'):
        symbolic.chain(RobotModel.load('planar_2r'), symbolic_parameters=True, barycentric=True)


def value_of(expr, values, memo):
    """
    Return the number an expression of ``values``' symbols (sums, products, powers, sin, cos) is.

    The unsimplified entries share their bodies' rotations and Jacobians: each subexpression is
    evaluated once (``memo``: expression -> number), where ``xreplace`` rebuilds every entry's
    whole tree (for the PUMA's C: 10 s against 0.04 s of CPU).
    """
    if expr not in memo:
        if expr.is_Symbol:
            memo[expr] = values[expr]
        elif expr.is_Atom:                   # a number, or a constant such as pi
            memo[expr] = float(expr)
        elif expr.is_Add:
            memo[expr] = sum(value_of(a, values, memo) for a in expr.args)
        elif expr.is_Mul:
            memo[expr] = np.prod([value_of(a, values, memo) for a in expr.args])
        elif expr.is_Pow:
            memo[expr] = value_of(expr.base, values, memo) ** value_of(expr.exp, values, memo)
        elif isinstance(expr, (sp.sin, sp.cos)):
            memo[expr] = (np.sin if isinstance(expr, sp.sin) else np.cos)(
                value_of(expr.args[0], values, memo))
        else:
            raise TypeError(f'{type(expr).__name__} in {expr}')
    return memo[expr]


def test_a_six_joint_arms_coriolis_matrix_is_derived_with_progress_and_is_the_recursions():
    """The PUMA 560's C(q, qd) in closed form (unsimplified), every entry the RNEA's."""
    model = RobotModel.load('puma560')
    told = []
    eq = symbolic.derive(model, progress=told.append)
    assert sum('Christoffel' in line for line in told) == 6, told
    assert told[0].startswith('kinematics of 6 bodies') and 'simplified' not in told[0]
    rng = np.random.default_rng(560)
    q, qd = rng.uniform(-1.0, 1.0, 6), rng.uniform(-1.0, 1.0, 6)
    values = {**dict(zip(eq.chain.q, q)), **dict(zip(eq.chain.qd, qd))}
    memo = {}
    got = np.array([[value_of(eq.C[i, j], values, memo) for j in range(6)] for i in range(6)])
    close(got, model.coriolis_matrix(q, qd), 'puma560 C')
    c = eq.christoffel
    assert all(c[i][j][k] == c[j][i][k] for i in range(6) for j in range(6) for k in range(6))
