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
The node-set declaration of ``robot_dynamics.ros.tools.graph`` against what it names.

Executables are console scripts of ``setup.py`` installed in the venv, modules hold the node
classes, the parameter files set only parameters their nodes declare (with the declared type),
the check that ``robot-dynamics bringup`` makes before it starts anything judges values as
rclpy does, and the remappings start from names the nodes create and end at the public names of
the API. The last checks run the node classes in this process, in a context of their own.
"""

import ast
import contextlib
import importlib
import os
from pathlib import Path
import sys
import time

import pytest
import rclpy
from rclpy.action import get_action_server_names_and_types_by_node
from rclpy.context import Context
from rclpy.exceptions import ParameterException
from rclpy.executors import SingleThreadedExecutor
from rclpy.expand_topic_name import expand_topic_name
from rclpy.node import Node
from rclpy.parameter import Parameter
from robot_dynamics import InputError, RobotModel
from robot_dynamics.parameter_files import flat_parameters, parameter_file, parse, robots
from robot_dynamics.ros.nodes import parameters
from robot_dynamics.ros.nodes.parameters import DOUBLE_ARRAY, Spec, STRING_ARRAY
from robot_dynamics.ros.tools import graph
from robot_dynamics.ros.wire.compat import RCLError
import yaml

pytestmark = pytest.mark.ros

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
#: Remapping targets users rely on (the ROS 2 graph table of the API).
API_NAMES = {'/robot_description', '/joint_states', '/effort_controller/commands',
             '/compute_ik', '/compute_fk'}
TIMEOUT = 120.0


def _console_scripts():
    """Return ``{script: 'module:function'}`` from setup.py's ``entry_points``."""
    for call in ast.walk(ast.parse((REPO / 'setup.py').read_text())):
        if isinstance(call, ast.Call) and getattr(call.func, 'id', None) == 'setup':
            keywords = {k.arg: k.value for k in call.keywords}
            entries = ast.literal_eval(keywords['entry_points'])['console_scripts']
            return dict(entry.replace(' ', '').split('=') for entry in entries)
    raise AssertionError('no setup() call in setup.py')


def _takes(spec, value):
    """Return whether ``parameters.check`` accepts ``value`` for ``spec``."""
    try:
        parameters.check(spec, value)
    except InputError:
        return False
    return True


def test_nodes_have_unique_names_and_executables():
    assert len({spec.name for spec in graph.NODES}) == len(graph.NODES)
    assert len({spec.executable for spec in graph.NODES}) == len(graph.NODES)
    for mode in graph.MODES:
        assert graph.nodes(mode), f'no node runs in mode {mode!r}'


@pytest.mark.parametrize('spec', graph.NODES, ids=lambda spec: spec.name)
def test_executable_is_a_console_script_of_the_node_module(spec):
    assert _console_scripts().get(spec.executable) == f'{spec.module}:main'
    script = BIN / spec.executable
    assert script.is_file() and os.access(script, os.X_OK), f'{script}: run make setup'
    module = importlib.import_module(spec.module)
    assert callable(module.main)
    assert issubclass(getattr(module, spec.node_class), Node)
    # what the launch arguments and the modes set, the node declares
    for name in spec.launch_arguments:
        assert name in graph.declared(spec), f'{spec.name} does not declare {name!r}'
    for mode in spec.modes:
        for name, text in graph.MODE_PARAMETERS.get(mode, {}).get(spec.name, ()):
            assert _takes(graph.declared(spec)[name], parse(text))


@pytest.mark.parametrize('mode', graph.MODES)
def test_launch_parameters_have_the_declared_types(mode):
    # what the launch files give a node after the files, typed as its parameters are
    specs = {spec.name: spec for spec in graph.nodes(mode)}
    values = {argument.name: argument.default for argument in graph.launch_arguments(mode)}
    values.update(robot='scara', control_law='pd')
    checked = 0
    for options in graph.launch_nodes(mode, values):
        for extra in options['parameters'][1:]:
            for name, value in extra.items():
                spec = graph.declared(specs[options['name']])[name]
                assert _takes(spec, value), f'{options["name"]}.{name}: {value!r}'
                checked += 1
    assert checked >= 1


def test_every_bundled_robot_has_a_parameter_file():
    assert robots() == RobotModel.available()


PARAMETER_FILES = [(robot, parameter_file(robot)) for robot in robots()] \
    + [('', REPO / 'config' / 'hardware' / 'robot_dynamics.yaml')]


@pytest.mark.parametrize('robot, path', PARAMETER_FILES, ids=lambda x: Path(x).name)
def test_parameter_files_set_only_declared_parameters(robot, path):
    """A misspelt parameter in a file would be ignored by ROS 2 without a word."""
    data = yaml.safe_load(path.read_text())
    if robot:
        assert data['model']['ros__parameters']['robot'] == robot
    for mode in graph.MODES:
        graph.check_parameters(mode, [path])


BAD_FILE = """
/**:
  ros__parameters:
    tip_lnk: tool0
    rate_hz: 500
controler:
  ros__parameters:
    state_timeout: 0.1
controller:
  ros__parameters:
    kp: 1.0
    state_timeout: abc
    gains:
      shoulder:
        kp: 3
        kd: 2.0
    constraints:
      elbow:
        goal: -1.0
simulator:
  ros__parameters:
    initial_positions: [0, 1.2, 0.05]
    realtime: 'false'
"""


def test_check_names_every_parameter_a_node_would_not_take(tmp_path):
    path = tmp_path / 'mine.yaml'
    path.write_text(BAD_FILE)
    overrides = {'controller': [('kp', '1.0'), ('state_timeout', 'abc'), ('rate_hz', '500'),
                                ('state_timeout', '1e-1'), ('gains.elbow.kd', '2.5')],
                 'simulator': [('realtime', 'false')]}
    with pytest.raises(InputError) as info:
        graph.check_parameters('hardware', [parameter_file('scara'), path], overrides)
    lines = str(info.value).splitlines()
    assert 'nothing was started' in lines[0]
    wanted = [
        f"{path}: /**: no node declares a parameter 'tip_lnk'; did you mean 'tip_link'?",
        f"{path}: /**: parameter 'rate_hz' takes a double",
        f'{path}: controler: names no node of the graph',
        f"{path}: controller: the controller node declares no parameter 'kp'; did you mean "
        "'gains.<joint>.kp'?",
        f"{path}: controller: parameter 'state_timeout' takes a double",
        f"{path}: controller: parameter 'gains.shoulder.kp' takes a double",
        f"{path}: controller: parameter 'constraints.elbow.goal' takes values in [0, 1e+06], "
        'got -1.0',
        f"{path}: simulator: parameter 'initial_positions' takes a list of doubles",
        f"{path}: simulator: parameter 'realtime' takes a bool (e.g. true), got 'false' "
        '(a string)',
        "-p controller.kp:=1.0: the controller node declares no parameter 'kp'; did you mean "
        "'gains.<joint>.kp'?",
        "-p controller.state_timeout:=abc: parameter 'state_timeout' takes a double",
        "-p controller.rate_hz:=500: parameter 'rate_hz' takes a double",
        "-p simulator.realtime:=false: no node 'simulator' runs in mode 'hardware'",
    ]
    assert len(lines) == 1 + len(wanted), lines
    for line, start in zip(lines[1:], wanted):
        assert line.strip().startswith(start), (line, start)
    assert "got 'abc' (a string)" in lines[5] and 'got 500 (an integer)' in lines[2]
    assert "did you mean 'controller'?" in lines[3]
    # the good ones alone pass: 1e-1 is a double to rcl, gains.<any joint>.kd is declared
    graph.check_parameters('sim', [parameter_file('scara')], {'controller': [
        ('state_timeout', '1e-1'), ('gains.elbow.kd', '2.5'), ('use_sim_time', 'true')]})


def test_joint_parameters_for_joints_the_arm_lacks_and_misspelt_gains_are_named_first():
    files = [parameter_file('scara')]
    overrides = graph.complete_overrides('sim', files, {'controller': [
        ('gains.wrist.kp', '10.0'), ('gains.shoulder.kd', '3.0')]})
    with pytest.raises(InputError) as info:
        graph.check_joint_parameters('sim', files, overrides)
    assert str(info.value).splitlines() == [
        'parameters for joints that scara does not have (nothing was started):',
        "  controller: parameter 'gains.wrist.kp': no joint 'wrist' in the model (joints: "
        "['shoulder', 'elbow', 'quill']; gains.{joint}.kp takes a joint of the model)"]
    # the arm's own joints pass; so does a model the model node would refuse (it says why)
    graph.check_joint_parameters('sim', files, graph.complete_overrides(
        'sim', files, {'controller': [('gains.quill.kp', '10.0')]}))
    graph.check_joint_parameters('sim', files, graph.complete_overrides(
        'sim', files, {'model': [('urdf_file', '/nonexistent.urdf')],
                       'controller': [('gains.wrist.kp', '10.0')]}))
    # a misspelt gain is compared with the names of its own joint
    with pytest.raises(InputError) as info:
        graph.check_parameters('sim', files, {'controller': [('gains.shoulder.kpp', '1.0')]})
    assert str(info.value).splitlines()[1] == (
        '  -p controller.gains.shoulder.kpp:=1.0: the controller node declares no parameter '
        "'gains.shoulder.kpp'; did you mean 'gains.shoulder.kp' or 'gains.shoulder.ki' or "
        "'gains.shoulder.kd'?")


@pytest.mark.parametrize('robot', robots())
def test_each_bundled_arms_moveit_configuration_names_its_controller_and_joints(robot):
    config = yaml.safe_load((REPO / 'config' / 'moveit' / f'{robot}.yaml').read_text())
    assert config['moveit_controller_manager'] == \
        'moveit_simple_controller_manager/MoveItSimpleControllerManager'
    manager = config['moveit_simple_controller_manager']
    [name] = manager['controller_names']
    entry = manager[name]
    # MoveIt's action is <name>/<action_ns>: the controller's, as the node set declares it
    [controller] = [spec for spec in graph.NODES if spec.name == name]
    assert controller.ready[:2] == ('action', f'{name}/{entry["action_ns"]}')
    assert entry['type'] == 'FollowJointTrajectory' and entry['default'] is True
    assert tuple(entry['joints']) == RobotModel.load(robot).joint_names


#: ``-p name:=text`` for the parameters below: what rcl and rclpy make of them is the truth.
OVERRIDES = [('timeout', text) for text in (
    'abc', '5', '5.0', '1e-1', '20.0', 'nan', '.inf', 'true', "'0.5'")] \
    + [('flag', text) for text in ('true', 'yes', 'True', "'true'", '1', '0.0')] \
    + [('values', text) for text in ('[1.0, 2.0]', '[1, 2]', '[]', '1.0', "['a']")] \
    + [('names', text) for text in ('[a, b]', '[]', '[1, 2]', 'a')] \
    + [('count', text) for text in ('3', '3.0', '-1', "'3'")] \
    + [('text', text) for text in ('5', '~', '/x', 'true')]
SPECS = {spec.name: spec for spec in (
    Spec('timeout', 0.05, 'a double with bounds', bounds=(0.001, 10.0)),
    Spec('flag', True, 'a bool'), Spec('values', DOUBLE_ARRAY, 'doubles'),
    Spec('names', STRING_ARRAY, 'strings'), Spec('count', 2, 'an integer', bounds=(0, 10)),
    Spec('text', '', 'a string'))}


def test_check_agrees_with_rclpy_and_declare_refuses_what_it_refuses(ros_domain):
    context = Context()
    rclpy.init(context=context, domain_id=ros_domain)
    refused = 0
    try:
        for name, text in OVERRIDES:
            spec = SPECS[name]
            node = Node('parameter_probe', context=context,
                        cli_args=['--ros-args', '-p', f'{name}:={text}'])
            try:
                parameters.declare(node, [spec])
                rclpy_takes = True
            except InputError as exc:
                # the node's own message: parameter, value and the type it takes
                rclpy_takes = False
                message = str(exc).lower()
                assert f"parameter '{name}'" in message and text.strip("'") in message
                assert f'{name} takes {parameters.expected(spec)}' in str(exc)
            except ParameterException:        # outside the bounds
                rclpy_takes = False
            finally:
                node.destroy_node()
            assert _takes(spec, parse(text)) == rclpy_takes, f'{name}:={text}'
            refused += not rclpy_takes
    finally:
        rclpy.try_shutdown(context=context)
    assert refused == 20


def test_remapping_targets_are_public_names():
    for mode in graph.MODES:
        # relative, so that a namespaced arm's are its own (in the root: the public names)
        targets = {graph.resolve(target) for spec in graph.nodes(mode)
                   for _, target in spec.remappings}
        assert not any(target.startswith('/') for spec in graph.nodes(mode)
                       for _, target in spec.remappings)
        assert targets <= API_NAMES
        assert {'/compute_ik', '/compute_fk'} <= targets


@contextlib.contextmanager
def _running(domain, specs, files, overrides=None):
    """
    Build the node classes of ``specs`` in this process, in a context of their own.

    The nodes get the arguments bringup gives them. Yield ``(nodes, spin_until)``: the nodes
    by name, and ``spin_until(condition, what)``, which spins them here until ``condition()``.
    """
    context = Context()
    rclpy.init(context=context, domain_id=domain)
    executor = SingleThreadedExecutor(context=context)
    nodes = {}

    def spin_until(condition, what):
        deadline = time.monotonic() + TIMEOUT
        while not condition():
            if time.monotonic() > deadline:
                pytest.fail(f'timed out after {TIMEOUT:g} s waiting for {what}')
            executor.spin_once(timeout_sec=0.05)

    try:
        for spec in specs:
            node_class = getattr(importlib.import_module(spec.module), spec.node_class)
            arguments = graph.ros_arguments(spec, files, (overrides or {}).get(spec.name, ()))
            nodes[spec.name] = node_class(context=context, cli_args=arguments)
            executor.add_node(nodes[spec.name])
        yield nodes, spin_until
    finally:
        for node in nodes.values():
            node.destroy_node()
        rclpy.try_shutdown(context=context)


def _names(node, spec):
    """
    Return every topic, service and action name that the node of ``spec`` offers or uses.

    Its own and its children's (the controller's goal process), as the graph shows them to
    ``node``.
    """
    found = set()
    for name in (spec.name,) + spec.children:
        try:
            for query in (node.get_publisher_names_and_types_by_node,
                          node.get_subscriber_names_and_types_by_node,
                          node.get_service_names_and_types_by_node):
                found.update(topic for topic, _ in query(name, '/'))
            found.update(action for action, _ in
                         get_action_server_names_and_types_by_node(node, name, '/'))
        except RCLError:    # a child not discovered yet (NodeNameNonExistentError)
            pass
    return found


def _own_name(spec, name):
    """Return ``name`` before the remappings of ``spec`` (fully expanded)."""
    for source, target in spec.remappings:
        if target == name:
            return expand_topic_name(source, spec.name, '/')
    return expand_topic_name(name, spec.name, '/')


@pytest.mark.parametrize('robot', robots())
def test_running_nodes_create_the_remapped_names_and_take_the_file(robot, ros_domain):
    # without the remappings, so that the names the nodes create themselves show
    specs = [spec._replace(remappings=()) for spec in graph.NODES]
    with _running(ros_domain, specs, [parameter_file(robot)]) as (nodes, spin_until):
        for spec in graph.NODES:
            node = nodes[spec.name]
            ready = {_own_name(spec, name) for name in spec.ready[1:]}
            spin_until(lambda: ready <= _names(node, spec), f'{spec.name} to offer {ready}')
            names = _names(node, spec)
            for source, _ in spec.remappings:
                assert expand_topic_name(source, spec.name, '/') in names, \
                    f'{spec.name} creates no {source!r} (it has {sorted(names)})'
        data = yaml.safe_load(parameter_file(robot).read_text())
        for section, content in data.items():
            targets = nodes if section == '/**' else {section: nodes[section]}
            for name, value in flat_parameters(content['ros__parameters']):
                takers = {n: node for n, node in targets.items() if node.has_parameter(name)}
                assert takers, f'no node has the parameter {name!r} ({robot}.yaml: {section})'
                for node_name, node in takers.items():
                    got = node.get_parameter(name).value
                    assert (list(got) if isinstance(value, list) else got) == value, \
                        f'{node_name}.{name} is {got!r}, {robot}.yaml sets {value!r}'


def test_overrides_beat_the_files_node_section(ros_domain):
    # scara.yaml sets rate_hz in the simulator's own section, which a plain -p rule loses to
    spec = next(spec for spec in graph.NODES if spec.name == 'simulator')
    with _running(ros_domain, [spec], [parameter_file('scara')],
                  {'simulator': [('rate_hz', '250.0'), ('realtime', 'false')]}) as (nodes, _):
        node = nodes['simulator']
        assert node.get_parameter('rate_hz').value == 250.0
        assert node.get_parameter('realtime').value is False
        assert node.get_parameter('command_timeout').value == 0.1   # from the file


def test_the_simulator_takes_a_command_timeout_at_run_time(ros_domain):
    # the one parameter settable while it runs: the stepping loop's timeout changes with it,
    # and a value outside its range is refused and changes nothing
    specs = [spec for spec in graph.NODES if spec.name in ('model', 'simulator')]
    with _running(ros_domain, specs, [parameter_file('scara')]) as (nodes, spin_until):
        node = nodes['simulator']
        spin_until(lambda: node.sim is not None, 'the simulator to have its model')
        assert node.sim.command_timeout == 0.1          # scara.yaml
        assert node.set_parameters([Parameter('command_timeout', value=0.5)])[0].successful
        assert node.sim.command_timeout == 0.5
        assert not node.set_parameters([Parameter('command_timeout', value=-1.0)])[0].successful
        assert node.sim.command_timeout == 0.5


def _simulator(overrides):
    return dict(overrides.get('simulator', ()))


@pytest.mark.parametrize('given, lockstep, realtime', [
    ({}, 'true', 'true'),                                              # the default: paced
    ({'lockstep': 'true'}, 'true', 'false'),                           # bringup --lockstep
    ({'lockstep': 'true', 'realtime': 'true'}, 'true', 'true'),        # paced lockstep
    ({'lockstep': 'false'}, 'false', None),                            # real time, as an arm
    ({'realtime': 'true'}, None, 'true'),                              # real time too
    ({'realtime': 'false'}, 'true', 'false'),                          # faster than real time
    ({'realtime': 'false', 'lockstep': 'false'}, 'false', 'false'),    # asked for: free running
])
def test_one_clock_for_the_graph(given, lockstep, realtime, tmp_path):
    files = [parameter_file('scara')]
    overrides = graph.clock_overrides('sim', files, {'simulator': list(given.items())})
    simulator = _simulator(overrides)
    assert (simulator.get('lockstep'), simulator.get('realtime')) == (lockstep, realtime)
    simulated = realtime == 'false' or lockstep == 'true'
    assert graph.simulated_time(files, overrides) is simulated
    for spec in graph.nodes('sim'):
        if spec.name != 'simulator':
            assert (('use_sim_time', 'true') in overrides.get(spec.name, ())) is simulated
    # a parameter file that says the same decides the same
    user = tmp_path / 'user.yaml'
    user.write_text(yaml.safe_dump({'simulator': {'ros__parameters': {
        name: yaml.safe_load(text) for name, text in given.items()}}}))
    from_file = graph.clock_overrides('sim', files + [user], {})
    assert {**dict(given), **_simulator(from_file)} == simulator
    assert graph.simulated_time(files + [user], from_file) is simulated


@pytest.mark.parametrize('clock', graph.CLOCKS)
def test_each_named_clock_is_what_its_parameters_say(clock):
    # bringup --lockstep / --real-time and demo's: the same table as the parameters above
    files = [parameter_file('scara')]
    overrides = graph.clock_overrides('sim', files, graph.clock(clock))
    assert _simulator(overrides) == graph.CLOCKS[clock]
    assert graph.simulated_time(files, overrides) is (clock != 'real-time')
    with pytest.raises(InputError, match='clock: expected one of paced, lockstep, real-time'):
        graph.clock('fast')


def test_a_users_model_source_replaces_the_bundled_robot(tmp_path):
    files = [parameter_file('planar_2r')]
    # on the command line: the bundled robot is cleared before the URDF is given
    given = {'model': [('urdf_file', 'identified.urdf')],
             'simulator': [('plant_urdf_file', 'nominal.urdf')]}
    completed = graph.model_source_overrides(files, given)
    assert completed == {'model': [('robot', "''"), ('urdf_file', 'identified.urdf')],
                         'simulator': [('plant_urdf_file', 'nominal.urdf')]}
    assert given['model'] == [('urdf_file', 'identified.urdf')]       # not modified
    # in a parameter file after the robot's: the same
    user = tmp_path / 'mine.yaml'
    user.write_text('model:\n  ros__parameters:\n    dh_file: arm.dh.yaml\n')
    assert graph.model_source_overrides(files + [user], {}) == {'model': [('robot', "''")]}
    # a later layer naming the robot again wins over the user's file
    assert graph.model_source_overrides(files + [user], {'model': [('robot', 'scara')]}) == \
        {'model': [('dh_file', "''"), ('robot', 'scara')]}
    # nothing to clear: one source, or another robot in place of the file's
    assert graph.model_source_overrides(files, {}) == {}
    assert graph.model_source_overrides(files, {'model': [('robot', 'scara')]}) == \
        {'model': [('robot', 'scara')]}
    # two sources in one layer stay two: the model node refuses them by name
    both = {'model': [('urdf_file', 'a.urdf'), ('dh_file', 'b.yaml')]}
    assert graph.model_source_overrides(files, both)['model'][0] == ('robot', "''")
    assert len(graph.model_source_overrides(files, both)['model']) == 3


@pytest.mark.parametrize('mode', graph.MODES)
def test_a_simulated_arm_is_held_in_safe_mode_a_real_one_keeps_zero_effort(mode, tmp_path):
    files = [parameter_file('scara')]
    safe_mode = dict(graph.complete_overrides(mode, files, {}).get('controller', ()))
    assert safe_mode.get('safe_mode') == ('gravity_compensation' if mode == 'sim' else None)
    # what a user sets, in a file or on the command line, is kept
    user = tmp_path / 'brakes.yaml'
    user.write_text('controller:\n  ros__parameters:\n    safe_mode: zero_effort\n')
    assert 'safe_mode' not in dict(
        graph.complete_overrides(mode, files + [user], {}).get('controller', ()))
    given = {'controller': [('safe_mode', 'zero_effort')]}
    assert [pair for pair in graph.complete_overrides(mode, files, given)['controller']
            if pair[0] == 'safe_mode'] == [('safe_mode', 'zero_effort')]


def test_lockstep_from_a_parameter_file_and_the_hardware_keeps_wall_time(tmp_path):
    user = tmp_path / 'fast.yaml'
    user.write_text('simulator:\n  ros__parameters:\n    realtime: false\n')
    files = [parameter_file('planar_2r'), user]
    overrides = graph.clock_overrides('sim', files, {})
    assert _simulator(overrides) == {'lockstep': 'true'}
    assert ('use_sim_time', 'true') in overrides['controller']
    assert graph.clock_overrides('hardware', files, {}) == {}


def test_launch_lockstep_argument_reaches_the_simulator_and_every_clock():
    values = {argument.name: argument.default for argument in graph.launch_arguments('sim')}
    values.update(robot='planar_2r', lockstep='true')
    launched = {options['name']: options['parameters'][1:]
                for options in graph.launch_nodes('sim', values)}
    assert launched['simulator'] == [{'realtime': False, 'lockstep': True}]
    for name in ('model', 'kinematics'):
        assert launched[name] == [{'use_sim_time': True}]
    assert launched['controller'] == [{'use_sim_time': True,
                                       'safe_mode': 'gravity_compensation'}]


def test_the_nodes_defaults_are_the_library_loops_defaults():
    # the nodes and graph_loop build the simulator and the controller in one place each
    # (configured_simulator, configured_controller): what the nodes declare by default is what
    # the library takes for a parameter not given
    from robot_dynamics.control import make_law
    from robot_dynamics.controller import configured_controller
    from robot_dynamics.ros.nodes import controller_node, simulator_node
    from robot_dynamics.simulator import configured_simulator
    model = RobotModel.load('scara')

    def declared(specs):
        defaults = {spec.name: spec.default for spec in specs}
        return lambda name, default: defaults[name]

    def settings(obj, names):
        return {name: getattr(obj, name) for name in names}
    simulator_names = ('rate_hz', 'publish_every', 'status_every', 'command_timeout',
                       'brake_until_command', 'brake_on_timeout', 'realtime', 'lockstep',
                       'lockstep_timeout', 'max_external_force', 'max_external_torque')
    node, library = (configured_simulator(model, parameter) for parameter in (
        declared(simulator_node.PARAMETERS), {}.get))
    assert settings(node, simulator_names) == settings(library, simulator_names)
    assert node.plant.interface == library.plant.interface and node.plant.friction
    controller_names = ('safe_mode', 'state_timeout', 'wall_state_timeout', 'period',
                        'velocity_feedback', 'max_linear_velocity', 'max_angular_velocity')
    law = make_law('pd', model, kp=[1.0] * 3, kd=[0.1] * 3)
    node, library = (configured_controller(model, law, parameter) for parameter in (
        declared(controller_node.PARAMETERS), {}.get))
    assert settings(node, controller_names) == settings(library, controller_names)
    assert node.follower.stop_time == library.follower.stop_time


def test_a_parameter_in_one_line_shows_an_empty_array_not_its_type():
    assert Spec('joints', STRING_ARRAY, 'Joint order.').line() == 'joints = []: Joint order.'
    assert Spec('rate_hz', 1000.0, 'Rate [Hz].', read_only=False, bounds=(1.0, 1e4)).line() \
        == 'rate_hz = 1000.0 in [1, 10000] (settable at run time): Rate [Hz].'
