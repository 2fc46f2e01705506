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
Control laws: their formulas, saturation and state, and closed loops with real numbers.

The closed loops run the RK4 plant at 1 kHz with the controller at 1 kHz (zero-order hold),
the plant's joint friction on, as ``robot-dynamics simulate`` does.
"""


import numpy as np
import pytest

from robot_dynamics import closed_loop as sim
from robot_dynamics import control, InputError, RobotModel, ShapeError
from robot_dynamics import trajectory as tr
from robot_dynamics.trajectory import TrajectoryPoint

WN, ZETA = 20.0, 1.0                 # closed-loop natural frequency [rad/s] and damping ratio
KP, KD = control.critically_damped(WN, ZETA)
TRACK_DURATION = 2.0                 # s given to the reference's waypoints (it may take longer)
HOLD = 0.25                          # s simulated after the reference ends


def rms(e):
    return float(np.sqrt(np.mean(np.square(e))))


# ---- gains and the laws' formulas --------------------------------------------------------------

def test_gains_broadcast_map_and_reject(planar_2r):
    np.testing.assert_array_equal(control.joint_gains(3.0, planar_2r, 'kp'), [3.0, 3.0])
    np.testing.assert_array_equal(control.joint_gains({'joint2': 2.0, 'joint1': 1.0},
                                                      planar_2r, 'kp'), [1.0, 2.0])
    with pytest.raises(ShapeError, match='kp: expected a scalar or 2 values'):
        control.PD(planar_2r, [1.0, 2.0, 3.0], 1.0)
    with pytest.raises(InputError, match=r"kd\[1\] \(joint 'joint2'\) = -1.0"):
        control.PD(planar_2r, 1.0, [1.0, -1.0])
    with pytest.raises(InputError, match=r"unknown \['elbow'\], missing \['joint2'\]"):
        control.PD(planar_2r, {'joint1': 1.0, 'elbow': 2.0}, 1.0)
    with pytest.raises(InputError, match='law: expected one of'):
        control.make_law('lqr', planar_2r)
    with pytest.raises(InputError, match='friction: expected one of'):
        control.ComputedTorque(planar_2r, KP, KD, friction=True)


def test_pd_and_pd_gravity_formulas(planar_2r):
    q, qd = np.array([0.2, -0.3]), np.array([0.5, 0.1])
    ref = TrajectoryPoint(np.array([0.25, -0.2]), np.array([0.4, 0.0]), np.zeros(2))
    kp, kd = np.array([100.0, 50.0]), np.array([10.0, 5.0])
    pd = control.PD(planar_2r, kp, kd).compute(0.0, q, qd, ref)
    np.testing.assert_allclose(pd.tau, kp * (ref.q - q) + kd * (ref.qd - qd), atol=1e-12)
    np.testing.assert_allclose(pd.error, ref.q - q)
    pdg = control.PDGravity(planar_2r, kp, kd).compute(0.0, q, qd, ref)
    np.testing.assert_allclose(pdg.tau, pd.tau + planar_2r.gravity_torques(q), atol=1e-12)
    assert not pd.saturated.any() and not pdg.saturated.any()


def test_computed_torque_is_m_v_plus_c_qd_plus_g(planar_2r):
    q, qd = np.array([0.2, -0.3]), np.array([0.5, 0.1])
    ref = TrajectoryPoint(np.array([0.25, -0.2]), np.array([0.4, 0.0]), np.array([1.0, -2.0]))
    v = ref.qdd + KD * (ref.qd - qd) + KP * (ref.q - q)
    expected = (planar_2r.mass_matrix(q) @ v + planar_2r.coriolis_matrix(q, qd) @ qd
                + planar_2r.gravity_torques(q))
    law = control.ComputedTorque(planar_2r, KP, KD)
    cmd = law.compute(0.0, q, qd, ref)
    np.testing.assert_allclose(cmd.tau_requested, expected, atol=1e-10)
    lim = planar_2r.effort_limit
    np.testing.assert_allclose(cmd.tau, np.clip(expected, -lim, lim), atol=1e-10)
    np.testing.assert_array_equal(cmd.saturated, [True, True])
    from robot_dynamics.dynamics import friction_torques
    with_ref = control.ComputedTorque(planar_2r, KP, KD, friction='reference')
    np.testing.assert_allclose(with_ref.compute(0.0, q, qd, ref).tau_requested,
                               expected + friction_torques(planar_2r, ref.qd), atol=1e-10)
    measured = control.ComputedTorque(planar_2r, KP, KD, friction='measured')
    np.testing.assert_allclose(measured.compute(0.0, q, qd, ref).tau_requested,
                               expected + friction_torques(planar_2r, qd), atol=1e-10)


def test_saturation_is_clipped_and_reported(planar_2r):
    law = control.PD(planar_2r, 1000.0, 0.0)
    ref = TrajectoryPoint.at_rest([1.0, 0.01])
    cmd = law.compute(0.0, np.zeros(2), np.zeros(2), ref)
    np.testing.assert_array_equal(cmd.saturated, [True, False])
    np.testing.assert_allclose(cmd.tau, [200.0, 10.0])                 # effort limit 200 N m
    np.testing.assert_allclose(cmd.tau_requested, [1000.0, 10.0])
    free = control.PD(planar_2r, 1000.0, 0.0, saturate=False)
    np.testing.assert_allclose(free.compute(0.0, np.zeros(2), np.zeros(2), ref).tau,
                               [1000.0, 10.0])


@pytest.mark.parametrize('law', ['pd', 'pd_gravity', 'computed_torque', 'adaptive'])
def test_batch_calls_equal_single_calls(scara, law):
    rng = np.random.default_rng(3)
    q, qd = rng.uniform(-1, 1, (2, 5, 3)) * [1.0, 1.0, 0.1]
    ref = TrajectoryPoint(*rng.uniform(-1, 1, (3, 5, 3)))
    c = control.make_law(law, scara, kp=KP, kd=KD)
    batch = c.compute(0.0, q, qd, ref)
    for i in range(5):
        one = c.compute(0.0, q[i], qd[i], TrajectoryPoint(ref.q[i], ref.qd[i], ref.qdd[i]))
        np.testing.assert_allclose(batch.tau[i], one.tau, atol=1e-12)
        np.testing.assert_array_equal(batch.saturated[i], one.saturated)


def test_non_finite_inputs_are_named(planar_2r):
    law = control.ComputedTorque(planar_2r, KP, KD)
    ref = TrajectoryPoint(np.array([0.0, np.nan]), np.zeros(2), np.zeros(2))
    with pytest.raises(InputError, match='reference q: contains non-finite values'):
        law.compute(0.0, np.zeros(2), np.zeros(2), ref)
    with pytest.raises(InputError, match='qd'):
        control.PD(planar_2r, 1.0, 1.0).compute(0.0, np.zeros(2), [np.inf, 0.0],
                                                TrajectoryPoint.at_rest(np.zeros(2)))
    with pytest.raises(ShapeError, match=r'q: expected shape \(..., 2\)'):
        law.compute(0.0, np.zeros(3), np.zeros(3), TrajectoryPoint.at_rest(np.zeros(2)))
    with pytest.raises(InputError, match='reference: expected'):
        law.compute(0.0, np.zeros(2), np.zeros(2), 5.0)


def test_pid_integrates_resets_and_does_not_wind_up(planar_2r):
    law = control.PID(planar_2r, kp=0.0, ki=[10.0, 20.0], kd=0.0)
    ref = TrajectoryPoint.at_rest([0.1, -0.2])
    law.compute(0.0, np.zeros(2), np.zeros(2), ref)            # first call: no integration
    np.testing.assert_array_equal(law.state.integral, 0.0)
    cmd = law.compute(0.5, np.zeros(2), np.zeros(2), ref)
    np.testing.assert_allclose(law.state.integral, [0.05, -0.1])
    np.testing.assert_allclose(cmd.tau, [0.5, -2.0])
    with pytest.raises(InputError, match='before the previous call'):
        law.compute(0.4, np.zeros(2), np.zeros(2), ref)
    law.reset()
    assert law.state.time is None and not law.state.integral.any()
    # a large error that saturates joint 1: its integral stops growing, its limit is respected
    big = TrajectoryPoint.at_rest([3.0, 0.0])
    windup = control.PID(planar_2r, kp=100.0, ki=50.0, kd=0.0)
    for k in range(200):
        cmd = windup.compute(0.01 * k, np.zeros(2), np.zeros(2), big)
    assert cmd.saturated[0] and cmd.tau[0] == pytest.approx(200.0)
    assert windup.state.integral[0] == pytest.approx(0.0)    # never integrated while saturated
    clamp = control.PID(planar_2r, kp=0.0, ki=50.0, kd=0.0, integral_limit=20.0, saturate=False)
    for k in range(200):
        cmd = clamp.compute(0.01 * k, np.zeros(2), np.zeros(2), big)
    assert cmd.tau[0] == pytest.approx(20.0)                  # |Ki int e| clamped


def test_pid_restart_keeps_the_integral_for_a_clock_that_jumps_back(planar_2r):
    law = control.PID(planar_2r, kp=0.0, ki=[10.0, 20.0], kd=0.0)
    ref = TrajectoryPoint.at_rest([0.1, -0.2])
    e = np.array([0.1, -0.2])
    law.compute(4.0, np.zeros(2), np.zeros(2), ref)
    law.compute(4.5, np.zeros(2), np.zeros(2), ref)
    np.testing.assert_allclose(law.state.integral, 0.5 * e)
    # simulated time restarts at 0: a plain call is rejected and names the way out
    with pytest.raises(InputError, match=r'before the previous call at 4.5 s; call restart\(\)'):
        law.compute(0.0, np.zeros(2), np.zeros(2), ref)
    np.testing.assert_allclose(law.state.integral, 0.5 * e)          # untouched by the error
    law.restart()
    assert law.state.time is None
    cmd = law.compute(0.1, np.zeros(2), np.zeros(2), ref)             # like a first call
    np.testing.assert_allclose(law.state.integral, 0.5 * e)
    np.testing.assert_allclose(cmd.tau, np.array([10.0, 20.0]) * 0.5 * e)   # the held integral
    law.compute(0.3, np.zeros(2), np.zeros(2), ref)
    np.testing.assert_allclose(law.state.integral, 0.7 * e)
    # restart at a given time: the next call integrates from it
    law.restart(time=0.0)
    law.compute(0.1, np.zeros(2), np.zeros(2), ref)
    np.testing.assert_allclose(law.state.integral, 0.8 * e)
    # reset clears the integral too
    law.reset(time=1.0)
    law.compute(1.5, np.zeros(2), np.zeros(2), ref)
    np.testing.assert_allclose(law.state.integral, 0.5 * e)
    for bad in (np.nan, np.inf, 'soon'):
        with pytest.raises(InputError, match='time'):
            law.restart(time=bad)
        with pytest.raises(InputError, match='t: expected'):
            law.compute(bad, np.zeros(2), np.zeros(2), ref)


def joint_law_arguments(model):
    """Return ``{law: keyword arguments}`` for every joint law, some settings off default."""
    n = model.dof
    kp, kd = np.linspace(50.0, 80.0, n), np.linspace(5.0, 9.0, n)
    return {
        control.Law.PD: {'kp': kp, 'kd': kd, 'effort_limit': np.full(n, 30.0)},
        control.Law.PD_GRAVITY: {'kp': kp, 'kd': kd, 'saturate': False},
        control.Law.PID: {'kp': kp, 'ki': np.linspace(1.0, 3.0, n), 'kd': kd,
                          'integral_limit': np.full(n, 5.0), 'gravity_compensation': True},
        control.Law.COMPUTED_TORQUE: {'kp': kp, 'kd': kd, 'friction': 'reference'},
        control.Law.ADAPTIVE: {'kp': kp, 'kd': kd, 'gamma': 1e-3, 'friction': 'measured'},
    }


def by_joint(model, values):
    return dict(zip(model.joint_names, np.asarray(values).tolist()))


def test_every_law_takes_gains_keyed_by_joint_or_task_row(scara):
    q, qd = np.array([0.3, 1.0, 0.1]), np.array([0.2, -0.1, 0.05])
    ref = TrajectoryPoint(q + 0.05, np.full(3, 0.1), np.full(3, -0.2))
    for law, arguments in joint_law_arguments(scara).items():
        named = {k: by_joint(scara, v) if isinstance(v, np.ndarray) else v
                 for k, v in arguments.items()}
        a = control.make_law(law, scara, **arguments)
        b = control.make_law(law, scara, **named)
        np.testing.assert_array_equal(b.compute(0.0, q, qd, ref).tau,
                                      a.compute(0.0, q, qd, ref).tau, err_msg=law.value)
    kp = dict(zip(control.TASK_ROWS, [100.0, 200.0, 300.0, 0.0, 0.0, 50.0]))
    kd = dict(zip(control.TASK_ROWS, [20.0, 28.0, 35.0, 0.0, 0.0, 14.0]))
    named = control.ResolvedAcceleration(scara, kp, kd)
    np.testing.assert_array_equal(named.kp, [100.0, 200.0, 300.0, 0.0, 0.0, 50.0])
    np.testing.assert_array_equal(named.kd, list(kd.values()))
    wrong = {**dict.fromkeys(control.TASK_ROWS[1:], 1.0), 'x': 1.0}
    with pytest.raises(InputError, match=r"kp: task row names .*unknown \['x'\], "
                                         r"missing \['vx'\]"):
        control.ResolvedAcceleration(scara, wrong, kd)


def test_with_gains_is_the_law_built_with_those_gains(scara, rng):
    q, qd = rng.uniform(-1.0, 1.0, (2, 4, 3)) * [1.0, 1.0, 0.1]
    ref = TrajectoryPoint(*rng.uniform(-1.0, 1.0, (3, 4, 3)))
    for law, arguments in joint_law_arguments(scara).items():
        old = control.make_law(law, scara, **arguments)
        new_kd = np.array([1.0, 2.0, 3.0])
        changed = old.with_gains(kp=40.0, kd=by_joint(scara, new_kd))
        expected = control.make_law(law, scara, **{**arguments, 'kp': 40.0, 'kd': new_kd})
        assert type(changed) is type(old)
        np.testing.assert_array_equal(changed.kp, [40.0] * 3)
        np.testing.assert_array_equal(changed.compute(0.0, q, qd, ref).tau,
                                      expected.compute(0.0, q, qd, ref).tau, err_msg=law.value)
        np.testing.assert_array_equal(old.kp, arguments['kp'])       # the old law is unchanged
        # a mapping may name only the joints that change
        one = old.with_gains(kp={'elbow': 7.0})
        np.testing.assert_array_equal(one.kp, [arguments['kp'][0], 7.0, arguments['kp'][2]])
        for bad, message in (({'kp': -1.0}, r'kp\[0\].*must be >= 0'),
                             ({'kd': {'knee': 1.0}}, r"unknown \['knee'\]"),
                             ({'kp': [1.0, 2.0]}, 'kp: expected a scalar or 3 values'),
                             ({'gain': 1.0}, r"has no gains \['gain'\]")):
            with pytest.raises((InputError, ShapeError), match=message):
                old.with_gains(**bad)
    ra = control.ResolvedAcceleration(scara, KP, KD, friction='reference', damping=1e-4)
    stiffer = ra.with_gains(kp={'vz': 900.0})
    np.testing.assert_array_equal(stiffer.kp, [KP, KP, 900.0, KP, KP, KP])
    assert stiffer.friction is control.Friction.REFERENCE and stiffer.damping == 1e-4
    with pytest.raises(InputError, match=r"has no gains \['mask'\]"):
        ra.with_gains(mask=np.ones(6))


def test_pid_with_gains_keeps_its_state(planar_2r):
    ref = TrajectoryPoint.at_rest([0.1, -0.2])
    pid = control.PID(planar_2r, kp=5.0, ki=[10.0, 20.0], kd=1.0)
    pid.compute(0.0, np.zeros(2), np.zeros(2), ref)
    pid.compute(0.5, np.zeros(2), np.zeros(2), ref)
    tuned = pid.with_gains(ki={'joint2': 40.0})
    assert tuned.state == pid.state
    # the same as a new PID with those gains, started from the state the old one reached
    fresh = control.PID(planar_2r, kp=5.0, ki=[10.0, 40.0], kd=1.0)
    fresh.reset(integral=pid.state.integral, time=0.5)
    a = tuned.compute(0.75, np.zeros(2), np.zeros(2), ref)
    b = fresh.compute(0.75, np.zeros(2), np.zeros(2), ref)
    np.testing.assert_array_equal(a.tau, b.tau)
    np.testing.assert_allclose(tuned.state.integral, [0.075, -0.15])
    np.testing.assert_allclose(a.tau, 5.0 * np.array([0.1, -0.2]) + [10.0, 40.0] * np.array(
        [0.075, -0.15]))
    np.testing.assert_allclose(pid.state.integral, [0.05, -0.1])    # the old one did not move


@pytest.mark.parametrize('name', ['scara', 'iiwa14'])
def test_resolved_acceleration_broadcasts_like_the_joint_laws(bundled, name, rng):
    """One state against a batch of references (and the reverse) equals a loop of single calls."""
    model = bundled[name]
    n = model.dof
    q = 0.5 * (np.clip(model.lower, -2.0, 2.0) + np.clip(model.upper, -2.0, 2.0)) + 0.3
    qd = rng.normal(scale=0.2, size=n)
    law = control.ResolvedAcceleration(model, KP, KD, friction='reference')
    poses = model.fk(q + rng.normal(scale=0.05, size=(2, 3, n)))
    twists, accelerations = rng.normal(size=(2, 2, 3, 6))
    batch = law.compute(0.0, q, qd, tr.TaskPoint(poses, twists, accelerations))
    assert batch.tau.shape == (2, 3, n) and batch.error.shape == (2, 3, 6)
    for i in np.ndindex(2, 3):
        one = law.compute(0.0, q, qd, tr.TaskPoint(poses[i], twists[i], accelerations[i]))
        np.testing.assert_allclose(batch.tau[i], one.tau, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(batch.error[i], one.error, rtol=1e-12, atol=1e-15)
    # a batch of states against one reference, twist given once for all
    Q = q + rng.normal(scale=0.05, size=(4, n))
    batch = law.compute(0.0, Q, np.broadcast_to(qd, Q.shape),
                        tr.TaskPoint(poses[0, 0], twists[0, 0], None))
    for k in range(4):
        one = law.compute(0.0, Q[k], qd, tr.TaskPoint(poses[0, 0], twists[0, 0], np.zeros(6)))
        np.testing.assert_allclose(batch.tau[k], one.tau, rtol=1e-12, atol=1e-9)
    with pytest.raises(ShapeError, match='do not broadcast with q'):
        law.compute(0.0, Q, np.broadcast_to(qd, Q.shape), tr.TaskPoint(poses[0], None, None))


# ---- closed loops ------------------------------------------------------------------------------

def reference(model, effort_fraction=sim.REFERENCE_EFFORT_FRACTION):
    """Return the CLI's reference: a quintic through waypoints, for a TRACK_DURATION s run."""
    traj, _ = sim.reference_trajectory(model, TRACK_DURATION, effort_fraction=effort_fraction)
    return traj


@pytest.mark.parametrize('robot', ['planar_2r', 'scara'])
def test_computed_torque_exact_model_tracks_a_quintic(robot):
    model = RobotModel.load(robot)
    ref = reference(model)
    law = control.ComputedTorque(model, KP, KD, friction='reference')
    rec = sim.track_reference(model, law, ref, ref.end_time + HOLD)
    e = sim.tracking_error(model, rec, ref)
    assert rec.stable and not rec.saturated.any()
    assert rms(e) <= 1e-4, f'{robot}: computed torque rms error {rms(e):.3g} rad'
    # measured: planar_2r rms 1.5e-5 rad (max 3.0e-5), scara rms 3.0e-5 (max 1.0e-4; rad and m)


def test_pd_shows_the_gravity_sag_of_planar_2r(planar_2r):
    q_d = np.array([0.3, -0.4])
    inertia = np.diag(planar_2r.mass_matrix(np.zeros(2)))
    kp, kd = KP * inertia, KD * inertia
    law = control.PD(planar_2r, kp, kd)
    rec = sim.track_reference(planar_2r, law, tr.point_to_point(q_d, q_d, 0.0), 1.5)
    e_ss = q_d - rec.q[-1]
    assert np.abs(rec.qd[-1]).max() < 1e-5                      # settled
    assert np.all(e_ss > 5e-3)                                  # a clear sag (0.0079, 0.0122 rad)
    # at rest Kp e = g(q): the sag is Kp^-1 g at the sagged pose, and about Kp^-1 g(q_d)
    np.testing.assert_allclose(e_ss, planar_2r.gravity_torques(rec.q[-1]) / kp, rtol=1e-3)
    np.testing.assert_allclose(e_ss, planar_2r.gravity_torques(q_d) / kp, rtol=0.01)


def test_pd_gravity_removes_the_set_point_error(planar_2r):
    q_d = np.array([0.3, -0.4])
    inertia = np.diag(planar_2r.mass_matrix(np.zeros(2)))
    law = control.PDGravity(planar_2r, KP * inertia, KD * inertia)
    rec = sim.track_reference(planar_2r, law, tr.point_to_point(q_d, q_d, 0.0), 1.5)
    assert np.abs(q_d - rec.q[-1]).max() < 1e-6


@pytest.mark.parametrize('model_error', [0.2, -0.2])
def test_computed_torque_with_model_error_stays_stable_and_bounded(planar_2r, model_error):
    ref = reference(planar_2r, effort_fraction=0.8)            # the whole path in ~2 s
    wrong = sim.with_model_error(planar_2r, model_error)
    law = control.ComputedTorque(wrong, KP, KD, friction='reference')
    rec = sim.track_reference(planar_2r, law, ref, ref.end_time + HOLD)
    e = sim.tracking_error(planar_2r, rec, ref)
    assert rec.stable and not rec.saturated.any()
    # measured: +20 %: max 5.2e-3 rad, rms 2.3e-3; -20 %: max 8.0e-3, rms 3.6e-3
    # (exact model on the same path: max 8.5e-5, rms 3.9e-5)
    assert np.abs(e).max() < 2e-2
    assert np.abs(e[-1]).max() < 0.5 * np.abs(e).max()        # decaying on the final hold
    assert np.abs(rec.qd[-1]).max() < 5e-3                    # and settling


def test_resolved_acceleration_tracks_a_cartesian_line_on_scara(scara):
    q0 = np.array([0.3, 1.0, 0.1])
    T0 = scara.fk(q0)
    T1 = T0.copy()
    T1[:3, 3] += [-0.2, 0.15, 0.05]
    line = tr.CartesianLine(T0, T1, 1.0)
    law = control.ResolvedAcceleration(scara, KP, KD, friction='reference')
    rec = sim.track_reference(scara, law, line, 1.5, q0=q0)
    e = sim.tracking_error(scara, rec, line)                    # tip position rows [m]
    assert e.shape[1] == 3 and rec.stable
    assert np.abs(e).max() <= 1e-4, f'tip error {np.abs(e).max():.3g} m'
    # measured: max 3.9e-5 m, rms 7.3e-6 m with the plant's friction


def test_resolved_acceleration_controls_orientation_where_the_arm_can(bundled):
    from robot_dynamics.spatial import rot_z
    for name, q0 in (('planar_3r', [0.3, 0.8, 0.6]),
                     ('iiwa14', [0.2, 0.6, -0.3, -1.2, 0.3, 0.8, 0.2])):
        model = bundled[name]
        q0 = np.array(q0)
        T0 = model.fk(q0)
        T1 = T0.copy()
        T1[:3, 3] += [-0.05, 0.05, 0.03 * (name == 'iiwa14')]
        T1[:3, :3] = rot_z(0.2) @ T0[:3, :3]
        line = tr.CartesianLine(T0, T1, 0.8)
        law = control.ResolvedAcceleration(model, KP, KD)
        rec = sim.track_reference(model, law, line, 1.0, q0=q0, friction=False)
        e = sim.tracking_error(model, rec, line)
        assert e.shape[1] == int(model.task_mask.sum())         # includes yaw (or all three)
        assert np.abs(e).max() < 1e-4, f'{name}: task error {np.abs(e).max():.3g}'


# ---- the adaptive law ---------------------------------------------------------------------------

def test_adaptive_law_is_slotine_li_with_the_nominal_model_first(planar_2r, rng):
    """Torque ``M qdd_r + C(q, qd) qd_r + g + f(qd_d) + Kd s``, then ``dt Gamma Y^T s`` added."""
    from robot_dynamics.dynamics import friction_torques
    kp, kd = np.array([60.0, 30.0]), np.array([12.0, 5.0])
    law = control.make_law('adaptive', planar_2r, kp=kp, kd=kd, gamma=1e-3)
    assert law.law is control.Law.ADAPTIVE
    assert law.gains == {'kp': kp.tolist(), 'kd': kd.tolist()}
    q, qd = rng.uniform(-1, 1, (2, 2))
    ref = TrajectoryPoint(*rng.uniform(-1, 1, (3, 2)))
    lam = kp / kd
    e, e_dot = ref.q - q, ref.qd - qd
    qd_r, qdd_r = ref.qd + lam * e, ref.qdd + lam * e_dot
    s = e_dot + lam * e
    expected = planar_2r.mass_matrix(q) @ qdd_r + planar_2r.coriolis_matrix(q, qd) @ qd_r + \
        planar_2r.gravity_torques(q) + friction_torques(planar_2r, ref.qd) + kd * s
    cmd = law.compute(1.0, q, qd, ref)
    np.testing.assert_allclose(cmd.tau, expected, rtol=1e-10)
    np.testing.assert_array_equal(law.state.estimate, law.nominal)
    assert law.state.time == 1.0
    # the next call 2 ms later moves the estimate by dt Gamma Y^T s of that call
    Y = law.regressor(q, qd, qd_r, qdd_r, ref.qd)
    cmd = law.compute(1.002, q, qd, ref)
    step = law.state.estimate - law.nominal
    np.testing.assert_allclose(step, 0.002 * law.gamma * (Y.T @ s), rtol=1e-12, atol=1e-18)
    np.testing.assert_allclose(cmd.tau, Y @ law.state.estimate + kd * s, rtol=1e-12)
    assert np.any(step != 0.0)
    # Gamma: gamma times the squared half-width of each parameter's box
    np.testing.assert_allclose(law.gamma, 1e-3 * ((law.upper - law.lower) / 2) ** 2)
    assert len(law.parameter_names) == law.base.count == 10
    # time runs forwards; restart keeps the estimate, reset returns to the model's
    with pytest.raises(InputError, match='before the previous call'):
        law.compute(1.0, q, qd, ref)
    kept = law.state.estimate
    law.restart()
    law.compute(0.0, q, qd, ref)
    np.testing.assert_array_equal(law.state.estimate, kept)
    softer = law.with_gains(kp=[30.0, 15.0])
    np.testing.assert_array_equal(softer.state.estimate, kept)
    law.reset()
    np.testing.assert_array_equal(law.state.estimate, law.nominal)


def test_adaptive_estimate_stays_in_its_box_and_bad_settings_are_named(planar_2r):
    narrow = control.Adaptive(planar_2r, 100.0, 10.0, gamma=1e3)
    lower, upper = narrow.nominal - 0.01, narrow.nominal + 0.01
    law = control.Adaptive(planar_2r, 100.0, 10.0, gamma=1e7, bounds=(lower, upper))
    ref = TrajectoryPoint(np.array([0.2, -0.2]), np.full(2, 0.1), np.zeros(2))
    for k in range(5):
        law.compute(0.01 * k, np.zeros(2), np.zeros(2), ref)
    assert np.all(law.state.estimate >= lower) and np.all(law.state.estimate <= upper)
    assert np.any(law.state.estimate == upper) or np.any(law.state.estimate == lower)
    # a torque that saturates keeps the estimate (conditional adaptation); unclipped, it moves
    far = TrajectoryPoint(np.array([2.0, -2.0]), np.ones(2), np.ones(2))
    for saturate, moves in ((True, False), (False, True)):
        law = control.Adaptive(planar_2r, 100.0, 10.0, gamma=1e-3, saturate=saturate)
        first = law.compute(0.0, np.zeros(2), np.zeros(2), far)
        law.compute(0.01, np.zeros(2), np.zeros(2), far)
        assert first.saturated.any() == saturate
        assert np.any(law.state.estimate != law.nominal) == moves
    # the default box: one arm's mass (3 kg) at its reach (4 m) and the effort limits
    default = control.parameter_bounds(planar_2r, narrow.base, narrow.nominal)
    names = narrow.parameter_names
    half = (default[1] - default[0]) / 2
    assert half[names.index('link2.mcx')] == pytest.approx(3.0 * 4.0)
    assert half[names.index('link2.iyy')] == pytest.approx(3.0 * 16.0)
    assert half[names.index('joint1.friction')] == pytest.approx(200.0)
    assert half[names.index('joint2.damping')] == pytest.approx(100.0 / 5.0)
    for kwargs, message in (({'kd': 0.0}, r"kd\[0\] \(joint 'joint1'\) = 0.0: the adaptive law"),
                            ({'gamma': -1.0}, 'gamma: expected a scalar or 10 values >= 0'),
                            ({'bounds': (upper, lower)}, 'lower <= upper'),
                            ({'bounds': (lower + 1.0, upper + 1.0)}, "the model's own"),
                            ({'friction': 'stiction'}, 'friction: expected one of')):
        with pytest.raises(InputError, match=message):
            control.Adaptive(planar_2r, **{'kp': 100.0, 'kd': 10.0, **kwargs})


def test_payload_merges_into_the_last_body(planar_2r):
    """A point mass at the planar 2R's tip (2 m along link 2) adds m g (l1 c1 + l2 c12)."""
    plant = sim.with_payload(planar_2r, 0.5)
    np.testing.assert_allclose(plant.mass, [2.0, 1.5])
    np.testing.assert_allclose(plant.com[1], [(1.0 * 1.0 + 0.5 * 2.0) / 1.5, 0.0, 0.0])
    q = np.array([0.3, -0.5])
    extra = 0.5 * 9.81 * np.array([2 * np.cos(0.3) + 2 * np.cos(-0.2), 2 * np.cos(-0.2)])
    np.testing.assert_allclose(plant.gravity_torques(q) - planar_2r.gravity_torques(q), extra,
                               rtol=1e-12)
    # an inertia about the payload's COM adds to the last joint's mass matrix entry directly
    solid = sim.with_payload(planar_2r, 0.5, com=[0.1, 0.0, 0.0], inertia=[0, 0, 0, 0.02, 0, 0])
    point = sim.with_payload(planar_2r, 0.5, com=[0.1, 0.0, 0.0])
    np.testing.assert_allclose(solid.mass_matrix(q)[1, 1] - point.mass_matrix(q)[1, 1], 0.02,
                               rtol=1e-12)
    with pytest.raises(InputError, match='payload mass'):
        sim.with_payload(planar_2r, -1.0)


def periodic_reference(model, period, repetitions):
    """Return a reference that repeats one motion: each joint out and back, 0.4 rad."""
    home = sim.home_configuration(model)
    t = np.arange(0.0, period * repetitions + 1e-9, 0.01)
    sign = (-1.0) ** np.arange(1, model.dof + 1)
    w = 2.0 * np.pi / period
    phase = w * t[:, None]
    q = home + 0.2 * sign * (1.0 - np.cos(phase))
    qd = 0.2 * sign * w * np.sin(phase)
    qdd = 0.2 * sign * w ** 2 * np.cos(phase)
    return tr.from_waypoints(t, q, qd, qdd)


@pytest.mark.parametrize('robot, payload, gamma, fraction', [
    ('planar_2r', 2.0, 1e-2, 0.02),
    ('puma560', 2.0, control.DEFAULT_ADAPTATION_GAIN, 0.01),
])
def test_adaptive_learns_a_payload_that_computed_torque_does_not_know(
        bundled, robot, payload, gamma, fraction):
    """
    Five repetitions of a 2 s motion with a payload at the tip that the controllers' model lacks.

    Computed torque (20 rad/s) tracks as badly every time; the adaptive law with the same
    nominal bandwidth (its gains scaled by the diagonal of M at home) tracks better every
    time. Measured (rms per repetition, rad): planar 2R, 2 kg: computed torque 0.0369 each
    time, adaptive 0.0110, 0.0045, 0.0010, 0.00065, 0.00047; PUMA 560, 2 kg (its link 6 weighs
    0.09 kg): computed torque 0.69, adaptive 0.0060, 0.0060, 0.0035, 0.0026, 0.0026.
    """
    model = bundled[robot]
    plant = sim.with_payload(model, payload, com=[0.02, 0.0, 0.03])
    period, repetitions = 2.0, 5
    reference = periodic_reference(model, period, repetitions)
    home = sim.home_configuration(model)
    inertia = np.diag(model.mass_matrix(home))
    computed = sim.default_law('computed_torque', model, home, natural_frequency=WN)
    adaptive = control.Adaptive(model, KP * inertia, KD * inertia, gamma=gamma)
    errors = {}
    for name, law in (('computed_torque', computed), ('adaptive', adaptive)):
        rec = sim.track_reference(plant, law, reference, period * repetitions)
        assert rec.stable, name
        e = reference.sample(rec.t).q - rec.q
        errors[name] = np.array([rms(e[(rec.t >= k * period) & (rec.t < (k + 1) * period)])
                                 for k in range(repetitions)])
    ct, ad = errors['computed_torque'], errors['adaptive']
    assert np.ptp(ct[1:]) < 1e-3 * ct[-1]                  # computed torque does not learn
    assert np.all(np.diff(ad) < 0.0) or ad[-1] < 0.5 * ad[0]
    assert ad[-1] < fraction * ct[-1], (ad, ct)
    est = adaptive.state.estimate
    assert np.all(est >= adaptive.lower) and np.all(est <= adaptive.upper)
