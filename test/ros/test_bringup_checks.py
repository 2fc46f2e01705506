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
What ``robot-dynamics bringup`` decides before a graph runs, in this process.

The command's own entry point (``cli.main``) with ``bringup.run`` replaced by a stand-in, so
that nothing can start: parameters no node takes end it with exit status 2 and one line each,
and ``-p simulator.realtime:=false`` hands the node set the very parameters of ``--lockstep``.
A node built here, as its process builds it, refuses a mistyped parameter with a start error
(one that its process reports as ``cannot start: ...``, exit status 1: test_bringup.py shows
that over DDS). What the processes show is test_bringup.py's.
"""

import importlib

import pytest
import rclpy
from rclpy.context import Context
from robot_dynamics import cli
from robot_dynamics.ros.nodes.runner import START_ERRORS
from robot_dynamics.ros.tools import bringup, graph

pytestmark = pytest.mark.ros


def _never_started(*args, **kwargs):
    pytest.fail('bringup started the node set')


def _handed_over(monkeypatch, *argv):
    """Return what ``robot-dynamics bringup ARGV`` hands ``bringup.run``, which starts nothing."""
    handed = []
    monkeypatch.setattr(bringup, 'run', lambda *args, **kwargs: handed.append((args, kwargs)))
    assert cli.main(['bringup', *argv]) is None
    [(args, kwargs)] = handed
    specs, files, overrides = args
    return specs, files, {node: dict(pairs) for node, pairs in overrides.items()}, kwargs


def test_parameters_no_node_takes_stop_it_before_anything_starts(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(bringup, 'run', _never_started)
    params = tmp_path / 'mine.yaml'
    params.write_text('controller:\n  ros__parameters:\n    natural_frequency: 20\n')
    code = cli.main(['bringup', '--robot', 'scara', '--params-file', str(params),
                     '-p', 'controller.kp:=1.0', '-p', 'controller.state_timeout:=abc'])
    assert code == 2          # bad arguments
    out, err = capsys.readouterr()
    output = out + err
    assert 'starting' not in output and '[INFO]' not in output, output
    lines = output.splitlines()
    assert lines[0].endswith('parameters the nodes would not take (nothing was started):')
    assert lines[1:] == [
        f"  {params}: controller: parameter 'natural_frequency' takes a double (e.g. 0.5; a "
        'whole number such as 5 is an integer: write 5.0), got 20 (an integer)',
        "  -p controller.kp:=1.0: the controller node declares no parameter 'kp'; did you mean "
        "'gains.<joint>.kp'?",
        "  -p controller.state_timeout:=abc: parameter 'state_timeout' takes a double (e.g. 0.5; "
        "a whole number such as 5 is an integer: write 5.0), got 'abc' (a string)"], output


def test_a_simulator_without_real_time_is_the_lockstep_graph(monkeypatch):
    # test_bringup.py runs --processes --lockstep over DDS: -p simulator.realtime:=false
    # must hand the nodes the same parameters
    not_realtime = _handed_over(monkeypatch, '--robot', 'scara', '--processes',
                                '-p', 'simulator.realtime:=false')
    lockstep = _handed_over(monkeypatch, '--robot', 'scara', '--processes', '--lockstep')
    assert not_realtime == lockstep
    specs, _, overrides, kwargs = lockstep
    assert kwargs['processes'] is True
    # the clock of the module docstring of graph: lockstep, faster than real time, and every
    # other node on the simulator's /clock
    assert overrides['simulator']['lockstep'] == 'true'
    assert overrides['simulator']['realtime'] == 'false'
    others = [spec.name for spec in specs if spec.name != 'simulator']
    assert sorted(others) == ['controller', 'kinematics', 'model']
    assert all(overrides[name]['use_sim_time'] == 'true' for name in others), overrides


@pytest.mark.parametrize('how', ['file', '-p'])
def test_a_node_refuses_a_mistyped_parameter(ros_domain, tmp_path, how):
    params = tmp_path / 'kinematics.yaml'
    params.write_text('kinematics:\n  ros__parameters:\n    publish_rate_hz: fast\n')
    given = ['--params-file', str(params)] if how == 'file' else ['-p', 'publish_rate_hz:=fast']
    [spec] = [spec for spec in graph.nodes('sim') if spec.name == 'kinematics']
    node_class = getattr(importlib.import_module(spec.module), spec.node_class)
    context = Context()
    rclpy.init(context=context, domain_id=ros_domain)
    try:
        # a start error: the node's process logs "cannot start: <it>" and exits with status 1
        with pytest.raises(START_ERRORS) as info:
            node_class(context=context,
                       cli_args=['--ros-args', '-r', '__node:=kinematics', *given])
    finally:
        rclpy.try_shutdown(context=context)
    assert "Trying to set parameter 'publish_rate_hz' to 'fast' of type 'STRING', expecting " \
        "type 'DOUBLE'; publish_rate_hz takes a double (e.g. 0.5" in str(info.value), info.value
