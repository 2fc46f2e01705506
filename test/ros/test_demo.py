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


"""The demo as a user runs it: the whole graph, a pick-and-place, its report and plots."""

import json

import numpy as np
import pytest
from robot_dynamics import recordings, RobotModel

pytestmark = pytest.mark.ros

REPORT_KEYS = {'rms_tracking_error', 'max_tracking_error', 'control_rate_hz',
               'control_latency_ms', 'missed_cycles', 'ik_calls', 'ik_successes',
               'ik_latency_ms'}


@pytest.mark.parametrize('robot', ['scara', 'planar_2r'])
def test_demo_report_and_plots(processes, tmp_path, robot):
    out = tmp_path / 'out'
    report_path = tmp_path / 'report.json'
    # the default duration (8 s): the pick-and-place the users see
    proc = processes.start('demo', ['robot-dynamics', 'demo', '--robot', robot,
                                    '--report', str(report_path), '--out', str(out)])
    status = proc.wait(300)
    output = processes.output(proc)
    assert status == 0, output
    report = json.loads(report_path.read_text())
    assert REPORT_KEYS <= set(report)
    assert report['succeeded'] and report['result']['error_code'] == 0
    # 6 Cartesian segments of 8 IK samples, all solved through /compute_ik
    assert report['ik_calls'] == report['ik_successes'] == 48
    assert 0.0 < report['ik_latency_ms']['p50'] <= report['ik_latency_ms']['p99']
    assert 0.0 < report['control_latency_ms']['p50'] <= report['control_latency_ms']['p99']
    assert report['control_rate_hz'] > 0.0 and report['missed_cycles'] >= 0
    assert report['rms_tracking_error'] < 1e-2
    assert report['max_tracking_error'] >= report['rms_tracking_error']
    assert f'{robot}: pick-and-place succeeded' in output
    # the report's figures are those of the recording it names
    recording = recordings.read(report['recording'])
    states = recording.tables[recordings.CONTROLLER_STATE]
    moving = [m for m in states.messages if m.mode == 'trajectory']
    error = np.array([m.error.positions for m in moving])
    assert report['rms_tracking_error'] == pytest.approx(np.sqrt(np.mean(error ** 2)),
                                                         rel=1e-9)
    # the arm ended where the plan did: above the place pose
    model = RobotModel.load(robot)
    joints = recording.tables[recordings.JOINT_STATES]
    names = list(model.joint_names)
    q_end = joints.joint_array('position', names)[-1]
    final = moving[-1].reference.positions
    np.testing.assert_allclose(q_end, final, atol=5e-3)
    for name in ('tracking.png', 'effort.png', 'tip_path.png'):
        png = out / name
        assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n' and png.stat().st_size > 20000
    assert sorted(report['plots']) == sorted(str(out / n) for n in
                                             ('tracking.png', 'effort.png', 'tip_path.png'))
