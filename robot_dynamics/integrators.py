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
Fixed-step integration of the joint state ``(q, qd)`` under the model's forward dynamics.

The state derivative is ``d/dt (q, qd) = (qd, forward_dynamics(q, qd, tau))``, the state
``y = (q, qd)`` (Turney, Mudge and Lee, "Connection between formulations of robot arm dynamics
with applications to simulation and control", University of Michigan RSD-TR-4-82, 1981, §9).
Methods (:class:`Method`):

- ``'rk4'``: classical 4-stage Runge-Kutta (ibid. §9); torque held over the step.
- ``'semi_implicit_euler'``: ``qd += dt qdd(q, qd)``, then ``q += dt qd`` (symplectic Euler).

``torque_fn(t, q, qd) -> tau`` is called once every ``hold`` steps and its torque held
(zero-order hold, as a digital controller drives a plant), so RK4's inner stages see the same
torque. The acceleration at the start of a step, which :func:`simulate` records, is the first
stage of the step: the step functions take it as ``qdd`` instead of computing it again, so a
step costs 4 forward-dynamics evaluations with RK4 and 1 with semi-implicit Euler.

:func:`rk4_step_compiled` is :func:`rk4_step` for one state in one compiled call (the four
articulated-body passes, friction included, without the checks each ``forward_dynamics`` call
makes): the step of a fixed-rate loop such as the simulated plant, where numpy's per-call
overhead would cost several times the arithmetic.
"""

import dataclasses
import enum

import numpy as np

from ._jit import njit
from .dynamics import (aba_state, aba_work, COULOMB_VELOCITY_SCALE, friction_torque,
                       singular_joint_error)
from .errors import (as_joint_array, choice, InputError, RobotDynamicsError, ShapeError,
                     SingularMassMatrixError)


class Method(enum.Enum):
    """The integration methods; the strings are what :func:`simulate` accepts."""

    RK4 = 'rk4'
    SEMI_IMPLICIT_EULER = 'semi_implicit_euler'


def _derivative(model, q, qd, tau, options):
    return model.forward_dynamics(q, qd, tau, **options)


def rk4_step(model, q, qd, tau, dt, qdd=None, **options):
    """
    One RK4 step of length ``dt`` [s] from ``(q, qd)`` under constant ``tau``.

    ``qdd``, if given, is the acceleration at ``(q, qd, tau)`` (the first stage), already
    computed by the caller. ``options`` go to ``model.forward_dynamics`` (``gravity``, ``f_ext``,
    ``friction``). Works on one state (n,) or a batch (N, n). Returns ``(q, qd)`` at ``t + dt``.
    """
    k1q, k1v = qd, _derivative(model, q, qd, tau, options) if qdd is None else qdd
    k2q = qd + 0.5 * dt * k1v
    k2v = _derivative(model, q + 0.5 * dt * k1q, k2q, tau, options)
    k3q = qd + 0.5 * dt * k2v
    k3v = _derivative(model, q + 0.5 * dt * k2q, k3q, tau, options)
    k4q = qd + dt * k3v
    k4v = _derivative(model, q + dt * k3q, k4q, tau, options)
    return (q + dt / 6.0 * (k1q + 2.0 * k2q + 2.0 * k3q + k4q),
            qd + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v))


#: Status of :func:`_rk4_kernel` for a stage or result that is not finite.
_DIVERGED = -2


@njit
def _rk4_kernel(basis, axis, prismatic, mass, com, inertia, tip, q, qd, tau, dt, a0, damping,
                coulomb, friction):
    """
    :func:`rk4_step` of one state with :func:`robot_dynamics.dynamics.aba_state` as derivative.

    With ``friction``, each stage's torque is ``tau`` minus
    :func:`robot_dynamics.dynamics.friction_torques` of the stage velocity. Returns
    ``(q_next, qd_next, status)``: ``status`` is -1 (done), ``_DIVERGED`` (a stage or the result
    is not finite) or the joint of a singular pivot.
    """
    n = q.shape[0]
    work = aba_work(n)
    fext = np.zeros(6)
    kq, kv = np.empty((4, n)), np.empty((4, n))
    q_stage, tau_stage = np.empty(n), np.empty(n)
    q_next, qd_next = np.empty(n), np.empty(n)
    for s in range(4):
        h = 0.0 if s == 0 else (0.5 * dt if s < 3 else dt)
        for j in range(n):
            if s == 0:
                q_stage[j], kq[0, j] = q[j], qd[j]
            else:
                q_stage[j] = q[j] + h * kq[s - 1, j]
                kq[s, j] = qd[j] + h * kv[s - 1, j]
            tau_stage[j] = tau[j]
            if friction:
                tau_stage[j] -= friction_torque(damping[j], coulomb[j], kq[s, j],
                                                COULOMB_VELOCITY_SCALE)
        if not (np.isfinite(q_stage).all() and np.isfinite(kq[s]).all()):
            return q_next, qd_next, _DIVERGED
        bad = aba_state(basis, axis, prismatic, mass, com, inertia, tip, q_stage, kq[s],
                        tau_stage, a0, fext, work, kv[s])
        if bad >= 0:
            return q_next, qd_next, bad
    for j in range(n):
        q_next[j] = q[j] + dt / 6.0 * (kq[0, j] + 2.0 * kq[1, j] + 2.0 * kq[2, j] + kq[3, j])
        qd_next[j] = qd[j] + dt / 6.0 * (kv[0, j] + 2.0 * kv[1, j] + 2.0 * kv[2, j] + kv[3, j])
    if not (np.isfinite(q_next).all() and np.isfinite(qd_next).all()):
        return q_next, qd_next, _DIVERGED
    return q_next, qd_next, -1


def rk4_step_compiled(model, q, qd, tau, dt, *, friction=False):
    """
    :func:`rk4_step` of one state (n,) in one compiled call, gravity the model's, no tip wrench.

    For fixed-step loops that check their inputs once: ``q``, ``qd`` and ``tau`` must be finite
    float64 arrays of shape (n,), C-contiguous and writeable, and ``dt`` > 0 [s]; they are not
    checked again (:func:`rk4_step` checks every stage). ``friction`` applies the model's damping
    and friction. Returns ``(q, qd)`` at ``t + dt``.

    Raises ``SingularMassMatrixError`` as ``forward_dynamics`` does, and ``InputError`` when a
    stage or the new state is not finite (the integration diverged: a smaller ``dt`` may help).
    """
    q_next, qd_next, status = _rk4_kernel(
        model.derived.local_basis, model.joint_axis, model.is_prismatic, model.mass, model.com,
        model.inertia, model.derived.tip_origin, q, qd, tau, float(dt), -model.gravity,
        model.damping, model.friction, bool(friction))
    if status == _DIVERGED:
        raise diverged(q, qd)
    if status >= 0:
        raise singular_joint_error(model, status)
    return q_next, qd_next


def diverged(q, qd):
    """Return the InputError of an RK4 step from ``(q, qd)`` whose state became non-finite."""
    return InputError(f'rk4 step: the state became non-finite from q = {q.tolist()}, '
                      f'qd = {qd.tolist()} (the integration diverged; try a smaller dt)')


def semi_implicit_euler_step(model, q, qd, tau, dt, qdd=None, **options):
    """
    One symplectic Euler step: ``qd += dt qdd(q, qd, tau)``, then ``q += dt qd``.

    ``qdd``, if given, is that acceleration, already computed by the caller; other arguments as
    in :func:`rk4_step`.
    """
    if qdd is None:
        qdd = _derivative(model, q, qd, tau, options)
    qd_next = qd + dt * qdd
    return q + dt * qd_next, qd_next


STEPS = {Method.RK4: rk4_step, Method.SEMI_IMPLICIT_EULER: semi_implicit_euler_step}


def _failure(exc, k, t, q, in_step):
    """
    Return the error that reports ``exc``, raised by the dynamics at sample ``k`` (``t``, ``q``).

    ``in_step``: raised by a stage of the step from sample ``k`` rather than at the sample. A
    singular mass matrix is a property of the model at a finite configuration, not of the step
    size; at the initial state any failure is the model's or the arguments' (nothing was
    integrated yet). Otherwise the state stopped being finite: the integration diverged.
    """
    if isinstance(exc, SingularMassMatrixError):
        where = (f'a stage of the step from t = {t:.6g} s' if in_step
                 else 'the initial state' if k == 0 else f'the state at t = {t:.6g} s')
        return SingularMassMatrixError(f'simulate: the mass matrix is singular at {where} '
                                       f'(q = {q.tolist()}), a model problem: {exc}')
    if k == 0 and not in_step:
        return exc
    return InputError(f'simulate: the state became invalid at t = {t:.6g} s (the simulation '
                      f'diverged; try a smaller dt): {exc}')


@dataclasses.dataclass(frozen=True)
class Trajectory:
    """
    Time series of a simulation: ``t`` (K,), ``q``, ``qd``, ``qdd``, ``tau`` (K, n).

    ``stable`` is False when the run stopped early because the state diverged (only with
    ``simulate(..., stop_on_divergence=True)``); the series then end at the last valid state.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    stable: bool = True


def simulate(model, q0, qd0, torque_fn, dt, duration, method='rk4', *, hold=1,
             stop_on_divergence=False, **options):
    """
    Integrate the closed loop ``tau = torque_fn(t, q, qd)`` for ``duration`` seconds.

    Parameters
    ----------
    model : RobotModel
        The plant.
    q0, qd0 : array_like, shape (n,)
        Initial joint positions [rad, m] and velocities [rad/s, m/s].
    torque_fn : callable
        ``torque_fn(t, q, qd) -> tau`` (n,), called at ``t_k`` for every ``hold``-th step and
        held in between (zero-order hold); ``None`` means zero torque.
    dt : float
        Step [s], > 0.
    duration : float
        Simulated time [s], >= 0; ``round(duration / dt)`` steps are taken.
    method : str or Method
        ``'rk4'`` or ``'semi_implicit_euler'``.
    hold : int
        Steps per call of ``torque_fn`` (a controller slower than the plant), >= 1.
    stop_on_divergence : bool
        Return the series up to the last valid state (``stable=False``) instead of raising
        when the state stops being finite or the dynamics fail after the first step.
    **options
        Passed to ``model.forward_dynamics`` (``gravity``, ``f_ext``, ``friction``).

    Returns
    -------
    Trajectory
        Samples at ``t_k = k dt``, k = 0..K-1; ``tau`` is the torque applied during the step
        that starts at ``t_k`` and ``qdd`` the acceleration it produces there.

    Raises
    ------
    SingularMassMatrixError
        The mass matrix is singular at the initial state (a model problem, whatever
        ``stop_on_divergence``), or, later, at a finite state the run reached.
    InputError
        Bad arguments, or the state stopped being finite (the integration diverged: a smaller
        ``dt`` may help).

    """
    step = STEPS[choice(method, Method, 'method')]
    try:
        dt, duration = float(dt), float(duration)
    except (TypeError, ValueError):
        raise InputError(f'simulate: dt and duration must be numbers of seconds, got dt={dt!r}, '
                         f'duration={duration!r}') from None
    if not (np.isfinite(dt) and dt > 0.0):
        raise InputError(f'simulate: dt must be a positive number of seconds, got {dt!r}')
    if not (np.isfinite(duration) and duration >= 0.0):
        raise InputError(f'simulate: duration must be >= 0 s, got {duration!r}')
    if int(hold) != hold or hold < 1:
        raise InputError(f'simulate: hold must be a whole number of steps >= 1, got {hold!r}')
    n = model.dof
    q = as_joint_array(q0, n, 'q0').copy()
    qd = as_joint_array(qd0, n, 'qd0').copy()
    for name, x in (('q0', q), ('qd0', qd)):
        if x.shape != (n,):
            raise ShapeError(f'{name}: expected shape ({n},) (one state), got {x.shape}')
    steps = int(round(duration / dt))
    t = np.arange(steps + 1) * dt
    Q, QD, QDD, TAU = (np.empty((steps + 1, n)) for _ in range(4))
    zero = np.zeros(n)
    tau = zero
    end = 0   # samples with a valid acceleration
    for k in range(steps + 1):
        if torque_fn is not None and k % hold == 0:
            tau = as_joint_array(torque_fn(t[k], q, qd), n, 'torque_fn(t, q, qd)').reshape(n)
        Q[k], QD[k], TAU[k] = q, qd, tau
        try:
            QDD[k] = model.forward_dynamics(q, qd, tau, **options)
            end = k + 1
            if k < steps:
                # an overflow shows up as a non-finite state at the next evaluation
                with np.errstate(over='ignore', invalid='ignore'):
                    q, qd = step(model, q, qd, tau, dt, qdd=QDD[k], **options)
        except RobotDynamicsError as exc:
            if end == 0 or not stop_on_divergence:
                raise _failure(exc, k, t[k], Q[k], in_step=end > k) from None
            break
    return Trajectory(t=t[:end], q=Q[:end], qd=QD[:end], qdd=QDD[:end], tau=TAU[:end],
                      stable=end == steps + 1)
