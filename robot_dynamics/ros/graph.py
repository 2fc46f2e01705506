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
node's own section), then from the user's parameter file, then from explicit overrides (launch
arguments such as ``control_law``, ``--param``), which always win.

One clock for the graph (:func:`clock_overrides`): a simulator in ``lockstep`` runs as fast as
the processes allow unless ``realtime`` is set as well, one without ``realtime`` runs in
lockstep (a simulator faster than real time would otherwise outrun its controller) unless
``lockstep`` is set to false, and whenever the simulator's clock may leave wall time every
other node runs on it (``use_sim_time``).
"""

from pathlib import Path
from typing import NamedTuple, Tuple

import yaml

from ..errors import InputError
from ..robots import share_directory
from ..simulation import CONTROLLERS

PACKAGE = 'robot_dynamics'


class NodeSpec(NamedTuple):
    """
    One node of the graph.

    ``executable`` is the console script (``ros2 run robot_dynamics <executable>``), ``module``
    holds its node class ``node_class`` and ``main``; ``remappings`` are ``(from, to)`` name
    pairs; ``modes`` says in which bringups it runs (``'sim'``, ``'hardware'``); ``ready`` is
    what the running graph shows once the node has its model and serves: ``('service' |
    'publisher' | 'action', name)``; ``launch_arguments`` names entries of
    :data:`NODE_ARGUMENTS` that the launch files pass to this node as the parameter of the same
    name.
    """

    name: str
    executable: str
    module: str
    node_class: str
    remappings: Tuple[Tuple[str, str], ...]
    modes: Tuple[str, ...]
    ready: Tuple[str, str]
    launch_arguments: Tuple[str, ...] = ()


class LaunchArgument(NamedTuple):
    """A launch argument, ``ros2 launch robot_dynamics <mode>.launch.py name:=value``."""

    name: str
    default: str
    description: str


NODES = (
    NodeSpec('model', 'model_node', 'robot_dynamics.ros.model_node', 'ModelNode', (),
             ('sim', 'hardware'), ('publisher', '/robot_description')),
    NodeSpec('kinematics', 'kinematics_node', 'robot_dynamics.ros.kinematics_node',
             'KinematicsNode',
             (('~/solve_ik', '/compute_ik'), ('~/solve_fk', '/compute_fk')),
             ('sim', 'hardware'), ('service', '/compute_ik')),
    NodeSpec('simulator', 'simulator_node', 'robot_dynamics.ros.simulator_node', 'SimulatorNode',
             (), ('sim',), ('publisher', '/joint_states'), ('lockstep',)),
    NodeSpec('controller', 'controller_node', 'robot_dynamics.ros.controller_node',
             'ControllerNode', (), ('sim', 'hardware'),
             ('action', '/controller/follow_joint_trajectory'), ('control_law',)),
)

MODES = ('sim', 'hardware')

#: Launch arguments that set one parameter of the nodes that list them in ``launch_arguments``
#: (``robot-dynamics bringup --control-law``); empty keeps the parameter files' value.
NODE_ARGUMENTS = {
    'control_law': LaunchArgument(
        'control_law', '',
        f'Control law of the controller: {", ".join(CONTROLLERS)}; empty: the parameter '
        "file's (computed_torque in the bundled ones)."),
    'lockstep': LaunchArgument(
        'lockstep', '',
        'true: the simulator waits for the command that answers each joint state '
        '(deterministic, on simulated time, as fast as the processes allow unless the '
        "simulator's realtime is set); empty: the parameter files' (real time)."),
}

#: Parameters a mode gives its nodes after every file, ``{mode: {node: ((name, text), ...)}}``;
#: values are YAML text, as in ``-p name:=value``.
MODE_PARAMETERS = {'hardware': {'controller': (('hardware', 'true'),)}}


def nodes(mode='sim'):
    """Return the nodes that run in ``mode`` (``'sim'``: with the simulator; ``'hardware'``)."""
    if mode not in MODES:
        raise InputError(f'mode: expected one of {MODES}, got {mode!r}')
    return [spec for spec in NODES if mode in spec.modes]


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


def launch_arguments(mode):
    """Return the launch arguments of ``launch/<mode>.launch.py``, in order."""
    robot = LaunchArgument(
        'robot', 'scara' if mode == 'sim' else '',
        f'Bundled robot, parameters from config/<robot>.yaml: {", ".join(robots())}'
        + ('' if mode == 'sim' else '; empty: only params_file'))
    user_file = LaunchArgument(
        'params_file', '', "A parameter file of your own, loaded after the robot's; "
                           'empty: none')
    taken = dict.fromkeys(name for spec in nodes(mode) for name in spec.launch_arguments)
    return [robot, user_file] + [NODE_ARGUMENTS[name] for name in taken]


def overrides(mode, values):
    """
    Return ``{node: [(name, value text), ...]}``, what ``mode`` sets after the files.

    The mode's :data:`MODE_PARAMETERS`, then the non-empty ``values`` (``{name: text}``) of
    :data:`NODE_ARGUMENTS` for the nodes that take them.
    """
    result = {}
    for spec in nodes(mode):
        pairs = list(MODE_PARAMETERS.get(mode, {}).get(spec.name, ()))
        pairs += [(name, values[name]) for name in spec.launch_arguments if values.get(name)]
        if pairs:
            result[spec.name] = pairs
    return result


def file_values(files, node):
    """
    Return the parameters the YAML ``files`` give ``node``, ``{dotted name: value}``.

    In the order ROS applies them: each file's ``/**`` section, then the node's own.
    """
    values = {}
    for path in files:
        data = yaml.safe_load(Path(path).read_text()) or {}
        for section in ('/**', node, f'/{node}'):
            values.update(_flatten((data.get(section) or {}).get('ros__parameters') or {}))
    return values


def _flatten(params, prefix=''):
    """Return nested parameter dictionaries as ``{dotted name: value}``."""
    flat = {}
    for name, value in params.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f'{prefix}{name}.'))
        else:
            flat[f'{prefix}{name}'] = value
    return flat


def clock_overrides(mode, files, overrides):
    """
    Return ``overrides`` (``{node: [(name, value text), ...]}``) completed for one clock.

    See the module docstring: the simulator's ``realtime`` and ``lockstep`` as the files and
    the overrides set them decide whether it runs in lockstep and whether it publishes
    simulated time on ``/clock``; if so, every other node gets ``use_sim_time``. Overrides
    already given are kept (and win, coming first only where they set nothing here).
    """
    result = {node: list(pairs) for node, pairs in overrides.items()}
    if 'simulator' not in {spec.name for spec in nodes(mode)}:
        return result
    given = _simulator_values(files, result)
    added = []
    if given.get('lockstep') is True and 'realtime' not in given:
        added.append(('realtime', 'false'))
    if given.get('realtime') is False and 'lockstep' not in given:
        added.append(('lockstep', 'true'))
    if added:
        result['simulator'] = added + result.get('simulator', [])
    if simulated_time(files, result):
        for spec in nodes(mode):
            if spec.name != 'simulator':
                result.setdefault(spec.name, []).insert(0, ('use_sim_time', 'true'))
    return result


def simulated_time(files, overrides):
    """Return whether the simulator publishes simulated time (lockstep, or not real time)."""
    given = _simulator_values(files, overrides)
    return given.get('lockstep') is True or given.get('realtime') is False


def _simulator_values(files, overrides):
    given = file_values(files, 'simulator')
    given.update((name, yaml.safe_load(text)) for name, text in overrides.get('simulator', ()))
    return given


def launch_nodes(mode, values):
    """
    Return the keywords of ``launch_ros.actions.Node`` for every node of ``mode``.

    ``values`` maps the names of :func:`launch_arguments` to their text. A node's
    :func:`overrides` go after the files as a dictionary, their text read as YAML here (as
    ``-p`` reads it; launch_ros would keep a string a string), which launch_ros writes under the
    node's full name when the namespace is given: ``namespace=''`` (the root, or the namespace
    pushed by an including launch file) does that, so that they beat the files' node sections,
    which a ``/**`` entry would not.
    """
    files = [str(path) for path in parameter_files(values['robot'], [values['params_file']])]
    extra = {name: {key: yaml.safe_load(text) for key, text in pairs}
             for name, pairs in clock_overrides(mode, files, overrides(mode, values)).items()}
    return [{'package': PACKAGE, 'executable': spec.executable, 'name': spec.name,
             'namespace': '', 'remappings': list(spec.remappings),
             'parameters': files + ([extra[spec.name]] if spec.name in extra else [])}
            for spec in nodes(mode)]


def ros_arguments(spec, files, overrides=()):
    """
    Return the ``--ros-args`` of ``spec``: name, parameter ``files``, overrides, remappings.

    ``overrides`` are ``(name, value_text)`` pairs, applied after the files. They are written
    ``-p node:name:=value``: a plain ``-p`` rule goes to the ``/**`` entry, which loses to a
    file's section for the node whatever the order.
    """
    args = ['--ros-args', '-r', f'__node:={spec.name}']
    for path in files:
        args += ['--params-file', str(path)]
    for name, value in overrides:
        args += ['-p', f'{spec.name}:{name}:={value}']
    for source, target in spec.remappings:
        args += ['-r', f'{source}:={target}']
    return args
