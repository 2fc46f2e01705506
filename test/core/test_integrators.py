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
Fixed-step integrators (robot_dynamics.integrators): order of accuracy, simulate, bad input.

The order tests integrate a pendulum built from a one-row DH table and compare with a reference
solution of its closed-form equation of motion ``(m lc^2 + Izz) qdd = tau - m g lc cos q``,
integrated by scipy's DOP853 at 1e-13 tolerances: independent of the library's dynamics.
"""

from functools import lru_cache

import numpy as np
import pytest
from robot_dynamics import InputError, RobotModel, ShapeError, SingularMassMatrixError
from robot_dynamics.integrators import (Method, rk4_step, rk4_step_compiled,
                                        semi_implicit_euler_step, simulate, Trajectory)
from scipy.integrate import solve_ivp

G = 9.81
MASS, LC, IZZ = 1.0, 0.5, 0.01
TAU = 0.3                 # constant torque [N m] (piecewise-constant torques are exact under ZOH)
Q0, QD0 = 0.4, -1.0
T_END = 2.0


@lru_cache(maxsize=None)
def pendulum():
    """Return a compound pendulum turning about z, gravity along -y (angle from the x-axis)."""
    row = {'a': 0.0, 'alpha': 0.0, 'd': 0.0, 'theta': 0.0, 'type': 'revolute', 'mass': MASS,
           'com': [LC, 0.0, 0.0], 'inertia': [0.0, 0.0, 0.0, 0.0, 0.0, IZZ]}
    return RobotModel.from_dh({'joints': [row], 'convention': 'modified',
                               'gravity': [0.0, -G, 0.0]})


@lru_cache(maxsize=None)
def reference_state():
    """Return ``(q, qd)`` of the pendulum at ``T_END`` from the closed-form equation."""
    inertia = MASS * LC ** 2 + IZZ

    def rhs(_, y):
        return [y[1], (TAU - MASS * G * LC * np.cos(y[0])) / inertia]

    sol = solve_ivp(rhs, (0.0, T_END), [Q0, QD0], method='DOP853', rtol=1e-13, atol=1e-13)
    assert sol.success
    return sol.y[:, -1]


def final_error(method, dt):
    traj = simulate(pendulum(), [Q0], [QD0], lambda t, q, qd: [TAU], dt=dt, duration=T_END,
                    method=method)
    assert traj.t[-1] == pytest.approx(T_END)
    return np.hypot(traj.q[-1, 0] - reference_state()[0], traj.qd[-1, 0] - reference_state()[1])


def test_pendulum_matches_its_closed_form_equation():
    model = pendulum()
    q, qd = np.array([[0.3], [-1.2]]), np.array([[0.5], [2.0]])
    expected = (TAU - MASS * G * LC * np.cos(q)) / (MASS * LC ** 2 + IZZ)
    np.testing.assert_allclose(model.forward_dynamics(q, qd, np.full((2, 1), TAU)), expected,
                               rtol=1e-12)


def test_rk4_is_fourth_order():
    # (at dt = 0.04 and 0.02 the error is not yet asymptotic: ratios 8 and 13)
    errors = [final_error('rk4', dt) for dt in (0.01, 0.005, 0.0025)]
    ratios = [errors[k] / errors[k + 1] for k in range(2)]
    for r in ratios:
        assert 13.0 < r < 19.0, f'RK4 error ratios {ratios} (errors {errors}); expected ~16'
    assert errors[-1] < 1e-8


def test_semi_implicit_euler_is_first_order():
    errors = [final_error('semi_implicit_euler', dt) for dt in (0.004, 0.002, 0.001)]
    ratios = [errors[k] / errors[k + 1] for k in range(2)]
    for r in ratios:
        assert 1.7 < r < 2.3, f'semi-implicit Euler error ratios {ratios}; expected ~2'


def test_step_functions_by_hand():
    model = RobotModel.load('planar_2r')
    q, qd, tau, dt = np.array([0.3, -0.4]), np.array([0.5, 1.0]), np.array([1.0, -2.0]), 0.01

    def f(q, qd):
        return model.forward_dynamics(q, qd, tau)

    k1 = f(q, qd)
    k2 = f(q + 0.5 * dt * qd, qd + 0.5 * dt * k1)
    k3 = f(q + 0.5 * dt * (qd + 0.5 * dt * k1), qd + 0.5 * dt * k2)
    k4 = f(q + dt * (qd + 0.5 * dt * k2), qd + dt * k3)
    q_rk4 = q + dt / 6 * (qd + 2 * (qd + 0.5 * dt * k1) + 2 * (qd + 0.5 * dt * k2) + qd + dt * k3)
    qd_rk4 = qd + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    q1, qd1 = rk4_step(model, q, qd, tau, dt)
    np.testing.assert_allclose(q1, q_rk4, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(qd1, qd_rk4, rtol=1e-14, atol=1e-15)
    q1, qd1 = semi_implicit_euler_step(model, q, qd, tau, dt)
    np.testing.assert_allclose(qd1, qd + dt * k1, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(q1, q + dt * (qd + dt * k1), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize('step', [rk4_step, semi_implicit_euler_step])
def test_steps_on_a_batch_equal_a_loop(step, rng):
    model = RobotModel.load('scara')
    q = rng.uniform(-0.2, 0.2, (5, 3)) + np.array([0.0, 0.0, 0.15])
    qd, tau = rng.normal(size=(2, 5, 3))
    q1, qd1 = step(model, q, qd, tau, 1e-3, friction=True)
    for k in range(5):
        qk, qdk = step(model, q[k], qd[k], tau[k], 1e-3, friction=True)
        np.testing.assert_allclose(q1[k], qk, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(qd1[k], qdk, rtol=1e-13, atol=1e-15)


# ---- the compiled step --------------------------------------------------------------------------

@pytest.mark.parametrize('friction', [False, True])
def test_compiled_rk4_step_equals_rk4_step(bundled_model, friction, rng):
    """One compiled call gives rk4_step's state, damping and Coulomb friction included."""
    n = bundled_model.dof
    # damping and friction on every joint (the bundled files leave some at 0)
    model = bundled_model.replace(damping=rng.uniform(0.1, 2.0, n),
                                  friction=rng.uniform(0.1, 3.0, n))
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    for _ in range(10):
        q = rng.uniform(lo, hi)
        qd = rng.normal(size=n)
        qd[0] = 2e-4                   # inside the smoothing band of the Coulomb term
        tau = rng.normal(scale=5.0, size=n)
        for dt in (1e-3, 1e-2):
            expected = rk4_step(model, q, qd, tau, dt, friction=friction)
            got = rk4_step_compiled(model, q, qd, tau, dt, friction=friction)
            for a, b in zip(got, expected):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_compiled_rk4_step_on_a_singular_model_names_the_joint():
    with pytest.raises(SingularMassMatrixError, match='moves no mass'):
        rk4_step_compiled(massless_pendulum(), np.array([0.3]), np.zeros(1), np.zeros(1), 1e-3)


def test_compiled_rk4_step_reports_a_diverging_state():
    """An overflowing state is an error, not a nan handed to the next step."""
    model = RobotModel.load('planar_2r')
    with pytest.raises(InputError, match='non-finite.*smaller dt'):
        rk4_step_compiled(model, np.array([0.1, 0.2]), np.array([1e300, 0.0]), np.zeros(2),
                          1e-3)


# ---- simulate -----------------------------------------------------------------------------------

@pytest.mark.parametrize('method', [m.value for m in Method] + [Method.RK4])
def test_simulate_output_shapes_and_times(method):
    model = RobotModel.load('scara')
    traj = simulate(model, [0.1, 0.2, 0.05], np.zeros(3), None, dt=0.01, duration=0.25,
                    method=method)
    assert isinstance(traj, Trajectory)
    assert traj.t.shape == (26,)
    for name in ('q', 'qd', 'qdd', 'tau'):
        assert getattr(traj, name).shape == (26, 3), name
    np.testing.assert_allclose(traj.t, 0.01 * np.arange(26), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(traj.tau, 0.0)
    np.testing.assert_array_equal(traj.q[0], [0.1, 0.2, 0.05])
    np.testing.assert_array_equal(traj.qd[0], 0.0)
    # qdd[k] is the acceleration at sample k
    np.testing.assert_allclose(traj.qdd, model.forward_dynamics(traj.q, traj.qd, traj.tau),
                               rtol=1e-13, atol=1e-13)
    # zero duration: the initial sample only
    traj = simulate(model, [0.1, 0.2, 0.05], np.zeros(3), None, dt=0.01, duration=0.0,
                    method=method)
    assert traj.t.shape == (1,) and traj.q.shape == (1, 3)


def test_simulate_holds_the_torque_over_each_step():
    """``torque_fn`` is sampled once per step at ``(t_k, q_k, qd_k)`` (zero-order hold)."""
    model = RobotModel.load('planar_2r')
    calls = []

    def torque_fn(t, q, qd):
        calls.append((t, np.array(q), np.array(qd)))
        return np.array([10.0 * np.sin(7.0 * t), 2.0 * np.cos(5.0 * t)]) - 0.5 * qd

    dt = 0.02
    traj = simulate(model, [0.2, -0.1], [0.0, 0.5], torque_fn, dt=dt, duration=0.5)
    K = traj.t.shape[0]
    assert K == 26
    assert [c[0] for c in calls[:K - 1]] == pytest.approx(list(traj.t[:K - 1]))
    for k in range(K - 1):
        t, q, qd = calls[k]
        np.testing.assert_array_equal(q, traj.q[k])
        np.testing.assert_array_equal(qd, traj.qd[k])
        np.testing.assert_array_equal(traj.tau[k], torque_fn(t, q, qd))
    calls.clear()
    # the same as stepping by hand with the torque held over the step
    q, qd = np.array([0.2, -0.1]), np.array([0.0, 0.5])
    for k in range(K - 1):
        tau = np.array([10.0 * np.sin(7.0 * traj.t[k]), 2.0 * np.cos(5.0 * traj.t[k])]) - 0.5 * qd
        q, qd = rk4_step(model, q, qd, tau, dt)
        np.testing.assert_allclose(traj.q[k + 1], q, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(traj.qd[k + 1], qd, rtol=1e-13, atol=1e-14)


def test_simulate_passes_options_to_forward_dynamics():
    model = RobotModel.load('planar_2r')
    # no gravity, no torque, at rest: nothing moves
    traj = simulate(model, [0.3, 0.2], [0.0, 0.0], None, dt=0.01, duration=0.2,
                    gravity=[0.0, 0.0, 0.0])
    np.testing.assert_array_equal(traj.q, np.broadcast_to([0.3, 0.2], traj.q.shape))
    # friction: same as subtracting the friction torque by hand in torque_fn
    with_friction = simulate(model, [0.3, 0.2], [1.0, -1.0], None, dt=0.01, duration=0.2,
                             friction=True)

    def by_hand(t, q, qd):
        return -(model.damping * qd + model.friction * np.tanh(qd / 1e-3))

    # the friction inside forward_dynamics acts at every RK4 stage, torque_fn only at the start
    # of a step: compare with semi-implicit Euler, which evaluates once per step
    a = simulate(model, [0.3, 0.2], [1.0, -1.0], None, dt=1e-3, duration=0.2,
                 method='semi_implicit_euler', friction=True)
    b = simulate(model, [0.3, 0.2], [1.0, -1.0], by_hand, dt=1e-3, duration=0.2,
                 method='semi_implicit_euler')
    np.testing.assert_allclose(a.q, b.q, rtol=1e-12, atol=1e-12)
    free = simulate(model, [0.3, 0.2], [1.0, -1.0], None, dt=0.01, duration=0.2)
    assert not np.allclose(with_friction.qd[-1], free.qd[-1])


# ---- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize('dt', [0.0, -1e-3, np.nan, np.inf])
def test_bad_dt(dt):
    with pytest.raises(InputError, match='dt'):
        simulate(pendulum(), [0.0], [0.0], None, dt=dt, duration=1.0)


@pytest.mark.parametrize('duration', [-1.0, np.nan, np.inf])
def test_bad_duration(duration):
    with pytest.raises(InputError, match='duration'):
        simulate(pendulum(), [0.0], [0.0], None, dt=0.01, duration=duration)


@pytest.mark.parametrize('kwargs', [{'dt': None, 'duration': 1.0},
                                    {'dt': 'fast', 'duration': 1.0},
                                    {'dt': 0.01, 'duration': None}],
                         ids=['dt=None', 'dt=str', 'duration=None'])
def test_non_numeric_dt_or_duration(kwargs):
    name = 'dt' if not isinstance(kwargs['dt'], float) else 'duration'
    with pytest.raises(InputError, match=name):
        simulate(pendulum(), [0.0], [0.0], None, **kwargs)


def test_unknown_method():
    with pytest.raises(InputError, match=r'method: expected one of '
                                         r"\('rk4', 'semi_implicit_euler'\), got 'euler'"):
        simulate(pendulum(), [0.0], [0.0], None, dt=0.01, duration=1.0, method='euler')


def test_bad_states_and_torques():
    model = RobotModel.load('planar_2r')
    with pytest.raises(ShapeError, match='q0'):
        simulate(model, [0.0, 0.0, 0.0], [0.0, 0.0], None, dt=0.01, duration=0.1)
    with pytest.raises(ShapeError, match='qd0'):
        simulate(model, [0.0, 0.0], [0.0], None, dt=0.01, duration=0.1)
    with pytest.raises(InputError, match='q0'):
        simulate(model, [0.0, np.nan], [0.0, 0.0], None, dt=0.01, duration=0.1)
    with pytest.raises(ShapeError, match='torque_fn'):
        simulate(model, [0.0, 0.0], [0.0, 0.0], lambda t, q, qd: [1.0], dt=0.01, duration=0.1)
    with pytest.raises(InputError, match='torque_fn'):
        simulate(model, [0.0, 0.0], [0.0, 0.0], lambda t, q, qd: [np.inf, 0.0], dt=0.01,
                 duration=0.1)


def test_batch_initial_state_is_rejected_by_name():
    """``simulate`` integrates one state: a batch ``q0`` must be a ShapeError naming q0."""
    model = RobotModel.load('planar_2r')
    with pytest.raises(ShapeError, match='q0'):
        simulate(model, np.zeros((2, 2)), np.zeros(2), None, dt=0.01, duration=0.1)


def test_hold_calls_the_torque_function_every_hold_steps():
    model = RobotModel.load('planar_2r')
    calls = []

    def torque(t, q, qd):
        calls.append(t)
        return np.array([10.0 * len(calls), 0.0])

    run = simulate(model, [0.1, 0.2], [0.0, 0.0], torque, 1e-3, 0.05, hold=4)
    np.testing.assert_allclose(calls, run.t[::4])           # 51 samples: calls at 0, 4, ..., 48
    assert len(calls) == 13 and run.stable
    held = run.tau[:, 0].reshape(-1)
    for k in range(len(run.t)):
        assert held[k] == 10.0 * (k // 4 + 1)                # the torque of the last call


def test_divergence_raises_with_its_time_or_stops_the_run():
    model = RobotModel.load('planar_2r')

    def runaway(t, q, qd):
        return 1e8 * np.exp(1e3 * t) * np.ones(2)            # grows until the state overflows

    with pytest.raises(InputError, match=r'diverged.*|the state became invalid at t = '):
        simulate(model, [0.1, 0.2], [0.0, 0.0], runaway, 1e-2, 5.0)
    run = simulate(model, [0.1, 0.2], [0.0, 0.0], runaway, 1e-2, 5.0, stop_on_divergence=True)
    assert not run.stable and 1 < len(run.t) < 501
    assert np.isfinite(run.q).all() and np.isfinite(run.qdd).all()
    assert run.q.shape == run.qd.shape == run.qdd.shape == run.tau.shape == (len(run.t), 2)


@pytest.mark.parametrize('hold', [0, 1.5, -2])
def test_bad_hold_is_rejected(hold):
    model = RobotModel.load('planar_2r')
    with pytest.raises(InputError, match='hold'):
        simulate(model, [0.0, 0.0], [0.0, 0.0], None, 1e-3, 0.01, hold=hold)


# ---- cost and failure reports -------------------------------------------------------------------

@pytest.fixture
def forward_dynamics_calls(monkeypatch):
    """Count the calls of ``dynamics.forward_dynamics`` (every model method goes through it)."""
    from robot_dynamics import dynamics
    calls = []
    original = dynamics.forward_dynamics

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(dynamics, 'forward_dynamics', counting)
    return calls


@pytest.mark.parametrize('method, per_step', [('rk4', 4), ('semi_implicit_euler', 1)])
def test_simulate_evaluates_the_dynamics_once_per_stage(forward_dynamics_calls, method,
                                                        per_step):
    """RK4 reuses the acceleration at ``(q_k, qd_k)`` (recorded as ``qdd[k]``) as its k1."""
    model = RobotModel.load('puma560')
    steps = 40
    traj = simulate(model, [0.1, -0.4, 0.3, 0.0, 0.5, 0.0], np.zeros(6),
                    lambda t, q, qd: np.full(6, 0.5), dt=1e-3, duration=steps * 1e-3,
                    method=method, friction=True)
    assert len(traj.t) == steps + 1
    # one evaluation per stage of every step, and one for the acceleration of the last sample
    assert len(forward_dynamics_calls) == per_step * steps + 1


@pytest.mark.parametrize('step', [rk4_step, semi_implicit_euler_step])
def test_steps_reuse_a_given_acceleration(step, rng):
    model = RobotModel.load('scara')
    q = rng.uniform(-0.2, 0.2, 3) + np.array([0.0, 0.0, 0.15])
    qd, tau = rng.normal(size=(2, 3))
    qdd = model.forward_dynamics(q, qd, tau, friction=True)
    plain = step(model, q, qd, tau, 1e-3, friction=True)
    reused = step(model, q, qd, tau, 1e-3, qdd=qdd, friction=True)
    for a, b in zip(plain, reused):
        np.testing.assert_array_equal(a, b)


def massless_pendulum():
    """Return a one-joint arm that moves no mass: its mass matrix is singular everywhere."""
    row = {'a': 0.5, 'alpha': 0.0, 'd': 0.0, 'theta': 0.0, 'type': 'revolute'}
    return RobotModel.from_dh({'joints': [row]})


@pytest.mark.parametrize('stop_on_divergence', [False, True])
def test_singular_mass_matrix_at_the_start_is_a_model_error(stop_on_divergence):
    """Not a divergence (no step was taken) and no empty run: the model cannot be simulated."""
    with pytest.raises(SingularMassMatrixError, match='initial state') as info:
        simulate(massless_pendulum(), [0.3], [0.0], None, dt=1e-3, duration=0.1,
                 stop_on_divergence=stop_on_divergence)
    assert 'diverged' not in str(info.value) and 'smaller dt' not in str(info.value)
    assert 'moves no mass' in str(info.value)               # the dynamics' own explanation


def test_bad_dynamics_options_raise_even_when_stopping_on_divergence():
    """Nothing was integrated: not an empty (or uninitialised) run marked stable."""
    model = RobotModel.load('planar_2r')
    with pytest.raises(ShapeError, match='f_ext'):
        simulate(model, [0.1, 0.2], [0.0, 0.0], None, 1e-3, 0.01, stop_on_divergence=True,
                 f_ext=np.zeros(5))
