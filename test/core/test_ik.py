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

"""Inverse kinematics: closed forms (seed vectors B1, B12), numeric solver, paths, bad input."""

import importlib.metadata
import math

import numpy as np
import pytest

from robot_dynamics import ik as ik_module
from robot_dynamics import InputError, RobotModel
from robot_dynamics.spatial import pose_error, rot_x, rot_z, transform

CLOSED_FORM_ROBOTS = ('planar_2r', 'planar_3r', 'puma560', 'rp_arm', 'scara')
EXACT = 1e-9          # closed forms reproduce the target to this [m, rad] (rounding)
#: The numeric search bounded by its work instead of the host's clock, so that a busy host
#: does not fail it: 100 random restarts, fewer than the default 5 ms timeout affords on an idle
#: machine of CI's kind (112 for the PUMA 560); the most any target here takes is 26. What
#: the solver reaches in its default time is measured in bench/bench_ik.py.
BY_RESTARTS = {'timeout': 600.0, 'max_restarts': 100}
#: Arms with a spherical wrist from real URDFs (example-robot-data): file, base and tip link.
#: Jaco 2 has three continuous joints; the Talos arm from its second joint on is a 6R whose
#: first two axes intersect (the other case of the wrist-centre solution than the PUMA's).
REAL_ARMS = {
    'jaco2': ('kinova_description/robots/kinova.urdf', 'j2s6s200_link_base',
              'j2s6s200_end_effector'),
    'talos_arm': ('talos_data/robots/talos_left_arm.urdf', 'arm_left_1_link',
                  'arm_left_7_link'),
}


def masked_errors(model, q, target, mask=None):
    """
    Position [m] and orientation [rad] error of fk(q), masked rows only (spatial.pose_error).

    The default mask is IK's: the rows the arm controls and every position row.
    """
    mask = np.maximum(model.task_mask, [1, 1, 1, 0, 0, 0]) if mask is None else \
        np.asarray(mask, dtype=float)
    e = pose_error(model.fk(q), target) * (mask > 0)
    return np.linalg.norm(e[:3]), np.linalg.norm(e[3:])


def within_limits(model, q):
    return bool(np.all(q >= model.lower) and np.all(q <= model.upper))


def same_angles(a, b, atol):
    """Compare joint vectors, revolute angles modulo 2 pi."""
    d = (np.asarray(a) - np.asarray(b) + np.pi) % (2 * np.pi) - np.pi
    return bool(np.all(np.abs(d) <= atol))


def real_arm(name):
    """Load an arm of ``REAL_ARMS`` from the example-robot-data package."""
    path, base, tip = REAL_ARMS[name]
    urdf = importlib.metadata.distribution('example-robot-data').locate_file(
        f'cmeel.prefix/share/example-robot-data/robots/{path}')
    return RobotModel.from_urdf(urdf.read_text(), base_link=base, tip_link=tip)


def random_in_limits(model, rng, count):
    """Joint positions uniform in the limits (continuous joints in [-pi, pi])."""
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    return rng.uniform(lo, hi, (count, model.dof))


def planar_rr(a1, a2, **limits):
    """Build a planar arm in the x-y plane from modified DH rows (links a1, a2)."""
    rows = [{'a': 0.0, 'alpha': 0.0, 'd': 0.0, 'theta': 0.0, 'type': 'revolute', **limits},
            {'a': a1, 'alpha': 0.0, 'd': 0.0, 'theta': 0.0, 'type': 'revolute', **limits},
            {'a': a2, 'alpha': 0.0, 'd': 0.0, 'theta': 0.0, 'type': 'revolute', **limits}]
    return RobotModel.from_dh(rows, convention='modified')


# ---- seed vectors -------------------------------------------------------------------------------

def test_b12_vector2_planar_3r_both_solutions(bundled):
    model = bundled['planar_3r']                      # l1 = 2, l2 = 1.5 (derived vector 2)
    target = model.fk([0.4, 0.9, -0.5])
    np.testing.assert_allclose(target[:2, 3], [2.2433702309, 2.2241739627], atol=1e-9)
    assert math.atan2(target[1, 0], target[0, 0]) == pytest.approx(0.8, abs=1e-12)
    solutions = sorted(model.ik_all(target), key=lambda q: q[1], reverse=True)
    assert len(solutions) == 2
    np.testing.assert_allclose(solutions[0], [0.4, 0.9, -0.5], atol=EXACT)
    np.testing.assert_allclose(solutions[1], [1.1622027240, -0.9, 0.5377972760], atol=1e-9)


def test_b12_vector1_two_link_equal_lengths():
    model = planar_rr(2.0, 2.0)                       # continuous joints (no limits)
    target = model.fk([np.pi / 6, np.pi / 3, 0.0])
    np.testing.assert_allclose(target[:2, 3], [1.7320508076, 3.0], atol=1e-9)
    solutions = sorted(model.ik_all(target), key=lambda q: q[1], reverse=True)
    assert len(solutions) == 2
    np.testing.assert_allclose(solutions[0], [0.5235987756, 1.0471975512, 0.0], atol=1e-9)
    np.testing.assert_allclose(solutions[1], [1.5707963268, -1.0471975512, 1.0471975512],
                               atol=1e-9)


def test_b12_unreachable_planar_3r_has_no_solution(bundled):
    model = bundled['planar_3r']
    target = transform(rot_z(0.3), [3.6, 0.0, 0.0])   # x^2 + y^2 > (l1 + l2)^2: |c2| > 1
    assert model.ik_all(target) == []
    result = model.ik(target)
    assert not result.success
    assert result.position_error == pytest.approx(0.1, abs=1e-6)


def test_b1_scara_both_elbows_and_height():
    # Becker and Klink's SCARA, standard DH rows (alpha, a, d, theta): (0, r1, h1, q1),
    # (pi, r2, h2, q2), (pi, 0, q3, 0) with r1 = 0.5, r2 = 0.4, h1 = 0.3, h2 = 0.2
    rows = [{'a': 0.5, 'alpha': 0.0, 'd': 0.3, 'theta': 0.0, 'type': 'revolute',
             'lower': -3.0, 'upper': 3.0},
            {'a': 0.4, 'alpha': np.pi, 'd': 0.2, 'theta': 0.0, 'type': 'revolute',
             'lower': -3.0, 'upper': 3.0},
            {'a': 0.0, 'alpha': np.pi, 'd': 0.0, 'theta': 0.0, 'type': 'prismatic',
             'lower': 0.0, 'upper': 0.5}]
    model = RobotModel.from_dh(rows)
    q = np.array([0.3, -0.8, 0.1])
    target = model.fk(q)
    np.testing.assert_allclose(target[:3, 3], [0.8287012693, -0.0440101121, 0.4], atol=1e-9)
    solutions = sorted(model.ik_all(target), key=lambda s: s[1])
    assert len(solutions) == 2
    np.testing.assert_allclose(solutions[0], q, atol=EXACT)
    assert solutions[1][1] == pytest.approx(0.8, abs=EXACT)         # the other elbow
    assert solutions[1][2] == pytest.approx(0.1, abs=EXACT)         # same quill stroke
    for s in solutions:
        np.testing.assert_allclose(model.fk(s)[:3, 3], target[:3, 3], atol=EXACT)
    # second B1 point
    target = model.fk([np.pi / 4, np.pi / 3, 0.1])
    np.testing.assert_allclose(target[:3, 3], [0.2500257726, 0.7399237211, 0.4], atol=1e-9)
    assert any(same_angles(s, [np.pi / 4, np.pi / 3, 0.1], EXACT) for s in model.ik_all(target))


def test_scara_with_a_wrist_joint_solves_yaw():
    # RRPR: Becker and Klink's SCARA plus a wrist joint about the quill, tool 0.05 m off its axis
    rows = [{'a': 0.325, 'alpha': 0.0, 'd': 0.4, 'theta': 0.0, 'type': 'revolute',
             'lower': -2.6, 'upper': 2.6},
            {'a': 0.275, 'alpha': np.pi, 'd': 0.05, 'theta': 0.0, 'type': 'revolute',
             'lower': -2.5, 'upper': 2.5},
            {'a': 0.0, 'alpha': 0.0, 'd': 0.0, 'theta': 0.0, 'type': 'prismatic',
             'lower': 0.0, 'upper': 0.3},
            {'a': 0.05, 'alpha': 0.0, 'd': 0.0, 'theta': 0.0, 'type': 'revolute',
             'lower': -3.0, 'upper': 3.0}]
    model = RobotModel.from_dh(rows)
    assert ik_module.closed_form(model).name == 'planar 3R with a lift joint'
    np.testing.assert_array_equal(model.task_mask, [1, 1, 1, 0, 0, 1])     # x, y, z and yaw
    q = np.array([0.4, -1.1, 0.12, 0.7])
    target = model.fk(q)
    solutions = model.ik_all(target)
    assert len(solutions) == 2
    assert any(np.allclose(s, q, atol=EXACT) for s in solutions)
    for s in solutions:
        np.testing.assert_allclose(model.fk(s), target, atol=EXACT)


# ---- closed forms: counts, exactness, limits ----------------------------------------------------

def test_structure_detection(bundled):
    names = {name: getattr(ik_module.closed_form(m), 'name', None) for name, m in bundled.items()}
    assert names['planar_2r'] == 'planar 2R'
    assert names['planar_3r'] == 'planar 3R'
    assert names['scara'] == 'planar 2R with a lift joint'
    assert names['rp_arm'] == 'planar rotary-prismatic'
    assert names['puma560'] == '6R spherical wrist (Pieper)'
    assert names['iiwa14'] is None


@pytest.mark.parametrize('distance, count', [(3.0, 2), (4.0, 1), (4.5, 0)])
def test_planar_2r_solution_count_over_the_annulus(bundled, distance, count):
    model = bundled['planar_2r']                      # l1 = l2 = 2: reach 4
    angle = 0.7
    target = transform(None, [distance * math.cos(angle), 0.0, distance * math.sin(angle)])
    solutions = model.ik_all(target)
    assert len(solutions) == count
    for q in solutions:
        perr, _ = masked_errors(model, q, target)
        assert perr < EXACT


@pytest.mark.parametrize('distance, count', [(2.0, 2), (3.0, 1), (1.0, 1), (3.2, 0), (0.8, 0)])
def test_unequal_links_annulus_inner_and_outer_boundary(distance, count):
    model = planar_rr(2.0, 1.0)                      # annulus 1 <= r <= 3 for the wrist (3R)
    target = transform(rot_z(0.25), [distance * math.cos(0.4), distance * math.sin(0.4), 0.0])
    solutions = model.ik_all(target)
    assert len(solutions) == count
    for q in solutions:
        np.testing.assert_allclose(model.fk(q), target, atol=EXACT)


def test_planar_2r_target_off_the_plane_is_unreachable(bundled):
    model = bundled['planar_2r']                      # moves in the x-z plane
    target = transform(None, [2.0, 0.05, 1.0])
    assert model.ik_all(target) == []
    result = model.ik(target)
    assert not result.success
    assert result.position_error == pytest.approx(0.05, abs=1e-9)


def verified_branches(model, q):
    """Return fk(q) and ik_all of it, checking each branch: limits, fk, distinct, q among them."""
    target = model.fk(q)
    solutions = model.ik_all(target)
    assert any(same_angles(s, q, 1e-7) for s in solutions)
    for s in solutions:
        assert within_limits(model, s)
        perr, oerr = masked_errors(model, s, target)
        assert perr < EXACT and oerr < EXACT
    for i, a in enumerate(solutions):               # distinct branches
        for b in solutions[i + 1:]:
            assert not same_angles(a, b, 1e-6)
    return target, solutions


@pytest.mark.parametrize('name', CLOSED_FORM_ROBOTS)
def test_every_closed_form_solution_reproduces_the_target(bundled, name):
    model = bundled[name]
    for q in random_in_limits(model, np.random.default_rng(7), 20):
        verified_branches(model, q)


@pytest.mark.parametrize('name', REAL_ARMS)
def test_real_arms_every_closed_form_branch_is_verified(name):
    """Every branch of ik_all on the Jaco 2 and the Talos arm: fk, limits, distinct, complete."""
    model = real_arm(name)
    assert ik_module.closed_form(model).name == '6R spherical wrist (Pieper)'
    # with the limits opened to a full turn every target has its eight branches
    wide = model.replace(lower=np.full(6, -np.pi), upper=np.full(6, np.pi))
    rng = np.random.default_rng(11)
    counts = []
    for q in random_in_limits(model, rng, 30):
        target, solutions = verified_branches(model, q)
        every = wide.ik_all(target)
        counts.append(len(every))
        assert all(any(same_angles(s, e, 1e-9) for e in every) for s in solutions)
        for e in every:
            np.testing.assert_allclose(wide.fk(e), target, atol=EXACT)
    assert max(counts) == 8


@pytest.mark.parametrize('name', CLOSED_FORM_ROBOTS + tuple(REAL_ARMS))
def test_single_solution_is_the_nearest_of_ik_all(bundled, name):
    """
    ``ik`` (closed form) returns the element of ``ik_all(all_turns=True)`` nearest the seed.

    Independent of the solver's own selection: the nearest is searched here over every listed
    solution, with angles of joints without two limits (continuous) moved to their turn
    nearest the seed, in the weighted joint distance.
    """
    model = bundled[name] if name in bundled else real_arm(name)
    rng = np.random.default_rng(5)
    free = ~np.asarray(model.is_prismatic) & ~(np.isfinite(model.lower)
                                               & np.isfinite(model.upper))
    weights = rng.uniform(0.5, 2.0, model.dof)
    checked = 0
    for q, seed in zip(random_in_limits(model, rng, 25), random_in_limits(model, rng, 25)):
        target = model.fk(q)
        every = np.array(ik_module.ik_all(model, target, all_turns=True))
        result = model.ik(target, seed=seed, weights=weights)
        assert result.success and result.method == 'analytic'
        assert result.solutions == len(model.ik_all(target))
        turns = np.where(free, np.round((seed - every) / (2 * np.pi)), 0.0)
        every = every + 2 * np.pi * turns
        distance = ((every - seed) ** 2 * weights).sum(axis=1)
        order = np.argsort(distance)
        if len(order) > 1 and distance[order[1]] - distance[order[0]] < 1e-9:
            continue                                      # a tie: either answer is right
        np.testing.assert_allclose(result.q, every[order[0]], atol=1e-9)
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize('name', REAL_ARMS)
def test_real_arms_closed_form_and_numeric_solve_random_targets(name):
    model = real_arm(name)
    rng = np.random.default_rng(3)
    for q in random_in_limits(model, rng, 50):
        target = model.fk(q)
        for method in ('auto', 'numeric'):
            r = model.ik(target, method=method, **BY_RESTARTS)
            assert r.success, (method, r.reason)
            perr, oerr = masked_errors(model, r.q, target)
            assert perr <= 1e-6 and oerr <= 1e-6 and within_limits(model, r.q)
            assert r.method == ('analytic' if method == 'auto' else 'numeric')


def test_puma560_eight_solutions(bundled):
    model = bundled['puma560']
    wide = model.replace(lower=np.full(6, -np.pi), upper=np.full(6, np.pi))
    q = np.array([0.4, 0.6, -1.2, 0.5, 0.8, -0.3])
    target = wide.fk(q)
    solutions = wide.ik_all(target)
    assert len(solutions) == 8
    assert any(same_angles(s, q, 1e-9) for s in solutions)
    for s in solutions:
        np.testing.assert_allclose(wide.fk(s), target, atol=EXACT)
    # the real limits keep a subset of those branches, and every kept one is a branch above
    kept = model.ik_all(target)
    assert 1 <= len(kept) < 8
    assert all(any(same_angles(k, s, 1e-9) for s in solutions) for k in kept)
    assert all(within_limits(model, k) for k in kept)


def test_puma560_wrist_pairs_flip_q4_q5_q6(bundled):
    wide = bundled['puma560'].replace(lower=np.full(6, -np.pi), upper=np.full(6, np.pi))
    q = np.array([0.4, 0.6, -1.2, 0.5, 0.8, -0.3])
    flipped = q + [0.0, 0.0, 0.0, np.pi, 0.0, np.pi]
    flipped[4] = -q[4]
    assert any(same_angles(s, flipped, 1e-9) for s in wide.ik_all(wide.fk(q)))


def test_joint_limits_filter_branches(bundled):
    model = bundled['planar_2r']
    target = transform(None, [3.0, 0.0, 1.0])
    both = model.ik_all(target)
    assert len(both) == 2 and {np.sign(q[1]) for q in both} == {-1.0, 1.0}
    elbow_up = model.replace(lower=np.array([-np.pi, 0.0]), upper=np.array([np.pi, np.pi]))
    (only,) = elbow_up.ik_all(target)
    assert only[1] > 0.0
    result = elbow_up.ik(target, seed=[0.0, -1.0])
    assert result.success and result.q[1] > 0.0
    neither = model.replace(lower=np.array([-0.1, -0.1]), upper=np.array([0.1, 0.1]))
    assert neither.ik_all(target) == []
    assert not neither.ik(target).success


def test_all_turns_lists_2pi_copies_inside_wide_limits(bundled):
    model = bundled['puma560']                       # joint 6 spans +-266 degrees
    q = np.array([0.2, 0.6, -1.2, 0.5, 0.8, 2.0])
    target = model.fk(q)
    one = model.ik_all(target)
    every = ik_module.ik_all(model, target, all_turns=True)
    assert len(every) > len(one)
    assert any(np.allclose(s, q - [0, 0, 0, 0, 0, 2 * np.pi], atol=1e-9) for s in every)
    for s in every:
        assert within_limits(model, s)


def test_rp_arm_closed_form(bundled):
    model = bundled['rp_arm']
    q = np.array([0.6, 0.35])
    solutions = model.ik_all(model.fk(q))
    assert len(solutions) == 1                       # the other root needs a negative slide
    np.testing.assert_allclose(solutions[0], q, atol=EXACT)


def test_scara_orientation_it_cannot_take(bundled):
    model = bundled['scara']
    q = np.array([0.3, -0.8, 0.1])
    target = model.fk(q)
    target[:3, :3] = rot_z(1.2)                      # yaw != q1 + q2 for either elbow
    assert model.ik(target).success                  # default mask: position only
    for method in ('auto', 'analytic', 'numeric'):
        result = model.ik(target, mask=np.ones(6), method=method, timeout=0.002)
        assert not result.success
        assert max(result.position_error, result.orientation_error) > 1e-3
    assert ik_module.ik_all(model, target, mask=np.ones(6)) == []
    reachable = model.fk(q)                          # full mask, reachable orientation
    assert ik_module.ik_all(model, reachable, mask=np.ones(6))[0] == pytest.approx(q)


# ---- ik: choice of branch, methods --------------------------------------------------------------

INERTIAL = ('<inertial><mass value="1"/>'
            '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>')
PLANAR_3R_WITH_TOOL = """<?xml version="1.0"?>
<robot name="planar_3r_tool">
  <link name="base_link"/>
  <joint name="j1" type="revolute"><parent link="base_link"/><child link="l1"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="l1">{inertial}</link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="1 0 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/>
  </joint>
  <link name="l2">{inertial}</link>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/>
    <origin xyz="1 0 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/>
  </joint>
  <link name="l3">{inertial}</link>
  <joint name="tool" type="fixed"><parent link="l3"/><child link="tip"/>
    <origin xyz="0.5 0 0"/></joint>
  <link name="tip"/>
</robot>""".format(inertial=INERTIAL)


def test_mask_that_leaves_the_closed_form_incomplete_searches_numerically():
    model = RobotModel.from_urdf(PLANAR_3R_WITH_TOOL)   # l1 = l2 = 1, tool 0.5 past joint 3
    assert ik_module.closed_form(model).name == 'planar 3R'
    np.testing.assert_array_equal(model.task_mask, [1, 1, 0, 0, 0, 1])     # its plane, yaw
    # position reachable (|x| <= 2.5), but with yaw pi the wrist would sit at 2.9 > 2
    target = transform(rot_z(np.pi), [2.4, 0.0, 0.0])
    assert model.ik_all(target) == []
    assert not model.ik(target).success                    # default mask: x, y, z and yaw
    position_only = [1, 1, 1, 0, 0, 0]
    assert ik_module.ik_all(model, target, mask=position_only) == []
    # restarts bounded by their number, not by the wall clock: what a loaded host does to a
    # 5 ms budget is not this test's business
    result = model.ik(target, mask=position_only, timeout=60.0,
                      rng=np.random.default_rng(0))
    assert result.success and result.method == 'numeric'
    perr, _ = masked_errors(model, result.q, target, position_only)
    assert perr <= 1e-6


def test_ik_picks_the_branch_nearest_the_seed(bundled):
    wide = bundled['puma560'].replace(lower=np.full(6, -np.pi), upper=np.full(6, np.pi))
    target = wide.fk([0.4, 0.6, -1.2, 0.5, 0.8, -0.3])
    for s in wide.ik_all(target):
        result = wide.ik(target, seed=s + 0.05)
        assert result.success and result.method == 'analytic'
        np.testing.assert_allclose(result.q, s, atol=1e-9)


def test_ik_weights_change_the_choice(bundled):
    model = bundled['planar_2r']
    target = transform(None, [3.0, 0.0, 1.0])
    a, b = model.ik_all(target)
    seed = np.array([a[0], b[1]])                     # near a in joint 1, near b in joint 2
    np.testing.assert_allclose(model.ik(target, seed=seed, weights=[1.0, 0.0]).q, a, atol=1e-12)
    np.testing.assert_allclose(model.ik(target, seed=seed, weights=[0.0, 1.0]).q, b, atol=1e-12)


def test_result_fields(bundled):
    model = bundled['puma560']
    target = model.fk([0.1, 0.5, -0.9, 0.2, 0.4, 0.3])
    r = model.ik(target)
    assert isinstance(r, ik_module.IKResult)
    assert (r.success, r.method, r.iterations, r.restarts) == (True, 'analytic', 0, 0)
    assert r.solutions >= 1 and r.time > 0.0 and r.residual.shape == (6,)
    assert r.position_error < EXACT and r.orientation_error < EXACT
    with pytest.raises(AttributeError):
        r.success = False                            # frozen
    n = model.ik(target, method='numeric', **BY_RESTARTS)
    assert n.method == 'numeric' and n.success and n.iterations > 0 and n.reason == 'converged'


def test_analytic_method_without_closed_form_raises(bundled):
    model = bundled['iiwa14']
    target = model.fk(np.zeros(7) + 0.3)
    with pytest.raises(InputError, match='no closed-form'):
        model.ik(target, method='analytic')
    with pytest.raises(InputError, match='no closed-form'):
        model.ik_all(target)
    assert model.ik(target).method == 'numeric'      # auto falls back


# ---- unreachable targets: never a false success -------------------------------------------------

@pytest.mark.parametrize('name', sorted(RobotModel.available()))
def test_unreachable_target_gives_failure_and_residual(bundled, name):
    model = bundled[name]
    target = transform(rot_x(0.4), [8.0, 0.0, 3.0])
    for method in (('auto', 'numeric') if name != 'iiwa14' else ('auto',)):
        result = model.ik(target, method=method, timeout=0.002)
        assert not result.success
        assert result.position_error > 1.0            # meaningful: at least the missing reach
        assert within_limits(model, result.q)
        perr, oerr = masked_errors(model, result.q, target)
        assert perr == pytest.approx(result.position_error, abs=1e-9)
        assert oerr == pytest.approx(result.orientation_error, abs=1e-9)


@pytest.mark.parametrize('name', CLOSED_FORM_ROBOTS)
def test_closed_form_unreachable_residual_is_least_squares(bundled, name):
    model = bundled[name]
    far = transform(None, [0.0, 0.0, 20.0])
    result = model.ik(far, method='analytic')
    assert not result.success and result.method == 'analytic'
    assert result.position_error > 10.0


def test_unreachable_residual_is_the_gap_to_the_workspace(bundled):
    model = bundled['planar_2r']
    result = model.ik(transform(None, [5.0, 0.0, 0.0]))
    assert not result.success
    assert result.position_error == pytest.approx(1.0, abs=1e-9)   # 5 - (l1 + l2)


def test_timeout_is_respected(bundled):
    model = bundled['iiwa14']
    result = model.ik(transform(None, [3.0, 0.0, 0.0]), timeout=0.003)
    assert not result.success and 'timeout' in result.reason
    assert result.time < 0.05
    assert result.restarts > 0


# ---- numeric solver -----------------------------------------------------------------------------

@pytest.mark.parametrize('name', ['puma560', 'iiwa14'])
def test_numeric_random_reachable_poses(bundled, name):
    model = bundled[name]
    rng = np.random.default_rng(2026)
    qs = rng.uniform(model.lower, model.upper, (200, model.dof))
    successes = 0
    for target in model.fk(qs):
        result = model.ik(target, method='numeric', **BY_RESTARTS)
        if result.success:
            successes += 1
            perr, oerr = masked_errors(model, result.q, target)      # FK(IK(T)) == T
            assert perr <= 1e-6 and oerr <= 1e-6
            assert within_limits(model, result.q)
    assert successes >= 199


@pytest.mark.parametrize('name', ['planar_2r', 'planar_3r', 'rp_arm', 'scara'])
def test_numeric_small_arms_with_task_mask(bundled, name):
    model = bundled[name]
    rng = np.random.default_rng(3)
    qs = rng.uniform(np.maximum(model.lower, -3.0), np.minimum(model.upper, 3.0), (20, model.dof))
    for target in model.fk(qs):
        result = model.ik(target, method='numeric', **BY_RESTARTS)
        assert result.success
        perr, oerr = masked_errors(model, result.q, target)
        assert perr <= 1e-6 and oerr <= 1e-6


def test_numeric_random_chains(make_random_urdf, make_random_q, rng):
    # random axes and offsets, prismatic and continuous joints, fixed links; n < 6 uses the
    # model's reachable task mask
    for _ in range(12):
        model = RobotModel.from_urdf(make_random_urdf(rng, int(rng.integers(2, 8))))
        for q in make_random_q(rng, model, (5,)):
            target = model.fk(q)
            result = model.ik(target, **BY_RESTARTS)
            assert result.success, (model, result.reason)
            perr, oerr = masked_errors(model, result.q, target)
            assert perr <= 1e-6 and oerr <= 1e-6 and within_limits(model, result.q)


def test_numeric_continuous_joints_stay_near_the_seed():
    model = planar_rr(2.0, 1.5)                       # continuous joints
    assert model.joint_types == ('continuous',) * 3
    q = np.array([0.4, 0.9, -0.5])
    target = model.fk(q)
    seed = q + [2 * np.pi + 0.05, -0.05, 4 * np.pi]
    result = model.ik(target, seed=seed, method='numeric', **BY_RESTARTS)
    assert result.success
    assert np.abs(result.q - seed).max() < 0.2       # same turn as the seed, not wrapped to 0
    assert same_angles(result.q, q, 1e-6)


def test_numeric_seed_near_solution_converges_there(bundled):
    model = bundled['iiwa14']
    q = np.array([0.3, -0.5, 0.7, 1.1, -0.4, 0.9, 0.2])
    result = model.ik(model.fk(q), seed=q + 0.02, method='numeric', **BY_RESTARTS)
    assert result.success and result.restarts == 0
    assert np.abs(result.q - q).max() < 0.1


def test_numeric_is_reproducible(bundled):
    model = bundled['puma560']
    target = model.fk([2.5, 0.2, -3.5, 2.5, 1.5, 4.0])
    a = model.ik(target, seed=np.zeros(6), method='numeric', rng=5, **BY_RESTARTS)
    b = model.ik(target, seed=np.zeros(6), method='numeric', rng=5, **BY_RESTARTS)
    assert a.success and np.array_equal(a.q, b.q)


# ---- paths --------------------------------------------------------------------------------------

def test_path_follows_one_branch(bundled):
    model = bundled['puma560']
    t = np.linspace(0.0, 1.0, 40)[:, None]
    qs = np.array([0.2, 0.4, -1.0, 0.3, 0.9, 0.1]) + t * [0.6, 0.3, -0.4, 0.8, -0.5, 1.0]
    path = ik_module.ik_path(model, model.fk(qs), seed=qs[0])
    assert path.continuous and path.success.all()
    np.testing.assert_allclose(path.q, qs, atol=1e-7)
    numeric = ik_module.ik_path(model, model.fk(qs), seed=qs[0], method='numeric')
    assert numeric.continuous
    np.testing.assert_allclose(numeric.q, qs, atol=1e-5)


def test_path_reports_a_forced_branch_flip(bundled):
    model = bundled['scara']                           # shoulder limited to +-2.6 rad
    angles = np.linspace(1.6, 3.0, 30)
    targets = np.array([transform(rot_z(a), [0.45 * math.cos(a), 0.45 * math.sin(a), 0.3])
                        for a in angles])
    # right-handed elbow (q2 < 0): q1 = angle + 0.652 leaves the limit at angle 1.948
    start = model.ik(targets[0], seed=[1.0, -1.0, 0.1]).q
    assert start[1] < 0.0
    path = ik_module.ik_path(model, targets, seed=start)
    assert path.success.all()
    assert len(path.jumps) == 1 and not path.failed
    k = path.jumps[0]
    assert path.q[k - 1][1] < 0.0 < path.q[k][1]      # elbow flipped once, where it had to
    assert angles[k - 1] <= 1.948 <= angles[k] + 1e-3
    assert not path.continuous


def test_path_reports_points_out_of_reach(bundled):
    model = bundled['planar_2r']
    targets = np.array([transform(None, [r, 0.0, 0.5]) for r in np.linspace(3.0, 4.5, 16)])
    path = ik_module.ik_path(model, targets, seed=[0.0, 1.0])
    reach = np.hypot(np.linspace(3.0, 4.5, 16), 0.5) <= 4.0
    np.testing.assert_array_equal(path.success, reach)
    assert path.failed == tuple(np.flatnonzero(~reach))
    assert set(path.failed) <= set(path.discontinuities)


# ---- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize('target, match', [
    (np.full((4, 4), np.nan), 'non-finite'),
    (np.diag([2.0, 1.0, 1.0, 1.0]), 'rotation'),
    (np.vstack([np.eye(4)[:3], [0.0, 0.0, 1.0, 1.0]]), 'last row'),
    (np.eye(3), 'shape'),
    (np.stack([np.eye(4)] * 2), 'one pose'),
])
def test_bad_target(bundled, target, match):
    with pytest.raises(InputError, match=match):
        bundled['puma560'].ik(target)
    with pytest.raises(ValueError):
        bundled['puma560'].ik_all(target)


@pytest.mark.parametrize('options, match', [
    ({'seed': np.zeros(5)}, 'seed'),
    ({'seed': [np.inf] * 6}, 'seed'),
    ({'tol_position': 0.0}, 'tol_position'),
    ({'tol_orientation': -1e-6}, 'tol_orientation'),
    ({'timeout': 0.0}, 'timeout'),
    ({'method': 'newton'}, 'method'),
    ({'mask': np.ones(5)}, 'mask'),
    ({'mask': np.zeros(6)}, 'mask'),
    ({'mask': [1, 1, 1, -1, 0, 0]}, 'mask'),
    ({'weights': np.ones(3)}, 'weights'),
    ({'max_iterations': 0}, 'max_iterations'),
])
def test_bad_options(bundled, options, match):
    model = bundled['puma560']
    target = model.fk(np.full(6, 0.3))
    with pytest.raises(InputError, match=match):
        model.ik(target, **options)


def test_bad_path_input(bundled):
    model = bundled['planar_2r']
    with pytest.raises(InputError, match='targets'):
        ik_module.ik_path(model, np.eye(4))
    with pytest.raises(InputError, match='max_jump'):
        ik_module.ik_path(model, np.stack([np.eye(4)]), max_jump=0.0)
