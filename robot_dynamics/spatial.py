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
Rotations and rigid transforms (vectorised); the conventions of spatial vectors.

Conventions used everywhere in robot_dynamics:

- Units are SI: rad, m.
- ``T_a_b`` is the 4x4 pose of frame b expressed in frame a, so ``T_a_c = T_a_b @ T_b_c``.
- Roll-pitch-yaw ``(r, p, y)`` means ``R = Rz(y) @ Ry(p) @ Rx(r)`` (URDF, fixed XYZ angles);
  ZYX Euler ``(a, b, c)`` means ``R = Rz(a) @ Ry(b) @ Rx(c)``: the same matrix, angles in the
  opposite order (Hayes, Introduction to Robotics, Carleton University lecture notes, 2008,
  §2.9.1 eq 2.6, 2.7).
- Quaternions are ``(x, y, z, w)``, scalar last, as geometry_msgs/Quaternion; returned with w >= 0.
- Spatial vectors are ``[linear; angular]``: twists ``[vx, vy, vz, wx, wy, wz]``, wrenches
  ``[fx, fy, fz, nx, ny, nz]`` (as Pinocchio, Robotics Toolbox ``jacob0`` and ROS Twist/Wrench);
  their cross products are the compiled kernels' (:func:`robot_dynamics.kinematics.motion_cross6`,
  :func:`robot_dynamics.kinematics.force_cross6`).

Every function accepts leading batch dimensions: a rotation is ``(..., 3, 3)``.
"""

import math

import numpy as np

from ._jit import kernel_array, njit
from .errors import as_array, InputError

_I3 = np.eye(3)


def _skew_basis():
    # column j of S(e_k) is e_k x e_j
    E = np.zeros((3, 3, 3))
    for k in range(3):
        E[k] = np.cross(np.eye(3)[k], np.eye(3)).T
    return E.reshape(3, 9)


# skew() is linear in its argument: one matmul with this constant basis is much cheaper in
# numpy than assembling the matrices element by element.
_SKEW_BASIS = _skew_basis()


def skew(v):
    """Return the cross-product matrix ``S(v)`` with ``S(v) @ u == v x u``; shape (..., 3, 3)."""
    v = np.asarray(v, dtype=float)
    return (v @ _SKEW_BASIS).reshape(v.shape[:-1] + (3, 3))


def cross(a, b):
    """Cross product over the last axis, ``(..., 3) x (..., 3)``."""
    return (skew(a) @ np.asarray(b, dtype=float)[..., None])[..., 0]


def rot_x(angle):
    """Elementary rotation about x by ``angle`` [rad]; shape (..., 3, 3)."""
    return axis_angle_to_matrix([1.0, 0.0, 0.0], angle)


def rot_y(angle):
    """Elementary rotation about y by ``angle`` [rad]; shape (..., 3, 3)."""
    return axis_angle_to_matrix([0.0, 1.0, 0.0], angle)


def rot_z(angle):
    """Elementary rotation about z by ``angle`` [rad]; shape (..., 3, 3)."""
    return axis_angle_to_matrix([0.0, 0.0, 1.0], angle)


def axis_angle_to_matrix(axis, angle):
    """
    Rotate by ``angle`` [rad] about the unit ``axis`` (Rodrigues; Hayes 2008, §2.9.1).

    ``axis`` (..., 3) and ``angle`` (...) broadcast together; the axis is normalised.
    """
    axis = np.asarray(axis, dtype=float)
    norm = np.linalg.norm(axis, axis=-1, keepdims=True)
    if np.any(norm < 1e-12):
        raise InputError('axis_angle_to_matrix: axis has zero length')
    k = axis / norm
    angle = np.asarray(angle, dtype=float)[..., None, None]
    K = skew(k)
    return _I3 + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def rotvec_to_matrix(rotvec):
    """Exponential map: rotation vector ``theta * k`` (..., 3) to a rotation (..., 3, 3)."""
    rotvec = np.asarray(rotvec, dtype=float)
    theta = np.linalg.norm(rotvec, axis=-1)[..., None, None]
    K = skew(rotvec)
    small = theta < 1e-8
    t = np.where(small, 1.0, theta)
    a = np.where(small, 1.0 - theta ** 2 / 6.0, np.sin(t) / t)
    b = np.where(small, 0.5 - theta ** 2 / 24.0, (1.0 - np.cos(t)) / t ** 2)
    return _I3 + a * K + b * (K @ K)


def matrix_to_quaternion(R):
    """
    Convert rotations (..., 3, 3) to unit quaternions ``(x, y, z, w)`` with ``w >= 0``.

    Shepperd's method: the largest of the four squared components is taken from the diagonal,
    so the result stays accurate near 180 degrees where ``w`` vanishes.
    """
    R = np.asarray(R, dtype=float)
    r00, r11, r22 = R[..., 0, 0], R[..., 1, 1], R[..., 2, 2]
    # 4*x^2, 4*y^2, 4*z^2, 4*w^2 from the diagonal: pick the largest for the division below.
    d = np.stack((1 + r00 - r11 - r22, 1 - r00 + r11 - r22, 1 - r00 - r11 + r22,
                  1 + r00 + r11 + r22), -1)
    i = np.argmax(d, axis=-1)
    s = np.sqrt(np.maximum(np.take_along_axis(d, i[..., None], -1)[..., 0], 1e-300))
    r01, r02, r10, r12, r20, r21 = (R[..., 0, 1], R[..., 0, 2], R[..., 1, 0], R[..., 1, 2],
                                    R[..., 2, 0], R[..., 2, 1])
    cand = np.stack((
        np.stack((s * s, r01 + r10, r02 + r20, r21 - r12), -1),
        np.stack((r01 + r10, s * s, r12 + r21, r02 - r20), -1),
        np.stack((r02 + r20, r12 + r21, s * s, r10 - r01), -1),
        np.stack((r21 - r12, r02 - r20, r10 - r01, s * s), -1)), -2)
    q = np.take_along_axis(cand, i[..., None, None], -2)[..., 0, :] / (2.0 * s[..., None])
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., 3:4] < 0.0, -q, q)


def quaternion_to_matrix(quat):
    """Convert quaternions ``(x, y, z, w)`` (..., 4), normalised first, to rotations."""
    q = np.asarray(quat, dtype=float)
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    if np.any(norm < 1e-12):
        raise InputError('quaternion_to_matrix: quaternion has zero norm')
    x, y, z, w = np.moveaxis(q / norm, -1, 0)
    return np.stack((
        np.stack((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)), -1),
        np.stack((2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)), -1),
        np.stack((2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)), -1)), -2)


#: Below this cosine of the angle the skew part of R is too small to give the axis accurately,
#: and the axis comes from the symmetric part instead.
_LOG_SYMMETRIC_COS = -0.5


@njit
def rotation_log(R, out):
    """
    Write the rotation vector ``theta k`` of one rotation ``R`` (3, 3) to ``out`` (3,).

    ``sin(theta) k`` is the skew part of R and ``cos(theta) = (trace R - 1) / 2``, so
    ``theta = atan2(sin, cos)`` is accurate at small angles. Near 180 degrees the skew part
    vanishes and the axis comes from ``(R + R^T) / 2 = c I + (1 - c) k k^T`` (its largest
    diagonal entry), with the sign of the skew part. Returns theta [rad] in [0, pi].
    """
    c = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    vx = 0.5 * (R[2, 1] - R[1, 2])
    vy = 0.5 * (R[0, 2] - R[2, 0])
    vz = 0.5 * (R[1, 0] - R[0, 1])
    s = math.sqrt(vx * vx + vy * vy + vz * vz)
    angle = math.atan2(s, c)
    if c > _LOG_SYMMETRIC_COS:
        f = angle / s if s > 0.0 else 1.0
        out[0] = f * vx
        out[1] = f * vy
        out[2] = f * vz
        return angle
    d = 1.0 - c
    i = 0
    for k in range(1, 3):
        if R[k, k] > R[i, i]:
            i = k
    ki = math.sqrt(max((R[i, i] - c) / d, 0.0))
    sign = 1.0
    axis = np.empty(3)
    for j in range(3):
        axis[j] = ki if j == i else 0.5 * (R[i, j] + R[j, i]) / (d * ki)
    if axis[0] * vx + axis[1] * vy + axis[2] * vz < 0.0:
        sign = -1.0
    for j in range(3):
        out[j] = sign * angle * axis[j]
    return angle


@njit
def _rotation_logs(R):
    out = np.empty((R.shape[0], 3))
    for b in range(R.shape[0]):
        rotation_log(R[b], out[b])
    return out


def matrix_to_rotvec(R):
    """Logarithm map: rotations (..., 3, 3) to rotation vectors ``theta k``, theta in [0, pi]."""
    R = np.asarray(R, dtype=float)
    return _rotation_logs(kernel_array(R.reshape(-1, 3, 3))).reshape(R.shape[:-2] + (3,))


def euler_zyx_to_matrix(angles):
    """ZYX Euler angles ``(a, b, c)`` (..., 3) [rad] to ``Rz(a) @ Ry(b) @ Rx(c)``."""
    angles = np.asarray(angles, dtype=float)
    return rot_z(angles[..., 0]) @ rot_y(angles[..., 1]) @ rot_x(angles[..., 2])


def matrix_to_euler_zyx(R):
    """
    Recover ZYX Euler angles ``(a, b, c)`` with ``b`` in [-pi/2, pi/2] (Hayes 2008, §2.9.1).

    At gimbal lock (``|b| = pi/2``) only ``a -+ c`` is determined; ``c = 0`` is returned there
    and ``euler_zyx_to_matrix`` of the result still reproduces ``R``.
    """
    R = np.asarray(R, dtype=float)
    r00, r01, r02 = R[..., 0, 0], R[..., 0, 1], R[..., 0, 2]
    r10, r11, r12 = R[..., 1, 0], R[..., 1, 1], R[..., 1, 2]
    lock = np.hypot(r00, r10) < 1e-14   # cos(b) below round-off: only a -+ c is determined
    a = np.where(lock, np.arctan2(-r01, r11), np.arctan2(r10, r00))
    ca, sa = np.cos(a), np.sin(a)
    # Rz(a)^T R = Ry(b) Rx(c): its first two rows are well conditioned even near the lock
    b = np.arctan2(-R[..., 2, 0], ca * r00 + sa * r10)
    c = np.arctan2(sa * r02 - ca * r12, ca * r11 - sa * r01)
    return np.stack((a, b, c), -1)


def rpy_to_matrix(rpy):
    """Roll-pitch-yaw ``(r, p, y)`` (..., 3) [rad] to ``Rz(y) @ Ry(p) @ Rx(r)`` (URDF)."""
    return euler_zyx_to_matrix(np.asarray(rpy, dtype=float)[..., ::-1])


def matrix_to_rpy(R):
    """Rotation (..., 3, 3) to roll-pitch-yaw ``(r, p, y)``; see :func:`matrix_to_euler_zyx`."""
    return matrix_to_euler_zyx(R)[..., ::-1]


def transform(R=None, p=None):
    """Assemble 4x4 transforms from rotations (..., 3, 3) and translations (..., 3)."""
    R = _I3 if R is None else np.asarray(R, dtype=float)
    p = np.zeros(3) if p is None else np.asarray(p, dtype=float)
    shape = np.broadcast_shapes(R.shape[:-2], p.shape[:-1])
    T = np.zeros(shape + (4, 4))
    T[..., :3, :3] = R
    T[..., :3, 3] = p
    T[..., 3, 3] = 1.0
    return T


def xyz_rpy_to_transform(xyz, rpy):
    """Build ``T`` from a translation ``xyz`` [m] and roll-pitch-yaw ``rpy`` [rad] (URDF)."""
    return transform(rpy_to_matrix(rpy), xyz)


def check_transform(T, name='target', tol=1e-6):
    """
    Return ``T`` as float64 after checking it is a finite rigid transform (..., 4, 4).

    Raises ``InputError`` naming the problem if the rotation is not orthonormal with det +1
    (within ``tol``) or the last row is not ``[0, 0, 0, 1]``.
    """
    T = as_array(T, (4, 4), name)
    R = T[..., :3, :3]
    ortho = np.abs(np.swapaxes(R, -1, -2) @ R - _I3).max(initial=0.0)
    if ortho > tol or np.any(np.linalg.det(R) < 0.0):
        raise InputError(f'{name}: rotation part is not a proper rotation '
                         f'(|R^T R - I| = {ortho:.3g}, det must be +1)')
    if np.abs(T[..., 3, :] - [0.0, 0.0, 0.0, 1.0]).max(initial=0.0) > tol:
        raise InputError(f'{name}: last row must be [0, 0, 0, 1], got {T[..., 3, :]}')
    return T


def quaternion_slerp(q0, q1, s):
    """
    Spherical linear interpolation between unit quaternions ``(x, y, z, w)``.

    ``s`` (...) in [0, 1]; takes the shorter arc. Returns (..., 4).
    """
    q0 = np.asarray(q0, dtype=float)
    q1 = np.asarray(q1, dtype=float)
    s = np.asarray(s, dtype=float)[..., None]
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(dot < 0.0, -q1, q1)
    dot = np.abs(dot)
    omega = np.arccos(np.clip(dot, -1.0, 1.0))
    so = np.sin(omega)
    near = so < 1e-9
    safe = np.where(near, 1.0, so)
    w0 = np.where(near, 1.0 - s, np.sin((1.0 - s) * omega) / safe)
    w1 = np.where(near, s, np.sin(s * omega) / safe)
    q = w0 * q0 + w1 * q1
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def pose_error(T_current, T_target):
    """
    Return the 6-vector error ``[dp; dtheta]`` from ``T_current`` to ``T_target`` (base frame).

    ``dp = p_target - p_current`` [m]; ``dtheta`` [rad] is the rotation vector of
    ``R_target @ R_current^T``, so a twist of ``[dp; dtheta]`` for unit time moves one onto the
    other to first order.
    """
    dp = T_target[..., :3, 3] - T_current[..., :3, 3]
    dR = T_target[..., :3, :3] @ np.swapaxes(T_current[..., :3, :3], -1, -2)
    return np.concatenate((dp, matrix_to_rotvec(dR)), axis=-1)
