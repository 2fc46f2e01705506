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

Which algorithm runs where (the chain loops are compiled kernels, see :mod:`robot_dynamics._jit`):

- Inverse dynamics (:func:`inverse_dynamics`, :func:`gravity_torques`,
  :func:`nonlinear_effects`): the recursive Newton-Euler algorithm in link frames, Craig's form
  (Craig, Introduction to Robotics, 3rd ed., 2005, §6.5; Hayes, Introduction to Robotics,
  Carleton University lecture notes, 2008, §5.3): outward, each body's angular velocity and
  acceleration and its origin's acceleration in its own frame, with gravity as a fictitious
  base acceleration; inward, the force and moment each body takes from its parent.
- Mass matrix (composite-rigid-body algorithm), forward dynamics (articulated-body algorithm)
  and the Coriolis matrix: in base coordinates (Featherstone, Rigid Body Dynamics Algorithms,
  2008, §6.2, §7.3), spatial vectors ``[linear; angular]`` expressed in the base frame at the
  base origin. A serial chain needs no transforms between links there: twists are prefix sums
  ``V_i = V_{i-1} + S_i qd_i`` of the joints' motion subspaces ``S_i``
  (:func:`robot_dynamics.kinematics.motion_subspace`) and composite inertias are suffix sums
  of the bodies' spatial inertias (:func:`body_inertia`, ten parameters per body).
- The regressor and the energies: vectorised numpy on the outputs of one compiled pass (body
  poses, subspaces, twists, inertias and momenta).

Every function takes one state ``(n,)`` or a batch ``(..., n)`` and returns the same leading
shape. Units: N*m for revolute and N for prismatic joints, rad/s^2 or m/s^2 for qdd.
"""

import enum

import numpy as np

from . import kinematics
from ._jit import kernel_array, njit
from .errors import (as_array, as_joint_array, choice, InputError, ShapeError,
                     SingularMassMatrixError)
from .kinematics import (chain, cross3, force_cross6, local_transform, matvec6, motion_cross6,
                         motion_subspace, rotate3, states)
from .linalg import singular_pivot, spd_solve

#: Velocity scale [rad/s or m/s] of the smooth Coulomb friction ``friction * tanh(qd / scale)``.
COULOMB_VELOCITY_SCALE = 1e-3

#: Names of the ten inertial parameters of a body, in order (as Pinocchio's dynamic parameters).
INERTIAL_PARAMETER_NAMES = ('m', 'mcx', 'mcy', 'mcz', 'ixx', 'ixy', 'iyy', 'ixz', 'iyz', 'izz')


class ForwardDynamicsMethod(enum.Enum):
    """The algorithms of :func:`forward_dynamics`; the strings are what it accepts."""

    ABA = 'aba'
    CRBA = 'crba'
    STROBE = 'strobe'


class CoriolisForm(enum.Enum):
    """Which factorisation ``C(q, qd)`` of the Coriolis and centrifugal torques to return."""

    #: ``c_kj = sum_i Gamma_kji qd_i`` with the Christoffel symbols of the first kind of M
    CHRISTOFFEL = 'christoffel'
    #: ``C = sum_i J_i^T (I_i dJ_i/dt + (V_i x*) I_i J_i)``, the Newton-Euler body forces
    NEWTON_EULER = 'newton_euler'


# ---- spatial inertia and the per-state pass -----------------------------------------------------

_EYE6 = np.eye(6)


@njit
def body_inertia(T, mass, com, inertia, out):
    """
    Write the spatial inertia of a body at pose ``T`` as ten parameters about the base origin.

    ``out`` (10,) is ``[m, m c, ixx, ixy, iyy, ixz, iyz, izz]`` (the order of
    :data:`INERTIAL_PARAMETER_NAMES`): mass ``m`` [kg], first moment ``m c`` [kg m] of the COM
    ``c = R com + p`` and the rotational inertia ``R I_com R^T + m (|c|^2 1 - c c^T)`` [kg m^2]
    about the base origin (parallel axes), for the body's ``mass``, ``com`` (3,) and central
    ``inertia`` (3, 3) given in its own frame, and ``T = [R, p; 0, 1]`` (4, 4).
    """
    c0 = T[0, 0] * com[0] + T[0, 1] * com[1] + T[0, 2] * com[2] + T[0, 3]
    c1 = T[1, 0] * com[0] + T[1, 1] * com[1] + T[1, 2] * com[2] + T[1, 3]
    c2 = T[2, 0] * com[0] + T[2, 1] * com[1] + T[2, 2] * com[2] + T[2, 3]
    cc = c0 * c0 + c1 * c1 + c2 * c2
    # A = I_com R^T, then the six entries k <= j of R A (scalars: no temporary array)
    a00 = inertia[0, 0] * T[0, 0] + inertia[0, 1] * T[0, 1] + inertia[0, 2] * T[0, 2]
    a01 = inertia[0, 0] * T[1, 0] + inertia[0, 1] * T[1, 1] + inertia[0, 2] * T[1, 2]
    a02 = inertia[0, 0] * T[2, 0] + inertia[0, 1] * T[2, 1] + inertia[0, 2] * T[2, 2]
    a10 = inertia[1, 0] * T[0, 0] + inertia[1, 1] * T[0, 1] + inertia[1, 2] * T[0, 2]
    a11 = inertia[1, 0] * T[1, 0] + inertia[1, 1] * T[1, 1] + inertia[1, 2] * T[1, 2]
    a12 = inertia[1, 0] * T[2, 0] + inertia[1, 1] * T[2, 1] + inertia[1, 2] * T[2, 2]
    a20 = inertia[2, 0] * T[0, 0] + inertia[2, 1] * T[0, 1] + inertia[2, 2] * T[0, 2]
    a21 = inertia[2, 0] * T[1, 0] + inertia[2, 1] * T[1, 1] + inertia[2, 2] * T[1, 2]
    a22 = inertia[2, 0] * T[2, 0] + inertia[2, 1] * T[2, 1] + inertia[2, 2] * T[2, 2]
    m = mass
    out[0] = m
    out[1], out[2], out[3] = m * c0, m * c1, m * c2
    out[4] = T[0, 0] * a00 + T[0, 1] * a10 + T[0, 2] * a20 + m * (cc - c0 * c0)
    out[5] = T[0, 0] * a01 + T[0, 1] * a11 + T[0, 2] * a21 - m * c0 * c1
    out[6] = T[1, 0] * a01 + T[1, 1] * a11 + T[1, 2] * a21 + m * (cc - c1 * c1)
    out[7] = T[0, 0] * a02 + T[0, 1] * a12 + T[0, 2] * a22 - m * c0 * c2
    out[8] = T[1, 0] * a02 + T[1, 1] * a12 + T[1, 2] * a22 - m * c1 * c2
    out[9] = T[2, 0] * a02 + T[2, 1] * a12 + T[2, 2] * a22 + m * (cc - c2 * c2)


@njit
def inertia_times(Y, v, out):
    """
    Write ``out = Y v`` (6,), the momentum of the motion ``v`` under the spatial inertia ``Y``.

    ``Y`` holds the ten parameters of :func:`body_inertia` (mass ``m``, first moment ``h``,
    rotational inertia ``Ib`` about the same point); its 6x6 matrix is
    ``[[m 1, -S(h)], [S(h), Ib]]``, so ``Y [v0; w] = [m v0 - h x w; h x v0 + Ib w]``.
    """
    m, h0, h1, h2 = Y[0], Y[1], Y[2], Y[3]
    out[0] = m * v[0] - (h1 * v[5] - h2 * v[4])
    out[1] = m * v[1] - (h2 * v[3] - h0 * v[5])
    out[2] = m * v[2] - (h0 * v[4] - h1 * v[3])
    out[3] = h1 * v[2] - h2 * v[1] + Y[4] * v[3] + Y[5] * v[4] + Y[7] * v[5]
    out[4] = h2 * v[0] - h0 * v[2] + Y[5] * v[3] + Y[6] * v[4] + Y[8] * v[5]
    out[5] = h0 * v[1] - h1 * v[0] + Y[7] * v[3] + Y[8] * v[4] + Y[9] * v[5]


@njit
def inertia_matrix(Y, out):
    """Fill ``out`` (6, 6) with the matrix of :func:`inertia_times` (symmetric: row k is Y e_k)."""
    for k in range(6):
        inertia_times(Y, _EYE6[k], out[k])


@njit
def _dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit
def _bodies(basis, axis, prismatic, mass, com, inertia, q, T, S, Y):
    """
    Fill the body poses, joint subspaces and body inertias of one state ``q``.

    Outputs: poses ``T`` (n, 4, 4) and, in base coordinates, the subspaces ``S`` (n, 6) of
    :func:`~robot_dynamics.kinematics.motion_subspace` and the inertias ``Y`` (n, 10) of
    :func:`body_inertia`. The one per-state pass of the CRBA, ABA and Coriolis kernels.
    """
    chain(basis, q, T)
    for i in range(q.shape[0]):
        motion_subspace(T[i], axis[i], prismatic[i], S[i])
        body_inertia(T[i], mass[i], com[i], inertia[i], Y[i])


@njit
def _motion_kernel(basis, axis, prismatic, mass, com, inertia, Q, QD):
    """Per state: poses, subspaces, twists ``V``, inertias ``Y`` and momenta ``Y V``."""
    B, n = Q.shape
    T, S, Y = np.empty((B, n, 4, 4)), np.empty((B, n, 6)), np.empty((B, n, 10))
    V, H = np.empty((B, n, 6)), np.empty((B, n, 6))
    for b in range(B):
        _bodies(basis, axis, prismatic, mass, com, inertia, Q[b], T[b], S[b], Y[b])
        for i in range(n):
            for k in range(6):
                V[b, i, k] = S[b, i, k] * QD[b, i] + (V[b, i - 1, k] if i > 0 else 0.0)
            inertia_times(Y[b, i], V[b, i], H[b, i])
    return T, S, V, Y, H


def _motion(model, q, qd):
    """Return :func:`_motion_kernel` of checked (B, n) states (the numpy algorithms' input)."""
    return _motion_kernel(model.derived.local_basis, model.joint_axis, model.is_prismatic,
                          model.mass, model.com, model.inertia, q, qd)


@njit
def _inertias(T, mass, com, inertia):
    out = np.empty((mass.shape[0], 10))
    for i in range(mass.shape[0]):
        body_inertia(T[i], mass[i], com[i], inertia[i], out[i])
    return out


def constants(model):
    """Per-model constants of the dynamics: the tip origin in the last body's frame."""
    tip = np.array(model.frames[model.tip_link][1][:3, 3])
    tip.setflags(write=False)
    return {'tip_origin': tip}


def _gravity(model, gravity):
    if gravity is None:
        return model.gravity
    return as_array(gravity, (3,), 'gravity').reshape(3)


def _friction(damping, coulomb, qd, smoothing):
    """
    Joint friction ``damping * qd + coulomb * tanh(qd / smoothing)`` [N m or N].

    Viscous damping [N m s/rad] and Coulomb friction [N m] from the URDF ``<dynamics>``; the
    smooth sign keeps the model differentiable at rest and never adds energy. ``smoothing``
    [rad/s or m/s] = 0 gives its limit, the exact Coulomb term ``coulomb * sign(qd)``, which does
    not change when every speed is scaled (:func:`robot_dynamics.time_scaling.time_scale`). The
    one home of the friction formula: numpy runs it on arrays (:func:`friction_torques`,
    :func:`friction_regressor`), numba compiles it for one joint (:func:`friction_torque`).
    """
    return damping * qd + coulomb * (np.tanh(qd / smoothing) if smoothing > 0.0 else np.sign(qd))


#: :func:`_friction` of one joint, compiled for the kernels' loops.
friction_torque = njit(_friction)


def _smoothing(smoothing):
    if not smoothing >= 0.0:
        raise InputError(f'smoothing: expected a velocity >= 0, got {smoothing!r}')
    return smoothing


def friction_torques(model, qd, smoothing=COULOMB_VELOCITY_SCALE):
    """Joint friction (..., n) at the velocities ``qd`` (..., n): :func:`_friction` per joint."""
    qd = as_joint_array(qd, model.dof, 'qd')
    return _friction(model.damping, model.friction, qd, _smoothing(smoothing))


def friction_regressor(qd, smoothing=COULOMB_VELOCITY_SCALE):
    """
    Regressor (..., n, 2 n) of the joint friction on ``[damping; friction]`` of the joints.

    The viscous columns ``diag(qd)``, then the Coulomb columns ``diag(tanh(qd / smoothing))``:
    ``friction_regressor(qd) @ [damping; friction] = friction_torques(model, qd)``.
    """
    qd = np.asarray(qd, dtype=float)
    sign = _friction(0.0, 1.0, qd, _smoothing(smoothing))       # the Coulomb term alone
    eye = np.eye(qd.shape[-1])
    return np.concatenate((qd[..., None, :] * eye, sign[..., None, :] * eye), axis=-1)


# ---- inverse dynamics ---------------------------------------------------------------------------

@njit
def _outward(basis, axis, prismatic, q, qd, qdd, a0, L, W, WD, VD, t, u, x, y):
    """
    Outward pass of the recursive Newton-Euler algorithm in link frames, one state.

    Fills the joint transforms ``L`` (n, 4, 4) (``T_{body i-1}_{body i}``) and, in each body's
    own frame, its angular velocity ``W``, angular acceleration ``WD`` and origin acceleration
    ``VD`` (n, 3), with the base acceleration ``a0`` (3,) (``-g``: gravity as a fictitious
    acceleration) (Craig 2005, §6.5, eqs 6.45-6.47 and 6.49-6.50). ``t, u, x, y`` are (3,) work
    arrays.
    """
    for i in range(q.shape[0]):
        local_transform(basis, i, q[i], L[i])
        R, p, a = L[i, :3, :3], L[i, :3, 3], axis[i]
        if i == 0:
            rotate3(R, a0, VD[0], True)
            for k in range(3):
                x[k] = y[k] = 0.0                 # the base does not turn
        else:
            w, wd = W[i - 1], WD[i - 1]
            # parent origin acceleration carried to this origin: vd + wd x p + w x (w x p)
            cross3(w, p, t)
            cross3(w, t, u)
            cross3(wd, p, t)
            for k in range(3):
                x[k] = VD[i - 1, k] + t[k] + u[k]
            rotate3(R, x, VD[i], True)
            rotate3(R, w, x, True)            # parent's w in this frame
            rotate3(R, wd, y, True)           # parent's wd in this frame
        cross3(x, a, t)                       # w x axis
        if prismatic[i]:
            for k in range(3):
                VD[i, k] += 2.0 * qd[i] * t[k] + qdd[i] * a[k]      # Coriolis 2 w x (qd axis)
                W[i, k], WD[i, k] = x[k], y[k]
        else:
            for k in range(3):
                W[i, k] = x[k] + qd[i] * a[k]
                WD[i, k] = y[k] + qd[i] * t[k] + qdd[i] * a[k]


@njit
def _inward(L, i, f, nn, fi, x, t):
    """Carry the force ``f`` and moment ``nn`` about body i's origin into frame i-1, in place."""
    R, p = L[i, :3, :3], L[i, :3, 3]
    rotate3(R, f, fi, False)
    rotate3(R, nn, x, False)
    cross3(p, fi, t)
    for k in range(3):
        f[k] = fi[k]
        nn[k] = x[k] + t[k]


@njit
def _joint_force(prismatic, a, f, nn):
    """Return the joint torque (revolute: moment on the axis) or force (prismatic) of a wrench."""
    if prismatic:
        return f[0] * a[0] + f[1] * a[1] + f[2] * a[2]
    return nn[0] * a[0] + nn[1] * a[1] + nn[2] * a[2]


@njit
def rnea_work(n):
    """Return the work arrays of :func:`rnea_state` for a chain of ``n`` joints."""
    return (np.empty((n, 4, 4)), np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3)),
            np.empty((n, 3)), np.empty((n, 3)), np.empty(3), np.empty(3), np.empty(3),
            np.empty(3), np.empty(3), np.empty(3), np.empty(3), np.empty((n, 4, 4)))


@njit
def rnea_state(basis, axis, prismatic, mass, com, inertia, tip, q, qd, qdd, a0, fext, work, tau):
    """
    Recursive Newton-Euler in link frames, Craig's form (Craig 2005, §6.5; Hayes 2008, §5.3).

    Writes the torques of one state ``(q, qd, qdd)`` (n,) to ``tau`` (n,). Outward
    (:func:`_outward`): angular velocity ``w``, angular acceleration ``wd`` and origin
    acceleration ``vd`` of each body in its own frame (``vd_0 = a0 = -g``: gravity as a base
    acceleration). Inward: the force ``f`` and moment ``nn`` that body i-1 exerts on body i,
    about body i's origin; ``tau_i = nn . axis`` (revolute) or ``f . axis`` (prismatic).
    ``fext`` (6,) is the tip wrench on the environment in the base frame, ``tip`` the tip origin
    in body n's frame; ``work`` is :func:`rnea_work`.
    """
    L, W, WD, VD, F, N, t, u, x, y, f, nn, fi, Tw = work
    n = q.shape[0]
    _outward(basis, axis, prismatic, q, qd, qdd, a0, L, W, WD, VD, t, u, x, y)
    for i in range(n):
        # Newton and Euler at the COM: F = m vc, N = I wd + w x I w
        w, wd, c = W[i], WD[i], com[i]
        cross3(w, c, t)
        cross3(w, t, u)
        cross3(wd, c, t)
        for k in range(3):
            F[i, k] = mass[i] * (VD[i, k] + t[k] + u[k])
        rotate3(inertia[i], w, x, False)
        cross3(w, x, t)
        rotate3(inertia[i], wd, x, False)
        for k in range(3):
            N[i, k] = x[k] + t[k]
    # the tip wrench in body n's frame, moment about body n's origin; the chain's poses are
    # only needed (a second pass) when there is a wrench
    f[:] = 0.0
    nn[:] = 0.0
    wrench = False
    for k in range(6):
        wrench = wrench or fext[k] != 0.0
    if wrench:
        chain(basis, q, Tw)
        rotate3(Tw[n - 1], fext[:3], f, True)
        rotate3(Tw[n - 1], fext[3:], nn, True)
        cross3(tip, f, t)
        for k in range(3):
            nn[k] += t[k]
    for i in range(n - 1, -1, -1):
        if i < n - 1:
            _inward(L, i + 1, f, nn, fi, x, t)      # body i+1's, about origin i
        cross3(com[i], F[i], t)
        for k in range(3):
            f[k] += F[i, k]
            nn[k] += N[i, k] + t[k]
        tau[i] = _joint_force(prismatic[i], axis[i], f, nn)


@njit
def _rnea_kernel(basis, axis, prismatic, mass, com, inertia, tip, Q, QD, QDD, a0, Fext):
    """:func:`rnea_state` over the states (B, n) and tip wrenches ``Fext`` (B, 6)."""
    B, n = Q.shape
    tau = np.empty((B, n))
    work = rnea_work(n)
    for b in range(B):
        rnea_state(basis, axis, prismatic, mass, com, inertia, tip, Q[b], QD[b], QDD[b], a0,
                   Fext[b], work, tau[b])
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


def _frame_wrench(model, q, f_ext, frame):
    """
    Split a wrench at ``frame`` into the kernels' tip wrench and joint torques ``J^T f_ext``.

    Returns ``(tip_wrench, None)`` for the tip (or no wrench: the kernels' own pass), else
    ``(None, tau_ext)`` (B, n) with ``tau_ext = J_frame(q)^T f_ext``, ``J_frame`` the geometric
    Jacobian of the frame's origin (base axes): the wrench's joint torques, exact, since the
    dynamics are linear in it (Hayes 2008, §4.4: ``N = J^T F``).
    """
    if f_ext is None or frame is None or frame == model.tip_link:
        return f_ext, None
    if frame not in model.link_names:
        raise InputError(f'f_ext_frame: unknown frame {frame!r}; the frames are '
                         f'{model.link_names}')
    F = _tip_wrenches(model, q.shape[0], f_ext)
    _, J = kinematics._pose_and_jacobian(model, q, frame)
    return None, np.einsum('bri,br->bi', J, F)


def inverse_dynamics(model, q, qd, qdd, *, gravity=None, f_ext=None, friction=False,
                     f_ext_frame=None):
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
        Wrench ``[fx, fy, fz, nx, ny, nz]`` [N, N m] that the arm exerts on the environment
        (the opposite of the wrench the environment applies to it), at the origin of
        ``f_ext_frame``, in the base frame's axes; adds ``J^T f_ext``.
    friction : bool
        Add :func:`friction_torques`.
    f_ext_frame : str, optional
        The link frame at whose origin ``f_ext`` acts (any of ``model.link_names``); default
        the tip.

    Returns
    -------
    numpy.ndarray, shape (..., n)
        Joint torques [N m] or forces [N].

    """
    (q, qd, qdd), shape = states(model, ('q', q), ('qd', qd), ('qdd', qdd))
    f_tip, tau_ext = _frame_wrench(model, q, f_ext, f_ext_frame)
    tau = _rnea(model, q, qd, qdd, _gravity(model, gravity), f_tip)
    if tau_ext is not None:
        tau += tau_ext
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
    """``C(q, qd) qd + g(q)`` (..., n): RNEA with qdd = 0, the bias of strobing."""
    (q, qd), shape = states(model, ('q', q), ('qd', qd))
    tau = _rnea(model, q, qd, np.zeros_like(q), _gravity(model, gravity), None)
    return tau.reshape(shape + (model.dof,))


# ---- mass matrix and Coriolis -------------------------------------------------------------------

@njit
def crba_work(n):
    """Return the work arrays of :func:`crba_state` for a chain of ``n`` joints."""
    return np.empty((n, 4, 4)), np.empty((n, 6)), np.empty((n, 10)), np.empty(6)


@njit
def crba_state(basis, axis, prismatic, mass, com, inertia, q, work, M):
    """
    Composite-rigid-body algorithm: ``M_ij = S_i . Ic_j S_j`` for ``i <= j``, one state.

    Writes the mass matrix of ``q`` (n,) to ``M`` (n, n); ``work`` is :func:`crba_work`.
    """
    T, S, Ic, F = work
    n = q.shape[0]
    _bodies(basis, axis, prismatic, mass, com, inertia, q, T, S, Ic)
    for j in range(n - 1, -1, -1):
        if j < n - 1:
            for k in range(10):
                Ic[j, k] += Ic[j + 1, k]        # composite inertia of bodies j..n
        inertia_times(Ic[j], S[j], F)
        for i in range(j + 1):
            M[i, j] = M[j, i] = _dot6(S[i], F)


@njit
def _crba_kernel(basis, axis, prismatic, mass, com, inertia, Q):
    """:func:`crba_state` over the states (B, n)."""
    B, n = Q.shape
    M = np.empty((B, n, n))
    work = crba_work(n)
    for b in range(B):
        crba_state(basis, axis, prismatic, mass, com, inertia, Q[b], work, M[b])
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


@njit
def _coriolis_kernel(basis, axis, prismatic, mass, com, inertia, Q, QD, christoffel):
    """
    Coriolis matrices (B, n, n): ``C_kj = S_k . (Ic_m dS_j/dt + Bc_m S_j)``, ``m = max(k, j)``.

    ``Ic_m`` and ``Bc_m`` sum the bodies m..n: inertias ``I_i`` and ``B_i = (V_i x*) I_i``
    (Newton-Euler), or ``B_i = ((V_i x*) I_i - I_i (V_i x) + (I_i V_i) xbar*) / 2``
    (Christoffel), where ``(f xbar*) v = v x* f``. ``Bc_m`` is kept as ``P = sum (V_i x*) I_i``
    and the momentum ``h = sum I_i V_i``; ``P^T = -sum I_i (V_i x)`` and ``xbar*`` is skew.
    """
    B, n = Q.shape
    C = np.empty((B, n, n))
    T, S, Ic = np.empty((n, 4, 4)), np.empty((n, 6)), np.empty((n, 10))
    V, Sd = np.empty((n, 6)), np.empty((n, 6))
    I6, P = np.empty((6, 6)), np.empty((6, 6))
    h, F, a, g, BS, BtS = (np.empty(6), np.empty(6), np.empty(6), np.empty(6), np.empty(6),
                           np.empty(6))
    for b in range(B):
        _bodies(basis, axis, prismatic, mass, com, inertia, Q[b], T, S, Ic)
        for i in range(n):
            for k in range(6):
                V[i, k] = S[i, k] * QD[b, i] + (V[i - 1, k] if i > 0 else 0.0)
            motion_cross6(V[i], S[i], Sd[i])          # dS_i/dt = V_i x S_i
        P[:] = 0.0
        h[:] = 0.0
        for m in range(n - 1, -1, -1):
            # add body m: column k of (V x*) I is V x* (I e_k), and its momentum I V
            inertia_matrix(Ic[m], I6)
            for k in range(6):
                force_cross6(V[m], I6[k], F)
                for r in range(6):
                    P[r, k] += F[r]
            inertia_times(Ic[m], V[m], F)
            for k in range(6):
                h[k] += F[k]
            if m < n - 1:
                for k in range(10):
                    Ic[m, k] += Ic[m + 1, k]
            # BS = Bc_m S_m and BtS = Bc_m^T S_m
            force_cross6(S[m], h, F)                  # (h xbar*) S_m
            for r in range(6):
                PS, PtS = 0.0, 0.0
                for k in range(6):
                    PS += P[r, k] * S[m, k]
                    PtS += P[k, r] * S[m, k]
                if christoffel:
                    BS[r] = 0.5 * (PS + PtS + F[r])
                    BtS[r] = 0.5 * (PS + PtS - F[r])
                else:
                    BS[r], BtS[r] = PS, PtS
            # row m up to the diagonal: S_m . (Ic_m dS_j/dt + Bc_m S_j), Ic_m symmetric
            inertia_times(Ic[m], S[m], a)
            for j in range(m + 1):
                C[b, m, j] = _dot6(a, Sd[j]) + _dot6(BtS, S[j])
            # column m above the diagonal: S_k . (Ic_m dS_m/dt + Bc_m S_m)
            inertia_times(Ic[m], Sd[m], g)
            for k in range(6):
                g[k] += BS[k]
            for k in range(m):
                C[b, k, m] = _dot6(S[k], g)
    return C


def coriolis_matrix(model, q, qd, *, form='christoffel'):
    """
    Coriolis matrix ``C(q, qd)`` (..., n, n): ``C qd`` the Coriolis and centrifugal torques.

    ``C`` is not unique: any matrix with the right ``C qd`` will do for the dynamics. ``form``
    chooses (:class:`CoriolisForm`):

    - ``'christoffel'`` (default): ``c_kj = sum_i 0.5 (dM_kj/dq_i + dM_ki/dq_j - dM_ij/dq_k)
      qd_i``, the Christoffel symbols of the first kind of M (Spong, Hutchinson and
      Vidyasagar, Robot Modeling and Control, 2nd ed., 2020, §6.3); the matrix of textbooks,
      Robotics Toolbox's ``coriolis`` and Pinocchio's ``computeCoriolisMatrix``, and the one
      with ``C(q, x) y = C(q, y) x``. It is the default so that entries compare with those.
    - ``'newton_euler'``: ``C = sum_i J_i^T (I_i dJ_i/dt + (V_i x*) I_i J_i)`` over the body
      Jacobians ``J_i = [S_1 .. S_i]``: the split of the Newton-Euler body forces
      ``I_i A_i + V_i x* I_i V_i``.

    Both have the same ``C qd`` (RNEA's bias without gravity) and ``C + C^T = dM/dt``, so
    ``dM/dt - 2C`` is skew-symmetric. Both are computed in O(n^2) from the composite inertias
    of the CRBA, without derivatives of M: the Christoffel form with the body terms of
    Echeandia and Wensing, "Numerical methods to compute the Coriolis matrix and Christoffel
    symbols for rigid-body systems", J. Comput. Nonlinear Dynam. 16(9), 2021.
    """
    christoffel = choice(form, CoriolisForm, 'form') is CoriolisForm.CHRISTOFFEL
    (q, qd), shape = states(model, ('q', q), ('qd', qd))
    C = _coriolis_kernel(model.derived.local_basis, model.joint_axis, model.is_prismatic,
                         model.mass, model.com, model.inertia, q, qd, christoffel)
    return C.reshape(shape + (model.dof, model.dof))


# ---- forward dynamics ---------------------------------------------------------------------------

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
    T, S, Y, Isp = np.empty((n, 4, 4)), np.empty((n, 6)), np.empty((n, 10)), np.empty((n, 6, 6))
    work = np.empty((6, 6))
    for b in range(B):
        _bodies(basis, axis, prismatic, mass, com, inertia, Q[b], T, S, Y)
        for i in range(n):
            inertia_matrix(Y[i], Isp[i])
        _pivot_scales(S, Isp, work, out[b])
    return out


@njit
def aba_work(n):
    """Return the work arrays of :func:`aba_state` for a chain of ``n`` joints."""
    return (np.empty((n, 4, 4)), np.empty((n, 6)), np.empty((n, 10)), np.empty((n, 6, 6)),
            np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)),
            np.empty(n), np.empty(n), np.empty(n), np.empty((6, 6)), np.empty(6), np.empty(6),
            np.empty(6), np.empty(3))


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
    T, S, Ib, IA, V, c, pA, U, D, u, scale, w66, Sqd, a, t, pt = work
    n = q.shape[0]
    _bodies(basis, axis, prismatic, mass, com, inertia, q, T, S, Ib)
    for i in range(n):
        for k in range(6):
            Sqd[k] = S[i, k] * qd[i]
            V[i, k] = Sqd[k] + (V[i - 1, k] if i > 0 else 0.0)
        motion_cross6(V[i], Sqd, c[i])            # dS_i/dt qd_i
        inertia_times(Ib[i], V[i], t)
        force_cross6(V[i], t, pA[i])              # V x* I V
        inertia_matrix(Ib[i], IA[i])
    _pivot_scales(S, IA, w66, scale)
    # the tip wrench on the environment, as a force at the base origin
    rotate3(T[n - 1], tip, pt, False)
    for k in range(3):
        pt[k] += T[n - 1, k, 3]
    cross3(pt, fext[:3], t[:3])
    for k in range(3):
        pA[n - 1, k] += fext[k]
        pA[n - 1, 3 + k] += fext[3 + k] + t[k]
    for i in range(n - 1, -1, -1):
        matvec6(IA[i], S[i], U[i])
        D[i] = _dot6(S[i], U[i])
        if singular_pivot(D[i], scale[i]):
            return i
        u[i] = tau[i] - _dot6(S[i], pA[i])
        if i > 0:
            # Ia = IA - U U^T / D is added to the parent, and so is pA + Ia c + U u / D
            matvec6(IA[i], c[i], t)
            Uc = _dot6(U[i], c[i])
            for r in range(6):
                pA[i - 1, r] += pA[i, r] + t[r] + U[i, r] * (u[i] - Uc) / D[i]
                Ur = U[i, r] / D[i]
                for k in range(r, 6):
                    x = IA[i, r, k] - Ur * U[i, k]       # symmetric: computed once
                    IA[i - 1, r, k] += x
                    if k > r:
                        IA[i - 1, k, r] += x
    for k in range(3):
        a[k] = a0[k]
        a[3 + k] = 0.0
    for i in range(n):
        for k in range(6):
            a[k] += c[i, k]
        qdd[i] = (u[i] - _dot6(U[i], a)) / D[i]
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
                     method='aba', f_ext_frame=None):
    """
    Joint accelerations ``qdd`` (..., n) under torques ``tau`` (..., n).

    ``qdd = M^-1 (tau - C qd - g - J^T f_ext - friction)`` (Turney, Mudge and Lee, Connection
    between formulations of robot arm dynamics with applications to simulation and control,
    University of Michigan RSD-TR-4-82, 1981, eq 9.1). Methods (:class:`ForwardDynamicsMethod`):

    - ``'aba'``: articulated-body algorithm, O(n) (default);
    - ``'crba'``: M by the composite-rigid-body algorithm, Cholesky solve;
    - ``'strobe'``: the route of Turney et al. 1981, §8-9: M strobed column by column through
      RNEA with unit accelerations (no velocity, no gravity), the bias ``C + G`` from RNEA with
      qdd = 0, Cholesky solve.

    Raises ``SingularMassMatrixError`` when M is singular: every route applies the same test,
    :func:`robot_dynamics.linalg.singular_pivot`, to its pivots (ABA's articulated inertias
    ``D_i``, or the Cholesky pivots) with the same scales ``|S_i| . (sum_{j >= i} |I_j|) |S_i|``
    (units of ``M_ii``), so the verdict does not depend on the model's units. Other arguments
    as in :func:`inverse_dynamics` (``f_ext`` at ``f_ext_frame``: the arm's wrench on the
    environment).
    """
    method = choice(method, ForwardDynamicsMethod, 'method')
    (q, qd, tau), shape = states(model, ('q', q), ('qd', qd), ('tau', tau))
    g = _gravity(model, gravity)
    f_ext, tau_ext = _frame_wrench(model, q, f_ext, f_ext_frame)
    if tau_ext is not None:
        tau = tau - tau_ext
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
    _, _, V, _, H = _motion(model, q, qd)
    return 0.5 * np.einsum('bik,bik->b', V, H).reshape(shape)


def potential_energy(model, q, *, gravity=None):
    """Gravitational potential energy ``-sum_i m_i g . c_i`` [J] (...); zero at the base origin."""
    (q,), shape = states(model, ('q', q))
    _, _, _, Y, _ = _motion(model, q, np.zeros_like(q))
    # Y[..., 1:4] is each body's first moment m_i c_i in the base frame
    energy = -np.einsum('bik,k->b', Y[..., 1:4], _gravity(model, gravity))
    return energy.reshape(shape)


def inertial_parameters(model):
    """
    Return the 10 inertial parameters of every body, stacked (10 n,).

    Per body, in its own frame (the joint frame): ``m``, ``m c`` (3), and the inertia about the
    frame origin ``ixx, ixy, iyy, ixz, iyz, izz`` (Pinocchio's order, :func:`body_inertia` at
    the identity pose): the parameters in which the dynamics is linear (Spong, Hutchinson and
    Vidyasagar 2020, §6.5.3).
    """
    own_frames = np.tile(np.eye(4), (model.dof, 1, 1))
    return _inertias(own_frames, model.mass, model.com, model.inertia).ravel()


@njit
def _cross(a0, a1, a2, b0, b1, b2):
    """Return the cross product of ``(a0, a1, a2)`` and ``(b0, b1, b2)`` as three scalars."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit
def _body_wrenches(w, wd, vd, T, out):
    """
    Write the wrenches (10, 6) of a body's ten unit inertial parameters, base frame and origin.

    A body's force and moment about its origin, in its frame, are linear in its ten parameters
    (mass ``m``, first moment ``h = m c``, inertia ``I_o`` about the origin,
    :data:`INERTIAL_PARAMETER_NAMES`): ``f = m vd + wd x h + w x (w x h)`` and
    ``n = I_o wd + w x (I_o w) + h x vd`` for its angular velocity ``w``, angular acceleration
    ``wd`` and origin acceleration ``vd`` (3,) in its frame (Atkeson, An and Hollerbach,
    "Estimation of inertial parameters of manipulator loads and links", IJRR 5(3), 1986).
    Row ``p`` is the term of parameter ``p`` alone, ``[R f; R n + o x R f]`` for the body pose
    ``T = [R, o; 0, 1]``.
    """
    w0, w1, w2 = w[0], w[1], w[2]
    a0, a1, a2 = wd[0], wd[1], wd[2]
    v0, v1, v2 = vd[0], vd[1], vd[2]
    ww = w0 * w0 + w1 * w1 + w2 * w2
    out[:] = 0.0
    out[0, 0], out[0, 1], out[0, 2] = v0, v1, v2
    # first moments h = e_x, e_y, e_z: wd x e + w (w . e) - e |w|^2, and e x vd
    out[1, 0], out[1, 1], out[1, 2] = w0 * w0 - ww, a2 + w1 * w0, -a1 + w2 * w0
    out[1, 4], out[1, 5] = -v2, v1
    out[2, 0], out[2, 1], out[2, 2] = -a2 + w0 * w1, w1 * w1 - ww, a0 + w2 * w1
    out[2, 3], out[2, 5] = v2, -v0
    out[3, 0], out[3, 1], out[3, 2] = a1 + w0 * w2, -a0 + w1 * w2, w2 * w2 - ww
    out[3, 3], out[3, 4] = -v1, v0
    # inertia entries ixx, ixy, iyy, ixz, iyz, izz: E wd + w x (E w), E symmetric unit
    out[4, 3:] = _cross(w0, w1, w2, w0, 0.0, 0.0)
    out[4, 3] += a0
    out[5, 3:] = _cross(w0, w1, w2, w1, w0, 0.0)
    out[5, 3] += a1
    out[5, 4] += a0
    out[6, 3:] = _cross(w0, w1, w2, 0.0, w1, 0.0)
    out[6, 4] += a1
    out[7, 3:] = _cross(w0, w1, w2, w2, 0.0, w0)
    out[7, 3] += a2
    out[7, 5] += a0
    out[8, 3:] = _cross(w0, w1, w2, 0.0, w2, w1)
    out[8, 4] += a2
    out[8, 5] += a1
    out[9, 3:] = _cross(w0, w1, w2, 0.0, 0.0, w2)
    out[9, 5] += a2
    o0, o1, o2 = T[0, 3], T[1, 3], T[2, 3]
    for p in range(10):
        f0, f1, f2 = out[p, 0], out[p, 1], out[p, 2]
        n0, n1, n2 = out[p, 3], out[p, 4], out[p, 5]
        g0 = T[0, 0] * f0 + T[0, 1] * f1 + T[0, 2] * f2
        g1 = T[1, 0] * f0 + T[1, 1] * f1 + T[1, 2] * f2
        g2 = T[2, 0] * f0 + T[2, 1] * f1 + T[2, 2] * f2
        c0, c1, c2 = _cross(o0, o1, o2, g0, g1, g2)
        out[p, 0], out[p, 1], out[p, 2] = g0, g1, g2
        out[p, 3] = T[0, 0] * n0 + T[0, 1] * n1 + T[0, 2] * n2 + c0
        out[p, 4] = T[1, 0] * n0 + T[1, 1] * n1 + T[1, 2] * n2 + c1
        out[p, 5] = T[2, 0] * n0 + T[2, 1] * n1 + T[2, 2] * n2 + c2


@njit
def _regressor_kernel(basis, axis, prismatic, Q, QD, QDD, A0):
    """
    Regressors (B, n, 10 n) at the states ``Q, QD, QDD`` (B, n), base accelerations ``A0`` (B, 3).

    Column ``10 i + p`` holds the joint torques of unit parameter ``p`` of body i: its wrench
    (:func:`_body_wrenches` after :func:`_outward`) projected on the motion subspace ``S_k``
    (base frame, base origin) of each joint ``k <= i``.
    """
    B, n = Q.shape
    Y = np.zeros((B, n, 10 * n))
    L, T = np.empty((n, 4, 4)), np.empty((n, 4, 4))
    W, WD, VD, S = np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 6))
    t, u, x, y = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    F = np.empty((10, 6))
    for b in range(B):
        _outward(basis, axis, prismatic, Q[b], QD[b], QDD[b], A0[b], L, W, WD, VD, t, u, x, y)
        chain(basis, Q[b], T)
        for i in range(n):
            motion_subspace(T[i], axis[i], prismatic[i], S[i])
            _body_wrenches(W[i], WD[i], VD[i], T[i], F)
            for k in range(i + 1):
                for p in range(10):
                    Y[b, k, 10 * i + p] = _dot6(S[k], F[p])
    return Y


def _regressor(model, q, qd, qdd, a0):
    """Run the regressor kernel on checked (B, n) states with base accelerations (B, 3)."""
    A0 = np.empty((q.shape[0], 3))
    A0[:] = a0
    return _regressor_kernel(model.derived.local_basis, model.joint_axis, model.is_prismatic,
                             q, qd, qdd, A0)


def regressor(model, q, qd, qdd, *, gravity=None):
    """
    Regressor ``Y(q, qd, qdd)`` (..., n, 10 n): ``Y @ inertial_parameters() == inverse_dynamics``.

    The dynamics is linear in each body's ten inertial parameters (Spong, Hutchinson and
    Vidyasagar 2020, §6.5.3): column ``10 i + p`` holds the joint torques that parameter ``p``
    of body i alone produces, from one outward Newton-Euler pass and the body's force and moment
    projected on the joint axes before it (Atkeson, An and Hollerbach 1986). Joint friction is
    not part of it.
    """
    (q, qd, qdd), shape = states(model, ('q', q), ('qd', qd), ('qdd', qdd))
    Y = _regressor(model, q, qd, qdd, -_gravity(model, gravity))
    return Y.reshape(shape + (model.dof, 10 * model.dof))


def slotine_li_regressor(model, q, qd, qd_r, qdd_r, *, gravity=None):
    """
    Regressor ``Y(q, qd, qd_r, qdd_r)`` (..., n, 10 n) of adaptive control, two velocities.

    ``Y @ inertial_parameters() == M(q) qdd_r + C(q, qd) qd_r + g(q)`` with the Christoffel
    Coriolis matrix (:func:`coriolis_matrix`, ``dM/dt - 2C`` skew), the form of Slotine and Li,
    "On the adaptive control of robot manipulators", IJRR 6(3), 1987 (Spong, Hutchinson and
    Vidyasagar 2020, §6.5 give its properties). The Christoffel ``C(q, x) y`` is symmetric and
    bilinear in ``(x, y)`` and ``C(q, x) x`` is RNEA's velocity term, so
    ``C(q, qd) qd_r = (c(qd + qd_r) - c(qd - qd_r)) / 4`` with ``c(v) = C(q, v) v``: one batch
    of three regressor states, ``(q, 0, qdd_r)`` with gravity and ``(q, qd +- qd_r, 0)``
    without. Arguments (..., n): positions [rad or m], measured and reference velocities, the
    reference acceleration.
    """
    (q, qd, qd_r, qdd_r), shape = states(model, ('q', q), ('qd', qd), ('qd_r', qd_r),
                                         ('qdd_r', qdd_r))
    B, zero = q.shape[0], np.zeros_like(q)
    a0 = np.zeros((3 * B, 3))
    a0[:B] = -_gravity(model, gravity)
    Y = _regressor(model, np.concatenate((q, q, q)), np.concatenate((zero, qd + qd_r, qd - qd_r)),
                   np.concatenate((qdd_r, zero, zero)), a0)
    Y = Y[:B] + 0.25 * (Y[B:2 * B] - Y[2 * B:])
    return Y.reshape(shape + (model.dof, 10 * model.dof))
