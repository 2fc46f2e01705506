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
arguments such as ``control_law``, ``--param``), which always win. :func:`check_parameters`
judges all of them before a node starts, against what each node declares (:func:`declared`).

One clock for the graph (:func:`clock_overrides`, :data:`CLOCKS`): where neither the
simulator's ``lockstep`` nor its ``realtime`` is set, the simulator runs in lockstep paced to the
wall clock (``paced``, the default: deterministic, and a busy host slows the arm down instead of
starving its controller into the safe mode); a simulator in ``lockstep`` runs as fast as the
processes allow unless ``realtime`` is set as well, one without ``realtime`` runs in lockstep (a
simulator faster than real time would otherwise outrun its controller) unless ``lockstep`` is
set to false (``real-time``: on the wall clock, as an arm), and whenever the simulator's clock
may leave wall time every other node runs on it (``use_sim_time``).

An arm runs in a namespace of its own when given one (:func:`namespace`, ``bringup
--namespace``, ``namespace:=`` of the launch files): every name the nodes use is relative, so
that all of them move under it, and each arm runs on its own ``<namespace>/clock``
(:func:`remappings`). rcl applies a parameter file's ``controller:`` section to
``/controller`` only, so a namespaced arm's parameters go to its nodes under their full names
(:func:`namespaced_parameters`).

:func:`complete_overrides` applies that rule and two more, as every bringup and launch file
does: the model's source given last replaces the earlier ones (a user's URDF replaces the
bundled robot's model), and a simulated arm, which has no brakes, is held against gravity by
its controller's safe command (:data:`MODE_DEFAULTS`).
"""

import difflib
import importlib
from pathlib import Path
from typing import NamedTuple, Tuple

import yaml

from .definitions import namespace
from ..nodes import GOAL_NODE_SUFFIX
from ..nodes.parameters import check, joint_of, ROS_PARAMETERS, unknown_parameter
from ...control import LAWS
from ...errors import InputError, ModelError
from ...model import from_source
from ...parameter_files import (file_values, flat_parameters, parameter_files, parse, robots,
                                section_targets)
from ...robots import share_directory

PACKAGE = 'robot_dynamics'


class NodeSpec(NamedTuple):
    """
    One node of the graph.

    ``executable`` is the console script (``ros2 run robot_dynamics <executable>``), ``module``
    holds its node class ``node_class`` and ``main``; ``remappings`` are ``(from, to)`` name
    pairs; ``modes`` says in which bringups it runs (``'sim'``, ``'hardware'``); ``ready`` is
    what the running graph shows once the node has its model and serves: ``('service' |
    'publisher' | 'action', name, ...)``, every name of that kind. Every name is relative, in
    the arm's namespace (:func:`resolve`); ``launch_arguments`` names entries of
    :data:`NODE_ARGUMENTS` that the launch files pass to this node as the parameter of the same
    name; ``children``, the nodes it starts in processes of its own, whose topics, services and
    actions are its (the controller's goal process). The module declares its parameters in
    ``PARAMETERS`` and, for those it declares for each joint once it knows them,
    ``JOINT_PARAMETERS`` (names with ``{joint}``).
    """

    name: str
    executable: str
    module: str
    node_class: str
    remappings: Tuple[Tuple[str, str], ...]
    modes: Tuple[str, ...]
    ready: Tuple[str, ...]
    launch_arguments: Tuple[str, ...] = ()
    children: Tuple[str, ...] = ()


class LaunchArgument(NamedTuple):
    """A launch argument, ``ros2 launch robot_dynamics <mode>.launch.py name:=value``."""

    name: str
    default: str
    description: str


NODES = (
    NodeSpec('model', 'model_node', 'robot_dynamics.ros.nodes.model_node', 'ModelNode', (),
             ('sim', 'hardware'), ('publisher', 'robot_description')),
    NodeSpec('kinematics', 'kinematics_node', 'robot_dynamics.ros.nodes.kinematics_node',
             'KinematicsNode',
             (('~/solve_ik', 'compute_ik'), ('~/solve_fk', 'compute_fk')),
             ('sim', 'hardware'), ('service', 'compute_ik')),
    NodeSpec('simulator', 'simulator_node', 'robot_dynamics.ros.nodes.simulator_node',
             'SimulatorNode', (), ('sim',), ('publisher', 'joint_states'), ('lockstep',)),
    NodeSpec('controller', 'controller_node', 'robot_dynamics.ros.nodes.controller_node',
             'ControllerNode', (), ('sim', 'hardware'),
             ('action', 'controller/follow_joint_trajectory',
              'controller/follow_cartesian_trajectory'), ('control_law',),
             (f'controller{GOAL_NODE_SUFFIX}',)),
)

MODES = ('sim', 'hardware')

#: Launch arguments that set one parameter of the nodes that list them in ``launch_arguments``
#: (``robot-dynamics bringup --control-law``); empty keeps the parameter files' value.
NODE_ARGUMENTS = {
    'control_law': LaunchArgument(
        'control_law', '',
        f'Control law of the controller: {", ".join(LAWS)}; empty: the parameter '
        "file's (computed_torque in the bundled ones)."),
    'lockstep': LaunchArgument(
        'lockstep', '',
        'true: the simulator waits for the command that answers each joint state '
        '(deterministic, on simulated time, as fast as the processes allow unless the '
        "simulator's realtime is set); false: real time, as an arm; empty: the parameter "
        "files', else lockstep paced to the wall clock."),
}

#: The graph's clocks by name (``bringup --clock``, ``demo --clock``): the simulator's
#: ``lockstep`` and ``realtime`` (see the module docstring). ``paced`` is what a simulated arm
#: runs on where neither parameter is set.
CLOCKS = {'paced': {'lockstep': 'true', 'realtime': 'true'},
          'lockstep': {'lockstep': 'true', 'realtime': 'false'},
          'real-time': {'lockstep': 'false', 'realtime': 'true'}}
DEFAULT_CLOCK = 'paced'

#: The arm's namespace (:func:`namespace`), a launch argument of every mode.
NAMESPACE_ARGUMENT = LaunchArgument(
    'namespace', '', "Namespace of the arm's nodes, topics, services and actions (e.g. left: "
                     '/left/joint_states, /left/compute_ik); empty: the root.')


def viewer_arguments(mode):
    """
    Return the launch arguments that start the distribution's viewers beside the node set.

    robot_state_publisher is on by default in simulation; a real arm's ros2_control set-up runs
    its own (the controller manager reads its ``robot_description``), so there it is off.
    """
    return [
        LaunchArgument('robot_state_publisher', 'true' if mode == 'sim' else 'false',
                       "true: robot_state_publisher turns the arm's joint_states into /tf on "
                       "the model node's description (RViz draws the links where /tf puts "
                       'them); false: not started.'),
        LaunchArgument('rviz', 'false',
                       'true: RViz with the shipped configuration (rviz/robot_dynamics.rviz).')]


#: Parameters a mode gives its nodes after every file, ``{mode: {node: ((name, text), ...)}}``;
#: values are YAML text, as in ``-p name:=value``.
MODE_PARAMETERS = {'hardware': {'controller': (('hardware', 'true'),)}}

#: Parameters a mode gives its nodes where no file and no override sets them (same layout). A
#: simulated arm has no brakes: its controller's safe command holds it against gravity, so that
#: a host too busy to run the simulator in time does not drop the idle arm. A real arm keeps the
#: node's default (zero effort, which its brakes take over).
MODE_DEFAULTS = {'sim': {'controller': (('safe_mode', 'gravity_compensation'),)}}

#: The model node's sources of the description, of which it takes exactly one.
MODEL_SOURCES = ('robot', 'urdf_file', 'dh_file', 'robot_description')


def nodes(mode='sim'):
    """Return the nodes that run in ``mode`` (``'sim'``: with the simulator; ``'hardware'``)."""
    if mode not in MODES:
        raise InputError(f'mode: expected one of {MODES}, got {mode!r}')
    return [spec for spec in NODES if mode in spec.modes]


def resolve(name, namespace=''):
    """Return the full name of the relative ``name`` in ``namespace`` (absolute names as given)."""
    return name if name.startswith('/') else f'{namespace}/{name}'


def remappings(spec, namespace=''):
    """
    Return the ``(from, to)`` remappings of ``spec`` in the arm's ``namespace``.

    The declared ones, and in a namespace rclpy's ``/clock`` to the arm's own
    ``<namespace>/clock`` too: each arm's nodes on its own simulator's time (two simulators in
    lockstep on one ``/clock`` would step each other's controllers).
    """
    return list(spec.remappings) + ([clock_remapping(namespace)] if namespace else [])


def clock_remapping(namespace):
    """Return the remapping of ``/clock`` to the arm's ``namespace`` (full names)."""
    return ('/clock', resolve('clock', namespace))


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
    return ([robot, user_file] + [NODE_ARGUMENTS[name] for name in taken] + [NAMESPACE_ARGUMENT]
            + viewer_arguments(mode))


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


def complete_overrides(mode, files, overrides):
    """
    Return ``overrides`` (``{node: [(name, value text), ...]}``) as a bringup applies them.

    The model's one source (:func:`model_source_overrides`), the mode's
    :data:`MODE_DEFAULTS` where nothing sets them, and one clock (:func:`clock_overrides`).
    """
    result = model_source_overrides(files, overrides)
    for node, pairs in MODE_DEFAULTS.get(mode, {}).items():
        given = set(file_values(files, node)) | {name for name, _ in result.get(node, ())}
        missing = [(name, text) for name, text in pairs if name not in given]
        if missing:
            result[node] = missing + result.get(node, [])
    return clock_overrides(mode, files, result)


def model_source_overrides(files, overrides):
    """
    Return ``overrides`` completed so that the model node has one source: the last one given.

    The layers are the ``files`` in order, then the overrides; a layer that names a source
    (:data:`MODEL_SOURCES`, non-empty) replaces those of the layers before it, which are
    cleared: ``--robot scara -p model.urdf_file:=my.urdf`` models ``my.urdf``. Several
    sources in one layer stay an error of the model node.
    """
    layers = [file_values([path], 'model') for path in files]
    layers.append({name: parse(text) for name, text in overrides.get('model', ())})
    named = [{name for name in MODEL_SOURCES if layer.get(name)} for layer in layers]
    last = next((names for names in reversed(named) if names), set())
    cleared = [name for name in MODEL_SOURCES if name in set().union(*named) - last]
    result = {node: list(pairs) for node, pairs in overrides.items()}
    if cleared:
        result['model'] = [(name, "''") for name in cleared] + result.get('model', [])
    return result


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
    if 'lockstep' not in given and 'realtime' not in given:
        result['simulator'] = list(CLOCKS[DEFAULT_CLOCK].items()) + result.get('simulator', [])
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


def clock(name=None):
    """
    Return the simulator's overrides (``{'simulator': [...]}``) of the clock ``name``.

    None: :data:`DEFAULT_CLOCK`.
    """
    name = DEFAULT_CLOCK if name is None else name
    if name not in CLOCKS:
        raise InputError(f'clock: expected one of {", ".join(CLOCKS)}, got {name!r}')
    return {'simulator': list(CLOCKS[name].items())}


def clock_arguments(files, overrides, namespace=''):
    """
    Return the ``--ros-args`` rules of a node of ours beside the graph (a client, a recorder).

    On the graph's clock: ``use_sim_time`` when the simulator publishes simulated time, read
    from the arm's ``namespace`` (:func:`remappings`).
    """
    if not simulated_time(files, overrides):
        return []
    return ['-p', 'use_sim_time:=true'] + (
        ['-r', '{}:={}'.format(*clock_remapping(namespace))] if namespace else [])


def simulated_time(files, overrides):
    """Return whether the simulator publishes simulated time (lockstep, or not real time)."""
    given = _simulator_values(files, overrides)
    return given.get('lockstep') is True or given.get('realtime') is False


def _simulator_values(files, overrides):
    given = file_values(files, 'simulator')
    given.update((name, parse(text)) for name, text in overrides.get('simulator', ()))
    return given


def launch_nodes(mode, values):
    """
    Return the keywords of ``launch_ros.actions.Node`` for every node of ``mode``.

    ``values`` maps the names of :func:`launch_arguments` to their text (``namespace`` may be
    missing: the root). A node's :func:`overrides` go after the files as a dictionary, their
    text read as YAML here (as ``-p`` reads it; launch_ros would keep a string a string), which
    launch_ros writes under the node's full name when the namespace is given: ``namespace=''``
    (the root, or the namespace pushed by an including launch file) does that, so that they beat
    the files' node sections, which a ``/**`` entry would not. In a namespace the files' node
    sections (``controller:``, which rcl reads as ``/controller``) would miss the node, so
    everything is handed over as that one dictionary (:func:`namespaced_parameters`).
    """
    files, ns, extra = _launch_inputs(mode, values)
    if ns:
        given = namespaced_parameters(nodes(mode), files, extra, ns)
        sources = {spec.name: [given[resolve(spec.name, ns)]['ros__parameters']]
                   for spec in nodes(mode)}
    else:
        typed = {name: {key: parse(text) for key, text in pairs} for name, pairs in extra.items()}
        sources = {spec.name: files + ([typed[spec.name]] if spec.name in typed else [])
                   for spec in nodes(mode)}
    return [{'package': PACKAGE, 'executable': spec.executable, 'name': spec.name,
             'namespace': ns, 'remappings': remappings(spec, ns),
             'parameters': sources[spec.name]}
            for spec in nodes(mode)]


def _launch_inputs(mode, values):
    """Return the parameter files, the namespace and the completed overrides of a launch."""
    files = [str(path) for path in parameter_files(values['robot'], [values['params_file']])]
    extra = overrides(mode, values)
    check_parameters(mode, files, extra)
    return files, namespace(values.get('namespace', '')), complete_overrides(mode, files, extra)


def launch_viewers(mode, values):
    """
    Return the ``launch_ros.actions.Node`` keywords of the viewers that ``values`` ask for.

    robot_state_publisher on the description the model node publishes (:func:`description`),
    and RViz with the shipped configuration; both on the graph's clock. In a namespace they
    read the arm's ``joint_states`` and ``/tf`` goes to the arm's ``tf`` and ``tf_static``, as
    navigation2's namespaced robots do, so that two arms' frames do not mix.
    """
    files, ns, extra = _launch_inputs(mode, values)
    wanted = {}
    for argument in viewer_arguments(mode):
        text = str(values.get(argument.name, argument.default)).strip().lower()
        if text not in ('true', 'false'):
            raise InputError(f'{argument.name}: expected true or false, got '
                             f'{values.get(argument.name)!r}')
        wanted[argument.name] = text == 'true'
    clock = {'use_sim_time': True} if simulated_time(files, extra) else {}
    moved = [('/tf', 'tf'), ('/tf_static', 'tf_static'), clock_remapping(ns)] if ns else []
    result = []
    if wanted['robot_state_publisher']:
        result.append({'package': 'robot_state_publisher', 'executable': 'robot_state_publisher',
                       'name': 'robot_state_publisher', 'namespace': ns,
                       'remappings': moved,
                       'parameters': [{'robot_description': description(files, extra),
                                       **clock}]})
    if wanted['rviz']:
        result.append({'package': 'rviz2', 'executable': 'rviz2', 'name': 'rviz2',
                       'namespace': ns, 'remappings': moved,
                       'arguments': ['-d', str(Path(share_directory()) / 'rviz'
                                               / 'robot_dynamics.rviz')],
                       'parameters': [clock] if clock else []})
    return result


def description(files, overrides):
    """Return the URDF text the model node publishes with these ``files`` and ``overrides``."""
    return model_and_description(files, overrides)[1]


def model_and_description(files, overrides):
    """Return ``(model, urdf)`` as the model node builds them from ``files`` and ``overrides``."""
    values = node_values(files, overrides, 'model')
    locked = dict(zip(values.get('locked_joint_names') or (),
                      values.get('locked_joint_positions') or ()))
    return from_source(**{name: values.get(name) or '' for name in MODEL_SOURCES},
                       base_link=values.get('base_link') or None,
                       tip_link=values.get('tip_link') or None, locked_joints=locked or None)


def node_values(files, overrides, node):
    """Return ``{name: value}``: what the ``files``, then the ``overrides``, give ``node``."""
    values = file_values(files, node)
    values.update((name, parse(text)) for name, text in overrides.get(node, ()))
    return values


def check_joint_parameters(mode, files, overrides):
    """
    Raise ``InputError`` for a per-joint parameter of a joint the arm does not have.

    The arm is the model node's (:func:`model_and_description`), each node's per-joint
    parameters (``gains.<joint>.kp``) what the ``files`` and ``overrides`` give it; one line a
    parameter, as :func:`check_parameters`, before anything is started. A model that cannot be
    built is left to the model node, which says why.
    """
    try:
        model, _ = model_and_description(files, overrides)
    except (InputError, ModelError, OSError):
        return
    problems = []
    for spec in nodes(mode):
        patterns = [p.name for p in getattr(importlib.import_module(spec.module),
                                            'JOINT_PARAMETERS', ())]
        for name in node_values(files, overrides, spec.name) if patterns else ():
            found = joint_of(name, patterns)
            if found is not None and found[1] not in model.joint_names:
                problems.append(f'{spec.name}: ' + unknown_parameter(name, (), patterns,
                                                                     model.joint_names))
    if problems:
        raise InputError(f'parameters for joints that {model.name} does not have (nothing was '
                         'started):\n  ' + '\n  '.join(problems))


def namespaced_parameters(specs, files, overrides, namespace):
    """
    Return ``{node full name: {'ros__parameters': {name: value}}}`` for the nodes ``specs``.

    What the ``files`` and then the ``overrides`` (``{node: [(name, value text), ...]}``) give
    each node, under its full name in ``namespace``: the layout of a parameter file that rcl
    applies to the namespaced nodes (a ``controller:`` section or a ``-p controller:...`` rule
    names ``/controller`` only).
    """
    result = {}
    for spec in specs:
        values = file_values(files, spec.name)
        values.update((name, parse(text)) for name, text in overrides.get(spec.name, ()))
        result[resolve(spec.name, namespace)] = {'ros__parameters': values}
    return result


def ros_arguments(spec, files, overrides=(), namespace=''):
    """
    Return the ``--ros-args`` of ``spec``: name, namespace, files, overrides, remappings.

    ``overrides`` are ``(name, value_text)`` pairs, applied after the files. They are written
    ``-p node:name:=value``: a plain ``-p`` rule goes to the ``/**`` entry, which loses to a
    file's section for the node whatever the order. In a ``namespace`` that rule would miss the
    node (rcl takes no full name there): give it a :func:`namespaced_parameters` file instead.
    """
    args = ['--ros-args', '-r', f'__node:={spec.name}']
    if namespace:
        args += ['-r', f'__ns:={namespace}']
    for path in files:
        args += ['--params-file', str(path)]
    for name, value in overrides:
        args += ['-p', f'{spec.name}:{name}:={value}']
    for source, target in remappings(spec, namespace):
        args += ['-r', f'{source}:={target}']
    return args


# ---- the parameters the nodes take --------------------------------------------------------------

def declared(spec):
    """
    Return ``{name: Spec}``: every parameter the node ``spec`` declares, rclpy's own included.

    The ``PARAMETERS`` and ``JOINT_PARAMETERS`` (names with ``{joint}``) of its module and
    :data:`~robot_dynamics.ros.nodes.parameters.ROS_PARAMETERS`.
    """
    module = importlib.import_module(spec.module)
    specs = module.PARAMETERS + getattr(module, 'JOINT_PARAMETERS', ())
    return {p.name: p for p in specs + ROS_PARAMETERS}


def _lookup(table, name):
    """Return the Spec of ``name`` in a :func:`declared` table (any joint for ``{joint}``)."""
    if name in table:
        return table[name]
    found = joint_of(name, table)
    return None if found is None else table[found[0]]._replace(name=name)


def _suggestions(name, table):
    """Return a few declared names close to ``name``: the same last word first, then difflib."""
    # a per-joint name is compared with the name's own joint in it: gains.shoulder.kpp is
    # closest to gains.shoulder.kp
    parts = name.split('.')
    names = [n.replace('{joint}', parts[n.split('.').index('{joint}')])
             if '{joint}' in n.split('.') and len(n.split('.')) == len(parts)
             else n.replace('{joint}', '<joint>') for n in table]
    last = name.rsplit('.', 1)[-1]
    same_end = [n for n in names if n.rsplit('.', 1)[-1] == last]
    return list(dict.fromkeys(same_end + difflib.get_close_matches(name, names, n=3)))[:3]


def _section_nodes(section, tables):
    """Return the node names a parameter file's section applies to, or raise ``InputError``."""
    targets = section_targets(section, tables)
    if targets:
        return targets
    parts = [part for part in str(section).split('/') if part]
    close = difflib.get_close_matches(parts[-1] if parts else '', list(tables), n=1)
    raise InputError(f'names no node of the graph ({", ".join(tables)}, or /** for all)'
                     + _did_you_mean(close))


def _did_you_mean(close):
    return f'; did you mean {" or ".join(map(repr, close))}?' if close else ''


def _judge(tables, node_names, name, value):
    """Return what is wrong with ``name: value`` for the nodes ``node_names`` ('' if nothing)."""
    found = [(node, spec) for node in node_names
             if (spec := _lookup(tables[node], name)) is not None]
    if not found:
        known = {n: s for node in node_names for n, s in tables[node].items()}
        who = (f'the {node_names[0]} node declares no parameter' if len(node_names) == 1
               else 'no node declares a parameter')
        return f'{who} {name!r}{_did_you_mean(_suggestions(name, known))}'
    for node, spec in found:
        try:
            check(spec, value)
        except InputError as exc:
            return f'{exc}' + (f' (in the {node} node)' if len(node_names) > 1 else '')
    return ''


def check_parameters(mode, files, overrides=None):
    """
    Raise ``InputError`` unless every node of ``mode`` takes every parameter it is given.

    ``files`` are parameter files (YAML, ``<node>:`` or ``/**:`` sections of
    ``ros__parameters``), ``overrides`` ``{node: [(name, value text), ...]}`` as ``-p`` gives
    them. A name no node declares (with the closest declared names as suggestions), a value of
    another type than the declared one (as YAML reads it), a number outside the declared range,
    a section or an override for no node of the graph: each is one line of the message.
    Sections for nodes of the graph that ``mode`` does not run are checked too (a robot's file
    serves every mode).
    """
    tables = {spec.name: declared(spec) for spec in NODES}
    problems = []
    for path in files:
        try:
            data = yaml.safe_load(Path(path).read_text())
        except yaml.YAMLError as exc:
            problems.append(f'{path}: not YAML: {exc}')
            continue
        if not isinstance(data, dict):
            problems.append(f'{path}: expected sections of node names, got {type(data).__name__}')
            continue
        for section, body in data.items():
            where = f'{path}: {section}:'
            try:
                targets = _section_nodes(section, tables)
            except InputError as exc:
                problems.append(f'{where} {exc}')
                continue
            if not isinstance(body, dict) or not isinstance(body.get('ros__parameters'), dict):
                problems.append(f'{where} expected a ros__parameters mapping')
                continue
            for name, value in flat_parameters(body['ros__parameters']):
                problem = _judge(tables, targets, name, value)
                if problem:
                    problems.append(f'{where} {problem}')
    running = [spec.name for spec in nodes(mode)]
    for node, pairs in (overrides or {}).items():
        for name, text in pairs:
            where = f'-p {node}.{name}:={text}:'
            if node not in running:
                close = difflib.get_close_matches(node, running, n=1)
                problems.append(f'{where} no node {node!r} runs in mode {mode!r} '
                                f'({", ".join(running)}){_did_you_mean(close)}')
            elif problem := _judge(tables, [node], name, parse(text)):
                problems.append(f'{where} {problem}')
    if problems:
        raise InputError('parameters the nodes would not take (nothing was started):\n  '
                         + '\n  '.join(problems))
