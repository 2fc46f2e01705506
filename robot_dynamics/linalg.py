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
Small dense solves shared by the solvers: Cholesky with one singularity test, damped least squares.

The matrices here are at most a few joints or task rows across, so the solves are compiled
loops (numba) rather than LAPACK calls, whose per-call overhead would dominate; the kernels that
need them inside their own loops (the IK iteration, the dynamics) call the compiled functions
directly.

**Singular pivots.** A symmetric positive definite matrix is treated as singular when a pivot of
its factorisation (a Schur complement: the Cholesky ``d_j^2``, or the articulated inertia
``D_i = S_i . IA_i S_i`` of the articulated-body algorithm) is at most
``SINGULAR_PIVOT_RATIO`` times its *scale*: the magnitude of the terms the pivot was computed
from, in the pivot's own units. For a Gram matrix ``J J^T + lambda I`` that is its diagonal
entry; for a mass matrix it is ``|S_i| . (sum_j |I_j|) |S_i|`` (see
:func:`robot_dynamics.dynamics.forward_dynamics`), since the entries of M themselves can
cancel to rounding noise. Each pivot is compared with a quantity of its own units (kg m^2 for a
revolute joint, kg for a prismatic one), so the test does not depend on the units of the model:
an arm in grams and millimetres passes exactly when the same arm in kilograms and metres does,
while a pivot lost to cancellation (relative size ~1e-16) is caught.
"""

import numpy as np

from ._jit import kernel_array, njit
from .errors import InputError

#: A pivot at most this fraction of its scale is zero: well above the rounding error of the
#: sums that form it (~1e-16 per term), far below any physical ratio (a joint whose motion is
#: that close to a combination of the others' is degenerate for every practical purpose).
SINGULAR_PIVOT_RATIO = 1e-12


@njit
def singular_pivot(pivot, scale):
    """Return True when ``pivot`` is at most ``SINGULAR_PIVOT_RATIO * scale`` (or nan)."""
    return not pivot > SINGULAR_PIVOT_RATIO * scale


@njit
def cholesky_solve(A, X, m, scale):
    """
    Solve ``A Y = X`` in place for the leading ``m`` x ``m`` block of the SPD matrix ``A``.

    Only the lower triangle of ``A`` is read; it is overwritten by the factor L. ``X`` (>= m, k)
    receives the solution in its first m rows. ``scale`` (m,) holds the scale of each pivot
    (see the module docstring). Returns -1, or the index of the first singular pivot.
    """
    for j in range(m):
        s = A[j, j]
        for k in range(j):
            s -= A[j, k] * A[j, k]
        if singular_pivot(s, scale[j]):
            return j
        d = np.sqrt(s)
        A[j, j] = d
        for i in range(j + 1, m):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d
    for c in range(X.shape[1]):
        for i in range(m):
            s = X[i, c]
            for k in range(i):
                s -= A[i, k] * X[k, c]
            X[i, c] = s / A[i, i]
        for i in range(m - 1, -1, -1):
            s = X[i, c]
            for k in range(i + 1, m):
                s -= A[k, i] * X[k, c]
            X[i, c] = s / A[i, i]
    return -1


@njit
def damped_solve(J, R, lam, free, A, Y, D, X):
    """
    Damped least squares ``X = J^T (J J^T + lam I)^-1 R`` (n, k) for ``J`` (m, n), ``R`` (m, k).

    Columns of joints without ``free[j]`` are left out (their rows of X are 0). The m x m
    system is solved when m <= n, else the equal ``(J^T J + lam I)^-1 J^T R`` (n x n), so
    ``lam = 0`` gives the minimum-norm solution of a full-row-rank J and the least-squares
    solution of a full-column-rank one. ``A`` (>= s, >= s), ``Y`` (>= s, k) and ``D`` (>= s),
    with s = min(m, n), are work arrays. Returns False when the system is singular.
    """
    m, n = J.shape
    k = R.shape[1]
    if m <= n:
        for i in range(m):
            for c in range(i + 1):
                s = 0.0
                for j in range(n):
                    if free[j]:
                        s += J[i, j] * J[c, j]
                A[i, c] = s
            A[i, i] += lam
            D[i] = A[i, i]
            for c in range(k):
                Y[i, c] = R[i, c]
        if cholesky_solve(A, Y, m, D) >= 0:
            return False
        for j in range(n):
            for c in range(k):
                s = 0.0
                if free[j]:
                    for i in range(m):
                        s += J[i, j] * Y[i, c]
                X[j, c] = s
        return True
    for i in range(n):
        for c in range(i + 1):
            s = 0.0
            if free[i] and free[c]:
                for r in range(m):
                    s += J[r, i] * J[r, c]
            A[i, c] = s
        A[i, i] += lam
        D[i] = A[i, i]
        for c in range(k):
            s = 0.0
            if free[i]:
                for r in range(m):
                    s += J[r, i] * R[r, c]
            X[i, c] = s
    return cholesky_solve(A, X, n, D) < 0


@njit
def _damped_kernel(J, R, lam):
    B, m, n = J.shape
    k = R.shape[2]
    s = min(m, n)
    X = np.empty((B, n, k))
    A, Y, D = np.empty((s, s)), np.empty((s, k)), np.empty(s)
    free = np.ones(n, dtype=np.bool_)
    for b in range(B):
        if not damped_solve(J[b], R[b], lam, free, A, Y, D, X[b]):
            return X, b
    return X, -1


def damped_least_squares(J, rhs, damping):
    """
    Damped least-squares solutions ``J^T (J J^T + damping^2 I)^-1 rhs`` (..., n, k).

    Nakamura and Hanafusa, "Inverse kinematic solutions with singularity robustness for robot
    manipulator control", 1986; Wampler, "Manipulator inverse kinematic solutions based on
    vector formulations and damped least-squares methods", 1986. ``J`` (..., m, n) and ``rhs``
    (..., m, k) broadcast over their leading dimensions; ``damping`` (>= 0) is in the units of
    the singular values of J. Raises ``InputError`` when a system is singular (``damping`` 0
    where J loses rank).
    """
    J, rhs = np.asarray(J, dtype=float), np.asarray(rhs, dtype=float)
    batch = np.broadcast_shapes(J.shape[:-2], rhs.shape[:-2])
    m, n = J.shape[-2:]
    k = rhs.shape[-1]
    Jb = kernel_array(np.broadcast_to(J, batch + (m, n)).reshape(-1, m, n))
    Rb = kernel_array(np.broadcast_to(rhs, batch + (m, k)).reshape(-1, m, k))
    X, bad = _damped_kernel(Jb, Rb, float(damping) ** 2)
    if bad >= 0:
        raise InputError(f'damped least squares: the {m} x {n} Jacobian (batch index {bad}) '
                         f'loses rank and the damping is {damping:g}; use a damping > 0')
    return X.reshape(batch + (n, k))


@njit
def _spd_kernel(A, b, scale):
    B, n = b.shape
    x = np.empty((B, n, 1))
    L = np.empty((n, n))
    for i in range(B):
        L[:] = A[i]
        x[i, :, 0] = b[i]
        bad = cholesky_solve(L, x[i], n, scale[i])
        if bad >= 0:
            return x[:, :, 0], i, bad
    return x[:, :, 0], -1, -1


def spd_solve(A, b, scale):
    """
    Solve ``A x = b`` for a batch of SPD matrices ``A`` (B, n, n), ``b`` (B, n).

    ``scale`` (B, n) is each pivot's scale (module docstring). Returns ``(x, (i, j))``: the
    solutions (B, n), and the batch index and pivot of the first singular system, or
    ``(-1, -1)``.
    """
    x, i, j = _spd_kernel(kernel_array(A), kernel_array(b), kernel_array(scale))
    return x, (i, j)
