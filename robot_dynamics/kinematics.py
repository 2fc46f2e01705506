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
Forward kinematics, Jacobians and singularity measures (vectorised over states).

Every public function takes one state ``q`` of shape ``(n,)`` or a batch ``(..., n)`` and
returns results with the same leading shape. Frames: everything is expressed in the base frame
(``model.base_link``). Twists and Jacobian rows are ordered ``vx vy vz wx wy wz``.

The joint motion subspaces ``S`` (one 6-vector per joint, base frame, taken at the base origin:
``[o x z; z]`` for a revolute joint on the axis ``z`` through ``o``, ``[z; 0]`` for a prismatic
one; :func:`motion_subspace`) are the common ground of kinematics and dynamics: a body's twist
is the sum of ``S_j qd_j`` over the joints before it (the velocity propagation of Hayes,
Introduction to Robotics, Carleton University lecture notes, 2008, eq 3.21-3.26, written in the
base frame). The compiled helpers here (:func:`chain`, :func:`motion_subspace`, the small
vector products) are shared by the kinematics, dynamics and IK kernels.
"""

import numpy as np

from ._jit import kernel_array, njit
from .errors import as_joint_array, InputError, ShapeError
from .spatial import matrix_to_rpy, skew

_SINGULAR_COS = 1e-9
#: The task rows ``vx vy vz wx wy wz`` as axes of the tip, by name.
AXES = ('x', 'y', 'z', 'rx', 'ry', 'rz')
#: Random configurations at which :func:`task_mask` takes the Jacobian's rank.
TASK_SAMPLES = 8
#: Singular value, relative to the norm of the Jacobian, below which rows are dependent.
_RANK_TOLERANCE = 1e-9


def constants(model):
    """
    Precompute the constant arrays of a model that fk and the Jacobians use.

    A joint's local transform ``T_{body i-1}_{body i}`` is affine in ``(1, sin q, cos q, q)``:
    ``P @ [[I + K^2 + sin(q) K - cos(q) K^2, 0], [0, 1]]`` for a revolute joint (Rodrigues, K the
    axis' cross-product matrix) and ``P @ [[I, q a], [0, 1]]`` for a prismatic one. The four
    coefficient matrices are stacked in ``local_basis`` (n, 4, 16).
    """
    n = model.dof
    K = skew(model.joint_axis)
    K2 = K @ K
    rev = ~model.is_prismatic
    D = np.zeros((n, 4, 4, 4))
    D[:, 0, 3, 3] = 1.0
    D[:, 0, :3, :3] = np.where(rev[:, None, None], np.eye(3) + K2, np.eye(3))
    D[:, 1, :3, :3] = np.where(rev[:, None, None], K, 0.0)
    D[:, 2, :3, :3] = np.where(rev[:, None, None], -K2, 0.0)
    D[:, 3, :3, 3] = np.where(rev[:, None], 0.0, model.joint_axis)
    D = model.joint_placement[:, None] @ D
    frames = [model.frames[link] for link in model.link_names]
    bodies = np.array([body for body, _ in frames], dtype=int)
    # read-only like the model's frames, which fk passes to the same kernel
    T_body_link = np.array([T for _, T in frames])
    T_body_link.setflags(write=False)
    return {'local_basis': D.reshape(n, 4, 16), 'link_frames': (bodies, T_body_link)}


def states(model, *arrays):
    """
    Check joint arrays ``(name, x)`` of one shape (..., n); return them as (B, n) and (...).

    The (B, n) arrays are ready for the compiled kernels (C-contiguous, writeable float64).
    """
    shape = None
    out = []
    for name, x in arrays:
        x = as_joint_array(x, model.dof, name)
        if shape is None:
            shape = x.shape
        elif x.shape != shape:
            raise ShapeError(f'{name}: expected shape {shape} like {arrays[0][0]}, got {x.shape}')
        out.append(kernel_array(x.reshape(-1, model.dof)))
    return out, shape[:-1]


@njit
def local_transform(basis, i, qi, L):
    """Fill ``L`` (4, 4) with joint i's transform ``T_{body i-1}_{body i}`` at ``q_i = qi``."""
    s, c = np.sin(qi), np.cos(qi)
    for r in range(3):
        for k in range(4):
            e = 4 * r + k
            L[r, k] = basis[i, 0, e] + s * basis[i, 1, e] + c * basis[i, 2, e] \
                + qi * basis[i, 3, e]
    L[3, 0] = L[3, 1] = L[3, 2] = 0.0
    L[3, 3] = 1.0


@njit
def chain(basis, q, T):
    """Fill ``T`` (n, 4, 4) with the body poses of one state ``q`` (n,), in place."""
    for i in range(q.shape[0]):
        local_transform(basis, i, q[i], T[i])
        if i > 0:
            # T_i = T_{i-1} L_i column by column: column k of L_i is read before it is written,
            # so no temporary; the last row of L_i is (0, 0, 0, 1)
            for k in range(4):
                l0, l1, l2 = T[i, 0, k], T[i, 1, k], T[i, 2, k]
                for r in range(3):
                    T[i, r, k] = T[i - 1, r, 0] * l0 + T[i - 1, r, 1] * l1 \
                        + T[i - 1, r, 2] * l2 + (T[i - 1, r, 3] if k == 3 else 0.0)


@njit
def compose(A, B, out):
    """``out = A B`` for rigid transforms (4, 4) (``out`` must not alias them)."""
    for r in range(3):
        for k in range(4):
            out[r, k] = A[r, 0] * B[0, k] + A[r, 1] * B[1, k] + A[r, 2] * B[2, k] \
                + (A[r, 3] if k == 3 else 0.0)
    out[3, 0] = out[3, 1] = out[3, 2] = 0.0
    out[3, 3] = 1.0


@njit
def _link_poses_kernel(basis, bodies, T_body_link, Q):
    """Poses (B, L, 4, 4) of the links at ``T_body_link`` (L, 4, 4) on ``bodies`` (L,)."""
    B, n = Q.shape
    L = bodies.shape[0]
    last = 0
    for k in range(L):
        last = max(last, bodies[k])
    T = np.empty((n, 4, 4))
    out = np.empty((B, L, 4, 4))
    for b in range(B):
        chain(basis, Q[b, :last], T)          # the bodies up to the last one asked for
        for k in range(L):
            if bodies[k] == 0:
                out[b, k] = T_body_link[k]
            else:
                compose(T[bodies[k] - 1], T_body_link[k], out[b, k])
    return out


@njit
def cross3(a, b, out):
    """``out = a x b`` for 3-vectors (``out`` must not alias ``a`` or ``b``)."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit
def rotate3(R, v, out, transpose):
    """``out = R v`` (or ``R^T v`` with ``transpose``) for a 3x3 ``R``."""
    for r in range(3):
        if transpose:
            out[r] = R[0, r] * v[0] + R[1, r] * v[1] + R[2, r] * v[2]
        else:
            out[r] = R[r, 0] * v[0] + R[r, 1] * v[1] + R[r, 2] * v[2]


@njit
def matvec6(A, x, out):
    """``out = A x`` for a 6x6 ``A`` (no temporary array)."""
    for r in range(6):
        out[r] = A[r, 0] * x[0] + A[r, 1] * x[1] + A[r, 2] * x[2] + A[r, 3] * x[3] \
            + A[r, 4] * x[4] + A[r, 5] * x[5]


@njit
def motion_cross6(v, m, out):
    """``out = v x m`` for 6-vectors ``[linear; angular]`` (``out`` must not alias them)."""
    out[0] = v[4] * m[2] - v[5] * m[1] + (v[1] * m[5] - v[2] * m[4])
    out[1] = v[5] * m[0] - v[3] * m[2] + (v[2] * m[3] - v[0] * m[5])
    out[2] = v[3] * m[1] - v[4] * m[0] + (v[0] * m[4] - v[1] * m[3])
    cross3(v[3:], m[3:], out[3:])


@njit
def force_cross6(v, f, out):
    """
    ``out = v x* f`` for a twist ``v`` and a wrench ``f``: ``[w x f0; w x n + v0 x f0]``.

    The dual of :func:`motion_cross6`: ``(v x* f) . m = -f . (v x m)`` (Featherstone 2008, §2.9).
    """
    out[0] = v[4] * f[2] - v[5] * f[1]
    out[1] = v[5] * f[0] - v[3] * f[2]
    out[2] = v[3] * f[1] - v[4] * f[0]
    out[3] = v[4] * f[5] - v[5] * f[4] + (v[1] * f[2] - v[2] * f[1])
    out[4] = v[5] * f[3] - v[3] * f[5] + (v[2] * f[0] - v[0] * f[2])
    out[5] = v[3] * f[4] - v[4] * f[3] + (v[0] * f[1] - v[1] * f[0])


@njit
def motion_subspace(T, axis, prismatic, S):
    """
    Write a joint's motion subspace ``S`` (6,) in the base frame, at the base origin.

    ``T`` (4, 4) is the pose of the body the joint moves (its axis passes through the body
    origin ``o``), ``axis`` the unit axis in that body's frame: ``S = [o x z; z]`` for a revolute
    joint on the world axis ``z = R axis``, ``[z; 0]`` for a prismatic one.
    """
    rotate3(T, axis, S[3:], False)
    if prismatic:
        for k in range(3):
            S[k], S[3 + k] = S[3 + k], 0.0
    else:
        cross3(T[:3, 3], S[3:], S[:3])


@njit
def pose_jacobian_state(basis, axis, prismatic, body, T_body_link, q, T, pose, J, S):
    """
    Fill the body poses, link pose, Jacobian and joint subspaces of one state ``q``.

    Outputs: ``T`` (n, 4, 4), ``pose`` (4, 4) of the link, its geometric Jacobian ``J`` (6, n)
    and the subspaces ``S`` (n, 6) of the joints before it (:func:`motion_subspace`). Column j
    of J is ``[S_j,lin + S_j,ang x p; S_j,ang]`` at the link point p, i.e. ``[z_j x (p - o_j);
    z_j]`` or ``[z_j; 0]`` (Hayes, Introduction to Robotics, Carleton University lecture notes,
    2008, §3.4.2). ``body`` is 1-based.

    """
    chain(basis, q, T)
    compose(T[body - 1], T_body_link, pose)
    px, py, pz = pose[0, 3], pose[1, 3], pose[2, 3]
    for j in range(body):
        motion_subspace(T[j], axis[j], prismatic[j], S[j])
        J[0, j] = S[j, 0] + (S[j, 4] * pz - S[j, 5] * py)
        J[1, j] = S[j, 1] + (S[j, 5] * px - S[j, 3] * pz)
        J[2, j] = S[j, 2] + (S[j, 3] * py - S[j, 4] * px)
        for r in range(3, 6):
            J[r, j] = S[j, r]
    for j in range(body, J.shape[1]):
        for r in range(6):
            J[r, j] = 0.0


@njit
def _pose_jacobian(basis, axis, prismatic, body, T_body_link, Q, QD):
    """
    Pose (B, 4, 4), Jacobian (B, 6, n) and, if ``QD`` has rows, its derivative of a link.

    The derivative uses ``dS_j/dt = V_j x S_j`` with the twists ``V_j = sum_{k<=j} S_k qd_k``
    and ``dp/dt = v_b + w_b x p`` for the link point.
    """
    B, n = Q.shape
    with_dot = QD.shape[0] > 0
    T = np.empty((n, 4, 4))
    pose = np.empty((B, 4, 4))
    J = np.empty((B, 6, n))
    Jd = np.zeros((B if with_dot else 0, 6, n))
    S, Sd, V, pd = np.empty((n, 6)), np.empty((n, 6)), np.empty(6), np.empty(3)
    for b in range(B):
        pose_jacobian_state(basis, axis, prismatic, body, T_body_link, Q[b], T, pose[b], J[b], S)
        if not with_dot:
            continue
        V[:] = 0.0
        for j in range(body):
            for k in range(6):
                V[k] += S[j, k] * QD[b, j]
            motion_cross6(V, S[j], Sd[j])
        p = pose[b, :3, 3]
        cross3(V[3:], p, pd)          # V is now body b's twist
        for k in range(3):
            pd[k] += V[k]
        for j in range(body):
            # d/dt of [S_lin + S_ang x p; S_ang]
            w, wd = S[j, 3:], Sd[j, 3:]
            Jd[b, 0, j] = Sd[j, 0] + (wd[1] * p[2] - wd[2] * p[1]) + (w[1] * pd[2] - w[2] * pd[1])
            Jd[b, 1, j] = Sd[j, 1] + (wd[2] * p[0] - wd[0] * p[2]) + (w[2] * pd[0] - w[0] * pd[2])
            Jd[b, 2, j] = Sd[j, 2] + (wd[0] * p[1] - wd[1] * p[0]) + (w[0] * pd[1] - w[1] * pd[0])
            for r in range(3, 6):
                Jd[b, r, j] = Sd[j, r]
    return pose, J, Jd


def _pose_and_jacobian(model, q, link=None, qd=None):
    """
    Return the pose (B, 4, 4) and Jacobian (B, 6, n) of ``link`` for checked ``q`` (B, n).

    With checked ``qd`` (B, n), also return the Jacobian's time derivative (B, 6, n). The fused
    fast path of :func:`fk`, :func:`jacobian` and :func:`jacobian_dot` (one compiled pass over
    the chain), for iterative solvers and control loops that checked their input once.
    """
    body, T_body_link = model.link_body(link)
    B = q.shape[0]
    if body == 0:
        pose = np.broadcast_to(T_body_link, (B, 4, 4)).copy()
        zero = np.zeros((B, 6, model.dof))
        return (pose, zero) if qd is None else (pose, zero, zero.copy())
    QD = np.zeros((0, model.dof)) if qd is None else kernel_array(qd)
    pose, J, Jd = _pose_jacobian(model.derived.local_basis, model.joint_axis, model.is_prismatic,
                                 body, T_body_link, kernel_array(q), QD)
    return (pose, J) if qd is None else (pose, J, Jd)


def fk(model, q, link=None):
    """
    Pose of ``link`` (default: the tip) in the base frame.

    Parameters
    ----------
    model : RobotModel
        The robot.
    q : array_like, shape (..., n)
        Joint positions [rad or m].
    link : str, optional
        Any name in ``model.link_names``.

    Returns
    -------
    numpy.ndarray, shape (..., 4, 4)
        ``T_base_link``.

    """
    body, T_body_link = model.link_body(link)
    (q2,), shape = states(model, ('q', q))
    T = _link_poses_kernel(model.derived.local_basis, np.array([body]), T_body_link[None], q2)
    return T.reshape(shape + (4, 4))


def link_poses(model, q):
    """
    Poses of every link of ``model.link_names`` in the base frame, from one pass over the chain.

    Parameters
    ----------
    model : RobotModel
        The robot.
    q : array_like, shape (..., n)
        Joint positions [rad or m].

    Returns
    -------
    numpy.ndarray, shape (..., L, 4, 4)
        ``T_base_link`` for the ``L`` links, in the order of ``model.link_names``.

    """
    bodies, T_body_link = model.derived.link_frames
    return frame_poses(model, q, bodies, T_body_link)


def frame_poses(model, q, bodies, T_body_frame):
    """
    Poses of frames fixed to the bodies, in the base frame, from one pass over the chain.

    ``T_base_frame = T_base_body(q) @ T_body_frame`` for each frame: the one kernel behind
    :func:`link_poses`, :func:`joint_frames` and the scene's visuals.

    Parameters
    ----------
    model : RobotModel
        The robot.
    q : array_like, shape (..., n)
        Joint positions [rad or m].
    bodies : array_like of int, shape (F,)
        The body each frame is fixed to (0: the base, i: the body moved by joint i).
    T_body_frame : array_like, shape (F, 4, 4)
        Each frame's pose in its body's frame.

    Returns
    -------
    numpy.ndarray, shape (..., F, 4, 4)
        ``T_base_frame`` for the ``F`` frames.

    """
    (q2,), shape = states(model, ('q', q))
    bodies = np.asarray(bodies, dtype=np.int64).reshape(-1)
    T_body_frame = np.ascontiguousarray(T_body_frame, dtype=float).reshape(-1, 4, 4)
    if len(bodies) != len(T_body_frame) or np.any((bodies < 0) | (bodies > model.dof)):
        raise InputError(f'frame_poses: {len(bodies)} bodies in 0..{model.dof} and as many '
                         f'transforms needed, got bodies {bodies.tolist()} and '
                         f'{len(T_body_frame)} transforms')
    poses = _link_poses_kernel(model.derived.local_basis, bodies, T_body_frame, q2)
    return poses.reshape(shape + (len(bodies), 4, 4))


def joint_frames(model, q):
    """
    Poses of the joint frames in the base frame: where each joint sits and how it is oriented.

    Joint i's frame is fixed to body i-1 (``T_base_body(i-1) @ joint_placement[i]``): its origin
    lies on the joint axis, which is ``model.joint_axis[i]`` in that frame. For drawing the arm
    (markers), and for tools that need the axes in the base frame.

    Parameters
    ----------
    model : RobotModel
        The robot.
    q : array_like, shape (..., n)
        Joint positions [rad or m].

    Returns
    -------
    numpy.ndarray, shape (..., n, 4, 4)
        ``T_base_joint`` for joints 1..n.

    """
    # joint i is placed on body i-1 as a link frame would be: the link-pose pass serves both
    return frame_poses(model, q, np.arange(model.dof), model.joint_placement)


def jacobian(model, q, link=None):
    """
    Geometric Jacobian of ``link`` (default: tip) at its origin, in the base frame.

    Column j maps ``qd_j`` to the link's twist ``[v; w]`` (rows vx vy vz wx wy wz):
    ``[z_j x (p - o_j); z_j]`` for a revolute joint, ``[z_j; 0]`` for a prismatic one
    (Hayes 2008, §3.4.2); columns of joints after the link are zero. Shape (..., 6, n).
    """
    (q2,), shape = states(model, ('q', q))
    return _pose_and_jacobian(model, q2, link)[1].reshape(shape + (6, model.dof))


def jacobian_dot(model, q, qd, link=None):
    """
    Time derivative of :func:`jacobian` along the joint velocity ``qd`` (..., 6, n).

    With body twists ``V_j = sum_{k<=j} S_k qd_k``, each subspace moves as
    ``dS_j/dt = V_j x S_j`` and the link point as ``dp/dt = v0_b + w_b x p``, so that
    ``d(twist)/dt = J qdd + Jdot qd``.
    """
    (q2, qd2), shape = states(model, ('q', q), ('qd', qd))
    return _pose_and_jacobian(model, q2, link, qd2)[2].reshape(shape + (6, model.dof))


def rpy_rate_matrix(rpy):
    """
    Map ``E`` (..., 3, 3) from roll-pitch-yaw rates to the angular velocity: ``w = E @ rpy_dot``.

    For ``R = Rz(y) Ry(p) Rx(r)``: ``E = [Rz(y) Ry(p) e_x, Rz(y) e_y, e_z]``; singular at
    ``cos(p) = 0`` (Hayes 2008, eq 3.27-3.28, for the Z-Y-X set).
    """
    rpy = np.asarray(rpy, dtype=float)
    p, y = rpy[..., 1], rpy[..., 2]
    cp, sp, cy, sy = np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    z = np.zeros_like(p)
    return np.stack((np.stack((cy * cp, -sy, z), -1),
                     np.stack((sy * cp, cy, z), -1),
                     np.stack((-sp, z, z + 1.0), -1)), -2)


def analytic_jacobian(model, q, link=None):
    """
    Analytic Jacobian of ``[x, y, z, roll, pitch, yaw]`` of ``link`` (..., 6, n).

    ``J_a = blkdiag(I, E^-1) J`` with ``E`` from :func:`rpy_rate_matrix`. Raises ``InputError``
    at the representation singularity ``|pitch| = pi/2`` (gimbal lock).
    """
    T = fk(model, q, link)
    J = jacobian(model, q, link)
    rpy = matrix_to_rpy(T[..., :3, :3])
    if np.any(np.abs(np.cos(rpy[..., 1])) < _SINGULAR_COS):
        raise InputError('analytic_jacobian: roll-pitch-yaw is singular at pitch = +-pi/2 '
                         '(gimbal lock); use the geometric jacobian there')
    Ja = J.copy()
    Ja[..., 3:, :] = np.linalg.solve(rpy_rate_matrix(rpy), J[..., 3:, :])
    return Ja


def _task_singular_values(model, q, link, mask):
    mask = model.task_mask if mask is None else np.asarray(mask)
    if mask.shape != (6,):
        raise ShapeError(f'mask: expected six 0/1 weights, got shape {mask.shape}')
    J = jacobian(model, q, link)[..., mask.astype(bool), :]
    sv = np.linalg.svd(J, compute_uv=False)
    return sv, J


def manipulability(model, q, link=None, mask=None):
    """
    Yoshikawa manipulability over the task rows ``mask`` (default ``model.task_mask``).

    ``sqrt(det(J J^T))`` for a full-row-rank ``J``; in general the product of the
    ``min(rows, n)`` singular values, which is zero exactly at a singularity. Shape (...).
    """
    sv, _ = _task_singular_values(model, q, link, mask)
    return np.prod(sv, axis=-1)


def condition_number(model, q, link=None, mask=None):
    """Ratio of the largest to the smallest task singular value (inf when singular)."""
    sv, _ = _task_singular_values(model, q, link, mask)
    smallest = sv[..., -1]
    return np.where(smallest > 0.0, sv[..., 0] / np.where(smallest > 0.0, smallest, 1.0), np.inf)


def jacobian_determinant(model, q, link=None, mask=None):
    """Return the determinant of the square task Jacobian, e.g. -r1 r2 sin q2 (SCARA)."""
    mask = model.task_mask if mask is None else np.asarray(mask)
    rows = int(np.count_nonzero(mask))
    if rows != model.dof:
        raise ShapeError(f'jacobian_determinant: the task Jacobian has {rows} rows for '
                         f'{model.dof} joints; pass a mask with {model.dof} rows selected')
    return np.linalg.det(jacobian(model, q, link)[..., mask.astype(bool), :])


def is_singular(model, q, link=None, mask=None, tol=1e-6):
    """Return True where the smallest task singular value is below ``tol`` (rank lost)."""
    sv, _ = _task_singular_values(model, q, link, mask)
    return sv[..., -1] < tol


def task_mask(model, samples=TASK_SAMPLES, seed=0):
    """
    Return the task rows an arm controls: six 0/1 weights on ``vx vy vz wx wy wz``.

    The one rule for IK, the reach check and the task-space laws: the rows of the tip's
    Jacobian that its joints move independently (at ``samples`` random configurations within
    the limits, ``+-pi`` where unlimited), taken in row order so that position comes first. A
    planar 2R in the x-z plane controls x and z; a planar 3R in the x-y plane x, y and yaw; a
    SCARA x, y and z (its yaw would be a fourth row for three joints); a 6-joint arm all six.
    """
    J = _sampled_jacobian(model, samples, seed)
    rows = []
    for r in range(6):
        if _rank(J, rows + [r]) > len(rows):
            rows.append(r)
    mask = np.zeros(6)
    mask[rows] = 1.0
    return mask


def check_task_mask(model, mask, samples=TASK_SAMPLES, seed=0):
    """
    Raise ``InputError`` unless the arm moves its tip along the rows of ``mask`` independently.

    ``mask`` six 0/1 weights (:data:`AXES` order); the error names the first axis the joints
    cannot move and the axes they can, or the axes that depend on each other (a SCARA's x, y, z
    and yaw: three joints). Sampled as :func:`task_mask`.
    """
    J = _sampled_jacobian(model, samples, seed)
    movable = [r for r in range(6) if _rank(J, [r])]
    rows = [int(r) for r in np.flatnonzero(mask)]
    for r in rows:
        if r not in movable:
            raise InputError(f'mask: the joints cannot move the tip along {AXES[r]!r}; they move '
                             f'it along {mask_axes(np.isin(np.arange(6), movable))}')
    rank = _rank(J, rows)
    if rank < len(rows):
        raise InputError(f'mask: {model.dof} joints move the tip along only {rank} of '
                         f'{mask_axes(mask)} independently (by default they control '
                         f'{mask_axes(model.task_mask)})')


def mask_axes(mask):
    """Return the names (:data:`AXES`) of the rows of ``mask`` (six 0/1 weights) that are set."""
    return [AXES[r] for r in np.flatnonzero(np.asarray(mask, dtype=float))]


def _sampled_jacobian(model, samples, seed):
    """Return the tip's Jacobian (samples, 6, n) at random configurations within the limits."""
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    return jacobian(model, np.random.default_rng(seed).uniform(lo, hi, (samples, model.dof)))


def _rank(J, rows):
    """Return the largest rank of the ``rows`` of the sampled Jacobians ``J`` (samples, 6, n)."""
    if not rows:
        return 0
    s = np.linalg.svd(J[:, rows], compute_uv=False)
    # relative to the whole J's size: a row of rounding noise alone is no rank
    scale = np.linalg.norm(J, axis=(1, 2))[:, None]
    return int((s > _RANK_TOLERANCE * scale).sum(axis=1).max())
