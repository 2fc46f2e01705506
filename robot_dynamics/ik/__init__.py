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
(six weights, default :func:`default_mask`) selects the rows that must match; ``success`` is
True only when ``fk(q)`` meets ``tol_position`` on the selected position rows,
``tol_orientation`` on the selected rotation rows, and ``q`` is inside the joint limits.

Closed forms (``ik_all``, and ``ik`` with ``method='auto'`` or ``'analytic'``;
:mod:`~robot_dynamics.ik.closed_form`) are found by looking at the geometry of the joint axes at
q = 0, never by robot name. Every joint motion is a screw fixed in the base frame at q = 0, so
``T(q) = g_1(q_1) ... g_n(q_n) T(0)`` (product of exponentials; Murray, Li and Sastry 1994,
ch. 3) and the solvers are written with the Paden-Kahan subproblems of that book
(:mod:`~robot_dynamics.ik.subproblems`):

- planar arms: every revolute axis parallel to one direction ``n``, prismatic axes along ``n``
  (a lift, at most one) or perpendicular to it. The in-plane chain ``RR`` (2R elbow, two
  solutions by the law of cosines; Craig 2005, §4.4), ``RRR`` (position and yaw: wrist point,
  then 2R) or ``RP`` (polar: rotary plus radial slide) covers the planar 2R and 3R arms, the RRP
  SCARA (with a wrist joint: RRRP) and the rotary-prismatic arm;
- 6R arms with a spherical wrist (axes 4, 5, 6 through one point; Pieper's decomposition,
  Pieper 1968, Craig 2005, §4.6): the wrist centre gives q1..q3 (up to four solutions) when
  axes 2 and 3 are parallel or axes 1 and 2 intersect, and the wrist orientation gives q4..q6 as
  an Euler-angle extraction (two solutions each), e.g. the PUMA 560, the Kinova Jaco 2 and the
  Talos arm.

Each candidate is checked through the forward kinematics (the compiled chain recursion of
:mod:`robot_dynamics.kinematics`); revolute angles are shifted by multiples of 2 pi into the
joint limits where possible (:func:`closed_form` tells which closed form, if any, a model has).
Out of reach, the candidates degrade to the nearest configurations (arm stretched towards the
target), which give the residual. The closed forms are compiled with numba like the numeric
solver, so that a closed-form solve, which computes and verifies every branch, costs less than a
numeric one.

The numeric solver (:mod:`~robot_dynamics.ik.numeric`; any chain, ``method='numeric'``, and
``'auto'`` without a closed form) is a Levenberg-Marquardt iteration on the weighted pose error
with the damping ``lambda = damping * E + damping_floor``, ``E = e^T W e / 2`` (Chan and
Lawrence 1988; Sugihara 2011): ``dq = J_w^T (J_w J_w^T + lambda I)^-1 e_w`` (or the n x n form
when n is smaller than the number of task rows; :func:`robot_dynamics.linalg.damped_solve`).
After each step revolute angles are shifted by 2 pi into their limits when possible and
otherwise clamped, prismatic joints clamped, continuous joints left free
(:func:`robot_dynamics.limits.project`); a joint held at a limit by a step that pushes outwards
is left out of the solve (active set), so the other joints take the step. The first attempt
starts at the seed; an attempt that stalls restarts from a configuration drawn uniformly inside
the limits, until ``timeout``. The iteration is compiled with numba (as the chain recursions of
:mod:`robot_dynamics.dynamics`): numpy's per-call overhead would dominate a 6x6 problem.

With ``method='auto'`` and a closed form that finds no solution, the target is unreachable
(within tolerance and limits) whenever the mask selects every row the closed form solves; a
local descent from the nearest branch then only lowers the reported residual. Otherwise (a mask
leaving rows free that the closed form fixes) the numeric solver searches in full.
"""

import dataclasses
import enum
import itertools
import math
import time

import numpy as np

from . import numeric
from .chain import chain, is_cached, measure
from .closed_form import (branches, closed_form, nearest, require_closed_form,
                          SAME_SOLUTION_TOL)
from .numeric import DEFAULT_RNG_SEED
from .subproblems import STRUCTURE_TOL
from .. import limits
from ..errors import as_array, as_joint_array, choice, InputError
from ..spatial import check_transform

DEFAULT_TOL_POSITION = 1e-6      # m
DEFAULT_TOL_ORIENTATION = 1e-6   # rad
DEFAULT_TIMEOUT = 0.005          # s
DEFAULT_MAX_ITERATIONS = 40      # LM iterations per attempt
DEFAULT_MAX_RESTARTS = 10000     # random restarts (the timeout usually ends the search first)
DEFAULT_DAMPING = 0.1            # LM damping per unit of E [1/(m^2 or rad^2)]
DEFAULT_DAMPING_FLOOR = 1e-9     # keeps the damped system positive definite
DEFAULT_STALL_ITERATIONS = 6     # restart after this many iterations without progress
DEFAULT_STALL_RATIO = 0.05       # progress: E falls below (1 - ratio) times its best value
DEFAULT_MAX_JUMP = 0.5           # rad or m, largest joint step ``ik_path`` calls continuous

__all__ = ['closed_form', 'default_mask', 'default_seed', 'ik', 'ik_all', 'ik_path',
           'IKPathResult', 'IKResult', 'Method', 'POSITION_ROWS', 'DEFAULT_DAMPING',
           'DEFAULT_DAMPING_FLOOR', 'DEFAULT_MAX_ITERATIONS',
           'DEFAULT_MAX_JUMP', 'DEFAULT_MAX_RESTARTS', 'DEFAULT_RNG_SEED',
           'DEFAULT_STALL_ITERATIONS', 'DEFAULT_STALL_RATIO', 'DEFAULT_TIMEOUT',
           'DEFAULT_TOL_ORIENTATION', 'DEFAULT_TOL_POSITION', 'SAME_SOLUTION_TOL',
           'STRUCTURE_TOL']


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


#: The position rows of a task mask (``vx vy vz``).
POSITION_ROWS = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])


def _count(value, name, minimum):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f'{name}: expected an integer >= {minimum}, got {value!r}')
    return int(value)


def default_mask(model):
    """
    Return the task rows an IK target must match by default (6,): ``vx vy vz wx wy wz``.

    The rows the arm moves independently (``model.task_mask``) and every position row: those it
    cannot move must already match, so a target off a planar arm's plane is unreachable, not a
    success.
    """
    return np.maximum(model.task_mask, POSITION_ROWS)   # a new, writable array for numba


def _check_mask(model, mask):
    if mask is None:
        return default_mask(model)
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

    The middle of each joint range; 0 (moved into a one-sided range) for unbounded joints
    (:func:`robot_dynamics.limits.middle`).
    """
    return limits.middle(model.lower, model.upper)


def _check_target(target):
    target = check_transform(target, 'target')
    if target.shape != (4, 4):
        raise InputError(f'target: expected one pose of shape (4, 4), got {target.shape}')
    return np.array(target, dtype=float, order='C')


def _check_seed(model, seed, ch):
    if seed is None:
        return ch.middle.copy()
    q = as_joint_array(seed, model.dof, 'seed')
    if q.shape != (model.dof,):
        raise InputError(f'seed: expected shape ({model.dof},), got {q.shape}')
    return q.copy()


def _chain(model):
    """Return the model's chain constants and whether they (and the kernels) were just made."""
    fresh = not is_cached(model)
    ch = chain(model)
    if fresh:
        numeric.warm_up(ch, model.dof)
        solver = closed_form(model)
        if solver is not None:
            for kernel in (branches, nearest):
                kernel(solver, ch, np.eye(4), np.ones(6), 1.0, 1.0, ch.middle.copy(),
                       np.ones(model.dof))
    return ch, fresh


# ---- public entry points ------------------------------------------------------------------------

def _result(ch, q, target, o, t_start, method, reason, iterations=0, restarts=0, solutions=0,
            measured=None):
    """
    Check ``q`` through fk and the limits, and report.

    ``measured``: the errors ``(residual, position, orientation)`` of a closed-form solution,
    already checked through fk and placed inside the limits by :func:`closed_form.nearest`.
    """
    if measured is None:
        e, perr, oerr = measure(ch, q, target, o.mask)
        inside = bool(np.all((q >= ch.lower) & (q <= ch.upper)))
    else:
        (e, perr, oerr), inside = measured, True
    success = bool(perr <= o.tol_position and oerr <= o.tol_orientation and inside)
    if not success and reason == 'converged':
        reason = 'converged in the solver but not within tolerance through fk'
    return IKResult(q=q, success=success, position_error=float(perr),
                    orientation_error=float(oerr), iterations=int(iterations),
                    time=time.perf_counter() - t_start, method=method, reason=reason,
                    restarts=int(restarts), residual=e, solutions=int(solutions))


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
        :func:`default_mask`.
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
    ch, fresh = _chain(model)
    if fresh:
        t_start = time.perf_counter()     # one-time setup is not charged to this solve
    target = _check_target(target)
    o = _options(model, method, tol_position, tol_orientation, timeout, mask, weights,
                 max_iterations, max_restarts, damping, damping_floor, stall_iterations,
                 stall_ratio, rng)
    seed = _check_seed(model, seed, ch)
    solver = None
    if o.method is Method.ANALYTIC:
        solver = require_closed_form(model)
    elif o.method is Method.AUTO:
        solver = closed_form(model)
    if solver is None:
        q, ok, its, restarts, reason = numeric.solve(model, ch, target, o, seed, t_start)
        return _result(ch, q, target, o, t_start, 'numeric', reason, its, restarts)

    k, best, *measured = nearest(solver, ch, target, o.mask, o.tol_position, o.tol_orientation,
                                 seed, o.weights)
    if k:
        return _result(ch, best, target, o, t_start, 'analytic',
                       f'closed form ({solver.name}): {k} solution(s), the nearest to the seed',
                       solutions=k, measured=measured)
    complete = bool(np.all((o.mask > 0.0) >= solver.rows))
    unreachable = (f'unreachable: no closed-form solution ({solver.name}) within tolerance '
                   'and joint limits')
    analytic = _result(ch, best, target, o, t_start, 'analytic', unreachable)
    if o.method is Method.ANALYTIC:
        return analytic
    # auto: a closed form that is complete for this mask proves the target unreachable, and a
    # local descent from the nearest branch only lowers the residual; when the mask leaves the
    # closed form incomplete (it fixes rows the task leaves free), search numerically.
    if complete:
        q, ok, its, restarts, reason = numeric.solve(model, ch, target, o, best, t_start,
                                                     restarts=False)
        reason = reason if ok else unreachable
    else:
        q, ok, its, restarts, reason = numeric.solve(model, ch, target, o, seed, t_start)
    result = _result(ch, q, target, o, t_start, 'numeric', reason, its, restarts)
    if result.success or _weighted_cost(result, o.mask) <= _weighted_cost(analytic, o.mask):
        return result
    return dataclasses.replace(analytic, time=time.perf_counter() - t_start)


def _every_turn(ch, q):
    """Every copy of ``q`` with angles of revolute joints with two limits shifted by 2 pi k."""
    values = []
    for x, lo, hi, wrap in zip(q, ch.lower, ch.upper, ch.wrap):
        if wrap:
            # one turn of margin each side against rounding, then the exact test
            turns = np.arange(math.ceil((lo - x) / limits.TWO_PI) - 1,
                              math.floor((hi - x) / limits.TWO_PI) + 2)
            copies = x + limits.TWO_PI * turns
            values.append(copies[(copies >= lo) & (copies <= hi)])
        else:
            values.append([x])
    return [np.array(c) for c in itertools.product(*values)]


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
        Task rows to match (default :func:`default_mask`).
    tol_position : float, optional
        Position acceptance of a solution through fk [m].
    tol_orientation : float, optional
        Orientation acceptance of a solution through fk [rad].
    all_turns : bool, optional
        Also list the copies of a solution whose revolute angles differ by 2 pi k and still fit
        in the limits (default: one copy, each angle on its in-limit turn nearest 0).

    Returns
    -------
    list of numpy.ndarray, shape (n,)
        Distinct solutions [rad or m] in branch order; empty when the target is unreachable.

    Raises
    ------
    InputError
        Bad target or options, or the model has no closed form.

    """
    ch, _ = _chain(model)
    target = _check_target(target)
    m = _check_mask(model, mask)
    tol_p = _positive(tol_position, 'tol_position')
    tol_o = _positive(tol_orientation, 'tol_orientation')
    solver = require_closed_form(model)
    zero = np.zeros(model.dof)
    k, solutions, *_ = branches(solver, ch, target, m, tol_p, tol_o, zero, np.ones(model.dof))
    if not all_turns:
        return list(solutions[:k])
    return [c for q in solutions[:k] for c in _every_turn(ch, q)]


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
    previous = _check_seed(model, seed, chain(model))
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
