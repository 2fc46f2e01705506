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
The node set of robot_dynamics, declared once.

``launch/*.launch.py`` (for users of a ROS 2 distribution) and ``robot-dynamics bringup`` (for
pip installs) are both built from :data:`NODES`: the same executables, node names, parameter
files and remappings, so that the two cannot drift apart. A node's parameters come from the
robot's parameter file ``config/<robot>.yaml`` (its ``/**`` section for every node, then the
node's own section), then from explicit overrides.
"""

from pathlib import Path
from typing import NamedTuple, Tuple

from ..errors import InputError
from ..robots import share_directory

PACKAGE = 'robot_dynamics'


class NodeSpec(NamedTuple):
    """
    One node of the graph.

    ``executable`` is the console script (``ros2 run robot_dynamics <executable>``), ``module``
    holds its node class ``node_class`` and ``main``; ``remappings`` are ``(from, to)`` name
    pairs; ``modes`` says in which bringups it runs (``'sim'``, ``'hardware'``); ``ready`` is
    what the running graph shows once the node has its model and serves: ``('service' |
    'publisher' | 'action', name)``.
    """

    name: str
    executable: str
    module: str
    node_class: str
    remappings: Tuple[Tuple[str, str], ...]
    modes: Tuple[str, ...]
    ready: Tuple[str, str]


NODES = (
    NodeSpec('model', 'model_node', 'robot_dynamics.ros.model_node', 'ModelNode', (),
             ('sim', 'hardware'), ('publisher', '/robot_description')),
    NodeSpec('kinematics', 'kinematics_node', 'robot_dynamics.ros.kinematics_node',
             'KinematicsNode',
             (('~/solve_ik', '/compute_ik'), ('~/solve_fk', '/compute_fk')),
             ('sim', 'hardware'), ('service', '/compute_ik')),
    NodeSpec('simulator', 'simulator_node', 'robot_dynamics.ros.simulator_node', 'SimulatorNode',
             (), ('sim',), ('publisher', '/joint_states')),
)

MODES = ('sim', 'hardware')


def nodes(mode='sim'):
    """Return the nodes that run in ``mode`` (``'sim'``: with the simulator; ``'hardware'``)."""
    if mode not in MODES:
        raise InputError(f'mode: expected one of {MODES}, got {mode!r}')
    return [spec for spec in NODES if mode in spec.modes]


def parameter_file(robot):
    """Return the parameter file ``config/<robot>.yaml`` of a bundled robot."""
    path = Path(share_directory()) / 'config' / f'{robot}.yaml'
    if not path.is_file():
        known = sorted(p.stem for p in path.parent.glob('*.yaml') if '.' not in p.stem)
        raise InputError(f'no parameter file for robot {robot!r} ({path}); robots with one: '
                         f'{known}')
    return path


def ros_arguments(spec, parameter_files, overrides=()):
    """
    Return the ``--ros-args`` of ``spec``: name, parameter files, overrides, remappings.

    ``overrides`` are ``(name, value_text)`` pairs, applied after the files (``-p``).
    """
    args = ['--ros-args', '-r', f'__node:={spec.name}']
    for path in parameter_files:
        args += ['--params-file', str(path)]
    for name, value in overrides:
        args += ['-p', f'{name}:={value}']
    for source, target in spec.remappings:
        args += ['-r', f'{source}:={target}']
    return args
