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
The Paden-Kahan subproblems and the planar 2R arm, compiled.

Murray, Li and Sastry, "A Mathematical Introduction to Robotic Manipulation", 1994, §3.2:
rotations about unit axes ``w`` (3,) through the origin (callers subtract a point on the axis).
Each function returns every solution (one or two) as an array, and where the data admit none
(out of reach), the nearest angles: the closed forms verify every candidate through the
forward kinematics anyway. Where an angle is arbitrary (a singular configuration), the
caller's ``default`` is returned.
"""

import math

import numpy as np

from .._jit import njit

#: Tolerance [m, or rad for directions] of the structure tests on the joint axes (parallel,
#: intersecting) that choose a closed form, and below which a lever arm counts as zero.
STRUCTURE_TOL = 1e-9


@njit
def triple(a, b, c):
    """Scalar triple product ``a . (b x c)``."""
    return (a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2])
            + a[2] * (b[0] * c[1] - b[1] * c[0]))


@njit
def rotate(w, angle, v):
    """Rotate ``v`` by ``angle`` about the unit axis ``w`` (Rodrigues)."""
    c, s = math.cos(angle), math.sin(angle)
    k = (1.0 - c) * np.dot(w, v)
    out = np.empty(3)
    out[0] = c * v[0] + s * (w[1] * v[2] - w[2] * v[1]) + k * w[0]
    out[1] = c * v[1] + s * (w[2] * v[0] - w[0] * v[2]) + k * w[1]
    out[2] = c * v[2] + s * (w[0] * v[1] - w[1] * v[0]) + k * w[2]
    return out


@njit
def _normal_products(w, a, b):
    """Return ``|a'|^2, |b'|^2, a'.b'`` for the parts ``a' = a - (w.a) w``, ``b'`` normal to w."""
    wa, wb = 0.0, 0.0
    for k in range(3):
        wa += w[k] * a[k]
        wb += w[k] * b[k]
    aa, bb, ab = 0.0, 0.0, 0.0
    for k in range(3):
        ak, bk = a[k] - wa * w[k], b[k] - wb * w[k]
        aa += ak * ak
        bb += bk * bk
        ab += ak * bk
    return aa, bb, ab


@njit
def pk1(w, a, b, default):
    """
    Angle rotating ``a`` onto ``b`` about the unit axis ``w`` (subproblem 1).

    Only the components normal to ``w`` matter (and ``w . (a' x b') = w . (a x b)``); if either
    vanishes, any angle works and ``default`` is returned.
    """
    aa, bb, ab = _normal_products(w, a, b)
    if aa < STRUCTURE_TOL ** 2 or bb < STRUCTURE_TOL ** 2:
        return default
    return math.atan2(triple(w, a, b), ab)


@njit
def pk2(w1, w2, p, q, default1):
    """
    Solve ``R(w1, t1) R(w2, t2) p = q`` (subproblem 2): rows ``(t1, t2)``, shape (1 or 2, 2).

    ``w1`` and ``w2`` are unit axes, not parallel. When ``q`` cannot be reached (``|p| != |q|``
    or outside the cone) the nearest angles are returned.
    """
    c12 = np.dot(w1, w2)
    den = 1.0 - c12 * c12
    alpha = (np.dot(w1, q) - c12 * np.dot(w2, p)) / den
    beta = (np.dot(w2, p) - c12 * np.dot(w1, q)) / den
    x = np.cross(w1, w2)
    g2 = (np.dot(p, p) - alpha * alpha - beta * beta - 2.0 * alpha * beta * c12) / np.dot(x, x)
    count = 1 if g2 <= 0.0 else 2
    g = math.sqrt(max(g2, 0.0))
    out = np.empty((count, 2))
    z = np.empty(3)
    for i in range(count):
        gi = g if i == 0 else -g
        for k in range(3):
            z[k] = alpha * w1[k] + beta * w2[k] + gi * x[k]
        out[i, 0] = pk1(w1, z, q, default1)
        out[i, 1] = pk1(w2, p, z, 0.0)
    return out


@njit
def pk3(w, r, p, q, delta):
    """
    Angles rotating ``p`` about the axis (``w`` through ``r``) to distance ``delta`` from ``q``.

    Subproblem 3: one or two angles (the nearest one when out of reach).
    """
    u, v = p - r, q - r
    uu, vv, uv = _normal_products(w, u, v)
    nu, nv = math.sqrt(uu), math.sqrt(vv)
    theta0 = math.atan2(triple(w, u, v), uv)
    if nu < STRUCTURE_TOL or nv < STRUCTURE_TOL:
        return np.array([theta0])
    d2 = delta * delta - np.dot(w, p - q) ** 2
    psi = math.acos(min(1.0, max(-1.0, (nu * nu + nv * nv - d2) / (2.0 * nu * nv))))
    return np.array([theta0 + psi, theta0 - psi])


@njit
def plane_basis(n):
    """Return unit vectors ``u``, ``v`` with ``(u, v, n)`` right-handed."""
    t = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(n, t)
    u = u / math.sqrt(np.dot(u, u))
    return u, np.cross(n, u)


@njit
def angle_2d(a, b):
    """Signed angle from the 2-D vector ``a`` to ``b``."""
    return math.atan2(a[0] * b[1] - a[1] * b[0], a[0] * b[0] + a[1] * b[1])


@njit
def solve_2r(c1, c2, p0, x, default1):
    """
    Planar 2R in 2-D plane coordinates: ``c1 + R(t1) (c2 - c1 + R(t2) (p0 - c2)) = x``.

    Law of cosines for ``t2`` (Craig, "Introduction to Robotics", 3rd ed., 2005, §4.4:
    ``cos t2 = (|x - c1|^2 - l1^2 - l2^2) / (2 l1 l2)``, ``sin t2 = +-sqrt(1 - cos^2)``), then
    ``t1`` turns the elbow vector onto ``x``. Out of reach the cosine is
    clamped: the arm stretched or folded towards ``x``, the nearest point of the workspace.
    Returns rows ``(t1, t2)``, shape (2, 2) (equal rows on the boundary).
    """
    a = c2 - c1
    b = p0 - c2
    d = x - c1
    l1, l2 = math.hypot(a[0], a[1]), math.hypot(b[0], b[1])
    cos2 = (d[0] * d[0] + d[1] * d[1] - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)
    psi = math.acos(min(1.0, max(-1.0, cos2)))
    base = math.atan2(a[1], a[0]) - math.atan2(b[1], b[0])
    out = np.empty((2, 2))
    for i in range(2):
        t2 = base + psi if i == 0 else base - psi
        c, s = math.cos(t2), math.sin(t2)
        elbow = np.array([a[0] + c * b[0] - s * b[1], a[1] + s * b[0] + c * b[1]])
        t1 = default1 if math.hypot(d[0], d[1]) < STRUCTURE_TOL else angle_2d(elbow, d)
        out[i, 0] = t1
        out[i, 1] = t2
    return out
