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
The immutable robot model: a serial chain of rigid bodies joined by 1-DOF joints.

Units are SI (m, rad, kg, kg*m^2, N, N*m, s) and every array is float64 and read-only.

Internal representation (shared by URDF and DH models, in the spirit of Pinocchio's Model):

- Body 0 is the fixed base (frame ``base_link``); body ``i`` (1..n) is moved by joint ``i``.
- ``joint_placement[i]`` is ``T_{body i-1}_{joint i}``: the joint frame in the parent body frame
  at q = 0. Body ``i``'s frame is the joint frame moved by the joint: rotated by ``q_i`` about
  ``joint_axis[i]`` (revolute, continuous) or translated by ``q_i`` along it (prismatic).
- ``mass[i]``, ``com[i]`` (in body frame) and ``inertia[i]`` (about the COM, body axes) describe
  body ``i`` with every link fixed to it merged in.
- ``frames`` maps every link name to ``(body index, T_body_link)``; ``fk(q, link)`` uses it.

Algorithms live in their own modules (kinematics, dynamics, ik) as functions of the model; the
methods here only forward to them, so one model can serve any number of callers and threads.
The description formats (urdf, dh) and the bundled robots' files (robots) are below the model
too: they give the fields and files that the constructors here build a model of.
"""

import collections
import dataclasses
import os
from pathlib import Path
import time
import types
from types import MappingProxyType

import numpy as np

from . import dh, dynamics, ik, integrators, kinematics, limits, prepared, robots, scene, urdf
from .errors import closest, InputError, LIST_LIMIT, listed, ModelError

JOINT_TYPES = ('revolute', 'continuous', 'prismatic')
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)
#: Environment variable: ``1`` makes :meth:`RobotModel.prepare` use generated code by default.
GENERATED_SWITCH = 'ROBOT_DYNAMICS_GENERATED'


def _frozen(x, shape, name):
    arr = np.array(x, dtype=float)
    if arr.shape != shape:
        raise ModelError(f'{name}: expected shape {shape}, got {arr.shape}')
    if np.any(np.isnan(arr)):
        raise ModelError(f'{name}: contains nan')
    arr.setflags(write=False)
    return arr


@dataclasses.dataclass(frozen=True, eq=False)
class RobotModel:
    """
    A serial manipulator: kinematic tree of one chain plus its inertial parameters.

    Build it with :meth:`from_urdf`, :meth:`from_dh` or :meth:`load`; it never changes after
    construction (use :meth:`replace` for a modified copy).
    """

    name: str
    joint_names: tuple
    joint_types: tuple
    joint_placement: np.ndarray
    joint_axis: np.ndarray
    mass: np.ndarray
    com: np.ndarray
    inertia: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    frames: MappingProxyType
    base_link: str
    tip_link: str
    gravity: np.ndarray = DEFAULT_GRAVITY
    # joints off the chain that from_urdf locked, name -> value [rad or m]; read-only, for
    # information: their links are already part of the bodies and frames
    locked_joints: MappingProxyType = dataclasses.field(default_factory=dict, repr=False)
    # set by __post_init__ from the fields above
    is_prismatic: np.ndarray = dataclasses.field(init=False, repr=False)
    derived: types.SimpleNamespace = dataclasses.field(init=False, repr=False)
    task_mask: np.ndarray = dataclasses.field(init=False, repr=False)

    def __post_init__(self):
        n = len(self.joint_names)
        if n == 0:
            raise ModelError(f'robot {self.name!r} has no moving joints')
        if len(set(self.joint_names)) != n:
            raise ModelError(f'joint names are not unique: {list(self.joint_names)}')
        bad = [t for t in self.joint_types if t not in JOINT_TYPES]
        if len(self.joint_types) != n or bad:
            raise ModelError(f'joint_types must be {n} of {JOINT_TYPES}, got {self.joint_types}')
        set_ = object.__setattr__
        set_(self, 'joint_names', tuple(self.joint_names))
        set_(self, 'joint_types', tuple(self.joint_types))
        for field, shape in (('joint_placement', (n, 4, 4)), ('joint_axis', (n, 3)),
                             ('mass', (n,)), ('com', (n, 3)), ('inertia', (n, 3, 3)),
                             ('lower', (n,)), ('upper', (n,)), ('velocity_limit', (n,)),
                             ('effort_limit', (n,)), ('damping', (n,)), ('friction', (n,)),
                             ('gravity', (3,))):
            set_(self, field, _frozen(getattr(self, field), shape, field))
        norms = np.linalg.norm(self.joint_axis, axis=1)
        if np.any(norms < 1e-9):
            raise ModelError('joint axis of zero length for joint(s) '
                             f'{[j for j, k in zip(self.joint_names, norms) if k < 1e-9]}')
        set_(self, 'joint_axis', _frozen(self.joint_axis / norms[:, None], (n, 3), 'axis'))
        if np.any(self.mass < 0):
            raise ModelError(f'negative link mass: {self.mass}')
        eig = np.linalg.eigvalsh(0.5 * (self.inertia + np.swapaxes(self.inertia, 1, 2)))
        if np.any(eig < -1e-12 * max(1.0, float(np.abs(eig).max()))):
            raise ModelError('link inertia tensor is not positive semi-definite for joint(s) '
                             f'{[j for j, e in zip(self.joint_names, eig) if e.min() < 0]}')
        if np.any(self.lower > self.upper):
            bad = [j for j, a, b in zip(self.joint_names, self.lower, self.upper) if a > b]
            raise ModelError(f'joint lower limit above upper limit for joint(s) {bad}')
        for field, bad, rule in (
                ('velocity_limit', self.velocity_limit <= 0, '> 0 (inf: no limit)'),
                ('effort_limit', self.effort_limit <= 0, '> 0 (inf: no limit)'),
                ('damping', self.damping < 0, '>= 0'), ('friction', self.friction < 0, '>= 0')):
            if np.any(bad):
                values = {j: float(v) for j, v, b in zip(self.joint_names, getattr(self, field),
                                                         bad) if b}
                raise ModelError(f'{field} must be {rule}; got {values}')
        locked = {str(j): float(v) for j, v in dict(self.locked_joints).items()}
        if set(locked) & set(self.joint_names) or not np.all(np.isfinite(list(locked.values()))):
            raise ModelError(f'locked_joints {locked}: values must be finite, and names must not '
                             f'be joints of the model {list(self.joint_names)}')
        set_(self, 'locked_joints', MappingProxyType(locked))
        frames = {}
        for link, (body, T) in dict(self.frames).items():
            if not 0 <= int(body) <= n:
                raise ModelError(f'frame {link!r} attached to body {body}, not in 0..{n}')
            frames[link] = (int(body), _frozen(T, (4, 4), f'frame {link!r}'))
        for link in (self.base_link, self.tip_link):
            if link not in frames:
                raise ModelError(f'link {link!r} is not a frame of the model')
        if frames[self.base_link][0] != 0 or frames[self.tip_link][0] != n:
            raise ModelError(f'base link {self.base_link!r} must be on the base and tip link '
                             f'{self.tip_link!r} on the last moving body')
        set_(self, 'frames', MappingProxyType(frames))
        is_prismatic = np.array([t == 'prismatic' for t in self.joint_types])
        is_prismatic.setflags(write=False)
        set_(self, 'is_prismatic', is_prismatic)
        set_(self, 'derived', types.SimpleNamespace(**kinematics.constants(self),
                                                    **dynamics.constants(self)))
        set_(self, 'task_mask', kinematics.task_mask(self))

    # ---- construction -------------------------------------------------------------------------

    @classmethod
    def from_urdf(cls, source, base_link=None, tip_link=None, locked_joints=None):
        """
        Build from URDF (a file path or an XML string); see :mod:`robot_dynamics.urdf`.

        The chain runs from ``base_link`` (default: the root) to ``tip_link`` (default: found by
        the rule of :mod:`robot_dynamics.urdf`); every body riding on it counts in the dynamics.
        Moving joints off the chain are locked at ``locked_joints[name]`` [rad or m], else at 0
        clipped to their limits (a mimic joint: at its master's locked value), and listed in
        ``model.locked_joints``.
        """
        return cls(**urdf.model_fields(source, base_link=base_link, tip_link=tip_link,
                                       locked_joints=locked_joints))

    @classmethod
    def from_dh(cls, source, convention=None):
        """
        Build from a DH table (YAML path or list of row dicts); see :mod:`robot_dynamics.dh`.

        ``convention`` is ``'standard'`` or ``'modified'``; by default the YAML file's
        ``convention`` key, else standard.
        """
        return cls(**dh.model_fields(source, convention=convention))

    @classmethod
    def load(cls, name):
        """Load a bundled robot by name (see :meth:`available`)."""
        path = robots.path(name)
        if path.suffix == '.urdf':
            return cls.from_urdf(str(path))
        return cls.from_dh(str(path))

    @staticmethod
    def available():
        """Return the names that :meth:`load` accepts."""
        return robots.available()

    def to_urdf(self):
        """
        Export as URDF XML that :meth:`from_urdf` reads back to the same model.

        The links carry the geometry of :func:`robot_dynamics.scene.primitive_visuals`.
        """
        return urdf.model_to_urdf(self, scene.primitive_visuals(self))

    def replace(self, **changes):
        """Return a copy with some fields changed (e.g. scaled ``mass``), validated anew."""
        return dataclasses.replace(self, **changes)

    # ---- attributes -----------------------------------------------------------------------------

    @property
    def dof(self):
        """Return the number of joints n."""
        return len(self.joint_names)

    @property
    def link_names(self):
        """Every link name ``fk`` accepts, from the base to the tip (body frames first)."""
        def order(item):
            name, (body, T) = item
            return body, not np.array_equal(T, np.eye(4)), name
        return [name for name, _ in sorted(self.frames.items(), key=order)]

    def link_body(self, link):
        """Return ``(body index, T_body_link)`` of a link, or raise naming the known links."""
        if link is None:
            link = self.tip_link
        try:
            return self.frames[link]
        except (KeyError, TypeError):
            raise InputError(f'unknown link {link!r}; known links: {self.link_names}') from None

    def joint_indices(self, names):
        """
        Return the model index of each joint in ``names`` (an int array of ``len(names)``).

        ``names`` must list every joint of the model exactly once, in any order (as a
        ``JointTrajectory`` does), so that ``x_model[idx] = x_named`` reorders values given in the
        order of ``names`` into model order. Raises ``InputError`` naming the unknown, missing or
        repeated joints.
        """
        names = [str(name) for name in names]
        counts = collections.Counter(names)
        index = {name: i for i, name in enumerate(self.joint_names)}
        unknown = [name for name in counts if name not in index]
        missing = [name for name in self.joint_names if name not in counts]
        repeated = sorted(name for name, count in counts.items() if count > 1)
        if unknown or missing or repeated:
            near = list(dict.fromkeys(m for name in unknown[:LIST_LIMIT]
                                      for m in closest(name, index)))
            hint = f' (closest to the unknown: {listed(near)})' if near else ''
            raise InputError(f'{len(names)} joint names do not match the model '
                             f'{list(self.joint_names)}: unknown {listed(unknown)}{hint}, '
                             f'missing {listed(missing)}, repeated {listed(repeated)}')
        return np.array([index[name] for name in names], dtype=int)

    def indices_in(self, names):
        """
        Return where each model joint stands in ``names`` (an int array of ``dof``).

        The reverse of :meth:`joint_indices`, for messages that may carry other joints too (a
        ``JointState`` of a whole robot): ``x_model = x_named[idx]``; names that are not joints
        of the model are ignored. Raises ``InputError`` naming the model joints that are missing
        or repeated in ``names``.
        """
        names = [str(name) for name in names]
        counts = collections.Counter(names)
        missing = [name for name in self.joint_names if name not in counts]
        repeated = sorted(name for name in self.joint_names if counts[name] > 1)
        if missing or repeated:
            raise InputError(f'joint names {listed(names)} do not cover the model joints '
                             f'{list(self.joint_names)}: missing {listed(missing)}, repeated '
                             f'{listed(repeated)}')
        first = {}
        for i, name in enumerate(names):
            first.setdefault(name, i)
        return np.array([first[name] for name in self.joint_names], dtype=int)

    def __repr__(self):
        types = ''.join('P' if t == 'prismatic' else 'R' for t in self.joint_types)
        return (f'RobotModel({self.name!r}, dof={self.dof} ({types}), '
                f'base={self.base_link!r}, tip={self.tip_link!r})')

    # ---- kinematics -----------------------------------------------------------------------------

    def fk(self, q, link=None):
        """Pose (..., 4, 4) of ``link`` (default: tip) in the base frame; see kinematics.fk."""
        return kinematics.fk(self, q, link)

    def link_poses(self, q):
        """Poses (..., L, 4, 4) of every link in ``link_names`` order, base frame, one pass."""
        return kinematics.link_poses(self, q)

    def joint_frames(self, q):
        """Poses (..., n, 4, 4) of the joint frames (origin on the axis), base frame."""
        return kinematics.joint_frames(self, q)

    def jacobian(self, q, link=None):
        """Geometric Jacobian (..., 6, n), rows vx vy vz wx wy wz, base frame, link origin."""
        return kinematics.jacobian(self, q, link)

    def jacobian_dot(self, q, qd, link=None):
        """Time derivative of :meth:`jacobian` along ``qd`` (..., 6, n)."""
        return kinematics.jacobian_dot(self, q, qd, link)

    def analytic_jacobian(self, q, link=None):
        """Jacobian (..., 6, n) of ``[x, y, z, roll, pitch, yaw]``; see kinematics."""
        return kinematics.analytic_jacobian(self, q, link)

    def manipulability(self, q, link=None, mask=None):
        """Yoshikawa manipulability ``sqrt(det(J J^T))`` over the task rows."""
        return kinematics.manipulability(self, q, link, mask)

    def condition_number(self, q, link=None, mask=None):
        """Condition number of the task-row Jacobian (inf at a singularity)."""
        return kinematics.condition_number(self, q, link, mask)

    def is_singular(self, q, link=None, mask=None, tol=1e-6):
        """Return True where the task-row Jacobian loses rank (smallest singular value < tol)."""
        return kinematics.is_singular(self, q, link, mask, tol)

    # ---- dynamics -------------------------------------------------------------------------------

    def inverse_dynamics(self, q, qd, qdd, *, gravity=None, f_ext=None, friction=False,
                         f_ext_frame=None):
        """
        Joint torques (..., n) by recursive Newton-Euler; see dynamics.inverse_dynamics.

        ``f_ext`` is the wrench the arm exerts on the environment at ``f_ext_frame``'s origin
        (default the tip), base-frame axes.
        """
        return dynamics.inverse_dynamics(self, q, qd, qdd, gravity=gravity, f_ext=f_ext,
                                         friction=friction, f_ext_frame=f_ext_frame)

    def mass_matrix(self, q):
        """Joint-space mass matrix (..., n, n) by the composite-rigid-body algorithm."""
        return dynamics.mass_matrix(self, q)

    def coriolis_matrix(self, q, qd, *, form='christoffel'):
        """
        Coriolis matrix C (..., n, n) with dM/dt - 2C skew-symmetric; see dynamics.coriolis_matrix.

        ``form``: ``'christoffel'`` (default; Christoffel symbols of M, as textbooks, Robotics
        Toolbox and Pinocchio) or ``'newton_euler'``; both give the same ``C qd``.
        """
        return dynamics.coriolis_matrix(self, q, qd, form=form)

    def gravity_torques(self, q, *, gravity=None):
        """Joint torques (..., n) that hold the arm still against gravity."""
        return dynamics.gravity_torques(self, q, gravity=gravity)

    def nonlinear_effects(self, q, qd, *, gravity=None):
        """``C(q, qd) qd + g(q)`` (..., n)."""
        return dynamics.nonlinear_effects(self, q, qd, gravity=gravity)

    def forward_dynamics(self, q, qd, tau, *, gravity=None, f_ext=None, friction=False,
                         method='aba', f_ext_frame=None):
        """
        Joint accelerations (..., n); ``method`` 'aba' (O(n)), 'crba' or 'strobe' (RNEA).

        ``f_ext`` at ``f_ext_frame`` as in :meth:`inverse_dynamics`.
        """
        return dynamics.forward_dynamics(self, q, qd, tau, gravity=gravity, f_ext=f_ext,
                                         friction=friction, method=method,
                                         f_ext_frame=f_ext_frame)

    def kinetic_energy(self, q, qd):
        """Kinetic energy ``0.5 qd^T M qd`` [J] (...)."""
        return dynamics.kinetic_energy(self, q, qd)

    def potential_energy(self, q, *, gravity=None):
        """Gravitational potential energy ``-sum m_i g . c_i`` [J] (...), zero at the base."""
        return dynamics.potential_energy(self, q, gravity=gravity)

    def inertial_parameters(self):
        """Stacked 10 parameters per body (10 n,); see dynamics.inertial_parameters."""
        return dynamics.inertial_parameters(self)

    def regressor(self, q, qd, qdd, *, gravity=None):
        """Regressor Y (..., n, 10 n) with ``Y @ inertial_parameters() == inverse_dynamics``."""
        return dynamics.regressor(self, q, qd, qdd, gravity=gravity)

    def slotine_li_regressor(self, q, qd, qd_r, qdd_r, *, gravity=None):
        """Regressor (..., n, 10 n) of ``M qdd_r + C(q, qd) qd_r + g``; see dynamics."""
        return dynamics.slotine_li_regressor(self, q, qd, qd_r, qdd_r, gravity=gravity)

    def prepare(self, link=None, gravity=None, generated=None):
        """
        Return a :class:`~robot_dynamics.prepared.PreparedModel`: single-state calls for loops.

        Its ``inverse_dynamics``, ``forward_dynamics``, ``gravity_torques``, ``mass_matrix``,
        ``fk`` and ``jacobian`` (of ``link``, default the tip) take one state, check nothing but
        sizes and write into ``out``: no checks, batch handling or allocation per call, which
        these methods spend more time on than the computation for one state.
        ``generated=True``: the dynamics from code generated for this model
        (:mod:`robot_dynamics.generated`), built at first use and cached; by default (None) the
        environment's ``ROBOT_DYNAMICS_GENERATED=1`` says so, which reaches every loop that
        prepares its model: the controller's one-state laws and the simulated arm's step
        (:class:`~robot_dynamics.plant.Plant`).
        """
        if generated is None:
            generated = os.environ.get(GENERATED_SWITCH, '0') not in ('', '0')
        return prepared.PreparedModel(self, link=link, gravity=gravity, generated=generated)

    def warm_up(self):
        """
        Compile every kernel a control or simulation loop calls, for one state and a batch.

        numba compiles a kernel on its first call in a new install (cached on disk afterwards) and
        loads it on its first call in a new process, both far longer than a control period: a loop
        calls this before its first cycle so that no cycle pays for either. Returns the time it
        took [s].
        """
        start = time.perf_counter()
        middle = limits.middle(self.lower, self.upper)
        for q in (middle, np.tile(middle, (2, 1))):
            zero = np.zeros_like(q)
            self.fk(q)
            self.link_poses(q)
            self.jacobian_dot(q, zero)
            self.inverse_dynamics(q, zero, zero, friction=True)
            self.forward_dynamics(q, zero, zero, friction=True)
            self.mass_matrix(q)
            self.gravity_torques(q)
        zero = np.zeros(self.dof)
        integrators.rk4_step_compiled(self, middle, zero, zero, 1e-3, friction=True)
        self.ik(self.fk(middle), seed=middle)
        return time.perf_counter() - start

    # ---- inverse kinematics ---------------------------------------------------------------------

    def ik(self, target, seed=None, **options):
        """Solve inverse kinematics for the tip pose ``target`` (4, 4); see robot_dynamics.ik."""
        return ik.ik(self, target, seed=seed, **options)

    def ik_all(self, target, **options):
        """Every closed-form IK solution (list of (n,) arrays); see robot_dynamics.ik.ik_all."""
        return ik.ik_all(self, target, **options)


def chain_options(parameter):
    """
    Return the ``RobotModel.from_urdf`` chain keywords of a node's chain parameters.

    ``parameter(name, default)`` gives ``base_link``, ``tip_link`` (empty: the URDF's rule),
    ``locked_joint_names`` and ``locked_joint_positions`` (one position per name, else
    ``InputError``).
    """
    names = list(parameter('locked_joint_names', None) or ())
    positions = list(parameter('locked_joint_positions', None) or ())
    if len(names) != len(positions):
        raise InputError(f'locked_joint_names has {len(names)} names but locked_joint_positions '
                         f'has {len(positions)} values')
    return {'base_link': parameter('base_link', '') or None,
            'tip_link': parameter('tip_link', '') or None,
            'locked_joints': dict(zip(names, positions))}


def from_source(*, robot='', urdf_file='', dh_file='', robot_description='', base_link=None,
                tip_link=None, locked_joints=None):
    """
    Build a model from exactly one source and return ``(model, urdf)``.

    Sources: ``robot`` (a bundled name), ``urdf_file``, ``dh_file`` (a DH table in YAML) or
    ``robot_description`` (URDF XML text). ``urdf`` is the URDF text that describes the model to
    others (a ``/robot_description`` topic): the file's own text for URDF sources, so that
    viewers keep meshes and every other part of the robot, else ``model.to_urdf()``. The chain
    options (``base_link``, ``tip_link``, ``locked_joints``) apply to URDF sources; the same
    options applied to ``urdf`` rebuild the same model. Raises ``InputError`` unless exactly one
    source is given, ``ModelError`` for a bad description.
    """
    given = {k: v for k, v in (('robot', robot), ('urdf_file', urdf_file), ('dh_file', dh_file),
                               ('robot_description', robot_description)) if v}
    if len(given) != 1:
        raise InputError('give exactly one of robot, urdf_file, dh_file, robot_description; got '
                         f'{sorted(given) or "none"}')
    chain = {'base_link': base_link or None, 'tip_link': tip_link or None,
             'locked_joints': dict(locked_joints) if locked_joints else None}
    if robot:
        source = robots.path(robot)
        if source.suffix != '.urdf':
            dh_file = str(source)
        else:
            urdf_file = str(source)
    if dh_file:
        if any(chain.values()):
            raise InputError(f'base_link, tip_link and locked_joints apply to URDF sources, not '
                             f'to the DH table {dh_file!r}')
        model = RobotModel.from_dh(dh_file)
        return model, model.to_urdf()
    if urdf_file:
        if not Path(urdf_file).is_file():
            raise InputError(f'urdf_file {urdf_file!r} does not exist')
        robot_description = Path(urdf_file).read_text()
    return RobotModel.from_urdf(robot_description, **chain), robot_description
