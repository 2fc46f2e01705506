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
The demo as a user runs it: the whole graph, a pick-and-place, its report and plots.

One run of each kind a user starts: ``make demo``'s (the report and plots), ``--cartesian``,
``--real-time``, a Ctrl-C. The plan and its run on the nodes' cores on every robot are checked in
one process (test/core/test_pick_and_place.py), and so is that the demo repeats its numbers,
paced to the wall clock or not (test/core/test_demo_goals.py).
"""

import json
import os
import signal
import time

import numpy as np
import pytest
from robot_dynamics import pick_and_place, recordings, RobotModel
from robot_dynamics.closed_loop import REFERENCE_EFFORT_FRACTION, REFERENCE_VELOCITY_FRACTION
from robot_dynamics.ros.tools.definitions import TOPICS
from robot_dynamics.ros.tools.demo import RECORDING

pytestmark = pytest.mark.ros

REPORT_KEYS = {'rms_tracking_error', 'max_tracking_error', 'control_rate_hz',
               'control_latency_ms', 'missed_cycles', 'ik_calls', 'ik_successes',
               'ik_latency_ms'}
#: The joint move to above pick (one pose), then five lines of IK samples.
IK_CALLS = 1 + 5 * pick_and_place.SAMPLES_PER_SEGMENT
#: A short nominal duration [s] (``--duration``): the SCARA's plan then takes 3 s, not 8.
SHORT = 3.0


def _demo(processes, tmp_path, robot, *extra):
    """Run the demo as a user does; return its exit status, output and report."""
    out = tmp_path / 'out'
    report_path = tmp_path / 'report.json'
    report_path.unlink(missing_ok=True)
    proc = processes.start('demo', ['robot-dynamics', 'demo', '--robot', robot,
                                    '--report', str(report_path), '--out', str(out), *extra])
    status = proc.wait(600)
    output = processes.output(proc)
    report = json.loads(report_path.read_text()) if report_path.exists() else None
    return status, output, report


def test_demo_report_and_plots(processes, tmp_path):
    # as make demo runs it: lockstep paced to the wall clock, the same run on a busy machine as
    # on an idle one; the default duration (8 s)
    robot = 'planar_2r'
    status, output, report = _demo(processes, tmp_path, robot)
    out = tmp_path / 'out'
    assert status == 0, output
    assert REPORT_KEYS <= set(report)
    assert report['succeeded'] and report['result']['error_code'] == 0
    assert report['ik_calls'] == report['ik_successes'] == IK_CALLS
    assert 0.0 < report['ik_latency_ms']['p50'] <= report['ik_latency_ms']['p99']
    # in simulated time every state is answered before the simulator steps: no latency, no
    # missed cycle, the control rate the simulator's
    assert report['control_latency_ms'] == {'p50': 0.0, 'p99': 0.0}
    assert report['missed_cycles'] == 0 and report['control_rate_hz'] == pytest.approx(1000.0)
    assert report['lockstep'] and report['clock'] == 'paced'
    # paced: simulated time never runs ahead of the wall clock (the factor is below 1 where the
    # host could not keep up)
    assert 0.0 < report['real_time_factor'] <= 1.01
    assert report['rms_tracking_error'] < 1e-2
    assert report['max_tracking_error'] >= report['rms_tracking_error']
    assert f'{robot}: pick-and-place succeeded' in output
    assert 'n/a' not in output and 'missed of' not in output
    assert '[ERROR]' not in output, output     # stopping the graph is no fault
    assert 'in lockstep (each state answered before the next step), 0 of ' in output
    assert '(0.0 %) joint states missed' in output
    # planned within the limits, with the margins left to the controller's feedback
    plan = report['plan']
    assert max(plan['peak_velocity_ratio']) <= REFERENCE_VELOCITY_FRACTION * 1.002
    assert max(plan['peak_effort_ratio']) <= REFERENCE_EFFORT_FRACTION * 1.002
    assert report['motion_duration_s'] >= plan['nominal_duration_s'] * (1.0 - 1e-9)
    # the report's figures are those of the recording it names
    recording = recordings.read(report['recording'])
    states = recording.tables[TOPICS.controller_state]
    moving = [m for m in states.messages if m.mode == 'trajectory']
    error = np.array([m.error.positions for m in moving])
    assert report['rms_tracking_error'] == pytest.approx(np.sqrt(np.mean(error ** 2)),
                                                         rel=1e-9)
    # and executed within the limits: no command was clipped at an effort limit
    assert not any(any(m.saturated) for m in moving)
    # the arm ended where the plan did: above the place pose
    model = RobotModel.load(robot)
    joints = recording.tables[TOPICS.joint_states]
    names = list(model.joint_names)
    q_end = joints.joint_array('position', names)[-1]
    final = moving[-1].reference.positions
    np.testing.assert_allclose(q_end, final, atol=5e-3)
    for name in ('tracking.png', 'effort.png', 'tip_path.png'):
        png = out / name
        assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n' and png.stat().st_size > 20000
    assert sorted(report['plots']) == sorted(str(out / n) for n in
                                             ('tracking.png', 'effort.png', 'tip_path.png'))


def test_demo_cartesian_sends_the_lines_as_poses_and_the_tip_stays_on_them(processes, tmp_path):
    # the SCARA: its joints' friction is fed forward by the task-space law too; a short motion
    # (3 s, not 8: the lines run faster, within the same bounds)
    status, output, report = _demo(processes, tmp_path, 'scara', '--cartesian', '--lockstep',
                                   '--duration', str(SHORT))
    assert status == 0, output
    assert report['succeeded'] and report['cartesian'] and report['ik_calls'] == 0
    assert '5 straight tip lines as one Cartesian goal (task space): the tip within' in output
    assert 'IK               none over ROS' in output and '[ERROR]' not in output
    # the library's plan from where the arm started; the arm ended above place
    model = RobotModel.load('scara')
    joints = recordings.read(report['recording']).tables[TOPICS.joint_states]
    q = joints.joint_array('position', list(model.joint_names))
    plan = pick_and_place.plan(model, q[0], SHORT)
    assert report['motion_duration_s'] == pytest.approx(plan.duration, rel=1e-12)
    np.testing.assert_allclose(model.fk(q[-1])[:3, 3], plan.waypoints[-1].pose[:3, 3],
                               atol=1e-3)
    # the controller's states at 100 Hz while the lines ran, the tip within 1 mm of them
    deviation = report['line_deviation_m']
    assert deviation['samples'] >= 100 * (plan.duration - plan.first_motion().duration)
    assert 0.0 < deviation['rms'] <= deviation['max'] < 1e-3


def test_ctrl_c_mid_motion_stops_the_demo_in_one_line(processes, tmp_path):
    # as a terminal's Ctrl-C: SIGINT to the demo's process group while the arm moves
    out = tmp_path / 'out'
    proc = processes.start('demo', ['robot-dynamics', 'demo', '--robot', 'planar_2r',
                                    '--out', str(out)])
    deadline = time.monotonic() + 300.0
    while 'demo: executing' not in processes.output(proc):
        assert proc.poll() is None and time.monotonic() < deadline, processes.output(proc)
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    status = proc.wait(120)
    output = processes.output(proc)
    assert status == 130, output
    assert 'Traceback' not in output and 'KeyboardInterrupt' not in output, output
    assert f'demo: interrupted; the graph stopped, the recording so far is {out / RECORDING}' \
        in output, output
    # the recording was finished: the motion so far is in it
    recording = recordings.read(out / RECORDING)
    assert len(recording.tables[TOPICS.controller_state].messages) > 0


def test_wait_for_view_needs_the_view(processes):
    proc = processes.start('demo', ['robot-dynamics', 'demo', '--wait-for-view'])
    assert proc.wait(60) == 2
    assert 'give --view too' in processes.output(proc)


def test_demo_in_real_time_as_on_an_arm(processes, tmp_path):
    # real time on a shared machine: a stall longer than state_timeout ends the goal in safe
    # mode, as it must on an arm; that is the one failure allowed here, and it is said. A short
    # motion: what is checked is the loop on the wall clock, not the plan
    status, output, report = _demo(processes, tmp_path, 'scara', '--real-time',
                                   '--duration', str(SHORT))
    assert REPORT_KEYS <= set(report), output
    assert report['ik_calls'] == report['ik_successes'] == IK_CALLS
    assert not report['lockstep'] and report['clock'] == 'real-time'
    assert 'Traceback' not in output
    if report['succeeded']:
        assert status == 0 and report['control_latency_ms']['p99'] > 0.0, output
        # how well a real-time loop tracks is the host's business (its stalls below
        # state_timeout); the bound is the lockstep demos' (test_demo_report_and_plots)
        assert 0.0 < report['rms_tracking_error'] <= report['max_tracking_error']
    else:
        # the goal ended in safe mode, or came while the states had stopped and was refused
        error = report['result']['error_string']
        assert status == 1 and ('safe mode' in error or 'no fresh joint states' in error), \
            output
        assert 'the host did not run the simulator in time' in output, output


def _report(**changes):
    """Return a report as summarise() writes it, of an arm with a prismatic joint."""
    report = {
        'robot': 'scara', 'joints': ['shoulder', 'elbow', 'quill'], 'units': ['rad', 'rad', 'm'],
        'succeeded': True, 'result': {'status': 4, 'error_code': 0, 'error_string': ''},
        'segments': ['a', 'b', 'c', 'd', 'e', 'f'], 'motion_duration_s': 9.25,
        'plan': {'nominal_duration_s': 8.0, 'segment_slowdown': [1.5, 1.0, 1.0, 1.25, 1.0, 1.0],
                 'peak_velocity_ratio': [0.8, 0.3, 0.1], 'peak_effort_ratio': [0.2, 0.1, 0.45]},
        'tracking_samples': 800, 'rms_tracking_error': 4.4e-5, 'max_tracking_error': 1.2e-4,
        'control_rate_hz': 998.25, 'control_latency_ms': {'p50': 0.8, 'p99': 1.3},
        'missed_cycles': 12, 'control_cycles': 9000, 'ik_calls': 41, 'ik_successes': 41,
        'ik_latency_ms': {'p50': 1.0, 'p99': 2.0}}
    report.update(changes)
    return report


def test_the_summary_says_what_was_measured():
    from robot_dynamics.ros.tools.demo import summary_lines
    assert summary_lines(_report()) == [
        'scara: pick-and-place succeeded (goal reached)',
        '  plan             6 motions in 9.2 s (nominal 8 s, slowed 1.5x, 1.2x for the limits);'
        ' peak velocity 80 % (shoulder), effort 45 % (quill) of the limits',
        '  tracking error   rms 4.4e-05, max 0.00012 (rad; m for quill; 800 samples)',
        '  control          9,000 cycles at 998.2 Hz, 12 of 9,012 (0.1 %) joint states missed; '
        'latency p50 0.800 ms, p99 1.300 ms',
        '  IK               41 of 41 (100.0 %) calls solved, p50 1.000 ms, p99 2.000 ms']
    assert 'joint states missed' in summary_lines(_report(missed_cycles=63,
                                                          control_cycles=8853))[3]
    assert '63 of 8,916 (0.7 %) joint states missed' in summary_lines(
        _report(missed_cycles=63, control_cycles=8853))[3]
    assert '1 of 100,000 (< 0.1 %)' in summary_lines(_report(missed_cycles=1,
                                                             control_cycles=99999))[3]
    # a goal refused at once: nothing tracked, one controller state in its time
    failed = summary_lines(_report(
        succeeded=False, result={'status': 6, 'error_code': -1,
                                 'error_string': "joint 'shoulder': velocity 9 0.5 s after the "
                                                 'start is above its limit 6'},
        tracking_samples=0, rms_tracking_error=None, max_tracking_error=None,
        control_rate_hz=None, control_latency_ms={'p50': 0.9, 'p99': 0.9}, missed_cycles=None,
        control_cycles=None))
    assert failed[0] == ("scara: pick-and-place FAILED (joint 'shoulder': velocity 9 0.5 s "
                         'after the start is above its limit 6)')
    assert failed[2] == '  tracking error   not measured: no controller state while the goal ran'
    assert failed[3].startswith('  control          not measured')
    assert not any('n/a' in line or 'None' in line for line in failed)
    assert not any(line.startswith('  why') for line in failed)


@pytest.mark.parametrize('lockstep', [False, True])
@pytest.mark.parametrize('error', ['joint states stopped: safe mode',
                                   'the controller is safe: no fresh joint states'])
def test_the_summary_says_when_the_host_starved_the_simulator(lockstep, error):
    # the goal ended when the states stopped, or came after they had and was refused
    from robot_dynamics.ros.tools.demo import summary_lines
    lines = summary_lines(_report(
        succeeded=False, lockstep=lockstep, real_time_factor=1.0,
        result={'status': 6, 'error_code': -4, 'error_string': error}))
    assert lines[0] == f'scara: pick-and-place FAILED ({error})'
    why = [line for line in lines if line.startswith('  why')]
    if lockstep:     # on simulated time a stall is no fault: a stop of the states is a death
        assert not why
    else:
        assert why == [lines[-1]] and 'the host did not run the simulator' in why[0]
        assert 'without --real-time' in why[0]
