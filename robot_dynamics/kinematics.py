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
one) are the common ground of kinematics and dynamics: a body's twist is the sum of
``S_j qd_j`` over the joints before it (seed 003 eq 3.21-3.26 written in the base frame).
"""

import types

import numpy as np

from .errors import as_joint_array, InputError, ShapeError
from .spatial import cross, matrix_to_rpy, motion_cross, skew

_SINGULAR_COS = 1e-9


def derived_constants(model):
    """Precompute the per-model constant arrays the algorithms use (computed once per model)."""
    K = skew(model.joint_axis)
    PR = model.joint_placement[:, :3, :3]
    c = types.SimpleNamespace(
        K=K, K2=K @ K,
        PR=PR, Pp=model.joint_placement[:, :3, 3],
        PR_axis=(PR @ model.joint_axis[:, :, None])[..., 0],
        revolute=(~model.is_prismatic).astype(float),
        prismatic=model.is_prismatic.astype(float),
    )
    for arr in vars(c).values():
        arr.setflags(write=False)
    return c


def flatten(model, q, name='q'):
    """Check ``q`` (..., n) and return it as (B, n) with the original batch shape."""
    q = as_joint_array(q, model.dof, name)
    return q.reshape(-1, model.dof), q.shape[:-1]


def body_poses(model, q):
    """
    Return ``T_base_body`` for bodies 1..n, shape (B, n, 4, 4), from checked ``q`` (B, n).

    Each joint's local transform (placement times joint motion) is formed for all joints at
    once; only the chain product is a loop over joints.
    """
    c = model.derived
    theta = q * c.revolute
    s = np.sin(theta)[..., None, None]
    co = np.cos(theta)[..., None, None]
    L = np.empty(q.shape + (4, 4))
    L[..., :3, :3] = c.PR @ (np.eye(3) + s * c.K + (1.0 - co) * c.K2)
    L[..., :3, 3] = c.Pp + (q * c.prismatic)[..., None] * c.PR_axis
    L[..., 3, :] = (0.0, 0.0, 0.0, 1.0)
    for i in range(1, model.dof):
        L[:, i] = L[:, i - 1] @ L[:, i]
    return L


def motion_subspaces(model, T):
    """Joint motion subspaces ``S`` (B, n, 6) in the base frame at the base origin."""
    z = (T[..., :3, :3] @ model.joint_axis[:, :, None])[..., 0]
    o = T[..., :3, 3]
    rev = model.derived.revolute[:, None]
    lin = np.where(model.is_prismatic[:, None], z, cross(o, z))
    return np.concatenate((lin, z * rev), axis=-1)


def _link_pose(model, T, body, T_body_link):
    if body == 0:
        return np.broadcast_to(T_body_link, T.shape[:1] + (4, 4)).copy()
    return T[:, body - 1] @ T_body_link


def _point_jacobian(model, S, body, p):
    """Geometric Jacobian (B, 6, n) of the body point ``p`` (B, 3) from subspaces ``S``."""
    lin = S[..., :3] + cross(S[..., 3:], p[:, None, :])
    J = np.concatenate((lin, S[..., 3:]), axis=-1)
    J[:, body:, :] = 0.0
    return np.swapaxes(J, -1, -2)


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
    q2, shape = flatten(model, q)
    return _link_pose(model, body_poses(model, q2), body, T_body_link).reshape(shape + (4, 4))


def jacobian(model, q, link=None):
    """
    Geometric Jacobian of ``link`` (default: tip) at its origin, in the base frame.

    Column j maps ``qd_j`` to the link's twist ``[v; w]`` (rows vx vy vz wx wy wz):
    ``[z_j x (p - o_j); z_j]`` for a revolute joint, ``[z_j; 0]`` for a prismatic one
    (seed 003 §3.4.2); columns of joints after the link are zero. Shape (..., 6, n).
    """
    body, T_body_link = model.link_body(link)
    q2, shape = flatten(model, q)
    T = body_poses(model, q2)
    p = _link_pose(model, T, body, T_body_link)[:, :3, 3]
    return _point_jacobian(model, motion_subspaces(model, T), body, p).reshape(
        shape + (6, model.dof))


def jacobian_dot(model, q, qd, link=None):
    """
    Time derivative of :func:`jacobian` along the joint velocity ``qd`` (..., 6, n).

    With body twists ``V_j = sum_{k<=j} S_k qd_k``, each subspace moves as
    ``dS_j/dt = V_j x S_j`` and the link point as ``dp/dt = v0_b + w_b x p``, so that
    ``d(twist)/dt = J qdd + Jdot qd``.
    """
    body, T_body_link = model.link_body(link)
    q2, shape = flatten(model, q)
    qd2 = as_joint_array(qd, model.dof, 'qd').reshape(-1, model.dof)
    if qd2.shape != q2.shape:
        raise ShapeError(f'qd: expected the shape of q {q2.shape}, got {qd2.shape}')
    T = body_poses(model, q2)
    S = motion_subspaces(model, T)
    V = np.cumsum(S * qd2[..., None], axis=1)
    Sd = motion_cross(V, S)
    p = _link_pose(model, T, body, T_body_link)[:, :3, 3]
    if body == 0:
        pd = np.zeros_like(p)
    else:
        Vb = V[:, body - 1]
        pd = Vb[:, :3] + cross(Vb[:, 3:], p)
    lin = Sd[..., :3] + cross(Sd[..., 3:], p[:, None, :]) + cross(S[..., 3:], pd[:, None, :])
    Jd = np.concatenate((lin, Sd[..., 3:]), axis=-1)
    Jd[:, body:, :] = 0.0
    return np.swapaxes(Jd, -1, -2).reshape(shape + (6, model.dof))


def rpy_rate_matrix(rpy):
    """
    Map ``E`` (..., 3, 3) from roll-pitch-yaw rates to the angular velocity: ``w = E @ rpy_dot``.

    For ``R = Rz(y) Ry(p) Rx(r)``: ``E = [Rz(y) Ry(p) e_x, Rz(y) e_y, e_z]``; singular at
    ``cos(p) = 0`` (seed 003 eq 3.27-3.28 for the Z-Y-X set).
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
    """Determinant of the square task Jacobian (mask rows == n), e.g. -r1 r2 sin q2 (SCARA)."""
    mask = model.task_mask if mask is None else np.asarray(mask)
    rows = int(np.count_nonzero(mask))
    if rows != model.dof:
        raise ShapeError(f'jacobian_determinant: the task Jacobian has {rows} rows for '
                         f'{model.dof} joints; pass a mask with {model.dof} rows selected')
    return np.linalg.det(jacobian(model, q, link)[..., mask.astype(bool), :])


def is_singular(model, q, link=None, mask=None, tol=1e-6):
    """True where the smallest task singular value is below ``tol`` (or rank is lost)."""
    sv, _ = _task_singular_values(model, q, link, mask)
    return sv[..., -1] < tol


def reachable_task_mask(model, samples=8, seed=0):
    """
    Return the default task mask (six 0/1 weights) of a model.

    All ones for n >= 6. Otherwise the three position rows, plus the angular rows the joints
    can move (e.g. yaw of a planar or SCARA arm) when together they need no more than n joints.
    """
    if model.dof >= 6:
        return np.ones(6)
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    q = rng.uniform(lo, hi, (samples, model.dof))
    J = jacobian(model, q)
    moving = np.abs(J).max(axis=(0, 2)) > 1e-9
    mask = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    if moving[:3].sum() + moving[3:].sum() <= model.dof:
        mask[3:] = moving[3:]
    return mask
