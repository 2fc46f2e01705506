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
Complete ROS 2 message definitions (``ros2msg``) from the installed interface files.

A recording stores, per message type, the definition that a reader needs to decode the CDR
bytes without ROS: the type's ``.msg`` text, then every type it uses, recursively, each after a
line of 80 ``=`` and a line ``MSG: package/Type`` (the ``ros2msg`` encoding of rosbag2's
``docs/message_definition_encoding.md``, in the order rosbag2 writes: dependencies sorted,
depth first, each once). ``rosidl_runtime_py`` is not installable on pip installs, so the texts
are read from ``<prefix>/share/<package>/msg/*.msg`` for each prefix of ``AMENT_PREFIX_PATH``,
then this interpreter's prefix (where the ROS wheels and ``make setup`` install them).

Actions: their parts ``pkg/action/X_Goal``, ``X_Result``, ``X_Feedback`` are the sections of
``X.action``, and the feedback topic's ``pkg/action/X_FeedbackMessage`` is the struct rosidl
generates for it (``goal_id`` as ``unique_identifier_msgs/UUID``, then the feedback). The action's
status topic carries the ordinary ``action_msgs/msg/GoalStatusArray``.

It also declares the graph's topic names that recordings are read by (:data:`TOPICS`, and
:func:`topics` of an arm in a :func:`namespace`) and that the recorder records by default
(:data:`RECORDED_TOPICS`). This module reads files only:
it imports neither rclpy nor message packages.
"""

import functools
import os
from pathlib import Path
import re
import sys

from ...errors import InputError
from ...recordings import ACTION_STATUS, Topics

#: The graph's topics that recordings are read by (plots, the demo's report, identification).
TOPICS = Topics(joint_states='/joint_states', controller_state='/controller/state',
                joint_trajectory='/controller/joint_trajectory',
                robot_description='/robot_description', tip_pose='/kinematics/tip_pose',
                joint_action='/controller/follow_joint_trajectory',
                trajectory_controller_state='/controller/controller_state')


def namespace(text):
    """
    Return the arm's namespace ``text`` as a full name (``'left'``: ``'/left'``; ``''``: root).

    Every node, topic, service, action and parameter of the arm is under it, as with
    ``ros2 launch ... namespace:=left`` or ros2_control's namespaced controller managers.
    Raises ``InputError`` for a name ROS would refuse.
    """
    name = str(text or '').strip('/')
    if name and not _NAMESPACE.fullmatch(name):
        raise InputError(f'namespace {text!r}: expected tokens of letters, digits and _ (not '
                         'starting with a digit, no __) separated by /, e.g. left or cell1/left')
    return f'/{name}' if name else ''


def topics(namespace=''):
    """Return :data:`TOPICS` of the arm in ``namespace`` (a full name, '' for the root)."""
    return Topics(*(namespace + topic for topic in TOPICS))


#: The kinematics node's markers of the arm.
MARKERS = '/kinematics/markers'
#: What the robot_dynamics recorder records unless told otherwise: state, the commands of the
#: effort, position and velocity forward command controllers, goals, the controller's state and
#: its action's feedback and status, the robot description, the tip pose and the arm's markers
#: (foxglove/robot_dynamics.json shows them), the simulator's status.
RECORDED_TOPICS = (
    TOPICS.joint_states,
    '/effort_controller/commands',
    '/position_controller/commands',
    '/velocity_controller/commands',
    TOPICS.joint_trajectory,
    TOPICS.controller_state,
    TOPICS.joint_action + '/_action/feedback',
    TOPICS.joint_action + ACTION_STATUS,
    TOPICS.robot_description,
    TOPICS.tip_pose,
    MARKERS,
    '/simulator/status',
)

#: Field types of the ``.msg`` format that are not messages.
PRIMITIVE_TYPES = frozenset((
    'bool', 'byte', 'char', 'float32', 'float64', 'int8', 'uint8', 'int16', 'uint16', 'int32',
    'uint32', 'int64', 'uint64', 'string', 'wstring'))
#: The line before each dependency's ``MSG:`` line.
DELIMITER = '=' * 80
#: Sections of an ``.action`` file, in order, as type-name suffixes.
ACTION_PARTS = ('Goal', 'Result', 'Feedback')
ENCODING = 'ros2msg'

_TOKEN = r'(?!\d)(?!\w*__)\w+'
_NAMESPACE = re.compile(rf'{_TOKEN}(/{_TOKEN})*', re.ASCII)
_SECTION_SEPARATOR = re.compile(r'^---[ \t]*$', re.MULTILINE)
_FIELD_TYPE = re.compile(r'[A-Za-z0-9_/]+')


class DefinitionNotFoundError(InputError):
    """The interface file of a message type is not installed (or the type name is malformed)."""


def split_type(type_name):
    """
    Return ``(package, namespace, name)`` of ``pkg/msg/Name``, ``pkg/action/X_Part``, ``pkg/Name``.

    A two-part name is a message (``msg``), or an action part when its name holds ``_`` (message
    names are CamelCase without underscores; rosidl names action parts ``X_Part``).
    """
    parts = type_name.split('/')
    if len(parts) == 2 and all(parts):
        package, name = parts
        return package, 'action' if '_' in name else 'msg', name
    if len(parts) == 3 and all(parts):
        return tuple(parts)
    raise DefinitionNotFoundError(f'message type {type_name!r}: expected package/msg/Name or '
                                  'package/Name')


def _prefixes():
    listed = [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    return listed + [sys.prefix]


@functools.lru_cache(maxsize=None)
def interface_file(package, folder, filename):
    """Return the text of ``share/<package>/<folder>/<filename>`` in the first prefix with it."""
    tried = []
    for prefix in _prefixes():
        path = Path(prefix) / 'share' / package / folder / filename
        if path.is_file():
            return path.read_text(encoding='utf-8')
        tried.append(str(path))
    raise DefinitionNotFoundError(f'no interface file {package}/{folder}/{filename}: looked in '
                                  f'{", ".join(tried)} (AMENT_PREFIX_PATH lists the prefixes)')


def type_text(type_name):
    """Return the ``.msg``-format text of one type, without the types it uses."""
    package, namespace, name = split_type(type_name)
    if namespace == 'msg':
        return interface_file(package, 'msg', f'{name}.msg')
    if namespace == 'action':
        action, _, part = name.partition('_')
        if part == 'FeedbackMessage':
            return (f'unique_identifier_msgs/UUID goal_id\n'
                    f'{package}/{action}_Feedback feedback\n')
        if part in ACTION_PARTS:
            sections = _SECTION_SEPARATOR.split(interface_file(package, 'action',
                                                               f'{action}.action'))
            if len(sections) == len(ACTION_PARTS):
                return sections[ACTION_PARTS.index(part)].strip('\n') + '\n'
    raise DefinitionNotFoundError(f'message type {type_name!r}: only messages and the parts of '
                                  f'actions ({", ".join(ACTION_PARTS)}, FeedbackMessage) have '
                                  'definitions here')


def dependencies(text, package):
    """
    Return the message types that the fields of ``text`` use, sorted.

    Names without a package are in ``package`` (as ``.msg`` files write types of their own
    package); primitive types, constants' types and comments do not count.
    """
    found = set()
    for line in text.splitlines():
        line = line.split('#', 1)[0].strip()
        match = _FIELD_TYPE.match(line)
        if not match or len(line.split()) < 2:
            continue
        field_type = match.group(0)
        if field_type in PRIMITIVE_TYPES:
            continue
        found.add(field_type if '/' in field_type else f'{package}/{field_type}')
    return sorted(found)


@functools.lru_cache(maxsize=None)
def message_definition(type_name):
    """
    Return the complete ``ros2msg`` definition of ``type_name`` (``pkg/msg/Name``, ...).

    Raises :class:`DefinitionNotFoundError` naming the missing file.
    """
    seen = set()

    def text_with_dependencies(name):
        text = type_text(name)
        out = [text]
        for dep in dependencies(text, split_type(name)[0]):
            if dep not in seen:
                seen.add(dep)
                out.append(f'\n{DELIMITER}\nMSG: {dep}\n')
                out.append(text_with_dependencies(dep))
        return ''.join(out)

    return text_with_dependencies(type_name)
