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
Excitation trajectories for identification: periodic joint motions that excite the dynamics.

Each joint follows a finite Fourier series (Swevers, Ganseman, Tukel, De Schutter and Van
Brussel, "Optimal robot excitation and identification", IEEE TRA 13(5), 1997, eq 5):
``qd_j(t) = sum_l a_lj cos(l w t) + b_lj sin(l w t)`` for the harmonics ``l = 1..L`` of the
fundamental ``w = 2 pi / period``, so that

    q_j(t) = start_j + sum_l (a_lj sin(l w t) + b_lj (1 - cos(l w t))) / (l w).

Here every series starts at rest at ``start``: ``sum_l a_lj = 0`` (no velocity) and
``sum_l l b_lj = 0`` (no acceleration) at ``t = 0``, and so, being periodic, it also ends at
rest at ``start`` after any whole number of periods. The coefficients live in the null space of
those two conditions and are chosen by :func:`optimise` (``scipy.optimize.minimize``, SLSQP,
from seeded random coefficients: deterministic) to minimise the condition number of the base
regressor (:mod:`robot_dynamics.identification`, friction included) over one period, within:

- the position limits, less ``POSITION_MARGIN`` of each joint's range at either end (``start
  +- UNLIMITED_HALF_RANGE`` for joints without finite limits);
- ``VELOCITY_FRACTION`` of the velocity limits;
- acceleration limits derived from the effort limits by :func:`acceleration_limits`;
- ``EFFORT_FRACTION`` of the effort limits for the torques the model predicts (with friction),
  leaving the rest to the controller's feedback;

each checked at ``CONSTRAINT_SAMPLES`` instants of a period (and by
:func:`robot_dynamics.trajectory.check_limits` afterwards, between them as well).

:meth:`Excitation.points` samples the motion as the points of a
``trajectory_msgs/JointTrajectory`` (positions, velocities and accelerations: the controller's
follower interpolates them by quintic Hermite splines, exact to the series' smoothness) after a
``lead_in``: the follower starts from where the arm is and moves it to ``start`` at rest first.
"""

import dataclasses

import numpy as np
from scipy.linalg import null_space

from .errors import as_array, InputError
from .identification import base_parameters, regressor
from .limits import middle
from .trajectory import from_waypoints, TrajectoryPoint

#: Default fundamental period [s] and number of harmonics (Swevers et al. 1997 use 0.1 Hz, 5).
DEFAULT_PERIOD = 10.0
DEFAULT_HARMONICS = 5
#: Default duration [s]: whole periods of the series, repeated (averaging out noise).
DEFAULT_DURATION = 30.0
#: Fraction of each joint's range kept free at either limit.
POSITION_MARGIN = 0.05
#: Half range [rad or m] around the start of a joint without finite limits.
UNLIMITED_HALF_RANGE = np.pi / 2
#: Largest fraction of the velocity limits.
VELOCITY_FRACTION = 0.8
#: Largest fraction of the effort limits: for the torques along the motion, and for the
#: acceleration limits of :func:`acceleration_limits`.
EFFORT_FRACTION = 0.5
#: Instants per period at which the limits are enforced, and at which the condition number is
#: evaluated.
CONSTRAINT_SAMPLES = 200
OBJECTIVE_SAMPLES = 60
#: Random configurations over which :func:`acceleration_limits` takes each joint's inertia.
INERTIA_SAMPLES = 200
#: Iterations of the optimiser, and random starts (the best one is optimised).
MAX_ITERATIONS = 100
RANDOM_STARTS = 5
#: Fraction of the largest feasible amplitude at which a random start is taken.
START_SCALE = 0.9
#: Default rate [Hz] of :meth:`Excitation.points`, and the lead-in [s] before the series.
POINT_RATE = 50.0
LEAD_IN = 2.0


def acceleration_limits(model, *, effort_fraction=EFFORT_FRACTION, samples=INERTIA_SAMPLES,
                        seed=0):
    """
    Return an acceleration limit per joint (n,) [rad/s^2 or m/s^2] from the effort limits.

    ``effort_fraction * effort_limit_j / max_q M_jj(q)``: the acceleration joint j reaches alone
    with that fraction of its effort where its own inertia ``M_jj`` is largest (over ``samples``
    random configurations within the limits); the rest of the effort is left to gravity,
    friction, the coupling of the other joints and the feedback. Joints without an effort limit
    get none (inf).
    """
    from .identification import random_states
    q, _, _ = random_states(model, samples, seed)
    inertia = np.diagonal(model.mass_matrix(q), axis1=-2, axis2=-1).max(axis=0)
    with np.errstate(divide='ignore'):
        return effort_fraction * model.effort_limit / inertia


def log_condition(W):
    """
    Return ``log10`` of the condition number of ``W`` (rows, b), inf when rank deficient.

    From the eigenvalues of ``W^T W`` (b, b): half the log of their ratio. Squaring loses
    nothing below condition numbers of about 1e6, and a small symmetric eigenproblem is much
    cheaper than the SVD of ``W`` (which a loaded machine's threaded BLAS slows down tenfold).
    """
    eigenvalues = np.linalg.eigvalsh(W.T @ W)
    if not eigenvalues[0] > 0.0:
        return np.inf
    return 0.5 * np.log10(eigenvalues[-1] / eigenvalues[0])


def _bases(t, period, harmonics):
    """Return the position, velocity and acceleration bases (K, L) of the sine and cosine terms."""
    w = 2.0 * np.pi / period
    lw = w * np.arange(1, harmonics + 1)
    phase = np.asarray(t, dtype=float)[..., None] * lw
    s, c = np.sin(phase), np.cos(phase)
    return (s / lw, (1.0 - c) / lw), (c, s), (-lw * s, lw * c)


@dataclasses.dataclass(frozen=True)
class Excitation:
    """
    A periodic excitation: Fourier coefficients from :func:`optimise`, and how they were chosen.

    Attributes
    ----------
    joint_names : tuple of str
        The joints, in model order.
    start : numpy.ndarray, shape (n,)
        Where it starts and ends, at rest [rad or m].
    period : float
        Period [s] of the fundamental.
    periods : int
        Number of periods in the motion.
    a, b : numpy.ndarray, shape (L, n)
        Velocity amplitudes [rad/s or m/s] of the cosine and sine terms per harmonic and joint.
    condition_number : float
        Of the base regressor over one period (with friction).
    acceleration_limit : numpy.ndarray, shape (n,)
        The acceleration limits used.

    """

    joint_names: tuple
    start: np.ndarray
    period: float
    periods: int
    a: np.ndarray
    b: np.ndarray
    condition_number: float
    acceleration_limit: np.ndarray

    @property
    def duration(self):
        """Return the duration of the motion [s]."""
        return self.period * self.periods

    def sample(self, t):
        """
        Return the motion at times ``t`` (...,) [s] as a :class:`TrajectoryPoint` of (..., n).

        Times outside ``[0, duration]`` hold the start at rest.
        """
        t = np.asarray(t, dtype=float)
        (ps, pc), (vs, vc), (as_, ac) = _bases(t, self.period, self.a.shape[0])
        inside = ((t >= 0.0) & (t <= self.duration))[..., None]
        q = self.start + np.where(inside, ps @ self.a + pc @ self.b, 0.0)
        qd = np.where(inside, vs @ self.a + vc @ self.b, 0.0)
        qdd = np.where(inside, as_ @ self.a + ac @ self.b, 0.0)
        return TrajectoryPoint(q, qd, qdd)

    def points(self, rate=POINT_RATE, lead_in=LEAD_IN):
        """
        Return the points ``(time_from_start (K,), positions, velocities, accelerations (K, n))``.

        Sampled every ``1 / rate`` seconds from ``lead_in`` (at ``start``, at rest) to
        ``lead_in + duration`` (at ``start`` again, at rest). A controller that follows them
        from elsewhere reaches ``start`` at rest at ``lead_in``.
        """
        if not (np.isfinite(rate) and rate > 0.0):
            raise InputError(f'rate: expected a positive number of points per second, got {rate}')
        if not (np.isfinite(lead_in) and lead_in >= 0.0):
            raise InputError(f'lead_in: expected a time >= 0 s, got {lead_in}')
        count = int(round(self.duration * rate))
        t = self.duration * np.arange(count + 1) / count
        point = self.sample(t)
        return lead_in + t, point.q, point.qd, point.qdd

    def trajectory(self, rate=POINT_RATE, lead_in=LEAD_IN):
        """Return the :class:`~robot_dynamics.trajectory.JointTrajectory` of :meth:`points`."""
        return from_waypoints(*self.points(rate, lead_in))


def _limits(model, start):
    """Return the lower and upper position limits and the velocity limits the motion keeps."""
    finite = np.isfinite(model.lower) & np.isfinite(model.upper)
    margin = np.where(finite, POSITION_MARGIN * (model.upper - model.lower), 0.0)
    lower = np.where(finite, model.lower + margin,
                     np.maximum(model.lower, start - UNLIMITED_HALF_RANGE))
    upper = np.where(finite, model.upper - margin,
                     np.minimum(model.upper, start + UNLIMITED_HALF_RANGE))
    bad = (start < lower) | (start > upper)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise InputError(f'start: joint {model.joint_names[j]!r} at {start[j]:.6g} is within '
                         f'{POSITION_MARGIN:g} of its range from a limit [{model.lower[j]:g}, '
                         f'{model.upper[j]:g}]: start further inside')
    return lower, upper, VELOCITY_FRACTION * model.velocity_limit


def optimise(model, *, start=None, duration=DEFAULT_DURATION, period=DEFAULT_PERIOD,
             harmonics=DEFAULT_HARMONICS, seed=0, base=None, max_iterations=MAX_ITERATIONS):
    """
    Find an excitation of ``model`` that conditions its base regressor well (Swevers 1997).

    Parameters
    ----------
    model : RobotModel
        The arm: kinematics, limits, and dynamics for the torques.
    start : array_like, shape (n,), optional
        Where the motion starts and ends, at rest; default the middle of the limits
        (:func:`robot_dynamics.limits.middle`).
    duration : float
        Length of the motion [s]: a whole number of periods, as near ``period`` as that allows.
    period : float
        Wanted period [s] of the fundamental.
    harmonics : int
        Number of harmonics ``L`` (>= 2: one cannot start and end at rest).
    seed : int
        Seed of the random starting coefficients.
    base : BaseParameters, optional
        Default :func:`robot_dynamics.identification.base_parameters` of the model.
    max_iterations : int
        Iterations of the optimiser.

    Returns
    -------
    Excitation

    Raises
    ------
    InputError
        For a start outside the reachable range or a duration shorter than a few points, or
        when no motion fits the effort limits at ``start``.

    """
    n = model.dof
    start = middle(model.lower, model.upper) if start is None else \
        as_array(start, (n,), 'start').reshape(n)
    if not (np.isfinite(duration) and duration > 0.0 and np.isfinite(period) and period > 0.0):
        raise InputError(f'duration and period: expected positive seconds, got {duration}, '
                         f'{period}')
    if int(harmonics) != harmonics or harmonics < 2:
        raise InputError(f'harmonics: expected an integer >= 2, got {harmonics}')
    harmonics = int(harmonics)
    periods = max(1, int(round(duration / period)))
    period = duration / periods
    base = base_parameters(model) if base is None else base
    accel = acceleration_limits(model)
    lower, upper, velocity = _limits(model, start)
    # coefficients (a, b) of one joint = N z: the null space of "at rest at t = 0"
    rest = np.zeros((2, 2 * harmonics))
    rest[0, :harmonics] = 1.0
    rest[1, harmonics:] = np.arange(1, harmonics + 1)
    N = null_space(rest)                                       # (2L, 2L - 2)
    m = N.shape[1]

    def basis(samples):
        t = period * np.arange(samples) / samples
        return [np.hstack(pair) @ N for pair in _bases(t, period, harmonics)]   # 3 x (K, m)

    Pq, Pv, Pa = basis(CONSTRAINT_SAMPLES)
    Oq, Ov, Oa = basis(OBJECTIVE_SAMPLES)

    def motion(z, Q, V, A):
        Z = z.reshape(n, m).T                                  # (m, n)
        return start + Q @ Z, V @ Z, A @ Z

    # linear constraints G z <= h, per joint: position, velocity, acceleration, both signs
    G, h = [], []
    for j in range(n):
        for M, lo, hi in ((Pq, lower[j] - start[j], upper[j] - start[j]),
                          (Pv, -velocity[j], velocity[j]), (Pa, -accel[j], accel[j])):
            rows = np.zeros((M.shape[0], n * m))
            rows[:, j * m:(j + 1) * m] = M
            for sign, bound in ((1.0, hi), (-1.0, -lo)):
                if np.isfinite(bound):
                    G.append(sign * rows)
                    h.append(np.full(M.shape[0], bound))
    G, h = np.vstack(G), np.concatenate(h)
    effort = EFFORT_FRACTION * model.effort_limit
    limited = np.isfinite(effort)

    def torque_margin(z):
        q, qd, qdd = motion(z, Pq, Pv, Pa)
        tau = np.abs(model.inverse_dynamics(q, qd, qdd, friction=True))
        return (effort - tau)[:, limited].ravel()

    def objective(z):
        q, qd, qdd = motion(z, Oq, Ov, Oa)
        W = base.regressor(regressor(model, q, qd, qdd)[..., :len(base.names)])
        return log_condition(W.reshape(-1, base.count))

    hold = np.abs(model.gravity_torques(start)) / model.effort_limit
    if np.any(hold > EFFORT_FRACTION):
        j = int(np.argmax(hold))
        raise InputError(f'holding still at start needs {hold[j]:.3g} of the effort limit of '
                         f'joint {model.joint_names[j]!r}, more than {EFFORT_FRACTION:g}: start '
                         'elsewhere')
    rng = np.random.default_rng(seed)
    best = None
    for _ in range(RANDOM_STARTS):
        # each joint as large as its own limits allow (the linear constraints are per joint)
        z = rng.normal(size=(n, m))
        for j in range(n):
            own = np.zeros((n, m))
            own[j] = z[j]
            grow = G @ own.ravel()
            with np.errstate(divide='ignore', invalid='ignore'):
                z[j] *= START_SCALE * min(np.min(np.where(grow > 0.0, h / grow, np.inf)), 1e6)
        z = z.ravel()
        while limited.any() and np.any(torque_margin(z) < 0.0):
            z *= 0.5
        value = objective(z)
        if best is None or value < best[0]:
            best = value, z
    constraints = [{'type': 'ineq', 'fun': lambda z: h - G @ z, 'jac': lambda z: -G}]
    if limited.any():
        constraints.append({'type': 'ineq', 'fun': torque_margin})
    from scipy.optimize import minimize     # here: see signals.lowpass
    result = minimize(objective, best[1], method='SLSQP', constraints=constraints,
                      options={'maxiter': int(max_iterations), 'ftol': 1e-6})
    z = result.x
    # SLSQP may end a hair outside a constraint: keep the start's feasible point then
    if np.any(G @ z > h + 1e-9) or (limited.any() and np.any(torque_margin(z) < -1e-9)) \
            or not objective(z) <= best[0]:
        z = best[1]
    coefficients = (N @ z.reshape(n, m).T)                      # (2L, n)
    frozen = {}
    for name, value in (('start', start), ('a', coefficients[:harmonics]),
                        ('b', coefficients[harmonics:]), ('acceleration_limit', accel)):
        value = np.array(value, dtype=float)
        value.setflags(write=False)
        frozen[name] = value
    return Excitation(tuple(model.joint_names), frozen['start'], float(period), periods,
                      frozen['a'], frozen['b'], float(10.0 ** objective(z)),
                      frozen['acceleration_limit'])
