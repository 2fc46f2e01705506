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
The joint gains a control loop can bear on an arm, decided from the model with its limits.

Each joint is taken alone, as an inertia ``m`` under the law's torque (the coupling between
joints, gravity, Coriolis terms and friction are left out): with the error ``e = q_d - q``,
``m e'' = -tau``, ``tau = clip(g (kp e + kd e' + ki I), +-effort_limit)``, where ``g = m`` for
computed torque (its gains are per unit inertia, its model's ``M_jj`` cancels the arm's) and
``g = 1`` for the other laws (their gains are torques). ``m`` takes the joint's smallest and
largest diagonal inertia ``M_jj`` over :data:`INERTIA_SAMPLES` configurations within the limits
(:func:`inertia_range`). The command answers a state and is held over a period ``T``; it reaches
the arm up to one period after that state (the worst case of a loop in real time, where the
state's trip to the controller and the command's back take part of a period). The gains must

1. keep the sampled linear loop stable (every root inside the unit circle): ``kd < m / T``
   (:func:`gain_bounds`, with ``kp`` above zero), ``kp`` and ``ki`` below the largest stable
   values, found by bisection (:func:`gain_bounds`, :func:`integral_bound`); and
2. bring a step to rest under the effort limit (:func:`saturated_step`): from an error of the
   joint's range (at most what its acceleration limit crosses in a quarter of the simulated
   time) the loop, simulated for :data:`DURATION` with the command clipped, must enter a
   region of the linear loop it cannot leave (a level set of its Lyapunov function on which the
   command is not clipped), and so come to rest, or at least be off the limits over the last
   quarter of that time (a slow loop): not swing from limit to limit (a limit cycle).

:func:`check_gains` raises ``InputError`` naming the joint, the gain and its bound.
"""

import math

import numpy as np

from .control import Law
from .errors import InputError
from .limits import middle

#: Configurations sampled (within the limits) for each joint's inertia range.
INERTIA_SAMPLES = 256
#: Simulated time [s] of the step (:func:`saturated_step`), whatever the rate.
DURATION = 2.0
#: Bisection steps of the linear bounds.
BISECTIONS = 60
#: Periods between looks at whether the simulated step came to rest (:func:`saturated_step`).
REST_CHECK = 10
#: Fractions of a refused ``kp`` tried to name the bound of :func:`saturated_step`.
SATURATED_TRIALS = 0.5 ** np.arange(1, 13)


def inertia_range(model, samples=INERTIA_SAMPLES):
    """Return each joint's smallest and largest diagonal inertia ``M_jj`` (2, n) [kg m^2, kg]."""
    # unbounded joints: a revolute one turns through every angle within [-pi, pi]
    span = np.where(model.is_prismatic, 1.0, math.pi)
    lower = np.where(np.isfinite(model.lower), model.lower, -span)
    upper = np.where(np.isfinite(model.upper), model.upper, span)
    rng = np.random.default_rng(0)
    q = lower + (upper - lower) * rng.random((samples, model.dof))
    q = np.vstack((q, middle(model.lower, model.upper)))
    diagonal = np.diagonal(model.mass_matrix(q), axis1=-2, axis2=-1)
    return np.stack((diagonal.min(axis=0), diagonal.max(axis=0)))


def _has(law, gain, n):
    return np.shape(getattr(law, gain, None)) == (n,)


def _per_acceleration(law, inertia):
    """Return the factor (2, n) turning the law's gains into accelerations, per inertia case."""
    if law.law is Law.COMPUTED_TORQUE:
        return np.ones_like(inertia)
    return 1.0 / inertia


def _loop_matrix(kp, kd, ki, T):
    """
    Return the sampled linear loop's matrix (..., 4, 4) for gains per unit inertia.

    The state ``(e_k, e'_k, I_{k-1}, u_{k-1})``: the command ``u_k = kp e_k + kd e'_k + ki I_k``
    (``I_k = I_{k-1} + T e_k``, as :class:`~robot_dynamics.control.PID` integrates) is applied
    over the period after the next (a period late), exactly (``e'' = -u`` held). ``I`` is
    zero where ``ki`` is.
    """
    shape = np.broadcast_shapes(np.shape(kp), np.shape(kd), np.shape(ki))
    kp, kd, ki = (np.broadcast_to(x, shape) for x in (kp, kd, ki))
    A = np.zeros(shape + (4, 4))
    A[..., 0, 0] = A[..., 1, 1] = 1.0
    A[..., 0, 1] = T
    # an integral no gain reads is left at zero (its mode would sit on the unit circle)
    A[..., 2, 2] = ki > 0.0
    A[..., 2, 0] = T * (ki > 0.0)
    A[..., 0, 3] = -0.5 * T * T
    A[..., 1, 3] = -T
    A[..., 3, 0] = kp + ki * T
    A[..., 3, 1] = kd
    A[..., 3, 2] = ki
    return A


def _stable(kp, kd, ki, T):
    """Return whether the sampled linear loop (:func:`_loop_matrix`) is stable (...,)."""
    return np.abs(np.linalg.eigvals(_loop_matrix(kp, kd, ki, T))).max(axis=-1) < 1.0


def _largest_stable(stable, start):
    """Return the largest gains (n,) in ``[0, start)`` for which ``stable(gains)`` holds."""
    lo, hi = np.zeros_like(start), start
    for _ in range(BISECTIONS):
        mid = 0.5 * (lo + hi)
        ok = stable(mid)
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return lo


def gain_bounds(model, law, period, inertia=None):
    """
    Return ``(kd_max, kp_max)`` (n,): the gains of ``law`` that keep the linear loop stable.

    ``kd_max = m / T`` (the velocity loop ``z^2 - z + kd T / m`` with the command a period
    late); ``kp_max`` the largest stable ``kp`` with the law's ``kd``, over both inertias of
    :func:`inertia_range` (``inertia`` (2, n), computed if None). None for a law without joint
    gains ``kp`` and ``kd``.
    """
    n = model.dof
    if not (_has(law, 'kp', n) and _has(law, 'kd', n)):
        return None
    inertia = inertia_range(model) if inertia is None else inertia
    scale = _per_acceleration(law, inertia)
    T = float(period)
    kd = np.asarray(law.kd, float)
    kd_max = 1.0 / (T * scale.max(axis=0))
    stable = (lambda kp: _stable(kp * scale, kd * scale, 0.0, T).all(axis=0))
    return kd_max, _largest_stable(stable, np.full(n, 4.0 / (T * T * scale.min(axis=0))))


def integral_bound(model, law, period, inertia=None):
    """
    Return ``ki_max`` (n,): the integral gains of a PID ``law`` that keep the linear loop stable.

    The loop of :func:`gain_bounds` with the law's ``kp`` and ``kd`` and its integral, stable
    from ``ki = 0`` up to ``ki_max`` (found by bisection; about ``kp kd / m``, the continuous
    loop's Routh-Hurwitz bound, at high rates). None for a law without an integral gain.
    """
    n = model.dof
    if not _has(law, 'ki', n):
        return None
    inertia = inertia_range(model) if inertia is None else inertia
    scale = _per_acceleration(law, inertia)
    T = float(period)
    kp, kd = (np.asarray(g, float) * scale for g in (law.kp, law.kd))
    stable = (lambda ki: _stable(kp, kd, ki * scale, T).all(axis=0))
    return _largest_stable(stable, 4.0 * np.asarray(law.kp) * np.asarray(law.kd) *
                           scale.max(axis=0) + 1.0)


def step_size(model, inertia):
    """
    Return the simulated step (n,) [rad or m]: each joint's range, at most ``a D^2 / 64``.

    ``a`` is the joint's smallest acceleration limit (its effort limit over its largest
    inertia), so that the step can be crossed at full effort in a quarter of the simulated time
    ``D`` (:data:`DURATION`), leaving the rest for the swings a clipped loop makes before it
    settles; a joint without finite limits takes pi rad or 1 m.
    """
    span = np.where(model.is_prismatic, 1.0, math.pi)
    ranges = np.where(np.isfinite(model.upper - model.lower), model.upper - model.lower, span)
    return np.minimum(ranges, model.effort_limit / inertia.max(axis=0) * DURATION ** 2 / 64.0)


def saturated_step(model, law, period, inertia=None, kp=None, joints=None):
    """
    Return whether a step comes to rest under each joint's effort limit, (..., n) bool.

    Simulates the loop of the module docstring (both inertias, the command clipped, a PID's
    integral frozen while it winds into the limit and clamped as the law does) from a step of
    :func:`step_size` for :data:`DURATION` in periods ``T``, exactly between samples; a joint
    comes to rest when its loop has entered the largest level set ``x^T P x <= c`` of the linear
    loop's Lyapunov function (``A^T P A - P = -1``) on which the command stays within the limit
    (the linear loop never leaves that set, so the error decays from there on), or when its
    command stays off the limit over the last quarter of the time (a slow loop). ``kp`` (..., n)
    tries other proportional gains than the law's, all at once; ``joints`` (n,) bool: only
    those are simulated (the others True). The linear loop must be stable
    (:func:`gain_bounds`, :func:`integral_bound`). All-True for a law without joint gains.
    """
    n = model.dof
    if not (_has(law, 'kp', n) and _has(law, 'kd', n)):
        return np.ones(n, dtype=bool)
    inertia = inertia_range(model) if inertia is None else inertia
    kp = np.asarray(law.kp if kp is None else kp, float)
    rests = np.ones(kp.shape, dtype=bool)
    # a joint left free (kp = 0) has no position to come to rest at
    held = np.asarray(law.kp) > 0.0
    if joints is not None:
        held &= joints
    T = float(period)
    step = step_size(model, inertia)[held]
    inertia = inertia[:, held]
    scale = _per_acceleration(law, inertia)
    # (..., 2, n): the gains tried, each at both inertias
    kp = kp[..., None, held] * scale
    kd = np.asarray(law.kd, float)[held] * scale
    ki = np.asarray(law.ki, float)[held] * scale if _has(law, 'ki', n) else np.zeros_like(kd)
    kd, ki = np.broadcast_to(kd, kp.shape), np.broadcast_to(ki, kp.shape)
    limit = np.broadcast_to(_effort_limit(model, law)[held] / inertia, kp.shape)
    # the integral's clamp, as the law's |ki I| <= integral_limit (zero without an integral)
    integral_limit = np.broadcast_to(getattr(law, 'integral_limit', 0.0), (n,))[held]
    with np.errstate(divide='ignore', invalid='ignore'):
        clamp = np.where(ki > 0.0, integral_limit / inertia / ki, 0.0)
    A = _loop_matrix(kp, kd, ki, T)
    P = _lyapunov(A)
    # the command row of the state after a step: u_k = K x_k, K = A[3]
    K = A[..., 3, :]
    level = limit ** 2 / np.einsum('...i,...ij,...j->...', K, np.linalg.inv(P), K)
    e = np.broadcast_to(step, kp.shape).copy()
    v, integral, u = np.zeros_like(e), np.zeros_like(e), np.zeros_like(e)
    rest, clipped = np.zeros(kp.shape, dtype=bool), np.zeros(kp.shape, dtype=bool)
    steps = math.ceil(DURATION / T)
    for k in range(steps):
        # the set is never left once entered: a look every few periods finds it as well
        if k % REST_CHECK == 0:
            x = np.stack((e, v, integral, u), axis=-1)
            rest |= np.einsum('...i,...ij,...j->...', x, P, x) <= level
            if rest.all():
                break
        if 4 * k >= 3 * steps:
            clipped |= np.abs(u) > limit
        applied = np.clip(u, -limit, limit)
        candidate = np.clip(integral + T * e, -clamp, clamp)
        command = kp * e + kd * v + ki * candidate
        # conditional integration, as the PID: no integral that winds further into the limit
        winding = (np.abs(command) > limit) & (e * command > 0.0)
        integral = np.where(winding, np.clip(integral, -clamp, clamp), candidate)
        u = kp * e + kd * v + ki * integral
        e, v = e + T * v - 0.5 * T * T * applied, v - T * applied
    # a loop slow to enter the set but off the limits for the last quarter is not swinging
    rests[..., held] = (rest | ~clipped).all(axis=-2)
    return rests


def check_gains(model, law, period, inertia=None):
    """
    Raise ``InputError`` unless the loop of ``law`` at ``period`` [s] bears its gains on this arm.

    The gains must keep the sampled loop stable (:func:`gain_bounds`, :func:`integral_bound`)
    and bring a step to rest under the effort limits (:func:`saturated_step`); the refusal names
    the joint, the gain, its bound and the arm's figures. ``inertia`` (2, n) as
    :func:`inertia_range` gives it (computed if None). Laws without joint gains pass.
    """
    bounds = gain_bounds(model, law, period, inertia)
    if bounds is None:
        return
    inertia = inertia_range(model) if inertia is None else inertia
    T = float(period)

    def refuse(j, gain, value, bound, why):
        units = ('N', 'kg') if model.is_prismatic[j] else ('N m', 'kg m^2')
        raise InputError(
            f'gains.{model.joint_names[j]}.{gain} = {value:g}: above {bound:.6g}, the largest '
            f'the loop at {1.0 / T:g} Hz bears on this arm (effort limit '
            f'{_effort_limit(model, law)[j]:g} {units[0]}, inertia {inertia[0, j]:.4g} to '
            f'{inertia[1, j]:.4g} {units[1]}): {why}')

    kd_max, kp_max = bounds
    kp, kd = np.asarray(law.kp, float), np.asarray(law.kd, float)
    m = ('1: the gains are per unit inertia' if law.law is Law.COMPUTED_TORQUE
         else 'the least inertia')
    for j in np.flatnonzero(kd >= kd_max)[:1]:
        refuse(j, 'kd', kd[j], kd_max[j], f'kd < m / T with the command a period late (m = {m})')
    for j in np.flatnonzero((kp >= kp_max) & (kp > 0.0))[:1]:
        refuse(j, 'kp', kp[j], kp_max[j], f'the sampled loop with kd = {kd[j]:g} and the '
                                          'command a period late turns unstable (raise kd first)')
    ki_max = integral_bound(model, law, period, inertia)
    if ki_max is not None:
        ki = np.asarray(law.ki, float)
        for j in np.flatnonzero((ki >= ki_max) & (ki > 0.0))[:1]:
            refuse(j, 'ki', ki[j], ki_max[j], f'the sampled loop with kp = {kp[j]:g}, kd = '
                                              f'{kd[j]:g} turns unstable (about ki < kp kd / m '
                                              'at the largest inertia: raise kd or kp first)')
    for j in np.flatnonzero(~saturated_step(model, law, period, inertia))[:1]:
        tried = np.tile(kp, (SATURATED_TRIALS.size, 1))
        tried[:, j] *= SATURATED_TRIALS
        rests = saturated_step(model, law, period, inertia, kp=tried,
                               joints=np.arange(model.dof) == j)[:, j]
        # the largest kp tried from which every smaller one tried comes to rest too
        below = np.logical_and.accumulate(rests[::-1])[::-1]
        unit = 'm' if model.is_prismatic[j] else 'rad'
        why = (f'with kd = {kd[j]:g}, a step of {step_size(model, inertia)[j]:.3g} {unit} under '
               f'the effort limit does not come to rest in {DURATION:g} s (it swings at the '
               'limits')
        if not below.any():
            raise InputError(f'gains.{model.joint_names[j]}.kd = {kd[j]:g}: {why} with kp = '
                             f'{kp[j]:g} down to {tried[-1, j]:.3g}: lower kd)')
        refuse(j, 'kp', kp[j], tried[np.argmax(below), j], why + ': lower kp)')


def _effort_limit(model, law):
    """Return the torques (n,) the arm gets at most: the law's clip and the model's limit."""
    return np.minimum(np.asarray(law.effort_limit, float), model.effort_limit)


def _lyapunov(A):
    """Return ``P`` (..., 4, 4) with ``A^T P A - P = -1`` for each stable ``A`` (..., 4, 4)."""
    # row-major vec(A^T P A) = (A^T kron A^T) vec(P)
    At = np.swapaxes(A, -1, -2)
    kron = np.einsum('...ij,...kl->...ikjl', At, At).reshape(A.shape[:-2] + (16, 16))
    P = np.linalg.solve(np.eye(16) - kron, np.broadcast_to(np.eye(4).reshape(16, 1),
                                                           A.shape[:-2] + (16, 1)))
    return P.reshape(A.shape)
