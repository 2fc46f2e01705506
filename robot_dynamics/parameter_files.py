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
ROS 2 parameter files read without ROS: the bundled robots' files, what a node gets from them.

A parameter file maps node names (``controller``, ``/**`` for every node) to
``ros__parameters``; rcl applies a file's sections for every node first, then the node's own, and
reads ``-p name:=text`` values as YAML with rcl's rules (:func:`parse`). ``robot-dynamics
simulate --goal`` takes the graph's values from here with no ROS installed;
:mod:`robot_dynamics.ros.tools.graph` builds the node set's parameters on the same functions.
"""

from pathlib import Path

import yaml

from .errors import InputError
from .robots import share_directory


def parse(text):
    """
    Return the value of ``-p name:=text`` as rcl reads it: YAML, and numbers like ``1e3``.

    YAML 1.1 (PyYAML) reads an exponent without a decimal point as text, and ``~`` or ``null``
    as nothing; rcl reads any text that ``strtod`` takes as a double, and the others as text.
    """
    value = yaml.safe_load(text)
    if value is None:
        return text.strip()
    if isinstance(value, str) and text.strip() == value:
        try:
            return float(value)
        except ValueError:
            pass
    return value


def robots():
    """Return the bundled robots that have a parameter file ``config/<robot>.yaml``, sorted."""
    return sorted(p.stem for p in (Path(share_directory()) / 'config').glob('*.yaml')
                  if '.' not in p.stem)


def parameter_file(robot):
    """Return the parameter file ``config/<robot>.yaml`` of a bundled robot."""
    path = Path(share_directory()) / 'config' / f'{robot}.yaml'
    if not path.is_file():
        raise InputError(f'no parameter file for robot {robot!r} ({path}); robots with one: '
                         f'{robots()}')
    return path


def parameter_files(robot='', user_files=()):
    """
    Return the parameter files of a bringup, in order: the robot's, then the user's.

    ``robot`` is a bundled robot's name or empty; empty entries of ``user_files`` are skipped.
    At least one file is needed, and each must exist (``ros2 launch`` would only warn).
    """
    files = [parameter_file(robot)] if robot else []
    for name in filter(None, user_files):
        path = Path(name).expanduser()
        if not path.is_file():
            raise InputError(f'parameter file {name!r} does not exist')
        files.append(path)
    if not files:
        raise InputError('no parameters: give a bundled robot or a parameter file (or both)')
    return files


def file_values(files, node):
    """
    Return the parameters the YAML ``files`` give ``node``, ``{dotted name: value}``.

    In the order ROS applies them: each file's sections for every node (``/**``), then the
    node's own.
    """
    values = {}
    for path in files:
        data = yaml.safe_load(Path(path).read_text()) or {}
        sections = [(section, body) for section, body in data.items()
                    if node in section_targets(section, [node])]
        for section, body in sorted(sections, key=lambda item: not wildcard(item[0])):
            values.update(flat_parameters((body or {}).get('ros__parameters') or {}))
    return values


def flat_parameters(parameters, prefix=''):
    """Yield ``(dotted name, value)`` of a ``ros__parameters`` mapping, as rcl reads it."""
    for key, value in parameters.items():
        if isinstance(value, dict):
            yield from flat_parameters(value, f'{prefix}{key}.')
        else:
            yield f'{prefix}{key}', value


def wildcard(section):
    """Return whether a parameter file's section is for every node (``/**``)."""
    return all(part in ('*', '**') for part in str(section).split('/') if part)


def section_targets(section, names):
    """Return the node names among ``names`` that a parameter file's section applies to."""
    parts = [part for part in str(section).split('/') if part]
    if wildcard(section):
        return list(names)
    if all(part in ('*', '**') for part in parts[:-1]) and parts[-1] in names:
        return [parts[-1]]
    return []
