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
Acceptance tests of identification (issue 16, robot_dynamics.identification).

- Base parameters: the count of every bundled robot against the rank of Pinocchio's stacked
  joint-torque regressor (with gravity and without), the planar 2R against the lecture (Spong,
  Hutchinson and Vidyasagar §6.5.3, seed-vectors.md B3), and the defining property
  ``Y theta = W_1 beta(theta)`` for any parameters at states the decomposition never saw.
- Estimation: noise-free samples along an optimised excitation give the base parameters to
  1e-8 relative; with torque noise (seeded) every estimate lies within three of its standard
  deviations of the truth, and the standard deviations are calibrated (a chi-square test of
  the whole vector, which an inflated deviation would fail).
- The physically consistent model: positive masses, inertias about the COM positive definite
  with the triangle inequality, friction >= 0, reproducing the base parameters.
- The identified parameters written into real URDFs (fixed links, locked fingers) read back to
  the same dynamics, the rest of the text unchanged.
"""

import difflib
from functools import lru_cache

import numpy as np
import pytest
from randomchain import PinDynamics
from robot_dynamics import excitation, identification as idf
from robot_dynamics import InputError, ModelError, RobotModel, ShapeError
from robot_dynamics.closed_loop import with_payload
from robot_dynamics.urdf import set_dynamic_parameters
from scipy.stats import chi2

BUNDLED = ('iiwa14', 'planar_2r', 'planar_3r', 'puma560', 'rp_arm', 'scara')
# the base-parameter counts (friction left out) with gravity and without, as Pinocchio's rank
# confirms below; written out so that a change shows
COUNTS = {'iiwa14': (43, 39), 'planar_2r': (6, 4), 'planar_3r': (7, 7), 'puma560': (36, 34),
          'rp_arm': (6, 4), 'scara': (5, 5)}
RANK_SAMPLES = 60


@lru_cache(maxsize=None)
def load(name):
    return RobotModel.load(name)


@lru_cache(maxsize=None)
def base(name):
    return idf.base_parameters(load(name))


def pinocchio_rank(model, gravity, rng):
    """
    Rank of Pinocchio's joint-torque regressor stacked at random states.

    Its columns are scaled to unit length first (the rank does not change, and a column of
    small numbers is not mistaken for rounding), columns that are zero to rounding dropped.
    """
    ref = PinDynamics(model, model.to_urdf(), gravity=gravity)
    q, qd, qdd = idf.random_states(model, RANK_SAMPLES, seed=int(rng.integers(1 << 30)))
    Y = np.concatenate([ref.regressor(*x) for x in zip(q, qd, qdd)])
    norms = np.linalg.norm(Y, axis=0)
    Y = Y[:, norms > 1e-10 * norms.max()]
    s = np.linalg.svd(Y / np.linalg.norm(Y, axis=0), compute_uv=False)
    assert s[s > 1e-8].min() > 1e-4 and s[s <= 1e-8].max(initial=0.0) < 1e-12, \
        'Pinocchio rank: no clear gap between the singular values'
    return int(np.count_nonzero(s > 1e-8))


# ---- base parameters ----------------------------------------------------------------------------

@pytest.mark.parametrize('name', BUNDLED)
def test_base_parameter_count_matches_pinocchio(name, rng):
    model = load(name)
    for gravity, count in zip((model.gravity, np.zeros(3)), COUNTS[name]):
        found = idf.base_parameters(model, friction=False, gravity=gravity)
        assert found.count == count == pinocchio_rank(model, gravity, rng), name
        # a clear rank: kept pivots far above the tolerance, dropped ones at rounding level
        assert found.pivots[:count].min() > 1e-3
        assert found.pivots[count:].max(initial=0.0) < 1e-12
    # every joint's viscous and Coulomb friction is a base parameter of its own
    assert base(name).count == COUNTS[name][0] + 2 * model.dof
    assert [base(name).names[i] for i in base(name).independent[-2 * model.dof:]] == \
        [f'{j}.{kind}' for kind in ('damping', 'friction') for j in model.joint_names]


@pytest.mark.parametrize('name', BUNDLED)
def test_base_parameters_give_the_torques_of_any_parameters(name, rng):
    """``Y theta = W_1 (theta_1 + K theta_2)`` at fresh states, for random ``theta``."""
    model, found = load(name), base(name)
    q, qd, qdd = idf.random_states(model, 20, seed=99)
    Y = idf.regressor(model, q, qd, qdd)
    theta = rng.normal(size=(5, len(found.names)))
    full = np.einsum('bip,kp->kbi', Y, theta)
    reduced = np.einsum('bip,kp->kbi', found.regressor(Y), found.values(theta))
    np.testing.assert_allclose(reduced, full, rtol=0, atol=1e-10 * np.abs(full).max())
    np.testing.assert_allclose(found.values(theta), theta @ found.matrix.T, rtol=1e-14,
                               atol=1e-14)
    # and the model's own torques, friction included
    np.testing.assert_allclose(found.regressor(Y) @ found.values(idf.parameters(model)),
                               model.inverse_dynamics(q, qd, qdd, friction=True), rtol=1e-10,
                               atol=1e-10)


def test_planar_2r_against_the_lecture():
    """
    Spong's five parameters (§6.5.3; seed-vectors.md B3: Theta = (11, 2, 2, 4, 1)) in ours.

    The lecture's links are planar with the COM on the link line: 5 parameters with gravity,
    3 without. Ours are 6 and 4: the first moments across the links (link1.mcz, link2.mcz,
    zero for the bundled arm) are two more with gravity, link2's one more without (link 1's
    only acts through gravity); and with the link length l1 known, the lecture's
    theta2 = m2 l1 lc2 and theta5 = m2 lc2 are one base parameter (link2.mcx). In the lecture's
    own parameter space (per link m, mcx and the inertia about the joint axis) the rank is
    therefore 4 with gravity (5 - 1) and 3 without (the lecture's 3).
    """
    model = load('planar_2r')
    found = base('planar_2r')
    beta = dict(zip(found.base_names, found.values(idf.parameters(model))))
    assert set(beta) >= {'link1.mcx + 2 link2.m', 'link1.mcz', 'link1.iyy + 4 link2.m',
                         'link2.mcx', 'link2.mcz', 'link2.iyy'}
    l1 = model.joint_placement[1][0, 3]
    theta = [beta['link1.iyy + 4 link2.m'] + beta['link2.iyy'], l1 * beta['link2.mcx'],
             beta['link2.iyy'], beta['link1.mcx + 2 link2.m'], beta['link2.mcx']]
    np.testing.assert_allclose(theta, [11.0, 2.0, 2.0, 4.0, 1.0], rtol=1e-12)
    assert beta['link1.mcz'] == beta['link2.mcz'] == 0.0
    # the lecture's regressor (our -y axis: positive angles lift the arm) times its Theta gives
    # our torques
    q, qd, qdd = idf.random_states(model, 10, seed=7)
    g = 9.81
    c1, c2, c12, s2 = np.cos(q[:, 0]), np.cos(q[:, 1]), np.cos(q.sum(1)), np.sin(q[:, 1])
    Y = np.zeros((10, 2, 5))
    Y[:, 0] = np.stack([qdd[:, 0], c2 * (2 * qdd[:, 0] + qdd[:, 1])
                        - s2 * (qd[:, 1] ** 2 + 2 * qd[:, 0] * qd[:, 1]), qdd[:, 1], g * c1,
                        g * c12], -1)
    Y[:, 1] = np.stack([0 * c1, c2 * qdd[:, 0] + s2 * qd[:, 0] ** 2, qdd.sum(1), 0 * c1, g * c12],
                       -1)
    np.testing.assert_allclose(Y @ theta, model.inverse_dynamics(q, qd, qdd), rtol=1e-10)
    # ranks in the lecture's parameter space
    names = idf.parameter_names(model)
    lecture = [names.index(f'{link}.{p}') for link in ('link1', 'link2')
               for p in ('m', 'mcx', 'iyy')]
    for gravity, rank in ((model.gravity, 4), (np.zeros(3), 3)):
        q, qd, qdd = idf.random_states(model, RANK_SAMPLES, seed=8)
        W = idf.regressor(model, q, qd, qdd, gravity=gravity)[..., lecture].reshape(-1, 6)
        W = W[:, np.linalg.norm(W, axis=0) > 0.0]
        s = np.linalg.svd(W / np.linalg.norm(W, axis=0), compute_uv=False)
        assert np.count_nonzero(s > 1e-8 * s[0]) == rank
    assert idf.base_parameters(model, friction=False).count == 6
    assert idf.base_parameters(model, friction=False, gravity=np.zeros(3)).count == 4


def test_base_parameter_names_and_shapes():
    found = base('scara')
    assert found.matrix.shape == (found.count, 36)
    assert len(found.base_names) == found.count
    assert found.names[:3] == ('upper_arm.m', 'upper_arm.mcx', 'upper_arm.mcy')
    assert found.names[-6:] == ('shoulder.damping', 'elbow.damping', 'quill.damping',
                                'shoulder.friction', 'elbow.friction', 'quill.friction')
    # the quill's mass only ever appears alone: it is a base parameter by itself
    assert 'quill.m' in found.base_names
    with pytest.raises(ShapeError, match=r'theta: expected shape \(\.\.\., 36\)'):
        found.values(np.zeros(30))


# ---- estimation ---------------------------------------------------------------------------------

def consistent(model):
    """
    Make every body of ``model`` physically consistent; return it as it is if they are.

    The PUMA 560's published parameters are not: its first body has inertia but no mass, and
    its third body's inertia breaks the triangle inequality. Each pseudo-inertia's eigenvalues
    are raised to at least 1e-3 of the arm's largest, which changes nothing elsewhere.
    """
    J = idf.pseudo_inertia(model.inertial_parameters().reshape(-1, 10))
    lam, V = np.linalg.eigh(J)
    floor = 1e-3 * lam.max()
    if lam.min() >= floor:
        return model
    J = (V * np.maximum(lam, floor)[:, None, :]) @ V.transpose(0, 2, 1)
    S = J[:, :3, :3]
    inertia = np.trace(S, axis1=1, axis2=2)[:, None, None] * np.eye(3) - S
    theta = np.concatenate((J[:, 3, 3:], J[:, :3, 3], inertia[:, [0, 0, 1, 0, 1, 2],
                                                              [0, 1, 1, 2, 2, 2]]), axis=1)
    return idf.model_with_parameters(model, np.concatenate((theta.ravel(), model.damping,
                                                            model.friction)))


@lru_cache(maxsize=None)
def excitation_samples(name):
    """
    Return states along an optimised excitation (20 s, 100 Hz), torques and their plant.

    The plant is the robot (made physically consistent) with a payload and more friction than
    its model.
    """
    model = load(name)
    motion = excitation.optimise(model, duration=20.0, base=base(name))
    point = motion.sample(np.arange(0.0, motion.duration, 0.01))
    plant = with_payload(consistent(model), 1.5, com=[0.03, -0.02, 0.05],
                         inertia=[0.01, 0, 0, 0.02, 0, 0.01])
    plant = plant.replace(damping=plant.damping + 0.2, friction=plant.friction + 0.4)
    tau = plant.inverse_dynamics(point.q, point.qd, point.qdd, friction=True)
    return point, tau, plant


@pytest.mark.parametrize('name', ['planar_2r', 'scara', 'puma560'])
def test_noise_free_samples_give_the_base_parameters(name):
    point, tau, plant = excitation_samples(name)
    found = idf.estimate(load(name), point.q, point.qd, point.qdd, tau, base=base(name))
    truth = base(name).values(idf.parameters(plant))
    scale = np.abs(truth).max()
    significant = np.abs(truth) > 1e-6 * scale
    err = np.abs(found.values - truth)
    assert np.all(err[significant] <= 1e-8 * np.abs(truth[significant])), \
        f'relative error {np.max(err[significant] / np.abs(truth[significant])):.3g}'
    assert np.all(err[~significant] <= 1e-8 * scale)
    assert 1.0 < found.condition_number < 1e3
    assert found.rows > 0.9 * tau.size            # few equations at rest


@pytest.mark.parametrize('name', ['planar_2r', 'scara', 'puma560'])
def test_noisy_torques_give_estimates_within_three_standard_deviations(name):
    point, tau, plant = excitation_samples(name)
    rng = np.random.default_rng(16)
    # noise of 2 % of each joint's largest torque: a wrist's is far smaller than a shoulder's
    noise = 0.02 * np.abs(tau).max(axis=0)
    found = idf.estimate(load(name), point.q, point.qd, point.qdd,
                         tau + noise * rng.normal(size=tau.shape), base=base(name))
    truth = base(name).values(idf.parameters(plant))
    z = (found.values - truth) / found.std
    assert np.abs(z).max() <= 3.0, f'{found.base.base_names[np.argmax(np.abs(z))]}: {z.max()}'
    # the weights found the joints' own noise
    np.testing.assert_allclose(found.residual_std, noise, rtol=0.1)
    # calibrated: (beta - truth)^T Cov^-1 (beta - truth) is chi-square with b degrees of freedom
    d2 = float(np.sum((found.information_root @ (found.values - truth)) ** 2))
    b = found.base.count
    assert chi2.ppf(0.001, b) < d2 < chi2.ppf(0.999, b), (d2, b)


def test_unweighted_and_bad_samples():
    point, tau, _ = excitation_samples('planar_2r')
    model = load('planar_2r')
    plain = idf.estimate(model, point.q, point.qd, point.qdd, tau, weighted=False)
    assert np.allclose(plain.residual_std, plain.residual_std[0] * 0 + plain.residual_std)
    with pytest.raises(InputError, match='joint equations .* for 10 base parameters'):
        idf.estimate(model, point.q[:3], point.qd[:3], point.qdd[:3], tau[:3])
    # a motion of joint 1 alone cannot tell link 2's parameters apart
    still = point.q.copy()
    still[:, 1] = 0.3
    moving = np.stack([point.qd[:, 0], np.zeros(len(point.q))], -1)
    accel = np.stack([point.qdd[:, 0], np.zeros(len(point.q))], -1)
    with pytest.raises(InputError, match='does not excite the base parameter'):
        idf.estimate(model, still, moving, accel, tau, min_velocity=0.0)
    with pytest.raises(ShapeError, match='tau'):
        idf.estimate(model, point.q, point.qd, point.qdd, tau[:, :1])


# ---- physical consistency -----------------------------------------------------------------------

def assert_physical(model):
    assert np.all(model.mass > 0.0)
    for inertia in model.inertia:
        eig = np.linalg.eigvalsh(inertia)
        assert eig.min() > 0.0
        assert eig[0] + eig[1] >= eig[2] * (1.0 - 1e-12)        # triangle inequality
    assert np.all(model.damping >= 0.0) and np.all(model.friction >= 0.0)


# the seven-joint iiwa14 met 1e-8 too, in the file's longest test (11 s on a quiet machine, a
# minute in the whole suite; nearly all of it the optimisation of its excitation, 19 s of CPU):
# the property (every body consistent, the estimate met to 1e-8) does not depend on the number
# of bodies, and the planar 3R's three show it beside the SCARA's RRP and the six-joint PUMA
@pytest.mark.parametrize('name, tolerance', [
    ('planar_2r', 1e-8), ('planar_3r', 1e-8), ('scara', 1e-8),
    # the PUMA's published link 6 (0.09 kg) carries a payload 17 times heavier here, whose
    # mass the data cannot see apart from its COM along the last axis: the fit meets it near
    # the consistent set's boundary, where its last stage takes short steps
    ('puma560', 1e-4)])
def test_consistent_model_reproduces_a_noise_free_estimate(name, tolerance):
    point, tau, plant = excitation_samples(name)
    model = load(name)
    result = idf.identify(model, point.q, point.qd, point.qdd, tau, base=base(name))
    assert_physical(result.model)
    truth = base(name).values(idf.parameters(plant))
    scale = np.abs(truth).max()
    np.testing.assert_allclose(result.consistency.base_values, truth, rtol=0,
                               atol=tolerance * scale)
    np.testing.assert_allclose(base(name).values(idf.parameters(result.model)),
                               result.consistency.base_values, rtol=1e-12, atol=1e-12 * scale)
    # the identified model predicts the plant's torques at states it never saw
    q, qd, qdd = idf.random_states(model, 50, seed=3)
    expected = plant.inverse_dynamics(q, qd, qdd, friction=True)
    np.testing.assert_allclose(result.model.inverse_dynamics(q, qd, qdd, friction=True),
                               expected, rtol=0, atol=10 * tolerance * np.abs(expected).max())


def noisy_estimate(name):
    """Return the estimate from ``name``'s excitation with torque noise (2 %, seeded)."""
    point, tau, _ = excitation_samples(name)
    rng = np.random.default_rng(5)
    noisy = tau + 0.02 * np.abs(tau).max(axis=0) * rng.normal(size=tau.shape)
    return idf.estimate(load(name), point.q, point.qd, point.qdd, noisy, base=base(name))


def test_consistent_model_of_noisy_and_of_impossible_estimates():
    model = load('puma560')
    found = noisy_estimate('puma560')
    result = idf.consistent_model(model, found)
    assert_physical(result.model)
    # within the estimate's uncertainty (link 6 carries a payload 17 times its nominal mass)
    assert result.deviation.max() < 3.0 and np.median(result.deviation) < 0.1
    # an estimate no physical arm has: a negative inertia of the last body about its axis, and
    # a negative Coulomb friction. On the planar 3R (the same names): the PUMA's fit of it ran
    # both stages to their 1000 evaluations (4 s on a quiet machine) where the 3R's takes 17
    model = load('planar_3r')
    found = noisy_estimate('planar_3r')
    names = found.base.base_names
    values = found.values.copy()
    values[names.index('link3.izz')] = -0.5
    values[names.index('joint3.friction')] = -1.0
    impossible = found._replace(values=values)
    result = idf.consistent_model(model, impossible)
    assert_physical(result.model)
    assert 0.0 <= result.model.friction[2] < 1e-6
    assert result.deviation[names.index('link3.izz')] > 3.0
    point, tau, _ = excitation_samples('planar_3r')
    with pytest.raises(InputError, match='friction parameters'):
        idf.consistent_model(model, idf.estimate(
            model, point.q, point.qd, point.qdd, tau,
            base=idf.base_parameters(model, friction=False)))


def test_pseudo_inertia_and_log_cholesky_round_trip(rng):
    """J positive definite exactly for consistent bodies; the parametrisation covers them."""
    model = load('iiwa14')
    theta = model.inertial_parameters().reshape(-1, 10)
    J = idf.pseudo_inertia(theta)
    assert np.linalg.eigvalsh(J).min() > 0.0
    x = idf._log_cholesky(J)
    np.testing.assert_allclose(idf._from_log_cholesky(x), J, rtol=0, atol=1e-15)
    # any parameters give a consistent body, with the derivative of the map
    x = rng.normal(size=(4, 10))
    assert np.linalg.eigvalsh(idf._from_log_cholesky(x)).min() > 0.0
    h = 1e-6
    fd = np.stack([(idf._parameters_of(idf._from_log_cholesky(x + h * e))
                    - idf._parameters_of(idf._from_log_cholesky(x - h * e))) / (2 * h)
                   for e in np.eye(10)], axis=-1)
    np.testing.assert_allclose(idf._log_cholesky_jacobian(x), fd, rtol=1e-6, atol=1e-7)
    # a body that violates the triangle inequality has an indefinite J
    rod = theta[0].copy()
    rod[4] = 10.0 * (rod[6] + rod[9])
    assert np.linalg.eigvalsh(idf.pseudo_inertia(rod)).min() < 0.0


# ---- into a URDF --------------------------------------------------------------------------------

def _real_urdf(relative):
    import importlib.metadata
    from pathlib import Path
    share = Path(importlib.metadata.distribution('example-robot-data').locate_file(
        'cmeel.prefix/share/example-robot-data'))
    return (share / 'robots' / relative).read_text()


@pytest.mark.parametrize('robot, path, base_link, tip_link', [
    ('panda', 'panda_description/urdf/panda.urdf', 'panda_link0', 'panda_hand_tcp'),
    ('ur5', 'ur_description/urdf/ur5_robot.urdf', 'base_link', 'tool0'),
    ('planar_2r', None, None, None),
])
def test_written_urdf_reads_back_to_the_identified_model(robot, path, base_link, tip_link, rng):
    text = _real_urdf(path) if path else load(robot).to_urdf()
    model = RobotModel.from_urdf(text, base_link=base_link, tip_link=tip_link)
    # each body scaled as a whole stays consistent; more friction
    theta = idf.parameters(model)
    factor = np.concatenate((np.repeat(1.0 + 0.3 * rng.random(model.dof), 10),
                             np.ones(2 * model.dof)))
    identified = idf.model_with_parameters(model, theta * factor + np.concatenate((
        np.zeros(10 * model.dof), np.full(2 * model.dof, 0.1))))
    written = set_dynamic_parameters(text, identified, note='identified by a test')
    again = RobotModel.from_urdf(written, base_link=base_link, tip_link=tip_link)
    q, qd, qdd = idf.random_states(model, 20, seed=4)
    expected = identified.inverse_dynamics(q, qd, qdd, friction=True)
    np.testing.assert_allclose(again.inverse_dynamics(q, qd, qdd, friction=True), expected,
                               rtol=0, atol=1e-9 * np.abs(expected).max())
    np.testing.assert_allclose(again.mass, identified.mass, rtol=1e-15)
    # only inertials and dynamics changed: every changed line is one of theirs
    changed = [line for line in difflib.ndiff(text.splitlines(), written.splitlines())
               if line[:1] in '+-']
    allowed = ('<inertial', '</inertial', '<origin', '<mass', '<inertia', '<dynamics',
               '<!-- identified by a test -->')
    assert all(line[2:].strip().startswith(allowed) for line in changed), changed[:5]
    assert written.count('<visual') == text.count('<visual')


def test_merged_links_lose_their_inertials_and_the_chain_link_carries_the_body():
    text = _real_urdf('panda_description/urdf/panda.urdf')
    model = RobotModel.from_urdf(text, base_link='panda_link0', tip_link='panda_hand_tcp')
    written = set_dynamic_parameters(text, model)
    import xml.etree.ElementTree as ET
    links = {link.get('name'): link for link in ET.fromstring(written).iter('link')}
    # the hand and the locked fingers ride on body 7: their mass is now panda_link7's
    for merged in ('panda_hand', 'panda_leftfinger', 'panda_rightfinger'):
        assert links[merged].find('inertial') is None, merged
    mass = float(links['panda_link7'].find('inertial/mass').get('value'))
    assert mass == pytest.approx(model.mass[-1], rel=1e-15)
    # links merged into the fixed base keep theirs
    assert links['panda_link0'].find('inertial') is not None
    # the model of another robot cannot be written into it
    with pytest.raises(ModelError, match='does not describe the chain'):
        set_dynamic_parameters(text, load('iiwa14'))
