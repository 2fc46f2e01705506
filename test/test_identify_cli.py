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
``robot-dynamics excite`` and ``identify`` on a recording written here, without ROS.

The recording is what the ROS graph records when the arm follows an excitation: the planar 2R
carrying a 1.5 kg payload its URDF does not know, driven by computed torque on the URDF's model
in the library's closed loop (RK4 at 1 kHz), ``/joint_states`` at 1 kHz with position, velocity
and effort (the applied torque, with noise; the joints in another order and a gripper joint
besides) and ``/robot_description`` (the bundled URDF), in the recorder's MCAP layout (CDR,
``ros2msg`` definitions) written with mcap-ros2-support. Identification must recover the payload:
the base parameters of the plant, and torques the recorded model cannot predict.
"""

import io
import json
from pathlib import Path
import re

from damaged import damaged_copies, names_damage, rechunked
from mcap_ros2.writer import Writer
import numpy as np
import pytest

from robot_dynamics import cli, closed_loop, control, identification, identify, recordings, \
    RobotModel
from robot_dynamics.errors import InputError
from robot_dynamics.model import from_source
from robot_dynamics.ros.tools.definitions import message_definition, TOPICS
from robot_dynamics.trajectory import TrajectoryPoints

NS = 1_000_000_000
T0 = 500.0
PAYLOAD = 1.5                     # kg at the tip
TORQUE_NOISE = 0.2                # N m, standard deviation
POSITION_NOISE = 1e-5             # rad (a 19-bit encoder's step)
EXCITE_ARGS = ['--robot', 'planar_2r', '--duration', '20', '--lead-in', '1']


def _time(seconds):
    ns = int(round(seconds * NS))
    return {'sec': ns // NS, 'nanosec': ns % NS}


def write_recording(path, t, names, q, qd, effort, description, extra=()):
    """
    Write /joint_states and (unless None) /robot_description as the recorder does.

    ``extra``: more messages, ``(topic, type name, message as a dict, log time [s])`` each.
    """
    with open(path, 'wb') as f:
        writer = Writer(f)
        types = ('std_msgs/msg/String', 'sensor_msgs/msg/JointState')
        schemas = {name: writer.register_msgdef(name, message_definition(name))
                   for name in {*types, *(message[1] for message in extra)}}
        for topic, name, msg, log_time in extra:
            writer.write_message(topic, schemas[name], msg, log_time=int(round(log_time * NS)),
                                 publish_time=int(round(log_time * NS)))
        if description is not None:
            writer.write_message('/robot_description', schemas[types[0]],
                                 {'data': description}, log_time=int(T0 * NS),
                                 publish_time=int(T0 * NS))
        for k, stamp in enumerate(T0 + t):
            msg = {'header': {'stamp': _time(stamp), 'frame_id': ''}, 'name': list(names),
                   'position': q[k].tolist(),
                   'velocity': [] if qd is None else qd[k].tolist(),
                   'effort': [] if effort is None else effort[k].tolist()}
            log = int(round((stamp + 3e-4) * NS))
            writer.write_message('/joint_states', schemas[types[1]], msg, log_time=log,
                                 publish_time=log)
        writer.finish()


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    """Excite (the CLI), simulate the payload-carrying plant following it, record it."""
    # once a session: test_identify_coverage reads the same recording
    key = id(tmp_path_factory)
    if key not in _RECORDED:
        _RECORDED[key] = _recorded(tmp_path_factory)
    return _RECORDED[key]


#: :func:`run`'s recordings, by the session's (its tmp_path_factory's) id.
_RECORDED = {}


def _recorded(tmp_path_factory):
    """Return :func:`run`'s recording and what made it, written under ``tmp_path_factory``."""
    folder = tmp_path_factory.mktemp('identify')
    excitation_file = folder / 'excitation.yaml'
    assert cli.main(['excite', *EXCITE_ARGS, '--out', str(excitation_file)]) == cli.EXIT_OK
    points = TrajectoryPoints.from_yaml(str(excitation_file))
    model = RobotModel.load('planar_2r')
    plant = closed_loop.with_payload(model, PAYLOAD, com=[0.1, 0.0, 0.05])
    reference = points.trajectory()
    controller = control.default_law('computed_torque', model,
                                     closed_loop.home_configuration(model))
    record = closed_loop.track_reference(plant, controller, reference, reference.end_time + 0.5,
                                         q0=points.positions[0])
    assert record.stable
    rng = np.random.default_rng(16)
    q = record.q + POSITION_NOISE * rng.standard_normal(record.q.shape)
    effort = record.tau_applied + TORQUE_NOISE * rng.standard_normal(record.q.shape)
    # the driver's order, and a gripper joint the model does not have
    names = ['joint2', 'gripper', 'joint1']
    order = [1, 0]

    def shuffled(x):
        return np.column_stack((x[:, order[0]], np.full(len(x), 0.01), x[:, order[1]]))

    _, description = from_source(robot='planar_2r')
    path = folder / 'run.mcap'
    write_recording(path, record.t, names, shuffled(q), shuffled(record.qd), shuffled(effort),
                    description)
    return {'folder': folder, 'path': path, 'plant': plant, 'model': model, 'record': record,
            'description': description, 'names': names, 'shuffled': shuffled, 'q': q,
            'effort': effort, 'excitation': excitation_file}


def test_excite_writes_a_trajectory_the_limits_accept(run):
    points = TrajectoryPoints.from_yaml(str(run['excitation']))
    model = run['model']
    assert points.joint_names == model.joint_names
    # from the simulator's start (config/planar_2r.yaml), at rest after the 1 s lead-in
    np.testing.assert_allclose(points.positions[[0, -1]], [[0.4, 0.8]] * 2, atol=1e-12)
    assert points.time_from_start[0] == 1.0 and points.time_from_start[-1] == pytest.approx(21.0)
    sample = points.trajectory().sample(np.linspace(1.0, 21.0, 4001))
    assert np.all(np.abs(sample.qd) <= 0.8 * model.velocity_limit)
    tau = model.inverse_dynamics(sample.q, sample.qd, sample.qdd, friction=True)
    assert np.all(np.abs(tau) <= 0.5 * model.effort_limit * 1.01)


def test_identify_recovers_the_payload(run):
    folder = run['folder']
    out, report, plots = folder / 'identified.urdf', folder / 'id.json', folder / 'plots'
    args = cli.build_parser().parse_args(['identify', str(run['path']), '--out', str(out),
                                          '--report', str(report), '--plots', str(plots)])
    printed = io.StringIO()
    status = cli.identify_command(args, out=printed)
    printed = printed.getvalue()
    assert status == cli.EXIT_OK, printed
    assert 'identified URDF written to' in printed and 'link2.mcx' in printed
    data = json.loads(report.read_text())
    identified = RobotModel.from_urdf(str(out))
    plant, model = run['plant'], run['model']
    base = identification.base_parameters(model)
    truth = base.values(identification.parameters(plant))
    found = base.values(identification.parameters(identified))
    names = base.base_names
    # the payload shows in link 2's first moment and inertia, and in what link 1 carries
    for name in ('link2.mcx', 'link2.iyy', 'link1.mcx + 2 link2.m', 'link1.iyy + 4 link2.m'):
        k = names.index(name)
        assert found[k] == pytest.approx(truth[k], rel=0.02), name
        nominal = base.values(identification.parameters(model))[k]
        assert abs(found[k] - nominal) > 10 * abs(found[k] - truth[k]), name
    # friction: the plant's own (the URDF's), within a few percent of the larger ones
    np.testing.assert_allclose(identified.damping, plant.damping, rtol=0.1, atol=0.05)
    np.testing.assert_allclose(identified.friction, plant.friction, rtol=0.2, atol=0.1)
    # every inertial base parameter within 3 % (0.005 of those near zero); the filtering and the
    # noise leave biases of a few standard deviations (those assume white residuals), this
    # small. The Coulomb friction's sign, smoothed by the filter in the torque, is the hardest
    # (joint2.friction: 0.083 for 0.1)
    estimate = np.array(data['base_parameters']['values'])[:-4]
    large = np.abs(truth[:-4]) > 0.05
    np.testing.assert_allclose(estimate[large], truth[:-4][large], rtol=0.03)
    np.testing.assert_allclose(estimate[~large], truth[:-4][~large], atol=0.005)
    # held-out torques: the recorded model is off by the payload, the identified one by the noise
    errors = data['held_out_rms_torque_error']
    assert errors['identified_model_overall'] < 0.1 * errors['recorded_model_overall']
    assert max(errors['identified_model']) < 2.0 * TORQUE_NOISE
    assert data['condition_number'] < 100.0
    assert data['samples']['held_out_fraction'] == 0.2
    assert data['base_parameters']['names'] == list(names)
    assert (plots / 'torque_held_out.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    # the written URDF is the recorded description with only inertials and dynamics changed
    text = out.read_text()
    assert text.count('<link') == run['description'].count('<link')
    assert 'identified by robot-dynamics identify' in text


def test_the_pipeline_reads_the_same_from_samples_and_from_the_recording(run):
    """identify.from_samples on the arrays, from_recording on the MCAP: one pipeline."""
    record, model = run['record'], run['model']
    direct = identify.from_samples(model, record.t, run['q'], run['effort'])
    recorded, text, damage = identify.from_recording(run['path'], TOPICS)
    assert damage is None
    # the recording's stamps carry nanoseconds: the same samples to ~1e-9 s, the same fit
    np.testing.assert_allclose(recorded.result.estimate.values, direct.result.estimate.values,
                               rtol=1e-4, atol=1e-6)
    assert recorded.samples == direct.samples == record.t.size
    assert (recorded.stretches, recorded.train.t.size, recorded.test.t.size) == \
        (direct.stretches, direct.train.t.size, direct.test.t.size)
    # the held-out error is what the identified model predicts, against the measured torques
    tau = direct.identified.inverse_dynamics(direct.test.q, direct.test.qd, direct.test.qdd,
                                             friction=True)
    np.testing.assert_allclose(direct.rms[identify.IDENTIFIED],
                               np.sqrt(np.mean((tau - direct.test.tau) ** 2, axis=0)),
                               rtol=1e-12)
    assert max(direct.rms[identify.IDENTIFIED]) < 2.0 * TORQUE_NOISE
    assert RobotModel.from_urdf(text).mass[1] == pytest.approx(recorded.identified.mass[1])
    with pytest.raises(InputError, match='held_out'):
        identify.from_samples(model, record.t, run['q'], run['effort'], held_out=1.0)


def test_identify_a_recording_that_lost_bursts_of_messages(run):
    # a recorder that fell behind: 0.2 s lost three times; the stretches between the gaps are
    # filtered apart and identify as well as the whole recording (interpolated across, the gaps
    # gave a held-out torque error 60 times the noise in a recording of the ROS graph)
    record, shuffled, folder = run['record'], run['shuffled'], run['folder']
    keep = np.ones(record.t.size, bool)
    for start in (3.0, 8.0, 14.0):
        keep[(record.t >= start) & (record.t < start + 0.2)] = False
    path, out, report = folder / 'lossy.mcap', folder / 'lossy.urdf', folder / 'lossy.json'
    write_recording(path, record.t[keep], run['names'], shuffled(run['q'])[keep],
                    shuffled(record.qd)[keep], shuffled(run['effort'])[keep],
                    run['description'])
    printed = io.StringIO()
    args = cli.build_parser().parse_args(['identify', str(path), '--out', str(out),
                                          '--report', str(report)])
    assert cli.identify_command(args, out=printed) == cli.EXIT_OK, printed.getvalue()
    assert re.search(r'\(3 gaps of 0\.60\d* s in all, between which the 4 stretches',
                     printed.getvalue()), printed.getvalue()
    data = json.loads(report.read_text())
    assert data['samples']['stretches'] == 4
    assert data['samples']['gaps_s'] == pytest.approx(0.6, abs=3e-3)
    assert max(data['held_out_rms_torque_error']['identified_model']) < 2.0 * TORQUE_NOISE


def test_identify_leaves_out_the_rest_and_the_braked_end_of_a_recording(run):
    # a recording stopped well after the goal: the arm held at rest (the holding torque), then
    # braked by the simulator's watchdog (the effort zero, the arm still); neither is explained
    # by the model's motion (static friction, brakes). Taken as the held-out part, they gave a
    # recording of the ROS graph a held-out torque error of 7.9 N m (0.033 N m left out)
    record, shuffled, folder = run['record'], run['shuffled'], run['folder']
    dt = float(np.median(np.diff(record.t)))
    tail = record.t[-1] + dt * np.arange(1, int(round(12.0 / dt)) + 1)
    braked = tail >= record.t[-1] + 6.0
    rng = np.random.default_rng(17)
    noise = rng.standard_normal((2, tail.size, record.q.shape[1]))
    q = np.vstack([run['q'], record.q[-1] + POSITION_NOISE * noise[0]])
    qd = np.vstack([record.qd, np.zeros((tail.size, record.q.shape[1]))])
    effort = np.vstack([run['effort'], np.where(braked[:, None], 0.0, record.tau_applied[-1])
                        + TORQUE_NOISE * noise[1]])
    path, out, report = folder / 'idle.mcap', folder / 'idle.urdf', folder / 'idle.json'
    write_recording(path, np.concatenate([record.t, tail]), run['names'], shuffled(q),
                    shuffled(qd), shuffled(effort), run['description'])
    printed = io.StringIO()
    args = cli.build_parser().parse_args(['identify', str(path), '--out', str(out),
                                          '--report', str(report)])
    assert cli.identify_command(args, out=printed) == cli.EXIT_OK, printed.getvalue()
    data = json.loads(report.read_text())
    assert max(data['held_out_rms_torque_error']['identified_model']) < 2.0 * TORQUE_NOISE
    # the 12 s at the output rate, less the filter's reach into the motion's end
    assert data['samples']['at_rest'] >= 0.95 * 12.0 * data['samples']['rate_hz']
    assert f"{data['samples']['at_rest']} samples at rest left out" in printed.getvalue()
    # the same fit as from the recording without the tail
    alone = identify.from_samples(run['model'], record.t, run['q'], run['effort'])
    np.testing.assert_allclose(data['consistent_model']['mass'], alone.identified.mass,
                               rtol=1e-2)


@pytest.mark.parametrize('case, words', [
    ('no_effort', 'has no effort (the measured joint torque)'),
    ('short', 's of joint states: too short'),
    ('still', "joint(s) 'joint2' (range 0) never move(s)"),
    ('nan', "position of joint 'joint1' is nan"),
    ('no_description', 'no /robot_description in the recording'),
    ('missing_joint', "never holds all the joints ['joint1', 'joint2']: missing ['joint1']"),
])
def test_bad_recordings_are_named_and_write_nothing(run, tmp_path, capsys, case, words):
    # the recording's first 10 s, which identify takes (the damaged copies' test): each fault
    # in half the messages to write and read
    record, shuffled = run['record'], run['shuffled']
    keep = record.t < 10.0
    t, q, effort = record.t[keep], run['q'][keep].copy(), run['effort'][keep]
    names, description, qd = list(run['names']), run['description'], record.qd[keep]
    if case == 'no_effort':
        effort = None
    elif case == 'short':
        keep = t < 3.0
        t, q, qd, effort = t[keep], q[keep], qd[keep], effort[keep]
    elif case == 'still':
        q[:, 1] = 0.0
    elif case == 'nan':
        q[5000, 0] = np.nan
    elif case == 'no_description':
        description = None
    elif case == 'missing_joint':
        names[2] = 'shoulder'
    path = tmp_path / f'{case}.mcap'
    write_recording(path, t, names, shuffled(q), shuffled(qd),
                    None if effort is None else shuffled(effort), description)
    out = tmp_path / 'identified.urdf'
    report = tmp_path / 'report.json'
    status = cli.main(['identify', str(path), '--out', str(out), '--report', str(report)])
    err = capsys.readouterr().err
    assert status != cli.EXIT_OK
    assert words in err, err
    assert not out.exists() and not report.exists()


def test_damaged_copies_identify_from_what_was_read_or_say_why_in_one_line(run, tmp_path,
                                                                           capsys):
    def identify(path, name):
        out = tmp_path / f'{name}.urdf'
        status = cli.main(['identify', str(path), '--out', str(out)])
        return status, capsys.readouterr(), out

    # the recording's first 10 s (the lead-in and most of a 10 s period of the excitation, twice
    # the 5 s identify needs): each kind of damage at each place, half the messages to read
    record, shuffled = run['record'], run['shuffled']
    keep = record.t < 10.0
    short = tmp_path / 'short.mcap'
    write_recording(short, record.t[keep], run['names'], shuffled(run['q'])[keep],
                    shuffled(record.qd)[keep], shuffled(run['effort'])[keep],
                    run['description'])
    status, _, clean = identify(short, 'clean')
    assert status == cli.EXIT_OK
    copies = damaged_copies(rechunked(short.read_bytes(), 65_536))
    flips = sorted(name for name in copies if 'flipped' in name)
    outcomes = {}
    for name in [n for n in copies if 'flipped' not in n] + flips[::3]:
        path = tmp_path / f'{name}.mcap'
        path.write_bytes(copies[name])
        status, printed, out = identify(path, name)
        if status == cli.EXIT_USAGE:
            lines = printed.err.splitlines()
            assert len(lines) == 1 and names_damage(lines[0]), (name, printed.err)
            assert not out.exists(), name
            outcomes[name] = 'refused'
        elif names_damage(recordings.read(path).problem):
            assert status == cli.EXIT_OK and out.is_file(), (name, printed)
            outcomes[name] = 'identified from what was read'
        else:
            assert status == cli.EXIT_OK, (name, printed)
            assert out.read_text() == clean.read_text(), f'{name}: read differently, silently'
            outcomes[name] = 'unchanged'
    assert outcomes['cut_at_0.01'] == 'refused'
    assert outcomes['cut_at_0.9'] == 'identified from what was read', outcomes


def test_identify_refuses_a_description_that_changes(run, tmp_path, capsys):
    path = tmp_path / 'two.mcap'
    with open(path, 'wb') as f:
        writer = Writer(f)
        schema = writer.register_msgdef('std_msgs/msg/String',
                                        message_definition('std_msgs/msg/String'))
        for k, text in enumerate((run['description'], run['description'] + '<!-- v2 -->')):
            writer.write_message('/robot_description', schema, {'data': text},
                                 log_time=int((T0 + k) * NS), publish_time=int((T0 + k) * NS))
        writer.finish()
    status = cli.main(['identify', str(path), '--out', str(tmp_path / 'x.urdf')])
    err = capsys.readouterr().err.splitlines()
    assert status == cli.EXIT_USAGE and len(err) == 1, err
    assert ('/robot_description changes during the recording (2 different descriptions, new '
            'ones 1.000 s after the first)') in err[0]


def test_excite_and_identify_reject_bad_arguments(tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli.main(['excite', '--robot', 'planar_2r'])                      # no --out
    capsys.readouterr()
    with pytest.raises(SystemExit):
        cli.main(['excite', '--robot', 'planar_2r', '--urdf', 'x.urdf', '--out', 'y'])
    assert 'not allowed with argument' in capsys.readouterr().err
    assert cli.main(['excite', '--robot', 'planar_2r', '--start', '3.14,0', '--out',
                     str(tmp_path / 'x.yaml')]) == cli.EXIT_USAGE
    assert "start: joint 'joint1' at 3.14" in capsys.readouterr().err
    assert not (tmp_path / 'x.yaml').exists()
    with pytest.raises(SystemExit):
        cli.main(['identify', 'run.mcap', '--out', 'x.urdf', '--held-out', '1.5'])
    assert 'a fraction in (0, 1)' in capsys.readouterr().err
    assert cli.main(['identify', str(tmp_path / 'missing.mcap'), '--out',
                     str(tmp_path / 'x.urdf')]) == cli.EXIT_FAILURE
    assert 'missing.mcap' in capsys.readouterr().err
    assert Path(tmp_path / 'x.urdf').exists() is False
