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
Inverse kinematics: closed forms with every branch, and a numeric solver for any chain.

The target is the pose ``T_base_tip`` (4, 4) of ``model.tip_link`` in the base frame. Errors
are measured as in :func:`robot_dynamics.spatial.pose_error`: ``[dp; dtheta]`` with ``dp``
[m] the position difference and ``dtheta`` [rad] the rotation vector of
``R_target R_current^T``, both in the base frame, rows ``vx vy vz wx wy wz``. The task ``mask``
(six weights, default ``model.task_mask``) selects the rows that must match; ``success`` is
True only when ``fk(q)`` meets ``tol_position`` on the selected position rows,
``tol_orientation`` on the selected rotation rows, and ``q`` is inside the joint limits.

Closed forms (``ik_all``, and ``ik`` with ``method='auto'`` or ``'analytic'``) are found by
looking at the geometry of the joint axes at q = 0, never by robot name. Every joint motion is
a screw fixed in the base frame at q = 0, so ``T(q) = g_1(q_1) ... g_n(q_n) T(0)`` (product of
exponentials; Murray, Li and Sastry 1994, ch. 3) and the solvers below are written with the
Paden-Kahan subproblems of that book:

- planar arms: every revolute axis parallel to one direction ``n``, prismatic axes along ``n``
  (a lift, at most one) or perpendicular to it. The in-plane chain ``RR`` (2R elbow, two
  solutions; seed 003 §3.3.4 with the corrected formulas of the errata), ``RRR`` (position and
  yaw: wrist point, then 2R) or ``RP`` (polar: rotary plus radial slide) covers the planar 2R
  and 3R arms, the RRP SCARA (with a wrist joint: RRRP) and the rotary-prismatic arm;
- 6R arms with a spherical wrist (axes 4, 5, 6 through one point; Pieper's decomposition,
  seed 003 §3.3.4): the wrist centre gives q1..q3 (up to four solutions) when axes 2 and 3 are
  parallel or axes 1 and 2 intersect, and the wrist orientation gives q4..q6 as an Euler-angle
  extraction (two solutions each), e.g. the PUMA 560.

Each candidate is checked through :func:`robot_dynamics.kinematics.fk`; revolute angles are
shifted by multiples of 2 pi into the joint limits where possible (:func:`closed_form` tells
which closed form, if any, a model has). Out of reach, the candidates degrade to the nearest
configurations (arm stretched towards the target), which give the residual.

The numeric solver (any chain, ``method='numeric'``, and ``'auto'`` without a closed form) is a
Levenberg-Marquardt iteration on the weighted pose error with the damping
``lambda = damping * E + damping_floor``, ``E = e^T W e / 2`` (Chan and Lawrence 1988;
Sugihara 2011): ``dq = J_w^T (J_w J_w^T + lambda I)^-1 e_w`` (or the n x n form when n is
smaller than the number of task rows). After each step revolute angles are shifted by 2 pi
into their limits when possible and otherwise clamped, prismatic joints clamped, continuous
joints left free; a joint held at a limit by a step that pushes outwards is left out of the
solve (active set), so the other joints take the step. The first attempt starts at the seed;
an attempt that stalls restarts from a configuration drawn uniformly inside the limits, until
``timeout``. The iteration is compiled with numba (as the chain recursions of
:mod:`robot_dynamics.dynamics`): numpy's per-call overhead would dominate a 6x6 problem.

With ``method='auto'`` and a closed form that finds no solution, the target is unreachable
(within tolerance and limits) whenever the mask selects every row the closed form solves; a
local descent from the nearest branch then only lowers the reported residual. Otherwise (a mask
leaving rows free that the closed form fixes) the numeric solver searches in full.
"""

import dataclasses
import enum
import math
import time
import weakref

import numpy as np

from . import kinematics
from ._jit import njit
from .errors import as_array, as_joint_array, choice, InputError
from .kinematics import pose_jacobian_state
from .spatial import check_transform, pose_error, rotation_log


DEFAULT_TOL_POSITION = 1e-6      # m
DEFAULT_TOL_ORIENTATION = 1e-6   # rad
DEFAULT_TIMEOUT = 0.005          # s
DEFAULT_MAX_ITERATIONS = 40      # LM iterations per attempt
DEFAULT_MAX_RESTARTS = 10000     # random restarts (the timeout usually ends the search first)
DEFAULT_DAMPING = 0.1            # LM damping per unit of E [1/(m^2 or rad^2)]
DEFAULT_DAMPING_FLOOR = 1e-9     # keeps the damped system positive definite
DEFAULT_STALL_ITERATIONS = 6     # restart after this many iterations without progress
DEFAULT_STALL_RATIO = 0.05       # progress: E falls below (1 - ratio) times its best value
DEFAULT_RNG_SEED = 0             # restarts are reproducible unless ``rng`` is given
DEFAULT_MAX_JUMP = 0.5           # rad or m, largest joint step ``ik_path`` calls continuous

#: Tolerance [m, or rad for directions] of the structure tests on the joint axes (parallel,
#: intersecting) that choose a closed form, and below which a lever arm counts as zero.
STRUCTURE_TOL = 1e-9

#: Two closed-form branches closer than this [rad or m] in every joint are one solution (at the
#: workspace boundary the two elbow branches meet).
SAME_SOLUTION_TOL = 1e-6

#: Number of restart configurations handed to the compiled solver per call.
_RESTART_CHUNK = 16
_TWO_PI = 2.0 * math.pi
#: Kinds of joint for the projection onto the limits.
_CLAMP, _WRAP, _FREE = 0, 1, 2


class Method(enum.Enum):
    """How ``ik`` solves: closed form when there is one, closed form only, or numeric."""

    AUTO = 'auto'
    ANALYTIC = 'analytic'
    NUMERIC = 'numeric'


@dataclasses.dataclass(frozen=True)
class IKResult:
    """
    Outcome of one inverse-kinematics solve.

    Attributes
    ----------
    q : numpy.ndarray, shape (n,)
        Joint positions [rad or m], inside the joint limits. When ``success`` is False, the
        best configuration found (smallest weighted pose error).
    success : bool
        ``fk(q)`` meets both tolerances on the masked rows and ``q`` is within the limits.
    position_error : float
        Norm of the masked position rows of the pose error at ``q`` [m].
    orientation_error : float
        Norm of the masked rotation rows of the pose error at ``q`` [rad].
    iterations : int
        Levenberg-Marquardt iterations (0 for a closed-form solution).
    time : float
        Wall-clock time of the solve [s].
    method : str
        ``'analytic'`` or ``'numeric'``: the solver that produced ``q``.
    reason : str
        Why the solve ended, in words.
    restarts : int
        Random restarts of the numeric solver.
    residual : numpy.ndarray, shape (6,)
        Pose error ``[dp; dtheta]`` at ``q`` (base frame), zero in unmasked rows.
    solutions : int
        Number of closed-form solutions found within tolerance and limits (0 for numeric).

    """

    q: np.ndarray
    success: bool
    position_error: float
    orientation_error: float
    iterations: int
    time: float
    method: str
    reason: str
    restarts: int = 0
    residual: np.ndarray = None
    solutions: int = 0


@dataclasses.dataclass(frozen=True)
class IKPathResult:
    """
    Outcome of :func:`ik_path` over N targets.

    Attributes
    ----------
    q : numpy.ndarray, shape (N, n)
        Joint positions of each point [rad or m].
    success : numpy.ndarray of bool, shape (N,)
        Per point, as :attr:`IKResult.success`.
    position_error, orientation_error : numpy.ndarray, shape (N,)
        Per point [m] and [rad].
    jumps : tuple of int
        Indices i >= 1 where some joint moves more than ``max_jump`` from point i - 1.
    failed : tuple of int
        Indices of the points that were not reached.
    discontinuities : tuple of int
        Sorted union of ``jumps`` and ``failed``: where a continuous joint path is impossible
        (closed form: no solution within ``max_jump``) or was not found (numeric).
    results : tuple of IKResult
        The per-point results.

    """

    q: np.ndarray
    success: np.ndarray
    position_error: np.ndarray
    orientation_error: np.ndarray
    jumps: tuple
    failed: tuple
    discontinuities: tuple
    results: tuple

    @property
    def continuous(self):
        """Report whether every point was reached without a jump."""
        return not self.discontinuities


@dataclasses.dataclass(frozen=True)
class _Options:
    method: Method
    tol_position: float
    tol_orientation: float
    timeout: float
    mask: np.ndarray
    weights: np.ndarray
    max_iterations: int
    max_restarts: int
    damping: float
    damping_floor: float
    stall_iterations: int
    stall_ratio: float
    rng: object


# ---- input checks -------------------------------------------------------------------------------

def _positive(value, name):
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f'{name}: expected a positive number, got {value!r}') from None
    if not math.isfinite(x) or x <= 0.0:
        raise InputError(f'{name}: must be a finite number > 0, got {value!r}')
    return x


def _count(value, name, minimum):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f'{name}: expected an integer >= {minimum}, got {value!r}')
    return int(value)


def _check_mask(model, mask):
    if mask is None:
        return np.array(model.task_mask, dtype=float)      # a writable copy for numba
    m = np.array(as_array(mask, (6,), 'mask'))
    if m.shape != (6,):
        raise InputError(f'mask: expected six weights for vx vy vz wx wy wz, got shape {m.shape}')
    if np.any(m < 0.0) or not np.any(m > 0.0):
        raise InputError(f'mask: weights must be >= 0 with at least one > 0, got {m.tolist()}')
    return m


def _options(model, method='auto', tol_position=DEFAULT_TOL_POSITION,
             tol_orientation=DEFAULT_TOL_ORIENTATION, timeout=DEFAULT_TIMEOUT, mask=None,
             weights=None, max_iterations=DEFAULT_MAX_ITERATIONS,
             max_restarts=DEFAULT_MAX_RESTARTS, damping=DEFAULT_DAMPING,
             damping_floor=DEFAULT_DAMPING_FLOOR, stall_iterations=DEFAULT_STALL_ITERATIONS,
             stall_ratio=DEFAULT_STALL_RATIO, rng=None):
    if weights is None:
        w = np.ones(model.dof)
    else:
        w = as_joint_array(weights, model.dof, 'weights')
        if w.shape != (model.dof,) or np.any(w < 0.0):
            raise InputError(f'weights: expected {model.dof} weights >= 0, got {w.tolist()}')
    ratio = _positive(stall_ratio, 'stall_ratio')
    if ratio >= 1.0:
        raise InputError(f'stall_ratio: must be in (0, 1), got {stall_ratio!r}')
    return _Options(
        method=choice(method, Method, 'method'),
        tol_position=_positive(tol_position, 'tol_position'),
        tol_orientation=_positive(tol_orientation, 'tol_orientation'),
        timeout=_positive(timeout, 'timeout'),
        mask=_check_mask(model, mask),
        weights=w,
        max_iterations=_count(max_iterations, 'max_iterations', 1),
        max_restarts=_count(max_restarts, 'max_restarts', 0),
        damping=_positive(damping, 'damping'),
        damping_floor=_positive(damping_floor, 'damping_floor'),
        stall_iterations=_count(stall_iterations, 'stall_iterations', 1),
        stall_ratio=ratio,
        rng=rng,
    )


def default_seed(model):
    """
    Return the seed used when none is given, shape (n,) [rad or m].

    The middle of each joint range; 0 (moved into a one-sided range) for unbounded joints.
    """
    lo, hi = np.asarray(model.lower, dtype=float), np.asarray(model.upper, dtype=float)
    bounded = np.isfinite(lo) & np.isfinite(hi)
    mid = 0.5 * (np.where(bounded, lo, 0.0) + np.where(bounded, hi, 0.0))
    return np.where(bounded, mid, np.clip(0.0, lo, hi))


def _check_target(target):
    target = check_transform(target, 'target')
    if target.shape != (4, 4):
        raise InputError(f'target: expected one pose of shape (4, 4), got {target.shape}')
    return np.array(target, dtype=float, order='C')


def _check_seed(model, seed):
    if seed is None:
        return default_seed(model)
    q = as_joint_array(seed, model.dof, 'seed')
    if q.shape != (model.dof,):
        raise InputError(f'seed: expected shape ({model.dof},), got {q.shape}')
    return q.copy()


# ---- pose errors --------------------------------------------------------------------------------

def _measure(model, q, target, mask):
    """Return ``(residual (B, 6), position errors (B,), orientation errors (B,))`` of ``q``."""
    e = pose_error(kinematics.fk(model, q).reshape(-1, 4, 4), target) * (mask > 0.0)
    return e, np.linalg.norm(e[:, :3], axis=1), np.linalg.norm(e[:, 3:], axis=1)


def _within_limits(model, q):
    return np.all((q >= model.lower) & (q <= model.upper), axis=-1)


# ---- zero-configuration geometry and the Paden-Kahan subproblems --------------------------------
#
# The closed forms run on Python floats (3-tuples): for 3-vectors, numpy's per-call overhead is
# far larger than the arithmetic.

@dataclasses.dataclass(frozen=True)
class _Geometry:
    """Joint screws at q = 0 in the base frame: unit ``axis`` (n, 3), a ``point`` on each."""

    axis: np.ndarray
    point: np.ndarray
    tip: np.ndarray         # T_base_tip at q = 0
    tip_body: int
    revolute: np.ndarray    # bool (n,), revolute or continuous


def _geometry(model):
    T = np.eye(4)
    axis, point = [], []
    for i in range(model.dof):
        T = T @ model.joint_placement[i]
        axis.append(T[:3, :3] @ model.joint_axis[i])
        point.append(T[:3, 3].copy())
    body, _ = model.link_body(None)
    tip = np.asarray(kinematics.fk(model, np.zeros(model.dof)), dtype=float)
    axis = np.array(axis)
    return _Geometry(axis=axis / np.linalg.norm(axis, axis=1)[:, None], point=np.array(point),
                     tip=tip, tip_body=body, revolute=~np.asarray(model.is_prismatic))


def _vec(x):
    return tuple(np.asarray(x, dtype=float).tolist())


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _add(a, b, s=1.0):
    """Return ``a + s b``."""
    return (a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2])


def _norm(a):
    return math.sqrt(_dot(a, a))


def _normal_part(w, a):
    """Component of ``a`` normal to the unit vector ``w``."""
    return _add(a, w, -_dot(w, a))


def _matvec(R, v):
    return (_dot(R[0], v), _dot(R[1], v), _dot(R[2], v))


def _transpose(R):
    return tuple(zip(*R))


def _matmul(A, B):
    (a, b, c), (d, e, f), (g, h, i) = A
    (j, k, m), (n, o, p), (r, s, t) = B
    return ((a * j + b * n + c * r, a * k + b * o + c * s, a * m + b * p + c * t),
            (d * j + e * n + f * r, d * k + e * o + f * s, d * m + e * p + f * t),
            (g * j + h * n + i * r, g * k + h * o + i * s, g * m + h * p + i * t))


def _rotation(w, angle):
    """Rotation matrix (rows) of ``angle`` about the unit axis ``w`` (Rodrigues)."""
    x, y, z = w
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    return ((c + x * x * t, x * y * t - z * s, x * z * t + y * s),
            (y * x * t + z * s, c + y * y * t, y * z * t - x * s),
            (z * x * t - y * s, z * y * t + x * s, c + z * z * t))


def _rotate(w, angle, v):
    """Rotate ``v`` by ``angle`` about the unit axis ``w`` (Rodrigues)."""
    c, s = math.cos(angle), math.sin(angle)
    return _add(_add(_add((0.0, 0.0, 0.0), v, c), _cross(w, v), s), w, _dot(w, v) * (1.0 - c))


def _pk1(w, a, b, default):
    """
    Angle rotating ``a`` onto ``b`` about the unit axis ``w`` (Paden-Kahan subproblem 1).

    Only the components normal to ``w`` matter; if either vanishes, any angle works and
    ``default`` is returned (a singular configuration: the caller passes the seed's value).
    """
    ap = _normal_part(w, a)
    bp = _normal_part(w, b)
    if _dot(ap, ap) < STRUCTURE_TOL ** 2 or _dot(bp, bp) < STRUCTURE_TOL ** 2:
        return default
    return math.atan2(_dot(w, _cross(ap, bp)), _dot(ap, bp))


def _pk2(w1, w2, p, q, default1):
    """
    Solve ``R(w1, t1) R(w2, t2) p = q`` for vectors (Paden-Kahan subproblem 2).

    ``w1`` and ``w2`` are unit axes through the origin, not parallel. Returns a list of one or
    two ``(t1, t2)``; when ``q`` cannot be reached (``|p| != |q|`` or outside the cone) the
    nearest angles are returned and the caller's check through fk rejects them.
    """
    c12 = _dot(w1, w2)
    den = 1.0 - c12 * c12
    alpha = (_dot(w1, q) - c12 * _dot(w2, p)) / den
    beta = (_dot(w2, p) - c12 * _dot(w1, q)) / den
    x = _cross(w1, w2)
    g2 = (_dot(p, p) - alpha * alpha - beta * beta - 2.0 * alpha * beta * c12) / _dot(x, x)
    gammas = (0.0,) if g2 <= 0.0 else (math.sqrt(g2), -math.sqrt(g2))
    out = []
    for g in gammas:
        z = _add(_add(_add((0.0, 0.0, 0.0), w1, alpha), w2, beta), x, g)
        out.append((_pk1(w1, z, q, default1), _pk1(w2, p, z, 0.0)))
    return out


def _pk3(w, r, p, q, delta):
    """
    Angles rotating ``p`` about the axis (``w`` through ``r``) to distance ``delta`` from ``q``.

    Paden-Kahan subproblem 3: one or two angles (the nearest one when out of reach).
    """
    up = _normal_part(w, _add(p, r, -1.0))
    vp = _normal_part(w, _add(q, r, -1.0))
    nu, nv = _norm(up), _norm(vp)
    d2 = delta * delta - _dot(w, _add(p, q, -1.0)) ** 2
    theta0 = math.atan2(_dot(w, _cross(up, vp)), _dot(up, vp))
    if nu < STRUCTURE_TOL or nv < STRUCTURE_TOL:
        return [theta0]
    psi = math.acos(min(1.0, max(-1.0, (nu * nu + nv * nv - d2) / (2.0 * nu * nv))))
    return [theta0 + psi, theta0 - psi]


def _plane_basis(n):
    """Return unit vectors ``u``, ``v`` with ``(u, v, n)`` right-handed."""
    t = (1.0, 0.0, 0.0) if abs(n[0]) < 0.9 else (0.0, 1.0, 0.0)
    u = _cross(n, t)
    u = _add((0.0, 0.0, 0.0), u, 1.0 / _norm(u))
    return u, _cross(n, u)


def _angle_2d(a, b):
    """Signed angle from the 2-D vector ``a`` to ``b``."""
    return math.atan2(a[0] * b[1] - a[1] * b[0], a[0] * b[0] + a[1] * b[1])


def _solve_2r(c1, c2, p0, x, default1):
    """
    Planar 2R in 2-D plane coordinates: ``c1 + R(t1) (c2 - c1 + R(t2) (p0 - c2)) = x``.

    Law of cosines for ``t2`` (seed 003 §3.3.4, corrected: ``c2 = (x^2 + y^2 - l1^2 - l2^2) /
    (2 l1 l2)``, ``s2 = +-sqrt(1 - c2^2)``), then ``t1`` turns the elbow vector onto ``x``.
    Out of reach the cosine is clamped: the arm stretched or folded towards ``x``, the nearest
    point of the workspace. Returns two ``(t1, t2)`` (equal on the boundary).
    """
    a = (c2[0] - c1[0], c2[1] - c1[1])
    b = (p0[0] - c2[0], p0[1] - c2[1])
    d = (x[0] - c1[0], x[1] - c1[1])
    l1, l2 = math.hypot(*a), math.hypot(*b)
    cos2 = (d[0] * d[0] + d[1] * d[1] - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)
    psi = math.acos(min(1.0, max(-1.0, cos2)))
    base = math.atan2(a[1], a[0]) - math.atan2(b[1], b[0])
    out = []
    for t2 in (base + psi, base - psi):
        c, s = math.cos(t2), math.sin(t2)
        w = (a[0] + c * b[0] - s * b[1], a[1] + s * b[0] + c * b[1])
        t1 = default1 if math.hypot(*d) < STRUCTURE_TOL else _angle_2d(w, d)
        out.append((t1, t2))
    return out


# ---- closed-form solvers ------------------------------------------------------------------------

class _ClosedForm:
    """
    A closed-form solver: candidate joint vectors for a target, every branch.

    ``rows`` (bool, 6) are the task rows its solutions are complete for: for any mask that
    selects at least these rows, every solution of the masked problem is among the candidates.
    ``candidates(target, hint)`` returns lists of n joint values (unverified; out-of-reach
    targets give the nearest configurations); ``hint`` (list) fills joints a singularity
    leaves free.
    """

    name = ''
    rows = np.ones(6, dtype=bool)


class _Planar(_ClosedForm):
    """
    Arms whose revolute axes are all parallel to ``n``: in-plane chains RR, RRR and RP.

    Prismatic joints along ``n`` (at most one) lift the plane; prismatic joints normal to
    ``n`` slide in it (the ``P`` of ``RP``, after the revolute joint).
    """

    PATTERNS = {'RR': 'planar 2R', 'RRR': 'planar 3R', 'RP': 'planar rotary-prismatic'}

    @classmethod
    def detect(cls, model, geo):
        n_joints = model.dof
        if geo.tip_body != n_joints or not geo.revolute.any():
            return None
        rev = np.flatnonzero(geo.revolute)
        n = geo.axis[rev[0]]
        if np.any(np.linalg.norm(np.cross(geo.axis[rev], n), axis=1) > STRUCTURE_TOL):
            return None
        lift, seq = [], []
        for i in range(n_joints):
            if geo.revolute[i]:
                seq.append((i, 'R'))
            elif np.linalg.norm(np.cross(geo.axis[i], n)) < STRUCTURE_TOL:
                lift.append(i)
            elif abs(geo.axis[i] @ n) < STRUCTURE_TOL:
                seq.append((i, 'P'))
            else:
                return None
        pattern = ''.join(k for _, k in seq)
        if len(lift) > 1 or pattern not in cls.PATTERNS:
            return None
        solver = cls()
        solver.n_joints = n_joints
        solver.pattern = pattern
        solver.joints = [i for i, _ in seq]
        solver.lift = lift[0] if lift else None
        solver.n = _vec(n)
        solver.u, solver.v = _plane_basis(solver.n)
        solver.sign = (geo.axis @ n).tolist()        # +-1 for joints along n
        solver.c = [solver._proj(_vec(geo.point[i])) for i in solver.joints]
        tip = _vec(geo.tip[:3, 3])
        solver.p0 = solver._proj(tip)
        solver.h0 = _dot(solver.n, tip)
        solver.R0t_u = _vec(geo.tip[:3, :3].T @ np.array(solver.u))   # R0^T u
        if pattern == 'RP':
            slide = solver._proj(_vec(geo.axis[solver.joints[1]]))
            solver.slide = (slide[0] / math.hypot(*slide), slide[1] / math.hypot(*slide))
            lengths = [1.0]
        elif pattern == 'RR':
            lengths = [math.dist(solver.c[1], solver.c[0]), math.dist(solver.p0, solver.c[1])]
        else:
            lengths = [math.dist(solver.c[1], solver.c[0]), math.dist(solver.c[2], solver.c[1])]
        if min(lengths) < STRUCTURE_TOL:
            return None
        rows = np.zeros(6, dtype=bool)
        rows[:3] = True
        if pattern == 'RRR':
            rows[3:] = np.abs(n) > STRUCTURE_TOL
        solver.rows = rows
        solver.name = cls.PATTERNS[pattern] + (' with a lift joint' if lift else '')
        return solver

    def _proj(self, x):
        return (_dot(self.u, x), _dot(self.v, x))

    def candidates(self, target, hint):
        Tl = target.tolist()
        pt = (Tl[0][3], Tl[1][3], Tl[2][3])
        x = self._proj(pt)
        q = [0.0] * self.n_joints if hint is None else list(hint)
        sign = self.sign
        if self.lift is not None:
            q[self.lift] = (_dot(self.n, pt) - self.h0) / sign[self.lift]
        j = self.joints
        t1_hint = q[j[0]] * sign[j[0]]
        out = []
        if self.pattern == 'RP':
            c1, e = self.c[0], self.slide
            r0 = (self.p0[0] - c1[0], self.p0[1] - c1[1])
            d = (x[0] - c1[0], x[1] - c1[1])
            b = r0[0] * e[0] + r0[1] * e[1]
            disc = max(0.0, b * b - (r0[0] ** 2 + r0[1] ** 2) + d[0] ** 2 + d[1] ** 2)
            for s in (-b + math.sqrt(disc), -b - math.sqrt(disc)):
                w = (r0[0] + s * e[0], r0[1] + s * e[1])
                t1 = t1_hint if math.hypot(*d) < STRUCTURE_TOL else _angle_2d(w, d)
                qq = list(q)
                qq[j[0]], qq[j[1]] = t1 * sign[j[0]], s
                out.append(qq)
            return out
        if self.pattern == 'RR':
            triples = [(t1, t2, None)
                       for t1, t2 in _solve_2r(self.c[0], self.c[1], self.p0, x, t1_hint)]
        else:
            Ru = _matvec(Tl, self.R0t_u)           # R_target R0^T u (Tl rows start with R)
            phi = math.atan2(_dot(self.v, Ru), _dot(self.u, Ru))
            c, s = math.cos(phi), math.sin(phi)
            r = (self.p0[0] - self.c[2][0], self.p0[1] - self.c[2][1])
            wrist = (x[0] - c * r[0] + s * r[1], x[1] - s * r[0] - c * r[1])
            triples = [(t1, t2, phi - t1 - t2)
                       for t1, t2 in _solve_2r(self.c[0], self.c[1], self.c[2], wrist, t1_hint)]
        for t1, t2, t3 in triples:
            qq = list(q)
            qq[j[0]], qq[j[1]] = t1 * sign[j[0]], t2 * sign[j[1]]
            if t3 is not None:
                qq[j[2]] = t3 * sign[j[2]]
            out.append(qq)
        return out


def _line_intersection(p1, w1, p2, w2):
    """Closest points of two lines; ``(midpoint, distance)``, or None when parallel."""
    x = _cross(w1, w2)
    xx = _dot(x, x)
    if xx < STRUCTURE_TOL ** 2:
        return None
    d = _add(p2, p1, -1.0)
    a = _add(p1, w1, _dot(_cross(d, w2), x) / xx)
    b = _add(p2, w2, _dot(_cross(d, w1), x) / xx)
    return _add(_add((0.0, 0.0, 0.0), a, 0.5), b, 0.5), _norm(_add(a, b, -1.0))


def _distance_to_line(x, p, w):
    return _norm(_normal_part(w, _add(x, p, -1.0)))


class _SphericalWrist(_ClosedForm):
    """
    6R arms whose last three axes meet in one point: Pieper's decomposition (seed 003 §3.3.4).

    The wrist centre ``c`` does not move with q4..q6, so ``g1 g2 g3 c0 = c`` fixes q1..q3:
    with axes 2 and 3 parallel, q1 brings ``c`` into the plane of the 2-3 linkage and a
    planar 2R gives q2, q3; with axes 1 and 2 meeting at ``s``, ``|c - s|`` fixes q3
    (subproblem 3) and subproblem 2 gives q1, q2. The wrist rotation
    ``R4 R5 R6 = (R1 R2 R3)^T R R0^T`` then gives q4, q5 (subproblem 2 applied to axis 6) and
    q6 (subproblem 1): the two Euler-angle solutions.
    """

    name = '6R spherical wrist (Pieper)'

    @classmethod
    def detect(cls, model, geo):
        if model.dof != 6 or geo.tip_body != 6 or not geo.revolute.all():
            return None
        w = [_vec(a) for a in geo.axis]
        p = [_vec(a) for a in geo.point]
        hit = _line_intersection(p[3], w[3], p[4], w[4])
        if hit is None or hit[1] > STRUCTURE_TOL:
            return None
        centre = hit[0]
        if (_distance_to_line(centre, p[5], w[5]) > STRUCTURE_TOL
                or _norm(_cross(w[4], w[5])) < STRUCTURE_TOL):
            return None
        solver = cls()
        solver.w, solver.p, solver.centre = w, p, centre
        R0 = geo.tip[:3, :3]
        solver.R0t = tuple(tuple(row) for row in R0.T.tolist())
        solver.offset = _vec(R0.T @ (np.array(centre) - geo.tip[:3, 3]))  # centre, tip frame
        solver.parallel23 = (_norm(_cross(w[1], w[2])) < STRUCTURE_TOL
                             and _norm(_cross(w[0], w[1])) > STRUCTURE_TOL)
        if solver.parallel23:
            solver.u, solver.v = _plane_basis(w[1])
            solver.sign3 = _dot(w[2], w[1])
            solver.plane = [solver._proj(p[1]), solver._proj(p[2]), solver._proj(centre)]
            if (math.dist(solver.plane[0], solver.plane[1]) < STRUCTURE_TOL
                    or math.dist(solver.plane[1], solver.plane[2]) < STRUCTURE_TOL):
                return None
            solver.height = _dot(w[1], _add(centre, p[0], -1.0))
        else:
            hit12 = _line_intersection(p[0], w[0], p[1], w[1])
            if hit12 is None or hit12[1] > STRUCTURE_TOL:
                return None
            solver.shoulder = hit12[0]
        solver.x6 = _plane_basis(w[5])[0]       # a unit vector normal to axis 6, for q6
        return solver

    def _proj(self, x):
        return (_dot(self.u, x), _dot(self.v, x))

    def _arm(self, c, hint):
        """Solutions ``(q1, q2, q3)`` placing the wrist centre at ``c``."""
        w, p = self.w, self.p
        out = []
        if self.parallel23:
            v = _add(c, p[0], -1.0)
            vpar = _dot(w[0], v)
            vperp = _add(v, w[0], -vpar)
            A = _dot(w[1], vperp)
            B = _dot(w[1], _cross(w[0], vperp))
            C = self.height - vpar * _dot(w[1], w[0])
            rho = math.hypot(A, B)
            if rho < STRUCTURE_TOL:
                phis = [-hint[0]]
            else:
                psi = math.acos(min(1.0, max(-1.0, C / rho)))
                phis = [math.atan2(B, A) + psi, math.atan2(B, A) - psi]
            c2, c3, c0 = self.plane
            for phi in phis:
                x = self._proj(_add(p[0], _rotate(w[0], phi, v)))
                for t2, t3 in _solve_2r(c2, c3, c0, x, hint[1]):
                    out.append((-phi, t2, t3 * self.sign3))
        else:
            s = self.shoulder
            for t3 in _pk3(w[2], p[2], self.centre, s, _norm(_add(c, s, -1.0))):
                pc = _add(p[2], _rotate(w[2], t3, _add(self.centre, p[2], -1.0)))
                for t1, t2 in _pk2(w[0], w[1], _add(pc, s, -1.0), _add(c, s, -1.0), hint[0]):
                    out.append((t1, t2, t3))
        return out

    def candidates(self, target, hint):
        hint = [0.0] * 6 if hint is None else hint
        w = self.w
        Tl = target.tolist()
        R = (tuple(Tl[0][:3]), tuple(Tl[1][:3]), tuple(Tl[2][:3]))
        c = _add((Tl[0][3], Tl[1][3], Tl[2][3]), _matvec(R, self.offset))
        RR0t = _matmul(R, self.R0t)
        out = []
        for t1, t2, t3 in self._arm(c, hint):
            R123 = _matmul(_matmul(_rotation(w[0], t1), _rotation(w[1], t2)), _rotation(w[2], t3))
            Rw = _matmul(_transpose(R123), RR0t)
            for t4, t5 in _pk2(w[3], w[4], w[5], _matvec(Rw, w[5]), hint[3]):
                R45t = _transpose(_matmul(_rotation(w[3], t4), _rotation(w[4], t5)))
                t6 = _pk1(w[5], self.x6, _matvec(R45t, _matvec(Rw, self.x6)), hint[5])
                out.append([t1, t2, t3, t4, t5, t6])
        return out


_SOLVERS = (_Planar, _SphericalWrist)
# Memo of closed_form(model): models are immutable, so the answer never goes stale, and weak
# keys let it go with the model.
_CLOSED_FORMS = weakref.WeakKeyDictionary()


def closed_form(model):
    """
    Return the closed-form solver that applies to ``model``, or None.

    The structure is detected from the joint axes at q = 0 (see the module docstring) and the
    answer is cached per model. The solver's ``name`` says which closed form applies.
    """
    try:
        return _CLOSED_FORMS[model]
    except KeyError:
        pass
    geo = _geometry(model)
    solver = None
    for kind in _SOLVERS:
        solver = kind.detect(model, geo)
        if solver is not None:
            break
    _CLOSED_FORMS[model] = solver
    return solver


def _require_closed_form(model):
    solver = closed_form(model)
    if solver is None:
        types = ''.join('P' if p else 'R' for p in model.is_prismatic)
        raise InputError(
            f'robot {model.name!r} ({model.dof} joints, {types}) has no closed-form inverse '
            'kinematics (supported: planar RR, RRR and RP arms with an optional lift joint, '
            "and 6R arms with a spherical wrist); use ik(..., method='numeric')")
    return solver


# ---- closed-form branches: turns, limits, verification ------------------------------------------

def _wrap(x):
    """Wrap an angle to [-pi, pi)."""
    return (x + math.pi) % _TWO_PI - math.pi


@dataclasses.dataclass(frozen=True)
class _Limits:
    lower: list
    upper: list
    prismatic: list
    bounded: list            # revolute with both limits finite


def _limits(model):
    lo, hi = model.lower.tolist(), model.upper.tolist()
    return _Limits(lo, hi, [bool(p) for p in model.is_prismatic],
                   [math.isfinite(a) and math.isfinite(b) for a, b in zip(lo, hi)])


def _turns(lim, q, near=None):
    """
    Every copy of ``q`` (list) with revolute angles shifted by 2 pi k into the limits.

    Without ``near``, one copy: each in-limit angle nearest 0. With ``near`` (list), every
    in-limit value of each limited joint, and unlimited joints moved next to ``near``. Returns
    a list of lists (empty when some joint cannot be brought into its limits).
    """
    choices = []
    for i, x in enumerate(q):
        lo, hi = lim.lower[i], lim.upper[i]
        if lim.prismatic[i]:
            if not lo <= x <= hi:
                return []
            choices.append((x,))
        elif not lim.bounded[i]:
            base = _wrap(x) if near is None else near[i] + _wrap(x - near[i])
            choices.append((base,) if lo <= base <= hi else (x,))
        else:
            base = _wrap(x)
            k0, k1 = math.ceil((lo - base) / _TWO_PI), math.floor((hi - base) / _TWO_PI)
            values = [v for v in (base + k * _TWO_PI for k in range(k0, k1 + 1)) if lo <= v <= hi]
            if not values:
                return []
            choices.append(values if near is not None else (min(values, key=abs),))
    out = [[]]
    for values in choices:
        out = [row + [v] for row in out for v in values]
    return out


def _fits(lim, q):
    """Check that ``q`` (list) fits in the limits after 2 pi shifts of revolute angles."""
    for x, lo, hi, p, b in zip(q, lim.lower, lim.upper, lim.prismatic, lim.bounded):
        if p or not b:
            if not lo <= x <= hi:
                return False
        elif lo + (x - lo) % _TWO_PI > hi:
            return False
    return True


def _project_into_limits(lim, q):
    """Shift revolute angles into the limits where 2 pi allows, clamp the rest."""
    q = list(q)
    for i, x in enumerate(q):
        lo, hi = lim.lower[i], lim.upper[i]
        if lo <= x <= hi:
            continue
        if lim.bounded[i] and not lim.prismatic[i]:
            r = lo + (x - lo) % _TWO_PI
            q[i] = r if r <= hi else (hi if r - hi < lo + _TWO_PI - r else lo)
        else:
            q[i] = min(max(x, lo), hi)
    return q


def _joint_distance(lim, a, b):
    """Largest joint difference [rad or m], revolute angles compared modulo 2 pi."""
    return max(abs(x - y) if p else abs(_wrap(x - y)) for x, y, p in zip(a, b, lim.prismatic))


@dataclasses.dataclass(frozen=True)
class _Branches:
    solutions: list          # verified, inside the limits, one per branch (lists, principal)
    errors: list             # (residual (6,), position error, orientation error) of each
    best: np.ndarray         # when there is none: the best candidate moved into the limits


def _closed_form_branches(model, solver, target, mask, tol_p, tol_o, hint):
    """Verify and de-duplicate the closed-form candidates; failing all, keep a best guess."""
    lim = _limits(model)
    raw = solver.candidates(target, None if hint is None else hint.tolist())
    if not raw:
        return _Branches([], [], None)
    wrapped = [[x if p else _wrap(x) for x, p in zip(q, lim.prismatic)] for q in raw]
    e, perr, oerr = _measure(model, np.array(wrapped), target, mask)
    solutions, errors = [], []
    for i, q in enumerate(wrapped):
        if (perr[i] <= tol_p and oerr[i] <= tol_o and _fits(lim, q)
                and all(_joint_distance(lim, q, s) > SAME_SOLUTION_TOL for s in solutions)):
            solutions.append(q)
            errors.append((e[i], perr[i], oerr[i]))
    best = None
    if not solutions:
        P = np.array([_project_into_limits(lim, q) for q in raw])
        e, _, _ = _measure(model, P, target, mask)
        best = P[int(np.argmin((e * e) @ mask))]
    return _Branches(solutions, errors, best)


def ik_all(model, target, *, mask=None, tol_position=DEFAULT_TOL_POSITION,
           tol_orientation=DEFAULT_TOL_ORIENTATION, all_turns=False):
    """
    Return every closed-form inverse-kinematics solution of ``target`` within the joint limits.

    Parameters
    ----------
    model : RobotModel
        A robot with a closed form (see :func:`closed_form`).
    target : array_like, shape (4, 4)
        Pose of the tip in the base frame.
    mask : array_like, shape (6,), optional
        Task rows to match (default ``model.task_mask``).
    tol_position : float, optional
        Position acceptance of a solution through fk [m].
    tol_orientation : float, optional
        Orientation acceptance of a solution through fk [rad].
    all_turns : bool, optional
        Also list the copies of a solution whose revolute angles differ by 2 pi k and still fit
        in the limits (default: one copy, each angle nearest 0).

    Returns
    -------
    list of numpy.ndarray, shape (n,)
        Distinct solutions [rad or m] in branch order; empty when the target is unreachable.

    Raises
    ------
    InputError
        Bad target or options, or the model has no closed form.

    """
    target = _check_target(target)
    m = _check_mask(model, mask)
    tol_p = _positive(tol_position, 'tol_position')
    tol_o = _positive(tol_orientation, 'tol_orientation')
    solver = _require_closed_form(model)
    branches = _closed_form_branches(model, solver, target, m, tol_p, tol_o, None)
    lim = _limits(model)
    near = [0.0] * model.dof if all_turns else None
    return [np.array(q) for s in branches.solutions for q in _turns(lim, s, near)]


# ---- numeric solver -----------------------------------------------------------------------------

@njit
def _project(q, lower, upper, kind):
    """Bring ``q`` into the limits in place: 2 pi shift for revolute joints, else clamp."""
    for i in range(q.shape[0]):
        lo, hi, x = lower[i], upper[i], q[i]
        if kind[i] == _FREE or (lo <= x <= hi):
            continue
        if kind[i] == _WRAP:
            r = lo + (x - lo) % _TWO_PI
            if r <= hi:
                q[i] = r
            elif r - hi < lo + _TWO_PI - r:
                q[i] = hi
            else:
                q[i] = lo
        else:
            q[i] = min(max(x, lo), hi)


@njit
def _cholesky_solve(A, b, m):
    """Solve ``A x = b`` in place in ``b`` for the leading m x m SPD block (A overwritten)."""
    for j in range(m):
        s = A[j, j]
        for k in range(j):
            s -= A[j, k] * A[j, k]
        if s <= 0.0:
            return False
        d = math.sqrt(s)
        A[j, j] = d
        for i in range(j + 1, m):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d
    for i in range(m):
        s = b[i]
        for k in range(i):
            s -= A[i, k] * b[k]
        b[i] = s / A[i, i]
    for i in range(m - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, m):
            s -= A[k, i] * b[k]
        b[i] = s / A[i, i]
    return True


@njit
def _damped_step(Jw, ew, free, lam, A, y, dq):
    """
    Damped least-squares step ``dq`` (nb,) for the joints with ``free[j]`` (others get 0).

    ``dq = Jw^T (Jw Jw^T + lam I)^-1 ew`` with the m x m system when m <= nb, else
    ``(Jw^T Jw + lam I)^-1 Jw^T ew`` (nb x nb); the columns of fixed joints are left out.
    Returns False if the system is not positive definite.
    """
    m, nb = Jw.shape
    if m <= nb:
        for i in range(m):
            for k in range(i + 1):
                s = 0.0
                for j in range(nb):
                    if free[j]:
                        s += Jw[i, j] * Jw[k, j]
                A[i, k] = s
                A[k, i] = s
            A[i, i] += lam
            y[i] = ew[i]
        if not _cholesky_solve(A, y, m):
            return False
        for j in range(nb):
            s = 0.0
            if free[j]:
                for i in range(m):
                    s += Jw[i, j] * y[i]
            dq[j] = s
        return True
    for i in range(nb):
        for k in range(i + 1):
            s = 0.0
            if free[i] and free[k]:
                for r in range(m):
                    s += Jw[r, i] * Jw[r, k]
            A[i, k] = s
            A[k, i] = s
        A[i, i] += lam
        s = 0.0
        if free[i]:
            for r in range(m):
                s += Jw[r, i] * ew[r]
        y[i] = s
    if not _cholesky_solve(A, y, nb):
        return False
    for j in range(nb):
        dq[j] = y[j]
    return True


@njit
def _lm_kernel(basis, axis, prismatic, nb, tip, target, starts, lower, upper, kind, weights,
               tol_p2, tol_o2, max_iterations, iteration_budget, damping, damping_floor,
               stall_iterations, stall_ratio):
    """
    Levenberg-Marquardt from each row of ``starts`` in turn until one meets the tolerances.

    Returns ``(q, success, iterations, attempts, best_cost)``; on failure ``q`` is the
    configuration of smallest weighted error seen.
    """
    n = starts.shape[1]
    T = np.empty((nb, 4, 4))
    pose = np.empty((4, 4))
    J = np.empty((6, nb))
    S = np.empty((nb, 6))
    e = np.empty(6)
    Re = np.empty((3, 3))
    rows = np.empty(6, dtype=np.int64)
    m = 0
    for r in range(6):
        if weights[r] > 0.0:
            rows[m] = r
            m += 1
    sw = np.sqrt(weights)
    size = min(m, nb)                    # m x m system, or nb x nb
    A = np.empty((size, size))
    y = np.empty(size)
    Jw = np.empty((m, nb))
    ew = np.empty(m)
    dq = np.empty(nb)
    free = np.ones(nb, dtype=np.bool_)
    # a joint whose range spans a full turn never blocks: it wraps round
    wraps = np.zeros(nb, dtype=np.bool_)
    for j in range(nb):
        wraps[j] = kind[j] == _FREE or (kind[j] == _WRAP and upper[j] - lower[j] >= _TWO_PI)
    q = np.empty(n)
    best_q = starts[0].copy()
    best_cost = np.inf
    total = 0
    attempts = 0
    for a in range(starts.shape[0]):
        attempts += 1
        q[:] = starts[a]
        _project(q, lower, upper, kind)
        attempt_best = np.inf
        since = 0
        for _ in range(max_iterations):
            pose_jacobian_state(basis, axis, prismatic, nb, tip, q, T, pose, J, S)
            for r in range(3):
                e[r] = target[r, 3] - pose[r, 3]
                for k in range(3):
                    Re[r, k] = (target[r, 0] * pose[k, 0] + target[r, 1] * pose[k, 1]
                                + target[r, 2] * pose[k, 2])
            rotation_log(Re, e[3:])
            p2 = 0.0
            o2 = 0.0
            cost = 0.0
            for r in range(6):
                if weights[r] > 0.0:
                    if r < 3:
                        p2 += e[r] * e[r]
                    else:
                        o2 += e[r] * e[r]
                    cost += weights[r] * e[r] * e[r]
            cost *= 0.5
            if cost < best_cost:
                best_cost = cost
                best_q[:] = q
            if p2 <= tol_p2 and o2 <= tol_o2:
                return q, True, total, attempts, cost
            if total >= iteration_budget:
                return best_q, False, total, attempts, best_cost
            total += 1
            if cost < attempt_best * (1.0 - stall_ratio):
                attempt_best = cost
                since = 0
            else:
                since += 1
                if since >= stall_iterations:
                    break
            lam = damping * cost + damping_floor
            for i in range(m):
                r = rows[i]
                ew[i] = sw[r] * e[r]
                for j in range(nb):
                    Jw[i, j] = sw[r] * J[r, j]
            free[:] = True
            if not _damped_step(Jw, ew, free, lam, A, y, dq):
                break
            # active set: a joint held at a limit by a step pushing outwards is left out and
            # the other joints take the step (sliding along the limit would stall)
            blocked = False
            for j in range(nb):
                if not wraps[j] and ((q[j] <= lower[j] and dq[j] < 0.0)
                                     or (q[j] >= upper[j] and dq[j] > 0.0)):
                    free[j] = False
                    blocked = True
            if blocked and not _damped_step(Jw, ew, free, lam, A, y, dq):
                break
            for j in range(nb):
                q[j] += dq[j]
            _project(q, lower, upper, kind)
    return best_q, False, total, attempts, best_cost


@dataclasses.dataclass(frozen=True)
class _Chain:
    """Constant arrays of a model for the compiled solver (computed once per model)."""

    basis: np.ndarray        # (n, 4, 16): T_local = D0 + sin q D1 + cos q D2 + q D3
    axis: np.ndarray         # (n, 3) joint axes in the joint frames
    prismatic: np.ndarray    # (n,) bool
    nb: int                  # number of joints that move the tip
    tip: np.ndarray          # (4, 4) T_body_tip
    lower: np.ndarray
    upper: np.ndarray
    kind: np.ndarray         # (n,) int64: _CLAMP, _WRAP or _FREE
    sample_lower: np.ndarray
    sample_upper: np.ndarray


# Memo of _chain(model), as _CLOSED_FORMS: derived constants of an immutable model.
_CHAINS = weakref.WeakKeyDictionary()


def _chain(model):
    try:
        return _CHAINS[model]
    except KeyError:
        pass
    n = model.dof
    rev = ~np.asarray(model.is_prismatic)
    body, T_body_link = model.link_body(None)
    lo, hi = np.array(model.lower, dtype=float), np.array(model.upper, dtype=float)
    bounded = np.isfinite(lo) & np.isfinite(hi)
    kind = np.where(np.asarray(model.joint_types) == 'continuous', _FREE,
                    np.where(rev & bounded, _WRAP, _CLAMP)).astype(np.int64)
    # restarts: uniform in the limits; a full turn for unbounded revolute joints, and +-1 m
    # about 0 for unbounded prismatic ones
    span = np.where(rev, math.pi, 1.0)
    s_lo = np.where(np.isfinite(lo), lo, np.where(np.isfinite(hi), hi - 2.0 * span, -span))
    s_hi = np.where(np.isfinite(hi), hi, s_lo + 2.0 * span)
    chain = _Chain(basis=model.derived.local_basis, axis=model.joint_axis,
                   prismatic=model.is_prismatic, nb=int(body),
                   tip=np.ascontiguousarray(T_body_link, dtype=float), lower=lo, upper=hi,
                   kind=kind, sample_lower=s_lo, sample_upper=s_hi)
    # compile (or load from numba's cache) before the first timed solve
    _lm_kernel(chain.basis, chain.axis, chain.prismatic, chain.nb, chain.tip, np.eye(4),
               np.zeros((1, n)), lo, hi, kind, np.ones(6), 1.0, 1.0, 1, 1, 1.0, 1.0, 1, 0.5)
    _CHAINS[model] = chain
    return chain


def _nearest_turn(model, q, seed):
    """Shift revolute angles by 2 pi k towards ``seed`` while staying inside the limits."""
    q = q.copy()
    rev = ~np.asarray(model.is_prismatic)
    k = np.round((seed - q) / _TWO_PI)
    shifted = q + k * _TWO_PI
    ok = rev & (shifted >= model.lower) & (shifted <= model.upper)
    q[ok] = shifted[ok]
    return q


def _solve_numeric(model, target, o, seed, t_start, restarts=True):
    """Run the compiled LM with restarts until success, the timeout or the restart cap."""
    if model.link_body(None)[0] == 0:
        raise InputError(f'robot {model.name!r}: the tip {model.tip_link!r} is fixed to the '
                         'base; no joint moves it')
    if model not in _CHAINS:
        _chain(model)
        t_start = time.perf_counter()     # one-time setup is not charged to this solve
    ch = _chain(model)
    deadline = t_start + o.timeout
    starts = seed[None, :].copy()
    total, attempts = 0, 0
    best_q, best_cost = seed.copy(), np.inf
    per_iteration = None
    generator = None
    tol_p2, tol_o2 = o.tol_position ** 2, o.tol_orientation ** 2
    success = False
    while True:
        now = time.perf_counter()
        remaining = deadline - now
        if per_iteration is None:
            budget = o.max_iterations * len(starts)
        else:
            budget = max(1, int(remaining / per_iteration))
        q, ok, its, used, cost = _lm_kernel(
            ch.basis, ch.axis, ch.prismatic, ch.nb, ch.tip, target, starts, ch.lower, ch.upper,
            ch.kind, o.mask, tol_p2, tol_o2, o.max_iterations, budget, o.damping,
            o.damping_floor, o.stall_iterations, o.stall_ratio)
        elapsed = time.perf_counter() - now
        total += its
        attempts += used
        if its > 0:
            rate = elapsed / its
            per_iteration = rate if per_iteration is None else max(rate, 0.5 * per_iteration)
        if cost < best_cost:
            best_q, best_cost = q.copy(), cost
        if ok:
            success = True
            break
        if not restarts or attempts >= o.max_restarts + 1:
            reason = 'no convergence from the seed' if not restarts else 'restart limit reached'
            break
        if time.perf_counter() >= deadline:
            reason = f'timeout ({o.timeout:g} s)'
            break
        if generator is None:
            generator = np.random.default_rng(DEFAULT_RNG_SEED if o.rng is None else o.rng)
        count = min(_RESTART_CHUNK, o.max_restarts + 1 - attempts)
        starts = generator.uniform(ch.sample_lower, ch.sample_upper, (count, model.dof))
    q = _nearest_turn(model, best_q, seed)
    return q, success, total, attempts - 1, ('converged' if success else reason)


# ---- public entry points ------------------------------------------------------------------------

def _result(model, q, target, o, t_start, method, reason, iterations=0, restarts=0,
            solutions=0, measured=None):
    """Check ``q`` through fk (unless ``measured`` already holds its errors) and report."""
    if measured is None:
        e, perr, oerr = _measure(model, q[None, :], target, o.mask)
        measured = (e[0], perr[0], oerr[0])
    e, perr, oerr = measured
    success = bool(perr <= o.tol_position and oerr <= o.tol_orientation
                   and _within_limits(model, q))
    if not success and reason == 'converged':
        reason = 'converged in the solver but not within tolerance through fk'
    return IKResult(q=q, success=success, position_error=float(perr),
                    orientation_error=float(oerr), iterations=int(iterations),
                    time=time.perf_counter() - t_start, method=method, reason=reason,
                    restarts=int(restarts), residual=e, solutions=int(solutions))


def _nearest(branches, lim, seed, weights):
    """Return the index of the branch and its 2 pi copy nearest to ``seed`` (weighted)."""
    near = seed.tolist()
    options = [(i, q) for i, s in enumerate(branches.solutions) for q in _turns(lim, s, near)]
    C = np.array([q for _, q in options])
    k = int(np.argmin(((C - seed) ** 2 * weights).sum(axis=1)))
    return options[k][0], C[k]


def _weighted_cost(result, mask):
    return float(result.residual ** 2 @ mask)


def ik(model, target, seed=None, *, method='auto', tol_position=DEFAULT_TOL_POSITION,
       tol_orientation=DEFAULT_TOL_ORIENTATION, timeout=DEFAULT_TIMEOUT, mask=None,
       weights=None, max_iterations=DEFAULT_MAX_ITERATIONS, max_restarts=DEFAULT_MAX_RESTARTS,
       damping=DEFAULT_DAMPING, damping_floor=DEFAULT_DAMPING_FLOOR,
       stall_iterations=DEFAULT_STALL_ITERATIONS, stall_ratio=DEFAULT_STALL_RATIO, rng=None):
    """
    Solve inverse kinematics for the tip pose ``target``.

    Parameters
    ----------
    model : RobotModel
        The robot.
    target : array_like, shape (4, 4)
        Pose of ``model.tip_link`` in the base frame (a rigid transform).
    seed : array_like, shape (n,), optional
        Joint positions [rad or m] to stay close to: the closed form returns the solution
        nearest to it, the numeric solver starts from it. Default: :func:`default_seed`.
    method : {'auto', 'analytic', 'numeric'}, optional
        ``'auto'``: the closed form when the model has one, else numeric.
    tol_position : float, optional
        Position tolerance on the masked rows [m].
    tol_orientation : float, optional
        Orientation tolerance on the masked rows [rad].
    timeout : float, optional
        Time budget of the numeric solver [s], counted from the call; the attempt from the
        seed always runs to its end (at most ``max_iterations``).
    mask : array_like, shape (6,), optional
        Weights of the task rows ``vx vy vz wx wy wz`` (0 ignores a row); default
        ``model.task_mask``.
    weights : array_like, shape (n,), optional
        Joint weights of the distance ``sum w_i (q_i - seed_i)^2`` that picks the closed-form
        solution (default ones).
    max_iterations : int, optional
        Levenberg-Marquardt iterations per attempt.
    max_restarts : int, optional
        Random restarts after the attempt from the seed.
    damping : float, optional
        LM damping per unit of the weighted squared error.
    damping_floor : float, optional
        Smallest LM damping.
    stall_iterations : int, optional
        An attempt restarts after this many iterations without progress.
    stall_ratio : float, optional
        Progress means the weighted error falls below ``1 - stall_ratio`` times its best value.
    rng : int or numpy.random.Generator, optional
        Source of the restart configurations (default: a fixed seed, reproducible).

    Returns
    -------
    IKResult
        ``success`` is True only if ``fk(q)`` meets the tolerances on the masked rows and
        ``q`` is within the limits; otherwise ``q`` is the best configuration found and the
        errors give the residual.

    Raises
    ------
    InputError
        Non-finite or non-rigid target, wrong seed length, tolerance or timeout <= 0, unknown
        method, bad mask; ``method='analytic'`` for a model without a closed form.

    """
    t_start = time.perf_counter()
    target = _check_target(target)
    o = _options(model, method, tol_position, tol_orientation, timeout, mask, weights,
                 max_iterations, max_restarts, damping, damping_floor, stall_iterations,
                 stall_ratio, rng)
    seed = _check_seed(model, seed)
    solver = None
    if o.method is Method.ANALYTIC:
        solver = _require_closed_form(model)
    elif o.method is Method.AUTO:
        solver = closed_form(model)
    if solver is None:
        q, ok, its, restarts, reason = _solve_numeric(model, target, o, seed, t_start)
        return _result(model, q, target, o, t_start, 'numeric', reason, its, restarts)

    branches = _closed_form_branches(model, solver, target, o.mask, o.tol_position,
                                     o.tol_orientation, seed)
    if branches.solutions:
        i, q = _nearest(branches, _limits(model), seed, o.weights)
        return _result(model, q, target, o, t_start, 'analytic',
                       f'closed form ({solver.name}): {len(branches.solutions)} solution(s), '
                       'the nearest to the seed', solutions=len(branches.solutions),
                       measured=branches.errors[i])
    complete = bool(np.all((o.mask > 0.0) >= solver.rows))
    unreachable = (f'unreachable: no closed-form solution ({solver.name}) within tolerance '
                   'and joint limits')
    best = seed if branches.best is None else branches.best
    analytic = _result(model, best, target, o, t_start, 'analytic', unreachable)
    if o.method is Method.ANALYTIC:
        return analytic
    # auto: a closed form that is complete for this mask proves the target unreachable, and a
    # local descent from the nearest branch only lowers the residual; when the mask leaves the
    # closed form incomplete (it fixes rows the task leaves free), search numerically.
    if complete:
        q, ok, its, restarts, reason = _solve_numeric(model, target, o, best, t_start,
                                                      restarts=False)
        reason = reason if ok else unreachable
    else:
        q, ok, its, restarts, reason = _solve_numeric(model, target, o, seed, t_start)
    numeric = _result(model, q, target, o, t_start, 'numeric', reason, its, restarts)
    if numeric.success or _weighted_cost(numeric, o.mask) <= _weighted_cost(analytic, o.mask):
        return numeric
    return dataclasses.replace(analytic, time=time.perf_counter() - t_start)


def ik_path(model, targets, seed=None, *, max_jump=DEFAULT_MAX_JUMP, **options):
    """
    Solve a sequence of nearby targets, each seeded by the previous solution.

    The closed form picks, at each point, the branch nearest to the previous solution (so it
    never flips branch while a continuous one exists); the numeric solver starts from it.

    Parameters
    ----------
    model : RobotModel
        The robot.
    targets : array_like, shape (N, 4, 4)
        Tip poses in the base frame, in path order.
    seed : array_like, shape (n,), optional
        Joint positions [rad or m] before the first point (default :func:`default_seed`).
    max_jump : float, optional
        Largest joint change [rad or m] between consecutive points that counts as continuous.
    **options
        Passed to :func:`ik` (``method``, tolerances, ``timeout``, ``mask``, ``weights``...).

    Returns
    -------
    IKPathResult
        Joint path (N, n), per-point success and errors, and where it is discontinuous.

    """
    targets = check_transform(targets, 'targets')
    if targets.ndim != 3:
        raise InputError(f'targets: expected a sequence of poses (N, 4, 4), got {targets.shape}')
    jump_limit = _positive(max_jump, 'max_jump')
    previous = _check_seed(model, seed)
    results = []
    for T in targets:
        r = ik(model, T, seed=previous, **options)
        results.append(r)
        previous = r.q
    q = np.array([r.q for r in results]).reshape(len(results), model.dof)
    success = np.array([r.success for r in results], dtype=bool)
    steps = np.abs(np.diff(q, axis=0)).max(axis=1) if len(q) > 1 else np.zeros(0)
    jumps = tuple(int(i) + 1 for i in np.flatnonzero(steps > jump_limit))
    failed = tuple(int(i) for i in np.flatnonzero(~success))
    return IKPathResult(
        q=q, success=success,
        position_error=np.array([r.position_error for r in results]),
        orientation_error=np.array([r.orientation_error for r in results]),
        jumps=jumps, failed=failed, discontinuities=tuple(sorted(set(jumps) | set(failed))),
        results=tuple(results))
