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
Forward kinematics, Jacobians and singularity measures (robot_dynamics.kinematics).

Worked examples of the textbooks: Becker and Klink's SCARA (whose printed J[3][3] = +1 is a
misprint: -1), the planar 2R, planar 3R and spatial RR arms, DH and modified DH examples.
Properties: Jacobians against central differences of fk, jacobian_dot against differences of
the Jacobian, standard DH against modified DH, batches against loops. Tolerances: 1e-9 for
closed forms, 1e-6 for differences.
"""

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from randomchain import random_models, random_q
from robot_dynamics import kinematics, RobotModel
from robot_dynamics.dh import dh_transform
from robot_dynamics.errors import InputError, ShapeError
from robot_dynamics.spatial import matrix_to_rpy
from scipy.spatial.transform import Rotation

CONFIG = Path(__file__).resolve().parents[2] / 'config'
BATCH_SHAPES = [(), (5,), (2, 3)]
BUNDLED = ('iiwa14', 'planar_2r', 'planar_3r', 'puma560', 'rp_arm', 'scara')
H = 1e-6          # central-difference step
FD_TOL = 1e-6     # anything that uses finite differences
SEED_TOL = 1e-9   # 10-digit seed numbers


@lru_cache(maxsize=None)
def load(name):
    return RobotModel.load(name)


@lru_cache(maxsize=None)
def random_chains():
    # 12 chains with prismatic, continuous and fixed joints (fixed ones more often than default)
    return random_models(12, seed=7, min_joints=1, max_joints=8, fixed_prob=0.35)


def model_cases():
    return [pytest.param(name, id=name) for name in BUNDLED] + \
        [pytest.param(i, id=f'random{i}') for i in range(len(random_chains()))]


def get_model(case):
    return load(case) if isinstance(case, str) else random_chains()[case][1]


def row(a=0.0, alpha=0.0, d=0.0, theta=0.0, kind='revolute', **extra):
    return dict(a=a, alpha=alpha, d=d, theta=theta, type=kind, **extra)


def T_of(R=np.eye(3), p=(0, 0, 0)):
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def Rz(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def Ry(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


# ---- numerical references ----------------------------------------------------------------------


def fd_jacobian(model, q, link):
    """Central differences of fk: position rows, and the rotation vector of R+ R-^T."""
    n = model.dof
    E = H * np.eye(n)
    Tp = model.fk(q + E, link)
    Tm = model.fk(q - E, link)
    lin = (Tp[:, :3, 3] - Tm[:, :3, 3]) / (2 * H)
    dR = Tp[:, :3, :3] @ np.swapaxes(Tm[:, :3, :3], -1, -2)
    ang = Rotation.from_matrix(dR).as_rotvec() / (2 * H)
    return np.concatenate((lin, ang), axis=1).T


def fd_analytic_jacobian(model, q, link):
    """Central differences of [p, rpy] (angles unwrapped)."""
    n = model.dof
    E = H * np.eye(n)
    Tp, Tm = model.fk(q + E, link), model.fk(q - E, link)
    # URDF rpy = scipy extrinsic 'xyz'
    rp = Rotation.from_matrix(Tp[:, :3, :3]).as_euler('xyz')
    rm = Rotation.from_matrix(Tm[:, :3, :3]).as_euler('xyz')
    d = (rp - rm + np.pi) % (2 * np.pi) - np.pi
    lin = (Tp[:, :3, 3] - Tm[:, :3, 3]) / (2 * H)
    return np.concatenate((lin, d / (2 * H)), axis=1).T


def body_pose(model, q, body):
    """Pose of body ``body`` in the base frame, from any link frame attached to it."""
    for link, (b, T_body_link) in model.frames.items():
        if b == body:
            return model.fk(q, link) @ np.linalg.inv(T_body_link)
    raise KeyError(body)


# ---- the SCARA of Becker and Klink -------------------------------------------------------------


def seed_scara(r1=0.5, r2=0.4, h1=0.3, h2=0.2):
    """Build Becker and Klink's SCARA from DH rows (alpha, a, d, theta): (0, r1, h1, q1) ... ."""
    return RobotModel.from_dh([row(a=r1, alpha=0.0, d=h1),
                               row(a=r2, alpha=np.pi, d=h2),
                               row(a=0.0, alpha=np.pi, d=0.0, kind='prismatic')])


def scara_fk(q, r1, r2, h1, h2):
    q1, q2, q3 = np.moveaxis(np.asarray(q, float), -1, 0)
    return np.stack((r1 * np.cos(q1) + r2 * np.cos(q1 + q2),
                     r1 * np.sin(q1) + r2 * np.sin(q1 + q2),
                     h1 + h2 - q3 + 0 * q1), axis=-1)


def scara_J(q, r1, r2):
    q1, q2 = q[0], q[1]
    s1, c1, s12, c12 = np.sin(q1), np.cos(q1), np.sin(q1 + q2), np.cos(q1 + q2)
    return np.array([[-r1 * s1 - r2 * s12, -r2 * s12, 0.0],
                     [r1 * c1 + r2 * c12, r2 * c12, 0.0],
                     [0.0, 0.0, -1.0]])


def scara_Jdot(q, qd, r1, r2):
    q1, q2 = q[0], q[1]
    w1, w12 = qd[0], qd[0] + qd[1]
    s1, c1, s12, c12 = np.sin(q1), np.cos(q1), np.sin(q1 + q2), np.cos(q1 + q2)
    return np.array([[-r1 * c1 * w1 - r2 * c12 * w12, -r2 * c12 * w12, 0.0],
                     [-r1 * s1 * w1 - r2 * s12 * w12, -r2 * s12 * w12, 0.0],
                     [0.0, 0.0, 0.0]])


def test_seed_b1_scara_derived_vector():
    model = seed_scara()
    q = np.array([0.3, -0.8, 0.1])
    qd = np.array([0.2, -0.1, 0.05])
    T = model.fk(q)
    assert np.allclose(T[:3, 3], [0.8287012693, -0.0440101121, 0.4], atol=SEED_TOL)
    assert np.allclose(T[:3, :3], Rz(-0.5), atol=1e-12)     # DH rotation = Rz(q1 + q2)
    J = model.jacobian(q)
    J_seed = [[0.0440101121, 0.1917702154, 0.0], [0.8287012693, 0.3510330248, 0.0],
              [0.0, 0.0, -1.0]]
    assert np.allclose(J[:3], J_seed, atol=SEED_TOL)
    assert J[2, 2] == pytest.approx(-1.0, abs=1e-15)          # printed +1: a misprint
    # the yaw rate is q1d + q2d; the quill does not turn
    assert np.allclose(J[3:], [[0, 0, 0], [0, 0, 0], [1, 1, 0]], atol=1e-15)
    assert kinematics.jacobian_determinant(model, q) == pytest.approx(0.1434712182,
                                                                      abs=SEED_TOL)
    assert np.allclose(J[:3] @ qd, [-0.0103749991, 0.1306369514, -0.05], atol=SEED_TOL)
    q2 = np.array([np.pi / 4, np.pi / 3, 0.1])
    assert np.allclose(model.fk(q2)[:3, 3], [0.2500257726, 0.7399237211, 0.4], atol=SEED_TOL)


def test_seed_b1_scara_closed_form_against_dh_chain(rng):
    r1, r2, h1, h2 = 0.5, 0.4, 0.3, 0.2
    model = seed_scara(r1, r2, h1, h2)
    q = rng.uniform([-np.pi, -np.pi, -0.5], [np.pi, np.pi, 0.5], (20, 3))
    qd = rng.normal(size=(20, 3))
    T = model.fk(q)
    assert np.allclose(T[:, :3, 3], scara_fk(q, r1, r2, h1, h2), atol=1e-12)
    for k in range(len(q)):
        assert np.allclose(T[k, :3, :3], Rz(q[k, 0] + q[k, 1]), atol=1e-12)
        J = model.jacobian(q[k])
        assert np.allclose(J[:3], scara_J(q[k], r1, r2), atol=1e-12)
        assert np.linalg.det(J[:3]) == pytest.approx(-r1 * r2 * np.sin(q[k, 1]), abs=1e-12)
        Jd = model.jacobian_dot(q[k], qd[k])
        assert np.allclose(Jd[:3], scara_Jdot(q[k], qd[k], r1, r2), atol=1e-12)
        assert np.allclose(Jd[3:], 0.0, atol=1e-15)
    det = kinematics.jacobian_determinant(model, q)
    assert np.allclose(det, -r1 * r2 * np.sin(q[:, 1]), atol=1e-12)


def test_seed_b1_scara_acceleration_map(rng):
    # xdd = J qdd + Jdot qd, against the second difference of fk along q(t)
    r1, r2, h1, h2 = 0.5, 0.4, 0.3, 0.2
    model = seed_scara(r1, r2, h1, h2)
    q, qd, qdd = np.array([0.3, -0.8, 0.1]), np.array([0.2, -0.1, 0.05]), rng.normal(size=3)
    h = 1e-4
    x = [scara_fk(q + qd * t + 0.5 * qdd * t * t, r1, r2, h1, h2) for t in (-h, 0.0, h)]
    xdd = (x[0] - 2 * x[1] + x[2]) / h ** 2
    J, Jd = model.jacobian(q), model.jacobian_dot(q, qd)
    assert np.allclose(J[:3] @ qdd + Jd[:3] @ qd, xdd, atol=1e-6)


def test_bundled_scara_matches_its_closed_form(rng):
    # config/scara.dh.yaml and urdf/scara.urdf: r1 = 0.325, r2 = 0.275, h1 = 0.40, h2 = 0.05
    dims = (0.325, 0.275, 0.40, 0.05)
    for model in (load('scara'), RobotModel.from_dh(str(CONFIG / 'scara.dh.yaml'))):
        assert model.joint_types == ('revolute', 'revolute', 'prismatic')
        q = random_q(rng, model, (10,))
        T = model.fk(q)
        assert np.allclose(T[:, :3, 3], scara_fk(q, *dims), atol=1e-12)
        for k in range(len(q)):
            assert np.allclose(T[k, :3, :3], Rz(q[k, 0] + q[k, 1]), atol=1e-12)
            assert np.allclose(model.jacobian(q[k])[:3], scara_J(q[k], *dims[:2]), atol=1e-12)
        assert np.allclose(kinematics.jacobian_determinant(model, q),
                           -dims[0] * dims[1] * np.sin(q[:, 1]), atol=1e-12)


def test_bundled_scara_urdf_equals_dh_yaml(rng):
    urdf = load('scara')
    dh = RobotModel.from_dh(str(CONFIG / 'scara.dh.yaml'))
    assert urdf.joint_names == dh.joint_names
    assert urdf.joint_types == dh.joint_types
    for field in ('lower', 'upper', 'velocity_limit', 'effort_limit', 'damping', 'friction',
                  'mass', 'gravity'):
        assert np.allclose(getattr(urdf, field), getattr(dh, field), atol=1e-12), field
    for link in ('base_link', 'upper_arm', 'forearm', 'quill', 'tool0'):
        assert link in urdf.link_names and link in dh.link_names
    q = random_q(rng, urdf, (8,))
    assert np.allclose(urdf.fk(q, 'tool0'), dh.fk(q, 'tool0'), atol=1e-12)
    assert np.allclose(urdf.jacobian(q, 'tool0'), dh.jacobian(q, 'tool0'), atol=1e-12)
    # same inertia in space: COM and inertia tensor of every body, in the base frame
    for k in range(len(q)):
        for i in range(1, urdf.dof + 1):
            Tu, Td = body_pose(urdf, q[k], i), body_pose(dh, q[k], i)
            cu = Tu[:3, :3] @ urdf.com[i - 1] + Tu[:3, 3]
            cd = Td[:3, :3] @ dh.com[i - 1] + Td[:3, 3]
            assert np.allclose(cu, cd, atol=1e-12)
            Iu = Tu[:3, :3] @ urdf.inertia[i - 1] @ Tu[:3, :3].T
            Id = Td[:3, :3] @ dh.inertia[i - 1] @ Td[:3, :3].T
            assert np.allclose(Iu, Id, atol=1e-12)


# ---- planar 3R (K7, B12, B14 Ex.4) --------------------------------------------------------------


def planar_3r_pose(q, l1, l2):
    q1, q2, q3 = q
    phi = q1 + q2 + q3
    x = l1 * np.cos(q1) + l2 * np.cos(q1 + q2)
    y = l1 * np.sin(q1) + l2 * np.sin(q1 + q2)
    return T_of(Rz(phi), (x, y, 0.0))


def test_seed_k7_planar_3r_fk(rng):
    model = load('planar_3r')                     # MDH, l1 = 2, l2 = 1.5, tool at O_3
    for q in random_q(rng, model, (10,)):
        assert np.allclose(model.fk(q), planar_3r_pose(q, 2.0, 1.5), atol=1e-12)
    # B12 derived vector 2: (x, y, phi) = (2.2433702309, 2.2241739627, 0.8)
    T = model.fk([0.4, 0.9, -0.5])
    assert np.allclose(T[:2, 3], [2.2433702309, 2.2241739627], atol=SEED_TOL)
    assert np.arctan2(T[1, 0], T[0, 0]) == pytest.approx(0.8, abs=1e-12)
    # ... and its second (elbow-down) solution reaches the same pose
    assert np.allclose(model.fk([1.1622027240, -0.9, 0.5377972760]), T, atol=SEED_TOL)


def test_seed_b12_planar_3r_with_equal_links():
    model = RobotModel.from_dh([row(), row(a=2.0), row(a=2.0)], convention='modified')
    T = model.fk([np.pi / 6, np.pi / 3, 0.0])
    assert np.allclose(T[:2, 3], [1.7320508076, 3.0], atol=SEED_TOL)
    assert np.arctan2(T[1, 0], T[0, 0]) == pytest.approx(np.pi / 2, abs=1e-12)
    assert np.allclose(model.fk([np.pi / 2, -np.pi / 3, np.pi / 3]), T, atol=SEED_TOL)


def test_seed_b14_planar_rrr_dh_equals_mdh():
    a1, a2 = 0.7, 0.5
    q = [0.2, 0.9, -0.4]
    dh = RobotModel.from_dh([row(a=a1), row(a=a2), row(a=0.0)])
    mdh = RobotModel.from_dh([row(a=0.0), row(a=a1), row(a=a2)], convention='modified')
    expected = [[0.7648421873, -0.6442176872, 0, 0.9128446652],
                [0.6442176872, 0.7648421873, 0, 0.5846722116], [0, 0, 1, 0], [0, 0, 0, 1]]
    assert np.allclose(dh.fk(q), expected, atol=SEED_TOL)
    assert np.allclose(mdh.fk(q), expected, atol=SEED_TOL)
    assert np.allclose(dh.fk(q), planar_3r_pose(q, a1, a2), atol=1e-12)


# ---- B14: DH/MDH link transforms and examples ---------------------------------------------------


def test_seed_b14_link_transform_closed_forms(rng):
    for a, alpha, d, theta in rng.normal(size=(10, 4)):
        ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
        A = [[ct, -st * ca, st * sa, a * ct], [st, ct * ca, -ct * sa, a * st], [0, sa, ca, d],
             [0, 0, 0, 1]]
        T = [[ct, -st, 0, a], [st * ca, ct * ca, -sa, -sa * d], [st * sa, ct * sa, ca, ca * d],
             [0, 0, 0, 1]]
        assert np.allclose(dh_transform(a, alpha, d, theta, 'standard'), A, atol=1e-14)
        assert np.allclose(dh_transform(a, alpha, d, theta, 'modified'), T, atol=1e-14)
    batch = rng.normal(size=(4, 2, 3))
    out = dh_transform(*batch, 'standard')
    assert out.shape == (2, 3, 4, 4)
    assert np.allclose(out[1, 2], dh_transform(*batch[:, 1, 2], 'standard'), atol=0)


def test_seed_b14_rpr_dh_and_mdh():
    # "planar" RPR: the slide is along y1; DH and MDH give the same 0T3
    dh = RobotModel.from_dh([row(alpha=-np.pi / 2), row(alpha=np.pi / 2, kind='prismatic'),
                             row()])
    mdh = RobotModel.from_dh([row(), row(alpha=-np.pi / 2, kind='prismatic'),
                              row(alpha=np.pi / 2)], convention='modified')
    q = [0.5, 0.8, -0.3]
    expected = [[0.9800665778, -0.1986693308, 0, -0.3835404309],
                [0.1986693308, 0.9800665778, 0, 0.7020660495], [0, 0, 1, 0], [0, 0, 0, 1]]
    assert np.allclose(dh.fk(q), expected, atol=SEED_TOL)
    assert np.allclose(mdh.fk(q), expected, atol=SEED_TOL)


def test_seed_b14_rrp_mdh():
    l1, l2 = 0.6, 0.4
    model = RobotModel.from_dh([row(), row(a=l1, alpha=-np.pi / 2), row(a=l2, kind='prismatic')],
                               convention='modified')
    q = np.array([0.3, 0.7, 0.2])
    expected = [[0.7306816499, -0.6154446636, -0.2955202067, 0.8063705121],
                [0.2260263212, -0.1903793441, 0.9553364891, 0.4587899503],
                [-0.6442176872, -0.7648421873, 0, -0.2576870749], [0, 0, 0, 1]]
    assert np.allclose(model.fk(q), expected, atol=SEED_TOL)
    c1, s1, c2, s2, d3 = np.cos(q[0]), np.sin(q[0]), np.cos(q[1]), np.sin(q[1]), q[2]
    p = [c1 * (l1 + l2 * c2) - s1 * d3, s1 * (l1 + l2 * c2) + c1 * d3, -l2 * s2]
    assert np.allclose(model.fk(q)[:3, 3], p, atol=1e-12)


def test_dh_offsets_revolute_theta_and_prismatic_d(rng):
    # a revolute row's theta and a prismatic row's d are constant offsets added to q
    rows = [row(a=0.3, alpha=0.4, d=0.2, theta=0.7),
            row(a=0.1, alpha=-0.9, d=0.5, theta=-0.2, kind='prismatic')]
    for convention in ('standard', 'modified'):
        model = RobotModel.from_dh(rows, convention=convention)
        zero = RobotModel.from_dh([dict(r, theta=0.0) if r['type'] == 'revolute'
                                   else dict(r, d=0.0) for r in rows], convention=convention)
        q = rng.normal(size=2)
        assert np.allclose(model.fk(q), zero.fk(q + [0.7, 0.5]), atol=1e-12)
        T = np.eye(4)
        for r, qi in zip(rows, q):
            theta = r['theta'] + (qi if r['type'] == 'revolute' else 0.0)
            d = r['d'] + (qi if r['type'] == 'prismatic' else 0.0)
            T = T @ dh_transform(r['a'], r['alpha'], d, theta, convention)
        assert np.allclose(model.fk(q), T, atol=1e-12)


# ---- standard DH vs modified DH of the same robot -----------------------------------------------


def test_puma560_standard_dh_equals_hand_written_mdh(rng):
    # Craig-style rows of the same PUMA 560 (alpha_{i-1}, a_{i-1}, d_i, theta_i); with standard
    # DH A_i = Rz Tz Tx Rx the product regroups as Rz(t1) Tz(d1) [Rx(al1) Tx(a1) Rz(t2) Tz(d2)]
    # ... [Tx(a6) Rx(al6)], so the MDH table shifts alpha and a down one row (a6 = al6 = 0).
    h = np.pi / 2
    mdh = RobotModel.from_dh([
        row(alpha=0.0, a=0.0, d=0.67183),
        row(alpha=h, a=0.0, d=0.0),
        row(alpha=0.0, a=0.4318, d=0.15005),
        row(alpha=-h, a=0.0203, d=0.4318),
        row(alpha=h, a=0.0, d=0.0),
        row(alpha=-h, a=0.0, d=0.0)], convention='modified')
    puma = load('puma560')
    q = random_q(rng, puma, (20,))
    assert np.allclose(mdh.fk(q), puma.fk(q), atol=1e-12)
    assert np.allclose(mdh.jacobian(q), puma.jacobian(q), atol=1e-12)
    # the wrist centre and frame 3 origin: standard frame i is the MDH frame i+1 moved along x
    assert np.allclose(mdh.fk(q, 'link4')[:, :3, 3], puma.fk(q, 'link3')[:, :3, 3] +
                       puma.fk(q, 'link3')[:, :3, 2] * 0.4318, atol=1e-12)
    # at q = 0 (Corke's PUMA 560): x = a2 + a3, y = -d3, z = d1 + d4
    assert np.allclose(puma.fk(np.zeros(6))[:3, 3], [0.4521, -0.15005, 1.10363], atol=1e-12)


def standard_to_modified(rows):
    """Rewrite standard DH rows as MDH rows plus a tool transform Tx(a_n) Rx(alpha_n)."""
    out, prev_a, prev_alpha = [], 0.0, 0.0
    for r in rows:
        out.append(dict(r, a=prev_a, alpha=prev_alpha))
        prev_a, prev_alpha = r['a'], r['alpha']
    tool = dh_transform(prev_a, prev_alpha, 0.0, 0.0, 'standard')
    return out, tool


def test_random_standard_dh_equals_modified_dh(rng):
    for _ in range(10):
        n = int(rng.integers(1, 8))
        rows = [row(a=rng.uniform(-1, 1), alpha=rng.uniform(-np.pi, np.pi),
                    d=rng.uniform(-1, 1), theta=rng.uniform(-np.pi, np.pi),
                    kind='prismatic' if rng.uniform() < 0.3 else 'revolute')
                for _ in range(n)]
        base = T_of(Rotation.random(random_state=rng).as_matrix(), rng.normal(size=3))
        std = RobotModel.from_dh({'joints': rows, 'base': base.tolist()})
        mrows, tool = standard_to_modified(rows)
        mod = RobotModel.from_dh({'joints': mrows, 'convention': 'modified', 'base': base.tolist(),
                                  'tool': tool.tolist()})
        q = rng.normal(size=(6, n))
        assert np.allclose(std.fk(q), mod.fk(q), atol=1e-12)
        assert np.allclose(std.jacobian(q), mod.jacobian(q), atol=1e-12)
        # standard frame i (distal) = modified frame i+1 before its joint: same for the last
        for i in range(1, n):
            Tm = mod.fk(q, f'link{i + 1}')
            Ts = std.fk(q, f'link{i}')
            # MDH frame i+1 = standard frame i @ Rz(theta_{i+1}) Tz(d_{i+1}) (joint i+1 motion)
            r = rows[i]
            theta = r['theta'] + (q[:, i] if r['type'] == 'revolute' else 0.0)
            d = r['d'] + (q[:, i] if r['type'] == 'prismatic' else 0.0)
            assert np.allclose(Ts @ dh_transform(0.0, 0.0, d, theta), Tm, atol=1e-12)


# ---- B11: planar 2R (the bundled planar_2r moves in the x-z plane) ------------------------------

XZ = [0, 2]   # the textbook's (x, y) rows are (vx, vz) here


def test_seed_b11_planar_2r_jacobian_and_determinant():
    model = load('planar_2r')
    q = np.array([np.pi / 6, np.pi / 3])
    J = model.jacobian(q)
    assert np.allclose(J[XZ], [[-3.0, -2.0], [1.7320508076, 0.0]], atol=SEED_TOL)
    assert np.allclose(J[[1, 3, 5]], 0.0, atol=1e-15)
    assert np.allclose(J[4], [-1.0, -1.0], atol=1e-15)      # rotation about -y
    mask = [1, 0, 1, 0, 0, 0]
    assert kinematics.jacobian_determinant(model, q, mask=mask) == pytest.approx(3.4641016151,
                                                                                 abs=SEED_TOL)
    qs = np.stack((np.zeros(7), np.linspace(-3, 3, 7)), axis=-1)
    assert np.allclose(kinematics.jacobian_determinant(model, qs, mask=mask),
                       4.0 * np.sin(qs[:, 1]), atol=1e-12)      # l1 l2 s2
    # E J = E R 0 J, in the tip frame (x along the arm, the textbook's y is the tip's z here)
    R = model.fk(q)[:3, :3]
    JE = (R.T @ J[:3])[XZ]
    assert np.allclose(JE, [[1.7320508076, 0.0], [3.0, 2.0]], atol=SEED_TOL)
    assert np.linalg.det(JE) == pytest.approx(np.linalg.det(J[XZ]), abs=1e-12)


def test_seed_b11_planar_2r_velocities_and_joint_rates():
    model = load('planar_2r')
    q = np.array([np.pi / 6, np.pi / 3])
    J = model.jacobian(q)
    v0 = J @ [1.0, 2.0]
    assert np.allclose(v0[XZ], [-7.0, 1.7320508076], atol=SEED_TOL)
    R = model.fk(q)[:3, :3]
    assert np.allclose((R.T @ v0[:3])[XZ], [1.7320508076, 7.0], atol=SEED_TOL)
    assert np.allclose(np.linalg.solve(J[XZ], [1.0, 0.0]), [0.0, -0.5], atol=SEED_TOL)
    # closed forms: theta1d = c12 / (l1 s2), theta2d = -(l1 c1 + l2 c12) / (l1 l2 s2)
    c1, c12, s2 = np.cos(q[0]), np.cos(q.sum()), np.sin(q[1])
    assert np.allclose(np.linalg.solve(J[XZ], [1.0, 0.0]),
                       [c12 / (2 * s2), -(2 * c1 + 2 * c12) / (4 * s2)], atol=1e-12)


def test_seed_b11_planar_2r_statics():
    model = load('planar_2r')
    q = np.array([np.pi / 6, np.pi / 3])
    R = model.fk(q)[:3, :3]
    f_tip = np.array([3.0, 0.0, -1.0])                   # the book's 3f = (3, -1), tip frame
    F = np.concatenate((R @ f_tip, np.zeros(3)))         # wrench on the environment, base frame
    tau = model.jacobian(q).T @ F
    assert np.allclose(tau, [2.1961524227, -2.0], atol=SEED_TOL)
    s2, c2 = np.sin(q[1]), np.cos(q[1])
    assert np.allclose(tau, [2 * s2 * 3 + (2 * c2 + 2) * -1, 2 * -1], atol=1e-12)


# ---- B13: spatial RR and the pseudo-inverse -----------------------------------------------------


def test_seed_b13_spatial_rr_jacobian_and_pseudo_inverse():
    l1 = l2 = 2.0
    model = RobotModel.from_dh({'convention': 'modified', 'tool': {'xyz': [l2, 0, 0]},
                                'joints': [row(), row(alpha=-np.pi / 2, a=l1)]})
    q = np.array([np.pi / 6, np.pi / 3])
    assert np.allclose(model.fk(q)[:3, 3], [2.5980762114, 1.5, -1.7320508076], atol=SEED_TOL)
    J = model.jacobian(q)[:3]
    assert np.allclose(J, [[-1.5, -1.5], [2.5980762114, -0.8660254038], [0.0, -1.0]],
                       atol=SEED_TOL)
    assert np.allclose(J.T @ J, np.diag([(l1 + l2 * np.cos(q[1])) ** 2, l2 ** 2]), atol=1e-12)
    Jp = np.linalg.pinv(J)
    assert np.allclose(Jp, [[-0.1666666667, 0.2886751346, 0.0],
                            [-0.375, -0.2165063509, -0.25]], atol=SEED_TOL)
    s1, c1, s2, c2 = np.sin(q[0]), np.cos(q[0]), np.sin(q[1]), np.cos(q[1])
    closed = [[-s1 / (l1 + l2 * c2), c1 / (l1 + l2 * c2), 0.0],
              [-c1 * s2 / l2, -s1 * s2 / l2, -c2 / l2]]
    assert np.allclose(Jp, closed, atol=1e-12)
    assert np.allclose(np.linalg.solve(J.T @ J, J.T), closed, atol=1e-12)


# ---- Jacobians against finite differences ------------------------------------------------------


@pytest.mark.parametrize('case', model_cases())
def test_jacobian_equals_finite_differences_of_fk(case, rng):
    model = get_model(case)
    for q in random_q(rng, model, (2,)):
        for link in model.link_names:
            J = model.jacobian(q, link)
            assert J.shape == (6, model.dof)
            assert np.allclose(J, fd_jacobian(model, q, link), atol=FD_TOL), link


@pytest.mark.parametrize('case', model_cases())
def test_jacobian_dot_equals_finite_differences_of_jacobian(case, rng):
    model = get_model(case)
    for q in random_q(rng, model, (2,)):
        qd = rng.normal(size=model.dof)
        for link in model.link_names:
            Jd = model.jacobian_dot(q, qd, link)
            fd = (model.jacobian(q + H * qd, link) - model.jacobian(q - H * qd, link)) / (2 * H)
            assert np.allclose(Jd, fd, atol=FD_TOL), link


@pytest.mark.parametrize('case', model_cases())
def test_analytic_jacobian_equals_finite_differences_of_rpy(case, rng):
    model = get_model(case)
    checked = 0
    for q in random_q(rng, model, (6,)):
        for link in model.link_names:
            T = model.fk(q, link)
            if np.hypot(T[0, 0], T[1, 0]) < 0.1:       # near gimbal lock: rates blow up
                continue
            Ja = model.analytic_jacobian(q, link)
            assert np.allclose(Ja, fd_analytic_jacobian(model, q, link), atol=FD_TOL), link
            # blkdiag(I, E^-1) J
            E = kinematics.rpy_rate_matrix(matrix_to_rpy(T[:3, :3]))
            assert np.allclose(E @ Ja[3:], model.jacobian(q, link)[3:], atol=1e-12)
            checked += 1
    assert checked > 0


def test_rpy_rate_matrix_maps_rpy_rates_to_angular_velocity(rng):
    for _ in range(10):
        rpy = rng.uniform(-1.4, 1.4, 3)
        rates = rng.normal(size=3)
        Rp = Rotation.from_euler('xyz', rpy + H * rates).as_matrix()
        Rm = Rotation.from_euler('xyz', rpy - H * rates).as_matrix()
        omega = Rotation.from_matrix(Rp @ Rm.T).as_rotvec() / (2 * H)
        assert np.allclose(kinematics.rpy_rate_matrix(rpy) @ rates, omega, atol=FD_TOL)
    batch = rng.normal(size=(2, 3, 3))
    E = kinematics.rpy_rate_matrix(batch)
    assert E.shape == (2, 3, 3, 3)
    assert np.allclose(E[1, 2], kinematics.rpy_rate_matrix(batch[1, 2]), atol=0)


def test_analytic_jacobian_raises_at_gimbal_lock():
    model = load('planar_2r')       # tip rotation Ry(-(q1 + q2)): pitch = -(q1 + q2)
    q = np.array([-0.5, -np.pi / 2 + 0.5])
    with pytest.raises(InputError, match='gimbal'):
        model.analytic_jacobian(q)
    assert np.all(np.isfinite(model.jacobian(q)))


def test_jacobian_columns_after_the_link_are_zero(rng):
    model = load('puma560')
    q = random_q(rng, model)
    assert np.allclose(model.jacobian(q, 'base_link'), 0.0, atol=0)
    for i, link in enumerate(['link1', 'link2', 'link3'], start=1):
        J = model.jacobian(q, link)
        assert np.all(J[:, i:] == 0.0)
        assert np.abs(J[:, :i]).max() > 0
    assert np.allclose(model.jacobian_dot(q, np.ones(6), 'base_link'), 0.0, atol=0)


# ---- singularity measures -----------------------------------------------------------------------


def test_scara_singularities(rng):
    r1, r2 = 0.5, 0.4
    model = seed_scara(r1, r2)
    q = np.stack((rng.uniform(-3, 3, 9), np.linspace(-3, 3, 9), rng.uniform(-0.2, 0.2, 9)),
                 axis=-1)
    det = -r1 * r2 * np.sin(q[:, 1])
    assert np.allclose(kinematics.jacobian_determinant(model, q), det, atol=1e-12)
    assert np.allclose(model.manipulability(q), np.abs(det), atol=1e-12)
    J = model.jacobian(q)[:, :3]
    assert np.allclose(model.condition_number(q), np.linalg.cond(J), rtol=1e-9)
    for q2 in (0.0, np.pi, -np.pi):
        qs = [0.4, q2, 0.1]
        assert model.is_singular(qs)
        assert kinematics.jacobian_determinant(model, qs) == pytest.approx(0.0, abs=1e-12)
        assert model.manipulability(qs) == pytest.approx(0.0, abs=1e-12)
        assert model.condition_number(qs) > 1e12
    for q2 in (0.3, -1.0, 2.0):
        assert not model.is_singular([0.4, q2, 0.1])
        assert np.isfinite(model.condition_number([0.4, q2, 0.1]))
    # close to the singularity, below the tolerance
    assert model.is_singular([0.0, 1e-9, 0.0])
    assert not model.is_singular([0.0, 1e-9, 0.0], tol=1e-12)


def test_manipulability_is_yoshikawa(rng):
    for name in ('puma560', 'iiwa14'):
        model = load(name)
        q = random_q(rng, model, (5,))
        J = model.jacobian(q)
        yoshikawa = np.sqrt(np.linalg.det(J @ np.swapaxes(J, -1, -2)))
        assert np.allclose(model.manipulability(q), yoshikawa, rtol=1e-9)
        assert np.allclose(model.condition_number(q), np.linalg.cond(J), rtol=1e-9)
        assert not np.any(model.is_singular(q))
    puma = load('puma560')
    q = random_q(rng, puma, (3,))
    assert np.allclose(np.abs(kinematics.jacobian_determinant(puma, q)),
                       puma.manipulability(q), rtol=1e-9)


def test_arm_singular_configurations():
    puma = load('puma560')
    assert puma.is_singular([0.1, 0.5, -0.3, 0.4, 0.0, 0.2])        # wrist: q5 = 0
    assert not puma.is_singular([0.1, 0.5, -0.3, 0.4, 0.6, 0.2])
    assert kinematics.jacobian_determinant(puma, [0.1, 0.5, -0.3, 0.4, 0.0, 0.2]) == \
        pytest.approx(0.0, abs=1e-12)
    iiwa = load('iiwa14')
    assert iiwa.is_singular(np.zeros(7))                               # stretched upright
    assert iiwa.manipulability(np.zeros(7)) == pytest.approx(0.0, abs=1e-12)


def test_planar_3r_determinant_over_x_y_yaw(rng):
    model = load('planar_3r')
    q = random_q(rng, model, (6,))
    det = kinematics.jacobian_determinant(model, q, mask=[1, 1, 0, 0, 0, 1])
    assert np.allclose(det, 2.0 * 1.5 * np.sin(q[:, 1]), atol=1e-12)       # l1 l2 s2


@pytest.mark.parametrize('case', model_cases())
def test_motion_subspaces_are_body_twists_per_unit_joint_rate(case, rng):
    """
    ``motion_subspace`` (the one formula of the FK, Jacobian and dynamics kernels) by differences.

    Body j moves with ``dT_j/dq_j T_j^-1 = [[S(w), v], [0, 0]]``: the twist ``[v; w]`` of body j,
    at the base origin, per unit rate of joint j.
    """
    model = get_model(case)
    n = model.dof
    q = random_q(rng, model)

    def poses(q):
        T = np.empty((n, 4, 4))
        kinematics.chain(model.derived.local_basis, q, T)
        return T

    T = poses(q)
    S = np.empty(6)
    for j in range(n):
        kinematics.motion_subspace(T[j], model.joint_axis[j], model.is_prismatic[j], S)
        e = np.eye(n)[j]
        dT = (poses(q + H * e)[j] - poses(q - H * e)[j]) / (2 * H)
        twist = dT @ np.linalg.inv(T[j])
        expected = np.concatenate((twist[:3, 3], [twist[2, 1], twist[0, 2], twist[1, 0]]))
        np.testing.assert_allclose(S, expected, rtol=0, atol=FD_TOL)


def test_fused_pose_and_jacobian_fast_path(rng):
    for name in BUNDLED:
        model = load(name)
        q = random_q(rng, model, (3,))
        for link in model.link_names:
            T, J = kinematics._pose_and_jacobian(model, q, link)
            assert np.allclose(T, model.fk(q, link), atol=1e-14)
            assert np.allclose(J, model.jacobian(q, link), atol=1e-14)


def test_planar_2r_task_rows(rng):
    model = load('planar_2r')
    q = [0.3, 0.9]
    # its task rows are its plane's, x and z: square
    assert abs(kinematics.jacobian_determinant(model, q)) == pytest.approx(
        4.0 * abs(np.sin(0.9)), abs=1e-12)
    with pytest.raises(ShapeError, match='mask'):
        model.manipulability(q, mask=[1, 1, 1])
    assert model.manipulability(q, mask=[1, 0, 1, 0, 0, 0]) == pytest.approx(
        4.0 * abs(np.sin(0.9)), abs=1e-12)
    assert model.is_singular([0.3, 0.0])
    assert model.is_singular([0.3, np.pi])
    assert not model.is_singular(q)


# ---- every link, batches, inputs ----------------------------------------------------------------


@pytest.mark.parametrize('name', BUNDLED)
def test_fk_for_every_link_name(name, rng):
    model = load(name)
    q = random_q(rng, model, (3,))
    assert np.allclose(model.fk(q, model.base_link), np.eye(4), atol=0)
    assert np.array_equal(model.fk(q), model.fk(q, model.tip_link))
    bodies = [model.frames[link][0] for link in model.link_names]
    assert bodies == sorted(bodies)                        # ordered from the base to the tip
    for link in model.link_names:
        body, T_body_link = model.frames[link]
        T = model.fk(q, link)
        assert T.shape == (3, 4, 4)
        assert np.allclose(T[:, 3], [0, 0, 0, 1], atol=0)
        Rt = T[:, :3, :3]
        assert np.allclose(Rt @ np.swapaxes(Rt, -1, -2), np.eye(3), atol=1e-12)
        # frames on one body move together
        assert np.allclose(T, body_pose(model, q, body) @ T_body_link, atol=1e-12)


def test_fk_unknown_link_names_the_known_links():
    model = load('scara')
    with pytest.raises(InputError) as info:
        model.fk([0, 0, 0], 'gripper')
    assert 'gripper' in str(info.value) and 'tool0' in str(info.value)
    with pytest.raises(ValueError):
        model.jacobian([0, 0, 0], 'gripper')


@pytest.mark.parametrize('q, error, words', [
    ([0.1, 0.2], ShapeError, '(..., 3)'),
    ([0.1, 0.2, 0.3, 0.4], ShapeError, 'got (4,)'),
    ([[0.1, 0.2]], ShapeError, 'got (1, 2)'),
    (0.5, ShapeError, 'got ()'),
    ([0.1, np.nan, 0.3], InputError, 'non-finite'),
    ([0.1, np.inf, 0.3], InputError, 'non-finite'),
    ([[0.1, 0.2, 0.3], [0.1, 0.2, -np.inf]], InputError, 'non-finite'),
    (['a', 'b', 'c'], InputError, 'q'),
])
def test_bad_q_raises_value_error_naming_the_problem(q, error, words):
    model = load('scara')
    for fn in (model.fk, model.jacobian, model.manipulability, model.analytic_jacobian):
        with pytest.raises(error) as info:
            fn(q)
        assert isinstance(info.value, ValueError)
        assert words in str(info.value)
        assert 'q' in str(info.value)


def test_bad_qd_raises():
    model = load('scara')
    with pytest.raises(ShapeError, match='qd'):
        model.jacobian_dot([0.1, 0.2, 0.3], [1.0, 2.0])
    with pytest.raises(ShapeError, match='qd'):
        model.jacobian_dot([0.1, 0.2, 0.3], np.zeros((2, 3)))
    with pytest.raises(InputError, match='qd'):
        model.jacobian_dot([0.1, 0.2, 0.3], [1.0, np.nan, 0.0])


FUNCTIONS = {
    'fk': (lambda m, q, qd: m.fk(q), lambda n: (4, 4)),
    'fk_link': (lambda m, q, qd: m.fk(q, m.link_names[1]), lambda n: (4, 4)),
    'jacobian': (lambda m, q, qd: m.jacobian(q), lambda n: (6, n)),
    'jacobian_dot': (lambda m, q, qd: m.jacobian_dot(q, qd), lambda n: (6, n)),
    'analytic_jacobian': (lambda m, q, qd: m.analytic_jacobian(q), lambda n: (6, n)),
    'manipulability': (lambda m, q, qd: m.manipulability(q), lambda n: ()),
    'condition_number': (lambda m, q, qd: m.condition_number(q), lambda n: ()),
    'is_singular': (lambda m, q, qd: m.is_singular(q), lambda n: ()),
    'determinant': (lambda m, q, qd: kinematics.jacobian_determinant(m, q), lambda n: ()),
}


@pytest.mark.parametrize('shape', BATCH_SHAPES, ids=str)
@pytest.mark.parametrize('fname', sorted(FUNCTIONS))
@pytest.mark.parametrize('name', ['scara', 'puma560'])
def test_batch_equals_loop(name, fname, shape, rng):
    model = load(name)
    fn, out_shape = FUNCTIONS[fname]
    q = random_q(rng, model, shape)
    qd = rng.normal(size=q.shape)
    q_before, qd_before = q.copy(), qd.copy()
    out = np.asarray(fn(model, q, qd))
    assert out.shape == tuple(shape) + out_shape(model.dof)
    assert np.array_equal(q, q_before) and np.array_equal(qd, qd_before)   # inputs untouched
    flat_q, flat_qd = q.reshape(-1, model.dof), qd.reshape(-1, model.dof)
    loop = np.array([fn(model, a, b) for a, b in zip(flat_q, flat_qd)])
    assert np.allclose(out.reshape(loop.shape), loop, atol=1e-12, rtol=1e-12)
    # the batch of one keeps its batch axis
    one = np.asarray(fn(model, flat_q[:1], flat_qd[:1]))
    assert one.shape == (1,) + out_shape(model.dof)


def test_lists_are_accepted_and_results_are_fresh_arrays():
    model = load('scara')
    T = model.fk([0.1, 0.2, 0.05])
    assert isinstance(T, np.ndarray) and T.dtype == np.float64
    base = model.fk([0.1, 0.2, 0.05], 'base_link')
    base[0, 0] = 42.0                                           # must not leak into the model
    assert model.fk([0.1, 0.2, 0.05], 'base_link')[0, 0] == 1.0
    assert model.jacobian(np.array([0, 0, 0])).dtype == np.float64   # integer input


def test_random_chains_cover_every_joint_kind():
    xml = '\n'.join(x for x, _ in random_chains())
    for kind in ('revolute', 'continuous', 'prismatic', 'fixed'):
        assert f'type="{kind}"' in xml, kind
    types = {t for _, m in random_chains() for t in m.joint_types}
    assert types == {'revolute', 'continuous', 'prismatic'}
