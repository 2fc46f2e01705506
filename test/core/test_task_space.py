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
The operational-space law against Pinocchio's M, J, dJ and nle, and in closed loop (RK4).

Truth: the task inertia and the projector from Pinocchio's quantities and their identities
(``J M^-1 N^T = 0``); the torque rebuilt from them with scipy's matrix square roots; the static
deflection ``K^-1 F`` under a constant push; a null-space motion that leaves the tip in place;
straight lines on iiwa14, the SCARA and the planar 2R; a path into a singularity.
"""

import numpy as np
import pinocchio as pin
import pytest
from randomchain import PinDynamics
from robot_dynamics import RobotModel
from robot_dynamics.dynamics import friction_torques
from robot_dynamics.errors import InputError
from robot_dynamics.plant import Plant
from robot_dynamics.task_space import (null_space_projector,
                                       OperationalSpace, task_inertia)
from robot_dynamics.trajectory import CartesianLine
from scipy.linalg import sqrtm
from scipy.spatial.transform import Rotation

DT = 1e-3
STIFFNESS = [1000.0, 1000.0, 1000.0, 100.0, 100.0, 100.0]
# bent, away from singularities and limits
Q_START = {'iiwa14': [0.2, 0.6, -0.3, -1.4, 0.4, 0.9, 0.1], 'scara': [0.5, 1.2, 0.1],
           'planar_2r': [0.4, 1.1], 'puma560': [0.3, -0.6, 0.4, 0.2, 0.7, 0.3]}


def pin_quantities(model, q, qd):
    """Pinocchio's M, J, dJ (LOCAL_WORLD_ALIGNED, at the tip) and nle = C qd + g."""
    ref = PinDynamics(model, model.to_urdf())
    pm, data, cq, v = ref.model, ref.data, ref.chain.q(q), ref.v(qd)
    fid = ref.chain.frame_id(model.tip_link)
    pin.computeJointJacobiansTimeVariation(pm, data, cq, v)
    pin.updateFramePlacements(pm, data)
    J = pin.getFrameJacobian(pm, data, fid, pin.LOCAL_WORLD_ALIGNED)[:, ref.iv]
    Jd = pin.getFrameJacobianTimeVariation(pm, data, fid, pin.LOCAL_WORLD_ALIGNED)[:, ref.iv]
    return ref.crba(q), J, Jd, pin.nonLinearEffects(pm, data, cq, v)[ref.iv]


@pytest.mark.parametrize('name', ['iiwa14', 'scara', 'planar_2r', 'puma560'])
def test_task_inertia_and_projector_from_pinocchio(name):
    model = RobotModel.load(name)
    q = np.array(Q_START[name])
    M, J, _, _ = pin_quantities(model, q, np.zeros(model.dof))
    rows = np.flatnonzero(model.task_mask)
    Jm = J[rows]
    Lam = task_inertia(model, q)
    assert np.allclose(Lam @ (Jm @ np.linalg.solve(M, Jm.T)), np.eye(rows.size), atol=1e-9)
    NT = null_space_projector(model, q)
    # a projected torque accelerates the tip not at all, and projecting twice changes nothing
    assert np.abs(Jm @ np.linalg.solve(M, NT)).max() < 1e-9
    assert np.allclose(NT @ NT, NT, atol=1e-9)
    assert np.linalg.matrix_rank(NT, tol=1e-8) == model.dof - rows.size


def test_controlled_axes_of_the_bundled_arms():
    axes = {name: RobotModel.load(name).task_mask.tolist()
            for name in ('iiwa14', 'scara', 'planar_2r', 'puma560')}
    assert axes == {'iiwa14': [1] * 6, 'puma560': [1] * 6, 'scara': [1, 1, 1, 0, 0, 0],
                    'planar_2r': [1, 0, 1, 0, 0, 0]}      # its plane is x-z


@pytest.mark.parametrize('name', ['iiwa14', 'scara', 'planar_2r'])
def test_torque_matches_the_law_built_from_pinocchio(name, rng):
    model = RobotModel.load(name)
    n = model.dof
    q = np.array(Q_START[name])
    qd = rng.normal(scale=0.3, size=n)
    posture = np.clip(q + rng.normal(scale=0.2, size=n), model.lower, model.upper)
    law = OperationalSpace(model, STIFFNESS, 0.8, null_stiffness=5.0, null_damping_ratio=0.7,
                           posture=posture, saturate=False)
    T = model.fk(q)
    offset = np.eye(4)
    offset[:3, :3] = Rotation.from_rotvec([0.05, -0.03, 0.02]).as_matrix()
    offset[:3, 3] = [0.02, -0.01, 0.015]
    pose_d = offset @ T
    twist_d, acc_d = rng.normal(size=(2, 6)) * 0.1
    command = law.compute(0.0, q, qd, (pose_d, twist_d, acc_d))
    # independently: Khatib's law from Pinocchio's quantities
    M, J, Jd, h = pin_quantities(model, q, qd)
    rows = np.flatnonzero(model.task_mask)
    Jm = J[rows]
    Lam = np.linalg.inv(Jm @ np.linalg.solve(M, Jm.T))
    e = np.concatenate((pose_d[:3, 3] - T[:3, 3],
                        Rotation.from_matrix(pose_d[:3, :3] @ T[:3, :3].T).as_rotvec()))[rows]
    e_dot = (twist_d - J @ qd)[rows]
    K = np.diag(np.array(STIFFNESS)[rows])
    half = np.real(sqrtm(Lam))
    inv_half = np.linalg.inv(half)
    D = 2 * 0.8 * half @ np.real(sqrtm(inv_half @ K @ inv_half)) @ half
    F = Lam @ (acc_d[rows] - Jd[rows] @ qd) + K @ e + D @ e_dot
    d_n = 2 * 0.7 * np.sqrt(5.0 * np.diag(M))
    tau0 = 5.0 * (posture - q) - d_n * qd
    NT = np.eye(n) - Jm.T @ Lam @ Jm @ np.linalg.inv(M)
    expected = h + Jm.T @ F + NT @ tau0
    assert np.abs(command.tau - expected).max() < 1e-8 * (1 + np.abs(expected).max())
    assert not command.near_singularity
    assert command.condition_number == pytest.approx(np.linalg.cond(Jm), rel=1e-8)
    # the compiled one-state path gives the same numbers
    one = law.for_one_state()(0.0, q, qd, (pose_d, twist_d, acc_d))
    assert np.array_equal(one.tau, command.tau)
    # a batch gives each state's torque
    batch = law.compute(0.0, np.stack([q, q]), np.stack([qd, -qd]), (pose_d, twist_d, acc_d))
    assert np.array_equal(batch.tau[0], command.tau)


def rk4(model, q, qd, tau, f_ext=None):
    """One RK4 step of the model's dynamics under ``tau`` and the arm's tip wrench ``f_ext``."""
    def f(x, v):
        return v, model.forward_dynamics(x, v, tau, f_ext=f_ext)
    k1 = f(q, qd)
    k2 = f(q + 0.5 * DT * k1[0], qd + 0.5 * DT * k1[1])
    k3 = f(q + 0.5 * DT * k2[0], qd + 0.5 * DT * k2[1])
    k4 = f(q + DT * k3[0], qd + DT * k3[1])
    return (q + DT / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]),
            qd + DT / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]))


def run(model, law, q, reference, seconds, f_ext=None):
    """Hold ``reference`` (pose, twist, acc) for ``seconds``; return the states and commands."""
    compute = law.for_one_state()
    qd = np.zeros(model.dof)
    qs, commands = [], []
    for k in range(int(round(seconds / DT))):
        ref = reference(k * DT) if callable(reference) else reference
        command = compute(k * DT, q, qd, ref)
        q, qd = rk4(model, q, qd, command.tau, f_ext)
        qs.append(q)
        commands.append(command)
    return np.array(qs), commands


@pytest.mark.parametrize('name', ['iiwa14', 'scara'])
def test_static_deflection_under_a_push_is_k_inverse_f(name):
    model = RobotModel.load(name)
    q0 = np.array(Q_START[name])
    law = OperationalSpace(model, STIFFNESS, null_stiffness=10.0, posture=q0)
    T0 = model.fk(q0)
    push = np.array([10.0, -6.0, 8.0])           # the environment's force on the tip [N]
    f_ext = np.concatenate((-push, np.zeros(3)))  # the tip's on the environment
    zero = np.zeros(6)
    qs, _ = run(model, law, q0, (T0, zero, zero), 3.0, f_ext)
    deflection = model.fk(qs[-1])[:3, 3] - T0[:3, 3]
    expected = push / np.array(STIFFNESS[:3])
    assert np.abs(deflection - expected).max() < 0.03 * np.abs(expected).max()
    # at rest by then
    assert np.abs(qs[-1] - qs[-2]).max() / DT < 1e-3


def test_posture_change_moves_the_elbow_and_leaves_the_tip():
    model = RobotModel.load('iiwa14')
    q0 = np.array(Q_START['iiwa14'])
    posture = q0 + np.array([0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0])
    law = OperationalSpace(model, STIFFNESS, null_stiffness=20.0, posture=posture)
    T0 = model.fk(q0)
    zero = np.zeros(6)
    qs, _ = run(model, law, q0, (T0, zero, zero), 3.0)
    tips = model.fk(qs)
    assert np.abs(tips[:, :3, 3] - T0[:3, 3]).max() < 1e-3
    assert np.abs(Rotation.from_matrix(tips[:, :3, :3] @ T0[:3, :3].T).as_rotvec()).max() < 1e-2
    # the elbow turned towards the posture (the self-motion)
    assert abs(qs[-1, 2] - q0[2]) > 0.2


@pytest.mark.parametrize('name, move', [
    ('iiwa14', [0.15, -0.1, -0.1]), ('scara', [-0.1, -0.05, -0.05]),
    ('planar_2r', [0.2, 0.0, 0.2])])
def test_straight_line_tracked_in_the_rk4_plant(name, move):
    model = RobotModel.load(name)
    q0 = np.array(Q_START[name])
    T0 = model.fk(q0)
    T1 = T0.copy()
    T1[:3, 3] += move
    line = CartesianLine(T0, T1, 1.5)
    law = OperationalSpace(model, STIFFNESS, null_stiffness=10.0, posture=q0)
    plant = Plant(model, DT, friction=False, q0=q0)
    compute = law.for_one_state()
    tips = []
    for k in range(2000):
        ref = line.sample(k * DT)
        command = compute(k * DT, plant.q, plant.qd, ref)
        plant.step(command.tau)
        tips.append(model.fk(plant.q)[:3, 3])
    tips = np.array(tips)
    # distance from the line and the final position
    d = T1[:3, 3] - T0[:3, 3]
    rel = tips - T0[:3, 3]
    off = rel - np.outer(rel @ d / (d @ d), d)
    assert np.abs(off).max() < 1e-3
    assert np.abs(tips[-1] - T1[:3, 3]).max() < 1e-3


@pytest.mark.parametrize('name, move', [('scara', [-0.1, -0.05, -0.05]),
                                        ('planar_2r', [0.2, 0.0, 0.2])])
def test_friction_fed_forward_at_the_reference_twists_joint_velocity(name, move, rng):
    model = RobotModel.load(name)                   # both have viscous and Coulomb friction
    assert model.friction.min() > 0.0 and model.damping.min() > 0.0
    q0 = np.array(Q_START[name])
    qd = rng.normal(scale=0.3, size=model.dof)
    reference = (model.fk(q0), rng.normal(size=6) * 0.1, np.zeros(6))
    tau = {friction: OperationalSpace(model, STIFFNESS, friction=friction, saturate=False)
           .compute(0.0, q0, qd, reference).tau for friction in ('none', 'reference', 'measured')}
    # the joint velocity that realises the reference twist with the least kinetic energy,
    # Jbar V_d = M^-1 J^T Lambda V_d, from Pinocchio's M and J
    M, J, _, _ = pin_quantities(model, q0, qd)
    Jm = J[np.flatnonzero(model.task_mask)]
    V = reference[1][np.flatnonzero(model.task_mask)]
    qd_f = np.linalg.solve(M, Jm.T) @ np.linalg.solve(Jm @ np.linalg.solve(M, Jm.T), V)
    np.testing.assert_allclose(Jm @ qd_f, V, atol=1e-12)
    np.testing.assert_allclose(tau['reference'] - tau['none'], friction_torques(model, qd_f),
                               atol=1e-9)
    np.testing.assert_allclose(tau['measured'] - tau['none'], friction_torques(model, qd),
                               atol=1e-9)
    # a straight line in the RK4 plant with the friction: fed forward, the tip stays on it
    T0 = model.fk(q0)
    T1 = T0.copy()
    T1[:3, 3] += move
    line = CartesianLine(T0, T1, 1.5)
    off = {}
    for friction in ('none', 'reference'):
        law = OperationalSpace(model, STIFFNESS, null_stiffness=10.0, posture=q0,
                               friction=friction)
        plant = Plant(model, DT, friction=True, q0=q0)
        compute = law.for_one_state()
        tips = []
        for k in range(2000):
            plant.step(compute(k * DT, plant.q, plant.qd, line.sample(k * DT)).tau)
            tips.append(model.fk(plant.q)[:3, 3])
        rel = np.array(tips) - T0[:3, 3]
        d = T1[:3, 3] - T0[:3, 3]
        off[friction] = np.linalg.norm(rel - np.outer(rel @ d / (d @ d), d), axis=1).max()
    # without it, the friction's torque over the stiffness: millimetres on the SCARA
    assert off['reference'] < 1e-5 and off['none'] > 1e-4


@pytest.mark.parametrize('name', ['planar_2r', 'iiwa14'])
def test_reaching_out_through_the_singularity_stays_finite_and_within_limits(name):
    model = RobotModel.load(name)
    q0 = np.array(Q_START[name])
    T0 = model.fk(q0)
    T1 = T0.copy()
    # straight away from the base, beyond the reach: the arm stretches out (singular)
    T1[:3, 3] = T0[:3, 3] * 3.0
    law = OperationalSpace(model, STIFFNESS, null_stiffness=10.0, posture=q0)
    line = CartesianLine(T0, T1, 1.0)
    qs, commands = run(model, law, q0, line.sample, 2.0)
    taus = np.array([c.tau for c in commands])
    assert np.isfinite(qs).all() and np.isfinite(taus).all()
    assert np.all(np.abs(taus) <= model.effort_limit)
    near = np.array([c.near_singularity for c in commands])
    cond = np.array([c.condition_number for c in commands])
    assert near.any() and cond[near].min() > 10.0
    assert not near[0]


def test_bad_settings_are_refused():
    model = RobotModel.load('scara')
    with pytest.raises(InputError, match='stiffness: expected > 0 on the controlled rows'):
        OperationalSpace(model, [100, 0, 100, 0, 0, 0])
    with pytest.raises(InputError, match='damping_ratio'):
        OperationalSpace(model, 100, float('nan'))
    with pytest.raises(InputError, match='posture'):
        OperationalSpace(model, 100, posture=[0.0, 0.0])
    law = OperationalSpace(model, 100)
    stiffer = law.with_gains(stiffness=200, posture=[0.1, 0.2, 0.0])
    assert stiffer.stiffness.tolist() == [200.0] * 6 and law.stiffness[0] == 100.0
    with pytest.raises(InputError, match='no gains'):
        law.with_gains(kp=1)
