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
ROS 2 recordings (MCAP) read without ROS: a table per topic, and its CSV file.

A recording is what the robot_dynamics recorder writes, or what ``ros2 bag record -s mcap``
writes on a real arm: CDR messages whose schemas are ``ros2msg`` definitions, decoded here by
mcap-ros2-support (no ROS install needed). Topics whose schema cannot be decoded are skipped
and reported, the others are read.

Each topic becomes a :class:`Table` with one row per message and the message's fields
flattened into columns (the CSV layout of ``robot-dynamics plot``):

- ``log_time``: when the recorder received the message [s since the epoch of its clock];
- ``stamp`` [s] and ``frame_id`` from the message's ``header`` (a nested header gives
  ``<field>.stamp``); ``builtin_interfaces`` Time and Duration fields as seconds;
- arrays parallel to the message's joint names (``name`` in ``sensor_msgs/JointState``,
  ``joint_names`` elsewhere, also for the arrays of nested messages) one column per joint:
  ``position.shoulder``, ``reference.positions.elbow``; the names themselves are in the
  column titles only;
- other arrays one column per index (``data.0``, ``data.1``), lists of messages per index and
  field (``points.0.positions.shoulder``), byte arrays (``uint8[]``) as one hex string;
- nested messages with dotted prefixes (``pose.position.x``); numbers, booleans (0 or 1) and
  strings as they are. Columns appear in the order fields first appear; a message without a
  column leaves its cell empty.

:func:`write_tables` writes the CSV files; what the recorded motion shows (the figures of
``robot-dynamics plot`` and of the demo) is :mod:`robot_dynamics.recorded_motion`'s. The graph's
topic names are passed in as :class:`Topics`.
"""

import csv
import functools
import os
from pathlib import Path
import struct
from typing import NamedTuple, Optional
import zlib

from mcap.exceptions import EndOfFile, InvalidMagic
from mcap.reader import NonSeekingReader
from mcap.records import DataEnd, Schema
from mcap.stream_reader import CRCValidationError
from mcap.well_known import MessageEncoding, SchemaEncoding
from mcap_ros2.decoder import DecoderFactory
import numpy as np

from .errors import InputError, RobotDynamicsError


class Topics(NamedTuple):
    """
    The graph's topic names a recording is read by (absolute names).

    The graph declares them (:data:`robot_dynamics.ros.tools.definitions.TOPICS`); the functions
    here take them as an argument, so that a recording of another graph (a namespace, a real arm's
    names) reads as well.
    """

    joint_states: str
    controller_state: str
    joint_trajectory: str
    robot_description: str
    tip_pose: str
    joint_action: str
    #: where control_msgs' JointTrajectoryControllerState is published, and where recordings
    #: made before it was had the controller's own state (:func:`controller_states`)
    trajectory_controller_state: str


#: The type of the controller's own state (on ``Topics.controller_state``).
CONTROLLER_STATE_TYPE = 'robot_dynamics_interfaces/msg/ControllerState'
#: Fields that name the joints of a message's arrays.
NAME_FIELDS = ('name', 'joint_names')
#: Message types written as seconds.
TIME_TYPES = ('builtin_interfaces/Time', 'builtin_interfaces/Duration')
HEADER_TYPE = 'std_msgs/Header'
#: The status topic of an action, after the action's name.
ACTION_STATUS = '/_action/status'
#: How a goal ended, by its final ``action_msgs/msg/GoalStatus`` code.
GOAL_ENDS = {4: 'succeeded', 5: 'canceled', 6: 'aborted'}
#: The first bytes of every MCAP file (MCAP specification, version 0).
MAGIC = b'\x89MCAP0\r\n'


# ---- decoding and flattening --------------------------------------------------------------------

def _is_message(value):
    return hasattr(value, '_type') and hasattr(value, '__slots__')


def seconds(t):
    return t.sec + t.nanosec * 1e-9


def _names_of(msg):
    for field in NAME_FIELDS:
        value = getattr(msg, field, None) if field in msg.__slots__ else None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return field, value
    return None, None


def _flatten(msg, prefix, names, row):
    names_field, own = _names_of(msg)
    if own is not None:
        names = own
    for field in msg.__slots__:
        if field == names_field:
            continue
        value = getattr(msg, field)
        key = prefix + field
        if _is_message(value):
            if value._type in TIME_TYPES:
                row[key] = seconds(value)
            elif value._type == HEADER_TYPE and field == 'header':
                row[prefix + 'stamp'] = seconds(value.stamp)
                row[prefix + 'frame_id'] = value.frame_id
            else:
                _flatten(value, key + '.', names, row)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            row[key] = bytes(value).hex()
        elif isinstance(value, (list, tuple)):
            if value and _is_message(value[0]):
                for i, item in enumerate(value):
                    _flatten(item, f'{key}.{i}.', names, row)
            else:
                labels = names if names is not None and len(names) == len(value) else \
                    range(len(value))
                for label, item in zip(labels, value):
                    row[f'{key}.{label}'] = item
        else:
            row[key] = value


def flatten(msg):
    """Return the columns of one decoded message as a dict (see the module's layout)."""
    row = {}
    _flatten(msg, '', None, row)
    return row


def _cell(value):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return repr(value)
    return value


class Table:
    """
    The messages of one topic: ``log_times`` (int ns), ``messages`` (decoded), and their columns.

    ``rows`` (one dict per message, :func:`flatten` with ``log_time`` first) and ``columns``
    (every column name, in order of first appearance) are built when first used.
    """

    def __init__(self, topic, type_name):
        self.topic = topic
        self.type_name = type_name
        self.log_times = []
        self.messages = []

    def __len__(self):
        return len(self.messages)

    def sort(self):
        """Put the messages in log time order (stable: equal times keep their order)."""
        order = sorted(range(len(self)), key=self.log_times.__getitem__)
        self.log_times = [self.log_times[i] for i in order]
        self.messages = [self.messages[i] for i in order]

    @functools.cached_property
    def rows(self):
        """One dict per message: ``log_time`` [s] and the flattened fields."""
        return [{'log_time': t * 1e-9, **flatten(m)}
                for t, m in zip(self.log_times, self.messages)]

    @functools.cached_property
    def columns(self):
        """Every column name, in the order the columns first appear."""
        return list(dict.fromkeys(key for row in self.rows for key in row))

    def column(self, name):
        """Return a column as floats, shape (K,); NaN where a message has no value."""
        if name not in self.columns:
            raise InputError(f'{self.topic}: no column {name!r}')
        values = [row.get(name) for row in self.rows]
        if any(isinstance(v, str) for v in values):
            raise InputError(f'{self.topic}: column {name!r} holds text, not numbers')
        return np.array([np.nan if v is None else float(v) for v in values])

    def joints(self, field):
        """
        Return the joint names of the per-joint columns ``<field>.<joint>``, in order.

        Index columns (``<field>.0``: an array whose length differs from the message's joint
        names, as a rejected message has) are not joints.
        """
        start = field + '.'
        return [c[len(start):] for c in self.columns
                if c.startswith(start) and '.' not in c[len(start):]
                and not c[len(start):].isdigit()]

    def joint_array(self, field, names):
        """Return the columns ``<field>.<name>`` for ``names`` as an array (K, len(names))."""
        return np.stack([self.column(f'{field}.{name}') for name in names], axis=-1) \
            if names else np.zeros((len(self), 0))

    def time(self):
        """Return each message's time [s]: its header stamp, else its log time."""
        return self.column('stamp' if 'stamp' in self.columns else 'log_time')

    def write_csv(self, path):
        """Write the table as CSV: a title row of column names, one row per message."""
        with open(path, 'w', newline='', encoding='utf-8') as f:
            writer = csv.writer(f)
            writer.writerow(self.columns)
            for row in self.rows:
                writer.writerow([_cell(row.get(c, '')) for c in self.columns])


class Recording(NamedTuple):
    """
    A read recording: ``tables`` by topic, ``skipped`` topics with the reason, and ``problem``.

    ``problem`` is empty for a complete, undamaged file, else it says where the file ends early
    or is damaged and what was read (the tables hold the messages before that point).
    """

    path: str
    tables: dict
    skipped: dict
    problem: str


def _decoder(schema, channel, factory):
    """Return the decoder of a channel's messages; raise ``InputError`` saying why not."""
    if channel.message_encoding != MessageEncoding.CDR:
        raise InputError(f'message encoding {channel.message_encoding!r}, not cdr')
    if schema is None or schema.encoding != SchemaEncoding.ROS2:
        encoding = None if schema is None else schema.encoding or 'none'
        raise InputError(f'no ros2msg message definition in the recording (schema encoding '
                         f'{encoding!r})')
    # mcap-ros2-support parses the root type under its own name, and accepts only CamelCase
    # names there: rosidl's action parts (X_FeedbackMessage) are decoded under a name without
    # the underscore (the fields and their types do not change).
    package, _, name = schema.name.rpartition('/')
    alias = Schema(id=schema.id, name=f'{package}/{name.replace("_", "")}',
                   encoding=schema.encoding, data=schema.data)
    try:
        return factory.decoder_for(MessageEncoding.CDR, alias)
    except Exception as exc:  # noqa: B902 - the vendored parser raises many unrelated types
        raise InputError(f'cannot parse the message definition of {schema.name}: '
                         f'{type(exc).__name__}: {exc}') from None


#: The MCAP footer at the end of a file: opcode, record length, summary start, summary offset
#: start, summary CRC (MCAP specification), then the magic bytes.
FOOTER = struct.Struct('<BQQQI')


def _summary_damage(stream, size):
    """
    Return what is wrong with the summary section of a finished MCAP file ('' if nothing).

    The footer's CRC (zero: not written) covers the bytes from the summary's start to the CRC
    itself; the stream reader checks the chunks' and the data section's CRCs, not this one.
    """
    if size < len(MAGIC) + FOOTER.size:
        return ''
    stream.seek(size - len(MAGIC) - FOOTER.size)
    _, _, start, _, crc = FOOTER.unpack(stream.read(FOOTER.size))
    if crc == 0 or start == 0:
        return ''
    end = size - len(MAGIC) - 4
    if not len(MAGIC) <= start < end:
        return f'the footer points the summary to byte {start} of {size}'
    stream.seek(start)
    actual = zlib.crc32(stream.read(end - start))
    return '' if actual == crc else (f'the summary section (after the messages) fails its CRC '
                                     f'(expected {crc:#010x}, got {actual:#010x})')


def read(path, topics=None):
    """
    Read an MCAP recording of ROS 2 messages.

    The file is read from start to end as a stream (its index is not needed), so that an
    unfinished file (the recorder killed) gives the messages up to where it ends; each table is
    then put in log time order. The CRCs the file has are checked (chunks, data section,
    summary): a damaged or truncated file gives the messages before the damage, and
    ``problem`` says where it is and how many messages were read.

    Parameters
    ----------
    path : str or path-like
        The ``.mcap`` file.
    topics : sequence of str, optional
        Only these topics; default every topic.

    Returns
    -------
    Recording
        A :class:`Table` per decoded topic; the topics that could not be decoded in
        ``skipped`` with the reason.

    Raises
    ------
    InputError
        The file is not MCAP, or it is damaged before its first message.

    """
    factory = DecoderFactory()
    tables, skipped, decoders = {}, {}, {}
    problem = ''
    with open(path, 'rb') as stream:
        if stream.read(len(MAGIC)) != MAGIC:
            raise InputError(f'{path}: not an MCAP file (it does not start with the MCAP '
                             'magic bytes)')
        stream.seek(0)
        size = os.fstat(stream.fileno()).st_size
        messages = NonSeekingReader(stream, validate_crcs=True).iter_messages(
            topics=topics, log_time_order=False)
        while True:
            try:
                schema, channel, message = next(messages)
            except StopIteration:
                problem = _summary_damage(stream, size)
                problem += problem and '; the messages were read (their own CRCs hold)'
                break
            except Exception as exc:  # noqa: B902 - damaged bytes raise what the parsers raise
                problem = _damage(exc, stream.tell(), size)
                break
            topic = channel.topic
            if topic in skipped:
                continue
            if channel.id not in decoders:
                try:
                    decoders[channel.id] = _decoder(schema, channel, factory)
                except InputError as exc:
                    skipped[topic] = str(exc)
                    continue
                tables[topic] = Table(topic, schema.name)
            try:
                msg = decoders[channel.id](message.data)
            except Exception as exc:  # noqa: B902 - bytes that do not match the definition
                skipped[topic] = f'a message does not decode: {type(exc).__name__}: {exc}'
                del tables[topic]
                continue
            tables[topic].log_times.append(message.log_time)
            tables[topic].messages.append(msg)
    count = sum(len(table) for table in tables.values())
    if problem:
        if not count:
            raise InputError(f'{path}: {problem}: no message to use')
        problem = f'{path}: {problem}: {count} messages'

    for table in tables.values():
        table.sort()
    return Recording(str(path), tables, skipped, problem)


def _damage(exc, offset, size):
    """Return the words for a stream that could not be read on at byte ``offset`` of ``size``."""
    # a record cut short fails in whichever parser reads it; a CRC or a bad magic is damage
    cut = isinstance(exc, (EndOfFile, EOFError)) or offset >= size
    if cut and not isinstance(exc, (CRCValidationError, InvalidMagic)):
        return (f'the file ends early at byte {size}, as an unfinished recording does '
                f'({type(exc).__name__}: {_short(exc)}); read up to there')
    if isinstance(getattr(exc, 'record', None), DataEnd):
        return (f'the data section fails its CRC ({_short(exc)}): damaged outside the chunks '
                'of messages, which pass their own CRCs; read all')
    return (f'damaged near byte {offset} of {size} ({type(exc).__name__}: {_short(exc)}); '
            'read up to the damage')


def _short(exc, limit=200):
    """Return an error's text cut to ``limit`` characters (a parser may quote the bad bytes)."""
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + '...'


# ---- the robot and its joints -------------------------------------------------------------------

def controller_states(recording, topics):
    """
    Return the Table of the controller's own states (ControllerState) in a recording, or None.

    On ``topics.controller_state``; a recording made before the controller published
    control_msgs' JointTrajectoryControllerState has them on
    ``topics.trajectory_controller_state`` (told apart by their type).
    """
    for topic in (topics.controller_state, topics.trajectory_controller_state):
        table = recording.tables.get(topic)
        if table is not None and table.type_name == CONTROLLER_STATE_TYPE:
            return table
    return None


def _description_table(recording, topics):
    """Return the table of ``topics.robot_description`` if it holds ``std_msgs/String``."""
    table = recording.tables.get(topics.robot_description)
    return table if table is not None and table.type_name.endswith('/String') else None


def descriptions(recording, topics):
    """
    Return ``[(log time [s], URDF)]``: each recorded robot description once.

    The descriptions of ``topics.robot_description``, in order of first appearance, with the
    log time of the first message that carried it (a description published again unchanged is
    the same one).
    """
    table = _description_table(recording, topics)
    first = {}
    for log_time, msg in zip(table.log_times, table.messages) if table is not None else ():
        first.setdefault(msg.data, log_time * 1e-9)
    return [(t, text) for text, t in first.items()]


def robot_description(recording, topics):
    """
    Return the recorded robot description (URDF text, ``topics.robot_description``), or None.

    Raises ``InputError`` when the description changes during the recording: the samples
    before and after the change are of two robots, which no one model describes.
    """
    found = descriptions(recording, topics)
    if len(found) > 1:
        times = ', '.join(f'{t - found[0][0]:.3f}' for t, _ in found[1:])
        raise InputError(f'{topics.robot_description} changes during the recording ({len(found)} '
                         f'different descriptions, new ones {times} s after the first): one '
                         'model cannot describe it; record each robot apart')
    return found[0][1] if found else None


def robot_model(recording, topics, base_link=None, tip_link=None):
    """
    Return ``(model, note)``: the RobotModel of the recorded description, or None and why.

    The chain is ``base_link`` to ``tip_link``, by default the URDF's (``RobotModel.from_urdf``'s
    rule): a recording does not hold the nodes' chain parameters. A description that changes
    during the recording gives no model (see :func:`robot_description`).
    """
    from .model import RobotModel
    try:
        description = robot_description(recording, topics)
    except InputError as exc:
        return None, str(exc)
    if description is None:
        return None, f'no {topics.robot_description} in the recording'
    try:
        return RobotModel.from_urdf(description, base_link=base_link, tip_link=tip_link), ''
    except RobotDynamicsError as exc:
        return None, f'the recorded robot description does not build a model: {exc}'


class JointSamples(NamedTuple):
    """
    Joint states of the named joints: ``t`` (K,) [s] and ``position``, ``velocity``, ``effort``.

    The arrays are (K, n) in the order of ``names``; ``velocity`` is None when the recording
    has none.
    """

    names: tuple
    t: np.ndarray
    position: np.ndarray
    velocity: Optional[np.ndarray]
    effort: np.ndarray


def joint_samples(recording, topics, names):
    """
    Return the recorded joint states (``topics.joint_states``) of ``names``: :class:`JointSamples`.

    Joints are matched by name, so other joints in the messages (a gripper) and other orders do
    not matter; messages without every named joint are left out. Times are the header stamps
    (the receive times where a stamp is zero); a message stamped no later than the one before
    is left out. Raises ``InputError`` naming what is missing: the topic, the joints, the
    effort (the measured joint torque) or finite values.
    """
    topic = topics.joint_states
    table = recording.tables.get(topic)
    if table is None or not len(table):
        raise InputError(f'no {topic} in the recording {recording.path}')
    names = tuple(names)
    rows, seen = [], set()
    for log_time, msg in zip(table.log_times, table.messages):
        index = {n: i for i, n in enumerate(msg.name)}
        seen.update(index)
        if not set(names) <= set(index):
            continue
        pick = [index[n] for n in names]
        stamp = seconds(msg.header.stamp) or log_time * 1e-9
        rows.append((stamp, [msg.position[i] if i < len(msg.position) else np.nan for i in pick],
                     [msg.velocity[i] for i in pick] if len(msg.velocity) == len(msg.name)
                     else None,
                     [msg.effort[i] for i in pick] if len(msg.effort) == len(msg.name)
                     else None))
    if not rows:
        raise InputError(f'{topic} never holds all the joints {list(names)}: missing '
                         f'{sorted(set(names) - seen)} (recorded joints: {sorted(seen)})')
    with_effort = [r for r in rows if r[3] is not None]
    if not with_effort:
        raise InputError(f'{topic} has no effort (the measured joint torque) for the '
                         f'joints {list(names)}: record a driver or simulator that publishes it')
    rows = with_effort
    t = np.array([r[0] for r in rows])
    keep = t > np.concatenate(([-np.inf], np.maximum.accumulate(t)[:-1]))
    rows = [r for r, k in zip(rows, keep) if k]
    t = t[keep]
    position = np.array([r[1] for r in rows], dtype=float)
    effort = np.array([r[3] for r in rows], dtype=float)
    velocity = np.array([r[2] for r in rows], dtype=float) \
        if all(r[2] is not None for r in rows) else None
    for what, values in (('position', position), ('effort', effort), ('velocity', velocity)):
        if values is not None and not np.all(np.isfinite(values)):
            k, j = np.argwhere(~np.isfinite(values))[0]
            raise InputError(f'{topic}: {what} of joint {names[j]!r} is {values[k, j]} '
                             f'at t = {t[k] - t[0]:.3f} s (message {k}): values must be finite')
    return JointSamples(names, t, position, velocity, effort)


# ---- goals -------------------------------------------------------------------------------------

class TrajectoryGoal(NamedTuple):
    """
    A goal of ``topics.joint_trajectory``: its ``start`` [s], its points' times ``t`` (M,) [s].

    Times on the recording's clock; ``q`` (M, n): the points' positions of the joints asked for.
    """

    start: float
    t: np.ndarray
    q: np.ndarray


def trajectory_goals(recording, topics, names):
    """
    Return ``(goals, bad)``: the recorded goals of the joints ``names``, :class:`TrajectoryGoal`.

    A goal starts at its header stamp, or on receipt where the stamp is zero. Goals that do not
    name every joint of ``names`` are other joints' goals; ``bad`` counts the goals skipped for a
    point of another length than their joint names, or non-finite values (what a controller
    rejects).
    """
    table = recording.tables.get(topics.joint_trajectory)
    goals, bad = [], 0
    for log_time, msg in zip(table.log_times, table.messages) if table else ():
        index = {n: i for i, n in enumerate(msg.joint_names)}
        if not set(names) <= set(index):
            continue
        start = seconds(msg.header.stamp) or log_time * 1e-9
        points = [[start + seconds(p.time_from_start)] + [p.positions[index[n]] for n in names]
                  for p in msg.points if len(p.positions) == len(index)]
        if len(points) < len(msg.points) or not np.all(np.isfinite(points)):
            bad += 1
        elif points:    # no points: a stop, not a goal to follow
            points = np.array(points)
            goals.append(TrajectoryGoal(start, points[:, 0], points[:, 1:]))
    return goals, bad


class ActionGoal(NamedTuple):
    """
    A goal of an action as its recorded status shows it: accepted at ``start`` [s].

    ``end`` [s]: the first status that shows it ended (its receipt), and ``outcome`` how
    (:data:`GOAL_ENDS`); None and '' while it runs at the recording's end.
    """

    start: float
    end: Optional[float]
    outcome: str


def action_goals(recording, action):
    """
    Return the goals of the action ``action`` (its name) that its recorded status shows.

    :class:`ActionGoal` each, in the order they were accepted. A goal's points are not
    recorded (they cross the middleware as a service request), only its status.
    """
    table = recording.tables.get(action + ACTION_STATUS)
    goals = {}
    for log_time, msg in zip(table.log_times, table.messages) if table else ():
        for status in msg.status_list:
            key = bytes(status.goal_info.goal_id.uuid)
            goal = goals.get(key) or ActionGoal(
                seconds(status.goal_info.stamp) or log_time * 1e-9, None, '')
            if goal.end is None and status.status in GOAL_ENDS:
                goal = goal._replace(end=log_time * 1e-9, outcome=GOAL_ENDS[status.status])
            goals[key] = goal
    return sorted(goals.values(), key=lambda goal: goal.start)


# ---- export -------------------------------------------------------------------------------------

def csv_name(topic):
    """Return the CSV file name of ``topic``: ``/a/b`` -> ``a.b.csv``."""
    return topic.strip('/').replace('/', '.') + '.csv'


def write_descriptions(recording, topics, out_dir):
    """
    Write each recorded robot description once; return the files written.

    ``robot_description.<k>.urdf`` (k from 1, in order of appearance) and
    ``robot_description.csv``: per message its ``log_time`` [s], ``urdf_file`` and
    ``characters``, so that a description published again (or a long one) is not copied into
    every row.
    """
    table = _description_table(recording, topics)
    files = {}
    for _, text in descriptions(recording, topics):
        files[text] = out_dir / f'{csv_name(topics.robot_description)[:-4]}.{len(files) + 1}.urdf'
        files[text].write_text(text, encoding='utf-8')
    path = out_dir / csv_name(topics.robot_description)
    with open(path, 'w', newline='', encoding='utf-8') as f:
        writer = csv.writer(f)
        writer.writerow(['log_time', 'urdf_file', 'characters'])
        for log_time, msg in zip(table.log_times, table.messages):
            writer.writerow([repr(log_time * 1e-9), files[msg.data].name, len(msg.data)])
    return [path, *files.values()]


def write_tables(recording, topics, out_dir):
    """
    Write a CSV file per topic of ``recording`` into ``out_dir``; return the files written.

    The robot descriptions as :func:`write_descriptions` writes them (``topics`` names their
    topic), every other topic as ``csv_name(topic)``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for topic, table in recording.tables.items():
        if table is _description_table(recording, topics):
            written += write_descriptions(recording, topics, out_dir)
            continue
        table.write_csv(out_dir / csv_name(topic))
        written.append(out_dir / csv_name(topic))
    return written
