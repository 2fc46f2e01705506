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
Real robots' URDFs, as users have them, against Pinocchio's model of the whole robot.

The files come from example-robot-data (a test dependency, like Pinocchio). Each arm is loaded
with the base and tip a user would pick and with neither (the rule of ``robot_dynamics.urdf``).
The reference is ``pinocchio.buildModelFromUrdf`` of the whole file reduced by
``buildReducedModel``, locking every joint outside the chain at the value the model reports in
``locked_joints`` (joints above the base, which only place it, at 0 clipped to their limits).
FK and Jacobians of every link, RNEA with gravity, CRBA and ABA agree to 1e-9 relative, in the
model's base frame.
"""

from functools import lru_cache
import importlib.metadata
from pathlib import Path
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest
from randomchain import random_q
from robot_dynamics import ModelError, RobotModel

TOL = 1e-9
STATES = 3


def robots_dir():
    """Return example-robot-data's ``robots`` folder: from its PyPI wheel, else a ROS install."""
    try:
        share = Path(importlib.metadata.distribution('example-robot-data').locate_file(
            'cmeel.prefix/share/example-robot-data'))
    except importlib.metadata.PackageNotFoundError:
        from ament_index_python.packages import get_package_share_directory
        share = Path(get_package_share_directory('example-robot-data'))
    return share / 'robots'


FILES = {
    'ur3': 'ur_description/urdf/ur3_robot.urdf',
    'ur5': 'ur_description/urdf/ur5_robot.urdf',
    'ur10': 'ur_description/urdf/ur10_robot.urdf',
    'panda': 'panda_description/urdf/panda.urdf',
    'xarm7': 'xarm_description/urdf/xarm7.urdf',
    'z1': 'z1_description/urdf/z1.urdf',
    'kinova': 'kinova_description/robots/kinova.urdf',
    'talos_arm': 'talos_data/robots/talos_left_arm.urdf',
    'talos': 'talos_data/robots/talos_full_v2.urdf',
    'tiago': 'tiago_description/robots/tiago.urdf',
    'baxter': 'baxter_description/urdf/baxter.urdf',
    'so100': 'so_arm_description/urdf/so100.urdf',
    'so101': 'so_arm_description/urdf/so101.urdf',
}

# (robot, base_link, tip_link) as a user would pick them
CHOSEN = [
    ('ur3', 'base_link', 'tool0'), ('ur5', 'base_link', 'tool0'), ('ur10', 'base_link', 'tool0'),
    ('panda', 'panda_link0', 'panda_hand_tcp'), ('panda', 'panda_link0', 'panda_link8'),
    ('xarm7', 'link_base', 'link_eef'), ('z1', 'link00', 'gripperStator'),
    ('z1', 'link00', 'link06'),
    ('kinova', 'j2s6s200_link_base', 'j2s6s200_end_effector'),
    ('talos_arm', 'arm_left_1_link', 'arm_left_7_link'),
    ('talos_arm', 'arm_left_1_link', 'gripper_left_base_link'),
    ('talos', 'torso_2_link', 'gripper_left_base_link'),
    ('tiago', 'torso_lift_link', 'arm_7_link'), ('tiago', 'torso_lift_link', 'arm_tool_link'),
    ('baxter', 'torso', 'right_wrist'), ('baxter', 'torso', 'right_gripper'),
    ('so100', 'base', 'gripper'), ('so101', 'base_link', 'gripper_frame_link'),
]

# robot: (base_link, tip_link, dof) that the rule picks when neither is given
DEFAULT = {
    'ur3': ('world', 'ee_link', 6), 'ur5': ('world', 'ee_link', 6),
    'ur10': ('world', 'ee_link', 6),
    'panda': ('panda_link0', 'panda_hand_tcp', 7),       # fingers locked
    'xarm7': ('world', 'link_eef', 7),
    'z1': ('world', 'gripperMover', 7),                  # the gripper joint is the longest chain
    'kinova': ('base', 'j2s6s200_end_effector', 6),      # before the fixed fingers by name
    'talos_arm': ('arm_left_1_link', 'gripper_left_motor_double_link', 7),
    'tiago': ('base_footprint', 'hand_grasping_frame', 8),   # torso lift + arm; hand locked
    'so100': ('base', 'jaw', 6), 'so101': ('base_link', 'moving_jaw_so101_v1_link', 6),
}

CONFIGS = CHOSEN + [(robot, None, None) for robot in DEFAULT]


def config_id(config):
    robot, base, tip = config
    return f'{robot}:{base}->{tip}' if tip else f'{robot}:default'


@lru_cache(maxsize=None)
def load(robot, base=None, tip=None, locked=()):
    """Load a robot once per module: ``locked`` is a tuple of (joint, value) pairs."""
    return RobotModel.from_urdf(str(robots_dir() / FILES[robot]), base_link=base, tip_link=tip,
                                locked_joints=dict(locked))


@lru_cache(maxsize=None)
def full_model(robot):
    """
    Return Pinocchio's model of the whole file, each joint's child link and its Pinocchio name.

    buildReducedModel fails on a joint named like a link (SO-100's ``gripper``, Z1's
    ``gripperStator``): Pinocchio gets those joints renamed.
    """
    root = ET.parse(robots_dir() / FILES[robot]).getroot()
    links = {link.get('name') for link in root.findall('link')}
    child, pin_name = {}, {}
    for joint in root.findall('joint'):
        name = joint.get('name')
        child[name] = joint.find('child').get('link')
        pin_name[name] = f'{name}__joint' if name in links else name
        joint.set('name', pin_name[name])
    return pin.buildModelFromXML(ET.tostring(root, encoding='unicode')), child, pin_name


class Reference:
    """Pinocchio's whole robot with every joint off ``model``'s chain locked, in its base frame."""

    def __init__(self, robot, model):
        full, child, pin_name = full_model(robot)
        urdf_name = {v: k for k, v in pin_name.items()}
        q_ref, lock = pin.neutral(full), []
        for jid in range(1, full.njoints):
            name, joint = urdf_name[full.names[jid]], full.joints[jid]
            if name in model.joint_names:
                continue
            if child[name] in model.frames and child[name] != model.base_link:   # below it
                value = model.locked_joints[name]
            else:                                 # above the base: it only places the base
                assert name not in model.locked_joints
                lo, hi = (full.lowerPositionLimit[joint.idx_q],
                          full.upperPositionLimit[joint.idx_q])
                value = 0.0 if joint.nq == 2 else float(np.clip(0.0, lo, hi))
            self._set(q_ref, joint, value)
            lock.append(jid)
        locked_below = [urdf_name[full.names[j]] for j in lock]
        assert sorted(model.locked_joints) == sorted(
            n for n in locked_below if child[n] in model.frames and child[n] != model.base_link)
        self.model = pin.buildReducedModel(full, lock, q_ref)
        self.data = self.model.createData()
        self.joints = [self.model.joints[self.model.getJointId(pin_name[n])]
                       for n in model.joint_names]
        self.idx_v = [j.idx_v for j in self.joints]
        assert self.model.nv == model.dof
        pin.framesForwardKinematics(self.model, self.data, pin.neutral(self.model))
        T_w_base = self.data.oMf[self.frame(model.base_link)].homogeneous
        self.T_base_w = np.linalg.inv(T_w_base)
        self.R6 = np.kron(np.eye(2), T_w_base[:3, :3].T)
        self.model.gravity = pin.Motion(T_w_base[:3, :3] @ model.gravity, np.zeros(3))

    @staticmethod
    def _set(q, joint, value):
        if joint.nq == 2:     # continuous: (cos, sin)
            q[joint.idx_q:joint.idx_q + 2] = np.cos(value), np.sin(value)
        else:
            q[joint.idx_q] = value

    def frame(self, link):
        fid = self.model.getFrameId(link, pin.BODY)
        assert fid < self.model.nframes, link
        return fid

    def q(self, q):
        out = pin.neutral(self.model)
        for joint, value in zip(self.joints, q):
            self._set(out, joint, value)
        return out

    def v(self, x):
        out = np.zeros(self.model.nv)
        out[self.idx_v] = x
        return out

    def fk(self, q, link):
        pin.framesForwardKinematics(self.model, self.data, self.q(q))
        return self.T_base_w @ self.data.oMf[self.frame(link)].homogeneous

    def jacobian(self, q, link):
        J = pin.computeFrameJacobian(self.model, self.data, self.q(q), self.frame(link),
                                     pin.LOCAL_WORLD_ALIGNED)
        return (self.R6 @ J)[:, self.idx_v]

    def rnea(self, q, qd, qdd):
        return pin.rnea(self.model, self.data, self.q(q), self.v(qd), self.v(qdd))[self.idx_v]

    def gravity(self, q):
        return pin.computeGeneralizedGravity(self.model, self.data, self.q(q))[self.idx_v]

    def crba(self, q):
        M = pin.crba(self.model, self.data, self.q(q))
        M = np.triu(M) + np.triu(M, 1).T        # Pinocchio fills the upper triangle only
        return M[np.ix_(self.idx_v, self.idx_v)]

    def aba(self, q, qd, tau):
        return pin.aba(self.model, self.data, self.q(q), self.v(qd), self.v(tau))[self.idx_v]


def relative(a, b):
    return float(np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1e-300))


def compare(robot, model, rng, states=STATES):
    """Worst relative error of each quantity against :class:`Reference` over random states."""
    ref = Reference(robot, model)
    q = random_q(rng, model, (states,))
    qd, qdd, tau = (rng.normal(size=(states, model.dof)) for _ in range(3))
    errors = {
        'fk': max(relative(model.fk(q, link)[k], ref.fk(q[k], link))
                  for link in model.link_names for k in range(states)),
        'jacobian': max(relative(model.jacobian(q, link)[k], ref.jacobian(q[k], link))
                        for link in model.link_names for k in range(states)),
    }
    rows = {'rnea': (model.inverse_dynamics(q, qd, qdd), ref.rnea, (q, qd, qdd)),
            'gravity': (model.gravity_torques(q), ref.gravity, (q,)),
            'crba': (model.mass_matrix(q), ref.crba, (q,)),
            'aba': (model.forward_dynamics(q, qd, tau), ref.aba, (q, qd, tau))}
    for key, (ours, pin_fn, args) in rows.items():
        errors[key] = max(relative(ours[k], pin_fn(*(a[k] for a in args)))
                          for k in range(states))
    return errors


@pytest.mark.parametrize('config', CONFIGS, ids=config_id)
def test_arm_agrees_with_pinocchio_whole_robot(config, rng):
    model = load(*config)
    errors = compare(config[0], model, rng)
    assert max(errors.values()) < TOL, errors


@pytest.mark.parametrize('robot', sorted(DEFAULT))
def test_rule_picks_the_chain_without_base_or_tip(robot):
    model = load(robot)
    assert (model.base_link, model.tip_link, model.dof) == DEFAULT[robot]


def test_rule_breaks_a_tie_of_tool_frames_by_name():
    model = load('ur5')
    # ee_link and tool0 both hang on wrist_3_link by one fixed joint: the first name wins
    assert model.tip_link == 'ee_link' and model.frames['tool0'][0] == model.dof
    assert list(model.joint_names) == list(load('ur5', 'base_link', 'tool0').joint_names)


@pytest.mark.parametrize('robot, candidates', [
    ('baxter', ['l_gripper_l_finger_tip', 'r_gripper_r_finger_tip']),
    ('talos', ['gripper_left_fingertip_1_link', 'gripper_right_fingertip_3_link']),
])
def test_two_arms_need_a_tip(robot, candidates):
    with pytest.raises(ModelError) as info:
        load(robot)
    for word in ['branching', 'tip_link'] + candidates:
        assert word in str(info.value), (word, str(info.value))


@pytest.mark.parametrize('robot, base, tip', [
    ('panda', 'panda_link0', 'panda_link8'), ('z1', 'link00', 'link06'),
    ('talos_arm', 'arm_left_1_link', 'arm_left_7_link'), ('baxter', 'torso', 'right_wrist'),
    ('tiago', 'torso_lift_link', 'arm_7_link'),
])
def test_gravity_counts_what_rides_below_the_tip(robot, base, tip, rng):
    # Bug: everything below the tip was dropped, the hand and gripper included, so
    # these gravity torques were 6 % (Tiago) to 22 % (Talos) off the whole robot's
    model = load(robot, base, tip)
    ref = Reference(robot, model)
    # the last body weighs more than its own link: a hand or gripper rides on it
    root = ET.parse(robots_dir() / FILES[robot]).getroot()
    own = root.find(f"link[@name='{full_model(robot)[1][model.joint_names[-1]]}']")
    assert model.mass[-1] > float(own.find('inertial/mass').get('value')) + 0.1
    for q in random_q(rng, model, (STATES,)):
        assert relative(model.gravity_torques(q), ref.gravity(q)) < TOL


def test_locked_finger_values_move_the_merged_body_as_pinocchio_says():
    base, tip = 'panda_link0', 'panda_hand_tcp'
    closed = load('panda', base, tip)
    # finger 2 mimics finger 1 (multiplier 1): open both by giving finger 1 alone
    opened = load('panda', base, tip, (('panda_finger_joint1', 0.04),))
    assert dict(opened.locked_joints) == {'panda_finger_joint1': 0.04,
                                          'panda_finger_joint2': 0.04}
    one = load('panda', base, tip, (('panda_finger_joint1', 0.04), ('panda_finger_joint2', 0.0)))
    for model in (closed, opened, one):
        inertia = Reference('panda', model).model.inertias[-1]
        assert model.mass[-1] == pytest.approx(inertia.mass, rel=1e-12)
        assert np.allclose(model.com[-1], inertia.lever, rtol=0, atol=1e-12)
        assert np.allclose(model.inertia[-1], inertia.inertia, rtol=0, atol=1e-12)
    # the left finger (15 g) moves 4 cm along the hand's y, which is link 7's y rotated by -45 deg
    shift = 0.015 * 0.04 * np.array([np.sin(np.pi / 4), np.cos(np.pi / 4), 0.0]) / closed.mass[-1]
    assert np.allclose(one.com[-1] - closed.com[-1], shift, rtol=0, atol=1e-12)
    assert np.allclose(opened.com[-1], closed.com[-1], rtol=0, atol=1e-12)   # symmetric
    assert not np.allclose(opened.inertia[-1], closed.inertia[-1], rtol=0, atol=1e-7)
    rng = np.random.default_rng(4)
    errors = compare('panda', one, rng, states=2)
    assert max(errors.values()) < TOL, errors


def test_baxter_finger_mimic_multiplier():
    model = load('baxter', 'torso', 'right_gripper', (('r_gripper_l_finger_joint', 0.02),))
    assert model.locked_joints['r_gripper_r_finger_joint'] == pytest.approx(-0.02, abs=1e-15)
    assert model.locked_joints['l_gripper_r_finger_joint'] == 0.0
    assert max(compare('baxter', model, np.random.default_rng(5), states=2).values()) < TOL


def test_mimic_on_fixed_joints_is_accepted_and_in_the_chain_rejected():
    root = ET.parse(robots_dir() / FILES['talos_arm']).getroot()
    fixed_mimics = [j.get('name') for j in root.findall('joint')
                    if j.get('type') == 'fixed' and j.find('mimic') is not None]
    assert len(fixed_mimics) == 6
    model = load('talos_arm', 'arm_left_1_link', 'gripper_left_base_link')
    child = full_model('talos_arm')[1]
    assert all(model.frames[child[j]][0] == model.dof for j in fixed_mimics)
    # talos_full_v2 has the same gripper with moving mimic joints
    with pytest.raises(ModelError, match="'gripper_left_inner_double_joint' of the chain"):
        load('talos', 'torso_2_link', 'gripper_left_inner_double_link')


def test_panda_loads_quietly(capsys, caplog):
    with caplog.at_level('DEBUG', logger='robot_dynamics.urdf'):
        model = RobotModel.from_urdf(str(robots_dir() / FILES['panda']))
    assert capsys.readouterr().err == ''
    debug = [r.getMessage() for r in caplog.records if r.levelname == 'DEBUG']
    info = [r.getMessage() for r in caplog.records if r.levelname == 'INFO']
    assert len(debug) == 1 and debug[0].startswith('urdf_parser_py ignored 28 item(s)')
    assert debug[0].count('Unknown attribute') == 28
    assert len(info) == 1 and 'panda_finger_joint2' in info[0] and 'tip chosen by rule' in info[0]
    assert model.tip_link == 'panda_hand_tcp'
