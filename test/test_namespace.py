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

"""An arm's namespace in the graph's declaration: names, arguments and parameters (no ROS)."""

from pathlib import Path

import pytest
from robot_dynamics import parameter_files
from robot_dynamics.errors import InputError
from robot_dynamics.ros.tools import definitions, graph
import yaml

REPO = Path(__file__).resolve().parents[1]
SPECS = {spec.name: spec for spec in graph.NODES}


@pytest.mark.parametrize('text, full', [('', ''), ('left', '/left'), ('/left/', '/left'),
                                        ('cell_1/left', '/cell_1/left')])
def test_namespace_as_a_full_name(text, full):
    assert graph.namespace(text) == full


@pytest.mark.parametrize('text', ['1left', 'left arm', 'a__b', 'a//b', 'left-arm'])
def test_a_namespace_ros_refuses_is_refused_naming_it(text):
    with pytest.raises(InputError, match=f'namespace {text!r}'):
        graph.namespace(text)


def test_without_a_namespace_the_arguments_are_todays():
    spec = SPECS['kinematics']
    assert graph.ros_arguments(spec, ['a.yaml'], [('publish_rate_hz', '5.0')]) == [
        '--ros-args', '-r', '__node:=kinematics', '--params-file', 'a.yaml',
        '-p', 'kinematics:publish_rate_hz:=5.0',
        '-r', '~/solve_ik:=compute_ik', '-r', '~/solve_fk:=compute_fk']
    assert [graph.resolve(target) for _, target in spec.remappings] == \
        ['/compute_ik', '/compute_fk']


def test_in_a_namespace_every_name_and_the_clock_move():
    spec = SPECS['kinematics']
    assert graph.ros_arguments(spec, ['p.yaml'], (), '/left') == [
        '--ros-args', '-r', '__node:=kinematics', '-r', '__ns:=/left', '--params-file', 'p.yaml',
        '-r', '~/solve_ik:=compute_ik', '-r', '~/solve_fk:=compute_fk',
        '-r', '/clock:=/left/clock']
    assert graph.resolve('controller/follow_joint_trajectory', '/left') == \
        '/left/controller/follow_joint_trajectory'
    assert graph.resolve('/diagnostics', '/left') == '/diagnostics'
    assert definitions.topics('/left').controller_state == '/left/controller/state'
    assert definitions.topics('/left').trajectory_controller_state == \
        '/left/controller/controller_state'
    assert definitions.topics() == definitions.TOPICS


def test_clock_arguments_of_a_client_beside_the_graph():
    files = [parameter_files.parameter_file('scara')]
    lockstep = graph.complete_overrides('sim', files, graph.overrides('sim',
                                                                      {'lockstep': 'true'}))
    assert graph.clock_arguments(files, lockstep) == ['-p', 'use_sim_time:=true']
    assert graph.clock_arguments(files, lockstep, '/left') == \
        ['-p', 'use_sim_time:=true', '-r', '/clock:=/left/clock']
    # the default clock, lockstep paced to the wall clock, is simulated time
    assert graph.clock_arguments(files, graph.complete_overrides('sim', files, {}), '/left') == \
        ['-p', 'use_sim_time:=true', '-r', '/clock:=/left/clock']
    real_time = graph.complete_overrides('sim', files, graph.clock('real-time'))
    assert graph.clock_arguments(files, real_time, '/left') == []


def test_namespaced_parameters_are_what_rcl_would_apply_in_the_root(tmp_path):
    """Each node's values in ROS's order: every file's ``/**``, then its section; overrides."""
    user = tmp_path / 'user.yaml'
    user.write_text('/**:\n  ros__parameters:\n    tip_link: tool0\n'
                    'controller:\n  ros__parameters:\n    state_timeout: 0.07\n'
                    '    gains:\n      shoulder:\n        kp: 900.0\n')
    files = [parameter_files.parameter_file('scara'), user]
    overrides = {'controller': [('control_law', 'pd')], 'simulator': [('lockstep', 'true')]}
    given = graph.namespaced_parameters(graph.nodes('sim'), files, overrides, '/left')
    assert sorted(given) == sorted(f'/left/{spec.name}' for spec in graph.nodes('sim'))
    bundled = yaml.safe_load((REPO / 'config' / 'scara.yaml').read_text())
    controller = given['/left/controller']['ros__parameters']
    expected = dict(parameter_files.flat_parameters(bundled['/**']['ros__parameters']))
    expected.update(parameter_files.flat_parameters(bundled['controller']['ros__parameters']))
    expected.update({'tip_link': 'tool0', 'state_timeout': 0.07, 'gains.shoulder.kp': 900.0,
                     'control_law': 'pd'})
    assert controller == expected
    assert given['/left/simulator']['ros__parameters']['lockstep'] is True
    assert given['/left/model']['ros__parameters']['robot'] == 'scara'
