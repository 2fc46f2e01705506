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
``robot-dynamics plot`` and :mod:`robot_dynamics.recordings` on recordings written here.

No ROS process runs: the recordings are written with mcap-ros2-support's writer (a library
simulation of the SCARA as the controller would publish it, and a real arm's layout as
``ros2 bag record`` would write it), and with the plain ``mcap`` writer for hand-made CDR bytes.
"""

import csv
import io
from pathlib import Path
import struct
import sys

from damaged import damaged_copies, names_damage, rechunked
from mcap.writer import Writer as McapWriter
from mcap_ros2.writer import Writer
import numpy as np
import pytest

from robot_dynamics import cli, closed_loop, pick_and_place, plots, recorded_motion, recordings, \
    replay, RobotModel, ShapeError
from robot_dynamics.errors import InputError
from robot_dynamics.model import from_source
from robot_dynamics.ros.tools.definitions import message_definition, TOPICS

NS = 1_000_000_000
T0 = 1000.0          # stamp of the first sample [s]
LOG_DELAY = 0.0004   # receive time after the stamp [s]
MIN_PNG_BYTES = 10_000
#: Chunk size of the damaged recordings [bytes]: damage loses a part of them, not all.
CHUNK = 16_384

# Standard definitions as a rosbag2 recording on a ROS 2 distribution stores them (comments
# left out; the format of rosbag2's docs/message_definition_encoding.md): an independent
# reference for the reader, not built by robot_dynamics.
TIME_DEF = 'int32 sec\nuint32 nanosec\n'
HEADER_DEF = 'builtin_interfaces/Time stamp\nstring frame_id\n'
SEP = '\n' + '=' * 80 + '\n'
JOINT_STATE_DEF = ('std_msgs/Header header\nstring[] name\nfloat64[] position\n'
                   'float64[] velocity\nfloat64[] effort\n'
                   f'{SEP}MSG: std_msgs/Header\n{HEADER_DEF}'
                   f'{SEP}MSG: builtin_interfaces/Time\n{TIME_DEF}')
STRING_DEF = 'string data\n'
MULTI_ARRAY_DEF = (
    'MultiArrayLayout layout\nfloat64[] data\n'
    f'{SEP}MSG: std_msgs/MultiArrayLayout\nMultiArrayDimension[] dim\nuint32 data_offset\n'
    f'{SEP}MSG: std_msgs/MultiArrayDimension\nstring label\nuint32 size\nuint32 stride\n')


def _time(seconds):
    ns = int(round(seconds * NS))
    return {'sec': ns // NS, 'nanosec': ns % NS}


def _header(seconds):
    return {'stamp': _time(seconds), 'frame_id': ''}


def _write(path, topics):
    """Write ``{topic: (type, definition, [(stamp [s], message)])}`` with mcap-ros2-support."""
    with open(path, 'wb') as f:
        writer = Writer(f)
        for topic, (type_name, definition, messages) in topics.items():
            schema = writer.register_msgdef(type_name, definition)
            for stamp, msg in messages:
                log = int(round((stamp + LOG_DELAY) * NS))
                writer.write_message(topic, schema, msg, log_time=log, publish_time=log)
        writer.finish()


def _read_csv(path):
    with open(path, newline='') as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def _columns(path, names):
    """Return the CSV columns ``names`` of ``path`` as floats, shape (K, len(names))."""
    header, rows = _read_csv(path)
    idx = [header.index(n) for n in names]
    return np.array([[float(r[i]) for i in idx] for r in rows])


def _scara_tip(q):
    """SCARA tip position, closed form from urdf/scara.urdf: r1 = 0.325, r2 = 0.275 m."""
    c1, s1 = np.cos(q[:, 0]), np.sin(q[:, 0])
    c12, s12 = np.cos(q[:, 0] + q[:, 1]), np.sin(q[:, 0] + q[:, 1])
    return np.stack([0.325 * c1 + 0.275 * c12, 0.325 * s1 + 0.275 * s12, 0.45 - q[:, 2]], -1)


def _planar_2r_tip(q):
    """Planar 2R tip position (x-z plane), closed form: l1 = l2 = 2 m."""
    c1, s1 = np.cos(q[:, 0]), np.sin(q[:, 0])
    c12, s12 = np.cos(q[:, 0] + q[:, 1]), np.sin(q[:, 0] + q[:, 1])
    return np.stack([2 * c1 + 2 * c12, np.zeros(len(q)), 2 * s1 + 2 * s12], -1)


# ---- our layout: a simulated SCARA with the controller's state ---------------------------------

@pytest.fixture(scope='module')
def simulated(tmp_path_factory):
    """Record a computed-torque SCARA run as the ROS controller and simulator publish it."""
    run = closed_loop.run(closed_loop.Settings(robot='scara', controller='computed_torque',
                                               duration=1.5, model_error=0.2))
    rec, names = run.record, list(run.plant.joint_names)
    ref = run.reference.sample(rec.t)
    error = ref.q - rec.q
    _, urdf = from_source(robot='scara')
    stamps = T0 + rec.t
    point = run.report['reference']
    states, controller = [], []
    for k, stamp in enumerate(stamps):
        states.append((stamp, {'header': _header(stamp), 'name': names,
                               'position': rec.q[k].tolist(), 'velocity': rec.qd[k].tolist(),
                               'effort': rec.tau_applied[k].tolist()}))
        controller.append((stamp, {
            'header': _header(stamp), 'state_stamp': _time(stamp), 'joint_names': names,
            'control_law': 'computed_torque', 'mode': 'trajectory',
            'reference': {'positions': ref.q[k].tolist(), 'velocities': ref.qd[k].tolist(),
                          'accelerations': ref.qdd[k].tolist()},
            'feedback': {'positions': rec.q[k].tolist(), 'velocities': rec.qd[k].tolist()},
            'error': {'positions': error[k].tolist()},
            'effort': rec.tau[k].tolist(), 'effort_requested': rec.tau[k].tolist(),
            'saturated': rec.saturated[k].tolist(), 'cycles': k, 'missed_cycles': 0}))
    goal = {'header': _header(T0), 'joint_names': names, 'points': [
        {'positions': q, 'time_from_start': _time(t)}
        for t, q in zip(point['time_from_start'], point['positions'])]}
    path = tmp_path_factory.mktemp('simulated') / 'scara.mcap'
    types = ('std_msgs/msg/String', 'sensor_msgs/msg/JointState',
             'robot_dynamics_interfaces/msg/ControllerState',
             'trajectory_msgs/msg/JointTrajectory')
    channels = {
        '/robot_description': (types[0], message_definition(types[0]), [(T0, {'data': urdf})]),
        '/joint_states': (types[1], message_definition(types[1]), states),
        '/controller/state': (types[2], message_definition(types[2]), controller),
        '/controller/joint_trajectory': (types[3], message_definition(types[3]),
                                         [(T0, goal)]),
    }
    _write(path, channels)
    return {'path': path, 'run': run, 'ref': ref, 'error': error, 'urdf': urdf, 'names': names,
            'goal': point, 'channels': channels}


@pytest.fixture(scope='module')
def read(simulated):
    """Return the simulated recording as recordings.read gives it, read once for its tests."""
    return recordings.read(simulated['path'])


@pytest.fixture(scope='module')
def plotted(simulated, tmp_path_factory):
    out = tmp_path_factory.mktemp('plots')
    status = cli.main(['plot', str(simulated['path']), '--out', str(out)])
    assert status == cli.EXIT_OK
    return out


def test_csv_layout_and_numbers_of_the_joint_states(simulated, plotted):
    rec, names = simulated['run'].record, simulated['names']
    header, rows = _read_csv(plotted / 'joint_states.csv')
    assert header == (['log_time', 'stamp', 'frame_id']
                      + [f'{field}.{n}' for field in ('position', 'velocity', 'effort')
                         for n in names])
    assert len(rows) == len(rec.t)
    # float64 round trip: the CSV holds exactly the recorded numbers
    np.testing.assert_array_equal(_columns(plotted / 'joint_states.csv',
                                           [f'position.{n}' for n in names]), rec.q)
    np.testing.assert_array_equal(_columns(plotted / 'joint_states.csv',
                                           [f'effort.{n}' for n in names]), rec.tau_applied)
    times = _columns(plotted / 'joint_states.csv', ['log_time', 'stamp'])
    np.testing.assert_allclose(times[:, 1], T0 + rec.t, rtol=0, atol=1e-6)
    np.testing.assert_allclose(times[:, 0] - times[:, 1], LOG_DELAY, rtol=0, atol=1e-6)


def test_csv_of_the_controller_state_keeps_nested_fields_by_joint(simulated, plotted):
    names = simulated['names']
    header, rows = _read_csv(plotted / 'controller.state.csv')
    for column in ('state_stamp', 'control_law', 'mode', 'cycles', 'missed_cycles',
                   *(f'{f}.{n}' for f in ('reference.positions', 'reference.accelerations',
                                          'feedback.velocities', 'error.positions',
                                          'effort', 'saturated') for n in names)):
        assert column in header, column
    assert 'joint_names' not in header
    path = plotted / 'controller.state.csv'
    np.testing.assert_array_equal(_columns(path, [f'reference.positions.{n}' for n in names]),
                                  simulated['ref'].q)
    np.testing.assert_array_equal(_columns(path, [f'error.positions.{n}' for n in names]),
                                  simulated['error'])
    saturated = _columns(path, [f'saturated.{n}' for n in names])
    np.testing.assert_array_equal(saturated, simulated['run'].record.saturated.astype(float))
    assert {r[header.index('mode')] for r in rows} == {'trajectory'}
    # the goal: one row, points by index and joint
    header, rows = _read_csv(plotted / 'controller.joint_trajectory.csv')
    goal = simulated['goal']
    assert len(rows) == 1
    last = len(goal['positions']) - 1
    assert float(rows[0][header.index(f'points.{last}.positions.{names[1]}')]) == \
        goal['positions'][last][1]
    assert float(rows[0][header.index(f'points.{last}.time_from_start')]) == \
        pytest.approx(goal['time_from_start'][last], abs=1e-9)


def test_robot_description_is_written_once_as_urdf(simulated, plotted):
    header, rows = _read_csv(plotted / 'robot_description.csv')
    assert header == ['log_time', 'urdf_file', 'characters']
    assert rows == [[repr(T0 + LOG_DELAY), 'robot_description.1.urdf',
                     str(len(simulated['urdf']))]]
    assert (plotted / 'robot_description.1.urdf').read_text() == simulated['urdf']


def test_pngs_are_written(plotted):
    for name in ('tracking.png', 'effort.png', 'tip_path.png'):
        data = (plotted / name).read_bytes()
        assert data.startswith(b'\x89PNG') and len(data) > MIN_PNG_BYTES, name


def test_plotted_series_follow_the_controller_state(simulated, read):
    recording = read
    model, note = recordings.robot_model(recording, TOPICS)
    assert note == '' and model.joint_names == tuple(simulated['names'])
    rec, ref = simulated['run'].record, simulated['ref']
    data, why = recorded_motion.tracking(recording, TOPICS, model)
    assert why == '' and data.names == simulated['names']
    np.testing.assert_allclose(data.t, rec.t - rec.t[0], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(data.q, rec.q)
    np.testing.assert_array_equal(data.q_ref, ref.q)
    np.testing.assert_array_equal(data.error, simulated['error'])
    assert data.units == ['rad', 'rad', 'm']
    goal = simulated['goal']
    np.testing.assert_allclose(data.waypoints[0], goal['time_from_start'], atol=1e-9)
    np.testing.assert_array_equal(data.waypoints[1], goal['positions'])
    # effort: what the controller commanded, with the URDF's limits
    data, why = recorded_motion.effort(recording, TOPICS, model)
    np.testing.assert_array_equal(data.effort, rec.tau)
    np.testing.assert_array_equal(data.limits, [80.0, 40.0, 200.0])
    assert data.units == ['N m', 'N m', 'N']
    assert '/controller/state' in data.title


def test_a_recording_made_before_the_state_topic_plots_the_same(simulated, read, tmp_path):
    # robot_dynamics 0.1 published its ControllerState on ~/controller_state, where
    # control_msgs' JointTrajectoryControllerState is now
    channels = dict(simulated['channels'])
    channels['/controller/controller_state'] = channels.pop('/controller/state')
    old = tmp_path / 'old.mcap'
    _write(old, channels)
    new, before = read, recordings.read(old)
    model, _ = recordings.robot_model(new, TOPICS)
    for series in (recorded_motion.tracking, recorded_motion.effort):
        (now, _), (then, _) = series(new, TOPICS, model), series(before, TOPICS, model)
        np.testing.assert_equal(then._replace(title=''), now._replace(title=''))
        assert '/controller/controller_state' in then.title
    assert cli.main(['plot', str(old), '--out', str(tmp_path / 'plots')]) == cli.EXIT_OK
    assert (tmp_path / 'plots' / 'tracking.png').read_bytes().startswith(b'\x89PNG')


def test_tip_path_is_the_forward_kinematics_of_the_recorded_states(simulated, read):
    recording = read
    model, _ = recordings.robot_model(recording, TOPICS)
    data, why = recorded_motion.tip_path(recording, TOPICS, model)
    assert why == ''
    rec = simulated['run'].record
    np.testing.assert_allclose(data.p, _scara_tip(rec.q), atol=1e-12)
    np.testing.assert_allclose(data.planned, _scara_tip(simulated['ref'].q), atol=1e-12)
    np.testing.assert_allclose(data.waypoints,
                               _scara_tip(np.array(simulated['goal']['positions'])), atol=1e-12)


def test_replay_shows_the_newest_recorded_sample_at_a_time(simulated):
    shown = replay.Replay(simulated['path'], TOPICS)
    rec, ref = simulated['run'].record, simulated['ref']
    assert shown.model.joint_names == tuple(simulated['names'])
    assert shown.duration == pytest.approx(rec.t[-1] - rec.t[0], abs=1e-6)
    assert set(shown.mode) == {'trajectory'}
    dt = rec.t[1] - rec.t[0]
    for k in (0, 7, len(rec.t) // 2, len(rec.t) - 1):
        # at a sample's time, and just before the next one: that sample
        for t in (rec.t[k] - rec.t[0], rec.t[k] - rec.t[0] + 0.9 * dt):
            q, q_ref = shown.at(t)
            np.testing.assert_array_equal(q, rec.q[k])
            np.testing.assert_array_equal(q_ref, ref.q[k])
    np.testing.assert_array_equal(shown.at(-1.0)[0], rec.q[0])
    np.testing.assert_array_equal(shown.at(1e3)[0], rec.q[-1])


def test_playback_plays_pauses_seeks_and_loops():
    clock = replay.Playback(2.0)
    assert clock.advance(0.5) == 0.5
    clock.speed = 0.25
    assert clock.advance(1.0) == 0.75
    clock.playing = False
    assert clock.advance(10.0) == 0.75       # paused: wall time passes, the replay holds
    clock.seek(1.9)
    assert clock.t == 1.9
    clock.seek(5.0)
    assert clock.t == 2.0                    # clipped to the recording
    clock.seek(-1.0)
    assert clock.t == 0.0
    clock.playing, clock.speed = True, 2.0
    clock.seek(1.5)
    assert clock.advance(0.2) == pytest.approx(1.9)
    assert clock.advance(0.1) == 0.0         # past the end: from the start again
    with pytest.raises(InputError, match='duration'):
        replay.Playback(float('nan'))


# ---- someone else's layout: a real arm's bag, no controller state -------------------------------

@pytest.fixture(scope='module')
def foreign(tmp_path_factory):
    """
    Write a recording as ``ros2 bag record -s mcap`` makes it next to a driver.

    Joint states name the joints in their own order with an extra gripper joint; commands are a
    forward command controller's Float64MultiArray; no controller state, no tip pose.
    """
    _, urdf = from_source(robot='planar_2r')
    t = np.arange(0.0, 2.0, 0.01)
    q = np.stack([0.4 * np.sin(2.0 * t), 0.8 - 0.3 * t], -1)
    effort = np.stack([50.0 * np.cos(t), -20.0 + 5.0 * t], -1)
    names = ['gripper_finger', 'joint2', 'joint1']
    states = [(T0 + tk, {'header': _header(T0 + tk), 'name': names,
                         'position': [0.01, q[k, 1], q[k, 0]],
                         'velocity': [0.0, -0.3, 0.8 * np.cos(2.0 * tk)],
                         'effort': [0.5, effort[k, 1], effort[k, 0]]})
              for k, tk in enumerate(t)]
    commands = [(T0 + tk, {'layout': {'dim': [], 'data_offset': 0},
                           'data': effort[k].tolist()}) for k, tk in enumerate(t)]
    path = tmp_path_factory.mktemp('foreign') / 'bag_0.mcap'
    _write(path, {
        '/robot_description': ('std_msgs/msg/String', STRING_DEF, [(T0, {'data': urdf})]),
        '/joint_states': ('sensor_msgs/msg/JointState', JOINT_STATE_DEF, states),
        '/effort_controller/commands': ('std_msgs/msg/Float64MultiArray', MULTI_ARRAY_DEF,
                                        commands),
    })
    return {'path': path, 't': t, 'q': q, 'effort': effort}


def _plot(*argv):
    """Run ``robot-dynamics plot`` in this process; return its exit status and output."""
    out = io.StringIO()
    status = cli.plot_command(cli.build_parser().parse_args(['plot', *map(str, argv)]), out)
    return status, out.getvalue()


def test_a_foreign_recording_plots_joint_states_and_effort(foreign, tmp_path):
    status, text = _plot(foreign['path'], '--out', tmp_path)
    assert status == cli.EXIT_OK
    for name in ('joint_states.csv', 'effort_controller.commands.csv', 'tracking.png',
                 'effort.png', 'tip_path.png'):
        assert f'wrote {tmp_path / name}' in text
    for name in ('tracking.png', 'effort.png', 'tip_path.png'):
        assert (tmp_path / name).stat().st_size > MIN_PNG_BYTES
    header, _ = _read_csv(tmp_path / 'effort_controller.commands.csv')
    assert header == ['log_time', 'layout.data_offset', 'data.0', 'data.1']
    np.testing.assert_array_equal(_columns(tmp_path / 'effort_controller.commands.csv',
                                           ['data.0', 'data.1']), foreign['effort'])


def test_a_foreign_recording_is_matched_by_joint_name(foreign):
    recording = recordings.read(foreign['path'])
    model, _ = recordings.robot_model(recording, TOPICS)
    data, _ = recorded_motion.tracking(recording, TOPICS, model)
    assert data.names == ['gripper_finger', 'joint2', 'joint1']
    assert data.q_ref is None and data.error is None and data.waypoints is None
    assert 'no reference' in data.title
    np.testing.assert_array_equal(data.q[:, [2, 1]], foreign['q'])
    assert data.units == ['rad or m', 'rad', 'rad']
    np.testing.assert_allclose(data.t, foreign['t'], atol=1e-6)
    data, _ = recorded_motion.effort(recording, TOPICS, model)
    np.testing.assert_array_equal(data.effort[:, [2, 1]], foreign['effort'])
    np.testing.assert_array_equal(data.limits[1:], [100.0, 200.0])
    assert np.isnan(data.limits[0])   # the gripper is not in the description
    data, _ = recorded_motion.tip_path(recording, TOPICS, model)
    np.testing.assert_allclose(data.p, _planar_2r_tip(foreign['q']), atol=1e-12)
    assert data.planned is None


def test_csv_only_needs_no_matplotlib(foreign, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, 'matplotlib.backends.backend_agg', None)   # import fails
    assert cli.main(['plot', str(foreign['path']), '--out', str(tmp_path), '--csv-only']) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        'effort_controller.commands.csv', 'joint_states.csv', 'robot_description.1.urdf',
        'robot_description.csv']
    assert cli.main(['plot', str(foreign['path']), '--out', str(tmp_path / 'png')]) == \
        cli.EXIT_FAILURE
    assert not (tmp_path / 'png').exists()


# ---- damaged and partly readable recordings -----------------------------------------------------

def _cdr_string(text):
    """Serialize std_msgs/String by hand: CDR little-endian encapsulation, length with NUL."""
    data = text.encode() + b'\0'
    return b'\x00\x01\x00\x00' + struct.pack('<I', len(data)) + data


def test_undecodable_topics_are_skipped_and_named(tmp_path):
    path = tmp_path / 'mixed.mcap'
    with open(path, 'wb') as f:
        writer = McapWriter(f)
        writer.start(profile='ros2', library='test')
        string = writer.register_schema('std_msgs/msg/String', 'ros2msg', STRING_DEF.encode())
        idl = writer.register_schema('pkg/msg/Thing', 'ros2idl', b'module pkg {};')
        bare = writer.register_schema('pkg/msg/Other', '', b'')
        channels = {topic: writer.register_channel(topic, 'cdr', schema)
                    for topic, schema in (('/text', string), ('/idl', idl), ('/bare', bare))}
        for k in range(3):
            for topic, channel in channels.items():
                data = _cdr_string(f'hello {k}') if topic == '/text' else b'\x00\x01\x00\x00'
                writer.add_message(channel, log_time=k, data=data, publish_time=k)
        writer.finish()
    recording = recordings.read(path)
    assert [m.data for m in recording.tables['/text'].messages] == ['hello 0', 'hello 1',
                                                                    'hello 2']
    assert set(recording.skipped) == {'/idl', '/bare'}
    assert "'ros2idl'" in recording.skipped['/idl']
    assert "'none'" in recording.skipped['/bare']
    assert recording.problem == ''


def test_an_unfinished_recording_is_read_up_to_where_it_ends(foreign, tmp_path):
    data = rechunked(Path(foreign['path']).read_bytes(), 4096)
    cut = tmp_path / 'cut.mcap'
    cut.write_bytes(data[:len(data) // 2])
    recording = recordings.read(cut)
    assert 'ends early' in recording.problem
    status, text = _plot(cut, '--out', tmp_path / 'out', '--csv-only')
    assert status == cli.EXIT_OK and 'ends early' in text


def _csv_rows(folder):
    """Return ``{csv file name: rows with the title row}`` of a plot's output folder."""
    return {path.name: _read_csv(path)[1] for path in sorted(Path(folder).glob('*.csv'))}


def test_damaged_copies_give_what_precedes_the_damage_or_one_line(simulated, tmp_path, capsys):
    # the first third of the run: 21 chunks for the damage to hit (60 in the whole run), a
    # third of the messages to read again for each of the copies
    short = tmp_path / 'short.mcap'
    _write(short, {topic: (type_name, definition, messages[:len(messages) // 3 or 1])
                   for topic, (type_name, definition, messages)
                   in simulated['channels'].items()})
    assert cli.main(['plot', str(short), '--out', str(tmp_path / 'clean'),
                     '--csv-only']) == cli.EXIT_OK
    clean = _csv_rows(tmp_path / 'clean')
    capsys.readouterr()
    outcomes = {}
    for name, data in damaged_copies(rechunked(short.read_bytes(), CHUNK)).items():
        path, out = tmp_path / f'{name}.mcap', tmp_path / name
        path.write_bytes(data)
        status = cli.main(['plot', str(path), '--out', str(out), '--csv-only'])
        printed = capsys.readouterr()
        if status == cli.EXIT_USAGE:
            lines = printed.err.splitlines()
            assert len(lines) == 1 and names_damage(lines[0]), (name, printed.err)
            assert str(path) in lines[0] and not out.exists(), name
            outcomes[name] = 'refused'
            continue
        assert status == cli.EXIT_OK and printed.err == '', (name, printed)
        rows = _csv_rows(out)
        # (plot prints the problem as a note: test_an_unfinished_recording_is_read_...)
        if not names_damage(recordings.read(path).problem):
            assert rows == clean, f'{name}: read differently without a word about it'
            outcomes[name] = 'unchanged'
            continue
        # the messages before the damage: the first ones of each topic, as they were
        assert rows and set(rows) <= set(clean), name
        for file, kept in rows.items():
            assert kept == clean[file][:len(kept)], (name, file)
        outcomes[name] = 'partial' if rows != clean else 'named'
    # the file cut short: what comes before the cut, with the cut named
    kept = [sum(map(len, _csv_rows(tmp_path / name).values()))
            for name in ('cut_at_0.25', 'cut_at_0.6', 'cut_at_0.9')]
    assert 0 < kept[0] < kept[1] < kept[2] < sum(map(len, clean.values())), kept
    assert outcomes['cut_at_0.01'] == 'refused'
    # every single flipped bit is caught (the CRCs) or changes nothing that is read
    kinds = {kind: sorted(n for n, o in outcomes.items() if o == kind)
             for kind in set(outcomes.values())}
    assert set(kinds) >= {'refused', 'partial'}, kinds


def test_plot_draws_what_a_cut_recording_holds(simulated, tmp_path):
    data = rechunked(simulated['path'].read_bytes(), CHUNK)
    cut = tmp_path / 'cut.mcap'
    cut.write_bytes(data[:int(0.6 * len(data))])
    status, text = _plot(cut, '--out', tmp_path / 'out')
    assert status == cli.EXIT_OK and 'ends early' in text
    for name in ('tracking.png', 'effort.png', 'tip_path.png'):
        assert (tmp_path / 'out' / name).stat().st_size > MIN_PNG_BYTES


def _two_robots(path, repeats=1):
    """Record the SCARA's joint states, its description ``repeats`` times, then the 2R's."""
    scara, planar = (from_source(robot=name)[1] for name in ('scara', 'planar_2r'))
    states = [(T0 + 0.01 * k, {'header': _header(T0 + 0.01 * k), 'name': ['joint1'],
                               'position': [0.01 * k], 'velocity': [1.0], 'effort': [0.0]})
              for k in range(200)]
    descriptions = [(T0 + 0.001 * k, {'data': scara}) for k in range(repeats)]
    _write(path, {'/robot_description': ('std_msgs/msg/String', STRING_DEF,
                                         descriptions + [(T0 + 1.0, {'data': planar})]),
                  '/joint_states': ('sensor_msgs/msg/JointState', JOINT_STATE_DEF, states)})
    return scara, planar


def test_a_description_that_changes_is_written_once_each_and_no_plot_mixes_them(tmp_path):
    path = tmp_path / 'two.mcap'
    scara, planar = _two_robots(path, repeats=50)
    status, text = _plot(path, '--out', tmp_path / 'out')
    assert status == cli.EXIT_OK
    out = tmp_path / 'out'
    header, rows = _read_csv(out / 'robot_description.csv')
    assert [row[1:] for row in rows] == [['robot_description.1.urdf', str(len(scara))]] * 50 \
        + [['robot_description.2.urdf', str(len(planar))]]
    assert (out / 'robot_description.1.urdf').read_text() == scara
    assert (out / 'robot_description.2.urdf').read_text() == planar
    assert (out / 'robot_description.csv').stat().st_size < 100 * len(rows)
    assert ('/robot_description changes during the recording (2 different descriptions, new '
            'ones 1.000 s after the first)') in text
    # the plots that need no model are drawn; no tip path of either robot
    assert (out / 'tracking.png').is_file() and (out / 'effort.png').is_file()
    assert 'tip_path.png: not drawn' in text


def test_a_file_that_is_not_mcap_is_bad_input(tmp_path, capsys):
    path = tmp_path / 'notes.mcap'
    path.write_text('not a recording')
    assert cli.main(['plot', str(path), '--out', str(tmp_path / 'out')]) == cli.EXIT_USAGE
    assert 'not an MCAP file' in capsys.readouterr().err
    assert cli.main(['plot', str(tmp_path / 'missing.mcap'), '--out', str(tmp_path)]) == \
        cli.EXIT_FAILURE


# ---- the plotting functions ---------------------------------------------------------------------

def test_plot_functions_check_their_shapes(tmp_path):
    t = np.linspace(0.0, 1.0, 5)
    with pytest.raises(ShapeError, match='q_ref'):
        plots.plot_tracking(tmp_path / 'a.png', t, ['a', 'b'], np.zeros((5, 2)),
                            q_ref=np.zeros((4, 2)))
    with pytest.raises(ShapeError, match='effort'):
        plots.plot_effort(tmp_path / 'b.png', t, ['a', 'b'], np.zeros((5, 3)))
    with pytest.raises(ShapeError, match='planned'):
        plots.plot_tip_path(tmp_path / 'c.png', np.zeros((5, 3)), planned=np.zeros((5, 2)))
    with pytest.raises(ValueError, match='units'):
        plots.plot_effort(tmp_path / 'd.png', t, ['a', 'b'], np.zeros((5, 2)), units=['N'])
    assert not any(tmp_path.iterdir())


def test_plot_functions_take_plain_arrays(tmp_path):
    """What the demo does: its own planned path and measured arrays, no recording."""
    model = RobotModel.load('planar_2r')
    t = np.linspace(0.0, 2.0, 201)
    q_ref = np.stack([0.5 * t, 1.0 - 0.25 * t], -1)
    q = q_ref + 1e-3 * np.sin(10 * t)[:, None]
    plots.plot_tracking(tmp_path / 'tracking.png', t, model.joint_names, q, q_ref,
                        units=['rad', 'rad'], waypoints=(t[::50], q_ref[::50]),
                        title='demo')
    plots.plot_effort(tmp_path / 'effort.png', t, model.joint_names, 30.0 * q,
                      limits=model.effort_limit, units=['N m', 'N m'])
    plots.plot_tip_path(tmp_path / 'tip.png', model.fk(q)[:, :3, 3],
                        planned=model.fk(q_ref)[:, :3, 3],
                        waypoints=model.fk(q_ref[::50])[:, :3, 3])
    for name in ('tracking.png', 'effort.png', 'tip.png'):
        assert (tmp_path / name).stat().st_size > MIN_PNG_BYTES


# ---- what the figures show ----------------------------------------------------------------------

def test_an_effort_axis_is_scaled_to_the_effort_with_the_limits_marked(tmp_path):
    t = np.linspace(0.0, 2.0, 201)
    small = 5.0 * np.sin(3.0 * t)                    # 6 % of an 80 N m limit
    large = 70.0 * np.sin(3.0 * t)                   # 88 % of it
    fig = plots.plot_effort(tmp_path / 'e.png', t, ['a', 'b'], np.stack((small, large), -1),
                            limits=[80.0, 80.0], units=['N m', 'N m'])
    low, high = fig.axes[0].get_ylim()
    # the data set the scale: the 5 N m swing fills the axis instead of a flat line at +-80
    assert -5.0 * 1.2 < low < -5.0 * 0.99 and 5.0 * 0.99 < high < 5.0 * 1.6
    notes = [text.get_text() for text in fig.axes[0].texts]
    assert notes == ['peak 5 N m = 6.2 % of the limit 80 N m']
    assert not [line for line in fig.axes[0].get_lines() if line.get_label() == 'limit']
    # near the limit, the limit lines are in view
    low, high = fig.axes[1].get_ylim()
    assert low < -80.0 and high > 80.0 and high < 80.0 * 1.6
    assert [line.get_ydata()[0] for line in fig.axes[1].get_lines()[1:]] == [-80.0, 80.0]
    assert f'{100 * np.abs(large).max() / 80:.2g} % of the limit 80 N m' in \
        fig.axes[1].texts[0].get_text()


def test_the_tip_path_of_a_planar_arm_is_drawn_in_its_plane(planar_2r, tmp_path):
    """The planar 2R moves in the vertical x-z plane: one view, x-z, not a flat top view."""
    q = np.stack([np.linspace(-0.5, 0.8, 50), np.linspace(1.2, 0.4, 50)], -1)
    p = planar_2r.fk(q)[:, :3, 3]
    np.testing.assert_allclose(p, _planar_2r_tip(q), atol=1e-12)
    views = plots.tip_views(p)
    assert [(v.name, v.labels) for v in views] == [('side view (x-z)', ('x [m]', 'z [m]'))]
    fig = plots.plot_tip_path(tmp_path / 'tip.png', p)
    (ax,) = fig.axes
    assert (ax.get_xlabel(), ax.get_ylabel()) == ('x [m]', 'z [m]')
    assert ax.get_aspect() == 1.0                    # equal scales
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ['actual', 'start', 'end']
    start, end = ax.get_lines()[1], ax.get_lines()[2]
    np.testing.assert_allclose([start.get_xdata()[0], start.get_ydata()[0]], p[0, [0, 2]])
    np.testing.assert_allclose([end.get_xdata()[0], end.get_ydata()[0]], p[-1, [0, 2]])
    # the axes span the data (equal scales widen the shorter one only)
    (x0, x1), (z0, z1) = ax.get_xlim(), ax.get_ylim()
    assert x0 <= p[:, 0].min() and x1 >= p[:, 0].max()
    assert z0 <= p[:, 2].min() and z1 >= p[:, 2].max()


def test_tip_views_follow_the_motion(scara):
    # a SCARA pick-and-place: mostly horizontal, with lifts: top view and a side view
    q = np.stack([np.linspace(-0.6, 0.6, 80), np.linspace(0.5, 1.8, 80),
                  0.1 + 0.05 * np.sin(np.linspace(0.0, 6.0, 80))], -1)
    p = _scara_tip(q)
    names = [v.name for v in plots.tip_views(p)]
    assert names[0] == 'top view (x-y)' and len(names) == 2 and names[1] in (
        'side view (x-z)', 'front view (y-z)')
    # a planar motion in a tilted plane: coordinate views still (no oblique axes to decode),
    # the two that hold most of it
    u, v = np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0), np.array([0.0, 0.0, 1.0])
    s = np.linspace(0.0, 1.0, 40)
    tilted = np.outer(np.cos(3 * s), u) + np.outer(0.5 * np.sin(3 * s), v)
    tilted = tilted @ np.array([[1.0, 0.0, 0.0], [0.0, np.cos(0.4), -np.sin(0.4)],
                                [0.0, np.sin(0.4), np.cos(0.4)]]).T
    views = plots.tip_views(tilted)
    assert len(views) == 2
    for view in views:
        assert sorted(np.abs(view.axes).sum(axis=0)) == [0.0, 1.0, 1.0]   # two base axes


@pytest.mark.parametrize('robot', RobotModel.available())
def test_the_demos_tip_path_reads_at_once(robot, tmp_path):
    # the demo's plan: base-frame views with their axes named x, y, z, and a title that fits
    model = RobotModel.load(robot)
    motion = pick_and_place.plan(model, np.clip(np.zeros(model.dof), model.lower, model.upper))
    t = np.linspace(0.0, motion.duration, 300)
    planned = model.fk(motion.trajectory().sample(t).q)[:, :3, 3]
    views = plots.tip_views(planned)
    names = {'top view (x-y)', 'side view (x-z)', 'front view (y-z)'}
    assert {view.name for view in views} <= names and 1 <= len(views) <= 2
    for view in views:
        assert all(label in ('x [m]', 'y [m]', 'z [m]') for label in view.labels)
    if robot == 'scara':       # mostly horizontal, with lifts
        assert views[0].name == 'top view (x-y)' and len(views) == 2
    if robot == 'planar_2r':   # the arm's own vertical plane
        assert [view.name for view in views] == ['side view (x-z)']
    fig = plots.plot_tip_path(tmp_path / 'tip.png', planned, planned=planned,
                              waypoints=model.fk(motion.q)[:, :3, 3],
                              title=f'{robot}: pick-and-place tip path, base frame')
    fig.canvas.draw()
    box, page = fig._suptitle.get_window_extent(), fig.bbox
    assert box.x0 >= page.x0 and box.x1 <= page.x1 and box.y1 <= page.y1
    assert '\n' not in fig._suptitle.get_text()


def test_simulate_plot_one_style_one_error_label_units_per_joint(tmp_path):
    run = closed_loop.run(closed_loop.Settings(robot='scara', controller='computed_torque',
                                               duration=0.3))
    fig = cli._plot_run(run, tmp_path / 'run.png')
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert labels == ['shoulder\nposition [rad]', 'shoulder\nerror q_ref - q [rad]',
                      'shoulder\neffort [N m]', 'elbow\nposition [rad]',
                      'elbow\nerror q_ref - q [rad]', 'elbow\neffort [N m]',
                      'quill\nposition [m]', 'quill\nerror q_ref - q [m]', 'quill\neffort [N]']
    reference, actual = fig.axes[0].get_lines()[:2]
    assert (reference.get_label(), actual.get_label()) == ('reference', 'actual')
    # told apart: a wide light band under a thin line of another colour
    assert reference.get_linewidth() >= 3 * actual.get_linewidth()
    assert reference.get_alpha() < 1.0 and reference.get_color() != actual.get_color()
    assert reference.get_linestyle() == actual.get_linestyle() == '-'
    # the ROS plots draw it the same way and name the error the same
    recorded = plots.plot_tracking(tmp_path / 't.png', run.record.t, ['a', 'b', 'c'],
                                   run.record.q, run.reference.sample(run.record.t).q)
    line = recorded.axes[0].get_lines()[0]
    assert (line.get_linewidth(), line.get_alpha(), line.get_color()) == (
        reference.get_linewidth(), reference.get_alpha(), reference.get_color())
    assert recorded.axes[1].get_ylabel() == 'a\nerror q_ref - q [rad or m]'


@pytest.fixture(scope='module')
def rejected(tmp_path_factory):
    """
    Write a recording with what a flood of bad goals and commands leaves.

    Joint states of the planar 2R, of which a few have NaN or arrays of another length than
    their names; three goals on the topic, one good, one with a NaN position and one with a
    point of three positions for two joints.
    """
    _, urdf = from_source(robot='planar_2r')
    t = np.arange(0.0, 1.0, 0.01)
    q = np.stack([0.4 * np.sin(2.0 * t), 0.8 - 0.3 * t], -1)
    states = []
    for k, tk in enumerate(t):
        position = q[k].tolist()
        if k in (10, 11, 12):
            position = [float('nan'), position[1]]
        elif k in (20, 30):
            position = position + [0.0]
        states.append((T0 + tk, {'header': _header(T0 + tk), 'name': ['joint1', 'joint2'],
                                 'position': position, 'velocity': [], 'effort': []}))

    def goal(positions):
        return {'header': _header(T0), 'joint_names': ['joint1', 'joint2'], 'points': [
            {'positions': p, 'time_from_start': _time(0.5 * (i + 1))}
            for i, p in enumerate(positions)]}
    goals = [(T0, goal([[0.1, 0.2], [0.3, 0.4]])), (T0 + 0.1, goal([[float('nan'), 0.2]])),
             (T0 + 0.2, goal([[0.1, 0.2, 0.3]]))]
    path = tmp_path_factory.mktemp('rejected') / 'flood.mcap'
    trajectory = 'trajectory_msgs/msg/JointTrajectory'
    _write(path, {
        '/robot_description': ('std_msgs/msg/String', STRING_DEF, [(T0, {'data': urdf})]),
        '/joint_states': ('sensor_msgs/msg/JointState', JOINT_STATE_DEF, states),
        '/controller/joint_trajectory': (trajectory, message_definition(trajectory), goals),
    })
    return {'path': path, 't': t, 'q': q, 'good': [k for k in range(len(t))
                                                   if k not in (10, 11, 12, 20, 30)]}


def test_a_recording_with_rejected_messages_plots_what_is_valid(rejected, tmp_path):
    status, text = _plot(rejected['path'], '--out', tmp_path)
    assert status == cli.EXIT_OK, text
    for name in ('tracking.png', 'effort.png', 'tip_path.png'):
        if name != 'effort.png':
            assert (tmp_path / name).stat().st_size > MIN_PNG_BYTES
    assert 'note: tracking.png: skipped 5 of 100 /joint_states messages (missing or non-finite ' \
        'joint values); skipped 2 of 3 /controller/joint_trajectory messages' in text, text
    assert 'note: tip_path.png: skipped 5 of 100 /joint_states messages' in text, text
    assert 'note: effort.png: not drawn: no effort' in text
    recording = recordings.read(rejected['path'])
    model, _ = recordings.robot_model(recording, TOPICS)
    data, note = recorded_motion.tracking(recording, TOPICS, model)
    good = rejected['good']
    assert data.names == ['joint1', 'joint2']          # not the index columns of the bad rows
    np.testing.assert_array_equal(data.q, rejected['q'][good])
    np.testing.assert_allclose(data.t, rejected['t'][good], atol=1e-6)
    np.testing.assert_allclose(data.waypoints[0], [0.5, 1.0], atol=1e-9)
    np.testing.assert_array_equal(data.waypoints[1], [[0.1, 0.2], [0.3, 0.4]])
    data, _ = recorded_motion.tip_path(recording, TOPICS, model)
    np.testing.assert_allclose(data.p, _planar_2r_tip(rejected['q'][good]), atol=1e-12)
    np.testing.assert_allclose(data.waypoints, _planar_2r_tip(np.array([[0.1, 0.2],
                                                                        [0.3, 0.4]])),
                               atol=1e-12)
