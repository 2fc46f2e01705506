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
Robot models from URDF (parsed with urdfdom-py's ``urdf_parser_py``) and back to URDF.

Supported: revolute, continuous, prismatic and fixed joints; joint origin xyz/rpy; any axis;
inertial origin and full inertia tensor; limits; dynamics damping/friction. Links fixed to a
moving body (and everything fixed before the first moving joint) are merged into that body,
inertia included. Mimic, floating and planar joints, loops, moving branches off the chain and
moving links with no inertial anywhere in their rigid group are rejected with a ``ModelError``.
"""

from pathlib import Path
import xml.etree.ElementTree as ET

import numpy as np

from .errors import ModelError
from .model import RobotModel
from .spatial import matrix_to_rpy, transform, xyz_rpy_to_transform

MOVING = ('revolute', 'continuous', 'prismatic')
# urdfdom (Pinocchio, robot_state_publisher) rejects "inf": unbounded limits are written as this
_FLOAT_MAX = np.finfo(float).max


def _parse(source):
    try:
        from urdf_parser_py.urdf import URDF
    except ImportError:  # pragma: no cover - declared dependency
        raise ModelError('reading URDF needs urdfdom-py (pip install urdfdom-py)') from None
    text = str(source)
    if not text.lstrip().startswith('<'):
        path = Path(text)
        if not path.is_file():
            raise ModelError(f'URDF file not found: {text!r} (pass a path or an XML string)')
        text = path.read_text()
    try:
        # bytes, because lxml refuses a str that carries an encoding declaration
        robot = URDF.from_xml_string(text.encode())
    except Exception as exc:  # noqa: B902 - lxml and urdf_parser_py raise unrelated types
        first = str(exc).strip().splitlines()
        raise ModelError(f'malformed URDF: {" ".join(first)}') from None
    if not robot.links:
        raise ModelError('malformed URDF: no <link> elements')
    return robot


def _origin(elem):
    if elem is None:
        return np.eye(4)
    xyz = elem.xyz if elem.xyz is not None else (0.0, 0.0, 0.0)
    rpy = elem.rpy if elem.rpy is not None else (0.0, 0.0, 0.0)
    return xyz_rpy_to_transform(xyz, rpy)


def _body_inertia(link):
    """Return (mass, com, inertia about COM) of a link in its own frame, or None."""
    inertial = link.inertial
    if inertial is None:
        return None
    T = _origin(inertial.origin)
    i = inertial.inertia
    tensor = np.zeros((3, 3)) if i is None else np.array(
        [[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]], dtype=float)
    R = T[:3, :3]
    return float(inertial.mass or 0.0), T[:3, 3].copy(), R @ tensor @ R.T


def combine_inertia(parts):
    """Merge rigid parts ``(mass, com, inertia about com)`` given in one frame (parallel axis)."""
    m = sum(p[0] for p in parts)
    if m <= 0.0:
        return 0.0, np.zeros(3), sum((p[2] for p in parts), np.zeros((3, 3)))
    c = sum(p[0] * p[1] for p in parts) / m
    inertia = np.zeros((3, 3))
    for mk, ck, Ik in parts:
        d = ck - c
        inertia += Ik + mk * (d @ d * np.eye(3) - np.outer(d, d))
    return m, c, inertia


def _find_chain(robot, base_link, tip_link):
    links = {link.name for link in robot.links}
    parent_of, children = {}, {}
    for j in robot.joints:
        for end in (j.parent, j.child):
            if end not in links:
                raise ModelError(f'joint {j.name!r} refers to unknown link {end!r}')
        if j.child in parent_of:
            raise ModelError(f'kinematic loop: link {j.child!r} is the child of joints '
                             f'{parent_of[j.child].name!r} and {j.name!r}')
        parent_of[j.child] = j
        children.setdefault(j.parent, []).append(j)
    for name in (base_link, tip_link):
        if name is not None and name not in links:
            raise ModelError(f'unknown link {name!r}; links are {sorted(links)}')
    if base_link is None:
        roots = sorted(links - set(parent_of))
        if len(roots) != 1:
            raise ModelError(f'no unique root link (candidates: {roots}); give base_link')
        base_link = roots[0]

    def depth(link, seen=()):
        """Leaves below ``link`` as ((moving joints, all joints), leaf)."""
        if link in seen:
            raise ModelError(f'kinematic loop through link {link!r}')
        kids = children.get(link, [])
        return [((n + (j.type != 'fixed'), k + 1), leaf) for j in kids
                for (n, k), leaf in depth(j.child, seen + (link,))] or [((0, 0), link)]

    if tip_link is None:
        # the deepest leaf: most moving joints, then most joints (a tool frame after a flange)
        leaves = depth(base_link)
        best = max(d for d, _ in leaves)
        candidates = sorted(leaf for d, leaf in leaves if d == best)
        if len(candidates) != 1:
            raise ModelError(f'branching tree: no unique tip below {base_link!r}; '
                             f'give tip_link, candidates: {candidates}')
        tip_link = candidates[0]
    chain, link = [], tip_link
    while link != base_link:
        if link not in parent_of:
            raise ModelError(f'tip link {tip_link!r} is not below base link {base_link!r}')
        chain.append(parent_of[link])
        link = parent_of[link].parent
    return base_link, tip_link, chain[::-1], children


def model_from_urdf(source, base_link=None, tip_link=None):
    """
    Build a :class:`RobotModel` for the chain ``base_link`` -> ``tip_link`` of a URDF.

    ``source`` is a file path or the XML text. Without base/tip the unique root and the unique
    deepest leaf are used; otherwise a ``ModelError`` names the candidates.
    """
    robot = _parse(source)
    base_link, tip_link, chain, children = _find_chain(robot, base_link, tip_link)
    link_by_name = {link.name: link for link in robot.links}
    for j in chain:
        if j.type not in MOVING + ('fixed',):
            raise ModelError(f'joint {j.name!r} has unsupported type {j.type!r} '
                             '(supported: revolute, continuous, prismatic, fixed)')
        if j.mimic is not None:
            raise ModelError(f'joint {j.name!r} is a mimic joint, which is not supported')

    frames, groups = {}, {}
    body, T_body = 0, np.eye(4)   # current body and pose of the current link in it
    placement, moving = [], []

    def add_link(link_name, body_index, T):
        """Record a link's frame and its inertia, moved into the body frame."""
        frames[link_name] = (body_index, T)
        part = _body_inertia(link_by_name[link_name])
        if part is not None:
            m, c, inertia = part
            R = T[:3, :3]
            groups.setdefault(body_index, []).append((m, R @ c + T[:3, 3], R @ inertia @ R.T))

    def attach(link_name, body_index, T, on_chain_child=None):
        """Record a link and the fixed subtree hanging from it (off the chain)."""
        add_link(link_name, body_index, T)
        for j in children.get(link_name, []):
            if j.child == on_chain_child:
                continue
            if j.type != 'fixed' and body_index == 0:
                continue   # a branch moving on the fixed base cannot affect this chain
            if j.type != 'fixed':
                raise ModelError(f'joint {j.name!r} ({j.type}) branches off the chain '
                                 f'{base_link!r} -> {tip_link!r}; only serial chains are '
                                 'supported: choose base_link/tip_link or remove the branch')
            attach(j.child, body_index, T @ _origin(j.origin))

    next_child = {j.parent: j.child for j in chain}
    attach(base_link, 0, np.eye(4), next_child.get(base_link))
    for j in chain:
        T_joint = T_body @ _origin(j.origin)
        if j.type == 'fixed':
            T_body = T_joint
        else:
            placement.append(T_joint)
            moving.append(j)
            body, T_body = body + 1, np.eye(4)
        if j.child == tip_link:  # what hangs below the chosen tip is not part of this chain
            add_link(tip_link, body, T_body)
        else:
            attach(j.child, body, T_body, next_child.get(j.child))

    if not moving:
        raise ModelError(f'no moving joint between {base_link!r} and {tip_link!r}')
    n = len(moving)
    mass, com, inertia = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3))
    for i, j in enumerate(moving):
        parts = groups.get(i + 1)
        if not parts:
            raise ModelError(
                f'link {j.child!r} (moved by joint {j.name!r}) has no <inertial>, and no link '
                'fixed to it has one; a link may omit <inertial> (massless) only if it is '
                'fixed to a link that has one')
        mass[i], com[i], inertia[i] = combine_inertia(parts)

    def limit(j, attr, default):
        value = getattr(j.limit, attr, None) if j.limit is not None else None
        if value is None:
            return default
        # to_urdf writes an unbounded limit as +-float max (urdfdom rejects "inf")
        return float(value) if abs(float(value)) < _FLOAT_MAX else np.copysign(np.inf, value)

    def dyn(j, attr):
        value = getattr(j.dynamics, attr, None) if j.dynamics is not None else None
        return 0.0 if value is None else float(value)

    lower, upper = [], []
    for j in moving:
        if j.type == 'continuous':
            lower.append(-np.inf)
            upper.append(np.inf)
        else:
            if j.limit is None:
                raise ModelError(f'joint {j.name!r} ({j.type}) needs a <limit> element')
            lower.append(limit(j, 'lower', 0.0))
            upper.append(limit(j, 'upper', 0.0))
    return RobotModel(
        name=robot.name or 'robot',
        joint_names=tuple(j.name for j in moving),
        joint_types=tuple(j.type for j in moving),
        joint_placement=np.array(placement),
        joint_axis=np.array([j.axis if j.axis is not None else (1.0, 0.0, 0.0)
                             for j in moving], dtype=float),
        mass=mass, com=com, inertia=inertia,
        lower=np.array(lower), upper=np.array(upper),
        velocity_limit=np.array([limit(j, 'velocity', np.inf) for j in moving]),
        effort_limit=np.array([limit(j, 'effort', np.inf) for j in moving]),
        damping=np.array([dyn(j, 'damping') for j in moving]),
        friction=np.array([dyn(j, 'friction') for j in moving]),
        frames=frames, base_link=base_link, tip_link=tip_link)


def _limit(value):
    """Format a limit for URDF: urdfdom rejects "inf", so unbounded is +-float max."""
    return repr(float(np.clip(value, -_FLOAT_MAX, _FLOAT_MAX)))


def _fmt(values):
    return ' '.join(repr(float(v)) for v in np.ravel(values))


def _origin_elem(parent, T):
    ET.SubElement(parent, 'origin', xyz=_fmt(T[:3, 3]), rpy=_fmt(matrix_to_rpy(T[:3, :3])))


def model_to_urdf(model):
    """
    Write ``model`` as URDF XML (a string) that :func:`model_from_urdf` reads back identically.

    Each body becomes a link carrying the merged inertia (origin at the COM, inertia about it);
    every other named frame becomes a massless link on a fixed joint. ``model.gravity`` has no
    place in URDF and is not written.
    """
    root = ET.Element('robot', name=model.name)
    root.append(ET.Comment(f' written by robot_dynamics RobotModel.to_urdf() from model '
                           f'{model.name!r}; gravity ({_fmt(model.gravity)}) is not part of '
                           'URDF '))
    by_body = {}
    for link, (body, T) in model.frames.items():
        by_body.setdefault(body, []).append((link, T))
    body_link = [model.base_link]
    for i in range(1, model.dof + 1):
        exact = [k for k, T in by_body.get(i, []) if np.array_equal(T, np.eye(4))]
        body_link.append(exact[0] if exact else f'{model.joint_names[i - 1]}_body')

    for i, name in enumerate(body_link):
        link = ET.SubElement(root, 'link', name=name)
        if i == 0:
            continue
        inertial = ET.SubElement(link, 'inertial')
        _origin_elem(inertial, transform(None, model.com[i - 1]))
        ET.SubElement(inertial, 'mass', value=repr(float(model.mass[i - 1])))
        tensor = model.inertia[i - 1]
        ET.SubElement(inertial, 'inertia', **{k: repr(float(tensor[a, b])) for k, (a, b) in (
            ('ixx', (0, 0)), ('ixy', (0, 1)), ('ixz', (0, 2)), ('iyy', (1, 1)),
            ('iyz', (1, 2)), ('izz', (2, 2)))})
    for i in range(model.dof):
        joint = ET.SubElement(root, 'joint', name=model.joint_names[i], type=model.joint_types[i])
        ET.SubElement(joint, 'parent', link=body_link[i])
        ET.SubElement(joint, 'child', link=body_link[i + 1])
        _origin_elem(joint, model.joint_placement[i])
        ET.SubElement(joint, 'axis', xyz=_fmt(model.joint_axis[i]))
        attrs = {'effort': _limit(model.effort_limit[i]),
                 'velocity': _limit(model.velocity_limit[i])}
        if model.joint_types[i] != 'continuous':
            attrs.update(lower=_limit(model.lower[i]), upper=_limit(model.upper[i]))
        ET.SubElement(joint, 'limit', **attrs)
        ET.SubElement(joint, 'dynamics', damping=repr(float(model.damping[i])),
                      friction=repr(float(model.friction[i])))
    for body, links in sorted(by_body.items()):
        extra = [(k, T) for k, T in links if k not in body_link]
        # the tip hangs below another frame of its body, so that from_urdf finds it as the
        # unique deepest leaf without being told
        others = [(k, T) for k, T in extra if k != model.tip_link]
        for link, T in extra:
            parent, T_parent = body_link[body], np.eye(4)
            if link == model.tip_link and others:
                parent, T_parent = others[0]
            ET.SubElement(root, 'link', name=link)
            joint = ET.SubElement(root, 'joint', name=f'{link}_fixed_joint', type='fixed')
            ET.SubElement(joint, 'parent', link=parent)
            ET.SubElement(joint, 'child', link=link)
            _origin_elem(joint, np.linalg.solve(T_parent, T))
    ET.indent(root)
    return ET.tostring(root, encoding='unicode', xml_declaration=True) + '\n'
