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

"""The components' statuses from their figures: levels, reasons and figures, worked by hand."""

import numpy as np
import pytest
from robot_dynamics.diagnostics import (controller_status, ControllerFigures,
                                        ControllerThresholds, kinematics_status,
                                        KinematicsFigures, Level, simulator_status,
                                        SimulatorFigures)
from robot_dynamics.errors import InputError

JOINTS = ('shoulder', 'elbow')
BEFORE = ControllerFigures(t=10.0, cycles=5000, missed_cycles=3, saturated=(0, 7), mode='hold')


def _controller(**changes):
    """One second later at 1 kHz, nothing missed or saturated, unless ``changes`` say so."""
    values = {'t': 11.0, 'cycles': 6000, 'missed_cycles': 3, 'saturated': (0, 7), 'mode': 'hold'}
    values.update(changes)
    return ControllerFigures(**values)


def test_a_healthy_loop_is_ok_with_its_figures():
    latencies = np.linspace(0.0001, 0.0002, 1000)   # p50 0.15 ms, p99 0.199 ms
    got = controller_status(_controller(), BEFORE, latencies, 1000.0, JOINTS)
    assert got.level is Level.OK and got.message == 'hold at 1000 Hz'
    values = dict(got.values)
    assert values['control rate [Hz]'] == '1000.0'
    assert values['missed cycles in the period'] == '0 of 1000'
    assert values['latency p50 [ms]'] == '0.150'
    assert values['latency p99 [ms]'] == f'{np.percentile(latencies, 99) * 1e3:.3f}' == '0.199'
    assert values['saturated shoulder [cycles]'] == '0'
    assert values['saturated elbow [cycles]'] == '0'   # 7 before the period
    assert values['safe mode'] == 'false' and values['mode'] == 'hold'


def test_safe_mode_is_an_error_with_its_reason_whatever_else_is_wrong():
    got = controller_status(_controller(mode='safe', reason='no joint state for 0.05 s',
                                        cycles=5100),
                            BEFORE, None, 1000.0, JOINTS)
    assert got.level is Level.ERROR
    assert got.message == 'safe mode: no joint state for 0.05 s'
    assert dict(got.values)['safe mode'] == 'true'
    assert dict(got.values)['latency p99 [ms]'] == 'n/a (simulated time)'


def test_a_new_source_of_joint_states_is_an_error_in_the_period_it_was_taken():
    changed = _controller(source_changes=1)
    got = controller_status(changed, BEFORE, [1e-4] * 10, 1000.0, JOINTS)
    assert got.level is Level.ERROR and 'another publisher' in got.message
    assert dict(got.values)['joint state sources taken'] == '1'
    # the next period, nothing new: OK again, the count still shown
    later = controller_status(_controller(t=12.0, cycles=7000, source_changes=1), changed,
                              [1e-4] * 10, 1000.0, JOINTS)
    assert later.level is Level.OK and dict(later.values)['joint state sources taken'] == '1'


def test_waiting_is_stale():
    got = controller_status(_controller(mode='waiting', t=None, cycles=5000), BEFORE, [],
                            1000.0, JOINTS)
    assert got.level is Level.STALE and 'waiting' in got.message


@pytest.mark.parametrize('changes, latency, message', [
    ({'cycles': 5790}, 1e-4, 'control rate 790 Hz, below 80% of 1000 Hz'),
    ({'missed_cycles': 54}, 1e-4, '51 of 1000 cycles missed'),
    ({}, 0.0051, 'latency p99 5.1 ms, above 5 ms'),
    ({'saturated': (250, 7)}, 1e-4, 'saturating at the effort limits: shoulder'),
])
def test_each_threshold_warns_and_says_why(changes, latency, message):
    got = controller_status(_controller(**changes), BEFORE, [latency] * 10, 1000.0, JOINTS)
    assert got.level is Level.WARN and got.message == message


def test_just_inside_the_thresholds_is_ok():
    # 800 Hz is 80 %, 40 of 800 cycles 5 %, 5 ms the limit: none is beyond
    got = controller_status(_controller(cycles=5800, missed_cycles=43), BEFORE, [0.005] * 10,
                            1000.0, JOINTS)
    assert got.level is Level.OK, got.message


def test_warnings_are_joined_and_thresholds_are_the_callers():
    got = controller_status(_controller(cycles=5500, saturated=(1, 8)), BEFORE, [0.001],
                            1000.0, JOINTS, ControllerThresholds(min_rate_ratio=0.4))
    assert got.level is Level.WARN
    assert got.message == 'saturating at the effort limits: shoulder, elbow'
    got = controller_status(_controller(cycles=5500, saturated=(1, 7)), BEFORE, [0.001],
                            1000.0, JOINTS)
    assert got.message == ('control rate 500 Hz, below 80% of 1000 Hz; saturating at the '
                           'effort limits: shoulder')


def test_a_bad_expected_rate_is_refused():
    with pytest.raises(InputError, match='expected_rate'):
        controller_status(_controller(), BEFORE, [], 0.0, JOINTS)


SIM = SimulatorFigures(wall=100.0, simulated_time=50.0, steps=50000, late_steps=10, stalls=1,
                       unanswered_states=0, timed_out=False, realtime=True, lockstep=False)


def _simulator(**changes):
    values = SIM._asdict()
    values.update(wall=101.0, simulated_time=51.0, steps=51000)
    values.update(changes)
    return SimulatorFigures(**values)


def test_a_simulator_in_real_time_is_ok():
    got = simulator_status(_simulator(late_steps=30), SIM)
    assert got.level is Level.OK and got.message == 'stepping at real-time factor 1.00'
    values = dict(got.values)
    assert values['late steps in the period'] == '20 of 1000'
    assert values['real-time factor'] == '1.000' and values['stalls'] == '1'


@pytest.mark.parametrize('changes, level, message', [
    ({'steps': 50000, 'simulated_time': 50.0}, Level.STALE, 'no step in the period'),
    ({'stalls': 3}, Level.WARN, '2 stalls of the host'),
    ({'late_steps': 61}, Level.WARN, '51 of 1000 steps late'),
    ({'unanswered_states': 4}, Level.WARN, '4 states unanswered in lockstep'),
    ({'timed_out': True}, Level.WARN, 'no valid command within the command time-out'),
    ({'simulated_time': 50.8}, Level.WARN, 'real-time factor 0.80, below 0.9'),
])
def test_simulator_findings(changes, level, message):
    got = simulator_status(_simulator(**changes), SIM)
    assert got.level is level and got.message == message


def test_off_real_time_the_factor_is_a_figure_only():
    before = SIM._replace(realtime=False)
    got = simulator_status(_simulator(realtime=False, simulated_time=60.0), before)
    assert got.level is Level.OK and dict(got.values)['real-time factor'] == '10.000'


def test_kinematics():
    before = KinematicsFigures(ik_calls=10, ik_failures=2, ready=True)
    assert kinematics_status(KinematicsFigures(0, 0, False), KinematicsFigures(0, 0, False)) \
        .level is Level.STALE
    got = kinematics_status(KinematicsFigures(14, 4, True), before)
    assert got.level is Level.OK and got.message == '4 IK calls in the period'
    assert dict(got.values)['IK failures'] == '4'
    got = kinematics_status(KinematicsFigures(14, 5, True), before)
    assert got.level is Level.WARN and got.message == '3 of 4 IK calls found no solution'
