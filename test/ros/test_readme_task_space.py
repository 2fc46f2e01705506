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
The README's task-space client, as written, against the running SCARA graph (lockstep).

The code block is taken from README.md and run as a process of its own on the test's domain:
its goal succeeds and the tip ends where it asked, by the library's forward kinematics.
"""

import re

from closed_loop import at_rest
import numpy as np
import pytest
from readme import readme_python

pytestmark = pytest.mark.ros

MOVE = re.compile(r'^dx, dy, dz = ([-\d., ]+?)\s+#', re.M)
TIMEOUT = 120.0
#: The SCARA's quill friction over the shipped stiffness [m]: what the law leaves (README).
FRICTION = 2.0 / 1000.0


def test_the_readme_task_space_client_moves_the_tip_where_it_asks(loop, processes, tmp_path):
    code = readme_python("'/controller/follow_cartesian_trajectory'")
    (move,) = MOVE.findall(code)
    move = np.array([float(v) for v in move.split(',')])
    run = loop('scara')
    start = run.model.fk(run.position())[:3, 3]
    script = tmp_path / 'client.py'
    script.write_text(code)
    proc = processes.start('client', ['python', str(script)])
    assert proc.wait(TIMEOUT) == 0, processes.output(proc)
    assert processes.output(proc).split() == ['0'], processes.output(proc)   # SUCCESSFUL
    run.probe.wait_for(lambda: at_rest(run.states), what='the arm at rest')
    np.testing.assert_allclose(run.model.fk(run.position())[:3, 3], start + move,
                               atol=1e-3 + FRICTION)
