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
``launch/*.launch.py`` start exactly the declared node set of ``robot_dynamics.ros.tools.graph``.

launch and launch_ros are not installable here: the files run against the recording
stand-ins of ``launch_standins`` (a test helper), and the recorded ``Node`` actions are
compared with the declaration and with the repository's parameter files.
"""

from pathlib import Path
from unittest.mock import ANY

from launch_standins import run_launch_file
import numpy as np
import pytest
from robot_dynamics import RobotModel
from robot_dynamics.errors import InputError
from robot_dynamics.ros.tools import graph
import yaml

REPO = Path(__file__).resolve().parents[1]
LAUNCH = {mode: REPO / 'launch' / f'{mode}.launch.py' for mode in graph.MODES}
ROBOTS = sorted(p.stem for p in (REPO / 'config').glob('*.yaml') if '.' not in p.stem)


def _launch(mode, monkeypatch, **arguments):
    """Return the declared arguments and the node set's own nodes (not the viewers)."""
    declared, nodes = run_launch_file(LAUNCH[mode], arguments, monkeypatch)
    return declared, [node for node in nodes if node.options['package'] == 'robot_dynamics']


def _viewers(mode, monkeypatch, **arguments):
    """Return the viewers' nodes ``{package: options}`` that the launch file starts."""
    _, nodes = run_launch_file(LAUNCH[mode], arguments, monkeypatch)
    return {node.options['package']: node.options for node in nodes
            if node.options['package'] != 'robot_dynamics'}


def _typed(pairs):
    """Return ``(name, YAML text)`` pairs as the dictionary of typed values ``-p`` would set."""
    return {name: yaml.safe_load(text) for name, text in pairs}


def _mode_parameters(mode, node):
    """
    Return what ``mode`` gives ``node`` after the bundled files (which set no default).

    A simulated arm runs on the default clock, lockstep paced to the wall clock: the simulator
    publishes simulated time and every other node reads it.
    """
    clock = ()
    if 'simulator' in {spec.name for spec in graph.nodes(mode)}:
        clock = (tuple(graph.CLOCKS[graph.DEFAULT_CLOCK].items()) if node == 'simulator'
                 else (('use_sim_time', 'true'),))
    return _typed(clock + tuple(graph.MODE_DEFAULTS.get(mode, {}).get(node, ()))
                  + tuple(graph.MODE_PARAMETERS.get(mode, {}).get(node, ())))


def _assert_robot_file(path, robot):
    path = Path(path)
    assert path.name == f'{robot}.yaml' and path.is_file()
    assert path.read_text() == (REPO / 'config' / f'{robot}.yaml').read_text()


def test_every_mode_has_a_launch_file():
    assert sorted(p.name for p in (REPO / 'launch').glob('*.launch.py')) == \
        sorted(p.name for p in LAUNCH.values())


def test_robots_with_parameter_files():
    assert ROBOTS and graph.robots() == ROBOTS


@pytest.mark.parametrize('mode', graph.MODES)
@pytest.mark.parametrize('robot', ROBOTS)
def test_launch_starts_the_declared_nodes(mode, robot, monkeypatch):
    declared, nodes = _launch(mode, monkeypatch, robot=robot)
    specs = graph.nodes(mode)
    assert [node.options['name'] for node in nodes] == [spec.name for spec in specs]
    for node, spec in zip(nodes, specs):
        options = node.options
        assert options['package'] == 'robot_dynamics'
        assert options['executable'] == spec.executable
        assert options['namespace'] == ''
        assert options['remappings'] == list(spec.remappings)
        assert options['output'] == 'screen'
        robot_file, *rest = options['parameters']
        _assert_robot_file(robot_file, robot)
        # after the file only what the mode sets (the launch arguments are empty here)
        mode_parameters = _mode_parameters(mode, spec.name)
        assert rest == ([mode_parameters] if mode_parameters else [])
    assert all(argument.default_value == '' for argument in declared[2:-2])


@pytest.mark.parametrize('mode', graph.MODES)
def test_declared_arguments(mode, monkeypatch):
    declared, _ = _launch(mode, monkeypatch, robot='planar_2r')
    taken = dict.fromkeys(name for spec in graph.nodes(mode) for name in spec.launch_arguments)
    assert [argument.name for argument in declared] == ['robot', 'params_file', *taken,
                                                        'namespace', 'robot_state_publisher',
                                                        'rviz']
    robot = declared[0]
    assert robot.default_value == ('scara' if mode == 'sim' else '')
    for name in ROBOTS:
        assert name in robot.description
    assert declared[1].default_value == ''


@pytest.mark.parametrize('mode', graph.MODES)
def test_user_parameter_file_comes_after_the_robots(mode, monkeypatch, tmp_path):
    user = tmp_path / 'my_arm.yaml'
    user.write_text('/**:\n  ros__parameters:\n    tip_link: tool0\n')
    _, nodes = _launch(mode, monkeypatch, robot='scara', params_file=str(user))
    for node in nodes:
        robot_file, user_file = node.options['parameters'][:2]
        _assert_robot_file(robot_file, 'scara')
        assert user_file == str(user)


def test_hardware_with_only_a_users_file(monkeypatch, tmp_path):
    user = tmp_path / 'my_arm.yaml'
    user.write_text('model:\n  ros__parameters:\n    urdf_file: /opt/my_arm.urdf\n')
    _, nodes = _launch('hardware', monkeypatch, params_file=str(user))
    assert [node.options['parameters'][0] for node in nodes] == [str(user)] * len(nodes)


def test_bad_arguments_name_the_problem(monkeypatch, tmp_path):
    with pytest.raises(InputError, match=r"robot 'r2d2'.*'planar_2r'"):
        _launch('sim', monkeypatch, robot='r2d2')
    with pytest.raises(InputError, match='give a bundled robot or a parameter file'):
        _launch('hardware', monkeypatch)
    missing = str(tmp_path / 'missing.yaml')
    with pytest.raises(InputError, match=f'parameter file {missing!r} does not exist'):
        _launch('hardware', monkeypatch, params_file=missing)


@pytest.mark.parametrize('mode', graph.MODES)
def test_control_law_goes_to_the_node_that_takes_it(mode, monkeypatch):
    takers = [spec.name for spec in graph.nodes(mode) if 'control_law' in spec.launch_arguments]
    assert takers == ['controller']
    declared, nodes = _launch(mode, monkeypatch, robot='scara', control_law='pd')
    law = [argument for argument in declared if argument.name == 'control_law']
    assert len(law) == 1 and 'pd_gravity' in law[0].description
    for node in nodes:
        robot_file, *rest = node.options['parameters']
        _assert_robot_file(robot_file, 'scara')
        expected = _mode_parameters(mode, node.options['name'])
        if node.options['name'] in takers:
            expected['control_law'] = 'pd'
        assert rest == ([expected] if expected else [])


def test_hardware_mode_tells_the_controller(monkeypatch):
    _, nodes = _launch('hardware', monkeypatch, robot='scara')
    parameters = {node.options['name']: node.options['parameters'] for node in nodes}
    assert 'simulator' not in parameters
    # a bool, as the controller declares it: launch_ros would pass the text 'true' as a string
    assert parameters['controller'][1:] == [{'hardware': True}]


def test_a_parameter_no_node_takes_stops_the_launch(monkeypatch, tmp_path):
    """A misspelt parameter in a file would be ignored by ROS 2 without a word."""
    user = tmp_path / 'my_arm.yaml'
    user.write_text('controller:\n  ros__parameters:\n    state_timout: 0.1\n'
                    '    rate_hz: 500\n')
    with pytest.raises(InputError) as info:
        _launch('sim', monkeypatch, robot='scara', params_file=str(user))
    message = str(info.value)
    assert "declares no parameter 'state_timout'; did you mean 'state_timeout'" in message
    assert "'rate_hz' takes a double" in message and 'got 500 (an integer)' in message
    with pytest.raises(InputError, match="'control_law' takes a string"):
        _launch('sim', monkeypatch, robot='scara', control_law='1')


@pytest.mark.parametrize('mode', graph.MODES)
def test_a_namespace_puts_every_name_of_the_arm_under_it(mode, monkeypatch, tmp_path):
    """A file's ``controller:`` section is for ``/controller`` only (rcl): not in a namespace."""
    user = tmp_path / 'my_arm.yaml'
    user.write_text('/**:\n  ros__parameters:\n    tip_link: tool0\n'
                    'controller:\n  ros__parameters:\n    state_timeout: 0.07\n')
    _, nodes = _launch(mode, monkeypatch, robot='scara', params_file=str(user),
                       namespace='left', control_law='pd')
    specs = graph.nodes(mode)
    assert [node.options['name'] for node in nodes] == [spec.name for spec in specs]
    robot_file = yaml.safe_load((REPO / 'config' / 'scara.yaml').read_text())
    for node, spec in zip(nodes, specs):
        options = node.options
        assert options['namespace'] == '/left'
        assert options['remappings'] == list(spec.remappings) + [('/clock', '/left/clock')]
        assert all(not target.startswith('/') for _, target in spec.remappings)
        # one dictionary, which launch_ros writes under /left/<node>: the bundled file's
        # sections for every node and for this one, the user's, then the mode's and arguments'
        (given,) = options['parameters']
        expected = dict(graph.flat_parameters(robot_file['/**']['ros__parameters']))
        expected.update(graph.flat_parameters(
            robot_file.get(spec.name, {}).get('ros__parameters', {})))
        expected['tip_link'] = 'tool0'
        if spec.name == 'controller':
            expected['state_timeout'] = 0.07
            expected['control_law'] = 'pd'
        expected.update(_mode_parameters(mode, spec.name))
        assert given == expected


def test_a_namespace_ros_refuses_stops_the_launch(monkeypatch):
    with pytest.raises(InputError, match="namespace 'left arm'"):
        _launch('sim', monkeypatch, robot='scara', namespace='left arm')


@pytest.mark.parametrize('robot', ['scara', 'planar_3r'])
def test_robot_state_publisher_gets_the_model_nodes_description(robot, monkeypatch):
    viewers = _viewers('sim', monkeypatch, robot=robot)
    assert list(viewers) == ['robot_state_publisher']     # RViz only when asked
    options = viewers['robot_state_publisher']
    assert options['executable'] == 'robot_state_publisher' and options['namespace'] == ''
    assert options['remappings'] == []
    # on the graph's clock: the default one, simulated time
    assert options['parameters'] == [{'robot_description': ANY, 'use_sim_time': True}]
    urdf = options['parameters'][0]['robot_description']
    bundled = REPO / 'urdf' / f'{robot}.urdf'
    if bundled.is_file():      # a URDF robot: its own file, as the model node publishes it
        assert urdf == bundled.read_text()
    # a DH robot: its export, the same chain as the bundled model
    model, expected = RobotModel.from_urdf(urdf), RobotModel.load(robot)
    assert model.joint_names == expected.joint_names
    assert np.allclose(model.fk(expected.upper * 0.3), expected.fk(expected.upper * 0.3))


def test_viewers_in_a_namespace_on_simulated_time_and_rviz(monkeypatch):
    viewers = _viewers('sim', monkeypatch, robot='scara', namespace='right', lockstep='true',
                       rviz='true')
    assert list(viewers) == ['robot_state_publisher', 'rviz2']
    moved = [('/tf', 'tf'), ('/tf_static', 'tf_static'), ('/clock', '/right/clock')]
    for options in viewers.values():
        assert options['namespace'] == '/right' and options['remappings'] == moved
    assert viewers['robot_state_publisher']['parameters'][0]['use_sim_time'] is True
    rviz = viewers['rviz2']
    assert rviz['executable'] == 'rviz2' and rviz['parameters'] == [{'use_sim_time': True}]
    flag, config = rviz['arguments']
    assert flag == '-d' and Path(config).name == 'robot_dynamics.rviz'
    assert Path(config).read_text() == (REPO / 'rviz' / 'robot_dynamics.rviz').read_text()


def test_robot_state_publisher_is_off_for_a_real_arm_and_can_be_turned_off(monkeypatch):
    """A real arm's ros2_control set-up runs its own robot_state_publisher."""
    assert _viewers('hardware', monkeypatch, robot='scara') == {}
    assert _viewers('sim', monkeypatch, robot='scara', robot_state_publisher='false') == {}
    with pytest.raises(InputError, match="rviz: expected true or false, got 'yes'"):
        _viewers('sim', monkeypatch, robot='scara', rviz='yes')
