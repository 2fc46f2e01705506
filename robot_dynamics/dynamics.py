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
Rigid-body dynamics of a serial chain: ``tau = M(q) qdd + C(q, qd) qd + g(q) + J^T f_ext``.

All algorithms work with spatial vectors expressed in the base frame at the base origin
(``[linear; angular]``, see :mod:`robot_dynamics.spatial`). In that one frame a serial chain
needs no coordinate transforms between links, so the recursions of the lecture notes become
prefix sums over the joints, vectorised over every state of a batch:

- twists          ``V_i = V_{i-1} + S_i qd_i``
- accelerations   ``A_i = A_{i-1} + S_i qdd_i + V_i x S_i qd_i``, ``A_0 = [-g; 0]`` (gravity as
  a fictitious base acceleration, seed 003 §5.3 / seed 001 §3.3)
- body forces     ``F_i = I_i A_i + V_i x* I_i V_i``
- joint forces    ``f_i = sum_{j >= i} F_j`` (+ the tip wrench), ``tau_i = S_i . f_i``

This is the recursive Newton-Euler algorithm (seed 001 eq 3.7-3.13, seed 003 §5.3) in
Featherstone's absolute-coordinate form (Featherstone 2008, §5.3). ``I_i`` is body i's 6x6
spatial inertia in the base frame; ``S_i`` the joint's motion subspace (kinematics module).

Every function takes one state ``(n,)`` or a batch ``(..., n)`` and returns the same leading
shape. Units: N*m for revolute and N for prismatic joints, rad/s^2 or m/s^2 for qdd.
"""

import enum

import numpy as np

from . import kinematics
from ._jit import kernel_array, njit
from .errors import (as_array, as_joint_array, choice, InputError, ShapeError,
                     SingularMassMatrixError)
from .kinematics import (chain, cross3, local_transform, matvec6, motion_cross6, rotate3,
                         states)
from .linalg import singular_pivot, spd_solve
from .spatial import motion_cross_matrix, skew

#: Velocity scale [rad/s or m/s] of the smooth Coulomb friction ``friction * tanh(qd / scale)``.
COULOMB_VELOCITY_SCALE = 1e-3

#: Names of the ten inertial parameters of a body, in order (as Pinocchio's dynamic parameters).
INERTIAL_PARAMETER_NAMES = ('m', 'mcx', 'mcy', 'mcz', 'ixx', 'ixy', 'iyy', 'ixz', 'iyz', 'izz')


class ForwardDynamicsMethod(enum.Enum):
    """The algorithms of :func:`forward_dynamics`; the strings are what it accepts."""

    ABA = 'aba'
    CRBA = 'crba'
    STROBE = 'strobe'


def spatial_inertia(mass, com, inertia):
    """
    Spatial inertia (..., 6, 6) about the frame origin, ``[linear; angular]`` ordering.

    ``[[m 1, -m S(c)], [m S(c), I_c - m S(c) S(c)]]`` for mass ``m`` [kg], centre of mass ``c``
    [m] and rotational inertia ``I_c`` [kg m^2] about the COM, all in the same frame.
    """
    mass = np.asarray(mass, dtype=float)[..., None, None]
    Sc = skew(com)
    top = np.concatenate((mass * np.eye(3), -mass * Sc), axis=-1)
    bottom = np.concatenate((mass * Sc, inertia - mass * (Sc @ Sc)), axis=-1)
    return np.concatenate((top, bottom), axis=-2)


def _parameter_basis():
    """Return the spatial inertias (10, 6, 6) of the unit parameters of one body."""
    basis = np.zeros((10, 6, 6))
    basis[0, :3, :3] = np.eye(3)
    for k in range(3):
        Sk = skew(np.eye(3)[k])
        basis[1 + k, :3, 3:] = -Sk
        basis[1 + k, 3:, :3] = Sk
    for p, (a, b) in enumerate(((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))):
        basis[4 + p, 3 + a, 3 + b] = basis[4 + p, 3 + b, 3 + a] = 1.0
    return basis


_PARAMETER_BASIS = _parameter_basis()


def constants(model):
    """Per-model constants of the dynamics: body spatial inertias in body frames (n, 6, 6)."""
    tip = np.array(model.frames[model.tip_link][1][:3, 3])
    tip.setflags(write=False)
    return {'body_inertia': spatial_inertia(model.mass, model.com, model.inertia),
            'tip_origin': tip}


# ---- shared passes ------------------------------------------------------------------------------

def _gravity(model, gravity):
    if gravity is None:
        return model.gravity
    return as_array(gravity, (3,), 'gravity').reshape(3)


class _Kinematics:
    """Subspaces, body twists and base-frame inertias of a batch of states (numpy algorithms)."""

    def __init__(self, model, q, qd):
        T = kinematics.body_poses(model, q)
        R, p = T[..., :3, :3], T[..., :3, 3]
        # force transform body -> base, X* = [[R, 0], [S(p) R, R]]; motion transform is X*^-T
        Xf = np.zeros(T.shape[:-2] + (6, 6))
        Xf[..., :3, :3] = R
        Xf[..., 3:, 3:] = R
        Xf[..., 3:, :3] = skew(p) @ R
        self.Xf = Xf
        self.S = kinematics.motion_subspaces(model, T)
        self.inertia = Xf @ model.derived.body_inertia @ np.swapaxes(Xf, -1, -2)
        Sqd = self.S * qd[..., None]
        self.V = np.cumsum(Sqd, axis=1)
        self.crm = motion_cross_matrix(self.V)
        # velocity-product acceleration V_i x S_i qd_i (= dS_i/dt qd_i)
        self.c = (self.crm @ Sqd[..., None])[..., 0]


def _suffix_sum(F):
    """``sum_{j >= i} F_j`` along the joint axis (axis 1)."""
    return np.cumsum(F[:, ::-1], axis=1)[:, ::-1]


def friction_torques(model, qd, smoothing=COULOMB_VELOCITY_SCALE):
    """
    Joint friction ``damping * qd + friction * tanh(qd / smoothing)`` (..., n).

    Viscous damping [N m s/rad] and Coulomb friction [N m] from the URDF ``<dynamics>``; the
    smooth sign keeps the model differentiable at rest and never adds energy. ``smoothing``
    [rad/s or m/s] = 0 gives its limit, the exact Coulomb term ``friction * sign(qd)``, which does
    not change when every speed is scaled (:func:`robot_dynamics.time_scaling.time_scale`).
    """
    if not smoothing >= 0.0:
        raise InputError(f'smoothing: expected a velocity >= 0, got {smoothing!r}')
    qd = as_joint_array(qd, model.dof, 'qd')
    sign = np.sign(qd) if smoothing == 0.0 else np.tanh(qd / smoothing)
    return model.damping * qd + model.friction * sign


# ---- inverse dynamics ---------------------------------------------------------------------------

@njit
def _rnea_kernel(basis, axis, prismatic, mass, com, inertia, tip, Q, QD, QDD, a0, Fext):
    """
    Recursive Newton-Euler in link frames, Craig's form (seed 003 §5.3 eq 5.5-5.8, DY19).

    Outward: angular velocity ``w``, angular acceleration ``wd`` and origin acceleration ``vd``
    of each body in its own frame (``vd_0 = -g``: gravity as a base acceleration). Inward: the
    force ``f`` and moment ``nn`` that body i-1 exerts on body i, about body i's origin;
    ``tau_i = nn . axis`` (revolute) or ``f . axis`` (prismatic). ``Fext`` (B, 6) is the tip
    wrench on the environment in the base frame, ``tip`` the tip origin in body n's frame.
    """
    B, n = Q.shape
    tau = np.empty((B, n))
    L = np.empty((n, 4, 4))
    F = np.empty((n, 3))
    N = np.empty((n, 3))
    w, wd, vd = np.empty(3), np.empty(3), np.empty(3)
    t, u, x, y = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    f, nn, fi = np.empty(3), np.empty(3), np.empty(3)
    Tw = np.empty((n, 4, 4))
    for b in range(B):
        w[:] = 0.0
        wd[:] = 0.0
        vd[:] = a0
        for i in range(n):
            local_transform(basis, i, Q[b, i], L[i])
            R, p, a = L[i, :3, :3], L[i, :3, 3], axis[i]
            qd, qdd = QD[b, i], QDD[b, i]
            # parent origin acceleration carried to this origin: vd + wd x p + w x (w x p)
            cross3(w, p, t)
            cross3(w, t, u)
            cross3(wd, p, t)
            for k in range(3):
                x[k] = vd[k] + t[k] + u[k]
            rotate3(R, x, vd, True)
            rotate3(R, w, x, True)            # parent's w in this frame
            rotate3(R, wd, y, True)           # parent's wd in this frame
            if prismatic[i]:
                cross3(x, a, t)               # w x axis: Coriolis 2 w x (qd axis)
                for k in range(3):
                    vd[k] += 2.0 * qd * t[k] + qdd * a[k]
                    w[k], wd[k] = x[k], y[k]
            else:
                cross3(x, a, t)
                for k in range(3):
                    w[k] = x[k] + qd * a[k]
                    wd[k] = y[k] + qd * t[k] + qdd * a[k]
            # Newton and Euler at the COM: F = m vc, N = I wd + w x I w
            c = com[i]
            cross3(w, c, t)
            cross3(w, t, u)
            cross3(wd, c, t)
            for k in range(3):
                F[i, k] = mass[i] * (vd[k] + t[k] + u[k])
            rotate3(inertia[i], w, x, False)
            cross3(w, x, t)
            rotate3(inertia[i], wd, x, False)
            for k in range(3):
                N[i, k] = x[k] + t[k]
        # the tip wrench in body n's frame, moment about body n's origin
        chain(basis, Q[b], Tw)
        Rw = Tw[n - 1, :3, :3]
        rotate3(Rw, Fext[b, :3], f, True)
        rotate3(Rw, Fext[b, 3:], nn, True)
        cross3(tip, f, t)
        for k in range(3):
            nn[k] += t[k]
        for i in range(n - 1, -1, -1):
            if i < n - 1:
                # body i+1's force and moment carried into frame i, about origin i
                R, p = L[i + 1, :3, :3], L[i + 1, :3, 3]
                rotate3(R, f, fi, False)
                rotate3(R, nn, x, False)
                cross3(p, fi, t)
                for k in range(3):
                    f[k] = fi[k]
                    nn[k] = x[k] + t[k]
            cross3(com[i], F[i], t)
            for k in range(3):
                f[k] += F[i, k]
                nn[k] += N[i, k] + t[k]
            a = axis[i]
            if prismatic[i]:
                tau[b, i] = f[0] * a[0] + f[1] * a[1] + f[2] * a[2]
            else:
                tau[b, i] = nn[0] * a[0] + nn[1] * a[1] + nn[2] * a[2]
    return tau


def _rnea(model, q, qd, qdd, gravity, f_ext):
    """Run the RNEA kernel on checked (B, n) states; return torques (B, n)."""
    return _rnea_kernel(model.derived.local_basis, model.joint_axis, model.is_prismatic,
                        model.mass, model.com, model.inertia, model.derived.tip_origin,
                        q, qd, qdd, -gravity, _tip_wrenches(model, q.shape[0], f_ext))


def _tip_wrenches(model, B, f_ext):
    """Tip wrenches as (B, 6), zero when ``f_ext`` is None."""
    if f_ext is None:
        return np.zeros((B, 6))
    F = as_array(f_ext, (6,), 'f_ext').reshape(-1, 6)
    if F.shape[0] not in (1, B):
        raise ShapeError(f'f_ext: expected shape (6,) or (..., 6) matching q, got '
                         f'{np.shape(f_ext)}')
    return kernel_array(np.broadcast_to(F, (B, 6)))


def inverse_dynamics(model, q, qd, qdd, *, gravity=None, f_ext=None, friction=False):
    """
    Joint torques that produce ``qdd`` at ``(q, qd)``: recursive Newton-Euler, O(n).

    Parameters
    ----------
    model : RobotModel
        The robot.
    q, qd, qdd : array_like, shape (..., n)
        Joint positions [rad, m], velocities [rad/s, m/s] and accelerations [rad/s^2, m/s^2].
    gravity : array_like, shape (3,), optional
        Gravity [m/s^2] in the base frame; default ``model.gravity``.
    f_ext : array_like, shape (6,) or (..., 6), optional
        Wrench ``[fx, fy, fz, nx, ny, nz]`` [N, N m] that the tip exerts on the environment, at
        the tip origin, in the base frame; adds ``J^T f_ext``.
    friction : bool
        Add :func:`friction_torques`.

    Returns
    -------
    numpy.ndarray, shape (..., n)
        Joint torques [N m] or forces [N].

    """
    (q, qd, qdd), shape = states(model, ('q', q), ('qd', qd), ('qdd', qdd))
    tau = _rnea(model, q, qd, qdd, _gravity(model, gravity), f_ext)
    if friction:
        tau += friction_torques(model, qd)
    return tau.reshape(shape + (model.dof,))


def gravity_torques(model, q, *, gravity=None):
    """Torques (..., n) holding the arm still against gravity: RNEA with qd = qdd = 0."""
    (q,), shape = states(model, ('q', q))
    zero = np.zeros_like(q)
    tau = _rnea(model, q, zero, zero, _gravity(model, gravity), None)
    return tau.reshape(shape + (model.dof,))


def nonlinear_effects(model, q, qd, *, gravity=None):
    """``C(q, qd) qd + g(q)`` (..., n): RNEA with qdd = 0 (seed 001 §8, the bias of strobing)."""
    (q, qd), shape = states(model, ('q', q), ('qd', qd))
    tau = _rnea(model, q, qd, np.zeros_like(q), _gravity(model, gravity), None)
    return tau.reshape(shape + (model.dof,))


# ---- mass matrix and Coriolis -------------------------------------------------------------------

@njit
def _world_bodies(basis, axis, prismatic, mass, com, inertia, q, T, S, Isp):
    """
    Fill, for one state, body poses ``T``, subspaces ``S`` (n, 6) and inertias ``Isp`` (n, 6, 6).

    ``S_i = [o x z; z]`` (revolute) or ``[z; 0]`` (prismatic) and
    ``Isp_i = [[m 1, -m S(c)], [m S(c), I_c + m (|c|^2 1 - c c^T)]]``, base frame at the origin,
    with ``c`` the COM and ``I_c = R I_com R^T`` the rotated central inertia.
    """
    chain(basis, q, T)
    z, c = np.empty(3), np.empty(3)
    for i in range(q.shape[0]):
        R, o = T[i, :3, :3], T[i, :3, 3]
        rotate3(R, axis[i], z, False)
        if prismatic[i]:
            S[i, :3] = z
            S[i, 3:] = 0.0
        else:
            cross3(o, z, S[i, :3])
            S[i, 3:] = z
        rotate3(R, com[i], c, False)
        c += o
        m = mass[i]
        cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
        for k in range(3):
            for j in range(3):
                Ic = 0.0   # (R I_com R^T)[k, j]
                for r in range(3):
                    Ic += R[k, r] * (inertia[i, r, 0] * R[j, 0] + inertia[i, r, 1] * R[j, 1]
                                     + inertia[i, r, 2] * R[j, 2])
                # S(c)[k, j] = -eps_kjl c_l: zero on the diagonal, (k - j) mod 3 picks the sign
                Sc = 0.0 if k == j else (c[3 - k - j] if (k - j) % 3 == 1 else -c[3 - k - j])
                Isp[i, k, j] = m if k == j else 0.0
                Isp[i, k, 3 + j] = -m * Sc
                Isp[i, 3 + k, j] = m * Sc
                Isp[i, 3 + k, 3 + j] = Ic + m * ((cc if k == j else 0.0) - c[k] * c[j])


@njit
def _crba_kernel(basis, axis, prismatic, mass, com, inertia, Q):
    """Composite-rigid-body algorithm: ``M_ij = S_i . Ic_j S_j`` for ``i <= j``."""
    B, n = Q.shape
    M = np.empty((B, n, n))
    T, S, Ic, F = np.empty((n, 4, 4)), np.empty((n, 6)), np.empty((n, 6, 6)), np.empty(6)
    for b in range(B):
        _world_bodies(basis, axis, prismatic, mass, com, inertia, Q[b], T, S, Ic)
        for j in range(n - 1, -1, -1):
            if j < n - 1:
                Ic[j] += Ic[j + 1]        # composite inertia of bodies j..n
            matvec6(Ic[j], S[j], F)
            for i in range(j + 1):
                M[b, i, j] = M[b, j, i] = S[i] @ F
    return M


def _crba(model, q):
    return _crba_kernel(model.derived.local_basis, model.joint_axis, model.is_prismatic,
                        model.mass, model.com, model.inertia, q)


def mass_matrix(model, q):
    """
    Joint-space mass matrix ``M(q)`` (..., n, n), symmetric positive (semi-)definite.

    Composite-rigid-body algorithm: ``M_ij = S_i . Ic_j S_j`` for ``i <= j`` with the
    composite inertia ``Ic_j`` of bodies j..n (Featherstone 2008, §6.2).
    """
    (q,), shape = states(model, ('q', q))
    return _crba(model, q).reshape(shape + (model.dof, model.dof))


def coriolis_matrix(model, q, qd):
    """
    Coriolis matrix ``C(q, qd)`` (..., n, n) with ``C qd`` the Coriolis and centrifugal torques.

    ``C = sum_i J_i^T (I_i dJ_i/dt + (V_i x*) I_i J_i)`` with body Jacobians ``J_i = [S_1..S_i]``.
    Since ``dI_i/dt = V_i x* I_i - I_i V_i x``, ``C + C^T = dM/dt``, so ``dM/dt - 2C`` is
    skew-symmetric: the property the Christoffel form of seed 002 (eq 6.61) is chosen for.
    Entry ``C_kj = S_k . (Ic_m dS_j/dt + Bc_m S_j)`` with ``m = max(k, j)``, ``Ic`` and
    ``Bc = sum (V x*) I`` summed over bodies m..n.
    """
    (q, qd), shape = states(model, ('q', q), ('qd', qd))
    kin = _Kinematics(model, q, qd)
    n = model.dof
    Sd = (kin.crm @ kin.S[..., None])[..., 0]
    Ic = _suffix_sum(kin.inertia)
    Bc = _suffix_sum(-np.swapaxes(kin.crm, -1, -2) @ kin.inertia)
    # G[b, m, j] = Ic_m dS_j/dt + Bc_m S_j for all m, j
    G = (Ic[:, :, None] @ Sd[:, None, :, :, None]
         + Bc[:, :, None] @ kin.S[:, None, :, :, None])[..., 0]
    m = np.maximum.outer(np.arange(n), np.arange(n))
    C = np.einsum('bkc,bkjc->bkj', kin.S, G[:, m, np.arange(n)[None, :]])
    return C.reshape(shape + (n, n))


# ---- forward dynamics ---------------------------------------------------------------------------

@njit
def _force_cross(v, f, out):
    """``out = v x* f`` for a twist ``v`` and a wrench ``f``, both ``[linear; angular]``."""
    t = np.empty(3)
    cross3(v[3:], f[:3], out[:3])
    cross3(v[3:], f[3:], out[3:])
    cross3(v[:3], f[:3], t)
    out[3:] += t


@njit
def _pivot_scales(S, Isp, work, out):
    """
    Write the scale of each mass-matrix pivot to ``out`` (n,), from one state's bodies.

    ``|S_i| . (sum_{j >= i} |I_j|) |S_i|`` (elementwise absolute values; ``S`` (n, 6) and the
    body inertias ``Isp`` (n, 6, 6) in the base frame): the magnitude of the terms of
    ``M_ii = S_i . Ic_i S_i``, in its units (kg m^2 or kg). ``work`` is a (6, 6) array.
    """
    work[:] = 0.0
    for i in range(S.shape[0] - 1, -1, -1):
        s = 0.0
        for r in range(6):
            t = 0.0
            for k in range(6):
                work[r, k] += abs(Isp[i, r, k])
                t += work[r, k] * abs(S[i, k])
            s += abs(S[i, r]) * t
        out[i] = s


@njit
def _pivot_scale_kernel(basis, axis, prismatic, mass, com, inertia, Q):
    """Pivot scales (B, n) of the mass matrices at the states ``Q`` (B, n)."""
    B, n = Q.shape
    out = np.empty((B, n))
    T, S, Isp, work = np.empty((n, 4, 4)), np.empty((n, 6)), np.empty((n, 6, 6)), np.empty((6, 6))
    for b in range(B):
        _world_bodies(basis, axis, prismatic, mass, com, inertia, Q[b], T, S, Isp)
        _pivot_scales(S, Isp, work, out[b])
    return out


@njit
def aba_work(n):
    """Return the work arrays of :func:`aba_state` for a chain of ``n`` joints."""
    return (np.empty((n, 4, 4)), np.empty((n, 6)), np.empty((n, 6, 6)), np.empty((n, 6)),
            np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)), np.empty(n), np.empty(n),
            np.empty(n), np.empty((6, 6)), np.empty(6), np.empty(6), np.empty(6), np.empty(3))


@njit
def aba_state(basis, axis, prismatic, mass, com, inertia, tip, q, qd, tau, a0, fext, work,
              qdd):
    """
    Articulated-body algorithm in base coordinates (Featherstone 2008, §7.3), O(n), one state.

    Writes the accelerations of ``(q, qd, tau)`` (n,) to ``qdd`` (n,), with the base
    acceleration ``a0 = -g`` (3,) and the tip wrench ``fext`` (6,) on the environment in the base
    frame; ``work`` is :func:`aba_work`. Returns -1, or the index of a joint whose articulated
    inertia ``D_i`` is a singular pivot (:func:`robot_dynamics.linalg.singular_pivot`).
    """
    T, S, IA, V, c, pA, U, D, u, scale, w66, Sqd, a, t, pt = work
    n = q.shape[0]
    _world_bodies(basis, axis, prismatic, mass, com, inertia, q, T, S, IA)
    _pivot_scales(S, IA, w66, scale)
    for i in range(n):
        for k in range(6):
            Sqd[k] = S[i, k] * qd[i]
            V[i, k] = Sqd[k] + (V[i - 1, k] if i > 0 else 0.0)
        motion_cross6(V[i], Sqd, c[i])            # dS_i/dt qd_i
        matvec6(IA[i], V[i], t)
        _force_cross(V[i], t, pA[i])              # V x* I V
    # the tip wrench on the environment, as a force at the base origin
    rotate3(T[n - 1, :3, :3], tip, pt, False)
    pt += T[n - 1, :3, 3]
    pA[n - 1, :3] += fext[:3]
    cross3(pt, fext[:3], t[:3])
    pA[n - 1, 3:] += fext[3:] + t[:3]
    for i in range(n - 1, -1, -1):
        matvec6(IA[i], S[i], U[i])
        D[i] = S[i] @ U[i]
        if singular_pivot(D[i], scale[i]):
            return i
        u[i] = tau[i] - S[i] @ pA[i]
        if i > 0:
            # Ia = IA - U U^T / D is added to the parent, and so is pA + Ia c + U u / D
            matvec6(IA[i], c[i], t)
            Uc = U[i] @ c[i]
            for r in range(6):
                pA[i - 1, r] += pA[i, r] + t[r] + U[i, r] * (u[i] - Uc) / D[i]
                for k in range(6):
                    IA[i - 1, r, k] += IA[i, r, k] - U[i, r] * U[i, k] / D[i]
    a[:3] = a0
    a[3:] = 0.0
    for i in range(n):
        for k in range(6):
            a[k] += c[i, k]
        qdd[i] = (u[i] - U[i] @ a) / D[i]
        for k in range(6):
            a[k] += S[i, k] * qdd[i]
    return -1


@njit
def _aba_kernel(basis, axis, prismatic, mass, com, inertia, tip, Q, QD, TAU, a0, Fext):
    """:func:`aba_state` over the states (B, n); returns ``(qdd, bad)`` (-1 or a joint)."""
    B, n = Q.shape
    qdd = np.empty((B, n))
    work = aba_work(n)
    for b in range(B):
        bad = aba_state(basis, axis, prismatic, mass, com, inertia, tip, Q[b], QD[b], TAU[b],
                        a0, Fext[b], work, qdd[b])
        if bad >= 0:
            return qdd, bad
    return qdd, -1


def singular_joint_error(model, joint):
    """Return the error that reports joint ``joint``'s singular articulated inertia (ABA)."""
    return SingularMassMatrixError(
        f'joint {model.joint_names[joint]!r} moves no mass or inertia: the mass matrix is '
        'singular; give the links after it mass or inertia')


def _cholesky_solve(model, q, M, rhs):
    """Solve ``M qdd = rhs`` at the states ``q`` (B, n) by Cholesky, with ABA's singular test."""
    scale = _pivot_scale_kernel(model.derived.local_basis, model.joint_axis, model.is_prismatic,
                                model.mass, model.com, model.inertia, q)
    qdd, (b, j) = spd_solve(M, rhs, scale)
    if b >= 0:
        raise SingularMassMatrixError(
            f'mass matrix is singular: joint {model.joint_names[j]!r} adds no mass or inertia '
            'that the joints before it do not already move (a degenerate model, e.g. a joint '
            'that moves no mass or inertia)')
    return qdd


def forward_dynamics(model, q, qd, tau, *, gravity=None, f_ext=None, friction=False,
                     method='aba'):
    """
    Joint accelerations ``qdd`` (..., n) under torques ``tau`` (..., n).

    ``qdd = M^-1 (tau - C qd - g - J^T f_ext - friction)`` (seed 001 eq 9.1). Methods
    (:class:`ForwardDynamicsMethod`):

    - ``'aba'``: articulated-body algorithm, O(n) (default);
    - ``'crba'``: M by the composite-rigid-body algorithm, Cholesky solve;
    - ``'strobe'``: the seed 001 §8-9 route: M strobed column by column through RNEA with unit
      accelerations (no velocity, no gravity), the bias ``C + G`` from RNEA with qdd = 0,
      Cholesky solve.

    Raises ``SingularMassMatrixError`` when M is singular: every route applies the same test,
    :func:`robot_dynamics.linalg.singular_pivot`, to its pivots (ABA's articulated inertias
    ``D_i``, or the Cholesky pivots) with the same scales ``|S_i| . (sum_{j >= i} |I_j|) |S_i|``
    (units of ``M_ii``), so the verdict does not depend on the model's units. Other arguments
    as in :func:`inverse_dynamics`.
    """
    method = choice(method, ForwardDynamicsMethod, 'method')
    (q, qd, tau), shape = states(model, ('q', q), ('qd', qd), ('tau', tau))
    g = _gravity(model, gravity)
    if friction:
        tau = tau - friction_torques(model, qd)
    if method is ForwardDynamicsMethod.ABA:
        F = _tip_wrenches(model, q.shape[0], f_ext)
        qdd, bad = _aba_kernel(model.derived.local_basis, model.joint_axis, model.is_prismatic,
                               model.mass, model.com, model.inertia,
                               model.derived.tip_origin, q, qd,
                               kernel_array(tau), -g, F)
        if bad >= 0:
            raise singular_joint_error(model, bad)
    else:
        bias = _rnea(model, q, qd, np.zeros_like(q), g, f_ext)
        if method is ForwardDynamicsMethod.CRBA:
            M = _crba(model, q)
        else:
            # strobe: row j of RNEA(q, 0, e_j) without gravity is column j of M (M symmetric)
            n = model.dof
            Qs = np.repeat(q, n, axis=0)
            units = np.tile(np.eye(n), (q.shape[0], 1))
            M = _rnea(model, Qs, np.zeros_like(Qs), units, np.zeros(3), None).reshape(-1, n, n)
            M = np.swapaxes(M, -1, -2)
        qdd = _cholesky_solve(model, q, M, tau - bias)
    return qdd.reshape(shape + (model.dof,))


# ---- energy and the regressor -------------------------------------------------------------------

def kinetic_energy(model, q, qd):
    """Kinetic energy ``sum_i 0.5 V_i . I_i V_i = 0.5 qd^T M qd`` [J] (...)."""
    (q, qd), shape = states(model, ('q', q), ('qd', qd))
    kin = _Kinematics(model, q, qd)
    energy = 0.5 * np.einsum('bik,bik->b', kin.V, (kin.inertia @ kin.V[..., None])[..., 0])
    return energy.reshape(shape)


def potential_energy(model, q, *, gravity=None):
    """Gravitational potential energy ``-sum_i m_i g . c_i`` [J] (...); zero at the base origin."""
    (q,), shape = states(model, ('q', q))
    T = kinematics.body_poses(model, q)
    c = (T[..., :3, :3] @ model.com[..., None])[..., 0] + T[..., :3, 3]
    energy = -np.einsum('bi,bik,k->b', np.broadcast_to(model.mass, q.shape), c,
                        _gravity(model, gravity))
    return energy.reshape(shape)


def inertial_parameters(model):
    """
    Return the 10 inertial parameters of every body, stacked (10 n,).

    Per body, in its own frame (the joint frame): ``m``, ``m c`` (3), and the inertia about the
    frame origin ``ixx, ixy, iyy, ixz, iyz, izz`` (Pinocchio's order): the parameters in which
    the dynamics is linear (seed 002 §6.5.3).
    """
    c = model.com
    m = model.mass
    Io = model.inertia + m[:, None, None] * (np.einsum('ik,ik->i', c, c)[:, None, None]
                                             * np.eye(3) - c[:, :, None] * c[:, None, :])
    idx = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))
    return np.concatenate((m[:, None], m[:, None] * c,
                           np.stack([Io[:, a, b] for a, b in idx], axis=-1)), axis=1).ravel()


def regressor(model, q, qd, qdd, *, gravity=None):
    """
    Regressor ``Y(q, qd, qdd)`` (..., n, 10 n): ``Y @ inertial_parameters() == inverse_dynamics``.

    Body i's force is linear in its parameters; in body coordinates
    ``F_i = sum_p pi_p (I_p a_i + v_i x* I_p v_i)`` over the unit-parameter inertias ``I_p``, and
    ``Y[k, 10 i: 10 i + 10] = (X*_i^T S_k) . F_i`` for bodies ``i >= k``.
    """
    (q, qd, qdd), shape = states(model, ('q', q), ('qd', qd), ('qdd', qdd))
    n = model.dof
    kin = _Kinematics(model, q, qd)
    g = _gravity(model, gravity)
    A = np.cumsum(kin.S * qdd[..., None] + kin.c, axis=1) + np.concatenate((-g, np.zeros(3)))
    XfT = np.swapaxes(kin.Xf, -1, -2)          # base -> body motion transform
    a_b = (XfT @ A[..., None])[..., 0]
    v_b = (XfT @ kin.V[..., None])[..., 0]
    crf_b = -np.swapaxes(motion_cross_matrix(v_b), -1, -2)
    # Phi[b, i, :, p]: body force of unit parameter p, body coordinates
    Phi = (_PARAMETER_BASIS @ a_b[:, :, None, :, None])[..., 0] + \
        (crf_b[:, :, None] @ (_PARAMETER_BASIS @ v_b[:, :, None, :, None]))[..., 0]
    S_in_body = XfT[:, :, None] @ kin.S[:, None, :, :, None]     # [b, i, k, :, 0]
    Y = np.einsum('bikc,bipc->bkip', S_in_body[..., 0], Phi)
    Y *= (np.arange(n)[None, :] >= np.arange(n)[:, None])[None, :, :, None]
    return Y.reshape(shape + (n, 10 * n))
