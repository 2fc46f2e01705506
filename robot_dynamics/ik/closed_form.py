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
Closed-form inverse kinematics: structure detection, every branch, verification.

The structure is read from the joint screws at q = 0 (:class:`Geometry`), never from a robot's
name; see :mod:`robot_dynamics.ik` for the arms covered. A solver's ``candidates(target,
hint)`` (compiled) returns every branch's joint vector, unverified; :func:`branches` (compiled)
checks each through the forward kinematics, keeps those within tolerance and limits, merges
duplicates and, for a single answer, picks the one nearest the seed.
"""

import dataclasses
import math
import weakref

import numpy as np

from .chain import tip_residual
from .subproblems import angle_2d, pk1, pk2, pk3, plane_basis, rotate, solve_2r, STRUCTURE_TOL
from .. import kinematics
from .._jit import njit
from ..errors import InputError
from ..kinematics import rotate3
from ..limits import nearest_turns, project, TWO_PI

#: Two closed-form branches closer than this [rad or m] in every joint are one solution (at the
#: workspace boundary the two elbow branches meet).
SAME_SOLUTION_TOL = 1e-6


@dataclasses.dataclass(frozen=True)
class Geometry:
    """Joint screws at q = 0 in the base frame: unit ``axis`` (n, 3), a ``point`` on each."""

    axis: np.ndarray
    point: np.ndarray
    tip: np.ndarray         # T_base_tip at q = 0
    tip_body: int
    revolute: np.ndarray    # bool (n,), revolute or continuous


def geometry(model):
    """Return the :class:`Geometry` of ``model``."""
    T = np.eye(4)
    axis, point = [], []
    for i in range(model.dof):
        T = T @ model.joint_placement[i]
        axis.append(T[:3, :3] @ model.joint_axis[i])
        point.append(T[:3, 3].copy())
    body, _ = model.link_body(None)
    tip = np.asarray(kinematics.fk(model, np.zeros(model.dof)), dtype=float)
    axis = np.array(axis)
    return Geometry(axis=axis / np.linalg.norm(axis, axis=1)[:, None], point=np.array(point),
                    tip=tip, tip_body=body, revolute=~np.asarray(model.is_prismatic))


def _line_intersection(p1, w1, p2, w2):
    """Closest points of two lines; ``(midpoint, distance)``, or None when parallel."""
    x = np.cross(w1, w2)
    xx = x @ x
    if xx < STRUCTURE_TOL ** 2:
        return None
    d = p2 - p1
    a = p1 + (np.cross(d, w2) @ x) / xx * w1
    b = p2 + (np.cross(d, w1) @ x) / xx * w2
    return 0.5 * (a + b), float(np.linalg.norm(a - b))


def _parallel(a, b):
    return np.linalg.norm(np.cross(a, b)) < STRUCTURE_TOL


class ClosedForm:
    """
    A closed-form solver: candidate joint vectors for a target, every branch.

    ``rows`` (bool, 6) are the task rows its solutions are complete for: for any mask that
    selects at least these rows, every solution of the masked problem is among the candidates.
    ``candidates(target, hint)`` returns an array (K, n) (unverified; out-of-reach targets give
    the nearest configurations); ``hint`` (n,) fills joints a singularity leaves free.
    ``nearest(ch, target, mask, tol_p2, tol_o2, seed, weights)`` is :func:`nearest` in one
    compiled call. ``params`` holds the solver's constants for its kernels.
    """

    name = ''
    rows = np.ones(6, dtype=bool)
    #: the compiled ``(candidates, nearest)`` of this structure, taking ``params`` first
    kernels = ()

    def candidates(self, target, hint):
        """Return the candidate joint vectors (K, n) for ``target``."""
        return self.kernels[0](self.params, target, hint)

    def nearest(self, ch, target, mask, tol_p2, tol_o2, seed, weights):
        """Return :func:`nearest` for ``target`` (squared tolerances)."""
        return self.kernels[1](self.params, ch.basis, ch.tip, ch.lower, ch.upper, ch.revolute,
                               ch.wrap, target, seed, mask, tol_p2, tol_o2, weights)


# ---- planar arms --------------------------------------------------------------------------------

_RR, _RRR, _RP = 0, 1, 2


class Planar(ClosedForm):
    """
    Arms whose revolute axes are all parallel to ``n``: in-plane chains RR, RRR and RP.

    Prismatic joints along ``n`` (at most one) lift the plane; prismatic joints normal to
    ``n`` slide in it (the ``P`` of ``RP``, after the revolute joint).
    """

    PATTERNS = {'RR': (_RR, 'planar 2R'), 'RRR': (_RRR, 'planar 3R'),
                'RP': (_RP, 'planar rotary-prismatic')}

    @classmethod
    def detect(cls, model, geo):
        """Return the solver for ``model`` if its joints have this structure, else None."""
        n_joints = model.dof
        if geo.tip_body != n_joints or not geo.revolute.any():
            return None
        n = geo.axis[np.flatnonzero(geo.revolute)[0]]
        if not all(_parallel(geo.axis[i], n) for i in np.flatnonzero(geo.revolute)):
            return None
        lift, seq = [], []
        for i in range(n_joints):
            if geo.revolute[i]:
                seq.append((i, 'R'))
            elif _parallel(geo.axis[i], n):
                lift.append(i)
            elif abs(geo.axis[i] @ n) < STRUCTURE_TOL:
                seq.append((i, 'P'))
            else:
                return None
        pattern = ''.join(k for _, k in seq)
        if len(lift) > 1 or pattern not in cls.PATTERNS:
            return None
        u, v = plane_basis(n)
        frame = np.array([n, u, v])
        joints = [i for i, _ in seq]
        c = np.zeros((3, 2))
        c[:len(joints)] = [frame[1:] @ geo.point[i] for i in joints]
        p0 = frame[1:] @ geo.tip[:3, 3]
        slide = np.zeros(2)
        if pattern == 'RP':
            slide = frame[1:] @ geo.axis[joints[1]]
            slide /= np.linalg.norm(slide)
            lengths = [1.0]
        elif pattern == 'RR':
            lengths = [math.dist(c[1], c[0]), math.dist(p0, c[1])]
        else:
            lengths = [math.dist(c[1], c[0]), math.dist(c[2], c[1])]
        if min(lengths) < STRUCTURE_TOL:
            return None
        solver = cls()
        code, name = cls.PATTERNS[pattern]
        # pattern, in-plane joints, lift joint (-1: none), (n, u, v), +-1 for joints along n,
        # joint points in the plane, tip in the plane and along n, R0^T u, slide direction
        solver.params = (code, np.array(joints + [0] * (3 - len(joints)), dtype=np.int64),
                         lift[0] if lift else -1, frame, geo.axis @ n, c, p0,
                         float(n @ geo.tip[:3, 3]), geo.tip[:3, :3].T @ u, slide)
        rows = np.zeros(6, dtype=bool)
        rows[:3] = True
        if pattern == 'RRR':
            rows[3:] = np.abs(n) > STRUCTURE_TOL
        solver.rows = rows
        solver.name = name + (' with a lift joint' if lift else '')
        return solver


@njit
def _planar_candidates(params, target, hint):
    code, joints, lift, frame, sign, c, p0, h0, R0t_u, slide = params
    n, u, v = frame[0], frame[1], frame[2]
    pt = np.ascontiguousarray(target[:3, 3])
    x = np.array([np.dot(u, pt), np.dot(v, pt)])
    q = hint.copy()
    if lift >= 0:
        q[lift] = (np.dot(n, pt) - h0) / sign[lift]
    j0, j1, j2 = joints[0], joints[1], joints[2]
    t1_hint = q[j0] * sign[j0]
    out = np.empty((2, q.shape[0]))
    for i in range(2):
        out[i] = q
    if code == _RP:
        r0 = p0 - c[0]
        d = x - c[0]
        b = np.dot(r0, slide)
        disc = math.sqrt(max(0.0, b * b - np.dot(r0, r0) + np.dot(d, d)))
        for i in range(2):
            s = -b + disc if i == 0 else -b - disc
            t1 = t1_hint if math.hypot(d[0], d[1]) < STRUCTURE_TOL else angle_2d(r0 + s * slide, d)
            out[i, j0] = t1 * sign[j0]
            out[i, j1] = s
        return out
    phi = 0.0
    if code == _RR:
        arm = solve_2r(c[0], c[1], p0, x, t1_hint)
    else:
        Ru = np.ascontiguousarray(target[:3, :3]) @ R0t_u
        phi = math.atan2(np.dot(v, Ru), np.dot(u, Ru))
        cp, sp = math.cos(phi), math.sin(phi)
        r = p0 - c[2]
        wrist = np.array([x[0] - cp * r[0] + sp * r[1], x[1] - sp * r[0] - cp * r[1]])
        arm = solve_2r(c[0], c[1], c[2], wrist, t1_hint)
    for i in range(2):
        out[i, j0] = arm[i, 0] * sign[j0]
        out[i, j1] = arm[i, 1] * sign[j1]
        if code == _RRR:
            out[i, j2] = (phi - arm[i, 0] - arm[i, 1]) * sign[j2]
    return out


# ---- 6R arms with a spherical wrist -------------------------------------------------------------

class SphericalWrist(ClosedForm):
    """
    6R arms whose last three axes meet in one point: Pieper's decomposition.

    Pieper, "The kinematics of manipulators under computer control", 1968; Craig, "Introduction
    to Robotics", 3rd ed., 2005, §4.6. The wrist centre ``c`` does not move with q4..q6, so
    ``g1 g2 g3 c0 = c`` fixes q1..q3: with axes 2 and 3 parallel, q1 brings ``c`` into the plane
    of the 2-3 linkage and a planar 2R gives q2, q3; with axes 1 and 2 meeting at ``s``,
    ``|c - s|`` fixes q3 (subproblem 3) and subproblem 2 gives q1, q2. The wrist rotation
    ``R4 R5 R6 = (R1 R2 R3)^T R R0^T`` then gives q4, q5 (subproblem 2 applied to axis 6) and
    q6 (subproblem 1): the two Euler-angle solutions.
    """

    name = '6R spherical wrist (Pieper)'

    @classmethod
    def detect(cls, model, geo):
        """Return the solver for ``model`` if its joints have this structure, else None."""
        if model.dof != 6 or geo.tip_body != 6 or not geo.revolute.all():
            return None
        w, p = geo.axis, geo.point
        hit = _line_intersection(p[3], w[3], p[4], w[4])
        if hit is None or hit[1] > STRUCTURE_TOL:
            return None
        centre = hit[0]
        off_axis = centre - p[5] - ((centre - p[5]) @ w[5]) * w[5]
        if np.linalg.norm(off_axis) > STRUCTURE_TOL or _parallel(w[4], w[5]):
            return None
        R0 = geo.tip[:3, :3]
        parallel23 = _parallel(w[1], w[2]) and not _parallel(w[0], w[1])
        u, v = plane_basis(w[1])
        plane = np.zeros((3, 2))
        shoulder = np.zeros(3)
        sign3 = height = 0.0
        if parallel23:
            plane[:] = [(u @ x, v @ x) for x in (p[1], p[2], centre)]
            if (math.dist(plane[0], plane[1]) < STRUCTURE_TOL
                    or math.dist(plane[1], plane[2]) < STRUCTURE_TOL):
                return None
            sign3 = float(w[2] @ w[1])
            height = float(w[1] @ (centre - p[0]))
        else:
            hit12 = _line_intersection(p[0], w[0], p[1], w[1])
            if hit12 is None or hit12[1] > STRUCTURE_TOL:
                return None
            shoulder = hit12[0]
        solver = cls()
        # vectors: centre, centre in the tip frame at q = 0, a unit vector normal to axis 6
        # (for q6), the plane of the 2-3 linkage, the shoulder point
        vectors = np.array([centre, R0.T @ (centre - geo.tip[:3, 3]), plane_basis(w[5])[0], u,
                            v, shoulder])
        solver.params = (np.ascontiguousarray(w), np.ascontiguousarray(p), vectors,
                         np.ascontiguousarray(R0.T), plane, sign3, height, parallel23)
        return solver


@njit
def _wrist_arm(w, p, vectors, plane, sign3, height, parallel23, c, hint):
    """Rows ``(q1, q2, q3)`` (<= 4, 3) placing the wrist centre at ``c``."""
    centre, u, v, shoulder = vectors[0], vectors[3], vectors[4], vectors[5]
    out = np.empty((4, 3))
    k = 0
    if parallel23:
        d = c - p[0]
        dpar = np.dot(w[0], d)
        dperp = d - dpar * w[0]
        A = np.dot(w[1], dperp)
        B = np.dot(w[1], np.cross(w[0], dperp))
        C = height - dpar * np.dot(w[1], w[0])
        rho = math.hypot(A, B)
        if rho < STRUCTURE_TOL:
            phis = np.array([-hint[0]])
        else:
            psi = math.acos(min(1.0, max(-1.0, C / rho)))
            phis = np.array([math.atan2(B, A) + psi, math.atan2(B, A) - psi])
        for phi in phis:
            xc = p[0] + rotate(w[0], phi, d)
            arm = solve_2r(plane[0], plane[1], plane[2],
                           np.array([np.dot(u, xc), np.dot(v, xc)]), hint[1])
            for i in range(2):
                out[k, 0], out[k, 1], out[k, 2] = -phi, arm[i, 0], arm[i, 1] * sign3
                k += 1
    else:
        s = shoulder
        for t3 in pk3(w[2], p[2], centre, s, math.sqrt(np.dot(c - s, c - s))):
            pc = p[2] + rotate(w[2], t3, centre - p[2])
            shoulder_arm = pk2(w[0], w[1], pc - s, c - s, hint[0])
            for i in range(shoulder_arm.shape[0]):
                out[k, 0], out[k, 1], out[k, 2] = shoulder_arm[i, 0], shoulder_arm[i, 1], t3
                k += 1
    return out[:k].copy()


@njit
def _wrist_candidates(params, target, hint):
    w, p, vectors, R0t, plane, sign3, height, parallel23 = params
    offset, x6 = vectors[1], vectors[2]
    R = np.ascontiguousarray(target[:3, :3])
    c, a6, ax = np.empty(3), np.empty(3), np.empty(3)
    rotate3(R, offset, c, False)
    c += target[:3, 3]
    RR0t = R @ R0t
    # the wrist rotation Rw = (R1 R2 R3)^T R R0^T is needed only on w6 and x6
    rotate3(RR0t, w[5], a6, False)
    rotate3(RR0t, x6, ax, False)
    arm = _wrist_arm(w, p, vectors, plane, sign3, height, parallel23, c, hint)
    out = np.empty((2 * arm.shape[0], 6))
    k = 0
    for i in range(arm.shape[0]):
        t1, t2, t3 = arm[i, 0], arm[i, 1], arm[i, 2]
        Rw_w6 = rotate(w[2], -t3, rotate(w[1], -t2, rotate(w[0], -t1, a6)))
        Rw_x6 = rotate(w[2], -t3, rotate(w[1], -t2, rotate(w[0], -t1, ax)))
        wrist = pk2(w[3], w[4], w[5], Rw_w6, hint[3])
        for j in range(wrist.shape[0]):
            t4, t5 = wrist[j, 0], wrist[j, 1]
            t6 = pk1(w[5], x6, rotate(w[4], -t5, rotate(w[3], -t4, Rw_x6)), hint[5])
            out[k, 0], out[k, 1], out[k, 2] = t1, t2, t3
            out[k, 3], out[k, 4], out[k, 5] = t4, t5, t6
            k += 1
    return out[:k].copy()


# ---- detection ----------------------------------------------------------------------------------

_SOLVERS = (Planar, SphericalWrist)
# Memo of closed_form(model): models are immutable, so the answer never goes stale, and weak
# keys let it go with the model.
_CLOSED_FORMS = weakref.WeakKeyDictionary()


def closed_form(model):
    """
    Return the closed-form solver that applies to ``model``, or None.

    The structure is detected from the joint axes at q = 0 (see :mod:`robot_dynamics.ik`) and
    the answer is cached per model. The solver's ``name`` says which closed form applies.
    """
    try:
        return _CLOSED_FORMS[model]
    except KeyError:
        pass
    geo = geometry(model)
    solver = None
    for kind in _SOLVERS:
        solver = kind.detect(model, geo)
        if solver is not None:
            break
    _CLOSED_FORMS[model] = solver
    return solver


def require_closed_form(model):
    """Return :func:`closed_form` of ``model``, or raise ``InputError`` when it has none."""
    solver = closed_form(model)
    if solver is None:
        types = ''.join('P' if p else 'R' for p in model.is_prismatic)
        raise InputError(
            f'robot {model.name!r} ({model.dof} joints, {types}) has no closed-form inverse '
            'kinematics (supported: planar RR, RRR and RP arms with an optional lift joint, '
            "and 6R arms with a spherical wrist); use ik(..., method='numeric')")
    return solver


# ---- verification -------------------------------------------------------------------------------

@njit
def _wrap(x):
    """Wrap an angle to [-pi, pi)."""
    return (x + math.pi) % TWO_PI - math.pi


@njit
def _same(a, b, revolute):
    """Whether two joint vectors are one solution: revolute angles compared modulo 2 pi."""
    for j in range(a.shape[0]):
        d = _wrap(a[j] - b[j]) if revolute[j] else a[j] - b[j]
        if abs(d) > SAME_SOLUTION_TOL:
            return False
    return True


@njit
def _branches(C, basis, tip, target, mask, tol_p2, tol_o2, lower, upper, revolute, wrap, seed,
              weights):
    K, n = C.shape
    S, errors, E = np.empty((K, n)), np.empty((K, 2)), np.empty((K, 6))
    T, pose, e = np.empty((n, 4, 4)), np.empty((4, 4)), np.empty(6)
    q, fit, best = np.empty(n), np.empty(n), np.empty(n)
    count, pick = 0, -1
    pick_cost, best_cost = np.inf, np.inf
    for i in range(K):
        for j in range(n):
            q[j] = _wrap(C[i, j]) if revolute[j] else C[i, j]
        p2, o2, _ = tip_residual(basis, n, tip, q, target, mask, T, pose, e)
        if not (p2 <= tol_p2 and o2 <= tol_o2):
            continue
        if not nearest_turns(q, seed, lower, upper, revolute, fit):
            continue
        duplicate = False
        for s in range(count):
            duplicate = duplicate or _same(fit, S[s], revolute)
        if duplicate:
            continue
        S[count] = fit
        errors[count, 0], errors[count, 1] = math.sqrt(p2), math.sqrt(o2)
        for r in range(6):
            E[count, r] = e[r] if mask[r] > 0.0 else 0.0
        cost = 0.0
        for j in range(n):
            cost += weights[j] * (fit[j] - seed[j]) ** 2
        if cost < pick_cost:
            pick, pick_cost = count, cost
        count += 1
    if count == 0:
        for i in range(K):
            q[:] = C[i]
            project(q, lower, upper, wrap)
            _, _, cost = tip_residual(basis, n, tip, q, target, mask, T, pose, e)
            if cost < best_cost:
                best[:] = q
                best_cost = cost
    return count, S, errors, E, pick, best


def branches(solver, ch, target, mask, tol_p, tol_o, seed, weights):
    """
    Verify the closed-form candidates of ``solver`` for ``target`` (chain ``ch``).

    Returns ``(k, solutions, errors, residuals, nearest, best)``: the first ``k`` rows of
    ``solutions`` (K, n) are the branches within tolerance and limits, each revolute angle on
    its in-limit turn nearest ``seed``; ``errors`` (K, 2) their position [m] and orientation
    [rad] errors; ``residuals`` (K, 6) their pose errors (zero in unmasked rows); ``nearest``
    the row nearest the seed (weights ``weights``), -1 when k = 0; ``best``, when k = 0, the
    candidate of least weighted error moved into the limits (``seed`` if there is none).
    """
    C = solver.candidates(target, seed)
    if not len(C):
        return 0, C, np.empty((0, 2)), np.empty((0, 6)), -1, seed
    return _branches(C, ch.basis, ch.tip, target, mask, tol_p * tol_p, tol_o * tol_o, ch.lower,
                     ch.upper, ch.revolute, ch.wrap, seed, weights)


@njit
def _nearest(C, basis, tip, lower, upper, revolute, wrap, target, seed, mask, tol_p2, tol_o2,
             weights):
    if C.shape[0] == 0:
        return 0, seed.copy(), np.zeros(6), np.nan, np.nan
    k, S, errors, E, pick, best = _branches(C, basis, tip, target, mask, tol_p2, tol_o2, lower,
                                            upper, revolute, wrap, seed, weights)
    if k == 0:
        return 0, best, np.zeros(6), np.nan, np.nan
    return k, S[pick].copy(), E[pick].copy(), errors[pick, 0], errors[pick, 1]


@njit
def _planar_nearest(params, basis, tip, lower, upper, revolute, wrap, target, seed, mask,
                    tol_p2, tol_o2, weights):
    return _nearest(_planar_candidates(params, target, seed), basis, tip, lower, upper,
                    revolute, wrap, target, seed, mask, tol_p2, tol_o2, weights)


@njit
def _wrist_nearest(params, basis, tip, lower, upper, revolute, wrap, target, seed, mask, tol_p2,
                   tol_o2, weights):
    return _nearest(_wrist_candidates(params, target, seed), basis, tip, lower, upper, revolute,
                    wrap, target, seed, mask, tol_p2, tol_o2, weights)


Planar.kernels = (_planar_candidates, _planar_nearest)
SphericalWrist.kernels = (_wrist_candidates, _wrist_nearest)


def nearest(solver, ch, target, mask, tol_p, tol_o, seed, weights):
    """
    Return the verified closed-form solution of ``target`` nearest ``seed`` (one compiled call).

    Returns ``(k, q, residual, position error, orientation error)``: the number of solutions
    within tolerance and limits, and the one nearest the seed in the weighted distance (its
    revolute angles on their in-limit turns nearest the seed); when k = 0, ``q`` is the
    candidate of least weighted error moved into the limits (the seed if there is none) and the
    errors are nan.
    """
    return solver.nearest(ch, target, mask, tol_p * tol_p, tol_o * tol_o, seed, weights)
