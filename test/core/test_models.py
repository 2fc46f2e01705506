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
Robot models: URDF parsing, DH tables and their YAML format, to_urdf(), bundled robots.

Bad input must raise a ``ValueError`` subclass (``ModelError`` for descriptions, ``InputError``
or ``ShapeError`` for arguments) whose message names the problem.
"""

import dataclasses
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from randomchain import random_inertia, random_models, random_q
from robot_dynamics import InputError, ModelError, RobotModel, ShapeError
from robot_dynamics.dh import dh_transform
from robot_dynamics.urdf import combine_inertia
from scipy.spatial.transform import Rotation
import yaml

REPO = Path(__file__).resolve().parents[2]


def origin(xyz, rpy):
    """URDF origin as a 4x4 matrix, computed with scipy (URDF rpy = extrinsic xyz)."""
    T = np.eye(4)
    T[:3, :3] = Rotation.from_euler('xyz', rpy).as_matrix()
    T[:3, 3] = xyz
    return T


def fmt(v):
    return ' '.join(repr(float(x)) for x in v)


def link(name, mass=None, com=(0, 0, 0), rpy=(0, 0, 0), inertia=None):
    if mass is None:
        return f'<link name="{name}"/>'
    tensor = np.diag([0.1, 0.2, 0.3]) if inertia is None else np.asarray(inertia)
    index = {'xx': (0, 0), 'xy': (0, 1), 'xz': (0, 2), 'yy': (1, 1), 'yz': (1, 2), 'zz': (2, 2)}
    i = {k: repr(float(tensor[ab])) for k, ab in index.items()}
    return (f'<link name="{name}"><inertial><origin xyz="{fmt(com)}" rpy="{fmt(rpy)}"/>'
            f'<mass value="{float(mass)!r}"/><inertia ixx="{i["xx"]}" ixy="{i["xy"]}" '
            f'ixz="{i["xz"]}" iyy="{i["yy"]}" iyz="{i["yz"]}" izz="{i["zz"]}"/>'
            '</inertial></link>')


def joint(name, parent, child, kind='revolute', xyz=(0, 0, 0), rpy=(0, 0, 0), axis=(0, 0, 1),
          limit=(-1.0, 1.0, 10.0, 2.0), dynamics=None, extra=''):
    text = (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{fmt(xyz)}" rpy="{fmt(rpy)}"/>')
    if axis is not None and kind != 'fixed':
        text += f'<axis xyz="{fmt(axis)}"/>'
    if limit is not None and kind in ('revolute', 'prismatic'):
        lo, hi, effort, velocity = limit
        text += (f'<limit lower="{lo!r}" upper="{hi!r}" effort="{effort!r}" '
                 f'velocity="{velocity!r}"/>')
    elif limit is not None and kind == 'continuous':
        text += f'<limit effort="{limit[2]!r}" velocity="{limit[3]!r}"/>'
    if dynamics is not None:
        text += f'<dynamics damping="{dynamics[0]!r}" friction="{dynamics[1]!r}"/>'
    return text + extra + '</joint>'


def robot(*parts, name='test_robot'):
    return f'<?xml version="1.0"?>\n<robot name="{name}">' + ''.join(parts) + '</robot>'


def simple_chain(**overrides):
    """Three moving joints a -> b -> c -> d plus a fixed tool frame."""
    parts = {
        'a': link('a', 1.0), 'b': link('b', 1.0), 'c': link('c', 1.0), 'd': link('d', 1.0),
        'tool': link('tool'),
        'j1': joint('j1', 'a', 'b', xyz=(0, 0, 0.3)),
        'j2': joint('j2', 'b', 'c', xyz=(0.4, 0, 0), axis=(0, 1, 0)),
        'j3': joint('j3', 'c', 'd', 'prismatic', xyz=(0.3, 0, 0), axis=(1, 0, 0)),
        'ft': joint('ft', 'd', 'tool', 'fixed', xyz=(0.1, 0, 0))}
    parts.update(overrides)
    return robot(*[p for p in parts.values() if p])


# ---- URDF parsing ---------------------------------------------------------------------------


def test_urdf_joint_types_origins_axes_limits_dynamics():
    xyz = [(0.1, -0.2, 0.3), (0.0, 0.5, -0.1), (-0.3, 0.2, 0.05), (0.02, 0.0, 0.1)]
    rpy = [(0.3, -0.4, 1.2), (-1.0, 0.2, 0.1), (0.0, 1.1, -2.0), (0.5, 0.5, 0.5)]
    xml = robot(
        link('base'), link('l1', 1.0), link('l2', 2.0), link('l3', 0.5), link('flange'),
        joint('rev', 'base', 'l1', xyz=xyz[0], rpy=rpy[0], axis=(0, 3, 4),
              limit=(-1.5, 2.0, 50.0, 3.0), dynamics=(0.7, 0.2)),
        joint('cont', 'l1', 'l2', 'continuous', xyz=xyz[1], rpy=rpy[1], axis=(1, 1, 1),
              limit=(None, None, 20.0, 4.0)),
        joint('pri', 'l2', 'l3', 'prismatic', xyz=xyz[2], rpy=rpy[2], axis=(-0.2, 0.1, 0.9),
              limit=(-0.1, 0.4, 300.0, 0.5), dynamics=(5.0, 1.5)),
        joint('fix', 'l3', 'flange', 'fixed', xyz=xyz[3], rpy=rpy[3]))
    model = RobotModel.from_urdf(xml)
    assert model.name == 'test_robot'
    assert model.dof == 3
    assert list(model.joint_names) == ['rev', 'cont', 'pri']
    assert tuple(model.joint_types) == ('revolute', 'continuous', 'prismatic')
    assert (model.base_link, model.tip_link) == ('base', 'flange')
    for i in range(3):
        assert np.allclose(model.joint_placement[i], origin(xyz[i], rpy[i]), atol=1e-14)
    axes = np.array([[0, 3, 4], [1, 1, 1], [-0.2, 0.1, 0.9]])
    assert np.allclose(model.joint_axis, axes / np.linalg.norm(axes, axis=1)[:, None],
                       atol=1e-15)
    assert np.allclose(model.lower, [-1.5, -np.inf, -0.1])
    assert np.allclose(model.upper, [2.0, np.inf, 0.4])
    assert np.allclose(model.effort_limit, [50.0, 20.0, 300.0])
    assert np.allclose(model.velocity_limit, [3.0, 4.0, 0.5])
    assert np.allclose(model.damping, [0.7, 0.0, 5.0])      # missing <dynamics>: zero
    assert np.allclose(model.friction, [0.2, 0.0, 1.5])
    assert model.frames['flange'][0] == 3
    assert np.allclose(model.frames['flange'][1], origin(xyz[3], rpy[3]), atol=1e-14)
    # fk composes origin * joint motion
    q = np.array([0.4, -1.3, 0.2])
    k = axes / np.linalg.norm(axes, axis=1)[:, None]
    T = origin(xyz[0], rpy[0]) @ origin((0, 0, 0), (0, 0, 0))
    T[:3, :3] = T[:3, :3] @ Rotation.from_rotvec(q[0] * k[0]).as_matrix()
    T = T @ origin(xyz[1], rpy[1])
    T[:3, :3] = T[:3, :3] @ Rotation.from_rotvec(q[1] * k[1]).as_matrix()
    T = T @ origin(xyz[2], rpy[2])
    T[:3, 3] += T[:3, :3] @ (q[2] * k[2])
    T = T @ origin(xyz[3], rpy[3])
    assert np.allclose(model.fk(q), T, atol=1e-13)


def test_urdf_defaults_axis_x_and_identity_origin():
    xml = robot(link('a'), link('b', 1.0), link('c', 1.0), joint('j', 'a', 'b', axis=None),
                '<joint name="k" type="revolute"><parent link="b"/><child link="c"/>'
                '<origin xyz="0.1 0.2 0.3"/><axis xyz="0 0 1"/>'
                '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')
    model = RobotModel.from_urdf(xml)
    assert np.allclose(model.joint_axis, [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    assert np.allclose(model.joint_placement[1], origin((0.1, 0.2, 0.3), (0, 0, 0)), atol=0)
    no_origin = xml.replace('<origin xyz="0.1 0.2 0.3"/>', '')
    assert np.allclose(RobotModel.from_urdf(no_origin).joint_placement[1], np.eye(4), atol=0)


def test_urdf_file_and_string_give_the_same_model(tmp_path):
    xml = simple_chain()
    path = tmp_path / 'chain.urdf'
    path.write_text(xml)
    a, b = RobotModel.from_urdf(str(path)), RobotModel.from_urdf(xml)
    assert a.joint_names == b.joint_names
    assert np.array_equal(a.joint_placement, b.joint_placement)
    assert RobotModel.from_urdf(path).dof == 3                  # a Path works too


def test_urdf_inertia_merged_across_fixed_joints():
    rng = np.random.default_rng(3)
    m1, m2, m3 = 2.0, 0.7, 1.3
    I1, I2, I3 = (random_inertia(rng, m) for m in (m1, m2, m3))
    c1, r1 = (0.1, 0.02, -0.05), (0.3, -0.2, 0.9)
    c2, r2 = (-0.04, 0.1, 0.2), (-1.0, 0.4, 0.3)
    f1 = ((0.2, 0.1, 0.0), (0.1, 0.2, -0.3))           # fixed joint link1 -> link1b
    f2 = ((0.0, 0.0, 0.15), (0.0, -0.5, 0.0))          # fixed joint link1b -> link1c (massless)
    j2 = ((0.3, 0.0, 0.0), (0.0, 0.0, 0.4))
    xml = robot(
        link('base_link', 5.0), link('base_plate', 1.0, com=(0.1, 0, 0)),
        link('link1', m1, c1, r1, I1), link('link1b', m2, c2, r2, I2), link('link1c'),
        link('link2', m3, (0.05, 0.0, 0.0), (0, 0, 0), I3),
        joint('plate', 'base_link', 'base_plate', 'fixed', xyz=(0, 0, 0.1)),
        joint('j1', 'base_plate', 'link1', xyz=(0, 0, 0.2)),
        joint('f1', 'link1', 'link1b', 'fixed', *f1),
        joint('f2', 'link1b', 'link1c', 'fixed', *f2),
        joint('j2', 'link1c', 'link2', 'revolute', *j2, axis=(0, 1, 0)))
    model = RobotModel.from_urdf(xml)
    assert model.dof == 2 and model.tip_link == 'link2'
    # hand computation in link1's frame: parallel-axis theorem
    T1b = origin(*f1)
    parts = []
    for m, T, c, r, I in ((m1, np.eye(4), c1, r1, I1), (m2, T1b, c2, r2, I2)):
        Ti = T @ origin(c, r)
        parts.append((m, Ti[:3, 3], Ti[:3, :3] @ I @ Ti[:3, :3].T))
    mass = m1 + m2
    com = (parts[0][0] * parts[0][1] + parts[1][0] * parts[1][1]) / mass
    inertia = sum(Ic + m * (np.dot(c - com, c - com) * np.eye(3) - np.outer(c - com, c - com))
                  for m, c, Ic in parts)
    assert model.mass[0] == pytest.approx(mass, abs=1e-14)
    assert np.allclose(model.com[0], com, atol=1e-14)
    assert np.allclose(model.inertia[0], inertia, atol=1e-14)
    assert np.allclose(model.inertia[0], model.inertia[0].T, atol=0)
    assert model.mass[1] == pytest.approx(m3)
    assert np.allclose(model.inertia[1], I3, atol=1e-15)
    # placements compose across the fixed joints; every link keeps its frame
    assert np.allclose(model.joint_placement[0], origin((0, 0, 0.3), (0, 0, 0)), atol=1e-15)
    assert np.allclose(model.joint_placement[1], T1b @ origin(*f2) @ origin(*j2), atol=1e-14)
    assert model.frames['base_plate'][0] == 0
    assert model.frames['link1b'][0] == 1 and model.frames['link1c'][0] == 1
    assert np.allclose(model.frames['link1c'][1], T1b @ origin(*f2), atol=1e-14)
    assert set(model.link_names) == {'base_link', 'base_plate', 'link1', 'link1b', 'link1c',
                                     'link2'}


def test_urdf_fixed_side_branch_is_merged():
    xml = simple_chain(cam=link('camera', 0.5, com=(0, 0, 0.01)),
                       fcam=joint('fcam', 'b', 'camera', 'fixed', xyz=(0.0, 0.1, 0.05)))
    model = RobotModel.from_urdf(xml)
    assert model.tip_link == 'tool' and model.dof == 3
    assert model.frames['camera'][0] == 1
    assert model.mass[0] == pytest.approx(1.5)


def test_urdf_inertial_rotation_keeps_principal_moments():
    rng = np.random.default_rng(5)
    inertia = random_inertia(rng, 2.0)
    rpy = (0.4, -1.0, 2.2)
    model = RobotModel.from_urdf(robot(link('a'), link('b', 2.0, (0.1, 0.2, 0.3), rpy, inertia),
                                       joint('j', 'a', 'b')))
    R = Rotation.from_euler('xyz', rpy).as_matrix()
    assert np.allclose(model.inertia[0], R @ inertia @ R.T, atol=1e-15)
    assert np.allclose(np.linalg.eigvalsh(model.inertia[0]), np.linalg.eigvalsh(inertia),
                       atol=1e-15)
    assert np.allclose(model.com[0], [0.1, 0.2, 0.3], atol=0)


def point_cloud_inertia(m, r):
    """Mass, COM and inertia about the COM of point masses ``m`` (k,) at ``r`` (k, 3)."""
    mass = m.sum()
    com = (m[:, None] * r).sum(0) / mass
    d = r - com
    inertia = sum(mk * (dk @ dk * np.eye(3) - np.outer(dk, dk)) for mk, dk in zip(m, d))
    return mass, com, inertia


def test_combine_inertia_parallel_axis_theorem(rng):
    m = rng.uniform(0.1, 2.0, 12)
    r = rng.normal(size=(12, 3))
    groups = [slice(0, 3), slice(3, 4), slice(4, 9), slice(9, 12)]
    parts = [point_cloud_inertia(m[g], r[g]) for g in groups]
    mass, com, inertia = combine_inertia(parts)
    ref = point_cloud_inertia(m, r)
    assert mass == pytest.approx(ref[0], abs=1e-14)
    assert np.allclose(com, ref[1], atol=1e-14)
    assert np.allclose(inertia, ref[2], atol=1e-13)
    # two point masses: I = m1 m2 / (m1 + m2) (d^2 E - d d^T) about their common COM
    d = np.array([0.3, -0.1, 0.2])
    mass, com, inertia = combine_inertia([(2.0, np.zeros(3), np.zeros((3, 3))),
                                          (1.0, d, np.zeros((3, 3)))])
    assert np.allclose(com, d / 3.0, atol=1e-15)
    assert np.allclose(inertia, 2.0 / 3.0 * (d @ d * np.eye(3) - np.outer(d, d)), atol=1e-15)
    # massless parts add nothing
    single = (1.5, np.array([0.1, 0.2, 0.3]), np.diag([0.1, 0.2, 0.25]))
    mass, com, inertia = combine_inertia([single, (0.0, np.zeros(3), np.zeros((3, 3)))])
    assert mass == 1.5 and np.allclose(com, single[1]) and np.allclose(inertia, single[2])


def test_base_and_tip_chosen_or_found():
    xml = simple_chain()
    model = RobotModel.from_urdf(xml)
    assert (model.base_link, model.tip_link, model.dof) == ('a', 'tool', 3)
    short = RobotModel.from_urdf(xml, tip_link='c')
    assert (short.base_link, short.tip_link, short.dof) == ('a', 'c', 2)
    upper = RobotModel.from_urdf(xml, base_link='b')
    assert (upper.base_link, upper.tip_link, upper.dof) == ('b', 'tool', 2)
    q = np.array([0.3, -0.4, 0.1])
    T_a_b = model.fk(q, 'b')
    assert np.allclose(upper.fk(q[1:]), np.linalg.inv(T_a_b) @ model.fk(q), atol=1e-14)
    assert np.allclose(short.fk(q[:2]), model.fk(q, 'c'), atol=1e-15)
    # below the tip c, d rides on it with j3 locked at 0 (inside its limits [-1, 1])
    assert dict(short.locked_joints) == {'j3': 0.0} and dict(model.locked_joints) == {}
    assert short.frames['d'][0] == short.frames['tool'][0] == 2
    assert np.allclose(short.fk(q[:2], 'tool'), model.fk([q[0], q[1], 0.0], 'tool'), atol=1e-15)
    assert short.mass[1] == pytest.approx(2.0)
    assert RobotModel.from_urdf(xml, base_link='a', tip_link='tool').tip_link == 'tool'


def test_what_hangs_below_the_tip_rides_on_it():
    # a finger (0.1 kg, prismatic along y) below the tool frame of d (1 kg at d's origin)
    xml = simple_chain(finger=link('finger', 0.1),
                       jf=joint('jf', 'tool', 'finger', 'prismatic', axis=(0, 1, 0)))
    for value in (0.0, 0.5):
        model = RobotModel.from_urdf(xml, tip_link='tool', locked_joints={'jf': value})
        assert model.dof == 3 and model.frames['finger'][0] == 3
        assert dict(model.locked_joints) == {'jf': value}
        assert model.mass[2] == pytest.approx(1.1, abs=1e-15)
        assert np.allclose(model.com[2], np.array([0.1, value, 0.0]) * 0.1 / 1.1, atol=1e-15)
    # without a tip the longest moving chain wins: it now runs to the finger
    assert RobotModel.from_urdf(xml).tip_link == 'finger'


# ---- URDF errors -----------------------------------------------------------------------------

ERROR_CASES = {
    'malformed xml': ('<robot name="r"><link name="a"></robot>', {}, ['malformed']),
    'not xml at all': ('<robot', {}, ['malformed']),
    'no links': ('<robot name="r"/>', {}, ['no <link>']),
    'missing file': ('/no/such/robot.urdf', {}, ['not found', '/no/such/robot.urdf']),
    'unknown base link': (simple_chain(), {'base_link': 'nope'}, ['nope', "'a'"]),
    'unknown tip link': (simple_chain(), {'tip_link': 'gripper'}, ['gripper', "'tool'"]),
    'joint to unknown link': (robot(link('a'), link('b', 1.0), joint('j', 'a', 'zz')), {},
                              ["'j'", "'zz'"]),
    'tip not below base': (simple_chain(), {'base_link': 'c', 'tip_link': 'b'},
                           ["'b'", "'c'", 'not below']),
    'branching without tip': (   # a second arm as long as the first from b on: which one?
        simple_chain(e=link('e', 1.0), f=link('f', 1.0), etool=link('etool'),
                     je=joint('je', 'b', 'e', 'prismatic', xyz=(0, 0.2, 0)),
                     jf=joint('jf', 'e', 'f', xyz=(0, 0.2, 0)),
                     fe=joint('fe', 'f', 'etool', 'fixed')), {},
        ['branching', 'share 1 of 3', "'etool'", "'tool'", 'tip_link']),
    'floating joint': (simple_chain(j2=joint('j2', 'b', 'c', 'floating')), {},
                       ["'j2'", 'floating']),
    'planar joint': (simple_chain(j2=joint('j2', 'b', 'c', 'planar')), {}, ["'j2'", 'planar']),
    'mimic joint in the chain': (
        simple_chain(j2=joint('j2', 'b', 'c', extra='<mimic joint="j1"/>')), {},
        ["'j2'", 'of the chain', 'mimic']),
    'loop': (simple_chain(loop=joint('loop', 'a', 'd', 'fixed')), {}, ['loop', "'d'"]),
    'cycle': (simple_chain(loop=joint('loop', 'd', 'b', 'fixed')), {}, ['loop', "'b'"]),
    'moving link without inertial': (simple_chain(c=link('c')), {},
                                     ["'c'", '<inertial>', 'massless',
                                      'only if it is fixed to a link that has one']),
    'massless group': (simple_chain(d=link('d'), tool=link('tool')), {},
                       ["'d'", 'only if it is fixed to a link that has one']),
    'no moving joint': (robot(link('a'), link('b', 1.0), joint('f', 'a', 'b', 'fixed')), {},
                        ['no moving joint']),
    'revolute without limit': (simple_chain(j2=joint('j2', 'b', 'c', limit=None)), {},
                               ["'j2'", 'limit']),
    'floating joint off the chain': (
        simple_chain(e=link('e', 1.0), je=joint('je', 'c', 'e', 'floating')), {},
        ["'je'", 'floating']),
    'negative effort': (simple_chain(j2=joint('j2', 'b', 'c', limit=(-1.0, 1.0, -5.0, 2.0))),
                        {}, ['effort_limit', "'j2': -5.0"]),
    'negative velocity': (simple_chain(j2=joint('j2', 'b', 'c', limit=(-1.0, 1.0, 5.0, -2.0))),
                          {}, ['velocity_limit', "'j2': -2.0"]),
    'negative damping': (simple_chain(j2=joint('j2', 'b', 'c', dynamics=(-0.5, 0.0))), {},
                         ['damping', "'j2': -0.5"]),
    'negative friction': (simple_chain(j2=joint('j2', 'b', 'c', dynamics=(0.5, -0.1))), {},
                          ['friction', "'j2': -0.1"]),
    'nan limit': (simple_chain(j2=joint('j2', 'b', 'c', limit=(float('nan'), 1.0, 5.0, 2.0))),
                  {}, ["'j2'", 'lower="nan"', 'a number']),
    'nan effort': (simple_chain(j3=joint('j3', 'c', 'd', 'prismatic',
                                         limit=(-1.0, 1.0, float('nan'), 2.0))),
                   {}, ["'j3'", 'effort="nan"']),
    'inverted limits': (simple_chain(j1=joint('j1', 'a', 'b', limit=(1.0, -1.0, 5.0, 2.0))),
                        {}, ["'j1'", 'lower is above upper']),
    # 5 MB of text that is no XML: neither read as a path (too long for one) nor quoted whole
    'not xml': ('x' * 5_000_000, {}, ['not XML', "'xxxxxxxx", '5000000 characters']),
    'too large': (simple_chain() + '<!--' + 'x' * 5_000_000 + '-->', {},
                  ['5001', 'more than the 4000000']),
    'bad path': ('no/such/file.urdf', {}, ['not found', "'no/such/file.urdf'"]),
    # read as mass 0 (its rigid group's total) before: a mass is refused by link and value
    'negative mass': (simple_chain(c=link('c', -1.0)), {},
                      ["link 'c'", 'mass value="-1"', '>= 0']),
    'nan mass': (simple_chain(c=link('c', float('nan'))), {}, ["link 'c'", 'value="nan"']),
    'infinite inertia': (simple_chain(c=link('c', 1.0, inertia=np.diag([np.inf, 1.0, 1.0]))),
                         {}, ["link 'c'", 'not finite']),
    # a file that is there but cannot be read (the kernel answers EIO): was an OSError
    'unreadable file': ('/proc/self/mem', {},
                        ['cannot read', "'/proc/self/mem'", 'Input/output error']),
}

LOCKED_ERRORS = {
    'unknown name': ({'jx': 0.0}, ['unknown', "'jx'", "['je']"]),
    'chain joint': ({'j2': 0.0}, ['chain', "'j2'", "['je']"]),
    'fixed joint': ({'ft': 0.0}, ['fixed', "'ft'"]),
    'above the base': ({'j1': 0.0, 'je': 0.1}, ["'j1'", "not below 'b'"]),
    'outside the limits': ({'je': 1.5}, ["'je'", '1.5', 'limits [-1.0, 1.0]']),
    'not a number': ({'je': 'open'}, ["'je'", "'open'"]),
    'nan': ({'je': np.nan}, ["'je'", 'nan']),
}


@pytest.mark.parametrize('case', sorted(ERROR_CASES))
def test_urdf_errors_name_the_problem(case):
    source, kwargs, words = ERROR_CASES[case]
    with pytest.raises(ModelError) as info:
        RobotModel.from_urdf(source, **kwargs)
    assert isinstance(info.value, ValueError) and len(str(info.value)) < 1000
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_a_urdf_file_not_text_or_too_long_is_a_model_error(tmp_path):
    path = tmp_path / 'arm.urdf'
    path.write_bytes(b'<robot name="r">\xff\xfe</robot>')
    with pytest.raises(ModelError, match=f"cannot read URDF file '{path}': not UTF-8 text"):
        RobotModel.from_urdf(str(path))
    # a file past the bound is read no further than one character past it
    path.write_text(simple_chain() + '<!--' + 'x' * 5_000_000 + '-->')
    with pytest.raises(ModelError, match=f"the file '{path}' has more than the 4000000 "):
        RobotModel.from_urdf(str(path))


@pytest.mark.parametrize('case', sorted(LOCKED_ERRORS))
def test_locked_joints_errors_name_the_joints(case):
    locked, words = LOCKED_ERRORS[case]
    xml = simple_chain(e=link('e', 1.0), je=joint('je', 'c', 'e', xyz=(0, 0.2, 0)))
    base = 'b' if case == 'above the base' else None
    with pytest.raises(ModelError) as info:
        RobotModel.from_urdf(xml, base_link=base, tip_link='tool', locked_joints=locked)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_massless_moving_link_is_fine_when_a_fixed_link_carries_mass():
    model = RobotModel.from_urdf(simple_chain(d=link('d'), tool=link('tool', 0.4)))
    assert model.mass[2] == pytest.approx(0.4)
    assert np.allclose(model.com[2], [0.1, 0.0, 0.0])


def test_moving_branch_at_the_fixed_base_is_locked_when_base_and_tip_are_given():
    # e.g. two arms on one fixed torso: the chain torso -> right hand must load on its own
    xml = robot(link('torso', 10.0), link('l1', 1.0), link('l2', 1.0), link('r1', 1.0),
                link('r2', 1.0), joint('lj1', 'torso', 'l1', xyz=(0, 0.2, 0)),
                joint('lj2', 'l1', 'l2', xyz=(0.3, 0, 0)),
                joint('rj1', 'torso', 'r1', xyz=(0, -0.2, 0)),
                joint('rj2', 'r1', 'r2', xyz=(0.3, 0, 0)))
    model = RobotModel.from_urdf(xml, base_link='torso', tip_link='r2')
    assert list(model.joint_names) == ['rj1', 'rj2']
    assert dict(model.locked_joints) == {'lj1': 0.0, 'lj2': 0.0}
    assert model.frames['l2'][0] == 0
    with pytest.raises(ModelError, match='branching'):     # which arm? both have two joints
        RobotModel.from_urdf(xml)


def test_moving_branch_off_a_chain_link_is_locked_and_merged():
    # e (1 kg, COM 0.1 m along its x) turns about z on c, 0.2 m along c's y; c is 1 kg at its
    # origin: their common COM in c's frame is half of e's COM
    xml = simple_chain(e=link('e', 1.0, com=(0.1, 0, 0)),
                       je=joint('je', 'c', 'e', xyz=(0, 0.2, 0), limit=(0.2, 1.0, 1.0, 1.0)))
    for given, value in ((None, 0.2), ({'je': 0.7}, 0.7)):     # default: 0 clipped to [0.2, 1]
        model = RobotModel.from_urdf(xml, tip_link='tool', locked_joints=given)
        assert dict(model.locked_joints) == {'je': value}
        e_com = np.array([0.1 * np.cos(value), 0.2 + 0.1 * np.sin(value), 0.0])
        assert model.mass[1] == pytest.approx(2.0)
        assert np.allclose(model.com[1], e_com / 2, atol=1e-15)
        assert np.allclose(model.frames['e'][1], origin((0, 0.2, 0), (0, 0, value)), atol=1e-15)


def test_tip_rule_fingers_are_locked_and_ties_go_by_name():
    fingers = {'f1': link('f1', 0.1), 'f2': link('f2', 0.1), 'flange': link('flange'),
               'jf1': joint('jf1', 'tool', 'f1', 'prismatic', axis=(0, 1, 0)),
               'jf2': joint('jf2', 'tool', 'f2', 'prismatic', axis=(0, -1, 0)),
               'ff': joint('ff', 'd', 'flange', 'fixed', xyz=(0.05, 0, 0))}
    # the two longest moving chains share j1 j2 j3 and add one finger joint each: a hand
    model = RobotModel.from_urdf(simple_chain(**fingers))
    assert list(model.joint_names) == ['j1', 'j2', 'j3']
    assert dict(model.locked_joints) == {'jf1': 0.0, 'jf2': 0.0}
    # links of d's body without a fixed child: tool (its children move) and flange; by name
    assert model.tip_link == 'flange'
    assert model.mass[2] == pytest.approx(1.2)


def test_mimic_on_a_fixed_joint_is_ignored_and_off_the_chain_follows_its_master():
    xml = simple_chain(
        f1=link('f1', 0.1), f2=link('f2', 0.1), pad=link('pad', 0.05),
        jf1=joint('jf1', 'c', 'f1', 'prismatic', axis=(0, 1, 0)),
        jf2=joint('jf2', 'c', 'f2', 'prismatic', axis=(0, 1, 0),
                  extra='<mimic joint="jf1" multiplier="-1" offset="0.01"/>'),
        fpad=joint('fpad', 'f2', 'pad', 'fixed', extra='<mimic joint="jf1"/>'))
    model = RobotModel.from_urdf(xml, tip_link='tool')
    assert dict(model.locked_joints) == {'jf1': 0.0, 'jf2': 0.01}
    model = RobotModel.from_urdf(xml, tip_link='tool', locked_joints={'jf1': 0.3})
    assert model.locked_joints['jf2'] == pytest.approx(-0.29, abs=1e-15)
    assert np.allclose(model.frames['pad'][1][:3, 3], [0.0, -0.29, 0.0], atol=1e-15)
    # a value given for the mimic joint itself wins
    model = RobotModel.from_urdf(xml, tip_link='tool', locked_joints={'jf1': 0.3, 'jf2': 0.5})
    assert dict(model.locked_joints) == {'jf1': 0.3, 'jf2': 0.5}


def test_one_log_line_per_load_and_parser_messages_at_debug(caplog, capsys):
    from urdf_parser_py import xml_reflection
    hooks = xml_reflection.on_error, xml_reflection.core.on_error
    xml = simple_chain(e=link('e', 1.0), je=joint('je', 'c', 'e', extra='<foo/>'),
                       j2=joint('j2', 'b', 'c', limit=(-1.0, 1.0, 0.0, 0.0)))
    xml = xml.replace('<robot name="test_robot">', '<robot name="test_robot" D="1">')
    with caplog.at_level('DEBUG', logger='robot_dynamics.urdf'):
        model = RobotModel.from_urdf(xml, tip_link='tool')
    assert capsys.readouterr().err == ''                    # nothing printed by the parser
    infos = [r for r in caplog.records if r.levelname == 'INFO']
    debugs = [r for r in caplog.records if r.levelname == 'DEBUG']
    assert len(infos) == 1 and len(debugs) == 1
    assert "'je': 0.0" in infos[0].getMessage() and "'a' -> 'tool'" in infos[0].getMessage()
    assert "['j2.velocity', 'j2.effort']" in infos[0].getMessage()
    assert 'Unknown attribute "D"' in debugs[0].getMessage()
    assert 'Unknown tag "foo"' in debugs[0].getMessage()
    assert (xml_reflection.on_error, xml_reflection.core.on_error) == hooks   # restored
    with pytest.raises(ModelError):
        RobotModel.from_urdf('<robot name="r"><link name="a"></robot>')
    assert (xml_reflection.on_error, xml_reflection.core.on_error) == hooks
    # URDF has no way to leave effort and velocity out: 0 means "not given", i.e. no limit
    assert model.effort_limit[1] == model.velocity_limit[1] == np.inf
    assert model.effort_limit[0] == 10.0 and model.velocity_limit[0] == 2.0


def test_argument_errors_are_value_errors():
    for cls in (ModelError, InputError, ShapeError):
        assert issubclass(cls, ValueError)
    model = RobotModel.load('planar_2r')
    with pytest.raises(ShapeError, match=r'q: expected shape \(\.\.\., 2\), got \(3,\)'):
        model.fk([0.0, 0.0, 0.0])
    with pytest.raises(InputError, match='non-finite'):
        model.jacobian([0.0, np.nan])
    with pytest.raises(InputError, match="'nope'"):
        model.fk([0.0, 0.0], link='nope')


# ---- DH tables and their YAML format ---------------------------------------------------------


def dh_row(a=0.0, alpha=0.0, d=0.0, theta=0.0, kind='revolute', **extra):
    return dict(a=a, alpha=alpha, d=d, theta=theta, type=kind, **extra)


def test_dh_yaml_format(tmp_path):
    base = {'xyz': [0.1, -0.2, 0.5], 'rpy': [0.0, 0.0, 0.3]}
    tool = origin((0.0, 0.0, 0.12), (0.1, 0.0, 0.0))
    doc = {
        'name': 'yaml_arm', 'convention': 'standard', 'gravity': [0.0, -9.81, 0.0],
        'base': base, 'tool': tool.tolist(),
        'joints': [
            dict(dh_row(0.2, np.pi / 2, 0.3, 0.1), name='shoulder', link='upper', mass=3.0,
                 com=[-0.1, 0.0, 0.02], inertia=[0.1, 0.01, 0.0, 0.2, 0.0, 0.3], lower=-2.0,
                 upper=2.5, effort=80.0, velocity=2.0, damping=0.4, friction=0.3),
            dict(dh_row(0.25, 0.0, 0.0, -0.2), name='elbow', mass=2.0,
                 inertia=[[0.05, 0.0, 0.0], [0.0, 0.06, 0.0], [0.0, 0.0, 0.02]]),
            dict(dh_row(0.0, 0.0, 0.05, 0.0, 'prismatic'), name='slide', lower=0.0, upper=0.2,
                 mass=0.5),
        ]}
    path = tmp_path / 'yaml_arm.dh.yaml'
    path.write_text(yaml.safe_dump(doc))
    model = RobotModel.from_dh(str(path))
    assert model.name == 'yaml_arm'
    assert np.allclose(model.gravity, [0.0, -9.81, 0.0])
    assert list(model.joint_names) == ['shoulder', 'elbow', 'slide']
    # a revolute row without limits is continuous
    assert tuple(model.joint_types) == ('revolute', 'continuous', 'prismatic')
    assert np.allclose(model.lower, [-2.0, -np.inf, 0.0])
    assert np.allclose(model.upper, [2.5, np.inf, 0.2])
    assert np.allclose(model.effort_limit[0], 80.0) and np.allclose(model.velocity_limit[0], 2.0)
    assert np.allclose(model.damping, [0.4, 0.0, 0.0])
    assert np.allclose(model.friction, [0.3, 0.0, 0.0])
    assert np.allclose(model.mass, [3.0, 2.0, 0.5])
    assert 'upper' in model.link_names and 'link2' in model.link_names
    q = np.array([0.3, -0.7, 0.05])
    T = origin(base['xyz'], base['rpy'])
    Ts = []
    for r, qi in zip(doc['joints'], q):
        prismatic = r['type'] == 'prismatic'
        T = T @ dh_transform(r['a'], r['alpha'], r['d'] + (qi if prismatic else 0.0),
                             r['theta'] + (0.0 if prismatic else qi))
        Ts.append(T)
    assert np.allclose(model.fk(q, 'link0'), origin(base['xyz'], base['rpy']), atol=1e-15)
    assert np.allclose(model.fk(q, 'upper'), Ts[0], atol=1e-14)
    assert np.allclose(model.fk(q, 'link2'), Ts[1], atol=1e-14)
    assert np.allclose(model.fk(q), Ts[2] @ tool, atol=1e-14)
    # COM and inertia are given in the row's link frame: compare them in the base frame
    body = model.fk(q, 'upper_proximal')          # body frame of joint 1 (standard DH)
    com_base = body[:3, :3] @ model.com[0] + body[:3, 3]
    assert np.allclose(com_base, Ts[0][:3, :3] @ [-0.1, 0.0, 0.02] + Ts[0][:3, 3], atol=1e-14)
    I_row = np.array([[0.1, 0.01, 0.0], [0.01, 0.2, 0.0], [0.0, 0.0, 0.3]])
    assert np.allclose(body[:3, :3] @ model.inertia[0] @ body[:3, :3].T,
                       Ts[0][:3, :3] @ I_row @ Ts[0][:3, :3].T, atol=1e-14)
    # the same table as a list of rows: default name and gravity, no base or tool
    plain = RobotModel.from_dh(doc['joints'])
    assert np.allclose(plain.gravity, [0.0, 0.0, -9.81])
    assert np.allclose(plain.fk(q), np.linalg.inv(origin(base['xyz'], base['rpy'])) @
                       model.fk(q) @ np.linalg.inv(tool), atol=1e-13)


def test_dh_base_and_tool_as_matrix_or_xyz_rpy():
    rows = [dh_row(0.3, 0.5, 0.1), dh_row(0.2, -0.4, 0.0)]
    xyz, rpy = [0.1, 0.2, 0.3], [0.4, -0.5, 0.6]
    a = RobotModel.from_dh({'joints': rows, 'base': {'xyz': xyz, 'rpy': rpy},
                            'tool': {'xyz': xyz}})
    b = RobotModel.from_dh({'joints': rows, 'base': origin(xyz, rpy).tolist(),
                            'tool': origin(xyz, (0, 0, 0)).tolist()})
    q = [0.3, 0.2]
    assert np.allclose(a.fk(q), b.fk(q), atol=1e-15)


def test_dh_convention_from_file_or_argument(tmp_path):
    rows = [dh_row(0.3, 0.5, 0.1), dh_row(0.2, -0.4, 0.05)]
    path = tmp_path / 'two.dh.yaml'
    path.write_text(yaml.safe_dump({'convention': 'modified', 'joints': rows}))
    q = [0.3, -0.2]
    modified = RobotModel.from_dh(rows, convention='modified')
    assert np.allclose(RobotModel.from_dh(str(path)).fk(q), modified.fk(q), atol=0)
    assert np.allclose(RobotModel.from_dh(str(path), convention='standard').fk(q),
                       RobotModel.from_dh(rows).fk(q), atol=0)
    assert not np.allclose(modified.fk(q), RobotModel.from_dh(rows).fk(q))


DH_ERRORS = {
    'missing key': ([{'a': 1, 'alpha': 0, 'd': 0, 'type': 'revolute'}], ['row 1', 'theta']),
    'unknown type': ([dh_row(), dh_row(kind='spherical')], ['row 2', 'spherical']),
    'unknown key': ([dh_row(offset=0.1)], ['row 1', 'offset']),
    'empty table': ([], ['no rows']),
    'row not a mapping': ([[0.1, 0.2, 0.3, 0.4]], ['row 1', 'mapping']),
    'non-numeric a': ([dh_row(a='long')], ['row 1', 'number']),
    'bad inertia': ([dh_row(inertia=[1.0, 2.0, 3.0])], ['row 1', 'inertia']),
    'bad base': ({'joints': [dh_row()], 'base': {'xyz': [0, 0, 1], 'yaw': 1}}, ['base', 'yaw']),
    'bad tool': ({'joints': [dh_row()], 'tool': [[1, 0], [0, 1]]}, ['tool', '4x4']),
    'bad gravity': ({'joints': [dh_row()], 'gravity': [0, -9.81]}, ['gravity']),
    'negative mass': ([dh_row(mass=-1.0)], ['mass']),
}


def test_dh_duplicate_link_names_raise():
    # Bug (see the report): a row's ``link`` name that another frame already uses silently
    # replaces that frame, so fk(q, name) returns the wrong frame.
    rows = [dh_row(0.5, 0.3, 0.2, link='arm'), dh_row(0.4, -0.2, 0.1, link='arm')]
    with pytest.raises(ModelError, match="'arm'"):
        RobotModel.from_dh(rows)
    with pytest.raises(ModelError, match="'link2'"):
        RobotModel.from_dh([dh_row(0.5, link='link2'), dh_row(0.4)])   # default name of row 2
    with pytest.raises(ModelError, match="'tool0'"):
        RobotModel.from_dh([dh_row(0.5, link='tool0'), dh_row(0.4)])


def test_dh_unknown_convention():
    with pytest.raises(ModelError, match='craig'):
        RobotModel.from_dh([dh_row()], convention='craig')
    with pytest.raises(ModelError, match='convention'):
        dh_transform(0.1, 0.2, 0.3, 0.4, convention='distal')


@pytest.mark.parametrize('text, words', [
    ('joints: [\n', ['malformed YAML']),
    ('- {a: 1}\n', ['joints']),
    ('name: x\n', ['joints']),
])
def test_dh_yaml_file_errors(tmp_path, text, words):
    path = tmp_path / 'bad.dh.yaml'
    path.write_text(text)
    with pytest.raises(ModelError) as info:
        RobotModel.from_dh(str(path))
    for word in words + [str(path)]:
        assert word in str(info.value)
    with pytest.raises(ModelError, match='not found'):
        RobotModel.from_dh(str(tmp_path / 'missing.dh.yaml'))


# Malformed values inside a DH table must give a ModelError naming the row and the key, like
# the cases above; these currently leak TypeError/KeyError or numpy's messages (bug, see the
# report): dh.py converts them with bare float()/np.asarray() and never checks them.
DH_VALUE_ERRORS = {
    'joints not a list': ({'joints': 5}, ['joints']),
    'no joints key': ({'name': 'arm'}, ['joints']),
    'com of length 2': ([dh_row(com=[0.1, 0.2])], ['row 1', 'com']),
    'non-numeric mass': ([dh_row(mass='heavy')], ['row 1', 'mass']),
    'non-numeric limit': ([dh_row(lower='low', upper=1.0)], ['row 1', 'lower']),
    'nan a': ([dh_row(a=float('nan'))], ['row 1', 'a']),
    'non-numeric gravity': ({'joints': [dh_row()], 'gravity': 'down'}, ['gravity']),
    'non-numeric tool': ({'joints': [dh_row()], 'tool': 'flange'}, ['tool']),
}


@pytest.mark.parametrize('case', sorted(DH_ERRORS) + sorted(DH_VALUE_ERRORS))
def test_dh_errors_name_the_problem(case):
    source, words = {**DH_ERRORS, **DH_VALUE_ERRORS}[case]
    with pytest.raises(ModelError) as info:
        RobotModel.from_dh(source)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


# ---- to_urdf round trip ----------------------------------------------------------------------


@lru_cache(maxsize=None)
def random_chains():
    return random_models(10, seed=23, min_joints=1, max_joints=8, fixed_prob=0.3)


def round_trip_cases():
    return [pytest.param(name, id=name) for name in RobotModel.available()] + \
        [pytest.param(i, id=f'random{i}') for i in range(10)]


def assert_same_model(a, b, tol=1e-12):
    assert list(a.joint_names) == list(b.joint_names)
    assert tuple(a.joint_types) == tuple(b.joint_types)
    assert (a.base_link, a.tip_link) == (b.base_link, b.tip_link)
    assert np.allclose(a.joint_placement, b.joint_placement, atol=tol, rtol=0)
    assert np.allclose(a.joint_axis, b.joint_axis, atol=tol, rtol=0)
    for field in ('mass', 'inertia'):
        assert np.allclose(getattr(a, field), getattr(b, field), atol=tol, rtol=0), field
    massive = a.mass > 0                        # the COM of a massless body means nothing
    assert np.allclose(a.com[massive], b.com[massive], atol=tol, rtol=0)
    for field in ('lower', 'upper', 'velocity_limit', 'effort_limit', 'damping', 'friction'):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert set(a.frames) == set(b.frames)
    for name, (body, T) in a.frames.items():
        assert b.frames[name][0] == body, name
        assert np.allclose(b.frames[name][1], T, atol=tol, rtol=0), name


@pytest.mark.parametrize('case', round_trip_cases())
def test_to_urdf_round_trip(case, rng):
    model = RobotModel.load(case) if isinstance(case, str) else random_chains()[case][1]
    xml = model.to_urdf()
    back = RobotModel.from_urdf(xml)                   # no base/tip arguments needed
    assert_same_model(model, back)
    assert back.name == model.name
    q = random_q(rng, model, (4,))
    for link in model.link_names:
        assert np.allclose(back.fk(q, link), model.fk(q, link), atol=1e-12)
    # and again: the export of the export is the same model
    assert_same_model(model, RobotModel.from_urdf(back.to_urdf()))


def test_to_urdf_of_a_massless_dh_model():
    model = RobotModel.from_dh([dh_row(0.5, 0.0, 0.3), dh_row(0.4, np.pi, 0.2),
                                dh_row(0.0, np.pi, 0.0, kind='prismatic')])
    back = RobotModel.from_urdf(model.to_urdf())
    assert_same_model(model, back)


# ---- bundled robots and the immutable model -----------------------------------------------------


def test_bundled_robots_are_available():
    names = RobotModel.available()
    assert names == sorted(names)
    for name in ('scara', 'planar_2r', 'rp_arm', 'puma560', 'iiwa14'):
        assert name in names
    with pytest.raises(InputError) as info:
        RobotModel.load('r2d2')
    assert 'r2d2' in str(info.value) and 'scara' in str(info.value)
    assert isinstance(info.value, ValueError)


# Published parameters kept as published although no rigid body has them: the PUMA 560's link 3
# (Armstrong, Khatib, Burdick 1986; Corke's Puma560) has Ixx + Izz = 0.0785 < Iyy = 0.086, and
# its massless link 1 carries only a rotor inertia about the joint axis (skipped as m = 0).
PUBLISHED_INCONSISTENT = {('puma560', 'joint3')}


@pytest.mark.parametrize('name', RobotModel.available())
def test_bundled_robot_is_consistent(name):
    model = RobotModel.load(name)
    assert model.dof == len(model.joint_names) == len(model.joint_types)
    for field in ('lower', 'upper', 'velocity_limit', 'effort_limit', 'damping', 'friction'):
        assert getattr(model, field).shape == (model.dof,)
    assert np.all(model.lower <= model.upper)
    assert np.all(model.velocity_limit > 0) and np.all(model.effort_limit > 0)
    assert np.all(np.isfinite(model.velocity_limit)) and np.all(np.isfinite(model.effort_limit))
    assert np.all(model.mass >= 0) and model.mass.sum() > 0
    assert model.gravity.shape == (3,)
    assert model.base_link in model.link_names and model.tip_link in model.link_names
    for joint, m, I in zip(model.joint_names, model.mass, model.inertia):
        assert np.allclose(I, I.T, atol=0)
        eig = np.linalg.eigvalsh(I)
        assert eig.min() >= -1e-12
        if m > 0 and (name, joint) not in PUBLISHED_INCONSISTENT:
            # triangle inequality of the principal moments of a real body
            assert eig[0] + eig[1] >= eig[2] - 1e-12, joint


def test_bundled_planar_2r_has_the_seed_parameters():
    model = RobotModel.load('planar_2r')
    assert model.dof == 2 and tuple(model.joint_types) == ('revolute', 'revolute')
    assert np.allclose(model.joint_axis, [[0, -1, 0], [0, -1, 0]])        # x-z plane
    assert np.allclose(model.gravity, [0, 0, -9.81])
    assert np.allclose(model.joint_placement[0], np.eye(4))
    assert np.allclose(model.joint_placement[1][:3, 3], [2.0, 0.0, 0.0])   # l1 = 2
    assert np.allclose(model.joint_placement[1][:3, :3], np.eye(3))
    assert model.frames[model.tip_link][0] == 2
    assert np.allclose(model.frames[model.tip_link][1][:3, 3], [2.0, 0.0, 0.0])   # l2 = 2
    assert np.allclose(model.mass, [2.0, 1.0])                             # m1, m2
    assert np.allclose(model.com, [[1.0, 0, 0], [1.0, 0, 0]])              # lCG1, lCG2
    # Izz1 = 3, Izz2 = 1 about the COM, around the joint-axis direction
    axis = model.joint_axis
    assert np.allclose([axis[i] @ model.inertia[i] @ axis[i] for i in range(2)], [3.0, 1.0])
    # Hayes' mass matrix M(q2 = pi/3) = [[13, 3], [3, 2]] from these parameters (§5.4)
    m, lc, l1, Izz = model.mass, model.com[:, 0], 2.0, [3.0, 1.0]
    c2 = np.cos(np.pi / 3)
    M11 = Izz[0] + Izz[1] + m[0] * lc[0] ** 2 + m[1] * lc[1] ** 2 + m[1] * l1 ** 2 + \
        2 * m[1] * l1 * lc[1] * c2
    assert M11 == pytest.approx(13.0)


def test_bundled_rp_arm_and_scara_shapes():
    rp = RobotModel.load('rp_arm')
    assert tuple(rp.joint_types) == ('revolute', 'prismatic')
    assert np.allclose(rp.mass, [1.0, 2.0])
    scara = RobotModel.load('scara')
    assert tuple(scara.joint_types) == ('revolute', 'revolute', 'prismatic')
    puma = RobotModel.load('puma560')
    assert puma.dof == 6 and RobotModel.load('iiwa14').dof == 7


def test_model_arrays_are_read_only():
    model = RobotModel.load('planar_2r')
    for field in ('joint_placement', 'joint_axis', 'mass', 'com', 'inertia', 'lower', 'upper',
                  'velocity_limit', 'effort_limit', 'damping', 'friction', 'gravity'):
        array = getattr(model, field)
        assert not array.flags.writeable, field
        with pytest.raises(ValueError):
            array[0] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.mass = np.ones(2)
    with pytest.raises(TypeError):
        model.frames['new'] = (0, np.eye(4))
    with pytest.raises(ValueError):
        model.frames[model.tip_link][1][0, 0] = 2.0


def test_model_does_not_share_the_callers_arrays():
    model = RobotModel.load('planar_2r')
    mass = np.array([4.0, 2.0])
    heavy = model.replace(mass=mass)
    mass[0] = 100.0
    assert np.allclose(heavy.mass, [4.0, 2.0])
    assert np.allclose(model.mass, [2.0, 1.0])                # the original is untouched
    assert not heavy.mass.flags.writeable


@pytest.mark.parametrize('changes, words', [
    ({'mass': [-1.0, 1.0]}, ['mass']),
    ({'mass': [1.0, 2.0, 3.0]}, ['mass', '(2,)', '(3,)']),
    ({'mass': [np.nan, 1.0]}, ['mass', 'nan']),
    ({'lower': [5.0, 5.0]}, ['lower', 'joint1']),
    ({'joint_axis': [[0, 0, 0], [0, -1, 0]]}, ['axis', 'joint1']),
    ({'inertia': -np.ones((2, 1, 1)) * np.eye(3)}, ['inertia']),
    ({'joint_names': ('j', 'j')}, ['unique']),
    ({'joint_types': ('revolute', 'ball')}, ['ball']),
    ({'tip_link': 'nope'}, ['nope']),
    ({'gravity': [0.0, -9.81]}, ['gravity']),
    ({'effort_limit': [-1.0, 5.0]}, ['effort_limit', '> 0', "'joint1': -1.0"]),
    ({'effort_limit': [5.0, 0.0]}, ['effort_limit', 'inf: no limit', "'joint2': 0.0"]),
    ({'velocity_limit': [0.0, -2.0]}, ['velocity_limit', "'joint1': 0.0", "'joint2': -2.0"]),
    ({'damping': [0.0, -0.1]}, ['damping', '>= 0', "'joint2': -0.1"]),
    ({'friction': [-0.3, 0.0]}, ['friction', "'joint1': -0.3"]),
    ({'locked_joints': {'joint1': 0.0}}, ['locked_joints', 'joint1']),
    ({'locked_joints': {'finger': np.inf}}, ['locked_joints', 'finite']),
])
def test_replace_validates(changes, words):
    model = RobotModel.load('planar_2r')
    with pytest.raises(ModelError) as info:
        model.replace(**changes)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_replace_keeps_everything_else():
    model = RobotModel.load('puma560')
    lighter = model.replace(mass=model.mass * 0.5)
    assert np.allclose(lighter.mass, model.mass * 0.5)
    assert lighter.joint_names == model.joint_names
    q = np.linspace(-0.5, 0.5, 6)
    assert np.allclose(lighter.fk(q), model.fk(q), atol=0)
    moved = model.replace(gravity=[0.0, 0.0, 9.81])
    assert np.allclose(moved.gravity, [0.0, 0.0, 9.81])
    # the derived constants follow the change
    half = model.replace(mass=model.mass * 0.5, inertia=model.inertia * 0.5)
    assert np.allclose(half.mass_matrix(q), 0.5 * model.mass_matrix(q), atol=1e-14)


def test_every_attribute_is_a_declared_field():
    fields = {f.name: f for f in dataclasses.fields(RobotModel)}
    for name in ('derived', 'is_prismatic', 'task_mask'):
        assert not fields[name].init and not fields[name].repr, name
    assert fields['locked_joints'].init
    model = RobotModel.from_urdf(simple_chain(e=link('e', 1.0), je=joint('je', 'c', 'e')),
                                 tip_link='tool', locked_joints={'je': 0.5})
    assert set(vars(model)) == set(fields)
    with pytest.raises(TypeError):
        model.locked_joints['je'] = 0.0
    copy = model.replace(mass=model.mass * 2)
    assert dict(copy.locked_joints) == {'je': 0.5}
    assert np.array_equal(copy.is_prismatic, [False, False, True])
    with pytest.raises(ValueError):
        model.replace(derived=None)


def test_joint_indices_reorders_by_name(bundled):
    model = bundled['puma560']
    names = list(model.joint_names)
    shuffled = [names[i] for i in (3, 0, 5, 1, 4, 2)]
    idx = model.joint_indices(shuffled)
    np.testing.assert_array_equal(idx, [3, 0, 5, 1, 4, 2])
    values = np.arange(6.0) * 10.0        # given in the order of `shuffled`
    in_model_order = np.empty(6)
    in_model_order[idx] = values
    assert [in_model_order[names.index(j)] for j in shuffled] == values.tolist()


@pytest.mark.parametrize('names, words', [
    (['joint1'], ['missing', 'joint2']),
    (['joint1', 'joint2', 'elbow'], ['unknown', 'elbow']),
    (['joint1', 'joint2', 'joint2'], ['repeated', 'joint2']),
])
def test_joint_indices_errors_name_the_joints(planar_2r, names, words):
    with pytest.raises(InputError) as err:
        planar_2r.joint_indices(names)
    assert all(w in str(err.value) for w in words)


def test_joint_indices_of_a_huge_list_say_it_short(planar_2r):
    # 100,000 names (a goal from a fuzzer) and a 1 MB name: linear in the names (a quadratic
    # count took seconds for 10,000), and the message quotes a few, shortened
    names = ['joint1', 'joint2'] + [f'j{k}' for k in range(100_000)] + ['y' * 1_000_000]
    with pytest.raises(InputError) as err:
        planar_2r.joint_indices(names)
    message = str(err.value)
    assert len(message) < 600, message
    assert message.startswith('100003 joint names do not match')
    assert "'j0', 'j1', 'j2', 'j3', 'j4'] and 99996 more" in message
    with pytest.raises(InputError) as err:
        planar_2r.joint_indices(['joint1', 'jiont2'])
    assert "unknown ['jiont2'] (closest to the unknown: ['joint2'" in str(err.value)
    np.testing.assert_array_equal(planar_2r.indices_in(['x'] * 100_000 + ['joint2', 'joint1']),
                                  [100_001, 100_000])


def test_indices_in_ignores_extra_joints_and_names_missing_ones(planar_2r):
    names = ['gripper', 'joint2', 'head', 'joint1']
    idx = planar_2r.indices_in(names)
    np.testing.assert_array_equal(idx, [3, 1])
    positions = np.array([0.04, 0.2, -1.0, 0.1])
    np.testing.assert_array_equal(positions[idx], [0.1, 0.2])
    with pytest.raises(InputError, match=r"missing \['joint1'\]"):
        planar_2r.indices_in(['joint2', 'gripper'])
    with pytest.raises(InputError, match='repeated'):
        planar_2r.indices_in(['joint1', 'joint2', 'joint1'])


@pytest.mark.parametrize('shape', [(), (5,), (2, 3)])
def test_link_poses_equal_fk_of_each_link(bundled_model, rng, shape):
    q = random_q(rng, bundled_model, shape)
    poses = bundled_model.link_poses(q)
    assert poses.shape == shape + (len(bundled_model.link_names), 4, 4)
    for k, link in enumerate(bundled_model.link_names):
        np.testing.assert_allclose(poses[..., k, :, :], bundled_model.fk(q, link),
                                   rtol=0, atol=1e-14)


def test_warm_up_leaves_the_model_usable(planar_2r):
    assert planar_2r.warm_up() >= 0.0
    # Hayes' worked example (§5.4): M at q2 = pi/3
    np.testing.assert_allclose(planar_2r.mass_matrix([0.3, np.pi / 3]),
                               [[13.0, 3.0], [3.0, 2.0]], atol=1e-12)


def test_joint_frames_sit_on_the_joint_axes(bundled_model, rng):
    model = bundled_model
    q = random_q(rng, model, (4,))
    frames = model.joint_frames(q)
    assert frames.shape == (4, model.dof, 4, 4)
    J = model.jacobian(q)
    for i in range(model.dof):
        z = (frames[:, i, :3, :3] @ model.joint_axis[i])
        if model.joint_types[i] == 'prismatic':
            np.testing.assert_allclose(J[:, :3, i], z, atol=1e-12)
        else:
            # a revolute column is [z x (p_tip - o); z] with o any point on the axis
            p = model.fk(q)[:, :3, 3]
            o = frames[:, i, :3, 3]
            np.testing.assert_allclose(J[:, 3:, i], z, atol=1e-12)
            np.testing.assert_allclose(J[:, :3, i], np.cross(z, p - o), atol=1e-12)
