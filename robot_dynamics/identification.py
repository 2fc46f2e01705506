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
Identification of an arm's dynamic parameters from measured motion and joint torques.

The joint torques are linear in the parameters (Spong, Hutchinson and Vidyasagar, Robot
Modeling and Control, 2nd ed., 2020, §6.5.3): ``tau = Y(q, qd, qdd) theta`` with, per body, the
ten inertial parameters of :func:`robot_dynamics.dynamics.inertial_parameters` (mass, first
moment, inertia about the joint frame origin) and, per joint, the viscous and Coulomb friction
of the URDF's ``<dynamics damping friction>`` (:func:`robot_dynamics.dynamics.friction_torques`,
with its smooth sign). :func:`regressor` and :func:`parameters` hold all ``12 n`` of them,
named by :func:`parameter_names` (``'link2.m'``, ``'joint1.damping'``, ...).

Not all of them act on the torques: the joints constrain the bodies, so some parameters never
appear and others only in fixed combinations. The identifiable combinations are the *base
parameters* (Gautier and Khalil, "Direct calculation of minimum set of inertial parameters of
serial robots", IEEE TRA 6(3), 1990; Gautier, "Numerical calculation of the base inertial
parameters of robots", J. Robotic Systems 8(4), 1991), found numerically by
:func:`base_parameters`: the regressor stacked at random states, its columns scaled to unit
length, a QR decomposition with column pivoting; the rank is the number of pivots
``|R_kk| > RANK_TOLERANCE``; the independent columns ``W_1`` span every other one,
``W_2 = W_1 K``, so that ``tau = W_1 beta`` with ``beta = theta_1 + K theta_2``
(:class:`BaseParameters`).

:func:`estimate` fits the base parameters to samples ``(q, qd, qdd, tau)`` by weighted least
squares with per-joint weights from the residuals of an ordinary fit, repeated until they
settle (Gautier, "Dynamic identification of robots with power model", ICRA 1997; Gautier and
Poignet, 2001), and gives each estimate's standard deviation and the base regressor's
condition number.
:func:`consistent_model` turns an estimate into a full, physically consistent model (positive
mass, inertia about the COM positive definite with the triangle inequality, friction >= 0):
each body's pseudo-inertia ``J = [[tr(I)/2 1 - I, h], [h^T, m]]`` (Wensing, Kim and Slotine,
"Linear matrix inequalities for physically consistent inertial parameter identification",
IEEE RA-L 3(1), 2017: ``J`` positive definite is exactly that) is written as ``J = U U^T`` with
the log-Cholesky parameters of ``U`` (Rucker and Wensing, "Smooth parameterization of rigid-body
inertia", IEEE RA-L 7(2), 2022), which are unconstrained; ``scipy.optimize.least_squares``
then finds a set near the base parameters, regularised towards the nominal model in the
directions the data cannot see, and steps that keep every ``J`` positive definite (inside its
Dikin ellipsoid) meet them exactly where a consistent set can. :func:`identify` does both.

Units: SI. Torques are N m (revolute) or N (prismatic); parameters kg, kg m, kg m^2, N m s/rad
and N m (N s/m and N for prismatic joints).
"""

import dataclasses
from typing import NamedTuple

import numpy as np
from scipy.linalg import qr, solve_triangular

from .dynamics import (COULOMB_VELOCITY_SCALE, friction_regressor, INERTIAL_PARAMETER_NAMES,
                       regressor as inertial_regressor)
from .errors import as_joint_array, InputError, ShapeError
from .kinematics import states
from .urdf import body_links

#: Number of random states whose stacked regressor decides the base parameters.
BASE_SAMPLES = 100
#: A pivot of the column-normalised regressor's QR decomposition counts (the column is
#: independent of the ones before it) when ``|R_kk| > RANK_TOLERANCE``; the bundled robots' kept
#: pivots are above 1e-3 and their dropped ones below 1e-13.
RANK_TOLERANCE = 1e-8
#: Half range [rad] of the random positions of a joint without finite limits.
UNLIMITED_HALF_RANGE = np.pi
#: Joint rows with a speed below this [rad/s or m/s] are left out of the fit by default:
#: there the measured Coulomb friction (stiction) is anything within ``+-friction``.
MIN_VELOCITY = 0.01
#: Largest number of least-squares fits of :func:`estimate`, each weighted by the per-joint
#: residuals of the one before, and the relative change of the weights that ends them.
WEIGHT_ITERATIONS = 10
WEIGHT_TOLERANCE = 1e-3
#: Regularisation weights of :func:`consistent_model`'s least-squares fit, in turn (each stage
#: starts where the previous one ended), and its residual evaluations per stage at most.
REGULARISATION = (1e-2, 1e-4)
STAGE_EVALUATIONS = 1000
#: Steps of :func:`consistent_model`'s last stage at most, and the fraction of the Dikin
#: ellipsoid a step that would leave the consistent set is shortened to.
WALK_STEPS = 100
WALK_RADIUS = 0.5
#: Smallest eigenvalue of a nominal pseudo-inertia, relative to the largest of the arm's, that
#: :func:`consistent_model` starts from (point masses and massless bodies are made solid), and
#: the smallest friction, relative to the largest parameter.
PSEUDO_INERTIA_FLOOR = 1e-6
FRICTION_FLOOR = 1e-9


# ---- the parameters and their regressor ---------------------------------------------------------

def parameter_names(model):
    """
    Return the names of the ``12 n`` parameters of :func:`parameters`, in order.

    ``'<link>.<p>'`` for the inertial parameters ``p`` of :data:`INERTIAL_PARAMETER_NAMES` of
    each body (named by its link, :func:`robot_dynamics.urdf.body_links`), then
    ``'<joint>.damping'`` (viscous) and ``'<joint>.friction'`` (Coulomb) of each joint.
    """
    return tuple([f'{link}.{p}' for link in body_links(model) for p in INERTIAL_PARAMETER_NAMES]
                 + [f'{joint}.damping' for joint in model.joint_names]
                 + [f'{joint}.friction' for joint in model.joint_names])


def parameters(model):
    """Return the model's ``12 n`` parameters: inertial (10 per body), damping, friction."""
    return np.concatenate((model.inertial_parameters(), model.damping, model.friction))


def regressor(model, q, qd, qdd, *, gravity=None, smoothing=COULOMB_VELOCITY_SCALE):
    """
    Regressor (..., n, 12 n) of the joint torques with friction, ``Y @ parameters(model)``.

    The inertial regressor of :func:`robot_dynamics.dynamics.regressor`, then the friction
    columns of :func:`robot_dynamics.dynamics.friction_regressor`.
    """
    Y = inertial_regressor(model, q, qd, qdd, gravity=gravity)
    qd = as_joint_array(qd, model.dof, 'qd')
    return np.concatenate((Y, friction_regressor(qd, smoothing)), axis=-1)


def random_states(model, count, seed=0):
    """Return ``count`` random states ``(q, qd, qdd)`` (count, n): q within the limits."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.lower), model.lower, -UNLIMITED_HALF_RANGE)
    hi = np.where(np.isfinite(model.upper), model.upper, UNLIMITED_HALF_RANGE)
    q = rng.uniform(lo, hi, (count, model.dof))
    qd, qdd = rng.normal(size=(2, count, model.dof))
    return q, qd, qdd


# ---- base parameters ----------------------------------------------------------------------------

def _frozen(x, dtype=float):
    arr = np.array(x, dtype=dtype)
    arr.setflags(write=False)
    return arr


def _term(coefficient, name):
    text = f'{coefficient:.6g}'
    return name if text == '1' else f'{text} {name}'


@dataclasses.dataclass(frozen=True)
class BaseParameters:
    """
    The identifiable combinations ``beta = theta[independent] + K theta[dependent]``.

    Attributes
    ----------
    names : tuple of str
        Names of all ``p`` parameters (:func:`parameter_names`).
    independent : numpy.ndarray of int, shape (b,)
        Parameters whose regressor columns form the base regressor, ascending.
    dependent : numpy.ndarray of int, shape (p - b,)
        The others, ascending.
    combination : numpy.ndarray, shape (b, p - b)
        ``K``: how much each dependent parameter adds to each base parameter (units: the
        base parameter's per the dependent one's, e.g. m^2 for a mass in an inertia).
    pivots : numpy.ndarray, shape (p,)
        ``|R_kk|`` of the column-normalised QR decomposition in pivot order: the first ``b``
        exceed ``tolerance``, the rest do not (the gap shows how clear the rank is).
    tolerance : float
        The rank tolerance used.

    """

    names: tuple
    independent: np.ndarray
    dependent: np.ndarray
    combination: np.ndarray
    pivots: np.ndarray
    tolerance: float

    @property
    def count(self):
        """Return the number of base parameters b."""
        return len(self.independent)

    @property
    def matrix(self):
        """Return ``P`` (b, p) with ``beta = P theta``."""
        P = np.zeros((self.count, len(self.names)))
        P[np.arange(self.count), self.independent] = 1.0
        P[:, self.dependent] = self.combination
        return P

    @property
    def base_names(self):
        """Return a readable name of each base parameter: ``'link1.izz + 4 link2.m'``."""
        out = []
        for k, i in enumerate(self.independent):
            terms = [self.names[i]]
            for c, j in zip(self.combination[k], self.dependent):
                if c != 0.0:
                    terms.append(('- ' if c < 0.0 else '+ ') + _term(abs(c), self.names[j]))
            out.append(' '.join(terms))
        return tuple(out)

    def values(self, theta):
        """Return the base parameters (..., b) of full parameters ``theta`` (..., p)."""
        theta = np.asarray(theta, dtype=float)
        if theta.shape[-1:] != (len(self.names),):
            raise ShapeError(f'theta: expected shape (..., {len(self.names)}), got {theta.shape}')
        return theta[..., self.independent] + theta[..., self.dependent] @ self.combination.T

    def regressor(self, Y):
        """Return the independent columns (..., n, b) of a regressor ``Y`` (..., n, p)."""
        return np.asarray(Y)[..., self.independent]


def base_parameters(model, *, friction=True, gravity=None, samples=BASE_SAMPLES, seed=0,
                    tolerance=RANK_TOLERANCE):
    """
    Find the base parameters of ``model`` numerically (Gautier 1991).

    Parameters
    ----------
    model : RobotModel
        The arm (its kinematics decide; the parameter values do not matter).
    friction : bool
        Include the ``2 n`` friction parameters (each is a base parameter of its own).
    gravity : array_like, shape (3,), optional
        Gravity [m/s^2]; default ``model.gravity``. Zero gravity leaves out the combinations
        that only gravity shows.
    samples : int
        Number of random states (:func:`random_states`) whose regressors are stacked.
    seed : int
        Seed of the states.
    tolerance : float
        Rank tolerance on the pivots of the column-normalised regressor.

    Returns
    -------
    BaseParameters

    """
    names = parameter_names(model)
    if not friction:
        names = names[:10 * model.dof]
    q, qd, qdd = random_states(model, samples, seed)
    W = regressor(model, q, qd, qdd, gravity=gravity)[..., :len(names)]
    W = W.reshape(-1, len(names))
    norms = np.linalg.norm(W, axis=0)
    # a column that is zero in exact arithmetic holds rounding (1e-15 of the others): zero it
    # before the columns are scaled to unit length
    zero = norms <= tolerance * norms.max()
    W[:, zero], norms[zero] = 0.0, 1.0
    Ws = W / norms
    R, pivot = qr(Ws, mode='r', pivoting=True)
    diagonal = np.abs(np.diag(R))
    rank = int(np.count_nonzero(diagonal > tolerance))
    independent = np.sort(pivot[:rank])
    dependent = np.sort(pivot[rank:])
    # the dependent columns in the independent ones, in unit-free (normalised) coordinates,
    # where entries that are zero in exact arithmetic show as rounding
    Ks = np.linalg.lstsq(Ws[:, independent], Ws[:, dependent], rcond=None)[0]
    Ks[np.abs(Ks) < tolerance] = 0.0
    K = Ks * norms[dependent][None, :] / norms[independent][:, None]
    return BaseParameters(names, _frozen(independent, int), _frozen(dependent, int), _frozen(K),
                          _frozen(diagonal), float(tolerance))


# ---- estimation ---------------------------------------------------------------------------------

#: The shortest motion [s] :func:`check_motion` accepts, and the least range [rad or m] each
#: joint must sweep.
MIN_DURATION = 5.0
MIN_RANGE = 0.01


def check_motion(model, t, q):
    """
    Raise ``InputError`` unless samples ``t`` (K,) [s], ``q`` (K, n) can identify ``model``.

    The motion must last ``MIN_DURATION`` and move every joint over ``MIN_RANGE`` at least: a
    joint that never moves leaves its parameters (and its friction) unseen.
    """
    t = np.asarray(t, dtype=float)
    q = as_joint_array(q, model.dof, 'q')
    duration = float(t[-1] - t[0]) if t.size else 0.0
    if duration < MIN_DURATION:
        raise InputError(f'{duration:.3g} s of joint states: too short to identify the dynamics '
                         f'(at least {MIN_DURATION:g} s; record an excitation trajectory, '
                         'robot-dynamics excite)')
    span = q.max(axis=0) - q.min(axis=0)
    still = [f'{name!r} (range {r:.3g})' for name, r in zip(model.joint_names, span)
             if r < MIN_RANGE]
    if still:
        raise InputError(f'joint(s) {", ".join(still)} never move(s) (less than {MIN_RANGE:g} '
                         'rad or m): their parameters cannot be identified; record a motion of '
                         'every joint')


class Estimate(NamedTuple):
    """
    Base parameters fitted to samples.

    Attributes
    ----------
    base : BaseParameters
        What is estimated.
    values : numpy.ndarray, shape (b,)
        The estimates.
    std : numpy.ndarray, shape (b,)
        Their standard deviations (same units).
    information_root : numpy.ndarray, shape (b, b)
        Upper triangular ``R`` with ``R^T R`` the inverse of the estimate's covariance.
    condition_number : float
        Of the (unweighted) base regressor of the samples used.
    residual_std : numpy.ndarray, shape (n,)
        Per joint, the standard deviation of the residual [N m or N] (the weights' inverses).
    rows : int
        Number of joint equations used (samples times joints, less those left out).

    """

    base: BaseParameters
    values: np.ndarray
    std: np.ndarray
    information_root: np.ndarray
    condition_number: float
    residual_std: np.ndarray
    rows: int

    @property
    def relative_std(self):
        """Return ``std / |values|`` per base parameter (inf where a value is 0)."""
        with np.errstate(divide='ignore', invalid='ignore'):
            return np.where(self.values != 0.0, self.std / np.abs(self.values), np.inf)

    def predict(self, model, q, qd, qdd):
        """Return the torques (..., n) the estimate predicts at the states (model: kinematics)."""
        return self.base.regressor(regressor(model, q, qd, qdd)[..., :len(self.base.names)]) \
            @ self.values

    def as_dict(self):
        """Return the estimate as JSON-ready data (names, values, std devs, condition)."""
        return {'names': list(self.base.base_names), 'values': self.values.tolist(),
                'std': self.std.tolist(), 'relative_std': self.relative_std.tolist(),
                'condition_number': self.condition_number,
                'residual_std': self.residual_std.tolist(), 'rows': self.rows}


def _samples(model, q, qd, qdd, tau):
    (q, qd, qdd, tau), _ = states(model, ('q', q), ('qd', qd), ('qdd', qdd), ('tau', tau))
    return q, qd, qdd, tau


def estimate(model, q, qd, qdd, tau, *, base=None, weighted=True, min_velocity=MIN_VELOCITY,
             gravity=None):
    """
    Estimate the base parameters from samples by (weighted) least squares.

    The base regressor of each sample stacks into ``W beta = y``. An ordinary least-squares fit
    gives each joint's residual variance ``s_j^2 = |r_j|^2 / (rows_j - b_j)`` (``b_j``: the base
    parameters that appear in joint j's equation); with ``weighted`` each joint's rows are then
    divided by ``s_j`` and fitted again (Gautier 1997), and again with the new residuals until
    the weights settle (``WEIGHT_ITERATIONS``, ``WEIGHT_TOLERANCE``): when the joints' noise
    differs by orders of magnitude (a shoulder and a wrist), the ordinary fit spreads the large
    joints' noise into the small joints' residuals, and one reweighting is not enough. The
    covariance of the estimate is ``s^2 (W_w^T W_w)^-1`` with ``s^2`` the weighted residual
    variance.

    Parameters
    ----------
    model : RobotModel
        The arm's kinematics (its parameter values do not matter).
    q, qd, qdd, tau : array_like, shape (N, n)
        Positions, velocities, accelerations and measured joint torques.
    base : BaseParameters, optional
        Default :func:`base_parameters` of the model (with friction).
    weighted : bool
        Weight each joint's equations by its residual standard deviation.
    min_velocity : float
        Joint equations at a lower speed [rad/s or m/s] are left out (0 keeps all).
    gravity : array_like, shape (3,), optional
        Default ``model.gravity``.

    Returns
    -------
    Estimate

    Raises
    ------
    InputError
        When the samples leave fewer equations than base parameters, or do not excite some
        base parameter (a rank-deficient base regressor: the message names one).

    """
    q, qd, qdd, tau = _samples(model, q, qd, qdd, tau)
    base = base_parameters(model) if base is None else base
    W = base.regressor(regressor(model, q, qd, qdd, gravity=gravity)[..., :len(base.names)])
    keep = np.abs(qd) >= min_velocity                      # (N, n) equations used
    n, b = model.dof, base.count
    rows = int(keep.sum())
    if rows <= b:
        raise InputError(f'{rows} joint equations (samples times joints moving faster than '
                         f'{min_velocity:g}) for {b} base parameters: record a longer motion')
    A, y, joint = W[keep], tau[keep], np.nonzero(keep)[1]
    # the condition number and the least squares below from QR factors (the SVD of a tall
    # matrix costs ten times as much, and more on a loaded machine's threaded BLAS)
    _, singular, Vt = np.linalg.svd(np.linalg.qr(A, mode='r'))
    with np.errstate(divide='ignore'):
        condition = float(singular[0] / singular[-1])
    if not np.isfinite(condition) or condition > 1.0 / np.finfo(float).eps:
        worst = int(np.argmax(np.abs(Vt[-1])))
        raise InputError(f'the motion does not excite the base parameter '
                         f'{base.base_names[worst]!r} (base regressor condition number '
                         f'{condition:.3g}): use an excitation trajectory')
    mine = [joint == j for j in range(n)]
    dof = [max(int(m.sum()) - int(np.count_nonzero(np.any(A[m] != 0.0, axis=0))), 1)
           for m in mine]
    floor = 1e-12 * max(np.sqrt(np.mean(y ** 2)), np.finfo(float).tiny)
    w = np.ones(rows)
    for _ in range(WEIGHT_ITERATIONS if weighted else 1):
        Q, R = np.linalg.qr(A * w[:, None])
        beta = solve_triangular(R, Q.T @ (y * w))
        r = y - A @ beta
        sigma = np.maximum([np.sqrt(np.sum(r[m] ** 2) / d) for m, d in zip(mine, dof)], floor)
        if not weighted or np.allclose(1.0 / sigma[joint], w, rtol=WEIGHT_TOLERANCE, atol=0.0):
            break
        w = 1.0 / sigma[joint]
    Aw, yw = A * w[:, None], y * w
    rw = yw - Aw @ beta
    # a perfect fit (noise-free data) has no residual: keep the variance at rounding level
    s2 = max(float(rw @ rw) / max(rows - b, 1), (np.finfo(float).eps * np.abs(yw).max()) ** 2,
             np.finfo(float).tiny)
    root = np.linalg.qr(Aw, mode='r') / np.sqrt(s2)
    inverse = np.linalg.solve(root, np.eye(b))                 # covariance = inverse inverse^T
    std = np.sqrt(np.sum(inverse ** 2, axis=1))
    return Estimate(base, _frozen(beta), _frozen(std), _frozen(root), condition,
                    _frozen(sigma), rows)


# ---- physical consistency -----------------------------------------------------------------------

def pseudo_inertia(theta):
    """
    Return the pseudo-inertias (..., 4, 4) of bodies' ten parameters (..., 10).

    ``J = [[tr(I)/2 1 - I, h], [h^T, m]]`` with the inertia ``I`` about the frame origin and the
    first moment ``h`` (Wensing et al. 2017, eq 9); the body is physically consistent (a
    positive density can produce it) exactly when ``J`` is positive definite (semi-definite at
    the limit: point masses, rods and plates).
    """
    theta = np.asarray(theta, dtype=float)
    m, h = theta[..., 0], theta[..., 1:4]
    inertia = _origin_inertia(theta)
    J = np.zeros(theta.shape[:-1] + (4, 4))
    J[..., :3, :3] = 0.5 * np.trace(inertia, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) \
        - inertia
    J[..., :3, 3] = J[..., 3, :3] = h
    J[..., 3, 3] = m
    return J


def _origin_inertia(theta):
    """Return the inertias (..., 3, 3) about the frame origin of ten parameters (..., 10)."""
    ixx, ixy, iyy, ixz, iyz, izz = np.moveaxis(np.asarray(theta)[..., 4:10], -1, 0)
    return np.stack([np.stack([ixx, ixy, ixz], -1), np.stack([ixy, iyy, iyz], -1),
                     np.stack([ixz, iyz, izz], -1)], -2)


def _parameters_of(J):
    """Return the ten parameters (..., 10) of pseudo-inertias (..., 4, 4)."""
    S = J[..., :3, :3]
    inertia = np.trace(S, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - S
    return np.concatenate((J[..., 3, 3:], J[..., :3, 3], inertia[..., 0, 0:1],
                           inertia[..., 0, 1:2], inertia[..., 1, 1:2], inertia[..., 0, 2:3],
                           inertia[..., 1, 2:3], inertia[..., 2, 2:3]), axis=-1)


def _log_cholesky(J):
    """Return the log-Cholesky parameters (..., 10) of positive definite ``J`` (..., 4, 4)."""
    flip = J[..., ::-1, ::-1]
    U = np.linalg.cholesky(flip)[..., ::-1, ::-1]          # J = U U^T, U upper triangular
    alpha = np.log(U[..., 3, 3])
    V = U / U[..., 3:, 3:]
    d = np.log(np.diagonal(V, axis1=-2, axis2=-1)[..., :3])
    return np.concatenate((alpha[..., None], d, V[..., 0, 1:2], V[..., 1, 2:3], V[..., 0, 2:3],
                           V[..., :3, 3]), axis=-1)


def _from_log_cholesky(x):
    """Return ``J = U U^T`` (..., 4, 4) of log-Cholesky parameters (..., 10) (Rucker 2022)."""
    x = np.asarray(x)
    U = np.zeros(x.shape[:-1] + (4, 4))
    U[..., 0, 0], U[..., 1, 1], U[..., 2, 2] = np.exp(x[..., 1]), np.exp(x[..., 2]), \
        np.exp(x[..., 3])
    U[..., 0, 1], U[..., 1, 2], U[..., 0, 2] = x[..., 4], x[..., 5], x[..., 6]
    U[..., :3, 3] = x[..., 7:10]
    U[..., 3, 3] = 1.0
    U *= np.exp(x[..., 0])[..., None, None]
    return U @ np.swapaxes(U, -1, -2)


def _log_cholesky_jacobian(x):
    """
    Return ``d theta / d x`` (..., 10, 10) of the parameters of :func:`_from_log_cholesky`.

    ``dJ = dU U^T + U dU^T`` for each parameter's ``dU``; the ten parameters are linear in J.
    """
    x = np.asarray(x)
    scale = np.exp(x[..., 0])[..., None, None]
    U = np.zeros(x.shape[:-1] + (4, 4))
    for k in range(3):
        U[..., k, k] = np.exp(x[..., 1 + k])
    U[..., 0, 1], U[..., 1, 2], U[..., 0, 2] = x[..., 4], x[..., 5], x[..., 6]
    U[..., :3, 3] = x[..., 7:10]
    U[..., 3, 3] = 1.0
    U = U * scale
    dU = np.zeros(x.shape[:-1] + (10, 4, 4))
    dU[..., 0, :, :] = U
    for k in range(3):
        dU[..., 1 + k, k, k] = U[..., k, k]
    for k, (r, c) in enumerate(((0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))):
        dU[..., 4 + k, r, c] = scale[..., 0, 0]
    dJ = dU @ np.swapaxes(U, -1, -2)[..., None, :, :]
    return np.swapaxes(_parameters_of(dJ + np.swapaxes(dJ, -1, -2)), -1, -2)


def _solid(J, floor):
    """Return ``J`` with its eigenvalues raised to at least ``floor`` (a solid start)."""
    lam, V = np.linalg.eigh(J)
    return (V * np.maximum(lam, floor)[..., None, :]) @ np.swapaxes(V, -1, -2)


#: The pseudo-inertias (10, 4, 4) of the ten unit parameters, and the left inverse (10, 16) of
#: their flattened matrices: ``theta = _UNIT_INVERSE @ J.ravel()`` for
#: ``J = pseudo_inertia(theta)``.
_UNITS = pseudo_inertia(np.eye(10))
_UNIT_INVERSE = np.linalg.pinv(_UNITS.reshape(10, 16).T)


def _consistent(theta, n):
    """Return whether parameters (12 n,) are consistent: J positive definite, friction >= 0."""
    J = pseudo_inertia(theta[:10 * n].reshape(n, 10))
    return bool(np.all(np.linalg.eigvalsh(J)[:, 0] > 0.0) and np.all(theta[10 * n:] >= 0.0))


def _dikin(theta, n):
    """
    Return the inverse (12 n, 12 n) of the consistent set's local metric at ``theta``, and norm.

    The metric is the Hessian of the log-det barrier ``-sum log det J_i - sum log f_k``: a
    change of norm below 1 keeps every pseudo-inertia ``J_i`` (linear in the parameters)
    positive definite and every friction ``f_k`` positive (the Dikin ellipsoid; Boyd and
    Vandenberghe, Convex Optimization, 2004, §9.6). Body i's block of the inverse is
    ``dJ -> J_i dJ J_i`` in parameters (no inverse of a nearly singular J is formed); the
    friction parameters count relative to their size plus ``FRICTION_FLOOR`` of the largest
    parameter. ``norm(change)`` is the change's length in the metric.
    """
    J = pseudo_inertia(theta[:10 * n].reshape(n, 10))
    inverse = np.zeros((12 * n, 12 * n))
    for i in range(n):
        inverse[10 * i:10 * i + 10, 10 * i:10 * i + 10] = \
            _UNIT_INVERSE @ np.kron(J[i], J[i]) @ _UNIT_INVERSE.T
    friction = np.abs(theta[10 * n:]) + FRICTION_FLOOR * max(float(np.abs(theta).max()),
                                                             np.finfo(float).tiny)
    inverse[10 * n:, 10 * n:] = np.diag(friction ** 2)
    L = np.linalg.cholesky(J)

    def norm(change):
        dJ = pseudo_inertia(change[:10 * n].reshape(n, 10))
        inner = np.linalg.solve(L, np.linalg.solve(L, dJ).swapaxes(-1, -2))
        return float(np.sqrt(np.sum(inner ** 2) + np.sum((change[10 * n:] / friction) ** 2)))
    return inverse, norm


def _walk(theta, P, beta, n):
    """
    Return consistent ``theta`` moved towards ``P theta = beta`` (linear in theta).

    Each step is the change of least :func:`_dikin` norm that meets ``beta``, taken whole when
    the result is consistent, else shortened to ``WALK_RADIUS`` of the ellipsoid that keeps it
    so; at most ``WALK_STEPS`` steps. ``beta`` inside the consistent set is met to rounding
    unless the way there passes close to the set's boundary, where the steps shorten.
    """
    for _ in range(WALK_STEPS):
        residual = beta - P @ theta
        if not np.any(residual):
            break
        inverse, norm = _dikin(theta, n)
        change = inverse @ P.T @ np.linalg.lstsq(P @ inverse @ P.T, residual, rcond=None)[0]
        if _consistent(theta + change, n):
            return theta + change
        theta = theta + min(1.0, WALK_RADIUS / norm(change)) * change
    return theta


def _least_squares_fit(J0, friction0, R, P, beta, regularisation, n):
    """
    Return the log-Cholesky least-squares fit of :func:`consistent_model` (12 n,).

    Unknowns ``x``: each body's log-Cholesky parameters (:func:`_from_log_cholesky`) and the
    friction parameters (bounded at 0). Residual: ``R (P theta(x) - beta)`` and ``w (x - x_0)``
    for each weight ``w`` of ``regularisation`` in turn, from the start ``x_0`` of
    ``(J0, friction0)``.
    """
    from scipy.optimize import least_squares    # here: see signals.lowpass
    x0 = np.concatenate((_log_cholesky(J0).ravel(), friction0))
    lower = np.concatenate((np.full(10 * n, -np.inf), np.zeros(2 * n)))

    def theta_of(x):
        body = _parameters_of(_from_log_cholesky(x[:10 * n].reshape(n, 10)))
        return np.concatenate((body.ravel(), x[10 * n:]))

    RP, Rb = R @ P, R @ beta
    eye = np.eye(len(x0))

    def jacobian(x):
        D = np.eye(12 * n)
        blocks = _log_cholesky_jacobian(x[:10 * n].reshape(n, 10))
        for i in range(n):
            D[10 * i:10 * i + 10, 10 * i:10 * i + 10] = blocks[i]
        return RP @ D

    x = x0
    # trial points far out overflow the exponentials: their residual is not finite, and the
    # solver steps back from them
    with np.errstate(over='ignore', invalid='ignore'):
        for weight in regularisation:
            x = least_squares(lambda x, w=weight: np.concatenate((RP @ theta_of(x) - Rb,
                                                                  w * (x - x0))), x,
                              jac=lambda x, w=weight: np.vstack((jacobian(x), w * eye)),
                              bounds=(lower, np.inf), method='trf', xtol=1e-12, ftol=1e-14,
                              gtol=1e-14, max_nfev=STAGE_EVALUATIONS).x
    return theta_of(x)


def model_with_parameters(model, theta):
    """
    Return ``model`` with the full parameters ``theta`` (12 n,) of :func:`parameters`.

    Each body's mass, COM ``h / m`` and inertia about the COM (parallel axes) come from its ten
    parameters; damping and friction from the last ``2 n``. ``RobotModel`` checks the result
    (positive mass, positive semi-definite inertia, friction >= 0).
    """
    n = model.dof
    theta = np.asarray(theta, dtype=float)
    if theta.shape != (12 * n,):
        raise ShapeError(f'theta: expected shape ({12 * n},), got {theta.shape}')
    body = theta[:10 * n].reshape(n, 10)
    mass = body[:, 0]
    with np.errstate(divide='ignore', invalid='ignore'):
        com = np.where(mass[:, None] > 0.0, body[:, 1:4] / mass[:, None], 0.0)
    cc = np.einsum('bi,bi->b', com, com)
    inertia = _origin_inertia(body) - mass[:, None, None] * (
        cc[:, None, None] * np.eye(3) - np.einsum('bi,bj->bij', com, com))
    return model.replace(mass=mass, com=com, inertia=0.5 * (inertia + inertia.transpose(0, 2, 1)),
                         damping=theta[10 * n:11 * n], friction=theta[11 * n:])


class Consistency(NamedTuple):
    """
    A physically consistent model for an estimate, and how well it reproduces it.

    ``model`` is the nominal model with the fitted parameters; ``theta`` (12 n,) its
    parameters; ``base_values`` (b,) its base parameters; ``deviation`` (b,) their difference
    from the estimate in the estimate's standard deviations.
    """

    model: object
    theta: np.ndarray
    base_values: np.ndarray
    deviation: np.ndarray


def consistent_model(model, estimate, *, regularisation=REGULARISATION):
    """
    Return a physically consistent model that reproduces an estimate's base parameters.

    The start is the nominal model, each body made solid where it is not (its pseudo-inertia's
    eigenvalues raised to ``PSEUDO_INERTIA_FLOOR`` of the arm's largest: point masses, massless
    bodies with inertia, and published parameters that break the triangle inequality) and its
    friction is the estimate's (friction parameters are base parameters of their own), at least
    ``FRICTION_FLOOR`` of the largest parameter.

    First ``scipy.optimize.least_squares`` fits the log-Cholesky parameters of every body's
    pseudo-inertia (Rucker and Wensing 2022: any value is a consistent body, positive definite
    pseudo-inertia, Wensing, Kim and Slotine 2017) and the friction parameters (bounded at 0)
    to the estimate, in the estimate's own metric: the residual is ``R (beta(x) - beta)`` with
    ``R`` from the weighted base regressor scaled to norm 1, plus ``w (x - x_0)`` towards the
    start, for the weights of ``regularisation`` in turn (each stage from the previous one's
    result), so that the nominal model decides what the data leave open. Then, the base
    parameters being linear in the full ones, :func:`_walk` moves the parameters to meet the
    estimate exactly in steps that keep every body consistent.

    An estimate inside the consistent set is thus met to rounding, unless the way there passes
    close to the set's boundary (a nominal body that is nearly degenerate in a direction the
    data need); one outside it (noise can put a barely excited combination there, or a
    friction below zero) is met as closely as a consistent set can. ``deviation`` says how far
    the result is left, in the estimate's standard deviations.

    Parameters
    ----------
    model : RobotModel
        The nominal model (the starting point and prior).
    estimate : Estimate
        From :func:`estimate` on this model's kinematics (with friction).
    regularisation : sequence of float
        The weights of the least-squares stages.

    Returns
    -------
    Consistency

    """
    n = model.dof
    base = estimate.base
    if len(base.names) != 12 * n:
        raise InputError('consistent_model: the estimate must include the friction parameters '
                         '(base_parameters(model, friction=True))')
    P = base.matrix
    R = estimate.information_root / np.linalg.norm(estimate.information_root, 2)
    nominal = parameters(model)
    J0 = pseudo_inertia(nominal[:10 * n].reshape(n, 10))
    largest = max(float(np.abs(np.linalg.eigvalsh(J0)).max()), 1e-12)
    J0 = _solid(J0, PSEUDO_INERTIA_FLOOR * largest)
    # friction parameters are base parameters of their own: the prior takes the estimate's
    friction0 = nominal[10 * n:].copy()
    for k, i in enumerate(base.independent):
        if i >= 10 * n and not np.any(P[k, :10 * n]):
            friction0[i - 10 * n] = estimate.values[k]
    friction0 = np.maximum(friction0, FRICTION_FLOOR * np.abs(nominal).max())
    theta = _walk(_least_squares_fit(J0, friction0, R, P, estimate.values, regularisation, n),
                  P, estimate.values, n)
    values = P @ theta
    with np.errstate(divide='ignore', invalid='ignore'):
        deviation = np.abs(values - estimate.values) / estimate.std
    return Consistency(model_with_parameters(model, theta), _frozen(theta), _frozen(values),
                       _frozen(deviation))


class Identification(NamedTuple):
    """The result of :func:`identify`: the estimate and the consistent model that meets it."""

    estimate: Estimate
    consistency: Consistency

    @property
    def model(self):
        """Return the identified, physically consistent model."""
        return self.consistency.model


def identify(model, q, qd, qdd, tau, *, base=None, min_velocity=MIN_VELOCITY, gravity=None):
    """
    Identify ``model``'s parameters from samples: :func:`estimate`, then :func:`consistent_model`.

    Arguments as in :func:`estimate`; ``model`` is also the nominal model that decides what the
    samples leave open. Returns an :class:`Identification`.
    """
    result = estimate(model, q, qd, qdd, tau, base=base, min_velocity=min_velocity,
                      gravity=gravity)
    return Identification(result, consistent_model(model, result))
