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
The ``robot-dynamics`` command line: its exit status, its words and the files it writes.

As ``python -m robot_dynamics.cli`` in a subprocess where the entry point itself is the point
(one robot's info; a goal simulated with ROS 2 unimportable); elsewhere ``cli.main`` in this
process, the same parser and commands without a Python start-up per call.
"""

import io
import json
import os
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest

from robot_dynamics import cli

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 120   # s per subprocess
REPORT_KEYS = ('rms_tracking_error', 'max_tracking_error', 'max_abs_torque',
               'saturated_fraction', 'robot', 'controller', 'duration', 'plant_rate_hz',
               'control_rate_hz', 'gains', 'model_error', 'torque_noise', 'seed')


#: The command line with ROS 2 made unimportable, as a pip install without the ROS wheels has it.
WITHOUT_ROS = ("import runpy, sys; sys.modules.update(dict.fromkeys(('rclpy', 'rcl_interfaces', "
               "'robot_dynamics_interfaces'))); runpy.run_module('robot_dynamics.cli', "
               "run_name='__main__')")


def run_cli(*args, cwd=None, ros=True):
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(filter(None, (str(REPO), env.get('PYTHONPATH'))))
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    env['MPLBACKEND'] = 'Agg'
    command = ['-m', 'robot_dynamics.cli'] if ros else ['-c', WITHOUT_ROS]
    return subprocess.run([sys.executable, *command, *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=TIMEOUT)


def run_main(*args, capsys):
    """Return ``(exit status, stdout, stderr)`` of ``cli.main(args)`` in this process."""
    capsys.readouterr()
    try:
        status = cli.main(list(args))
    except SystemExit as stop:          # argparse's refusals, as the entry point exits
        status = stop.code
    printed = capsys.readouterr()
    return status, printed.out, printed.err


def test_simulate_writes_the_json_report(tmp_path):
    report = tmp_path / 'tmp.json'
    args = cli.build_parser().parse_args(['simulate', '--robot', 'planar_2r', '--controller',
                                          'computed_torque', '--duration', '1.0', '--report',
                                          str(report)])
    printed = io.StringIO()
    assert args.handler(args, out=printed) == 0
    assert 'rms' in printed.getvalue() and str(report) in printed.getvalue()
    data = json.loads(report.read_text())
    for key in REPORT_KEYS:
        assert key in data, key
    assert data['robot'] == 'planar_2r' and data['controller'] == 'computed_torque'
    assert data['duration'] == 1.0 and data['plant_rate_hz'] == 1000.0
    assert data['control_rate_hz'] == 1000.0 and data['seed'] == 0
    assert data['model_error'] == 0.0 and data['torque_noise'] == 0.0
    assert data['stable'] is True
    assert 0.0 < data['rms_tracking_error'] <= data['max_tracking_error'] < 1e-4
    assert 0.0 < data['max_abs_torque'] <= 200.0 and data['saturated_fraction'] == 0.0
    assert len(data['gains']['kp']) == 2 and len(data['rms_tracking_error_per_joint']) == 2


def test_simulate_with_model_error_noise_rates_and_plots(tmp_path, capsys):
    report, plot, compare = (tmp_path / name for name in ('r.json', 'run.png', 'cmp.png'))
    status, _, err = run_main('simulate', '--robot', 'scara', '--controller', 'pd_gravity',
                              '--duration', '0.5', '--plant-rate', '2000', '--control-rate',
                              '500', '--model-error', '0.2', '--torque-noise', '0.5', '--seed',
                              '7', '--report', str(report), '--plot', str(plot),
                              '--compare-plot', str(compare), capsys=capsys)
    assert status == 0, err
    data = json.loads(report.read_text())
    assert (data['plant_rate_hz'], data['control_rate_hz']) == (2000.0, 500.0)
    assert (data['model_error'], data['torque_noise'], data['seed']) == (0.2, 0.5, 7)
    assert data['samples'] == 1001
    assert set(data['comparison']) == {'pd', 'pd_gravity', 'computed_torque', 'pid', 'adaptive'}
    for png in (plot, compare):
        assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_simulate_rejects_bad_arguments_clearly(tmp_path, capsys):
    status, _, err = run_main('simulate', '--robot', 'planar_2r', '--controller', 'lqr',
                              capsys=capsys)
    assert status == 2 and "invalid choice: 'lqr'" in err
    status, _, err = run_main('simulate', '--robot', 'planar_2r', '--controller', 'pd',
                              '--control-rate', '300', '--duration', '0.1', capsys=capsys)
    assert status == 2
    assert 'must be a whole multiple of the control rate' in err


def test_bringup_refuses_a_recording_it_cannot_make_before_anything_starts(tmp_path, capsys):
    # in this process: a bringup that passed its checks would start the nodes here
    existing = tmp_path / 'run.mcap'
    existing.write_bytes(b'')
    status = cli.main(['bringup', '--robot', 'scara', '--record', str(existing)])
    assert status == cli.EXIT_USAGE
    assert capsys.readouterr().err.strip().endswith(
        f'recording {str(existing)!r} exists already: remove it or choose another path')
    status = cli.main(['bringup', '--robot', 'scara', '-p', 'controller.gains.wrist.kp:=5.0'])
    assert status == cli.EXIT_USAGE
    assert "no joint 'wrist' in the model" in capsys.readouterr().err


def test_a_file_that_is_not_there_is_named_in_one_line(tmp_path, capsys):
    missing = tmp_path / 'nofile.mcap'
    out = str(tmp_path / 'out')
    for command in (['view', str(missing)], ['identify', str(missing), '--out', out],
                    ['plot', str(missing), '--out', out]):
        assert cli.main(command) == cli.EXIT_FAILURE
        assert capsys.readouterr().err == \
            f'robot-dynamics {command[0]}: error: {missing}: No such file or directory\n'


def test_simulate_a_goal_file_writes_the_joint_states(tmp_path, capsys):
    # the trajectory file of send; the robot's configured law (computed torque), its initial
    # positions [0.4, 0.8] and goal time 1 s, as bringup; with no ROS 2 to import: the library's
    # loop reads the parameter files itself
    goal, table = tmp_path / 'goal.yaml', tmp_path / 'states.csv'
    goal.write_text('joint_names: [joint2, joint1]\npoints:\n'
                    '- {positions: [0.4, 0.6], time_from_start: 1.0}\n'
                    '- {positions: [0.9, 0.5], time_from_start: 2.0}\n')
    proc = run_cli('simulate', '--robot', 'planar_2r', '--goal', str(goal), '--csv', str(table),
                   '--duration', '3', ros=False)
    assert proc.returncode == 0, proc.stderr
    assert 'computed_torque' in proc.stdout and 'goal succeeded' in proc.stdout
    lines = table.read_text().splitlines()
    assert lines[0].split(',') == ['time', 'position.joint1', 'position.joint2',
                                   'velocity.joint1', 'velocity.joint2', 'effort.joint1',
                                   'effort.joint2']
    rows = np.array([[float(v) for v in line.split(',')] for line in lines[1:]])
    assert rows.shape == (3001, 7)
    np.testing.assert_allclose(rows[:, 0], np.arange(3001) * 1e-3, rtol=0, atol=1e-12)
    # braked at the configured start until the first command; at the goal's end at rest
    np.testing.assert_array_equal(rows[0, 1:], [0.4, 0.8, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(rows[-1, 1:3], [0.5, 0.9], atol=1e-4)
    assert np.abs(rows[-1, 3:5]).max() < 1e-3
    # a goal for other joints is refused by name
    goal.write_text('joint_names: [a, b]\npoints:\n- {positions: [0.4, 0.6], '
                    'time_from_start: 1.0}\n')
    status, _, err = run_main('simulate', '--robot', 'planar_2r', '--goal', str(goal),
                              capsys=capsys)
    assert status == 2 and "'a'" in err, err
    status, _, err = run_main('simulate', '--robot', 'planar_2r', capsys=capsys)
    assert status == 2 and '--controller: required without --goal' in err


def test_info_prints_and_reports_every_robot(tmp_path, bundled):
    out = io.StringIO()
    report = tmp_path / 'info.json'
    args = cli.build_parser().parse_args(['info', '--report', str(report)])
    assert cli.info_command(args, out=out) == 0
    text = out.getvalue()
    data = json.loads(report.read_text())
    assert set(data['robots']) == set(bundled)
    scara = data['robots']['scara']
    assert [j['type'] for j in scara['joints']] == ['revolute', 'revolute', 'prismatic']
    assert len(scara['jacobian']) == 6 and len(scara['jacobian'][0]) == 3
    assert scara['tip_position'] == pytest.approx(bundled['scara'].fk(scara['q'])[:3, 3])
    for name in bundled:
        assert f'{name}: ' in text
    assert 'Jacobian' in text and 'tip pose' in text


def test_info_one_robot_in_a_subprocess():
    proc = run_cli('info', '--robot', 'planar_2r')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith('planar_2r: 2 joints')


def test_a_command_loads_no_scipy_module_it_does_not_use():
    # every command builds the whole parser, which reads the defaults of identification's
    # modules: their scipy.signal (with scipy.stats) and scipy.optimize were half a second of
    # CPU at each start of a command, a node's bringup among them
    heavy = ('scipy.signal', 'scipy.stats', 'scipy.optimize')
    code = ('import sys; from robot_dynamics import cli; status = cli.main(sys.argv[1:]); '
            f'print([m for m in {heavy!r} if m in sys.modules]); sys.exit(status)')
    proc = subprocess.run([sys.executable, '-c', code, 'info', '--robot', 'planar_2r'],
                          cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == '[]', proc.stdout


def test_a_missing_plot_dependency_is_a_failure_not_bad_input(monkeypatch, tmp_path, capsys):
    """The one RobotDynamicsError that is not a ValueError (errors.py): exit status 1, not 2."""
    from robot_dynamics import plots, RobotDynamicsError
    assert issubclass(plots.PlotDependencyError, (RobotDynamicsError, ImportError))
    assert not issubclass(plots.PlotDependencyError, ValueError)
    monkeypatch.setitem(sys.modules, 'matplotlib.backends.backend_agg', None)   # import fails
    status = cli.main(['simulate', '--robot', 'planar_2r', '--controller', 'pd', '--plot',
                       str(tmp_path / 'run.png')])
    assert status == cli.EXIT_FAILURE
    assert 'matplotlib' in capsys.readouterr().err
    assert not (tmp_path / 'run.png').exists()
