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
The recorder against live traffic, its message definitions against rclpy's serializer.

The recorder process starts before the nodes it records (the topics appear later), records a
running simulator, the model node's description and an action's feedback and status, and is
stopped by SIGINT; the file is then read back with the plain ``mcap`` reader and compared with
what the test received live, and ``robot-dynamics plot`` turns it into CSV files and plots.
"""

import array
import csv
from pathlib import Path
import struct
import subprocess
import sys
import threading
import zlib

from action_msgs.msg import GoalInfo, GoalStatus, GoalStatusArray
from builtin_interfaces.msg import Duration, Time
from control_msgs.action import FollowJointTrajectory
from geometry_msgs.msg import Point, PoseStamped
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
import numpy as np
import pytest
import rclpy
from rclpy.action import ActionServer
from rclpy.context import Context
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.serialization import serialize_message
from robot_dynamics import recordings
from robot_dynamics.ros.tools.definitions import (DefinitionNotFoundError, DELIMITER,
                                                  interface_file, message_definition)
from robot_dynamics.ros.tools.recorder import McapRecorder, RecorderNode
from robot_dynamics.ros.wire.compat import ActionClient
from robot_dynamics.ros.wire.conversions import to_nanoseconds, to_seconds
from robot_dynamics.ros.wire.qos import DESCRIPTION_QOS
from robot_dynamics_interfaces.msg import ControllerState, SimulatorStatus
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from unique_identifier_msgs.msg import UUID
from visualization_msgs.msg import Marker, MarkerArray

pytestmark = pytest.mark.ros

ROBOT = 'scara'
#: The MCAP DataEnd record's opcode (MCAP specification).
DATA_END = 0x0F
FEEDBACK = '/controller/follow_joint_trajectory/_action/feedback'
STATUS = '/controller/follow_joint_trajectory/_action/status'
#: Seconds of joint states to record after the recorder subscribed.
RECORD_SECONDS = 3.0
#: Share of the joint states published while recording that must at least be in the file: a
#: plausibility floor, not a rate. The recorder keeps up with 3 kHz here, but on a loaded machine
#: the simulator's history (keep last 10) overwrites samples that a starved reader has not
#: acknowledged yet, as it does for any subscriber (rosbag2 too).
MIN_RECORDED_SHARE = 0.25
MIN_RECORDED_STATES = 100
MIN_PNG_BYTES = 10_000
#: Limit for a subprocess [s] (first starts compile the library's kernels).
TIMEOUT = 120.0


# ---- the definitions: rclpy serializes, mcap-ros2-support decodes with our text -----------------

def _assert_same(original, decoded, where='msg'):
    """Compare a rclpy message with its decoding by mcap-ros2-support, field by field."""
    for field in original.get_fields_and_field_types():
        value, got = getattr(original, field), getattr(decoded, field)
        here = f'{where}.{field}'
        if hasattr(value, 'get_fields_and_field_types'):
            _assert_same(value, got, here)
        elif isinstance(value, (list, tuple)) and value and \
                hasattr(value[0], 'get_fields_and_field_types'):
            assert len(value) == len(got), here
            for i, (a, b) in enumerate(zip(value, got)):
                _assert_same(a, b, f'{here}[{i}]')
        elif isinstance(value, (array.array, np.ndarray, list, tuple)):
            assert list(value) == list(got), here
        else:
            assert value == got, here


def _trajectory_point(k):
    return JointTrajectoryPoint(positions=[0.1 * k, -0.2, 0.3], velocities=[1.0, 2.0, 3.5],
                                accelerations=[-1.5, 0.0, 2.25],
                                time_from_start=Duration(sec=k, nanosec=250_000_000))


def _messages():
    """One message of every type the recorder records by default, with non-trivial values."""
    names = ['shoulder', 'elbow', 'quill']
    stamp = Time(sec=1_795_000_000, nanosec=123_456_789)
    state = JointState(name=names, position=[0.1, -2.5, 0.29], velocity=[1.0, 0.0, -0.5],
                       effort=[12.5, -3.0, 199.0])
    state.header.stamp, state.header.frame_id = stamp, 'base_link'
    command = Float64MultiArray(data=[1.5, -2.0, 3.0])
    command.layout.dim = [MultiArrayDimension(label='joints', size=3, stride=3)]
    pose = PoseStamped()
    pose.header.stamp, pose.header.frame_id = stamp, 'base_link'
    pose.pose.position.x, pose.pose.orientation.w = 0.6, 1.0
    goal = JointTrajectory(joint_names=names, points=[_trajectory_point(k) for k in range(3)])
    controller = ControllerState(joint_names=names, control_law='computed_torque',
                                 mode=ControllerState.MODE_TRAJECTORY,
                                 reference=_trajectory_point(1),
                                 feedback=_trajectory_point(2), error=_trajectory_point(0),
                                 effort=[1.0, 2.0, 3.0], effort_requested=[1.0, 2.5, 3.0],
                                 saturated=[False, True, False], cycles=2**40, missed_cycles=7)
    controller.header.stamp, controller.state_stamp = stamp, Time(sec=5, nanosec=6)
    status = SimulatorStatus(joint_names=names, at_lower_limit=[True, False, False],
                             at_upper_limit=[False, False, True], command_timed_out=True,
                             command_interface='effort', steps=123456, late_steps=3,
                             rejected_commands=2, simulated_time=123.456,
                             real_time_factor=0.999, step_lateness_p99=1e-4)
    feedback = FollowJointTrajectory.Impl.FeedbackMessage()
    feedback.goal_id = UUID(uuid=list(range(16)))
    feedback.feedback.joint_names = names
    feedback.feedback.desired = _trajectory_point(1)
    feedback.feedback.actual = _trajectory_point(2)
    feedback.feedback.error = _trajectory_point(3)
    marker = Marker(ns='links', id=0, type=Marker.LINE_STRIP, action=Marker.ADD,
                    points=[Point(x=0.1, y=-0.2, z=0.3), Point(x=0.4, y=0.5, z=-0.6)])
    marker.header.stamp, marker.header.frame_id = stamp, 'base_link'
    marker.scale.x, marker.color.b, marker.color.a = 0.02, 0.5, 1.0   # float32: exact
    info = GoalInfo(goal_id=UUID(uuid=list(range(16, 32))), stamp=stamp)
    goal_status = GoalStatusArray(status_list=[GoalStatus(goal_info=info, status=4),
                                               GoalStatus(status=GoalStatus.STATUS_ABORTED)])
    return {
        'sensor_msgs/msg/JointState': state,
        'std_msgs/msg/Float64MultiArray': command,
        'std_msgs/msg/String': String(data='<robot name="x"/>'),
        'geometry_msgs/msg/PoseStamped': pose,
        'trajectory_msgs/msg/JointTrajectory': goal,
        'robot_dynamics_interfaces/msg/ControllerState': controller,
        'robot_dynamics_interfaces/msg/SimulatorStatus': status,
        'control_msgs/action/FollowJointTrajectory_FeedbackMessage': feedback,
        'action_msgs/msg/GoalStatusArray': goal_status,
        'visualization_msgs/msg/MarkerArray': MarkerArray(markers=[marker]),
    }


def test_definitions_decode_what_rclpy_serializes(tmp_path):
    """Every default topic's type: our ros2msg text lets mcap-ros2-support decode rclpy's CDR."""
    messages = _messages()
    path = tmp_path / 'types.mcap'
    recorder = McapRecorder(path)
    for i, (type_name, msg) in enumerate(messages.items()):
        topic = f'/topic{i}'
        channel = recorder.add_topic(topic, type_name, message_definition(type_name))
        recorder.write(channel, topic, serialize_message(msg), 10 + i, 5 + i)
    recorder.close()
    recording = recordings.read(path)
    assert recording.skipped == {} and recording.problem == ''
    # every CRC is written, the data section's too (the reader checks each one)
    data = path.read_bytes()
    start = 8                            # after the magic: opcode (1 byte), length (8), body
    while data[start] != DATA_END:
        start += 9 + struct.unpack_from('<Q', data, start + 1)[0]
    assert struct.unpack_from('<I', data, start + 9)[0] == zlib.crc32(data[:start]) != 0
    for i, (type_name, msg) in enumerate(messages.items()):
        table = recording.tables[f'/topic{i}']
        assert table.type_name == type_name
        assert table.log_times == [10 + i]
        _assert_same(msg, table.messages[0], type_name)


def test_definition_is_laid_out_as_rosbag2_writes_it():
    text = message_definition('sensor_msgs/msg/JointState')
    assert text == (interface_file('sensor_msgs', 'msg', 'JointState.msg')
                    + f'\n{DELIMITER}\nMSG: std_msgs/Header\n'
                    + interface_file('std_msgs', 'msg', 'Header.msg')
                    + f'\n{DELIMITER}\nMSG: builtin_interfaces/Time\n'
                    + interface_file('builtin_interfaces', 'msg', 'Time.msg'))
    feedback = message_definition(
        'control_msgs/action/FollowJointTrajectory_FeedbackMessage')
    assert feedback.startswith('unique_identifier_msgs/UUID goal_id\n'
                               'control_msgs/FollowJointTrajectory_Feedback feedback\n')
    # each type once, though JointTrajectoryPoint is used three times: UUID, the feedback,
    # Header, Time, JointTrajectoryPoint, Duration, MultiDOFJointTrajectoryPoint, Transform,
    # Vector3, Quaternion, Twist
    assert feedback.count('MSG: trajectory_msgs/JointTrajectoryPoint\n') == 1
    assert feedback.count(DELIMITER) == 11


def test_unknown_types_name_the_missing_file():
    with pytest.raises(DefinitionNotFoundError, match='no_such_msgs/msg/Thing.msg'):
        message_definition('no_such_msgs/msg/Thing')
    with pytest.raises(DefinitionNotFoundError, match='expected package/msg/Name'):
        message_definition('JointState')


# ---- a recorder process on live traffic ---------------------------------------------------------

def _recorder_subscribed(probe, topic):
    return any(info.node_name == 'recorder'
               for info in probe.node.get_subscriptions_info_by_topic(topic))


@pytest.fixture(scope='module')
def recorded(module_processes, module_probe, tmp_path_factory):
    """Record the simulator, the description, a goal and an action for a few seconds."""
    path = tmp_path_factory.mktemp('recording') / 'run.mcap'
    probe = module_probe
    states = probe.collect(JointState, '/joint_states')
    descriptions = probe.collect(String, '/robot_description', DESCRIPTION_QOS)
    recorder = module_processes.start('recorder', ['recorder_node', '--ros-args', '-p',
                                                   f'path:={path}'])
    probe.wait_for(lambda: 'recorder' in probe.node.get_node_names(),
                   what='the recorder process')
    # the recorded nodes start after the recorder: their topics appear later
    module_processes.start('model', ['model_node', '--ros-args', '-r', '__node:=model', '-p',
                                     f'robot:={ROBOT}'])
    # no controller here: the arm moves (falls) instead of waiting braked for commands
    module_processes.start('simulator', ['simulator_node', '--ros-args', '-r',
                                         '__node:=simulator', '-p', 'brake_until_command:=false'])
    published = _publish_goal_and_action(probe)
    probe.wait_for(lambda: _recorder_subscribed(probe, '/joint_states'),
                   what='the recorder on /joint_states')
    probe.wait_for(lambda: states, what='joint states')
    first = to_seconds(states[-1][0].header.stamp)
    probe.wait_for(lambda: to_seconds(states[-1][0].header.stamp) > first + RECORD_SECONDS,
                   what=f'{RECORD_SECONDS} s of joint states')
    probe.wait_for(lambda: descriptions, what='the robot description')
    assert module_processes.stop(recorder) == 0, module_processes.output(recorder)
    return {'path': path, 'states': states, 'urdf': descriptions[0][0].data,
            'output': module_processes.output(recorder), **published}


def _publish_goal_and_action(probe):
    """Publish a trajectory goal and run an action goal with feedback, once recorded."""
    node = probe.node
    goal_publisher = node.create_publisher(JointTrajectory, '/controller/joint_trajectory', 10)
    goal = JointTrajectory(joint_names=['shoulder', 'elbow', 'quill'],
                           points=[_trajectory_point(k) for k in range(1, 4)])
    probe.wait_for(lambda: goal_publisher.get_subscription_count() > 0,
                   what='the recorder on /controller/joint_trajectory')
    goal_publisher.publish(goal)
    # what a flood of bad goals leaves in a recording (a controller rejects them): a NaN
    # position, and a point with more positions than the goal has joints
    nan = JointTrajectory(joint_names=goal.joint_names, points=[_trajectory_point(1)])
    nan.points[0].positions[1] = float('nan')
    long = JointTrajectory(joint_names=goal.joint_names, points=[_trajectory_point(2)])
    long.points[0].positions.append(0.5)
    for bad in (nan, long):
        goal_publisher.publish(bad)
    sent = []

    def execute(handle):
        for k in range(5):
            feedback = FollowJointTrajectory.Feedback(joint_names=goal.joint_names,
                                                      desired=_trajectory_point(k))
            handle.publish_feedback(feedback)
            sent.append(feedback)
        handle.succeed()
        return FollowJointTrajectory.Result(error_string='done')

    ActionServer(node, FollowJointTrajectory, '/controller/follow_joint_trajectory', execute)
    client = ActionClient(node, FollowJointTrajectory, '/controller/follow_joint_trajectory')
    probe.wait_for(client.server_is_ready, what='the action server')
    probe.wait_for(lambda: _recorder_subscribed(probe, FEEDBACK), what='the recorder on feedback')
    sending = client.send_goal_async(FollowJointTrajectory.Goal())
    probe.wait_for(sending.done, what='the goal accepted')
    result = sending.result().get_result_async()
    probe.wait_for(result.done, what='the action result')
    return {'goal': goal, 'feedback': sent, 'goal_id': bytes(sending.result().goal_id.uuid)}


def test_schemas_channels_and_counts(recorded):
    with open(recorded['path'], 'rb') as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert reader.get_header().profile == 'ros2'
    schemas = {s.name: s for s in summary.schemas.values()}
    assert set(schemas) == {
        'sensor_msgs/msg/JointState', 'std_msgs/msg/String', 'trajectory_msgs/msg/JointTrajectory',
        'robot_dynamics_interfaces/msg/SimulatorStatus', 'action_msgs/msg/GoalStatusArray',
        'control_msgs/action/FollowJointTrajectory_FeedbackMessage'}
    assert {s.encoding for s in schemas.values()} == {'ros2msg'}
    assert schemas['sensor_msgs/msg/JointState'].data.decode() == \
        message_definition('sensor_msgs/msg/JointState')
    channels = {c.topic: c for c in summary.channels.values()}
    assert set(channels) == {'/joint_states', '/robot_description', '/simulator/status',
                             '/controller/joint_trajectory', FEEDBACK, STATUS}
    assert {c.message_encoding for c in channels.values()} == {'cdr'}
    assert 'durability: transient_local' in channels['/robot_description'].metadata[
        'offered_qos_profiles']
    assert channels['/joint_states'].metadata['topic_type_hash'].startswith('RIHS01_')
    counts = {c.topic: summary.statistics.channel_message_counts.get(c.id, 0)
              for c in summary.channels.values()}
    assert counts['/robot_description'] == 1
    assert counts['/controller/joint_trajectory'] == 3
    assert counts[FEEDBACK] == 5
    assert counts['/joint_states'] >= MIN_RECORDED_STATES
    assert counts['/simulator/status'] >= 1


def _decoded(path, topic):
    with open(path, 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        return [(m, d) for _, _, m, d in reader.iter_decoded_messages(topics=[topic])]


def test_joint_states_are_what_was_published(recorded):
    recorded_states = _decoded(recorded['path'], '/joint_states')
    live = {to_nanoseconds(msg.header.stamp): msg for msg, _ in recorded['states']}
    stamps = [d.header.stamp.sec * 1_000_000_000 + d.header.stamp.nanosec
              for _, d in recorded_states]
    # the probe, like the recorder, can miss a state under load: compare the ones both have
    compared = [(message, decoded, live[stamp])
                for (message, decoded), stamp in zip(recorded_states, stamps) if stamp in live]
    assert len(compared) >= MIN_RECORDED_SHARE * len(stamps)
    for message, decoded, msg in compared:
        assert decoded.name == list(msg.name)
        assert decoded.position == list(msg.position)
        assert decoded.velocity == list(msg.velocity)
        assert decoded.effort == list(msg.effort)
        assert message.log_time >= message.publish_time > 0
    # nearly everything published between the first and last recorded state is in the file
    window = [s for s in live if stamps[0] <= s <= stamps[-1]]
    assert len(set(stamps)) == len(stamps)
    assert len(stamps) >= MIN_RECORDED_SHARE * len(window)


def test_description_goal_and_action_decode(recorded):
    (_, description), = _decoded(recorded['path'], '/robot_description')
    assert description.data == recorded['urdf']
    (_, goal), (_, nan), (_, long) = _decoded(recorded['path'], '/controller/joint_trajectory')
    assert goal.joint_names == list(recorded['goal'].joint_names)
    assert [p.positions for p in goal.points] == \
        [list(p.positions) for p in recorded['goal'].points]
    assert np.isnan(nan.points[0].positions[1]) and len(long.points[0].positions) == 4
    # mcap-ros2-support's own DecoderFactory rejects the type name X_FeedbackMessage: the
    # library's reader decodes it under an alias
    feedback = recordings.read(recorded['path'], [FEEDBACK]).tables[FEEDBACK].messages
    assert len(feedback) == len(recorded['feedback'])
    for got, sent in zip(feedback, recorded['feedback']):
        assert bytes(got.goal_id.uuid) == recorded['goal_id']
        assert got.feedback.desired.positions == list(sent.desired.positions)
    status = [d for _, d in _decoded(recorded['path'], STATUS)]
    last = status[-1].status_list[-1]
    assert bytes(last.goal_info.goal_id.uuid) == recorded['goal_id']
    assert last.status == GoalStatus.STATUS_SUCCEEDED


def test_plot_of_the_recording(recorded, tmp_path):
    script = Path(sys.executable).parent / 'robot-dynamics'
    proc = subprocess.run([str(script), 'plot', str(recorded['path']), '--out', str(tmp_path)],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    decoded = [d for _, d in _decoded(recorded['path'], '/joint_states')]
    with open(tmp_path / 'joint_states.csv', newline='') as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(decoded)
    for row, msg in zip(rows, decoded):
        assert float(row['stamp']) == pytest.approx(
            msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, abs=1e-6)
        assert [float(row[f'position.{n}']) for n in msg.name] == msg.position
        assert [float(row[f'effort.{n}']) for n in msg.name] == msg.effort
    with open(tmp_path / 'controller.follow_joint_trajectory._action.feedback.csv') as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 5
    assert rows[2]['feedback.desired.positions.shoulder'] == repr(0.2)
    for name in ('tracking.png', 'effort.png', 'tip_path.png'):
        assert (tmp_path / name).stat().st_size > MIN_PNG_BYTES, name
    # the rejected goals are left out of the plots, and said so
    assert 'note: tracking.png: skipped 2 of 3 /controller/joint_trajectory messages' in \
        proc.stdout, proc.stdout


def test_recorder_node_in_process_finishes_the_file_on_destroy(recorded, probe, ros_domain,
                                                               tmp_path):
    """The demo's way: a RecorderNode spun in the caller's process, destroyed at the end."""
    path = tmp_path / 'in_process.mcap'
    context = Context()
    rclpy.init(context=context, domain_id=ros_domain)
    node = RecorderNode(context=context, cli_args=[
        '--ros-args', '-p', f'path:={path}', '-p', 'topics:=[/simulator/status]'])
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)

    def spin():
        try:
            executor.spin()
        except ExternalShutdownException:
            pass

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        probe.wait_for(lambda: node.recorder.counts.get('/simulator/status', 0) >= 5,
                       what='5 recorded simulator statuses')
    finally:
        # the shutdown order of ros2-on-pip.md: shut the context down, join, then destroy
        rclpy.try_shutdown(context=context)
        thread.join(TIMEOUT)
        node.destroy_node()
    with open(path, 'rb') as f:
        summary = make_reader(f).get_summary()
    assert summary is not None   # finished: summary and statistics written
    assert summary.statistics.message_count == node.recorder.counts['/simulator/status'] >= 5
    (channel,) = summary.channels.values()
    assert channel.topic == '/simulator/status'


@pytest.mark.parametrize('args, words', [
    ([], 'path: give the MCAP file'),
    (['-p', 'path:={new}', '-p', 'topics:=[joint_states]'], 'expected absolute names'),
    (['-p', 'path:={existing}'], 'exists already'),
])
def test_bad_parameters_stop_the_recorder(processes, tmp_path, args, words):
    existing = tmp_path / 'kept.mcap'
    existing.write_bytes(b'precious')
    args = [a.format(new=tmp_path / 'new.mcap', existing=existing) for a in args]
    proc = processes.start('bad_recorder', ['recorder_node', '--ros-args', *args])
    assert proc.wait(TIMEOUT) == 1
    output = processes.output(proc)
    assert 'cannot start' in output and words in output, output
    assert existing.read_bytes() == b'precious'
    assert not (tmp_path / 'new.mcap').exists()
