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
``robot-dynamics identify`` says how much of the excitation a recording covers, without ROS.

The recordings are those of ``test_identify_cli`` (the planar 2R following a 21 s excitation
goal from t = 0, its joint states from 0 to 21.5 s), with the goal as the graph records it: the
status of the controller's ``follow_joint_trajectory`` action (``send``), or the trajectory on
``/controller/joint_trajectory``; or without a goal (``ros2 bag record /joint_states``), the
excitation file given. A recording cut at 30 % (a busy host, the goal aborted at 6.3 s) is
refused with the numbers unless ``--partial``.
"""

import json
import re

import numpy as np
import pytest

from robot_dynamics import cli
from robot_dynamics.ros.tools.definitions import TOPICS
from robot_dynamics.trajectory import TrajectoryPoints
import test_identify_cli
from test_identify_cli import _time, T0, write_recording

#: The recording of ``test_identify_cli`` and what made it (the fixture, shared).
run = test_identify_cli.run

STATUS_TYPE = 'action_msgs/msg/GoalStatusArray'
#: The graph's action goals are sent to (``robot-dynamics send``'s), and its status topic.
ACTION = '/controller/follow_joint_trajectory'
STATUS = ACTION + '/_action/status'
EXECUTING, SUCCEEDED, ABORTED = 2, 4, 6
CUT = 0.3           # of the excitation goal's 21 s


def _status(code, log_time, accepted=T0):
    """Return the action's status message (one goal, accepted at ``accepted``) as received."""
    goal = {'goal_info': {'goal_id': {'uuid': list(range(16))}, 'stamp': _time(accepted)},
            'status': code}
    return (STATUS, STATUS_TYPE, {'status_list': [goal]}, log_time)


def _recording(run, path, end=None, extra=(), hold=False):
    """
    Write ``run``'s recording with ``extra`` messages, its joint states up to ``end`` [s].

    ``hold``: the joint states go on after ``end`` with the arm held where it was.
    """
    record, shuffled = run['record'], run['shuffled']
    q, qd, effort = run['q'], record.qd, run['effort']
    if end is not None:
        cut = int(np.searchsorted(record.t, end))
        keep = np.arange(len(record.t)) if hold else np.arange(cut)
        index = np.minimum(keep, cut - 1)
        q, effort = q[index], effort[index]
        qd = np.where((keep < cut)[:, None], qd[index], 0.0)
        t = record.t[keep]
    else:
        t = record.t
    write_recording(path, t, run['names'], shuffled(q), shuffled(qd), shuffled(effort),
                    run['description'], extra)
    return path


def _identify(tmp_path, recording, *options):
    """Run the command as typed; return its exit status and JSON report (None: not written)."""
    report = tmp_path / 'id.json'
    status = cli.main(['identify', str(recording), '--out', str(tmp_path / 'id.urdf'),
                       '--report', str(report), *options])
    return status, json.loads(report.read_text()) if report.exists() else None


def test_a_recording_of_the_whole_goal_covers_it_without_a_word(run, tmp_path, capsys):
    end = TrajectoryPoints.from_yaml(str(run['excitation'])).time_from_start[-1]
    path = _recording(run, tmp_path / 'full.mcap', extra=[
        _status(EXECUTING, T0 + 0.002), _status(SUCCEEDED, T0 + end + 0.01)])
    status, report = _identify(tmp_path, path)
    assert status == cli.EXIT_OK
    assert capsys.readouterr().err == ''
    coverage = report['excitation_coverage']
    assert coverage['fraction'] == 1.0 and coverage['why'] is None
    assert coverage['covered_s'] == pytest.approx(end + 0.01, abs=2e-3)
    assert coverage['reference'].startswith(
        f'the goal of {ACTION} at 0.0 s')


@pytest.mark.parametrize('hold', [False, True], ids=['recording_stopped', 'arm_held'])
def test_a_recording_cut_at_30_percent_is_refused_with_the_numbers(run, tmp_path, capsys,
                                                                   hold):
    excitation = TrajectoryPoints.from_yaml(str(run['excitation']))
    length = excitation.time_from_start[-1]
    end = CUT * length
    path = _recording(run, tmp_path / 'cut.mcap', end=end, hold=hold, extra=[
        _status(EXECUTING, T0 + 0.002), _status(ABORTED, T0 + end)])
    # the recording alone does not hold the goal's length: refused, the part it has named
    status, report = _identify(tmp_path, path)
    err = capsys.readouterr().err
    assert status == cli.EXIT_USAGE and report is None
    assert f'the goal was aborted {end:.1f} s after its start' in err
    assert '--partial' in err and '--excitation' in err
    assert not (tmp_path / 'id.urdf').exists()
    # with the file sent, the numbers
    status, report = _identify(tmp_path, path, '--excitation', str(run['excitation']))
    err = capsys.readouterr().err
    assert status == cli.EXIT_USAGE and report is None
    assert f'covers {end:.1f} s of the {length:.1f} s excitation (30 %)' in err
    assert 'at least 90 % is needed' in err
    # --partial identifies what there is, and says so
    status, report = _identify(tmp_path, path, '--excitation', str(run['excitation']),
                               '--partial')
    err = capsys.readouterr().err
    assert status == cli.EXIT_OK
    assert err.count('\n') == 1 and 'warning:' in err and '(30 %)' in err
    coverage = report['excitation_coverage']
    assert coverage['covered_s'] == pytest.approx(end, abs=2e-3)
    assert coverage['expected_s'] == pytest.approx(length)
    assert coverage['fraction'] == pytest.approx(CUT, abs=1e-4)


def test_a_goal_on_the_trajectory_topic_gives_its_length(run, tmp_path, capsys):
    excitation = TrajectoryPoints.from_yaml(str(run['excitation']))
    length = excitation.time_from_start[-1]
    goal = {'header': {'stamp': _time(T0), 'frame_id': ''},
            'joint_names': list(excitation.joint_names),
            'points': [{'positions': q.tolist(), 'velocities': [], 'accelerations': [],
                        'effort': [], 'time_from_start': _time(t)}
                       for t, q in zip(excitation.time_from_start, excitation.positions)]}
    path = _recording(run, tmp_path / 'topic.mcap', end=0.5 * length, extra=[
        (TOPICS.joint_trajectory, 'trajectory_msgs/msg/JointTrajectory', goal, T0)])
    status, _ = _identify(tmp_path, path)
    err = capsys.readouterr().err
    assert status == cli.EXIT_USAGE
    assert f'covers {0.5 * length:.1f} s of the {length:.1f} s excitation (50 %)' in err
    assert f'the joint states end {0.5 * length:.1f} s after its start, before the goal ' \
           'ended' in err


def test_a_recording_stopped_before_the_goal_ended_is_measured_by_the_file(
        run, tmp_path, capsys):
    length = TrajectoryPoints.from_yaml(str(run['excitation'])).time_from_start[-1]
    path = _recording(run, tmp_path / 'stopped.mcap', end=CUT * length,
                      extra=[_status(EXECUTING, T0 + 0.002)])
    # the action's status does not hold the goal's length: a warning that says so
    status, report = _identify(tmp_path, path)
    err = capsys.readouterr().err
    assert status == cli.EXIT_OK and err.count('\n') == 1 and 'warning:' in err
    assert f'covers {CUT * length:.1f} s of an excitation of unknown length' in err
    assert 'before the goal ended' in err and '--excitation' in err
    assert report['excitation_coverage']['covered_s'] == pytest.approx(CUT * length, abs=2e-3)
    assert report['excitation_coverage']['expected_s'] is None
    # the file sent gives it: 30 %, refused
    status, _ = _identify(tmp_path, path, '--excitation', str(run['excitation']))
    err = capsys.readouterr().err
    assert status == cli.EXIT_USAGE
    assert f'covers {CUT * length:.1f} s of the {length:.1f} s excitation (30 %)' in err


def test_without_a_goal_the_excitation_file_is_the_reference(run, tmp_path, capsys):
    excitation = TrajectoryPoints.from_yaml(str(run['excitation']))
    span = excitation.time_from_start[-1] - excitation.time_from_start[0]
    # neither a goal nor the file: one line says so, and identification goes on
    status, report = _identify(tmp_path, run['path'])
    err = capsys.readouterr().err
    assert status == cli.EXIT_OK and err.count('\n') == 1
    assert 'coverage of the excitation not checked: no goal on' in err and '--excitation' in err
    assert report['excitation_coverage']['fraction'] is None
    # the whole motion: no word; the motion measured from the samples in motion
    status, report = _identify(tmp_path, run['path'], '--excitation', str(run['excitation']))
    assert status == cli.EXIT_OK and capsys.readouterr().err == ''
    coverage = report['excitation_coverage']
    assert coverage['expected_s'] == pytest.approx(span)
    assert coverage['fraction'] > 0.99
    assert coverage['reference'].startswith(str(run['excitation']))
    # the arm held from 30 % of the goal on (6.3 s): of its 20 s of motion it made 5.3 s, or
    # 6.3 s with the 1 s lead-in, in which the arm, heavier than its model, sags
    cut = CUT * excitation.time_from_start[-1]
    path = _recording(run, tmp_path / 'cut.mcap', end=cut, hold=True)
    status, _ = _identify(tmp_path, path, '--excitation', str(run['excitation']))
    err = capsys.readouterr().err
    assert status == cli.EXIT_USAGE
    found = re.search(rf'covers ([0-9.]+) s of the {span:.1f} s excitation \(([0-9]+) %\)', err)
    assert cut - excitation.time_from_start[0] <= float(found[1]) <= cut
    assert 26 <= int(found[2]) <= 32
    assert 'the arm moves for' in err and '--partial' in err
    # a file of other joints is no reference
    other = tmp_path / 'other.yaml'
    other.write_text(run['excitation'].read_text().replace('joint1', 'wrist'))
    status, _ = _identify(tmp_path, run['path'], '--excitation', str(other))
    assert status == cli.EXIT_USAGE
    assert "names the joints ['wrist', 'joint2'], not all the recorded arm's" in \
        capsys.readouterr().err
