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
The README's Python client, as written, against the running graph of the SCARA it is written for.

The code block is taken from README.md and run as a process of its own on the test's domain,
next to model, kinematics, simulator and controller processes: as written it reaches its target
(the goal succeeds and the arm's tip ends there); with the target moved out of reach it stops on
the failed IK and sends no goal. The planar 2R's target, which the client's comment gives, solved
by the kinematics node's IK and reached by the nodes' cores in one process:
test/core/test_readme_targets.py.
"""

from action_msgs.msg import GoalStatusArray
from closed_loop import at_rest
import numpy as np
import pytest
from readme import readme_python
from robot_dynamics.parameter_files import parameter_file

pytestmark = pytest.mark.ros

#: The snippet's target, the only line the other run changes.
TARGET = 'x, y, z = 0.45, 0.2, 0.3'
#: The bundled robot the snippet is written for.
ROBOT = 'scara'
STATUS = '/controller/follow_joint_trajectory/_action/status'
TIMEOUT = 120.0


def readme_client():
    """Return the README's Python block that calls /compute_ik and sends the goal."""
    code = readme_python("'/compute_ik'", 'ActionClient')
    assert code.count(TARGET) == 1
    return code


def target():
    """Return the snippet's target as written in it [m]."""
    return np.array([float(value) for value in TARGET.split('=')[1].split(',')])


def test_the_readme_client_checks_success_and_reaches_its_target(loop, processes, probe,
                                                                 tmp_path):
    run = loop(ROBOT)
    processes.start('kinematics', ['kinematics_node', '--ros-args', '-r', '__node:=kinematics',
                                   '-r', '~/solve_ik:=/compute_ik', '--params-file',
                                   str(parameter_file(ROBOT))])
    statuses = probe.collect(GoalStatusArray, STATUS)
    code = readme_client()
    tip = target()

    far = tmp_path / 'far.py'
    far.write_text(code.replace(TARGET, 'x, y, z = ' + ', '.join(map(repr, (10 * tip).tolist()))))
    proc = processes.start('client_far', ['python', str(far)])
    assert proc.wait(TIMEOUT) == 1
    output = processes.output(proc)
    assert 'no IK solution (-31)' in output and 'Traceback' not in output, output

    near = tmp_path / 'client.py'
    near.write_text(code)
    proc = processes.start('client', ['python', str(near)])
    assert proc.wait(TIMEOUT) == 0, processes.output(proc)
    assert processes.output(proc).split() == ['0'], processes.output(proc)   # SUCCESSFUL
    # one goal went through the action in all: the second run's
    probe.wait_for(lambda: statuses and statuses[-1][0].status_list, what='the goal status')
    goals = {bytes(s.goal_info.goal_id.uuid) for m, _ in statuses for s in m.status_list}
    assert len(goals) == 1
    # and the arm is where the README asked for, by the library's forward kinematics
    probe.wait_for(lambda: at_rest(run.states), what='the arm at rest')
    state = run.states[-1][0]
    q = np.array(state.position)[run.model.indices_in(state.name)]
    np.testing.assert_allclose(run.model.fk(q)[:3, 3], tip, atol=1e-3)
