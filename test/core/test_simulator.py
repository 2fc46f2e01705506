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

"""The simulated arm's logic on explicit times: pacing, commands, lockstep, reset, wrench."""

import math

from graph_harness import SimulatorGraph
import numpy as np
import pytest
from robot_dynamics import RobotModel
from robot_dynamics.closed_loop import graph_loop
from robot_dynamics.diagnostics import Level, simulator_status
from robot_dynamics.errors import InputError
from robot_dynamics.events import Kind
from robot_dynamics.integrators import rk4_step
from robot_dynamics.model import chain_options
from robot_dynamics.plant import Plant
from robot_dynamics.simulator import configured_plant, DEFAULT_LOCKSTEP_TIMEOUT, Simulator, STALL
from scipy.optimize import fsolve

DT = 1e-3
Q0 = np.array([0.3, -0.4])


@pytest.fixture
def arm():
    return RobotModel.load('planar_2r')


def _kinds(events):
    return [e.kind for e in events]


def _sim(arm, **options):
    return Simulator(arm, 1.0 / DT, q0=Q0, **options)


def test_due_steps_and_lateness_on_explicit_times(arm):
    sim = _sim(arm)
    first = sim.tick(100.0, system_ns=5 * 10**9)
    assert first.lateness == 0.0 and first.stamp_ns == 5 * 10**9 and first.publish
    sim.step(100.0)
    # step 1 is due 1 ms after step 0: asked early, the wait says how long
    assert sim.wait(100.0004) == pytest.approx(0.0006, abs=1e-12)
    on_time = sim.tick(100.0015)     # 0.5 ms late: not a late step
    assert on_time.lateness == pytest.approx(0.0005) and sim.late_steps == 0
    assert on_time.stamp_ns == 5 * 10**9 + 10**6
    sim.step(100.0015)
    late = sim.tick(100.0045)        # step 2 due at 100.002: 2.5 ms late
    assert late.lateness == pytest.approx(0.0025) and sim.late_steps == 1 and late.events == []
    # stamped with its step's time on the grid however late it ran
    assert late.stamp_ns == 5 * 10**9 + 2 * 10**6
    sim.step(100.0045)
    # the steps due run at once (no wait) until the grid is caught up
    assert sim.wait(100.0045) == 0.0
    stalled = sim.tick(100.003 + STALL + 0.01)
    assert sim.late_steps == 2 and _kinds(stalled.events) == [Kind.STALL]
    assert 'step 3 started 60 ms late' in stalled.events[0].message
    sim.step(100.1)
    assert sim.status(100.1).step_lateness_p99 == pytest.approx(
        np.percentile([0.0, 0.0005, 0.0025, 0.06], 99))


def test_off_real_time_no_pacing_and_simulated_stamps(arm):
    sim = _sim(arm, realtime=False)
    for k in range(3):
        tick = sim.tick(0.0)       # the same clock reading: never late, never waits
        assert tick.lateness == 0.0 and tick.stamp_ns == k * 10**6 and sim.wait(0.0) == 0.0
        sim.step(0.0)
    assert sim.late_steps == 0 and sim.status(0.0).step_lateness_p99 == 0.0


def test_braked_until_the_first_command_then_the_newest_wins(arm):
    arm = arm.replace(damping=np.zeros(2), friction=np.zeros(2))
    sim = _sim(arm, realtime=False)
    for k in range(5):
        sim.tick(k * DT)
        sim.step(k * DT)
    # gravity acts, nothing moves
    np.testing.assert_array_equal(sim.plant.q, Q0)
    assert sim.plant.t == pytest.approx(5 * DT)
    taken, events = sim.command([1.0, 2.0], 0.005)
    assert taken and events == []
    sim.command([3.0, -1.0], 0.005)      # a newer one before the step: it wins
    q, qd = sim.plant.q.copy(), sim.plant.qd.copy()
    sim.tick(0.005)
    stepped = sim.step(0.005)
    assert _kinds(stepped.events) == [Kind.COMMANDS_BACK]
    expected = rk4_step(arm, q, qd, np.array([3.0, -1.0]), DT)
    np.testing.assert_allclose(sim.plant.q, expected[0], rtol=0, atol=1e-14)
    np.testing.assert_array_equal(sim.plant.effort, [3.0, -1.0])


def test_without_brakes_the_arm_falls_at_once(arm):
    sim = _sim(arm, realtime=False, brake_until_command=False)
    sim.tick(0.0)
    sim.step(0.0)
    assert np.abs(sim.plant.q - Q0).max() > 0.0 and not sim.plant.effort.any()


@pytest.mark.parametrize('interface, idle', [('effort', 'zero'), ('velocity', 'zero'),
                                             ('position', 'here')])
def test_the_idle_command_after_the_command_timeout(arm, interface, idle):
    sim = _sim(arm, realtime=False, interface=interface, command_timeout=0.1,
               brake_on_timeout=False)
    sim.command([0.4, -0.2] if interface == 'position' else [1.0, 1.0], 0.0)
    sim.tick(0.0)
    assert sim.step(0.0).events[0].kind is Kind.COMMANDS_BACK
    sim.tick(0.1)
    assert sim.step(0.1).events == [] and not sim.command_timed_out    # 0.1 s: not yet
    sim.tick(0.1001)
    here = sim.plant.q.copy()
    [event] = sim.step(0.1001).events
    assert event.kind is Kind.COMMANDS_TIMED_OUT and '0.1 s' in event.message
    assert sim.status(0.2).command_timed_out
    if idle == 'zero' and interface == 'effort':
        np.testing.assert_array_equal(sim.plant.effort, [0.0, 0.0])
    elif interface == 'velocity':
        np.testing.assert_array_equal(sim.plant.qd, [0.0, 0.0])
    else:
        np.testing.assert_array_equal(sim.plant.q, here)        # held where it was


def test_the_brakes_after_the_command_timeout_until_commands_return(arm):
    # the drive's watchdog: a controller starved or dead for command_timeout leaves the arm
    # where it was (gravity acts on this arm: without brakes it falls, as the test above shows)
    sim = _sim(arm, realtime=False, command_timeout=0.1, friction=False)
    tau = arm.gravity_torques(Q0)
    sim.command(tau, 0.0)
    for k in range(101):
        sim.tick(k * DT)
        sim.step(k * DT)
    moving = sim.plant.qd.copy()
    assert not sim.command_timed_out and np.abs(moving).max() < 1e-9   # gravity held
    sim.tick(0.1001)
    here = sim.plant.q.copy()
    [event] = sim.step(0.1001).events
    assert event.kind is Kind.COMMANDS_TIMED_OUT and 'the brakes hold the arm' in event.message
    for k in range(500):
        sim.tick(0.102 + k * DT)
        sim.step(0.102 + k * DT)
    np.testing.assert_array_equal(sim.plant.q, here)
    np.testing.assert_array_equal(sim.plant.qd, [0.0, 0.0])
    assert sim.status(0.6).command_timed_out
    # commands return: the brakes release and the command acts (a one-step RK4 from rest)
    sim.command([3.0, -1.0], 0.7)
    sim.tick(0.7)
    assert _kinds(sim.step(0.7).events) == [Kind.COMMANDS_BACK]
    expected = rk4_step(arm, here, np.zeros(2), np.array([3.0, -1.0]), DT)
    np.testing.assert_allclose(sim.plant.q, expected[0], rtol=0, atol=1e-14)


def test_each_interface_follows_its_command(arm):
    position = _sim(arm, realtime=False, interface='position')
    target = Q0 + [1e-4, -2e-4]            # within one step of the velocity limit
    position.command(target, 0.0)
    position.tick(0.0)
    position.step(0.0)
    np.testing.assert_allclose(position.plant.q, target, rtol=0, atol=1e-15)
    velocity = _sim(arm, realtime=False, interface='velocity')
    velocity.command([0.5, -0.25], 0.0)
    velocity.tick(0.0)
    velocity.step(0.0)
    np.testing.assert_allclose(velocity.plant.q, Q0 + DT * np.array([0.5, -0.25]), atol=1e-15)
    np.testing.assert_allclose(velocity.plant.qd, [0.5, -0.25], atol=1e-12)


def test_rejected_commands_keep_the_last_good_one(arm):
    sim = _sim(arm, realtime=False)
    sim.command([1.0, 2.0], 0.0)
    for bad, words in (([1.0], 'expected 2 values'), ([np.nan, 0.0], "'joint1' is nan"),
                       ([1.0, 2.0, 3.0], 'got 3')):
        taken, [event] = sim.command(bad, 0.0)
        assert not taken and event.kind is Kind.COMMAND_REJECTED and words in event.message
    assert sim.rejected_commands == 3
    sim.tick(0.0)
    sim.step(0.0)
    np.testing.assert_array_equal(sim.plant.effort, [1.0, 2.0])


def test_one_source_of_commands_an_impostor_is_ignored_and_named(arm):
    sim = _sim(arm, realtime=False, command_timeout=0.1, source_timeout=1.0)
    assert sim.command([1.0, 2.0], 0.0, source='controller') == (True, [])
    taken, [event] = sim.command([9.0, 9.0], 0.01, source='impostor')
    assert not taken and event.kind is Kind.SECOND_SOURCE
    assert event.tag == ('controller', 'impostor')
    assert 'impostor' in event.message and 'controller' in event.message
    # reported once, counted every time
    assert sim.command([9.0, 9.0], 0.02, source='impostor') == (False, [])
    assert sim.ignored_commands == 2 and sim.status(0.0).ignored_commands == 2
    sim.tick(0.02)
    sim.step(0.02)
    np.testing.assert_array_equal(sim.plant.effort, [1.0, 2.0])
    # a malformed command from anyone is rejected, not ignored
    sim.command([np.nan, 0.0], 0.03, source='impostor')
    assert sim.rejected_commands == 1 and sim.ignored_commands == 2
    # the followed source's commands timed out (0.1 s) but a loaded host holds a controller up
    # for that long: the impostor is still not followed
    assert sim.command([9.0, 9.0], 0.5, source='impostor') == (False, [])
    # silent for the source timeout (a controller that died): a new one (a restarted
    # controller) is followed
    taken, [event] = sim.command([4.0, 5.0], 1.0, source='restarted')
    assert taken and event.kind is Kind.SOURCE_CHANGED and 'silent' in event.message
    assert event.tag == ('controller', 'restarted')
    taken, [event] = sim.command([1.0, 1.0], 1.01, source='controller')
    assert not taken and event.kind is Kind.SECOND_SOURCE


def test_lockstep_waits_for_the_answer_and_counts_unanswered_states(arm):
    sim = _sim(arm, lockstep=True, realtime=False, lockstep_timeout=1.0)
    first = sim.tick(0.0, system_ns=1000)
    # braked, no command yet: wait as long as it takes
    assert first.publish and first.answer_timeout == math.inf
    assert sim.waited(100.0) is None and sim.unanswered_states == 0
    # a command sent before the first state (kept for late joiners) answers nothing
    assert sim.command([1.0, 1.0], 0.0, sent_ns=999) == (False, [])
    assert sim.command([1.0, 1.0], 0.0, sent_ns=1000)[0]
    sim.step(0.0)
    second = sim.tick(0.0)
    assert second.answer_timeout == 1.0
    assert sim.waited(0.999) is None
    event = sim.waited(1.0)
    assert event.kind is Kind.UNANSWERED and sim.unanswered_states == 1
    sim.step(0.0)
    assert sim.wait(0.0) == 0.0
    # no wait until commands come again, and nothing sets the pace but the wall clock
    assert sim.tick(5.0).answer_timeout is None
    sim.step(5.0)
    assert sim.wait(5.0) == pytest.approx(DT) and sim.wait(5.0 + 3 * DT) == 0.0
    sim.tick(5.0 + 3 * DT)      # late: the steps due since come at once
    sim.step(5.0 + 3 * DT)
    assert sim.wait(5.0 + 3 * DT) == 0.0
    sim.command([1.0, 1.0], 5.0, sent_ns=2000)
    sim.step(5.0 + 3 * DT)
    assert sim.tick(5.0 + 3 * DT).answer_timeout == 1.0
    assert sim.wait(5.0 + 3 * DT) == 0.0


def test_lockstep_commands_sent_before_the_state_do_not_answer_it(arm):
    # a controller that started while the simulator stepped without waiting: its commands to
    # the states it saw come in one burst once it is found, the newest in force, and none of
    # them answers the state the simulator waits on now
    sim = _sim(arm, lockstep=True, realtime=False, lockstep_timeout=1.0)
    sim.tick(0.0, system_ns=1000)
    sim.command([0.0, 0.0], 0.0, sent_ns=1500)
    assert sim.answered
    sim.step(0.0)
    assert sim.tick(0.0, system_ns=5000).answer_timeout == 1.0 and not sim.answered
    for k, sent_ns in enumerate((2000, 3000, 4999)):
        assert sim.command([k, k], 0.0, sent_ns=sent_ns) == (True, [])
        assert not sim.answered
    assert sim.command([7.0, 7.0], 0.0, sent_ns=5000) == (True, []) and sim.answered
    # a newer state asks for a newer answer; the library's loop (no send times) always answers
    sim.step(0.0)
    sim.tick(0.0, system_ns=6000)
    assert not sim.answered
    sim.command([1.0, 1.0], 0.0)
    assert sim.answered


def test_lockstep_states_not_published_are_not_waited_for(arm):
    sim = _sim(arm, lockstep=True, realtime=False, publish_every=10)
    sim.tick(0.0, system_ns=0)
    sim.command([0.0, 0.0], 0.0, sent_ns=0)
    sim.step(0.0)
    timeouts = [(sim.tick(0.0).answer_timeout, sim.step(0.0))[0] for _ in range(10)]
    assert timeouts == [None] * 9 + [DEFAULT_LOCKSTEP_TIMEOUT]


def test_lockstep_in_real_time_a_wait_is_no_lateness(arm):
    sim = _sim(arm, lockstep=True, lockstep_timeout=1.0)
    sim.tick(10.0, system_ns=0)
    sim.command([0.0, 0.0], 10.0)
    sim.step(10.0)
    late = sim.tick(10.5)      # the controller took 0.5 s: the grid moves on
    assert late.lateness == 0.0 and sim.late_steps == 0
    sim.step(10.5)
    assert sim.wait(10.5) == pytest.approx(DT)


def test_reset_restores_the_initial_state_the_clock_runs_on(arm):
    sim = _sim(arm, realtime=False, publish_every=1000)
    sim.command([5.0, 5.0], 0.0)
    for _ in range(20):
        sim.tick(0.0)
        sim.step(0.0)
    assert np.abs(sim.plant.q - Q0).max() > 1e-4
    tick = sim.tick(0.0, reset=True)
    assert tick.reset and tick.publish and tick.stamp_ns == 20 * 10**6
    np.testing.assert_array_equal(sim.plant.q, Q0)
    np.testing.assert_array_equal(sim.plant.qd, [0.0, 0.0])


def test_real_time_stamps_start_on_the_system_clock_where_the_grid_starts(arm):
    # built long before it steps (a warm-up): step 0 is stamped when it runs, not at the build
    sim = _sim(arm)
    sim.command([0.0, 0.0], 50.0)
    for k in range(3):
        # later clock readings are the grid's time and a little (the stamp is the grid's)
        tick = sim.tick(50.0 + k * DT, system_ns=7 * 10**9 + k * (10**6 + 333))
        assert tick.stamp_ns == 7 * 10**9 + k * 10**6
        sim.step(50.0 + k * DT)
    # a reset puts the arm back, not the clock: the stamps stay on the grid
    restarted = sim.tick(50.0 + 3 * DT, reset=True, system_ns=0)
    assert restarted.reset and restarted.stamp_ns == 7 * 10**9 + 3 * 10**6


def test_a_failed_step_brakes_the_arm_where_it_was_and_says_why_until_a_reset(arm):
    # 1e9 N at the tip (allowed here, refused by default) drives the joints past any speed:
    # the step is not taken, the arm stays at its last good state, at rest, finite
    sim = _sim(arm, realtime=False, max_external_force=1e12)
    sim.command([0.0, 0.0], 0.0)
    for _ in range(3):
        sim.tick(0.0)
        sim.step(0.0)
    good = sim.plant.q.copy()
    sim.set_wrench([1e9, 0.0, 0.0, 0.0, 0.0, 0.0])
    sim.tick(0.0)
    stepped = sim.step(0.0)
    assert stepped.failed and stepped.status
    assert _kinds(stepped.events)[-1] is Kind.FAILED
    assert 'ran away' in sim.failure and "joint 'joint1' would move at" in sim.failure
    for _ in range(5):          # braked, whatever the command, until a reset
        sim.command([50.0, 50.0], 0.0)
        sim.tick(0.0)
        assert not sim.step(0.0).failed
        np.testing.assert_array_equal(sim.plant.q, good)
        assert not sim.plant.qd.any()
    figures = sim.figures(1.0)
    before = figures._replace(steps=figures.steps - 5)
    status = simulator_status(figures, before)
    assert status.level is Level.ERROR and 'ran away' in status.message
    sim.tick(0.0, reset=True)
    assert sim.failure == '' and not sim.plant.wrench.any()
    sim.tick(0.0)
    assert not sim.step(0.0).failed and not np.array_equal(sim.plant.q, good)


def test_a_wrench_beyond_the_bounds_is_refused_naming_the_bound(arm):
    sim = _sim(arm, realtime=False)
    assert (sim.max_external_force, sim.max_external_torque) == (1000.0, 100.0)
    sim.set_wrench([600.0, 800.0, 0.0, 0.0, 0.0, 60.0])     # |f| = 1000 N: at the bound
    with pytest.raises(InputError, match=r'force of 1e\+09 N is above max_external_force, 1000'):
        sim.set_wrench([1e9, 0.0, 0.0, 0.0, 0.0, 0.0])
    with pytest.raises(InputError, match=r'torque of 100.1 N m is above max_external_torque'):
        sim.set_wrench([0.0, 0.0, 0.0, 0.0, 0.0, 100.1])
    assert sim.plant.wrench.tolist() == [600.0, 800.0, 0.0, 0.0, 0.0, 60.0]


def test_a_status_when_a_stop_is_touched_and_every_status_every_steps():
    scara = RobotModel.load('scara')
    q0 = scara.upper - 1e-4
    sim = Simulator(scara, 1000.0, realtime=False, q0=np.minimum(q0, 0.29), status_every=50,
                    interface='velocity')
    sim.command(np.where(np.arange(scara.dof) == 2, 1.0, 0.0), 0.0)     # quill up
    statuses = []
    for k in range(60):
        sim.tick(0.0)
        statuses.append(sim.step(0.0).status)
    touched = statuses.index(True)
    assert touched < 49 and sim.plant.at_upper[2] and statuses[49]
    assert sim.status(0.0).at_upper.tolist() == [False, False, True]


def test_real_time_factor_over_the_status_period(arm):
    sim = _sim(arm, realtime=False)
    sim.status(10.0)
    sim.command([0.0, 0.0], 0.0)
    for _ in range(100):
        sim.tick(0.0)
        sim.step(0.0)
    assert sim.status(10.05).real_time_factor == pytest.approx(2.0)


def test_bad_settings_are_refused(arm):
    with pytest.raises(InputError, match='rate_hz'):
        Simulator(arm, 0.0)
    with pytest.raises(InputError, match='publish_every'):
        Simulator(arm, 1000.0, publish_every=0)
    with pytest.raises(InputError, match='command_timeout'):
        Simulator(arm, 1000.0, command_timeout=-1.0)


# ---- the external wrench ------------------------------------------------------------------------

def test_a_wrench_on_a_gravity_free_arm_accelerates_it_by_m_inverse_j_transpose_w(arm):
    free = arm.replace(gravity=np.zeros(3), damping=np.zeros(2), friction=np.zeros(2))
    sim = Simulator(free, 1000.0, realtime=False, brake_until_command=False, q0=Q0)
    w = np.array([10.0, -4.0, 0.0, 0.0, 0.0, 0.5])
    sim.set_wrench(w)
    tau_ext = sim.plant.external_torque()
    J = free.jacobian(Q0)
    np.testing.assert_allclose(tau_ext, J.T @ w, rtol=0, atol=1e-12)
    # the first step's acceleration: M^-1 J^T w exactly, and the library's f_ext is -w
    qdd = free.forward_dynamics(Q0, np.zeros(2), tau_ext)
    np.testing.assert_allclose(qdd, np.linalg.solve(free.mass_matrix(Q0), J.T @ w),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(qdd, free.forward_dynamics(Q0, np.zeros(2), np.zeros(2),
                                                          f_ext=-w), rtol=1e-12, atol=1e-12)
    sim.tick(0.0)
    sim.step(0.0)
    q1, qd1 = rk4_step(free, Q0, np.zeros(2), tau_ext, DT)
    np.testing.assert_allclose(sim.plant.q, q1, rtol=0, atol=1e-15)
    np.testing.assert_allclose(sim.plant.qd, qd1, rtol=0, atol=1e-13)
    # the drives applied nothing: the effort reported is theirs, not the environment's
    np.testing.assert_array_equal(sim.plant.effort, [0.0, 0.0])
    # the push moves the tip the way it pushes
    dx = free.fk(sim.plant.q)[:2, 3] - free.fk(Q0)[:2, 3]
    assert dx @ w[:2] > 0.0


def test_a_wrench_at_a_named_frame_and_zero_removes_it(arm):
    sim = Simulator(arm, 1000.0, realtime=False, q0=Q0)
    link = arm.link_names[1]
    w = np.array([0.0, 3.0, 0.0, 0.0, 0.0, 0.0])
    sim.set_wrench(w, link)
    np.testing.assert_allclose(sim.plant.external_torque(), arm.jacobian(Q0, link).T @ w,
                               atol=1e-12)
    status = sim.status(0.0)
    assert status.wrench_frame == link and status.wrench.tolist() == w.tolist()
    sim.set_wrench(np.zeros(6))
    assert not sim.plant.external_torque().any() and sim.plant.wrench_frame == arm.tip_link


@pytest.mark.parametrize('wrench, frame, words', [
    ([np.nan, 0, 0, 0, 0, 0], '', 'wrench'), ([1.0, 2.0], '', 'wrench'),
    ([1.0, 0, 0, 0, 0, 0], 'nowhere', "'nowhere': not a link")])
def test_a_bad_wrench_is_refused_and_the_one_in_force_stays(arm, wrench, frame, words):
    sim = Simulator(arm, 1000.0, realtime=False, q0=Q0)
    sim.set_wrench([0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    with pytest.raises(InputError, match=words):
        sim.set_wrench(wrench, frame)
    assert sim.plant.wrench.tolist() == [0.0, 1.0, 0.0, 0.0, 0.0, 0.0]


def test_static_equilibrium_against_a_joint_stiffness(arm):
    # a stiff spring about Q0 holds the arm against gravity and a 10 N push at the tip:
    # K (Q0 - q) + J(q)^T w = g(q) at rest
    K = np.array([200.0, 100.0])
    D = np.array([110.0, 30.0])
    w = np.array([10.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    sim = Simulator(arm, 1000.0, realtime=False, friction=False, q0=Q0)
    sim.set_wrench(w)
    for k in range(6000):
        t = k * DT
        sim.tick(t)
        q, qd = sim.plant.q, sim.plant.qd
        sim.command(K * (Q0 - q) - D * qd + arm.gravity_torques(Q0), t)
        sim.step(t)

    def residual(q):
        return K * (Q0 - q) + arm.gravity_torques(Q0) + arm.jacobian(q).T @ w \
            - arm.gravity_torques(q)
    expected = fsolve(residual, Q0, xtol=1e-13)
    np.testing.assert_allclose(residual(expected), 0.0, atol=1e-9)
    np.testing.assert_allclose(sim.plant.q, expected, atol=1e-7)
    assert np.abs(sim.plant.qd).max() < 1e-6


def test_ideal_followers_hold_against_the_wrench(arm):
    sim = Simulator(arm, 1000.0, realtime=False, interface='position', friction=False, q0=Q0)
    w = np.array([10.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    sim.set_wrench(w)
    sim.command(Q0, 0.0)
    sim.tick(0.0)
    sim.step(0.0)
    np.testing.assert_array_equal(sim.plant.q, Q0)
    # the drives' effort: gravity less the push's torque
    np.testing.assert_allclose(sim.plant.effort,
                               arm.gravity_torques(Q0) - arm.jacobian(Q0).T @ w, atol=1e-9)


def test_plant_and_simulator_agree(arm):
    plant = Plant(arm, DT, q0=Q0)
    sim = Simulator(arm, 1000.0, realtime=False, q0=Q0)
    for k in range(10):
        plant.step([1.0, -1.0])
        sim.command([1.0, -1.0], k * DT)
        sim.tick(k * DT)
        sim.step(k * DT)
    np.testing.assert_array_equal(sim.plant.q, plant.q)


def test_the_simulated_arm_is_another_urdf_with_a_payload_wherever_the_loop_is_built(tmp_path):
    # the node, the library's loop and the tests' graph build it in one place: a payload
    # they did not apply would leave a loop that no longer shows what the graph does
    model = RobotModel.load('planar_2r')
    heavier = model.replace(mass=model.mass * 1.5)
    urdf = tmp_path / 'heavier.urdf'
    urdf.write_text(heavier.to_urdf())
    values = {'plant_urdf_file': str(urdf), 'payload_mass': 2.0, 'payload_com': [0.1, 0.0, 0.0]}
    plant = configured_plant(model, values.get, chain_options(values.get))
    # the URDF's masses, the payload's 2 kg on the last body, its centre of mass 10 cm out
    np.testing.assert_allclose(plant.mass, heavier.mass + [0.0, 2.0], rtol=1e-12)
    m, c = heavier.mass[-1], heavier.com[-1]
    _, tip = heavier.frames[heavier.tip_link]
    np.testing.assert_allclose(plant.com[-1], (m * c + 2.0 * (tip[:3, :3] @ [0.1, 0.0, 0.0]
                                                              + tip[:3, 3])) / (m + 2.0),
                               rtol=1e-12)
    simulator, controller, _ = graph_loop(model, values)
    assert simulator.plant.model.mass.tolist() == plant.mass.tolist()
    assert controller.model is model        # the controller knows only the description
    graph = SimulatorGraph('planar_2r', **values)
    assert graph.sim.plant.model.mass.tolist() == plant.mass.tolist()
    # another arm's URDF is refused, naming both chains
    other = tmp_path / 'scara.urdf'
    other.write_text(RobotModel.load('scara').to_urdf())
    with pytest.raises(InputError, match=r'plant_urdf_file .*scara.urdf.*: its chain has the '
                                         r'joints \[.shoulder., .elbow., .quill.\]'):
        configured_plant(model, {'plant_urdf_file': str(other)}.get, {})
