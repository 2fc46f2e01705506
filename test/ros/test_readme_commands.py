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
The README's shell commands, taken from README.md and run as written in a shell.

As a user of a pip install runs them: in a folder of their own, with the venv activated
(``VIRTUAL_ENV`` set, its ``bin`` first on ``PATH``), on the test's domain. The identification
walk-through's restart: the bundled URDF copied as ``nominal.urdf``, then bringup with the
identified URDF in place of the bundled robot's model; the pip user's listing of a node's
parameters.
"""

import os
import signal
import subprocess

import pytest
from readme import readme_commands, shell, started
from robot_dynamics import RobotModel
from robot_dynamics.closed_loop import with_payload
from robot_dynamics.ros.nodes.description import DESCRIPTION_QOS
from std_msgs.msg import String

pytestmark = pytest.mark.ros


def test_the_identification_restart_runs_as_written(processes, probe, tmp_path):
    copy, bringup = readme_commands('simulator.plant_urdf_file:=nominal.urdf')
    identified = with_payload(RobotModel.load('planar_2r'), 1.5).to_urdf()
    (tmp_path / 'identified.urdf').write_text(identified)
    subprocess.run(shell(tmp_path, copy), check=True, env=dict(os.environ))
    nominal = (tmp_path / 'nominal.urdf').read_text()
    assert RobotModel.from_urdf(nominal).name == 'planar_2r'
    descriptions = probe.collect(String, '/robot_description', DESCRIPTION_QOS)
    proc = started(processes, tmp_path, bringup)
    # the identified URDF replaced the bundled robot's model (before: 'give exactly one of')
    probe.wait_for(lambda: descriptions, what='/robot_description')
    assert descriptions[-1][0].data == identified
    assert processes.stop(proc, signal.SIGINT, timeout=60.0) == 0, processes.output(proc)
    assert 'Traceback' not in processes.output(proc)


def test_the_parameter_listing_runs_as_written(tmp_path):
    from robot_dynamics.ros.nodes import controller_node
    (command,) = readme_commands('m.PARAMETERS')
    listed = subprocess.run(shell(tmp_path, command), check=True, capture_output=True,
                            text=True, env=dict(os.environ)).stdout.splitlines()
    assert listed == [spec.line() for spec in controller_node.PARAMETERS]
    # an empty array's default reads as one, not as rclpy's type enum
    assert 'joints = []: ' in listed[0]
