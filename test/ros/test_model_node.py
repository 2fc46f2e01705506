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


"""The model node: /robot_description for late subscribers, and bad descriptions at start-up."""

import os
import signal

import pytest
from robot_dynamics import RobotModel
from robot_dynamics.ros.wire.qos import DESCRIPTION_QOS
from std_msgs.msg import String


pytestmark = pytest.mark.ros


def test_description_reaches_a_subscriber_that_starts_late(processes, probe):
    proc = processes.start('model', ['model_node', '--ros-args', '-r', '__node:=model',
                                     '-p', 'robot:=planar_2r'])
    # the model node is up and has published before anyone subscribes
    probe.wait_for(lambda: 'publishing' in processes.output(proc), what='the model node')
    received = probe.collect(String, '/robot_description', DESCRIPTION_QOS)
    probe.wait_for(lambda: received, what='/robot_description (transient local)')
    model = RobotModel.from_urdf(received[0][0].data)
    reference = RobotModel.load('planar_2r')
    assert model.joint_names == reference.joint_names
    q = [0.3, -0.7]
    assert (model.mass_matrix(q) == reference.mass_matrix(q)).all()
    assert proc.poll() is None
    assert processes.stop(proc) == 0


def test_dh_robot_is_published_as_its_urdf(processes, probe):
    proc = processes.start('model_dh', ['model_node', '--ros-args', '-r', '__node:=model',
                                        '-p', 'robot:=puma560'])
    probe.wait_for(lambda: 'publishing' in processes.output(proc), what='the model node')
    received = probe.collect(String, '/robot_description', DESCRIPTION_QOS)
    probe.wait_for(lambda: any('puma560' in m.data for m, _ in received), what='the PUMA URDF')
    urdf = next(m.data for m, _ in received if 'puma560' in m.data)
    model, reference = RobotModel.from_urdf(urdf), RobotModel.load('puma560')
    q = [0.1, 0.5, -1.0, 0.3, 0.7, -0.2]
    assert abs(model.inverse_dynamics(q, q, q) - reference.inverse_dynamics(q, q, q)).max() < 1e-9
    processes.stop(proc)


BAD_URDF = '<robot name="bad"><link name="a"/><joint name="j" type="revolute"><parent ' \
           'link="a"/><child link="b"/></joint></robot>'


@pytest.mark.parametrize('args, words', [
    (['-p', 'urdf_file:=/nonexistent/arm.urdf'], ['/nonexistent/arm.urdf', 'does not exist']),
    (['-p', f'robot_description:={BAD_URDF}'], ['unknown link', "'b'"]),
    (['-p', 'robot:=no_such_robot'], ['unknown robot', 'no_such_robot']),
    (['-p', 'robot:=scara', '-p', 'dh_file:=x.yaml'], ['exactly one', 'dh_file', 'robot']),
    ([], ['exactly one']),
])
def test_bad_description_stops_the_node_with_a_message(processes, args, words):
    proc = processes.start('bad_model', ['model_node', '--ros-args'] + args)
    assert proc.wait(60) == 1
    output = processes.output(proc)
    assert 'cannot start' in output and all(w in output for w in words), output


def test_bad_dh_file_names_the_problem(processes, tmp_path):
    table = tmp_path / 'arm.dh.yaml'
    table.write_text('joints:\n  - {a: 0.3, alpha: 0.0, d: 0.0, theta: 0.0, type: helical}\n')
    proc = processes.start('bad_dh', ['model_node', '--ros-args', '-p', f'dh_file:={table}'])
    assert proc.wait(60) == 1
    output = processes.output(proc)
    assert 'helical' in output, output


def test_a_node_process_prints_its_stacks_on_sigusr1_and_runs_on(processes, probe):
    # what the test fixtures ask a node that does not stop before they kill it
    proc = processes.start('model_stacks', ['model_node', '--ros-args', '-r', '__node:=model',
                                            '-p', 'robot:=planar_2r'])
    probe.wait_for(lambda: 'publishing' in processes.output(proc), what='the model node')
    os.kill(proc.pid, signal.SIGUSR1)
    # faulthandler writes the dump in pieces: wait for the main thread's frame, not its header
    probe.wait_for(lambda: 'in run_node' in processes.output(proc),
                   what="the main thread's frames in the stacks")
    assert 'Current thread' in processes.output(proc)
    assert proc.poll() is None
    assert processes.stop(proc) == 0
