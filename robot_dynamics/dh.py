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
Robot models from Denavit-Hartenberg tables, standard and modified (Craig).

A row is a dict with ``a``, ``alpha``, ``d``, ``theta`` and ``type`` (``revolute`` or
``prismatic``). For a revolute row ``theta`` is a constant offset added to q; for a prismatic
row ``d`` is. Link transforms (Denavit and Hartenberg 1955; Craig, Introduction to Robotics,
3rd ed., 2005, §3.4; Hayes, Introduction to Robotics, Carleton University notes, 2008,
§3.2-3.3):

- standard: ``A_i = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``, joint i moves about ``z_{i-1}``;
- modified: ``T_i = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)``, joint i moves about
  ``z_i``; row i holds ``alpha_{i-1}`` and ``a_{i-1}``.

Optional per row: ``name`` (joint), ``link`` (frame i), ``mass`` [kg], ``com`` [m] (in frame i),
``inertia`` [kg m^2] (3x3 or ``[ixx, ixy, ixz, iyy, iyz, izz]``, about the COM, frame-i axes),
``lower``, ``upper`` [rad or m], ``effort`` [N m or N], ``velocity`` [rad/s or m/s],
``damping`` [N m s/rad], ``friction`` [N m]. A revolute row without limits is continuous.

A YAML file holds ``joints:`` (the rows) and optionally ``name``, ``convention``, ``gravity``
(3, base frame), ``base`` (pose of DH frame 0 in ``base_link``) and ``tool`` (pose of the tool
in frame n); a pose is a 4x4 matrix or ``{xyz: [..], rpy: [..]}``.

Below :class:`~robot_dynamics.model.RobotModel`: :func:`model_fields` reads the fields its
constructor takes; ``RobotModel.from_dh`` builds and checks the model.
"""

import enum
from pathlib import Path

import numpy as np
import yaml

from .errors import choice, ModelError
from .spatial import rot_x, rot_z, transform, xyz_rpy_to_transform


class Convention(enum.Enum):
    """The DH conventions; the strings are what a table (or ``convention=``) gives."""

    STANDARD = 'standard'
    MODIFIED = 'modified'


_ROW_KEYS = {'a', 'alpha', 'd', 'theta', 'type', 'name', 'link', 'mass', 'com', 'inertia',
             'lower', 'upper', 'effort', 'velocity', 'damping', 'friction'}


def dh_transform(a, alpha, d, theta, convention='standard'):
    """
    Link transform (..., 4, 4) of one DH row; arguments broadcast.

    Standard: ``Rz(theta) Tz(d) Tx(a) Rx(alpha)``; modified: ``Rx(alpha) Tx(a) Rz(theta) Tz(d)``.
    """
    convention = choice(convention, Convention, 'DH convention', error=ModelError)
    a, alpha, d, theta = np.broadcast_arrays(*(np.asarray(v, dtype=float)
                                               for v in (a, alpha, d, theta)))
    Tz = transform(rot_z(theta), np.stack((0 * d, 0 * d, d), -1))
    Tx = transform(rot_x(alpha), np.stack((a, 0 * a, 0 * a), -1))
    return Tz @ Tx if convention is Convention.STANDARD else Tx @ Tz


def _number(value, what, finite=True):
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ModelError(f'{what} must be a number, got {value!r}') from None
    if np.isnan(x) or (finite and not np.isfinite(x)):
        raise ModelError(f'{what} must be a finite number, got {value!r}')
    return x


def _array(value, shape, what):
    try:
        v = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f'{what} must be numbers of shape {shape}, got {value!r}') from None
    if v.shape != shape:
        raise ModelError(f'{what}: expected shape {shape}, got {v.shape}')
    if not np.all(np.isfinite(v)):
        raise ModelError(f'{what} must be finite, got {value!r}')
    return v


def pose(value, what):
    """Return a table's ``base`` or ``tool`` as a (4, 4) transform; None gives the identity."""
    if value is None:
        return np.eye(4)
    if isinstance(value, dict):
        unknown = set(value) - {'xyz', 'rpy'}
        if unknown:
            raise ModelError(f'{what}: unknown keys {sorted(unknown)}; expected xyz and rpy')
        return xyz_rpy_to_transform(_array(value.get('xyz', [0, 0, 0]), (3,), f'{what} xyz'),
                                    _array(value.get('rpy', [0, 0, 0]), (3,), f'{what} rpy'))
    try:
        T = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f'{what}: expected a 4x4 matrix or {{xyz, rpy}}, got {value!r}') from None
    if T.shape != (4, 4):
        raise ModelError(f'{what}: expected a 4x4 matrix or {{xyz, rpy}}, got shape {T.shape}')
    return T


def inertia_tensor(value, what):
    """Return a 3x3 inertia from 3x3 values or ``[ixx, ixy, ixz, iyy, iyz, izz]`` (None: zero)."""
    if value is None:
        return np.zeros((3, 3))
    v = np.asarray(value, dtype=float)
    if v.shape == (6,):
        ixx, ixy, ixz, iyy, iyz, izz = v
        return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if v.shape == (3, 3):
        return v
    raise ModelError(f'{what}: inertia must be 3x3 or [ixx, ixy, ixz, iyy, iyz, izz], '
                     f'got shape {v.shape}')


def read_table(source):
    """Return ``(doc, name)``: the table as a mapping with ``joints``, the model's default name."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise ModelError(f'DH file not found: {path}')
        try:
            doc = yaml.safe_load(path.read_text())
        except yaml.YAMLError as exc:
            raise ModelError(f'{path}: malformed YAML: {exc}') from None
        if not isinstance(doc, dict) or 'joints' not in doc:
            raise ModelError(f'{path}: expected a mapping with a "joints" list of DH rows')
        return doc, path.stem.split('.')[0]
    if isinstance(source, dict):
        if 'joints' not in source:
            raise ModelError('DH table: expected a mapping with a "joints" list of DH rows')
        return source, 'dh_robot'
    return {'joints': list(source)}, 'dh_robot'


def model_fields(source, convention=None):
    """
    Return the fields of a ``RobotModel`` (a dict) from DH rows (see the module docstring).

    ``convention`` given here overrides the YAML file's ``convention`` (default standard).
    Without ``gravity`` in the table the model's default applies.
    """
    doc, default_name = read_table(source)
    convention = choice(convention or doc.get('convention', 'standard'), Convention,
                        'DH convention', error=ModelError)
    rows = doc['joints']
    if not rows:
        raise ModelError('DH table has no rows')
    if not isinstance(rows, (list, tuple)):
        raise ModelError(f'joints: expected a list of DH rows, got {rows!r}')
    n = len(rows)
    base = pose(doc.get('base'), 'base')
    tool = pose(doc.get('tool'), 'tool')
    names, types, placement, axes = [], [], [], []
    mass, com, inertia = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3))
    lim = {k: np.full(n, v) for k, v in (('lower', -np.inf), ('upper', np.inf),
                                         ('effort', np.inf), ('velocity', np.inf),
                                         ('damping', 0.0), ('friction', 0.0))}
    frames = {'base_link': (0, np.eye(4)), 'link0': (0, base)}
    T_prev = base  # pose of the previous DH frame in the previous body's frame
    for i, row in enumerate(rows):
        where = f'DH row {i + 1}'
        if not isinstance(row, dict):
            raise ModelError(f'{where}: expected a mapping, got {row!r}')
        unknown = set(row) - _ROW_KEYS
        missing = {'a', 'alpha', 'd', 'theta', 'type'} - set(row)
        if unknown or missing:
            raise ModelError(f'{where}: unknown keys {sorted(unknown)}, missing keys '
                             f'{sorted(missing)}')
        kind = row['type']
        if kind not in ('revolute', 'prismatic'):
            raise ModelError(f'{where}: type must be "revolute" or "prismatic", got {kind!r}')
        a, alpha, d, theta = (_number(row[k], f'{where}: {k}')
                              for k in ('a', 'alpha', 'd', 'theta'))
        if convention is Convention.STANDARD:
            # joint frame = frame i-1 offset by Rz(theta) Tz(d); frame i = body * Tx(a) Rx(alpha)
            placement.append(T_prev @ dh_transform(0.0, 0.0, d, theta, convention))
            T_link = dh_transform(a, alpha, 0.0, 0.0, convention)
        else:
            placement.append(T_prev @ dh_transform(a, alpha, d, theta, convention))
            T_link = np.eye(4)
        T_prev = T_link
        names.append(str(row.get('name', f'joint{i + 1}')))
        link = str(row.get('link', f'link{i + 1}'))
        types.append(kind)
        axes.append((0.0, 0.0, 1.0))
        for key in lim:
            if row.get(key) is not None:
                lim[key][i] = _number(row[key], f'{where}: {key}', finite=False)
        if kind == 'revolute' and row.get('lower') is None and row.get('upper') is None:
            types[-1] = 'continuous'
        mass[i] = _number(row.get('mass', 0.0), f'{where}: mass')
        R = T_link[:3, :3]
        com[i] = R @ _array(row.get('com', (0, 0, 0)), (3,), f'{where}: com') + T_link[:3, 3]
        inertia[i] = R @ inertia_tensor(row.get('inertia'), where) @ R.T
        new = {link: (i + 1, T_link)}
        if convention is Convention.STANDARD:
            new[f'{link}_proximal'] = (i + 1, np.eye(4))
        for name in new:
            if name in frames or name == 'tool0':
                raise ModelError(f'{where}: link name {name!r} is already used by another frame')
        frames.update(new)
    frames['tool0'] = (n, T_prev @ tool)
    fields = {
        'name': str(doc.get('name', default_name)), 'joint_names': tuple(names),
        'joint_types': tuple(types), 'joint_placement': np.array(placement),
        'joint_axis': np.array(axes), 'mass': mass, 'com': com, 'inertia': inertia,
        'lower': lim['lower'], 'upper': lim['upper'], 'velocity_limit': lim['velocity'],
        'effort_limit': lim['effort'], 'damping': lim['damping'], 'friction': lim['friction'],
        'frames': frames, 'base_link': 'base_link', 'tip_link': 'tool0'}
    if 'gravity' in doc:
        fields['gravity'] = _array(doc['gravity'], (3,), 'gravity')
    return fields
