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

"""The controller's logic on synthetic states: modes, goals, every fault path, one clock."""

import numpy as np
import pytest
from robot_dynamics import RobotModel
from robot_dynamics.closed_loop import closed_loop, default_law
from robot_dynamics.control import PID
from robot_dynamics.controller import Controller, JUMP_SPEED, JUMP_TOLERANCE, Kind, Mode
from robot_dynamics.errors import InputError
from robot_dynamics.follower import Goal, Outcome, Tolerances
from robot_dynamics.simulator import Simulator
from robot_dynamics.sources import DEFAULT_SOURCE_TIMEOUT
from robot_dynamics.trajectory import point_to_point

#: A clock far from zero, as the stamps of an arm on wall time are (seconds since 1970).
EPOCH = 1.8e9
DT = 1e-3


@pytest.fixture
def arm():
    return RobotModel.load('planar_2r')


def _law(arm, name='computed_torque'):
    return default_law(name, arm, np.zeros(arm.dof))


def _controller(arm, interface='effort', **options):
    law = _law(arm) if interface == 'effort' else None
    return Controller(arm, law, interface=interface, **options)


def _goal(tag, q0, q1, duration=1.0, start=None, points=11):
    path = point_to_point(q0, q1, duration, 'quintic')
    t = np.linspace(0.0, duration, points)
    s = path.sample(t)
    return Goal(tag, start, t, s.q, s.qd, s.qdd, Tolerances.unchecked(len(q0))), path


def _kinds(events):
    return [e.kind for e in events]


def _ended(events, tag):
    return [e for e in events if e.kind is Kind.GOAL_ENDED and e.tag == tag]


Q0 = np.array([0.3, -0.4])
REST = np.zeros(2)


def test_waiting_until_the_first_state_sends_nothing(arm):
    c = _controller(arm)
    assert c.mode is Mode.WAITING
    assert c.no_state(10.0).command is None and c.cycle(EPOCH).command is None
    goal, _ = _goal('g', Q0, Q0 + 0.1)
    [event] = c.submit(goal)
    assert event.outcome is Outcome.INVALID and 'waiting' in event.message
    first = c.update(EPOCH, Q0, REST)
    assert c.mode is Mode.HOLD and 'first joint state: holding' in first.events[0].message
    # computed torque holding at rest: the gravity torques, exactly
    np.testing.assert_allclose(first.command, arm.gravity_torques(Q0), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(first.reference.q, Q0)


def test_every_usable_state_gets_exactly_one_command(arm):
    c = _controller(arm)
    answered = [c.update(EPOCH + k * DT, Q0, REST).command is not None for k in range(5)]
    assert answered == [True] * 5 and c.cycles == 5
    # the newest state again (a publisher repeating itself): not answered twice
    repeat = c.update(EPOCH + 4 * DT, Q0, REST)
    assert repeat.command is None and repeat.events == [] and c.cycles == 5


@pytest.mark.parametrize('bad', [[np.nan, 0.0], [0.0, np.inf]])
def test_a_non_finite_state_is_not_used_and_counts_as_no_state(arm, bad):
    c = _controller(arm, state_timeout=0.05)
    c.update(EPOCH, Q0, REST)
    rejected = c.update(EPOCH + DT, np.array(bad), REST)
    assert rejected.command is None and _kinds(rejected.events) == [Kind.STATE_REJECTED]
    assert 'joint' in rejected.events[0].message and 'finite' in rejected.events[0].message
    rejected = c.update(EPOCH + DT, Q0, np.array(bad))
    assert rejected.command is None and c.time == EPOCH and c.cycles == 1
    # staleness still counts from the last good state
    assert c.no_state(0.06).command is not None and c.mode is Mode.SAFE
    assert c.update(EPOCH, Q0[:1], REST[:1]).command is None     # wrong size: not used


def test_states_stale_on_arrival_are_skipped_and_the_first_fresh_one_is_held(arm):
    # a controller started beside a running simulation receives its history first: states
    # up to seconds older than the simulated clock (/clock), which would each be held and each
    # be stale at once
    c = _controller(arm, state_timeout=0.05)
    now = 10.0
    history = [c.update(now - 2.0 + k * DT, Q0 + k * 0.01, REST, now=now) for k in range(3)]
    assert all(h.command is None for h in history) and c.mode is Mode.WAITING
    assert _kinds(history[0].events) == [Kind.STALE_STATES] and history[0].events[0].message \
        .startswith('skipping joint states older than the clock by more than 0.05 s')
    assert history[1].events == history[2].events == [] and c.stale_states == 3
    fresh = c.update(now - 0.04, Q0 - 0.1, REST, now=now)      # within state_timeout
    assert 'first joint state: holding' in fresh.events[0].message and c.mode is Mode.HOLD
    np.testing.assert_array_equal(fresh.reference.q, Q0 - 0.1)
    assert c.update(now + DT, Q0, REST, now=now + DT).command is not None
    # stale again later: reported again, and not used
    late = c.update(now - 1.0, Q0, REST, now=now + 2 * DT)
    assert late.command is None and _kinds(late.events) == [Kind.STALE_STATES]
    assert c.time == now + DT and c.stale_states == 4
    # no clock apart from the states (wall time): nothing is stale on arrival
    wall = _controller(arm, state_timeout=0.05)
    assert wall.update(now - 2.0, Q0, REST).command is not None and wall.stale_states == 0


def test_a_state_taken_before_the_clock_came_and_found_stale_is_not_held(arm):
    # the history's oldest state can come before the first /clock (no clock to judge it by):
    # it is held, and once the clock shows it stale the controller waits for a fresh state
    # instead of driving the arm back to where it was then (a controller restarted after the
    # arm had fallen: seen in a whole suite)
    c = _controller(arm, state_timeout=0.05)
    now = 10.0
    first = c.update(now - 2.0, Q0, REST)
    assert first.command is not None and c.mode is Mode.HOLD
    goal, _ = _goal('g', Q0, Q0 + 0.1)
    assert _kinds(c.submit(goal)) == [Kind.GOAL_ACCEPTED]
    history = c.update(now - 2.0 + DT, Q0, REST, now=now)
    assert history.command is None and c.mode is Mode.WAITING
    assert _kinds(history.events) == [Kind.GOAL_ENDED, Kind.STALE_STATES]
    [ended] = _ended(history.events, 'g')
    assert ended.outcome is Outcome.STOPPED and 'the state held was stale' in ended.message
    assert c.cycle(now).command is None         # nothing is sent while it waits
    fresh = c.update(now - 0.01, Q0 - 0.3, REST, now=now)
    assert 'first fresh joint state: holding' in fresh.events[0].message
    np.testing.assert_array_equal(fresh.reference.q, Q0 - 0.3)
    # the state that brings the clock may be a fresh one (a history and live states delivered
    # interleaved): the stale state held is not held either, the fresh one is
    e = _controller(arm, state_timeout=0.05)
    e.update(now - 2.0, Q0, REST)
    e.submit(_goal('g', Q0, Q0 + 0.1)[0])
    live = e.update(now - 0.01, Q0 - 0.3, REST, now=now)
    assert _kinds(live.events) == [Kind.GOAL_ENDED, Kind.HOLDING] and e.mode is Mode.HOLD
    assert 'the state held was stale' in _ended(live.events, 'g')[0].message
    assert 'first fresh joint state: holding' in live.events[1].message
    np.testing.assert_array_equal(live.reference.q, Q0 - 0.3)
    # live states may come before the clock too, interleaved with the history: the clock
    # judges the state held, not the newest (a restarted controller held the arm's old position)
    f = _controller(arm, state_timeout=0.05)
    f.update(now - 2.0, Q0, REST)
    f.submit(_goal('g', Q0, Q0 + 0.1)[0])
    assert f.update(now - 0.02, Q0 - 0.3, REST).command is not None     # live, no clock yet
    late = f.update(now - 2.0 + DT, Q0, REST, now=now)                    # the clock comes
    assert _kinds(late.events) == [Kind.GOAL_ENDED, Kind.STALE_STATES] and f.mode is Mode.WAITING
    fresh = f.update(now - 0.01, Q0 - 0.3, REST, now=now)
    assert 'first fresh joint state: holding' in fresh.events[0].message
    np.testing.assert_array_equal(fresh.reference.q, Q0 - 0.3)
    # a state before the clock that the clock then finds fresh stays held
    d = _controller(arm, state_timeout=0.05)
    d.update(now - 0.02, Q0, REST)
    kept = d.update(now - 2.0, Q0, REST, now=now)       # a stale one, from another history
    assert kept.events[-1].kind is Kind.STALE_STATES and d.mode is Mode.HOLD


@pytest.mark.parametrize('interface, safe_mode', [('effort', 'zero_effort'),
                                                  ('effort', 'gravity_compensation'),
                                                  ('velocity', 'zero_effort'),
                                                  ('position', 'zero_effort')])
def test_stale_states_give_the_safe_command_at_once_and_again(arm, interface, safe_mode):
    c = _controller(arm, interface, safe_mode=safe_mode, state_timeout=0.05)
    moving = np.array([1.5, -2.0])          # the last measured velocity must not be used
    c.update(EPOCH, Q0, moving)
    goal, _ = _goal('g', Q0, Q0 + 0.3)
    c.submit(goal)
    c.update(EPOCH + DT, Q0, moving)
    assert c.mode is Mode.TRAJECTORY
    assert c.no_state(0.05).command is None and c.mode is Mode.TRAJECTORY   # not yet stale
    safe = c.no_state(0.0501)
    expected = {'zero_effort': np.zeros(2),
                'gravity_compensation': arm.gravity_torques(Q0)}[safe_mode] \
        if interface == 'effort' else {'velocity': np.zeros(2), 'position': Q0}[interface]
    np.testing.assert_array_equal(safe.command, expected)
    assert c.mode is Mode.SAFE and safe.mode is Mode.SAFE
    [mode, ended] = safe.events
    assert mode.kind is Kind.SAFE_MODE and 'no joint state for 0.05 s: safe mode' in mode.message
    assert ended.outcome is Outcome.STOPPED and ended.tag == 'g' and 'safe mode' in ended.message
    # repeated, without a new event, while they stay stale
    again = c.no_state(0.3)
    np.testing.assert_array_equal(again.command, expected)
    assert again.events == []
    # no cycle in safe mode; a goal is refused
    assert c.cycle(EPOCH + 0.2).command is None
    late, _ = _goal('h', Q0, Q0 + 0.1)
    assert c.submit(late)[0].outcome is Outcome.INVALID
    # states return: holding where the arm is now
    back = c.update(EPOCH + 0.5, Q0 + 0.2, REST)
    assert c.mode is Mode.HOLD and 'joint states are back: holding' in back.events[0].message
    np.testing.assert_array_equal(back.reference.q, Q0 + 0.2)


def test_gravity_compensation_is_clipped_to_the_effort_limits(arm):
    weak = arm.replace(effort_limit=np.array([5.0, 1.0]))
    c = Controller(weak, _law(weak), safe_mode='gravity_compensation')
    c.update(EPOCH, Q0, REST)
    np.testing.assert_array_equal(c.no_state(1.0).command,
                                  np.clip(arm.gravity_torques(Q0), -weak.effort_limit,
                                          weak.effort_limit))


def test_on_simulated_time_a_dead_simulator_is_noticed_on_the_wall_clock(arm):
    c = _controller(arm, state_timeout=0.05, wall_state_timeout=2.0)
    c.update(0.5, Q0, REST)
    # simulated time stopped with the states (a stalled host): not a fault
    assert c.no_state(0.0, wall_elapsed=1.5).command is None and c.mode is Mode.HOLD
    safe = c.no_state(0.0, wall_elapsed=2.5)
    np.testing.assert_array_equal(safe.command, np.zeros(2))
    assert 'no joint state for 2 s of wall time' in safe.events[0].message


class Boom(RuntimeError):
    pass


def _raise(*args, **kwargs):
    raise Boom('broken')


class BrokenLaw:
    """A control law whose every computation raises (a bug, a numeric failure)."""

    law = None

    def for_one_state(self):
        return _raise


@pytest.mark.parametrize('part', ['law', 'follower'])
def test_a_failing_cycle_sends_the_safe_command_aborts_the_goal_and_goes_on(arm, part,
                                                                            monkeypatch):
    c = _controller(arm, safe_mode='gravity_compensation')
    c.update(EPOCH, Q0, REST)
    goal, _ = _goal('g', Q0, Q0 + 0.3)
    c.submit(goal)
    c.update(EPOCH + DT, Q0, REST)
    law = c.law
    with monkeypatch.context() as patch:
        if part == 'law':
            c.set_law(BrokenLaw())
        else:
            patch.setattr(c.follower, 'update', _raise)
        failed = c.update(EPOCH + 2 * DT, Q0 + 0.01, REST)
    c.set_law(law)
    np.testing.assert_array_equal(failed.command, arm.gravity_torques(Q0 + 0.01))
    fault = [e for e in failed.events if e.kind is Kind.FAULT]
    assert fault and 'control cycle failed: Boom: broken' in fault[0].message
    [ended] = _ended(failed.events, 'g')
    assert ended.outcome is Outcome.STOPPED and 'Boom: broken' in ended.message
    # the next state is held where the arm is
    after = c.update(EPOCH + 3 * DT, Q0 + 0.02, REST)
    assert c.mode is Mode.HOLD and 'after the failed cycle' in after.events[0].message
    np.testing.assert_array_equal(after.reference.q, Q0 + 0.02)
    np.testing.assert_allclose(after.command, arm.gravity_torques(Q0 + 0.02), atol=1e-12)


def test_a_goal_that_succeeds_in_a_failing_cycle_keeps_its_result(arm):
    c = _controller(arm)
    c.update(EPOCH, Q0, REST)
    goal, path = _goal('g', Q0, Q0 + 0.1, duration=0.2, points=3)
    assert _kinds(c.submit(goal)) == [Kind.GOAL_ACCEPTED]
    for k in range(1, 190):
        c.update(EPOCH + k * DT, path.sample(k * DT).q, REST)
    assert c.mode is Mode.TRAJECTORY
    # the cycle after the last point: the goal is reached, then the law fails
    c.set_law(BrokenLaw())
    failed = c.update(EPOCH + 0.25, path.end, REST)
    assert any(e.kind is Kind.FAULT for e in failed.events)
    assert [e.outcome for e in _ended(failed.events, 'g')] == [Outcome.SUCCEEDED]


def test_fault_from_outside_and_the_final_command(arm):
    c = _controller(arm, 'position')
    assert c.final_command().command is None            # no state: no position to send
    c.update(EPOCH, Q0, REST)
    goal, _ = _goal('g', Q0, Q0 + 0.3)
    c.submit(goal)
    c.update(EPOCH + DT, Q0, REST)
    failed = c.fault('the command could not be built')
    np.testing.assert_array_equal(failed.command, Q0)
    assert _ended(failed.events, 'g')[0].outcome is Outcome.STOPPED
    c.update(EPOCH + 2 * DT, Q0, REST)
    goal, _ = _goal('h', Q0, Q0 + 0.3)
    c.submit(goal)
    final = c.final_command()
    np.testing.assert_array_equal(final.command, Q0)
    [ended] = _ended(final.events, 'h')
    assert ended.outcome is Outcome.STOPPED and 'stops' in ended.message
    velocity = _controller(arm, 'velocity')
    np.testing.assert_array_equal(velocity.final_command().command, np.zeros(2))
    effort = _controller(arm)
    np.testing.assert_array_equal(effort.final_command().command, np.zeros(2))


def test_one_clock_a_goal_without_start_begins_at_the_newest_state(arm):
    # a clock that is neither zero nor the host's: the states' own
    c = _controller(arm)
    t0 = 12.345
    c.update(t0, Q0, REST)
    goal, path = _goal('g', Q0, Q0 + [0.4, -0.2])
    events = c.submit(goal)
    assert _kinds(events) == [Kind.GOAL_ACCEPTED] and 'starting now' in events[0].message
    refs = [c.update(t0 + k * DT, path.sample(k * DT).q, path.sample(k * DT).qd)
            for k in range(1, 1001)]
    # it starts at that state, from the reference there (the path's start, at rest): the
    # reference is the goal's own path from the first state after it on
    assert not np.array_equal(refs[0].reference.q, Q0)
    np.testing.assert_allclose([r.reference.q for r in refs[:-1]],
                               path.sample(np.arange(1, 1000) * DT).q, atol=1e-12)
    assert refs[-1].events[0].outcome is Outcome.SUCCEEDED
    # a start in the future on that clock waits for it; cancel stops it at the state's time
    goal, _ = _goal('h', path.end, path.end + 0.2, start=t0 + 1.5)
    assert 'starting in 0.500 s' in c.submit(goal)[0].message
    assert c.update(t0 + 1.4, path.end, REST).mode is Mode.HOLD
    assert c.update(t0 + 1.5, path.end, REST).mode is Mode.TRAJECTORY
    assert c.goals == ['h']
    [ended] = c.cancel('h')
    assert ended.outcome is Outcome.CANCELED and c.goals == []


def test_timer_cycles_sample_the_reference_at_their_own_time(arm):
    c = _controller(arm, 'position', rate_hz=100.0)
    t0 = 100.0
    c.observe(t0, Q0, REST)
    goal, path = _goal('g', Q0, Q0 + 0.5)
    c.submit(goal)
    # states every 30 ms, cycles every 10 ms: each cycle follows the reference at its own time
    for k in range(100):
        t = t0 + k * 0.01
        if k % 3 == 0:
            c.observe(t, path.sample(t - t0).q, REST)
        cycle = c.cycle(t)
        np.testing.assert_allclose(cycle.command, path.sample(t - t0).q, atol=1e-12)
    assert c.missed_cycles == 0


def test_missed_cycles_are_counted_from_the_gaps(arm):
    c = _controller(arm, rate_hz=1000.0)
    for k in (0, 1, 2, 5, 6, 16):      # 2 missed, then 9
        c.update(EPOCH + k * DT, Q0, REST)
    assert c.cycles == 6 and c.missed_cycles == 11


def test_a_clock_that_goes_back_ends_goals_and_holds_on_the_new_clock(arm):
    c = Controller(arm, PID(arm, 100.0, 50.0, 10.0))
    c.update(30.0, Q0, REST)
    c.update(30.001, Q0 + 0.01, REST)          # an error to integrate
    goal, _ = _goal('g', Q0, Q0 + 0.3)
    c.submit(goal)
    c.update(30.002, Q0, REST)
    back = c.update(0.0, Q0 - 0.1, REST)        # a simulation that started again
    assert _ended(back.events, 'g')[0].outcome is Outcome.STOPPED
    assert any('clock went back 30.002 s: holding' in e.message for e in back.events)
    np.testing.assert_array_equal(back.reference.q, Q0 - 0.1)
    assert c.law.state.time == 0.0 and not c.law.state.integral.any()


def test_bad_settings_are_refused(arm):
    with pytest.raises(InputError, match='safe_mode'):
        Controller(arm, _law(arm), safe_mode='damping')
    with pytest.raises(InputError, match='needs a control law'):
        Controller(arm)
    with pytest.raises(InputError, match='state_timeout'):
        Controller(arm, _law(arm), state_timeout=0.0)


def _closed_loop(arm, goal_start=0.25, steps=1600):
    """Run the controller answering each state of the simulator in lockstep (the one loop)."""
    simulator = Simulator(arm, 1.0 / DT, q0=Q0, realtime=False, lockstep=True)
    c = _controller(arm)
    goal, path = _goal('g', Q0, Q0 + [0.6, -0.5], start=goal_start)
    record = closed_loop(simulator, c, steps * DT, goals=[(10 * DT, goal)])
    kinds = [e.kind for _, e in record.events if e.tag == 'g']
    assert kinds == [Kind.GOAL_ACCEPTED, Kind.GOAL_ENDED]
    moving = (record.t > goal_start) & (record.t <= goal_start + 1.0)
    errors = path.sample(record.t[moving] - goal_start).q - record.q[moving]
    return np.stack((record.q, record.qd), axis=1), errors, path, c


def test_lockstep_closed_loop_tracks_and_is_the_same_every_run(arm):
    states, errors, path, c = _closed_loop(arm)
    assert np.sqrt(np.mean(errors ** 2)) < 1e-4 and len(errors) == 1000
    np.testing.assert_allclose(states[-1][0], path.end, atol=1e-4)
    # every state answered, but the one the run ends at
    assert c.missed_cycles == 0 and c.cycles == len(states) - 1 == 1600
    again, _, _, _ = _closed_loop(arm)
    assert np.array_equal(states, again)        # bit for bit


def test_an_adaptive_law_keeps_its_estimate_and_skips_the_gap_of_a_safe_mode(arm):
    law = default_law('adaptive', arm, np.zeros(2))
    c = Controller(arm, law, state_timeout=0.05)
    c.update(EPOCH, Q0, REST)
    c.update(EPOCH + DT, Q0 + 0.002, REST)         # an error: the estimate moves
    learned = law.state.estimate
    assert np.any(learned != law.nominal)
    c.no_state(0.06)
    # two seconds later, the arm moving: the first cycle integrates nothing over the gap
    c.update(EPOCH + 2.0, Q0 + 0.002, np.array([0.01, -0.01]))
    np.testing.assert_array_equal(c.law.state.estimate, learned)
    assert c.law.state.time == EPOCH + 2.0


# ---- one source of joint states ---------------------------------------------------------------

def test_states_from_a_second_source_are_ignored_counted_and_reported_once(arm):
    c = _controller(arm)
    first = c.update(EPOCH, Q0, REST, source='sim')
    assert first.command is not None and c.source == 'sim'
    # an impostor a little later, elsewhere: not used, no command, one error naming both
    impostor = c.update(EPOCH + DT, Q0 + 0.5, REST, source='tool')
    assert impostor.command is None and c.q.tolist() == Q0.tolist()
    [event] = impostor.events
    assert event.kind is Kind.SECOND_SOURCE and event.tag == ('sim', 'tool')
    assert 'tool' in event.message and 'sim' in event.message
    # again: counted, not reported again; the followed source goes on being answered
    for k in range(2, 12):
        assert c.update(EPOCH + k * DT, Q0 + 0.5, REST, source='tool').events == []
        cycle = c.update(EPOCH + k * DT, Q0, REST, source='sim')
        assert cycle.command is not None and cycle.events == []
    assert c.ignored_states == 11 and c.cycles == 11 and c.mode is Mode.HOLD
    np.testing.assert_array_equal(cycle.reference.q, Q0)
    # its clock going back: only the followed source's restarts the controller
    assert c.update(EPOCH - 1.0, Q0 + 0.5, REST, source='tool').command is None
    assert c.time == EPOCH + 11 * DT
    restarted = c.update(1.0, Q0 + 0.1, REST, source='sim')
    assert 'clock went back' in restarted.events[0].message and c.time == 1.0
    np.testing.assert_array_equal(restarted.reference.q, Q0 + 0.1)


def test_a_new_source_is_taken_only_after_the_old_one_was_silent_and_at_rest(arm):
    c = _controller(arm, state_timeout=0.05)
    c.update(EPOCH, Q0, REST, source='sim')
    assert c.update(EPOCH + DT, Q0, REST, source='new').command is None   # the old one is alive
    # a loaded host held the followed source back past the state timeout: safe mode, but the
    # other publisher's states (0.3 rad off) still do not drive the arm
    assert c.no_state(0.06).command is not None and c.mode is Mode.SAFE
    held = c.update(EPOCH + 0.07, Q0 + 0.3, REST, source='new')
    assert held.command is None and c.source == 'sim' and c.mode is Mode.SAFE
    assert c.no_state(DEFAULT_SOURCE_TIMEOUT - 0.01, 0.5).command is not None
    assert c.update(EPOCH + 0.08, Q0 + 0.3, REST, source='new').command is None
    # the followed one comes back: followed again, the other never was
    back = c.update(EPOCH + 0.09, Q0, REST, source='sim')
    assert back.command is not None and c.source == 'sim' and c.source_changes == 0
    np.testing.assert_array_equal(back.reference.q, Q0)
    # silent for the source time-out (wall time, as a dead simulator on simulated time)
    c.no_state(0.0, DEFAULT_SOURCE_TIMEOUT + 0.1)
    # a moving arm is no time to take over: refused, reported once, counted
    missed = c.missed_cycles
    moving = c.update(0.001, Q0 + 0.2, np.array([0.0, 0.5]), source='new')
    assert moving.command is None and c.mode is Mode.SAFE
    [refused] = moving.events
    assert refused.kind is Kind.SOURCE_REFUSED and refused.tag == ('sim', 'new')
    assert c.update(0.002, Q0 + 0.2, np.array([0.0, 0.5]), source='new').events == []
    # a restarted simulator at rest: taken, on its own clock (from 0), an error to report
    taken = c.update(0.003, Q0 + 0.2, REST, source='new')
    assert taken.command is not None and c.source == 'new' and c.mode is Mode.HOLD
    assert [e.kind for e in taken.events] == [Kind.SOURCE_CHANGED, Kind.HOLDING]
    assert taken.events[0].tag == ('sim', 'new') and c.source_changes == 1
    np.testing.assert_array_equal(taken.reference.q, Q0 + 0.2)
    assert c.update(0.004, Q0 + 0.2, REST, source='new').command is not None
    assert c.missed_cycles == missed        # a new clock: no cycles missed across the change
    # the old one is now the second source
    assert c.update(EPOCH + 3.0, Q0, REST, source='sim').events[0].kind is Kind.SECOND_SOURCE


def test_a_second_source_never_drives_a_moving_arm(arm):
    """The adversarial case: the followed source stalls 0.2 s while a fake one drifts."""
    c = _controller(arm, state_timeout=0.05)
    c.update(EPOCH, Q0, REST, source='sim')
    goal, _ = _goal('g', Q0, Q0 + 0.5, duration=1.0)
    c.submit(goal)
    for k in range(1, 100):
        c.update(EPOCH + k * DT, Q0, REST, source='sim')
    assert c.mode is Mode.TRAJECTORY
    for k in range(200):      # the simulator stopped 0.2 s; the watchdog runs every 10 ms
        if k % 10 == 0:
            c.no_state(k * DT, k * DT)
        fake = c.update(EPOCH + 0.1 + k * DT, Q0 + 0.3 + 0.01 * k, np.full(2, 10.0),
                        source='fake')
        assert fake.command is None
    assert c.source == 'sim' and c.ignored_states == 200 and c.source_changes == 0


def test_a_state_that_jumps_ends_the_goal_and_holds_where_the_arm_now_is(arm):
    """A simulation reset on the same clock: the controller must not drive the arm back."""
    c = _controller(arm)
    c.update(EPOCH, Q0, REST)
    goal, _ = _goal('g', Q0, Q0 + 0.5, duration=1.0)
    c.submit(goal)
    for k in range(1, 50):
        c.update(EPOCH + k * DT, Q0, REST)
    # a joint moving at twice its velocity limit (plus the tolerance) is no jump
    limit = arm.velocity_limit
    step = JUMP_SPEED * limit * DT + 0.9 * JUMP_TOLERANCE
    assert [e.kind for e in c.update(EPOCH + 50 * DT, Q0 + step, REST).events] == []
    reset = np.array([0.0, 0.0])
    jumped = c.update(EPOCH + 51 * DT, reset, REST)
    kinds = [e.kind for e in jumped.events]
    assert kinds == [Kind.STATES_JUMPED, Kind.GOAL_ENDED, Kind.HOLDING]
    assert jumped.events[1].outcome is Outcome.STOPPED and 'jumped' in jumped.events[1].message
    assert c.mode is Mode.HOLD
    np.testing.assert_array_equal(jumped.reference.q, reset)
    np.testing.assert_array_equal(jumped.reference.qd, REST)
    # and it stays there: the command is the hold's (gravity at the reset pose, no error)
    later = c.update(EPOCH + 52 * DT, reset, REST)
    np.testing.assert_array_equal(later.reference.q, reset)
    np.testing.assert_allclose(later.command, arm.gravity_torques(reset), rtol=0, atol=1e-9)


def test_a_named_source_is_the_only_one_followed(arm):
    c = _controller(arm, source='sim', state_timeout=0.05)
    first = c.update(EPOCH, Q0, REST, source='tool')
    assert first.command is None and first.events[0].kind is Kind.SECOND_SOURCE
    assert c.mode is Mode.WAITING
    assert c.update(EPOCH, Q0, REST, source='sim').command is not None
    c.no_state(1.0)
    # stale: still only the named one
    assert c.update(EPOCH + 2.0, Q0, REST, source='tool').command is None
    # states without a source (an rclpy that gives none) are taken as they come
    assert c.update(EPOCH + 2.0, Q0, REST).command is not None


# ---- gains the loop can bear ------------------------------------------------------------------

def test_velocity_feedback_is_bounded_by_the_rate(arm):
    with pytest.raises(InputError, match=r'velocity_feedback: expected a gain in \[0, 2000\)'):
        _controller(arm, 'velocity', velocity_feedback=2000.0, rate_hz=1000.0)
    assert _controller(arm, 'velocity', velocity_feedback=1999.0).velocity_feedback == 1999.0
