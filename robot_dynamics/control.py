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
Control laws for a serial arm: joint PD, PD + gravity, PID, computed torque, task space.

Each law is a small object built over a :class:`~robot_dynamics.model.RobotModel` (the
controller's model, which may differ from the plant to study model error) with one method,
``compute(t, q, qd, reference) -> Command``. It works on one state (n,) or a batch (..., n).
Only :class:`PID` and :class:`Adaptive` keep state (the integral, or the parameter estimate,
and the time of the last call), held in one explicit, immutable :class:`PIDState` or
:class:`AdaptiveState` that ``reset`` and ``restart`` replace; the others are pure functions of
their arguments, so a ROS controller node can call them from its timer at any rate.
``law.with_gains(kp=...)`` returns the law with new gains, validated as the constructor does,
and its state kept: what a node applies when its gain parameters change.

Conventions: the joint error is ``e = q_d - q`` and ``e_dot = qd_d - qd``; joint gains are per
joint (n,), a scalar applies to every joint, and a mapping ``{joint_name: gain}`` is accepted (as
ROS parameters ``gains.<joint>.p``); task gains are per row, or ``{row: gain}`` with the rows
``vx vy vz wx wy wz`` (:data:`TASK_ROWS`). The commanded torque is clipped to ``effort_limit``
(the model's by default) and ``Command.saturated`` flags the clipped joints. Torques are in N m
(revolute) or N (prismatic).

The laws (Turney, Mudge and Lee 1981, §10, give the inverse-dynamics feed-forward; the feedback
laws are the standard ones, e.g. Siciliano et al., Robotics: Modelling, Planning and Control,
2009, ch. 8):

- :class:`PD`: ``tau = Kp e + Kd e_dot``; under gravity it settles with ``Kp e = g(q)``.
- :class:`PDGravity`: ``tau = Kp e + Kd e_dot + g(q)``: no steady-state error at a set-point.
- :class:`PID`: ``tau = Kp e + Ki int(e) + Kd e_dot`` (optionally ``+ g(q)``), with anti-windup.
- :class:`ComputedTorque`: ``tau = M(q) (qdd_d + Kd e_dot + Kp e) + C(q, qd) qd + g(q)``
  (plus friction feed-forward if asked), one RNEA call; gains in 1/s^2 and 1/s.
- :class:`ResolvedAcceleration`: task-space control of the tip (Luh, Walker and Paul,
  "Resolved-acceleration control of mechanical manipulators", IEEE TAC 25(3), 1980):
  ``qdd = J^+ (xdd_d + Kd e_dot + Kp e - Jdot qd)`` over the task rows, then computed torque.
- :class:`Adaptive`: the adaptive law of Slotine and Li, ``tau = Y(q, qd, qd_r, qdd_r) beta +
  Kd s`` with the parameter estimate ``beta`` updated by ``Gamma Y^T s`` (Spong, Hutchinson and
  Vidyasagar, Robot Modeling and Control, 2nd ed., 2020, §6.5 give the properties it rests on).

The catalogue: :func:`default_law` builds any of :data:`LAWS` with gains for one
natural frequency and damping ratio, for ``robot-dynamics simulate`` and the controller node.
What the laws share with :class:`~robot_dynamics.task_space.OperationalSpace` (:class:`Law`,
:class:`Friction`, the gains, the base class) is in :mod:`robot_dynamics.law_base`.
"""

import math
from typing import NamedTuple

import numpy as np

from . import kinematics
from .dynamics import friction_regressor, friction_torques, slotine_li_regressor
from .errors import as_array, as_joint_array, choice, InputError, ShapeError
from .law_base import (BaseLaw, effort_limits, Friction, joint_gains, Law, task_gains,
                       TASK_ROWS)
from .limits import middle
from .linalg import damped_least_squares
from .spatial import matrix_to_rotvec
from .task_space import OperationalSpace

#: Default damping of the least-squares inverse in task space [m or rad]: a tiny
#: regularisation that only matters near singularities.
TASK_DAMPING = 1e-6
#: Default joint damping [1/s] of the null-space motion of redundant arms in task space.
NULL_SPACE_DAMPING = 10.0
#: Default adaptation gain of :class:`Adaptive` [1/(N m rad)]: each base parameter's rate is
#: this times the square of its bound half-width times ``(Y^T s)_k``. Larger learns faster;
#: a loop at 1 kHz kept the PUMA 560 with a 2 kg payload stable at this value, not at 10 times it.
DEFAULT_ADAPTATION_GAIN = 1e-4

_ZERO6 = np.zeros(6)
_ZERO6.setflags(write=False)


class Command(NamedTuple):
    """
    Output of a control law.

    Attributes
    ----------
    tau : numpy.ndarray, shape (..., n)
        Torques to apply [N m or N], clipped to the effort limits.
    saturated : numpy.ndarray of bool, shape (..., n)
        True for the joints whose requested torque was clipped.
    tau_requested : numpy.ndarray, shape (..., n)
        Torques before clipping.
    error : numpy.ndarray, shape (..., n) or (..., 6)
        The tracking error the law acted on: ``q_d - q`` for joint laws, the task error
        ``[p_d - p; rotvec(R_d R^T)]`` (unused rows zero) for :class:`ResolvedAcceleration`.

    """

    tau: np.ndarray
    saturated: np.ndarray
    tau_requested: np.ndarray
    error: np.ndarray


def critically_damped(natural_frequency, damping_ratio=1.0):
    """
    Return ``(kp, kd) = (wn^2, 2 zeta wn)``: error dynamics ``e'' + kd e' + kp e = 0``.

    For :class:`ComputedTorque` and :class:`ResolvedAcceleration` (gains in 1/s^2 and 1/s).
    ``natural_frequency`` [rad/s] and ``damping_ratio`` may be scalars or arrays.
    """
    wn = np.asarray(natural_frequency, dtype=float)
    zeta = np.asarray(damping_ratio, dtype=float)
    return wn * wn, 2.0 * zeta * wn


def _check_inputs(n, q, qd, reference, expected):
    """Check ``q`` and ``qd`` (..., n) and unpack the three parts of ``reference``."""
    q = as_joint_array(q, n, 'q')
    qd = as_joint_array(qd, n, 'qd')
    if qd.shape != q.shape:
        raise ShapeError(f'qd: expected the shape of q {q.shape}, got {qd.shape}')
    try:
        first, second, third = reference
    except (TypeError, ValueError):
        raise InputError(f'reference: expected {expected}, got '
                         f'{type(reference).__name__}') from None
    return q, qd, (first, second, third)


def _check_finite(values, what):
    """Raise an InputError if the law's ``what`` came out non-finite from finite inputs."""
    if not np.isfinite(values).all():
        raise InputError(f'the control law produced a non-finite {what} from finite inputs '
                         '(overflowing gains or reference?)')


class _JointLaw(BaseLaw):
    """Common parts of the joint-space laws: gains, limits, reference checks, saturation."""

    def __init__(self, model, kp, kd, *, effort_limit=None, saturate=True):
        self._arguments = {'kp': kp, 'kd': kd, 'effort_limit': effort_limit,
                           'saturate': saturate}
        self.model = model
        self.kp = joint_gains(kp, model, 'kp')
        self.kd = joint_gains(kd, model, 'kd')
        self.effort_limit = effort_limits(model, effort_limit)
        self.saturate = bool(saturate)

    def __repr__(self):
        return (f'{type(self).__name__}({self.model.name!r}, kp={self.kp.tolist()}, '
                f'kd={self.kd.tolist()}, saturate={self.saturate})')

    @property
    def _gain_keys(self):
        return self.model.joint_names

    def _state(self, q, qd, reference):
        """Check the state and reference shapes; return q, qd, q_d, qd_d, qdd_d."""
        n = self.model.dof
        q, qd, (q_d, qd_d, qdd_d) = _check_inputs(n, q, qd, reference,
                                                  '(q_d, qd_d, qdd_d), e.g. a TrajectoryPoint')
        q_d = as_joint_array(q_d, n, 'reference q')
        qd_d = 0.0 if qd_d is None else as_joint_array(qd_d, n, 'reference qd')
        qdd_d = 0.0 if qdd_d is None else as_joint_array(qdd_d, n, 'reference qdd')
        if q_d.shape != q.shape:
            try:
                shape = np.broadcast_shapes(q.shape, q_d.shape)
            except ValueError:
                raise ShapeError(f'reference q: shape {q_d.shape} does not broadcast with q '
                                 f'{q.shape}') from None
            q, qd = np.broadcast_to(q, shape), np.broadcast_to(qd, shape)
        return q, qd, q_d, qd_d, qdd_d

    def _command(self, tau, error):
        """Check and clip ``tau``."""
        _check_finite(tau, 'torque')
        if not self.saturate:
            return Command(tau, np.zeros(tau.shape, dtype=bool), tau, error)
        lim = self.effort_limit
        saturated = np.abs(tau) > lim
        return Command(np.clip(tau, -lim, lim), saturated, tau, error)

    @property
    def gains(self):
        """Return the gains as a dict of lists (for reports and ROS parameters)."""
        return {'kp': self.kp.tolist(), 'kd': self.kd.tolist()}


class PD(_JointLaw):
    """
    Joint PD control: ``tau = Kp e + Kd e_dot``.

    Without gravity compensation the arm settles where ``Kp e = g(q)``: the gravity sag
    ``e = Kp^-1 g(q)`` at a set-point.

    Parameters
    ----------
    model : RobotModel
        The controller's model (limits, and dynamics for the laws that use it).
    kp : float, array_like (n,) or mapping
        Stiffness [N m/rad or N/m].
    kd : float, array_like (n,) or mapping
        Damping [N m s/rad or N s/m].
    effort_limit : float, array_like (n,) or mapping, optional
        Clipping limits [N m or N]; default ``model.effort_limit``.
    saturate : bool
        Clip to ``effort_limit`` (and report it); False passes the requested torque through.

    """

    law = Law.PD

    def compute(self, t, q, qd, reference):
        """
        Compute the joint torques for the state ``(q, qd)`` and the desired joint state.

        Parameters
        ----------
        t : float
            Time [s] (unused: the law has no state).
        q, qd : array_like, shape (..., n)
            Measured joint positions [rad or m] and velocities [rad/s or m/s].
        reference : TrajectoryPoint or tuple
            ``(q_d, qd_d, qdd_d)``, each (..., n) or broadcastable; ``None`` for zero.

        Returns
        -------
        Command
            Clipped torques, saturation flags, requested torques and ``e = q_d - q``.

        """
        q, qd, q_d, qd_d, _ = self._state(q, qd, reference)
        e = q_d - q
        return self._command(self.kp * e + self.kd * (qd_d - qd), e)


class PDGravity(_JointLaw):
    """
    Joint PD control with gravity compensation: ``tau = Kp e + Kd e_dot + g(q)``.

    ``g`` comes from the controller's model; with an exact model the set-point error decays
    to zero. Parameters as in :class:`PD`.
    """

    law = Law.PD_GRAVITY

    def compute(self, t, q, qd, reference):
        """Compute the joint torques; arguments and result as in :meth:`PD.compute`."""
        q, qd, q_d, qd_d, _ = self._state(q, qd, reference)
        e = q_d - q
        tau = self.kp * e + self.kd * (qd_d - qd) + self.model.gravity_torques(q)
        return self._command(tau, e)


def _time(t, name='t'):
    """Return the time ``t`` [s] as a finite float (None stays None)."""
    if t is None:
        return None
    try:
        t = float(t)
    except (TypeError, ValueError):
        raise InputError(f'{name}: expected a time in seconds, got {t!r}') from None
    if not math.isfinite(t):
        raise InputError(f'{name}: expected a finite time in seconds, got {t}')
    return t


def _call_time(t, last, kept):
    """
    Return ``(t, last)``: a stateful law's call time [s] and its previous one (or None).

    Raises ``InputError`` when ``t`` is before ``last``: ``restart()`` keeps the ``kept`` state,
    ``reset()`` clears it, for a clock that jumped back.
    """
    t = _time(t)
    if last is not None and not t >= last:
        raise InputError(f't: {t} s is before the previous call at {last} s; call restart() '
                         f'(keeps the {kept}) or reset() when the clock jumped back')
    return t, last


class PIDState(NamedTuple):
    """
    The state of a :class:`PID` law.

    ``integral`` (..., n) is ``int e dt`` [rad s or m s]; ``time`` [s] is the time of the last
    call (None before the first one, when no integration happens).
    """

    integral: np.ndarray
    time: object


class PID(_JointLaw):
    """
    Joint PID control: ``tau = Kp e + Ki int(e) dt + Kd e_dot`` (``+ g(q)`` if asked).

    The integral is advanced by ``e dt`` with ``dt`` the time since the previous call. Anti-windup
    (conditional integration): a joint whose torque is saturated does not integrate an error that
    pushes further into saturation, and ``|Ki int(e)|`` is clamped to ``integral_limit``.

    Parameters
    ----------
    model : RobotModel
        The controller's model.
    kp, ki, kd : float, array_like (n,) or mapping
        Gains [N m/rad, N m/(rad s), N m s/rad] (N/m... for prismatic joints).
    integral_limit : float, array_like (n,) or mapping, optional
        Largest integral torque [N m or N]; default ``effort_limit``.
    gravity_compensation : bool
        Add ``g(q)`` of the controller's model.
    effort_limit, saturate
        As in :class:`PD`.

    """

    law = Law.PID
    gain_names = ('kp', 'ki', 'kd')

    def __init__(self, model, kp, ki, kd, *, integral_limit=None, gravity_compensation=False,
                 effort_limit=None, saturate=True):
        super().__init__(model, kp, kd, effort_limit=effort_limit, saturate=saturate)
        self._arguments.update(ki=ki, integral_limit=integral_limit,
                               gravity_compensation=gravity_compensation)
        self.ki = joint_gains(ki, model, 'ki')
        self.integral_limit = (self.effort_limit if integral_limit is None
                               else joint_gains(integral_limit, model, 'integral_limit',
                                                allow_inf=True))
        self.gravity_compensation = bool(gravity_compensation)
        with np.errstate(divide='ignore'):
            bound = np.where(self.ki > 0.0, self.integral_limit / self.ki, 0.0)
        self._integral_bound = bound
        self.state = PIDState(np.zeros(model.dof), None)

    def reset(self, integral=None, time=None):
        """
        Replace the state: zero integral (or ``integral``, (..., n)) and no previous call time.

        Call it when the controller (re)starts, e.g. on ROS controller activation. ``time`` [s],
        if given, is taken as the previous call: the next one integrates from it.
        """
        if integral is None:
            integral = np.zeros(self.model.dof)
        integral = as_joint_array(integral, self.model.dof, 'integral').copy()
        self.state = PIDState(integral, _time(time))

    def restart(self, time=None):
        """
        Keep the integral but forget the previous call time: for a clock that jumped back.

        :meth:`compute` rejects a time before its previous call, since a clock going backwards
        is usually a bug. When it is not (simulated time restarted, a log replayed from its
        start), call ``restart``: the integral, the torque that holds a steady load, is kept, and
        the next call integrates from ``time`` [s] if given, else not at all (as a first call).
        Use :meth:`reset` to clear the integral as well.
        """
        self.state = PIDState(self.state.integral, _time(time))

    def with_gains(self, **gains):
        """
        Return this PID with new gains and the same state (see :meth:`BaseLaw.with_gains`).

        The integral of the error is kept, so the integral torque becomes ``ki_new int(e) dt``,
        clamped to ``integral_limit`` at the next call.
        """
        law = super().with_gains(**gains)
        law.state = self.state
        return law

    @property
    def gains(self):
        """Return the gains as a dict of lists (for reports and ROS parameters)."""
        return {'kp': self.kp.tolist(), 'ki': self.ki.tolist(), 'kd': self.kd.tolist()}

    def compute(self, t, q, qd, reference):
        """
        Compute the joint torques and advance the integral to time ``t``.

        Arguments and result as in :meth:`PD.compute`; ``t`` [s] must not decrease between calls
        (``InputError``; after a clock jump, :meth:`restart` or :meth:`reset` first). The state's
        integral must have the batch shape of ``q`` (:meth:`reset` sets it).
        """
        q, qd, q_d, qd_d, _ = self._state(q, qd, reference)
        t, last = _call_time(t, self.state.time, 'integral')
        integral = self.state.integral
        if integral.shape != q.shape:
            if np.any(integral != 0.0):
                raise ShapeError(f'PID state: integral has shape {integral.shape} but q has '
                                 f'{q.shape}; call reset() with a matching integral')
            integral = np.zeros(q.shape)
        e = q_d - q
        dt = 0.0 if last is None else t - last
        base = self.kp * e + self.kd * (qd_d - qd)
        if self.gravity_compensation:
            base = base + self.model.gravity_torques(q)
        bound = self._integral_bound
        candidate = np.clip(integral + e * dt, -bound, bound)
        tau = base + self.ki * candidate
        if self.saturate:
            # conditional integration: freeze joints driven further into saturation
            winding = (np.abs(tau) > self.effort_limit) & (e * tau > 0.0)
            if np.any(winding):
                candidate = np.where(winding, np.clip(integral, -bound, bound), candidate)
                tau = base + self.ki * candidate
        _check_finite(tau, 'torque')
        self.state = PIDState(candidate, t)
        return self._command(tau, e)


class ComputedTorque(_JointLaw):
    """
    Computed-torque (inverse dynamics) control.

    ``tau = M(q) (qdd_d + Kd e_dot + Kp e) + C(q, qd) qd + g(q)`` (+ friction feed-forward),
    evaluated as one recursive Newton-Euler call on the controller's model (Turney et al. 1981,
    §10: the inverse dynamics along the desired motion, with the feedback folded into the
    acceleration). With an exact model the error obeys ``e'' + Kd e' + Kp e = 0``.

    Parameters
    ----------
    model : RobotModel
        The controller's model; a copy with scaled masses simulates model error.
    kp : float, array_like (n,) or mapping
        Position gain [1/s^2] (``wn^2``, see :func:`critically_damped`).
    kd : float, array_like (n,) or mapping
        Velocity gain [1/s] (``2 zeta wn``).
    friction : str
        Friction feed-forward from the model: ``'none'`` (default), ``'reference'`` (at the
        desired velocity) or ``'measured'`` (at the measured one); see :class:`Friction`.
    effort_limit, saturate
        As in :class:`PD`.

    """

    law = Law.COMPUTED_TORQUE

    def __init__(self, model, kp, kd, *, friction='none', effort_limit=None, saturate=True):
        super().__init__(model, kp, kd, effort_limit=effort_limit, saturate=saturate)
        self._arguments['friction'] = friction
        self.friction = choice(friction, Friction, 'friction')

    def compute(self, t, q, qd, reference):
        """Compute the joint torques; arguments and result as in :meth:`PD.compute`."""
        q, qd, q_d, qd_d, qdd_d = self._state(q, qd, reference)
        e = q_d - q
        v = np.broadcast_to(qdd_d + self.kd * (qd_d - qd) + self.kp * e, q.shape)
        _check_finite(v, 'acceleration')
        tau = self.model.inverse_dynamics(q, qd, v,
                                          friction=self.friction is Friction.MEASURED)
        if self.friction is Friction.REFERENCE:
            tau = tau + friction_torques(self.model, np.broadcast_to(qd_d, q.shape))
        return self._command(tau, e)

    def for_one_state(self):
        """Return the law for one state, checked once (see :meth:`BaseLaw.for_one_state`)."""
        model, kp, kd = self.model, self.kp, self.kd
        prepared = model.prepare()         # one compiled RNEA call, into a buffer
        measured = self.friction is Friction.MEASURED
        reference = self.friction is Friction.REFERENCE
        tau = np.empty(model.dof)

        def compute(t, q, qd, ref):
            q_d, qd_d, qdd_d = ref
            e = q_d - q
            v = qdd_d + kd * (qd_d - qd) + kp * e
            _check_finite(v, 'acceleration')
            prepared.inverse_dynamics(q, qd, v, tau, friction=measured)
            out = tau + friction_torques(model, qd_d) if reference else tau.copy()
            return self._command(out, e)
        return compute


def _flat_batch(x, batch, tail):
    """Return ``x`` (..., ``*tail``) broadcast to the batch shape ``batch``, as (B, ``*tail``)."""
    if x.shape[:x.ndim - len(tail)] != batch:
        x = np.broadcast_to(x, batch + tail)
    return x.reshape((-1,) + tail)


class ResolvedAcceleration(BaseLaw):
    """
    Resolved-acceleration control of the tip in task space (Luh, Walker and Paul 1980).

    With the task error ``e = [p_d - p; rotvec(R_d R^T)]``, ``e_dot = V_d - J qd`` and the task
    rows ``m`` (``mask``; default ``model.task_mask``: position, plus the orientation the arm
    can control), the joint acceleration is the damped least-squares solution of
    ``J_m qdd = A_d + Kd e_dot + Kp e - Jdot_m qd`` (rows m), plus, for redundant arms, the
    null-space damping ``-(I - J_m^+ J_m) k_null qd``. The torque is then computed torque with
    that acceleration, ``tau = M qdd + C qd + g`` (+ friction), one RNEA call. The tip is
    ``model.tip_link``; ``J`` and ``Jdot`` come from one compiled kinematics pass.

    Parameters
    ----------
    model : RobotModel
        The controller's model.
    kp : float, array_like (6,) or mapping
        Task stiffness [1/s^2] per row ``vx vy vz wx wy wz`` (a mapping names all six,
        :data:`TASK_ROWS`).
    kd : float, array_like (6,) or mapping
        Task damping [1/s].
    mask : array_like (6,), optional
        0/1 weights of the task rows; default ``model.task_mask``.
    damping : float
        Damping of the least-squares inverse [m or rad].
    null_space_damping : float
        ``k_null`` [1/s] for the self-motion of redundant arms.
    friction : str
        Friction feed-forward: ``'none'``, ``'reference'`` (at the joint velocity
        ``J_m^+ V_d`` the desired twist implies) or ``'measured'``; see :class:`Friction`.
    effort_limit, saturate
        As in :class:`PD`.

    """

    law = Law.RESOLVED_ACCELERATION
    _gain_keys = TASK_ROWS

    def __init__(self, model, kp, kd, *, mask=None, damping=TASK_DAMPING,
                 null_space_damping=NULL_SPACE_DAMPING, friction='none', effort_limit=None,
                 saturate=True):
        self._arguments = {'kp': kp, 'kd': kd, 'mask': mask, 'damping': damping,
                           'null_space_damping': null_space_damping, 'friction': friction,
                           'effort_limit': effort_limit, 'saturate': saturate}
        self.model = model
        self.kp = task_gains(kp, 'kp')
        self.kd = task_gains(kd, 'kd')
        mask = model.task_mask if mask is None else as_array(mask, (6,), 'mask').reshape(6)
        if not np.all((mask == 0.0) | (mask == 1.0)) or not mask.any():
            raise InputError(f'mask: expected six 0/1 weights with at least one 1, got {mask}')
        self.mask = np.array(mask, dtype=float)
        self.mask.setflags(write=False)
        self.rows = np.flatnonzero(self.mask)
        self.damping = float(damping)
        self.null_space_damping = float(null_space_damping)
        if self.damping < 0.0 or self.null_space_damping < 0.0:
            raise InputError('damping and null_space_damping must be >= 0')
        self.friction = choice(friction, Friction, 'friction')
        self.effort_limit = effort_limits(model, effort_limit)
        self.saturate = bool(saturate)
        self._orientation = bool(self.mask[3:].any())
        self._redundant = model.dof > self.rows.size

    def __repr__(self):
        return (f'ResolvedAcceleration({self.model.name!r}, kp={self.kp.tolist()}, '
                f'kd={self.kd.tolist()}, mask={self.mask.tolist()})')

    @property
    def gains(self):
        """Return the gains as a dict of lists (for reports and ROS parameters)."""
        return {'kp': self.kp.tolist(), 'kd': self.kd.tolist(), 'mask': self.mask.tolist()}

    def compute(self, t, q, qd, reference):
        """
        Compute the joint torques that track the desired tip motion.

        Parameters
        ----------
        t : float
            Time [s] (unused: the law has no state).
        q, qd : array_like, shape (..., n)
            Measured joint positions and velocities.
        reference : TaskPoint or tuple
            ``(pose, twist, acceleration)``: (..., 4, 4), (..., 6), (..., 6) in the base frame;
            ``None`` twist or acceleration means zero. The batch shapes of the state and of the
            reference broadcast (e.g. one state against a batch of references).

        Returns
        -------
        Command
            Torques, saturation flags, requested torques and the task error (..., 6).

        """
        model = self.model
        n = model.dof
        q, qd, (pose_d, twist_d, acc_d) = _check_inputs(
            n, q, qd, reference, '(pose, twist, acceleration), e.g. a TaskPoint')
        pose_d = as_array(pose_d, (4, 4), 'reference pose')
        twist_d = _ZERO6 if twist_d is None else as_array(twist_d, (6,), 'reference twist')
        acc_d = _ZERO6 if acc_d is None else as_array(acc_d, (6,), 'reference acceleration')
        shapes = (q.shape[:-1], pose_d.shape[:-2], twist_d.shape[:-1], acc_d.shape[:-1])
        try:
            batch = shapes[0] if shapes.count(shapes[0]) == 4 else np.broadcast_shapes(*shapes)
        except ValueError:
            raise ShapeError(f'reference: the batch shapes of the pose {shapes[1]}, twist '
                             f'{shapes[2]} and acceleration {shapes[3]} do not broadcast with q '
                             f'{shapes[0]}') from None
        q2, qd2 = _flat_batch(q, batch, (n,)), _flat_batch(qd, batch, (n,))
        pose_d = _flat_batch(pose_d, batch, (4, 4))
        twist_d, acc_d = _flat_batch(twist_d, batch, (6,)), _flat_batch(acc_d, batch, (6,))
        B = q2.shape[0]
        # one compiled pass: tip pose, Jacobian and its derivative
        T, J, Jd = kinematics._pose_and_jacobian(model, q2, None, qd2)
        rows = self.rows
        Jm = J[:, rows, :]
        bias = (Jd[:, rows, :] @ qd2[..., None])[..., 0]
        e = np.zeros((B, 6))
        e[:, :3] = pose_d[:, :3, 3] - T[:, :3, 3]
        if self._orientation:
            e[:, 3:] = matrix_to_rotvec(pose_d[:, :3, :3] @ np.swapaxes(T[:, :3, :3], -1, -2))
        e_dot = twist_d - (J @ qd2[..., None])[..., 0]
        rhs = (acc_d[:, rows] + self.kd[rows] * e_dot[:, rows]
               + self.kp[rows] * e[:, rows] - bias)
        columns = [rhs]
        redundant = self._redundant and self.null_space_damping > 0.0
        if redundant:
            # qdd = J^+ rhs + (I - J^+ J) z with z = -k_null qd
            z = -self.null_space_damping * qd2
            columns.append((Jm @ z[..., None])[..., 0])
        if self.friction is Friction.REFERENCE:
            columns.append(np.broadcast_to(twist_d, e_dot.shape)[:, rows])
        y = damped_least_squares(Jm, np.stack(columns, axis=-1), self.damping)  # all at once
        qdd = y[..., 0]
        if redundant:
            qdd = qdd + z - y[..., 1]
        _check_finite(qdd, 'acceleration')
        tau = model.inverse_dynamics(q2, qd2, qdd, friction=self.friction is Friction.MEASURED)
        if self.friction is Friction.REFERENCE:
            tau = tau + friction_torques(model, y[..., -1])
        tau = tau.reshape(batch + (n,))
        e = (e * self.mask).reshape(batch + (6,))
        if not self.saturate:
            return Command(tau, np.zeros(tau.shape, dtype=bool), tau, e)
        lim = self.effort_limit
        return Command(np.clip(tau, -lim, lim), np.abs(tau) > lim, tau, e)


class AdaptiveState(NamedTuple):
    """
    The state of an :class:`Adaptive` law.

    ``estimate`` (..., b) holds the base parameters (``Adaptive.parameter_names``; their units);
    ``time`` [s] is the time of the last call (None before the first one, when the estimate is
    not updated).
    """

    estimate: np.ndarray
    time: object


def parameter_bounds(model, base, nominal):
    """
    Return default ``(lower, upper)`` bounds (b,) of an :class:`Adaptive` law's estimate.

    The nominal base parameters ``nominal`` plus or minus ``|P| s``: ``P`` the base parameters'
    matrix (:attr:`BaseParameters.matrix`) and ``s`` a scale per full parameter of a change the
    estimate may make: for each body, the mass ``M`` of the whole arm, its first moment at the
    arm's reach ``R`` (``M R``) and inertia there (``M R^2``); for each joint, viscous friction up
    to ``effort_limit / velocity_limit`` and Coulomb friction up to ``effort_limit`` (inf for a
    joint without limits). So the box admits a payload as heavy as the arm anywhere within its
    reach, and keeps the estimate from drifting without end.
    """
    n = model.dof
    M = float(np.sum(model.mass))
    reach = float(np.sum(np.linalg.norm(model.joint_placement[:, :3, 3], axis=1))
                  + np.linalg.norm(model.frames[model.tip_link][1][:3, 3]))
    body = np.array([M] + [M * reach] * 3 + [M * reach ** 2] * 6)
    with np.errstate(divide='ignore', invalid='ignore'):
        viscous = np.where(np.isfinite(model.effort_limit / model.velocity_limit),
                           model.effort_limit / model.velocity_limit, np.inf)
    scale = np.concatenate((np.tile(body, n), viscous, model.effort_limit))
    with np.errstate(invalid='ignore'):
        half = np.nan_to_num(np.abs(base.matrix) @ scale, nan=np.inf)
    return nominal - half, nominal + half


class Adaptive(_JointLaw):
    """
    The adaptive law of Slotine and Li: computed torque whose model learns from the error.

    With the reference velocity ``qd_r = qd_d + Lambda e`` and acceleration
    ``qdd_r = qdd_d + Lambda e_dot``, the sliding variable ``s = qd_r - qd = e_dot + Lambda e``
    and the regressor ``Y(q, qd, qd_r, qdd_r)`` of
    :func:`~robot_dynamics.dynamics.slotine_li_regressor` (``M qdd_r + C(q, qd) qd_r + g`` with
    the Christoffel ``C``, so that ``dM/dt - 2C`` is skew) on the model's base parameters
    (:func:`~robot_dynamics.identification.base_parameters`, friction columns included):

        tau = Y beta + Kd s = Y beta + Kp e + Kd e_dot,    with Lambda = Kp / Kd,
        d(beta)/dt = Gamma Y^T s.

    (Slotine and Li, "On the adaptive control of robot manipulators", IJRR 6(3), 1987.) With
    ``V = s^T M s / 2 + (beta - beta_true)^T Gamma^-1 (beta - beta_true) / 2`` and the skew
    symmetry, ``dV/dt = -s^T Kd s``: the tracking error goes to zero while the estimate stays
    bounded, whatever the model's error. The update is integrated with the time between calls
    (``beta += dt Gamma Y^T s`` at each call, none at the first), and the estimate is projected
    onto the box ``bounds`` after each step (with a diagonal ``Gamma`` the box's projection in
    the metric of ``Gamma^-1``, which keeps ``dV/dt <= -s^T Kd s`` when the true parameters lie
    in the box). The friction columns use the reference velocity ``qd_d`` by default
    (``friction='reference'``: no chatter from the steep Coulomb term), the measured velocity
    (``'measured'``), or none (``'none'``: friction is not modelled). A call whose torque
    saturates keeps the previous estimate (conditional adaptation, as the PID's conditional
    integration: the applied torque is not the law's, and adapting to the error it leaves
    winds the estimate up).

    Parameters
    ----------
    model : RobotModel
        The controller's model: its kinematics, and its parameters as the first estimate.
    kp : float, array_like (n,) or mapping
        Stiffness ``Kd Lambda`` [N m/rad or N/m].
    kd : float, array_like (n,) or mapping
        Damping ``Kd`` [N m s/rad or N s/m], > 0.
    gamma : float or array_like (b,)
        Adaptation gains (the diagonal of ``Gamma``), scaled by the square of each base
        parameter's bound half-width: ``Gamma_k = gamma_k (upper_k - lower_k)^2 / 4``, so that
        one number suits every parameter [1/(N m rad) or 1/(N m)].
    friction : str
        Velocity of the friction columns: ``'reference'``, ``'measured'`` or ``'none'``.
    bounds : tuple of array_like (b,), optional
        ``(lower, upper)`` of the estimate; default :func:`parameter_bounds`.
    base : BaseParameters, optional
        Default :func:`~robot_dynamics.identification.base_parameters` of the model.
    effort_limit, saturate
        As in :class:`PD`.

    """

    law = Law.ADAPTIVE

    def __init__(self, model, kp, kd, *, gamma=DEFAULT_ADAPTATION_GAIN, friction='reference',
                 bounds=None, base=None, effort_limit=None, saturate=True):
        from .identification import base_parameters, parameters
        super().__init__(model, kp, kd, effort_limit=effort_limit, saturate=saturate)
        if np.any(self.kd <= 0.0):
            j = int(np.flatnonzero(self.kd <= 0.0)[0])
            raise InputError(f'kd[{j}] (joint {model.joint_names[j]!r}) = {self.kd[j]}: the '
                             'adaptive law needs damping > 0 (Lambda = kp / kd)')
        base = base_parameters(model) if base is None else base
        if len(base.names) != 12 * model.dof:
            raise InputError('base: expected the base parameters of this model with friction')
        self._arguments.update(gamma=gamma, friction=friction, bounds=bounds, base=base)
        self.base = base
        self.friction = choice(friction, Friction, 'friction')
        self.nominal = _frozen(base.values(parameters(model)))
        b = base.count
        if bounds is None:
            lower, upper = parameter_bounds(model, base, self.nominal)
        else:
            try:
                lower, upper = bounds
            except (TypeError, ValueError):
                raise InputError('bounds: expected (lower, upper)') from None
            lower = as_array(lower, (b,), 'bounds lower', finite=False).reshape(b)
            upper = as_array(upper, (b,), 'bounds upper', finite=False).reshape(b)
            if np.any(np.isnan(lower)) or np.any(np.isnan(upper)) or np.any(lower > upper):
                raise InputError('bounds: expected lower <= upper, no nan')
        if np.any(self.nominal < lower) or np.any(self.nominal > upper):
            k = int(np.flatnonzero((self.nominal < lower) | (self.nominal > upper))[0])
            raise InputError(f"bounds: the model's own {base.base_names[k]!r} = "
                             f'{self.nominal[k]:.6g} lies outside [{lower[k]:.6g}, '
                             f'{upper[k]:.6g}]')
        self.lower, self.upper = _frozen(lower), _frozen(upper)
        gamma = as_array(gamma, (), 'gamma')
        if gamma.ndim > 1 or gamma.size not in (1, b) or np.any(gamma < 0.0):
            raise InputError(f'gamma: expected a scalar or {b} values >= 0, got {gamma}')
        width = np.where(np.isfinite(upper - lower), 0.5 * (upper - lower),
                         np.abs(self.nominal) + 1.0)
        self.gamma = _frozen(np.broadcast_to(gamma.reshape(-1), (b,)) * width ** 2)
        with np.errstate(divide='ignore'):
            self._lambda = self.kp / self.kd
        self.state = AdaptiveState(self.nominal, None)

    @property
    def parameter_names(self):
        """Return the names of the estimated base parameters (b,)."""
        return self.base.base_names

    def reset(self, estimate=None, time=None):
        """
        Replace the state: the nominal estimate (or ``estimate``, (..., b)), no previous call.

        ``time`` [s], if given, is taken as the previous call: the next one integrates from it.
        """
        b = self.base.count
        estimate = self.nominal if estimate is None else \
            np.clip(as_array(estimate, (b,), 'estimate'), self.lower, self.upper)
        self.state = AdaptiveState(_frozen(estimate), _time(time))

    def restart(self, time=None):
        """Keep the estimate but forget the previous call time (a clock that jumped back)."""
        self.state = AdaptiveState(self.state.estimate, _time(time))

    def with_gains(self, **gains):
        """Return this law with new gains and the same estimate (:meth:`BaseLaw.with_gains`)."""
        law = super().with_gains(**gains)
        law.state = self.state
        return law

    def regressor(self, q, qd, qd_r, qdd_r, qd_d):
        """
        Return the regressor on the base parameters: ``M qdd_r + C qd_r + g`` and friction.

        Shape (..., n, b).

        The friction is taken at the velocity this law's ``friction`` names (``qd_d``: the
        reference).
        """
        Y = slotine_li_regressor(self.model, q, qd, qd_r, qdd_r)
        v = {Friction.REFERENCE: qd_d, Friction.MEASURED: qd,
             Friction.NONE: np.zeros_like(qd)}[self.friction]
        v = np.broadcast_to(v, q.shape)
        return self.base.regressor(np.concatenate((Y, friction_regressor(v)), axis=-1))

    def compute(self, t, q, qd, reference):
        """
        Compute the joint torques and advance the estimate to time ``t``.

        Arguments and result as in :meth:`PD.compute`; ``t`` [s] must not decrease between calls
        (``InputError``; after a clock jump, :meth:`restart` or :meth:`reset` first). The
        estimate broadcasts to a batch of states (each then keeps its own).
        """
        q, qd, q_d, qd_d, qdd_d = self._state(q, qd, reference)
        t, last = _call_time(t, self.state.time, 'estimate')
        e, e_dot = q_d - q, qd_d - qd
        s = e_dot + self._lambda * e
        qd_r = np.broadcast_to(qd_d + self._lambda * e, q.shape)
        qdd_r = np.broadcast_to(qdd_d + self._lambda * e_dot, q.shape)
        Y = self.regressor(q, qd, qd_r, qdd_r, qd_d)
        previous = estimate = self.state.estimate
        if last is not None:
            rate = np.einsum('...ik,...i->...k', Y, s) * self.gamma
            estimate = np.clip(estimate + (t - last) * rate, self.lower, self.upper)
        _check_finite(estimate, 'parameter estimate')
        tau = np.einsum('...ik,...k->...i', Y, estimate) + self.kd * s
        if self.saturate and last is not None:
            # conditional adaptation: a clipped torque is not the law's, and adapting to the
            # error it leaves winds the estimate up; states that saturate keep their estimate
            saturated = np.any(np.abs(tau) > self.effort_limit, axis=-1, keepdims=True)
            if np.any(saturated):
                estimate = np.where(saturated, np.broadcast_to(previous, estimate.shape),
                                    estimate)
                tau = np.einsum('...ik,...k->...i', Y, estimate) + self.kd * s
        self.state = AdaptiveState(estimate, t)
        return self._command(tau, e)


def _frozen(x):
    arr = np.array(x, dtype=float)
    arr.setflags(write=False)
    return arr


_CLASSES = {Law.PD: PD, Law.PD_GRAVITY: PDGravity, Law.PID: PID,
            Law.COMPUTED_TORQUE: ComputedTorque, Law.RESOLVED_ACCELERATION: ResolvedAcceleration,
            Law.ADAPTIVE: Adaptive, Law.OPERATIONAL_SPACE: OperationalSpace}


def make_law(law, model, **parameters):
    """
    Build a control law by name.

    Parameters
    ----------
    law : str or Law
        ``'pd'``, ``'pd_gravity'``, ``'pid'``, ``'computed_torque'``,
        ``'resolved_acceleration'``, ``'adaptive'`` or ``'operational_space'``
        (:class:`robot_dynamics.task_space.OperationalSpace`).
    model : RobotModel
        The controller's model.
    **parameters
        The keyword arguments of that law's class (``kp``, ``kd``, ...).

    Returns
    -------
    PD, PDGravity, PID, ComputedTorque, ResolvedAcceleration, Adaptive or OperationalSpace

    """
    return _CLASSES[choice(law, Law, 'law')](model, **parameters)


# ---- the catalogue: laws with gains from a natural frequency ------------------------------------

#: Default natural frequency [rad/s] and damping ratio of the closed-loop error dynamics.
DEFAULT_NATURAL_FREQUENCY = 20.0
DEFAULT_DAMPING_RATIO = 1.0
#: The joint laws whose gains follow from a natural frequency (:func:`default_law`): what
#: ``robot-dynamics simulate --controller`` and the controller node's ``control_law`` offer.
LAWS = tuple(law.value for law in (Law.PD, Law.PD_GRAVITY, Law.PID, Law.COMPUTED_TORQUE,
                                   Law.ADAPTIVE))
#: Integral time of the default PID in units of ``1 / wn``: ``ki = kp wn / PID_INTEGRAL_TIME``.
#: The loop needs ``ki < kp kd / m`` at the joint's largest inertia ``m``, which the gains'
#: inertia (at the middle of the ranges) can underestimate 24-fold (the iiwa14's first joint):
#: 30 keeps it stable up to 60-fold (:mod:`robot_dynamics.gains`).
PID_INTEGRAL_TIME = 30.0


def default_law(law, model, q_home, *, natural_frequency=DEFAULT_NATURAL_FREQUENCY,
                damping_ratio=DEFAULT_DAMPING_RATIO, friction=True,
                adaptation_gain=DEFAULT_ADAPTATION_GAIN):
    """
    Build a joint control law with gains for the error dynamics ``e'' + 2 zeta wn e' + wn^2 e``.

    Computed torque takes ``(wn^2, 2 zeta wn)`` directly, with the model's friction fed forward
    at the reference velocity if ``friction``. PD, PD + gravity, PID and the adaptive law take
    them scaled by the diagonal of the controller's mass matrix at ``q_home`` (N m/rad,
    N m s/rad), the same nominal bandwidth for a decoupled arm, so the laws compare fairly; the
    PID adds gravity compensation and ``ki = kp wn / PID_INTEGRAL_TIME``; the adaptive law
    (Slotine and Li) learns at ``adaptation_gain`` and estimates friction if ``friction``.
    """
    law = choice(law, Law, 'controller', allowed=LAWS)
    kp, kd = critically_damped(natural_frequency, damping_ratio)
    if law is Law.COMPUTED_TORQUE:
        return make_law(law, model, kp=kp, kd=kd,
                        friction='reference' if friction else 'none')
    inertia = np.diag(model.mass_matrix(q_home))
    if law is Law.ADAPTIVE:
        return make_law(law, model, kp=kp * inertia, kd=kd * inertia,
                        gamma=adaptation_gain, friction='reference' if friction else 'none')
    if law is Law.PID:
        # gravity compensated, the integral only removes what the model gets wrong
        return make_law(law, model, kp=kp * inertia, kd=kd * inertia,
                        ki=kp * inertia * natural_frequency / PID_INTEGRAL_TIME,
                        gravity_compensation=True)
    return make_law(law, model, kp=kp * inertia, kd=kd * inertia)


def configured_law(model, parameter):
    """
    Return the joint law that the controller node's parameters describe.

    ``parameter(name, default)`` gives ``control_law``, ``natural_frequency``,
    ``damping_ratio``, ``friction_compensation``, ``adaptation_gain`` and each joint's
    ``gains.<joint>.<kp|kd|ki>``; a gain's default is :func:`default_law`'s at the middle
    of the joint ranges. The controller node (which declares each gain as it is asked for) and
    the library's loop (:func:`robot_dynamics.closed_loop.graph_loop`) both build it here.
    """
    law = default_law(parameter('control_law', Law.COMPUTED_TORQUE.value), model,
                      middle(model.lower, model.upper),
                      natural_frequency=parameter('natural_frequency', DEFAULT_NATURAL_FREQUENCY),
                      damping_ratio=parameter('damping_ratio', DEFAULT_DAMPING_RATIO),
                      friction=parameter('friction_compensation', True),
                      adaptation_gain=parameter('adaptation_gain', DEFAULT_ADAPTATION_GAIN))
    return law.with_gains(**{
        gain: {j: float(parameter(f'gains.{j}.{gain}', float(getattr(law, gain)[i])))
               for i, j in enumerate(model.joint_names)}
        for gain in law.gain_names})
