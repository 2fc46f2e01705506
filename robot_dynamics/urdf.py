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

Below :class:`~robot_dynamics.model.RobotModel`: :func:`model_fields` reads the fields its
constructor takes (``RobotModel.from_urdf`` builds and checks the model) and
:func:`model_to_urdf` writes any model with the visuals it is given.

Supported: revolute, continuous, prismatic and fixed joints; joint origin xyz/rpy; any axis;
inertial origin and full inertia tensor; limits; dynamics damping/friction.

The model is the chain of moving joints from ``base_link`` to ``tip_link``, and everything below
``base_link`` rides on it exactly as in Pinocchio's model of the whole robot with every other
joint locked (``pinocchio.buildReducedModel``):

- every link is merged (inertia included) into the body it is rigidly attached to, through fixed
  joints at any depth, below the tip or branching off a chain link alike: the tip only says where
  ``fk``, the Jacobians and IK refer to;
- moving joints off the chain (gripper fingers, a head, a second arm) are locked at the value given
  in ``locked_joints``, else a ``<mimic>`` joint at ``multiplier * value + offset`` of its locked
  master, else at 0; default values are clipped to the joint's limits. ``model.locked_joints``
  lists them. Links above ``base_link`` are not part of the model.

Without ``base_link`` the base is the unique root. Without ``tip_link`` the chain is the run of
moving joints shared by the leaves with the most moving joints below the base, provided each leaf
adds fewer moving joints after it than the run has (a hand's fingers, not a second arm; else a
``ModelError`` lists those leaves), and the tip is the first by name of the links fixed to the
chain's last body that have no fixed child (a UR5's ``ee_link`` before ``tool0``). One INFO log
line per load reports the chain, the locked joints and the limits read as "no limit".

Zero limits: the URDF specification makes ``effort`` and ``velocity`` required in ``<limit>``
(urdfdom and urdf_parser_py refuse a ``<limit>`` without them), so "no limit" cannot be written
but by leaving ``<limit>`` out of a continuous joint, and exporters write 0 when they know no
value. ros2_control's joint_limits takes the numbers as they are (a zero limit stops the joint);
MoveIt reads velocity 0 as unbounded. Here a zero limit would make the controllers clip every
torque to 0 and time scaling divide by zero, so ``effort="0"`` and ``velocity="0"`` are read as
no limit (inf) and reported in the log line. Negative values are rejected: :class:`RobotModel`
requires effort and velocity limits > 0 and damping and friction >= 0.

A ``<mimic>`` on a fixed joint means nothing and is ignored; on a moving joint of the chain it is a
``ModelError``. Floating and planar joints, loops and moving links with no inertial anywhere in
their rigid group are rejected with a ``ModelError``. urdf_parser_py's messages about unknown tags
and attributes are logged once per load at DEBUG level instead of printed to stderr.
"""

import logging
from pathlib import Path
import threading
import xml.etree.ElementTree as ET

import numpy as np

from .errors import ModelError, quoted
from .spatial import axis_angle_to_matrix, matrix_to_rpy, transform, xyz_rpy_to_transform

MOVING = ('revolute', 'continuous', 'prismatic')
#: Longest text [characters] that may be a file path rather than XML (Linux's PATH_MAX).
MAX_PATH_LENGTH = 4096
#: Largest URDF [characters] accepted: an arm's description is tens of kilobytes; more is no
#: robot (or meshes inlined, which the dynamics does not read).
MAX_URDF_SIZE = 4_000_000
# urdfdom (Pinocchio, robot_state_publisher) rejects "inf": unbounded limits are written as this
_FLOAT_MAX = np.finfo(float).max

_log = logging.getLogger(__name__)
# urdf_parser_py reports through a module-level hook: one parse at a time may swap it
_HOOK_LOCK = threading.Lock()


def _text_of(source):
    """
    Return the URDF text of ``source``, a file path or the XML text itself.

    Text that does not start with ``<`` is a path only if it could be one (one line, at most
    MAX_PATH_LENGTH characters); anything else is not XML. Either text is refused beyond
    MAX_URDF_SIZE characters.
    """
    text = str(source)
    size = None     # of text given as such; a file is read only to one character past the bound
    if not text.lstrip().startswith('<'):
        if len(text) > MAX_PATH_LENGTH or '\n' in text or '\0' in text:
            raise ModelError(f'not a URDF: the text is not XML (it starts with {quoted(text)}) '
                             'and is no file path')
        path = Path(text)
        try:
            found = path.is_file()
        except OSError:         # a name too long for the file system, a bad character
            found = False
        if not found:
            raise ModelError(f'URDF file not found: {quoted(text)} (pass a path or an XML '
                             'string)')
        name = quoted(text, MAX_PATH_LENGTH)
        size = f'the file {name} has'
        try:
            with path.open(encoding='utf-8') as f:
                text = f.read(MAX_URDF_SIZE + 1)
        except OSError as exc:      # unreadable: permissions, /proc/self/mem, a vanished file
            raise ModelError(f'cannot read URDF file {name}: {exc.strerror or exc}') from None
        except UnicodeDecodeError as exc:
            raise ModelError(f'cannot read URDF file {name}: not UTF-8 text (byte '
                             f'{exc.start})') from None
    if len(text) > MAX_URDF_SIZE:
        size = size or f'{len(text)} characters,'
        raise ModelError(f'not a URDF: {size} more than the {MAX_URDF_SIZE} characters a '
                         'description may have')
    return text


def parse(source):
    """Return urdf_parser_py's robot of ``source`` (a file path or the XML text)."""
    try:
        from urdf_parser_py import xml_reflection
        from urdf_parser_py.urdf import URDF
    except ImportError:  # pragma: no cover - declared dependency
        raise ModelError('reading URDF needs urdfdom-py (pip install urdfdom-py)') from None
    text = _text_of(source)
    # urdf_parser_py prints unknown tags and attributes to stderr through ``on_error``, looked
    # up at call time in two modules; collect them for the duration of this parse instead
    messages = []
    with _HOOK_LOCK:
        saved = xml_reflection.on_error, xml_reflection.core.on_error
        xml_reflection.on_error = xml_reflection.core.on_error = messages.append
        try:
            # bytes, because lxml refuses a str that carries an encoding declaration
            robot = URDF.from_xml_string(text.encode())
        except Exception as exc:  # noqa: B902 - lxml and urdf_parser_py raise unrelated types
            first = str(exc).strip().splitlines()
            raise ModelError(f'malformed URDF: {" ".join(first)}') from None
        finally:
            xml_reflection.on_error, xml_reflection.core.on_error = saved
            if messages:
                _log.debug('urdf_parser_py ignored %d item(s):\n%s', len(messages),
                           '\n'.join(messages))
    if not robot.links:
        raise ModelError('malformed URDF: no <link> elements')
    return robot


def origin_pose(elem):
    """Return the pose (4, 4) that an ``<origin>`` element gives (None: the identity)."""
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
    T = origin_pose(inertial.origin)
    i = inertial.inertia
    tensor = np.zeros((3, 3)) if i is None else np.array(
        [[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]], dtype=float)
    mass = float(inertial.mass or 0.0)
    # a negative mass would be merged (and zeroed) with its rigid group's: refuse it here, by name
    if not np.isfinite(mass) or mass < 0:
        raise ModelError(f'link {link.name!r}: <mass value="{mass:g}">: a mass must be finite '
                         'and >= 0 [kg]')
    if not np.all(np.isfinite(tensor)) or not np.all(np.isfinite(T)):
        raise ModelError(f'link {link.name!r}: <inertial> has a value that is not finite')
    R = T[:3, :3]
    return mass, T[:3, 3].copy(), R @ tensor @ R.T


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


def _tree(robot):
    """Return ``(parent joint of each link, child joints of each link)``; check the links."""
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
    return links, parent_of, children


def _below(children, base_link):
    """Every joint below ``base_link``, each after the joint of its parent link."""
    order, stack, seen = [], [base_link], {base_link}
    while stack:
        for j in children.get(stack.pop(), []):
            if j.child in seen:
                raise ModelError(f'kinematic loop through link {j.child!r}')
            seen.add(j.child)
            order.append(j)
            stack.append(j.child)
    return order


def _default_tip(children, joints, base_link):
    """Apply the tip rule of the module docstring: return the tip link."""
    moving = {base_link: ()}
    for j in joints:
        moving[j.child] = moving[j.parent] + (() if j.type == 'fixed' else (j.name,))
    leaves = [link for link in moving if link not in children]
    most = max(len(moving[link]) for link in leaves)
    longest = sorted(link for link in leaves if len(moving[link]) == most)
    shared = 0
    while shared < most and len({moving[link][shared] for link in longest}) == 1:
        shared += 1
    if most - shared >= max(shared, 1):
        raise ModelError(f'branching tree: no unique moving chain below {base_link!r} (the '
                         f'longest ones share {shared} of {most} moving joints); give tip_link, '
                         f'candidates: {longest}')
    end = base_link
    if shared:
        last = moving[longest[0]][shared - 1]
        end = next(j.child for j in joints if j.name == last)
    group, stack = [], [end]
    while stack:
        link = stack.pop()
        fixed = [j.child for j in children.get(link, []) if j.type == 'fixed']
        stack += fixed
        if not fixed:
            group.append(link)
    return min(group)


def _position_limits(j):
    """Return ``(lower, upper)`` of a moving joint [rad or m]."""
    if j.type == 'continuous':
        return -np.inf, np.inf
    if j.limit is None:
        raise ModelError(f'joint {j.name!r} ({j.type}) needs a <limit> element')
    lower = _limit_value(j.limit.lower, 0.0, j, 'lower')
    upper = _limit_value(j.limit.upper, 0.0, j, 'upper')
    if lower > upper:
        raise ModelError(f'joint {j.name!r}: <limit lower="{lower:g}" upper="{upper:g}">: lower '
                         'is above upper')
    return lower, upper


def _limit_value(value, default, joint, attr):
    """Return a ``<limit>`` attribute of ``joint`` [rad, m, ...]: NaN is refused, naming it."""
    if value is None:
        return default
    value = float(value)
    if np.isnan(value):
        raise ModelError(f'joint {joint.name!r}: <limit {attr}="nan">: a limit must be a number '
                         '(or inf for none)')
    # to_urdf writes an unbounded limit as +-float max (urdfdom rejects "inf")
    return value if abs(value) < _FLOAT_MAX else np.copysign(np.inf, value)


def _lock(joints, chain, given, known, base_link, tip_link):
    """
    Return the value [rad or m] of every moving joint off the chain: ``{name: value}``.

    ``joints`` are the joints below the base, ``given`` the user's ``locked_joints``, ``known``
    every joint name of the URDF; a given value wins, else a mimic joint follows its locked
    master, else 0; defaults are clipped to the limits, given values must lie within them.
    """
    in_chain = {j.name for j in chain}
    lockable = {j.name: j for j in joints if j.type != 'fixed' and j.name not in in_chain}
    problems = [f'{kind} {names}' for kind, names in (
        ('unknown joints', [k for k in given if k not in known]),
        (f'joints of the chain {base_link!r} -> {tip_link!r}',
         [k for k in given if k in in_chain]),
        (f'fixed joints or joints not below {base_link!r}',
         [k for k in given if k in known and k not in in_chain and k not in lockable]),
    ) if names]
    if problems:
        raise ModelError(f'locked_joints: cannot lock {"; ".join(problems)}; the joints off the '
                         f'chain that can be locked are {sorted(lockable)}')
    values = {}

    def value(j, seen=()):
        if j.name in values:
            return values[j.name]
        lower, upper = _position_limits(j)
        if j.name in given:
            try:
                v = float(given[j.name])
            except (TypeError, ValueError):
                v = np.nan
            if not (np.isfinite(v) and lower <= v <= upper):
                raise ModelError(f'locked_joints: {j.name!r} = {given[j.name]!r} is not a '
                                 f'number within its limits [{lower}, {upper}]')
        else:
            v, mimic = 0.0, j.mimic
            if mimic is not None and mimic.joint in lockable:
                if mimic.joint in seen:
                    raise ModelError(f'mimic loop through joint {j.name!r}')
                master = value(lockable[mimic.joint], seen + (j.name,))
                multiplier = 1.0 if mimic.multiplier is None else mimic.multiplier
                v = multiplier * master + (mimic.offset or 0.0)
            v = float(np.clip(v, lower, upper))
        values[j.name] = v
        return v

    for j in lockable.values():
        value(j)
    return values


def _axis(j):
    """Return the joint axis as written (URDF's default: x)."""
    return np.array(j.axis if j.axis is not None else (1.0, 0.0, 0.0), dtype=float)


def _motion(j, value):
    """Transform of a locked joint at ``value`` (identity for a fixed joint)."""
    if j.type == 'fixed':
        return np.eye(4)
    axis = _axis(j)
    norm = np.linalg.norm(axis)
    if norm < 1e-9:
        raise ModelError(f'joint axis of zero length for joint {j.name!r}')
    if j.type == 'prismatic':
        return transform(None, value * axis / norm)
    return transform(axis_angle_to_matrix(axis, value))


def _chain(robot, base_link, tip_link):
    """
    Find base, tip and chain by the rules of the module docstring.

    Returns ``(base_link, tip_link, tip chosen by rule, joints below the base in parent-first
    order, moving joints of the chain)``.
    """
    links, parent_of, children = _tree(robot)
    for name in (base_link, tip_link):
        if name is not None and name not in links:
            raise ModelError(f'unknown link {name!r}; links are {sorted(links)}')
    if base_link is None:
        roots = sorted(links - set(parent_of))
        if len(roots) != 1:
            raise ModelError(f'no unique root link (candidates: {roots}); give base_link')
        base_link = roots[0]
    joints = _below(children, base_link)
    chosen = tip_link is None
    if chosen:
        tip_link = _default_tip(children, joints, base_link)
    path, link = [], tip_link
    while link != base_link:
        if link not in parent_of:
            raise ModelError(f'tip link {tip_link!r} is not below base link {base_link!r}')
        path.append(parent_of[link])
        link = parent_of[link].parent
    chain = [j for j in path[::-1] if j.type != 'fixed']
    if not chain:
        raise ModelError(f'no moving joint between {base_link!r} and {tip_link!r}')
    for j in joints:
        if j.type not in MOVING + ('fixed',):
            raise ModelError(f'joint {j.name!r} has unsupported type {j.type!r} '
                             '(supported: revolute, continuous, prismatic, fixed)')
    for j in chain:
        if j.mimic is not None:
            raise ModelError(f'joint {j.name!r} of the chain is a mimic joint, which is not '
                             'supported (a mimic joint off the chain is locked)')
    return base_link, tip_link, chosen, joints, chain


def model_fields(source, base_link=None, tip_link=None, locked_joints=None):
    """
    Return the fields of a ``RobotModel`` (a dict): the chain ``base_link`` -> ``tip_link``.

    ``source`` is a file path or the XML text; ``locked_joints`` maps joints off the chain to
    the value [rad or m] they are locked at. Base, tip and locking follow the rules of the module
    docstring; a ``ModelError`` names whatever does not fit them.
    """
    robot = parse(source)
    base_link, tip_link, chosen, joints, chain = _chain(robot, base_link, tip_link)
    locked = _lock(joints, chain, dict(locked_joints or {}), {j.name for j in robot.joints},
                   base_link, tip_link)

    # every link below the base: its body and its pose in that body, locked joints included
    index = {j.name: i for i, j in enumerate(chain)}
    frames = {base_link: (0, np.eye(4))}
    placement = [None] * len(chain)
    for j in joints:
        body, T_body_parent = frames[j.parent]
        T_body_joint = T_body_parent @ origin_pose(j.origin)
        if j.name in index:
            placement[index[j.name]] = T_body_joint
            frames[j.child] = (index[j.name] + 1, np.eye(4))
        else:
            frames[j.child] = (body, T_body_joint @ _motion(j, locked.get(j.name)))
    groups = {}
    link_by_name = {link.name: link for link in robot.links}
    for name, (body, T) in frames.items():
        part = _body_inertia(link_by_name[name])
        if part is not None:
            m, c, inertia = part
            R = T[:3, :3]
            groups.setdefault(body, []).append((m, R @ c + T[:3, 3], R @ inertia @ R.T))

    n = len(chain)
    mass, com, inertia = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3))
    for i, j in enumerate(chain):
        parts = groups.get(i + 1)
        if not parts:
            raise ModelError(
                f'link {j.child!r} (moved by joint {j.name!r}) has no <inertial>, and no link '
                'fixed to it has one; a link may omit <inertial> (massless) only if it is '
                'fixed to a link that has one')
        mass[i], com[i], inertia[i] = combine_inertia(parts)

    unlimited = []

    def limit(j, attr):
        value = _limit_value(getattr(j.limit, attr, None) if j.limit is not None else None,
                             np.inf, j, attr)
        if value == 0.0:   # "not given": see the module docstring
            unlimited.append(f'{j.name}.{attr}')
            return np.inf
        return value

    def dyn(j, attr):
        value = getattr(j.dynamics, attr, None) if j.dynamics is not None else None
        return 0.0 if value is None else float(value)

    lower, upper = np.array([_position_limits(j) for j in chain]).T
    fields = {
        'name': robot.name or 'robot',
        'joint_names': tuple(j.name for j in chain),
        'joint_types': tuple(j.type for j in chain),
        'joint_placement': np.array(placement),
        'joint_axis': np.array([_axis(j) for j in chain]),
        'mass': mass, 'com': com, 'inertia': inertia, 'lower': lower, 'upper': upper,
        'velocity_limit': np.array([limit(j, 'velocity') for j in chain]),
        'effort_limit': np.array([limit(j, 'effort') for j in chain]),
        'damping': np.array([dyn(j, 'damping') for j in chain]),
        'friction': np.array([dyn(j, 'friction') for j in chain]),
        'frames': frames, 'base_link': base_link, 'tip_link': tip_link, 'locked_joints': locked}
    _log.info('URDF %r: chain %r -> %r (%s), %d joints; locked joints %s%s', fields['name'],
              base_link, tip_link, 'tip chosen by rule' if chosen else 'tip given', n,
              locked or 'none', f'; 0 read as no limit: {unlimited}' if unlimited else '')
    return fields


def _limit(value):
    """Format a limit for URDF: urdfdom rejects "inf", so unbounded is +-float max."""
    return repr(float(np.clip(value, -_FLOAT_MAX, _FLOAT_MAX)))


def _fmt(values):
    return ' '.join(repr(float(v)) for v in np.ravel(values))


def _origin_elem(parent, T):
    ET.SubElement(parent, 'origin', xyz=_fmt(T[:3, 3]), rpy=_fmt(matrix_to_rpy(T[:3, :3])))


def body_links(model):
    """
    Return the name of each moving body's link (a list of n): the link at the body's frame.

    That is the child link of the body's joint for models read from URDF; a body without a
    link at its frame (DH models) is named ``<joint>_body``. The tip is the body link only if
    no other link is at that frame (:func:`model_to_urdf` hangs the other frames of the tip's
    body above the tip).
    """
    names = []
    for i in range(1, model.dof + 1):
        exact = sorted((link for link, (body, T) in model.frames.items()
                        if body == i and np.array_equal(T, np.eye(4))),
                       key=lambda link: link == model.tip_link)
        names.append(exact[0] if exact else f'{model.joint_names[i - 1]}_body')
    return names


def geometry_elements(link, visual):
    """
    Append ``visual`` (a primitive :class:`~robot_dynamics.scene.Visual`) to ``link``.

    ``link`` is an ElementTree ``<link>``; it gets a ``<visual>`` with the geometry and a
    material named after its colour, and a ``<collision>`` with the same geometry.
    """
    rgba = _fmt(visual.rgba)
    for tag in ('visual', 'collision'):
        elem = ET.SubElement(link, tag)
        _origin_elem(elem, visual.origin)
        geometry = ET.SubElement(elem, 'geometry')
        if visual.shape == 'box':
            ET.SubElement(geometry, 'box', size=_fmt(visual.size))
        elif visual.shape == 'sphere':
            ET.SubElement(geometry, 'sphere', radius=repr(float(visual.size[0])))
        elif visual.shape == 'cylinder':
            ET.SubElement(geometry, 'cylinder', radius=repr(float(visual.size[0])),
                          length=repr(float(visual.size[1])))
        else:
            raise ModelError(f'cannot write a {visual.shape!r} as URDF geometry')
        if tag == 'visual':
            material = ET.SubElement(elem, 'material',
                                     name='rgba_' + '_'.join(f'{c:.2f}' for c in visual.rgba))
            ET.SubElement(material, 'color', rgba=rgba)


def model_to_urdf(model, visuals):
    """
    Write ``model`` as URDF XML (a string) that :func:`model_fields` reads back identically.

    Each body becomes a link carrying the merged inertia (origin at the COM, inertia about it);
    every other named frame becomes a massless link on a fixed joint. Each of ``visuals``
    (primitive :class:`~robot_dynamics.scene.Visual` on links of the model; ``RobotModel.to_urdf``
    gives :func:`robot_dynamics.scene.primitive_visuals`, for RViz, Foxglove and
    ``robot-dynamics view``) becomes a ``<visual>`` and a ``<collision>`` of its link.
    ``model.gravity`` has no place in URDF and is not written, nor is ``model.locked_joints``:
    the locked joints are already merged into the bodies and frames.
    """
    root = ET.Element('robot', name=model.name)
    root.append(ET.Comment(f' written by robot_dynamics RobotModel.to_urdf() from model '
                           f'{model.name!r}; gravity ({_fmt(model.gravity)}) is not part of '
                           'URDF '))
    by_body = {}
    for link, (body, T) in model.frames.items():
        by_body.setdefault(body, []).append((link, T))
    body_link = [model.base_link] + body_links(model)

    link_elems = {}
    for i, name in enumerate(body_link):
        link = link_elems[name] = ET.SubElement(root, 'link', name=name)
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
        # the other frames of the tip's body hang in a line above the tip, so that the tip is
        # the one link of its body without a fixed child: from_urdf's tip rule finds it
        extra.sort(key=lambda item: item[0] == model.tip_link)
        parent, T_parent = body_link[body], np.eye(4)
        for link, T in extra:
            link_elems[link] = ET.SubElement(root, 'link', name=link)
            joint = ET.SubElement(root, 'joint', name=f'{link}_fixed_joint', type='fixed')
            ET.SubElement(joint, 'parent', link=parent)
            ET.SubElement(joint, 'child', link=link)
            _origin_elem(joint, np.linalg.solve(T_parent, T))
            if body == model.dof:
                parent, T_parent = link, T
    for visual in visuals:
        geometry_elements(link_elems[visual.link], visual)
    ET.indent(root)
    return ET.tostring(root, encoding='unicode', xml_declaration=True) + '\n'


# ---- identified parameters into a given description ---------------------------------------------

class _Element:
    """An element of XML bytes: tag, attributes, children and where it starts and ends."""

    def __init__(self, tag, attrs, start):
        self.tag, self.attrs, self.start = tag, attrs, start
        self.head = self.end = start          # ends of the start tag and of the element
        self.children = []

    def child(self, tag):
        return next((c for c in self.children if c.tag == tag), None)


def _tag_end(data, i):
    """Return the index after the tag that starts at ``data[i]`` (quoted '>' skipped)."""
    quote = None
    while True:
        c = data[i:i + 1]
        if quote:
            quote = None if c == quote else quote
        elif c in (b'"', b"'"):
            quote = c
        elif c == b'>':
            return i + 1
        i += 1


def _parse_spans(data):
    """Return the root :class:`_Element` of XML ``data`` (bytes), with byte offsets."""
    from xml.parsers import expat
    parser = expat.ParserCreate()
    parser.ordered_attributes = False
    stack, root = [], []

    def start(tag, attrs):
        elem = _Element(tag, attrs, parser.CurrentByteIndex)
        elem.head = _tag_end(data, elem.start)
        (stack[-1].children if stack else root).append(elem)
        stack.append(elem)

    def end(tag):
        elem = stack.pop()
        empty = data[elem.head - 2:elem.head] == b'/>'
        elem.end = elem.head if empty else _tag_end(data, parser.CurrentByteIndex)

    parser.StartElementHandler, parser.EndElementHandler = start, end
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise ModelError(f'malformed URDF: {exc}') from None
    return root[0]


def _indent(data, i):
    """Return the whitespace between the start of ``data[i]``'s line and ``i`` (or None)."""
    line = data.rfind(b'\n', 0, i) + 1
    return data[line:i] if not data[line:i].strip() else None


def _attributes(attrs, close):
    from xml.sax.saxutils import quoteattr
    return ''.join(f' {k}={quoteattr(str(v))}' for k, v in attrs.items()).encode() + close


def set_dynamic_parameters(source, model, note=None):
    """
    Return URDF text: ``source`` with the inertial and joint parameters of ``model``.

    ``source`` (a path or the XML text, e.g. a recorded ``/robot_description``) must describe
    ``model``'s chain (same joints, placements and axes, with the model's base, tip and locked
    joints); ``model`` holds new parameters for it (from identification). For each moving body:

    - the child link of the body's joint gets the body's whole ``<inertial>`` (mass, COM, inertia
      about the COM; in that link's frame, which is the body frame);
    - every other link merged into the body (fixed to it at any depth, or behind a locked joint)
      loses its ``<inertial>``: the identified parameters describe the rigid body as a whole,
      and the data cannot split them among its links; the chain link carries them, so
      ``RobotModel.from_urdf`` merges the links back to exactly the identified body. Keeping the
      other links' inertials and subtracting them instead could give negative masses;
    - the body's joint gets ``<dynamics damping friction>`` (viscous, Coulomb), its other
      attributes kept.

    Everything else is kept byte for byte (other links and joints, visuals, collisions, limits,
    comments, layout, the links merged into the fixed base): the text is edited in place.
    ``note``, if given, is added as an XML comment after the ``<robot>`` tag. Raises
    ``ModelError`` when ``source`` does not describe the model's chain.
    """
    text = _text_of(source)
    mismatch = (f'the URDF does not describe the chain of model {model.name!r} (joints '
                f'{list(model.joint_names)}, links {model.link_names}): the parameters cannot '
                'be written into it')
    try:
        # checked (axes normalised) by the model's own class, which this module is below
        described = type(model).from_urdf(text, base_link=model.base_link,
                                          tip_link=model.tip_link,
                                          locked_joints=dict(model.locked_joints))
    except ModelError as exc:
        raise ModelError(f'{mismatch}; {exc}') from None
    if described.joint_names != model.joint_names or not (
            np.allclose(described.joint_placement, model.joint_placement, rtol=0, atol=1e-9)
            and np.allclose(described.joint_axis, model.joint_axis, rtol=0, atol=1e-9)
            and {k: b for k, (b, _) in described.frames.items()}
            == {k: b for k, (b, _) in model.frames.items()}):
        raise ModelError(mismatch)
    data = text.encode()
    root = _parse_spans(data)
    links = {e.attrs.get('name'): e for e in root.children if e.tag == 'link'}
    joints = {e.attrs.get('name'): e for e in root.children if e.tag == 'joint'}
    first = root.children[0] if root.children else None
    step = (_indent(data, first.start) if first is not None else None) or b'  '
    close = b'/>' if data.count(b'"/>') >= data.count(b'" />') else b' />'
    edits = []                                  # (start, end, replacement bytes)

    def insert(parent, lines):
        """Add ``lines`` (bytes, one per child line) as the last children of ``parent``."""
        outer = _indent(data, parent.start) or b''
        inner = outer + step
        body = b''.join(b'\n' + inner + line for line in lines)
        if parent.end == parent.head:           # <link name="a"/>: open it
            tag = parent.tag.encode()
            edits.append((parent.head - 2, parent.head, b'>' + body + b'\n' + outer
                          + b'</' + tag + b'>'))
        else:
            closing = data.rindex(b'</', 0, parent.end)
            at = closing - len(_indent(data, closing) or b'')
            edits.append((at, at, body[1:] + b'\n' if at != closing else body))

    chain_links = set()
    for i, name in enumerate(model.joint_names):
        joint = joints[name]
        link = links[joint.child('child').attrs['link']]
        chain_links.add(link.attrs['name'])
        tensor = model.inertia[i]
        inertia = {k: repr(float(tensor[a, b])) for k, (a, b) in (
            ('ixx', (0, 0)), ('ixy', (0, 1)), ('ixz', (0, 2)), ('iyy', (1, 1)), ('iyz', (1, 2)),
            ('izz', (2, 2)))}
        children = [b'<origin' + _attributes({'xyz': _fmt(model.com[i]), 'rpy': '0 0 0'}, close),
                    b'<mass' + _attributes({'value': repr(float(model.mass[i]))}, close),
                    b'<inertia' + _attributes(inertia, close)]
        old = link.child('inertial')
        if old is None:
            insert(link, [b'<inertial>'] + [step + c for c in children] + [b'</inertial>'])
        else:
            outer = _indent(data, old.start) or b''
            inner = (_indent(data, old.children[0].start) if old.children else None) \
                or outer + step
            edits.append((old.start, old.end, b'<inertial>' + b''.join(
                b'\n' + inner + c for c in children) + b'\n' + outer + b'</inertial>'))
        values = {'damping': repr(float(model.damping[i])),
                  'friction': repr(float(model.friction[i]))}
        old = joint.child('dynamics')
        if old is None:
            insert(joint, [b'<dynamics' + _attributes(values, close)])
        else:
            head = close if old.head == old.end else b'>'
            edits.append((old.start, old.head, b'<dynamics' + _attributes(
                {**old.attrs, **values}, head)))
    for name, (body, _) in model.frames.items():
        old = links[name].child('inertial') if name not in chain_links else None
        if body > 0 and old is not None:
            # the whole line(s) when the element stands alone on them
            start, end = old.start, old.end
            if _indent(data, start) is not None and data[end:end + 1] in (b'\n', b''):
                start = data.rfind(b'\n', 0, start)
            edits.append((start, end, b''))
    if note:
        comment = '<!-- ' + note.replace('--', '- -') + ' -->'
        edits.append((root.head, root.head, b'\n' + step + comment.encode()))
    for start, end, new in sorted(edits, key=lambda e: e[0], reverse=True):
        data = data[:start] + new + data[end:]
    return data.decode()
