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
Time scaling of a joint path under a model's actuator limits.

:func:`time_scale` finds the fastest uniform time scaling ``t -> t0 + k (t - t0)`` of a joint
path whose inverse dynamics stays within the effort and velocity limits of a model: the dynamic
scaling of Hollerbach ("Dynamic scaling of manipulator trajectories", ASME J. Dynamic Systems,
Measurement, and Control 106(1), 1984), in closed form over every sample of the path at once.
:class:`TimeScaledTrajectory` replays any trajectory scaled (:meth:`JointTrajectory.time_scaled
<robot_dynamics.trajectory.JointTrajectory.time_scaled>` does it exactly for a polynomial).

Times are in seconds, torques in N m (revolute) or N (prismatic).
"""

from typing import NamedTuple

import numpy as np

from .dynamics import friction_torques
from .errors import as_array, InputError, ShapeError
from .trajectory import JointTrajectory, TrajectoryPoint

#: Default number of samples along a path for :func:`time_scale`.
TIME_SCALE_SAMPLES = 1001
#: Default relative margin kept below the limits by :func:`time_scale`.
TIME_SCALE_MARGIN = 1e-3


class TimeScalingReport(NamedTuple):
    """
    Result of :func:`time_scale`, besides the scaled trajectory.

    Attributes
    ----------
    factor : float
        ``k``: the scaled trajectory takes ``k`` times as long (< 1 means it was sped up).
    duration : float
        Duration [s] of the scaled trajectory.
    binding_joint : str or None
        Name of the joint whose limit sets ``k`` (None when nothing moves).
    binding_index : int
        Its index (-1 when nothing moves).
    binding_limit : str
        ``'effort'`` or ``'velocity'`` (``''`` when nothing moves).
    binding_time : float
        Time [s] on the scaled trajectory where that limit is reached.
    effort_ratio : numpy.ndarray, shape (n,)
        Peak ``|tau_i| / effort_limit_i`` over the samples, after scaling: the model's inverse
        dynamics (with its friction if asked) along the scaled path.
    velocity_ratio : numpy.ndarray, shape (n,)
        Peak ``|qd_i| / velocity_limit_i`` over the samples, after scaling.

    """

    factor: float
    duration: float
    binding_joint: object
    binding_index: int
    binding_limit: str
    binding_time: float
    effort_ratio: np.ndarray
    velocity_ratio: np.ndarray


def _first_positive_root(p, r, s):
    """
    Return the smallest ``x > 0`` with ``p x^2 + r x + s = 0`` (inf if none), elementwise.

    Uses the cancellation-free forms ``2 s / (-r -+ sqrt(r^2 - 4 p s))``.
    """
    with np.errstate(divide='ignore', invalid='ignore'):
        disc = r * r - 4.0 * p * s
        root = np.sqrt(np.where(disc >= 0.0, disc, np.nan))
        x1 = 2.0 * s / (-r - root)
        x2 = 2.0 * s / (-r + root)
    x1 = np.where(np.isfinite(x1) & (x1 > 0.0), x1, np.inf)
    x2 = np.where(np.isfinite(x2) & (x2 > 0.0), x2, np.inf)
    return np.minimum(x1, x2)


class TimeScaledTrajectory:
    """
    Any trajectory (an object with ``sample``, ``start_time``, ``end_time``) slowed by ``factor``.

    ``sample(t)`` returns the base trajectory at ``t0 + (t - t0) / k`` with velocities divided by
    ``k`` and accelerations by ``k^2``. :func:`time_scale` uses
    :meth:`~robot_dynamics.trajectory.JointTrajectory.time_scaled` instead when it can (an exact
    piecewise polynomial).
    """

    def __init__(self, base, factor):
        k = float(factor)
        if not (np.isfinite(k) and k > 0.0):
            raise InputError(f'factor: expected a positive number, got {factor!r}')
        self.base = base
        self.factor = k

    @property
    def start_time(self):
        """Time of the first point [s]."""
        return float(self.base.start_time)

    @property
    def end_time(self):
        """Time of the last point [s]."""
        return self.start_time + (float(self.base.end_time) - self.start_time) * self.factor

    @property
    def duration(self):
        """``end_time - start_time`` [s]."""
        return self.end_time - self.start_time

    def sample(self, t):
        """Evaluate ``q, qd, qdd`` at ``t`` (the base trajectory checks the times)."""
        k = self.factor
        t0 = self.start_time
        q, qd, qdd = self.base.sample(t0 + (np.asarray(t, dtype=float) - t0) / k)
        return TrajectoryPoint(q, qd / k, qdd / (k * k))


def time_scale(trajectory, model, *, samples=TIME_SCALE_SAMPLES, margin=TIME_SCALE_MARGIN,
               velocity_margin=None, friction=False, gravity=None):
    """
    Fastest uniform time scaling of a joint path within the model's effort and velocity limits.

    Along a fixed path the scaled motion ``q_k(t) = q(t0 + (t - t0) / k)`` has ``qd / k`` and
    ``qdd / k^2``, so with ``x = 1 / k`` its inverse dynamics is ``tau = a x^2 + b x + c`` with
    ``a = M qdd + C(q, qd) qd`` (RNEA without gravity) and ``c = g(q)`` (Hollerbach 1984). With
    ``friction``, the model's :func:`~robot_dynamics.dynamics.friction_torques` of the scaled
    velocity ``x qd`` is added: its viscous part is ``b x = damping qd x``, and its Coulomb part is
    taken at its limit ``friction sign(qd)`` (smoothing 0), the same at every ``x`` since a scaling
    changes every speed but no sign. For each sample and joint the largest ``x`` keeping
    ``|tau| <= (1 - margin) effort`` on all of ``[0, x]`` is the first positive root of a
    quadratic; with ``|qd| x <= (1 - margin) vmax`` too, ``k = 1 / min x``. Two batch RNEA calls
    over the whole path, no iteration.

    Parameters
    ----------
    trajectory : JointTrajectory or object with ``sample``, ``start_time`` and ``end_time``
        The path and its nominal timing.
    model : RobotModel
        Gives ``effort_limit`` [N m or N], ``velocity_limit`` [rad/s or m/s] and the dynamics.
    samples : int
        Uniform samples along the path (segment boundaries are added).
    margin : float
        Relative margin in [0, 1) kept below every effort limit (the binding ratio becomes
        ``1 - margin``), to cover the behaviour between samples.
    velocity_margin : float, optional
        The same for the velocity limits; default ``margin``.
    friction : bool
        Include the model's viscous and Coulomb friction in the torques.
    gravity : array_like, shape (3,), optional
        Gravity [m/s^2] in the base frame; default ``model.gravity``.

    Returns
    -------
    scaled : JointTrajectory or TimeScaledTrajectory
        The path with its timing stretched (or compressed) by ``report.factor``.
    report : TimeScalingReport
        The factor, the binding joint and limit, and the peak limit ratios after scaling.

    Raises
    ------
    InputError
        If gravity (and friction) alone exceed a joint's effort limit somewhere on the path:
        no time scaling can help then.

    """
    n = model.dof
    if getattr(trajectory, 'dof', n) != n:
        raise ShapeError(f'trajectory: has {trajectory.dof} joints, the model {n}')
    samples = int(samples)
    if samples < 2:
        raise InputError(f'samples: expected >= 2, got {samples}')
    if velocity_margin is None:
        velocity_margin = margin
    for name, value in (('margin', margin), ('velocity_margin', velocity_margin)):
        if not 0.0 <= value < 1.0:
            raise InputError(f'{name}: expected a value in [0, 1), got {value}')
    t0, t1 = float(trajectory.start_time), float(trajectory.end_time)
    t = np.linspace(t0, t1, samples)
    if isinstance(trajectory, JointTrajectory):
        t = np.unique(np.concatenate((t, trajectory.breaks)))
    q, qd, qdd = trajectory.sample(t)
    g = model.gravity if gravity is None else as_array(gravity, (3,), 'gravity')
    a = model.inverse_dynamics(q, qd, qdd, gravity=np.zeros(3))
    hold = model.gravity_torques(q, gravity=g)
    b, c = np.zeros_like(a), hold
    if friction:
        # friction_torques(model, x qd) = b x + its Coulomb part, which at its limit
        # (smoothing 0) is the same at every x > 0
        b = model.damping * qd
        c = hold + friction_torques(model, qd, smoothing=0.0) - b
    effort = model.effort_limit * (1.0 - margin)
    vmax = model.velocity_limit * (1.0 - velocity_margin)
    over = np.abs(c) > effort
    if over.any():
        k, j = np.argwhere(over)[0]
        raise InputError(f'time_scale: holding the path needs {c[k, j]:.4g} at joint '
                         f'{model.joint_names[j]!r} (t = {t[k]:.4g} s) against an effort limit '
                         f'of {model.effort_limit[j]:.4g} (margin {margin}): gravity alone '
                         'exceeds it, no time scaling can help')
    # largest x = 1/k per sample and joint: upper bound tau <= L, lower bound tau >= -L
    x_upper = _first_positive_root(a, b, c - effort)
    x_lower = _first_positive_root(-a, -b, -c - effort)
    with np.errstate(divide='ignore'):
        x_vel = np.where(qd != 0.0, vmax / np.abs(qd), np.inf)
    x_all = np.stack((np.minimum(x_upper, x_lower), x_vel))  # (2, K, n)
    x_min = x_all.min()
    if not np.isfinite(x_min):
        zero = np.zeros(n)
        return trajectory, TimeScalingReport(1.0, t1 - t0, None, -1, '', t0, zero, zero)
    which, ks, j = np.unravel_index(int(np.argmin(x_all)), x_all.shape)
    factor = 1.0 / x_min
    if isinstance(trajectory, JointTrajectory):
        scaled = trajectory.time_scaled(factor)
    else:
        scaled = TimeScaledTrajectory(trajectory, factor)
    tau = a * x_min ** 2 + hold
    if friction:
        tau += friction_torques(model, x_min * qd)
    effort_ratio = np.max(np.abs(tau), axis=0) / model.effort_limit
    velocity_ratio = np.max(np.abs(qd), axis=0) * x_min / model.velocity_limit
    report = TimeScalingReport(factor=float(factor), duration=float((t1 - t0) * factor),
                               binding_joint=model.joint_names[j], binding_index=int(j),
                               binding_limit=('effort', 'velocity')[which],
                               binding_time=float(t0 + (t[ks] - t0) * factor),
                               effort_ratio=effort_ratio, velocity_ratio=velocity_ratio)
    return scaled, report
