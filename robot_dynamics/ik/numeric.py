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
Numeric inverse kinematics for any chain: compiled Levenberg-Marquardt with random restarts.

The iteration (see :mod:`robot_dynamics.ik` for the damping law and the active set) is one
numba kernel: numpy's per-call overhead would dominate a 6x6 problem. The Python driver hands
it batches of restart configurations until success, the timeout or the restart cap.
"""

import time

import numpy as np

from .chain import pose_residual
from .._jit import njit
from ..errors import InputError
from ..kinematics import pose_jacobian_state
from ..limits import nearest_turns, project, TWO_PI
from ..linalg import damped_solve

#: Seed of the restart generator when the caller gives none (reproducible restarts).
DEFAULT_RNG_SEED = 0
#: Number of restart configurations handed to the compiled solver per call.
_RESTART_CHUNK = 16


@njit
def _lm_kernel(basis, axis, prismatic, nb, tip, target, starts, lower, upper, wrap, weights,
               tol_p2, tol_o2, max_iterations, iteration_budget, damping, damping_floor,
               stall_iterations, stall_ratio):
    """
    Levenberg-Marquardt from each row of ``starts`` in turn until one meets the tolerances.

    Returns ``(q, success, iterations, attempts, best_cost)``; on failure ``q`` is the
    configuration of smallest weighted error seen.
    """
    n = starts.shape[1]
    T = np.empty((nb, 4, 4))
    pose = np.empty((4, 4))
    J = np.empty((6, nb))
    S = np.empty((nb, 6))
    e = np.empty(6)
    rows = np.empty(6, dtype=np.int64)
    m = 0
    for r in range(6):
        if weights[r] > 0.0:
            rows[m] = r
            m += 1
    sw = np.sqrt(weights)
    size = min(m, nb)                    # m x m system, or nb x nb
    A, Y, D = np.empty((size, size)), np.empty((size, 1)), np.empty(size)
    Jw = np.empty((m, nb))
    ew = np.empty((m, 1))
    dq = np.empty((nb, 1))
    free = np.ones(nb, dtype=np.bool_)
    # a joint whose range spans a full turn never blocks: it wraps round (and a joint without
    # limits is never at one)
    never_blocks = np.zeros(nb, dtype=np.bool_)
    for j in range(nb):
        never_blocks[j] = wrap[j] and upper[j] - lower[j] >= TWO_PI
    q = np.empty(n)
    best_q = starts[0].copy()
    best_cost = np.inf
    total = 0
    attempts = 0
    for a in range(starts.shape[0]):
        attempts += 1
        q[:] = starts[a]
        project(q, lower, upper, wrap)
        attempt_best = np.inf
        since = 0
        for _ in range(max_iterations):
            pose_jacobian_state(basis, axis, prismatic, nb, tip, q, T, pose, J, S)
            p2, o2, cost = pose_residual(pose, target, weights, e)
            if cost < best_cost:
                best_cost = cost
                best_q[:] = q
            if p2 <= tol_p2 and o2 <= tol_o2:
                return q, True, total, attempts, cost
            if total >= iteration_budget:
                return best_q, False, total, attempts, best_cost
            total += 1
            if cost < attempt_best * (1.0 - stall_ratio):
                attempt_best = cost
                since = 0
            else:
                since += 1
                if since >= stall_iterations:
                    break
            lam = damping * cost + damping_floor
            for i in range(m):
                r = rows[i]
                ew[i, 0] = sw[r] * e[r]
                for j in range(nb):
                    Jw[i, j] = sw[r] * J[r, j]
            free[:] = True
            if not damped_solve(Jw, ew, lam, free, A, Y, D, dq):
                break
            # active set: a joint held at a limit by a step pushing outwards is left out and
            # the other joints take the step (sliding along the limit would stall)
            blocked = False
            for j in range(nb):
                if not never_blocks[j] and ((q[j] <= lower[j] and dq[j, 0] < 0.0)
                                            or (q[j] >= upper[j] and dq[j, 0] > 0.0)):
                    free[j] = False
                    blocked = True
            if blocked and not damped_solve(Jw, ew, lam, free, A, Y, D, dq):
                break
            for j in range(nb):
                q[j] += dq[j, 0]
            project(q, lower, upper, wrap)
    return best_q, False, total, attempts, best_cost


def warm_up(ch, n):
    """Compile (or load from numba's cache) the kernel before the first timed solve."""
    _lm_kernel(ch.basis, ch.axis, ch.prismatic, ch.body, ch.tip, np.eye(4), np.zeros((1, n)),
               ch.lower, ch.upper, ch.wrap, np.ones(6), 1.0, 1.0, 1, 1, 1.0, 1.0, 1, 0.5)


def solve(model, ch, target, o, seed, t_start, restarts=True):
    """
    Run the compiled LM with restarts until success, the timeout or the restart cap.

    ``ch`` is the model's :class:`~robot_dynamics.ik.chain.Chain`, ``o`` the checked options.
    Returns ``(q, success, iterations, restarts, reason)``, revolute angles of ``q`` on the
    turn nearest the seed that fits the limits.
    """
    if ch.body == 0:
        raise InputError(f'robot {model.name!r}: the tip {model.tip_link!r} is fixed to the '
                         'base; no joint moves it')
    deadline = t_start + o.timeout
    starts = seed[None, :].copy()
    total, attempts = 0, 0
    best_q, best_cost = seed.copy(), np.inf
    per_iteration = None
    generator = None
    tol_p2, tol_o2 = o.tol_position ** 2, o.tol_orientation ** 2
    success = False
    while True:
        now = time.perf_counter()
        remaining = deadline - now
        if per_iteration is None:
            budget = o.max_iterations * len(starts)
        else:
            budget = max(1, int(remaining / per_iteration))
        q, ok, its, used, cost = _lm_kernel(
            ch.basis, ch.axis, ch.prismatic, ch.body, ch.tip, target, starts, ch.lower,
            ch.upper, ch.wrap, o.mask, tol_p2, tol_o2, o.max_iterations, budget, o.damping,
            o.damping_floor, o.stall_iterations, o.stall_ratio)
        elapsed = time.perf_counter() - now
        total += its
        attempts += used
        if its > 0:
            rate = elapsed / its
            per_iteration = rate if per_iteration is None else max(rate, 0.5 * per_iteration)
        if cost < best_cost:
            best_q, best_cost = q.copy(), cost
        if ok:
            success = True
            break
        if not restarts or attempts >= o.max_restarts + 1:
            reason = 'no convergence from the seed' if not restarts else 'restart limit reached'
            break
        if time.perf_counter() >= deadline:
            reason = f'timeout ({o.timeout:g} s)'
            break
        if generator is None:
            generator = np.random.default_rng(DEFAULT_RNG_SEED if o.rng is None else o.rng)
        count = min(_RESTART_CHUNK, o.max_restarts + 1 - attempts)
        starts = generator.uniform(ch.sample_lower, ch.sample_upper, (count, model.dof))
    # 2 pi shifts towards the seed, where the limits allow
    q = best_q.copy()
    nearest_turns(best_q, seed, ch.lower, ch.upper, ch.revolute, q)
    return q, success, total, attempts - 1, ('converged' if success else reason)
