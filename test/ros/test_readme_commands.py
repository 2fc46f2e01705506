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
from pathlib import Path
import re
import shlex
import signal
import subprocess
import sys
import time

import pytest
from robot_dynamics import RobotModel
from robot_dynamics.closed_loop import with_payload
from robot_dynamics.ros.nodes.description import DESCRIPTION_QOS
from std_msgs.msg import String

pytestmark = pytest.mark.ros

README = Path(__file__).resolve().parents[2] / 'README.md'
RUNNING = 'running; Ctrl-C stops every node'
TIMEOUT = 240.0


def readme_commands(marker):
    """Return the commands of the README's one bash block holding ``marker``, one per line."""
    blocks = re.findall(r'```bash\n(.*?)```', README.read_text(), re.S)
    found = [block for block in blocks if marker in block]
    assert len(found) == 1, f'the README should hold one bash block with {marker!r}'
    text = re.sub(r'\\\n\s*', '', found[0])          # continuation lines joined
    return [' '.join(line.split()) for line in text.splitlines() if line.strip()]


def _shell(folder, command):
    """Return ``bash -c`` of ``command`` in ``folder``, the venv activated as a user has it."""
    venv = shlex.quote(sys.prefix)
    return ['bash', '-c', f'cd {shlex.quote(str(folder))} && export VIRTUAL_ENV={venv} '
                          f'PATH={venv}/bin:"$PATH" && exec {command}']


def test_the_identification_restart_runs_as_written(processes, probe, tmp_path):
    copy, bringup = readme_commands('simulator.plant_urdf_file:=nominal.urdf')
    identified = with_payload(RobotModel.load('planar_2r'), 1.5).to_urdf()
    (tmp_path / 'identified.urdf').write_text(identified)
    subprocess.run(_shell(tmp_path, copy), check=True, env=dict(os.environ))
    nominal = (tmp_path / 'nominal.urdf').read_text()
    assert RobotModel.from_urdf(nominal).name == 'planar_2r'
    descriptions = probe.collect(String, '/robot_description', DESCRIPTION_QOS)
    proc = processes.start('bringup', _shell(tmp_path, bringup))
    deadline = time.monotonic() + TIMEOUT
    while RUNNING not in processes.output(proc):
        assert proc.poll() is None and time.monotonic() < deadline, processes.output(proc)
        time.sleep(0.1)
    # the identified URDF replaced the bundled robot's model (before: 'give exactly one of')
    probe.wait_for(lambda: descriptions, what='/robot_description')
    assert descriptions[-1][0].data == identified
    assert processes.stop(proc, signal.SIGINT, timeout=60.0) == 0, processes.output(proc)
    assert 'Traceback' not in processes.output(proc)


def test_the_parameter_listing_runs_as_written(tmp_path):
    from robot_dynamics.ros.nodes import controller_node
    (command,) = readme_commands('m.PARAMETERS')
    listed = subprocess.run(_shell(tmp_path, command), check=True, capture_output=True,
                            text=True, env=dict(os.environ)).stdout.splitlines()
    assert len(listed) == len(controller_node.PARAMETERS)
    for line, spec in zip(listed, controller_node.PARAMETERS):
        assert line.startswith(f'{spec.name} {spec.default} ') and spec.description in line
