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
Operational-space control: Cartesian impedance of the tip with a null-space posture.

Khatib, "A unified approach for motion and force control of robot manipulators: the operational
space formulation", IEEE J. Robotics and Automation 3(1), 1987. On the controlled task rows
``m`` of the tip's geometric Jacobian ``J`` (base frame, rows ``vx vy vz wx wy wz``;
``model.task_mask`` by default: a planar 2R in the x-z plane controls x, z; a SCARA x, y, z):

    Lambda = (J M^-1 J^T)^-1                      task-space inertia
    Jbar   = M^-1 J^T Lambda                      dynamically consistent inverse
    N^T    = I - J^T Jbar^T                       null-space projector (torques)
    mu + p = Lambda (J M^-1 h - Jdot qd)          Coriolis and gravity in task space, h = C qd + g
    F      = Lambda A_d + K e + D e_dot           the task force
    tau    = J^T (F + mu + p) + N^T (tau_0 + h) + tau_f(qd_f)

with the task error ``e = [p_d - p; rotvec(R_d R^T)]`` (rows m), ``e_dot = V_d - J qd``, the
stiffness ``K = diag(k)`` [N/m, N m/rad] and the damping ``D = 2 zeta Lambda^1/2
(Lambda^-1/2 K Lambda^-1/2)^1/2 Lambda^1/2`` (each mode of ``Lambda e'' + D e' + K e = 0`` has
the damping ratio ``zeta``; Albu-Schaeffer et al., ICRA 2003), and the posture torque
``tau_0 = k_n (q_0 - q) - d_n qd``, ``d_n = 2 zeta_n sqrt(k_n M_jj)``, and the model's joint
friction ``tau_f`` fed forward (as the joint laws' ``friction`` option): at the joint velocity
of the reference twist, ``qd_f = Jbar V_d`` (``'reference'``), at the measured ``qd``
(``'measured'``), or none. Since
``J^T (mu + p) + N^T h = h``, the torque is ``h + J^T (Lambda (A_d - Jdot qd) + K e + D e_dot)
+ N^T tau_0`` (one RNEA call for h). Under a constant wrench ``F_env`` that the environment
applies at the tip, the arm at rest settles where ``K e = -F_env``: the tip yields
``K^-1 F_env``, and ``J M^-1 N^T = 0`` keeps the posture torque out of the task.

**Singularities.** ``Lambda^-1`` is scaled, ``S Lambda^-1 S`` with ``S`` the inverse square
root of the largest diagonal element of the position rows on those rows, of the orientation
rows on these (its eigenvalues ``s_i``, vectors ``U``: dimensionless, so rows in m and rad
compare, and a row of J that vanishes gives a small ``s_i``), and inverted by damped least
squares, ``Lambda = S U diag(s_i / (s_i^2 + delta^2)) U^T S``, with ``delta = 0`` while
``sqrt(s_min)`` is above ``singular_threshold`` ``r`` and ``delta^2 = r^4 - s_min^2`` below,
growing as it falls (Nakamura and Hanafusa 1986; Chiaverini 1997): never a division by zero, a
bounded task inertia and force, the torque clipped to the effort limits, and
:class:`TaskCommand` says so (``near_singularity``, with the condition number of ``J``'s
controlled rows).
"""

import math
from typing import NamedTuple

import numpy as np

from ._jit import kernel_array, njit
from .dynamics import (COULOMB_VELOCITY_SCALE, crba_state, crba_work, friction_torque,
                       rnea_state, rnea_work)
from .errors import as_array, as_joint_array, choice, InputError, ShapeError, unknown_name
from .kinematics import _pose_jacobian, AXES, check_task_mask, mask_axes  # noqa: F401
from .law_base import (BaseLaw, effort_limits, Friction, joint_gains, Law, task_gains,
                       TASK_ROWS)
from .linalg import cholesky_solve
from .spatial import rotation_log

#: Default scaled singular value (the square root of the smallest eigenvalue of ``J M^-1 J^T``
#: scaled per unit, see the module docstring) below which the task inertia is damped: 1 %.
SINGULAR_THRESHOLD = 0.01
#: Default null-space damping ratio, and Cartesian damping ratio.
DAMPING_RATIO = 1.0
#: Shipped task stiffness [N/m on x y z, N m/rad on rx ry rz] and null-space stiffness [N m/rad
#: or N/m per joint] of the controller node: a 10 N push and a posture change settle within 3 s,
#: critically damped, on every bundled robot (``test/core/test_task_space_defaults.py``).
DEFAULT_STIFFNESS = (1000.0, 1000.0, 1000.0, 10.0, 10.0, 10.0)
DEFAULT_NULL_STIFFNESS = 10.0


class TaskCommand(NamedTuple):
    """
    Output of :class:`OperationalSpace`: a :class:`~robot_dynamics.control.Command` and more.

    ``tau``, ``saturated``, ``tau_requested`` (..., n) and the task ``error`` (..., 6) (unused
    rows zero) as for the other laws; ``condition_number`` (...) of the controlled rows of J
    (inf at a singularity) and ``near_singularity`` (...): the task inertia was damped.
    """

    tau: np.ndarray
    saturated: np.ndarray
    tau_requested: np.ndarray
    error: np.ndarray
    condition_number: np.ndarray
    near_singularity: np.ndarray


class OperationalSpace(BaseLaw):
    """
    Cartesian impedance / operational-space control of the tip (see the module docstring).

    Parameters
    ----------
    model : RobotModel
        The controller's model (kinematics, M, h = C qd + g).
    stiffness : float, array_like (6,) or mapping
        ``k`` per task row ``vx vy vz wx wy wz`` [N/m, N m/rad] (:data:`TASK_ROWS`), > 0 on
        the controlled rows.
    damping_ratio : float
        ``zeta`` of the task's modes (1: critical).
    null_stiffness : float, array_like (n,) or mapping
        ``k_n`` of the posture [N m/rad or N/m] (0: the self-motion is only damped if
        ``null_damping`` ... is the damping that ``k_n`` implies: none).
    null_damping_ratio : float
        ``zeta_n`` of the posture.
    posture : array_like (n,), optional
        ``q_0`` [rad or m]; None: no posture stiffness, the self-motion damped with
        ``k_n`` as if the posture were where the arm is.
    mask : array_like (6,), optional
        Controlled rows (0/1), axes the arm moves independently; default ``model.task_mask``.
    singular_threshold : float
        Scaled singular value below which the task inertia is damped, in (0, 1).
    friction : str
        The model's joint friction fed forward: ``'none'``, ``'reference'`` (at ``Jbar V_d``)
        or ``'measured'`` (:class:`~robot_dynamics.control.Friction`).
    effort_limit, saturate
        As in :class:`~robot_dynamics.control.PD`.

    """

    law = Law.OPERATIONAL_SPACE
    gain_names = ('stiffness', 'damping_ratio', 'null_stiffness', 'null_damping_ratio',
                  'posture')

    def __init__(self, model, stiffness, damping_ratio=DAMPING_RATIO, *, null_stiffness=0.0,
                 null_damping_ratio=DAMPING_RATIO, posture=None, mask=None,
                 singular_threshold=SINGULAR_THRESHOLD, friction='none', effort_limit=None,
                 saturate=True):
        self._arguments = {'stiffness': stiffness, 'damping_ratio': damping_ratio,
                           'null_stiffness': null_stiffness,
                           'null_damping_ratio': null_damping_ratio, 'posture': posture,
                           'mask': mask, 'singular_threshold': singular_threshold,
                           'friction': friction, 'effort_limit': effort_limit,
                           'saturate': saturate}
        self.friction = choice(friction, Friction, 'friction')
        self.model = model
        n = model.dof
        mask = model.task_mask if mask is None else as_array(mask, (6,), 'mask').reshape(6)
        if not np.all((mask == 0.0) | (mask == 1.0)) or not mask.any():
            raise InputError(f'mask: expected six 0/1 weights with at least one 1, got {mask}')
        check_task_mask(model, mask)
        self.mask = _frozen(mask)
        self.rows = np.flatnonzero(self.mask)
        self.stiffness = task_gains(stiffness, 'stiffness')
        if np.any(self.stiffness[self.rows] <= 0.0):
            raise InputError(f'stiffness: expected > 0 on the controlled rows '
                             f'{[TASK_ROWS[r] for r in self.rows]}, got '
                             f'{self.stiffness.tolist()}')
        self.damping_ratio = _ratio(damping_ratio, 'damping_ratio')
        self.null_stiffness = joint_gains(null_stiffness, model, 'null_stiffness')
        self.null_damping_ratio = _ratio(null_damping_ratio, 'null_damping_ratio')
        self.posture = None if posture is None else \
            _frozen(as_joint_array(posture, n, 'posture').reshape(n))
        outside = [] if posture is None else np.flatnonzero(
            (self.posture < model.lower) | (self.posture > model.upper))
        if len(outside):
            j = outside[0]
            raise InputError(f'posture: joint {model.joint_names[j]!r} at {self.posture[j]:g} '
                             f'is outside its limits [{model.lower[j]:g}, {model.upper[j]:g}]')
        self.singular_threshold = float(singular_threshold)
        if not 0.0 < self.singular_threshold < 1.0:
            raise InputError('singular_threshold: expected a number in (0, 1), got '
                             f'{singular_threshold}')
        self.effort_limit = effort_limits(model, effort_limit)
        self.saturate = bool(saturate)
        body, T_body_link = model.link_body(model.tip_link)
        self._constants = tuple(kernel_array(np.asarray(x, dtype=float)) for x in (
            model.derived.local_basis, model.joint_axis, model.is_prismatic, model.mass,
            model.com, model.inertia, model.derived.tip_origin, -model.gravity)) + (
            body, kernel_array(np.asarray(T_body_link, dtype=float)))
        posture = np.zeros(n) if self.posture is None else self.posture
        self._parameters = (self.rows.astype(np.int64), kernel_array(self.stiffness[self.rows]),
                            self.damping_ratio, kernel_array(self.null_stiffness),
                            self.null_damping_ratio, kernel_array(posture),
                            self.posture is not None, self.singular_threshold,
                            list(Friction).index(self.friction),
                            kernel_array(np.asarray(model.damping, dtype=float)),
                            kernel_array(np.asarray(model.friction, dtype=float)),
                            COULOMB_VELOCITY_SCALE)

    def __repr__(self):
        return (f'OperationalSpace({self.model.name!r}, stiffness={self.stiffness.tolist()}, '
                f'damping_ratio={self.damping_ratio}, mask={self.mask.tolist()})')

    def with_gains(self, **gains):
        """Return this law with new gains (``gain_names``), validated as the constructor does."""
        unknown = sorted(set(gains) - set(self.gain_names))
        if unknown:
            raise InputError(f'with_gains: OperationalSpace has no gains {unknown}; its gains '
                             f'are {list(self.gain_names)}')
        return OperationalSpace(self.model, **{**self._arguments, **gains})

    @property
    def gains(self):
        """Return the gains as a dict of lists (for reports and ROS parameters)."""
        return {'stiffness': self.stiffness.tolist(), 'damping_ratio': self.damping_ratio,
                'null_stiffness': self.null_stiffness.tolist(),
                'null_damping_ratio': self.null_damping_ratio, 'mask': self.mask.tolist(),
                'posture': None if self.posture is None else self.posture.tolist()}

    def compute(self, t, q, qd, reference):
        """
        Compute the joint torques that give the tip the impedance about the reference.

        Parameters
        ----------
        t : float
            Time [s] (unused: the law has no state).
        q, qd : array_like, shape (..., n)
            Measured joint positions and velocities.
        reference : TaskPoint or tuple
            ``(pose, twist, acceleration)``: (..., 4, 4), (..., 6), (..., 6) in the base frame;
            None twist or acceleration means zero.

        Returns
        -------
        TaskCommand

        """
        n = self.model.dof
        q = as_joint_array(q, n, 'q')
        qd = as_joint_array(qd, n, 'qd')
        if qd.shape != q.shape:
            raise ShapeError(f'qd: expected the shape of q {q.shape}, got {qd.shape}')
        try:
            pose_d, twist_d, acc_d = reference
        except (TypeError, ValueError):
            raise InputError('reference: expected (pose, twist, acceleration), e.g. a '
                             f'TaskPoint, got {type(reference).__name__}') from None
        batch = q.shape[:-1]
        B = int(np.prod(batch, dtype=int))

        def flat(x, tail, name):
            x = np.zeros(tail) if x is None else as_array(x, tail, name)
            return kernel_array(np.broadcast_to(x, batch + tail).reshape((B,) + tail))
        pose_d = flat(pose_d, (4, 4), 'reference pose')
        twist_d = flat(twist_d, (6,), 'reference twist')
        acc_d = flat(acc_d, (6,), 'reference acceleration')
        out = (np.empty((B, n)), np.empty((B, 6)), np.empty(B), np.empty(B, dtype=np.bool_))
        _law_batch(self._constants, self._parameters, kernel_array(q.reshape(B, n)),
                   kernel_array(qd.reshape(B, n)), pose_d, twist_d, acc_d, *out)
        return self._command(*(x.reshape(batch + x.shape[1:]) for x in out))

    def for_one_state(self):
        """
        Return ``compute(t, q, qd, reference) -> TaskCommand`` for one state, checked once.

        One compiled call: the tip's pose, J and ``Jdot qd``, M (CRBA) and h (RNEA) and the law
        (the same kernel as :meth:`compute`); the caller gives finite float64 arrays (n,) and a
        reference of a (4, 4) pose and (6,) twist and acceleration, C-contiguous and writable
        (see :meth:`robot_dynamics.law_base.BaseLaw.for_one_state`).
        """
        constants, parameters, n = self._constants, self._parameters, self.model.dof
        work = _work(n)       # one caller at a time per compute, as a control loop is

        def compute(t, q, qd, ref):
            pose_d, twist_d, acc_d = ref
            tau, e = np.empty(n), np.empty(6)
            cond, near = _law_state(constants, parameters, q, qd, pose_d, twist_d, acc_d, tau,
                                    e, work)
            return self._command(tau, e, cond, near)
        return compute

    def _command(self, tau, e, cond, near):
        """Check and clip ``tau``; return the :class:`TaskCommand`."""
        if not np.isfinite(tau).all():
            raise InputError('the operational-space law produced a non-finite torque from '
                             'finite inputs (overflowing gains or reference?)')
        if not self.saturate:
            return TaskCommand(tau, np.zeros(tau.shape, dtype=bool), tau, e, cond, near)
        lim = self.effort_limit
        return TaskCommand(np.clip(tau, -lim, lim), np.abs(tau) > lim, tau, e, cond, near)


@njit
def _work(n):
    """Work arrays of :func:`_law_state` for ``n`` joints."""
    return (np.empty((1, n)), np.empty((1, n)), crba_work(n), rnea_work(n), np.empty((n, n)),
            np.empty(n), np.zeros(n), np.zeros(6), np.empty(3))


@njit
def _law_state(constants, parameters, q, qd, pose_d, twist_d, acc_d, tau, e, work):
    """
    Run the law on one state (module docstring): write ``tau`` (n,) and ``e`` (6,).

    Returns ``(condition number of J_m, near_singularity)``.
    """
    basis, axis, prismatic, mass, com, inertia, tip, a0, body, T_body_link = constants
    rows, k, zeta, kn, zn, posture, use_posture, threshold, friction, fv, fc, smooth = \
        parameters
    Q, QD, cwork, rwork, M, h, zero, zero6, rv = work
    n = q.shape[0]
    m = rows.shape[0]
    Q[0], QD[0] = q, qd
    poses, Js, Jds = _pose_jacobian(basis, axis, prismatic, body, T_body_link, Q, QD)
    T, J, Jd = poses[0], Js[0], Jds[0]
    crba_state(basis, axis, prismatic, mass, com, inertia, q, cwork, M)
    rnea_state(basis, axis, prismatic, mass, com, inertia, tip, q, qd, zero, a0, zero6, rwork,
               h)
    # task error e = [p_d - p; rotvec(R_d R^T)] on the controlled rows
    for r in range(3):
        e[r] = pose_d[r, 3] - T[r, 3]
    R = np.empty((3, 3))
    for r in range(3):
        for c in range(3):
            R[r, c] = pose_d[r, 0] * T[c, 0] + pose_d[r, 1] * T[c, 1] + pose_d[r, 2] * T[c, 2]
    rotation_log(R, rv)
    for r in range(3):
        e[3 + r] = rv[r]
    Jm = np.empty((m, n))
    em, edot, bias = np.empty(m), np.empty(m), np.empty(m)
    V = J @ qd
    B = Jd @ qd
    for i in range(m):
        Jm[i] = J[rows[i]]
        em[i] = e[rows[i]]
        edot[i] = twist_d[rows[i]] - V[rows[i]]
        bias[i] = acc_d[rows[i]] - B[rows[i]]
    masked = np.zeros(6)
    for i in range(m):
        masked[rows[i]] = em[i]
    e[:] = masked
    # posture torque tau_0 = k_n (q_0 - q) - d_n qd, d_n = 2 zeta_n sqrt(k_n M_jj)
    tau0 = np.empty(n)
    for j in range(n):
        tau0[j] = -2.0 * zn * np.sqrt(kn[j] * M[j, j]) * qd[j]
        if use_posture:
            tau0[j] += kn[j] * (posture[j] - q[j])
    X = np.empty((n, m + 1))
    X[:, :m] = Jm.T
    X[:, m] = tau0
    A = M.copy()
    if cholesky_solve(A, X, n, np.diag(M).copy()) >= 0:   # M^-1 [J^T, tau_0]
        tau[:] = np.nan                                   # a singular M: reported by caller
        return np.inf, True
    Linv = Jm @ np.ascontiguousarray(X[:, :m])
    # scaled (its eigenvalues compare rows of different units), then the
    # damped inverse of its eigenvalues: Lambda = S U diag(s / (s^2 + delta^2)) U^T S
    # per unit (m, rad), by the largest diagonal of its rows: a row of J that vanishes (the
    # SCARA stretched along x) then shows as a small eigenvalue, as it is
    largest = np.zeros(2)
    for i in range(m):
        largest[rows[i] // 3] = max(largest[rows[i] // 3], Linv[i, i])
    scale = np.empty(m)
    for i in range(m):
        scale[i] = 1.0 / np.sqrt(max(largest[rows[i] // 3], 1e-300))
    Ls = (scale.reshape((m, 1)) * Linv) * scale
    s, U = np.empty(m), np.empty((m, m))
    _symmetric_eigen(0.5 * (Ls + Ls.T), s, U)
    floor = threshold * threshold
    low = max(s.min(), 0.0)
    near = low < floor
    delta2 = floor * floor - low * low if near else 0.0
    lam = np.empty(m)
    for i in range(m):
        si = max(s[i], 1e-12)     # > 0: L below stays invertible at an exact singularity
        lam[i] = si / (si * si + delta2)
    # Lambda = L L^T with L = S U diag(sqrt(lam)); D = 2 zeta L (L^-1 K L^-T)^1/2 L^T
    L = (scale.reshape((m, 1)) * U) * np.sqrt(lam)
    Lam = L @ L.T
    Linv_f = (U / scale.reshape((m, 1))).T
    for i in range(m):
        Linv_f[i] /= np.sqrt(lam[i])
    Kt = (Linv_f * k) @ Linv_f.T
    w, W = np.empty(m), np.empty((m, m))
    _symmetric_eigen(0.5 * (Kt + Kt.T), w, W)
    for i in range(m):
        w[i] = np.sqrt(max(w[i], 0.0))
    D = 2.0 * zeta * (L @ ((W * w) @ W.T) @ L.T)
    F = Lam @ bias + k * em + D @ edot
    # tau = h + J^T F + N^T tau_0, N^T tau_0 = tau_0 - J^T Lambda J M^-1 tau_0
    F -= Lam @ (Jm @ np.ascontiguousarray(X[:, m]))
    tau[:] = h + Jm.T @ F + tau0
    if friction != 0:          # Friction order: none, reference, measured
        v = qd
        if friction == 1:      # qd_f = Jbar V_d = M^-1 J^T Lambda V_d
            vd = np.empty(m)
            for i in range(m):
                vd[i] = twist_d[rows[i]]
            v = np.ascontiguousarray(X[:, :m]) @ (Lam @ vd)
        for j in range(n):
            tau[j] += friction_torque(fv[j], fc[j], v[j], smooth)
    sv = np.empty(m)
    _symmetric_eigen(Jm @ Jm.T, sv, np.empty((m, m)))
    low = np.sqrt(max(sv.min(), 0.0))
    cond = np.sqrt(max(sv.max(), 0.0)) / low if low > 0.0 else np.inf
    return cond, near


@njit
def _symmetric_eigen(A, s, V):
    """
    Write the eigenvalues ``s`` (m,) and eigenvectors ``V`` (columns) of a symmetric ``A``.

    Cyclic Jacobi rotations (Golub and Van Loan, Matrix Computations, §8.5), for the few rows
    of a task (m <= 6), where a LAPACK call costs more than the arithmetic; ``A`` is
    overwritten. Unordered.
    """
    m = A.shape[0]
    V[:] = 0.0
    for i in range(m):
        V[i, i] = 1.0
    for _ in range(60):
        off = 0.0
        total = 0.0
        for i in range(m):
            for j in range(m):
                total += A[i, j] * A[i, j]
                if i != j:
                    off += A[i, j] * A[i, j]
        if off <= 1e-32 * total:
            break
        for p in range(m - 1):
            for q in range(p + 1, m):
                apq = A[p, q]
                if apq == 0.0:
                    continue
                theta = (A[q, q] - A[p, p]) / (2.0 * apq)
                t = 1.0 / (abs(theta) + np.sqrt(theta * theta + 1.0))
                if theta < 0.0:
                    t = -t
                c = 1.0 / np.sqrt(t * t + 1.0)
                r = t * c
                for k in range(m):      # A P, then P^T (A P); V P
                    akp, akq = A[k, p], A[k, q]
                    A[k, p], A[k, q] = c * akp - r * akq, r * akp + c * akq
                for k in range(m):
                    apk, aqk = A[p, k], A[q, k]
                    A[p, k], A[q, k] = c * apk - r * aqk, r * apk + c * aqk
                for k in range(m):
                    vkp, vkq = V[k, p], V[k, q]
                    V[k, p], V[k, q] = c * vkp - r * vkq, r * vkp + c * vkq
    for i in range(m):
        s[i] = A[i, i]


@njit
def _law_batch(constants, parameters, Q, QD, poses, twists, accs, tau, e, cond, near):
    """:func:`_law_state` over a batch (B, ...)."""
    work = _work(Q.shape[1])
    for b in range(Q.shape[0]):
        cond[b], near[b] = _law_state(constants, parameters, Q[b], QD[b], poses[b], twists[b],
                                      accs[b], tau[b], e[b], work)


def axes_mask(axes):
    """
    Return the task rows (six 0/1 weights) of the axes named in ``axes`` (of :data:`AXES`).

    Raises ``InputError`` naming an unknown or repeated axis.
    """
    mask = np.zeros(6)
    for name in axes:
        if name not in AXES:
            raise unknown_name('axis', name, AXES)
        if mask[AXES.index(name)]:
            raise InputError(f'axis {name!r} is given twice')
        mask[AXES.index(name)] = 1.0
    return mask


def configured_task_law(model, parameter):
    """
    Return the task-space law that the controller node's parameters describe.

    ``parameter(name, default)`` gives ``cartesian.stiffness`` (six values, :data:`AXES` order),
    ``cartesian.damping_ratio``, ``cartesian.controlled_axes`` (names of :data:`AXES`; empty:
    ``model.task_mask``), ``nullspace.stiffness`` (one value for every joint),
    ``nullspace.damping_ratio``, ``nullspace.posture`` (n joint positions in model order;
    empty: None, where the Cartesian motion starts) and ``friction_compensation`` (the model's
    friction fed forward at the reference: True, the default, as for the joint laws). The
    controller node and the library's loop
    (:func:`robot_dynamics.closed_loop.graph_loop`) both build it here; a bad value raises
    ``InputError`` naming the parameter.
    """
    axes = list(parameter('cartesian.controlled_axes', []) or [])
    posture = list(parameter('nullspace.posture', []) or [])
    try:
        mask = axes_mask(axes) if axes else None
    except InputError as exc:
        raise InputError(f'cartesian.controlled_axes: {exc}') from None
    if posture and len(posture) != model.dof:
        raise InputError(f'nullspace.posture: expected {model.dof} joint positions (one per '
                         f'joint, {list(model.joint_names)}) or none, got {len(posture)}')
    stiffness = list(parameter('cartesian.stiffness', list(DEFAULT_STIFFNESS)))
    if len(stiffness) != 6:
        raise InputError(f'cartesian.stiffness: expected six values (x, y, z in N/m, then rx, '
                         f'ry, rz in N m/rad), got {len(stiffness)}')
    try:
        return OperationalSpace(
            model, stiffness, parameter('cartesian.damping_ratio', DAMPING_RATIO),
            null_stiffness=parameter('nullspace.stiffness', DEFAULT_NULL_STIFFNESS),
            null_damping_ratio=parameter('nullspace.damping_ratio', DAMPING_RATIO),
            posture=posture or None, mask=mask,
            friction='reference' if parameter('friction_compensation', True) else 'none')
    except InputError as exc:
        # the law names its arguments; the caller knows the parameters
        message = str(exc)
        for argument, name in _PARAMETER_NAMES:
            if message.startswith(f'{argument}:'):
                message = name + message[len(argument):]
                break
        raise InputError(message) from None


#: The law's arguments and the parameters that give them.
_PARAMETER_NAMES = (('null_stiffness', 'nullspace.stiffness'),
                    ('null_damping_ratio', 'nullspace.damping_ratio'),
                    ('stiffness', 'cartesian.stiffness'),
                    ('damping_ratio', 'cartesian.damping_ratio'),
                    ('posture', 'nullspace.posture'),
                    ('mask', 'cartesian.controlled_axes'))


def tip_state(model, q, qd, mask=None):
    """
    Return the tip's pose (4, 4), twist ``J qd`` (6,) and the condition number of ``J_m``.

    At ``q``, ``qd`` (n,), base frame; ``J_m`` the controlled rows (``mask``, default
    ``model.task_mask``) of the tip's Jacobian (inf where they lose rank), as
    :class:`TaskCommand` reports it.
    """
    mask = model.task_mask if mask is None else np.asarray(mask, dtype=float)
    J = model.jacobian(q)
    s = np.linalg.svd(J[np.flatnonzero(mask)], compute_uv=False)
    return model.fk(q), J @ qd, float(s[0] / s[-1]) if s[-1] > 0.0 else math.inf


def task_inertia(model, q, mask=None):
    """
    Return the task-space inertia ``Lambda = (J_m M^-1 J_m^T)^-1`` (..., m, m), undamped.

    ``J_m`` the controlled rows (``mask``, default ``model.task_mask``) of the tip's Jacobian
    at ``q`` (..., n); [kg] on position rows, [kg m^2] on orientation rows. Singular where
    ``J_m`` loses rank (``numpy.linalg.LinAlgError``).
    """
    rows = np.flatnonzero(model.task_mask if mask is None else np.asarray(mask, float))
    J = model.jacobian(q)[..., rows, :]
    M = model.mass_matrix(q)
    return np.linalg.inv(J @ np.linalg.solve(M, np.swapaxes(J, -1, -2)))


def null_space_projector(model, q, mask=None):
    """
    Return the dynamically consistent projector of torques ``N^T = I - J^T Lambda J M^-1``.

    (..., n, n) at ``q`` (..., n); ``J M^-1 N^T = 0``: a torque ``N^T tau_0`` gives the tip
    no acceleration (Khatib 1987).
    """
    rows = np.flatnonzero(model.task_mask if mask is None else np.asarray(mask, float))
    J = model.jacobian(q)[..., rows, :]
    M = model.mass_matrix(q)
    Lam = task_inertia(model, q, mask)
    n = model.dof
    return np.eye(n) - np.swapaxes(J, -1, -2) @ Lam @ J @ np.linalg.inv(M)


def _ratio(value, name):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise InputError(f'{name}: expected a number, got {value!r}') from None
    if not (math.isfinite(value) and value >= 0.0):
        raise InputError(f'{name}: expected a damping ratio >= 0, got {value}')
    return value


def _frozen(x):
    arr = np.array(x, dtype=float)
    arr.setflags(write=False)
    return arr
