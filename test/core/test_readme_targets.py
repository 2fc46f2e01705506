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
The README Python client's target for the planar 2R, reached by the nodes' cores in one process.

The client's comment gives the planar 2R's target. The kinematics node's IK (the library's
``RobotModel.ik``, on the model the node builds from ``/robot_description`` with the chain
parameters of config/planar_2r.yaml, seeded with the newest joint state) solves it as the
client asks: the position, the orientation the client sends, the node's default options;
ten times as far it finds no solution. The graph (``test/graph_harness.py``) given the goal
the client sends to that solution succeeds and ends at rest with the tip on the target. The
client itself runs over DDS against the SCARA's graph in test/ros/test_readme_client.py.
"""

import re

from graph_harness import LoopGraph
import numpy as np
from readme import readme_python
from robot_dynamics import parameter_files, RobotModel
from robot_dynamics.closed_loop import goal_from_points
from robot_dynamics.events import Outcome
from robot_dynamics.model import chain_options, from_source
from robot_dynamics.trajectory import TrajectoryPoints

#: The comment above the client's target that gives the planar 2R's.
PLANAR_2R = re.compile(r'the planar 2R\n#[^\n]*: x, y, z = ([-\d., ]+)\n')
#: The client's one trajectory point: the solution, reached 2 s after the goal's start.
TIME_FROM_START = 2.0


def _kinematics_model(robot):
    """Return the kinematics node's model: the model node's description, its chain options."""
    files = [parameter_files.parameter_file(robot)]
    model_node = parameter_files.file_values(files, 'model')
    _, urdf = from_source(robot=model_node['robot'], **chain_options(model_node.get))
    kinematics = parameter_files.file_values(files, 'kinematics')
    return RobotModel.from_urdf(urdf, **chain_options(kinematics.get))


def _request(position):
    """Return the tip pose the client asks for: ``position``, the orientation w = 1."""
    target = np.eye(4)
    target[:3, 3] = position
    return target


def test_the_readme_client_target_of_the_planar_2r_is_solved_and_reached():
    code = readme_python("'/compute_ik'", 'ActionClient')
    (text,) = PLANAR_2R.findall(code)
    tip = np.array([float(value) for value in text.split(',')])
    # the request the node answers with its defaults: a pose of identity orientation, no seed,
    # mask, tolerance, timeout nor position_only
    assert set(re.findall(r'request\.(\w+)', code)) == {'pose_stamped'}
    assert 'target.orientation.w = 1.0' in code
    kinematics = _kinematics_model('planar_2r')
    arm = LoopGraph('planar_2r')
    at = arm.hold_at_rest()
    # the node seeds with the newest joint state, by name
    seed = at[arm.model.joint_indices(list(kinematics.joint_names))]
    far = kinematics.ik(_request(10 * tip), seed=seed)
    assert not far.success
    solved = kinematics.ik(_request(tip), seed=seed)
    assert solved.success, solved.reason
    points = TrajectoryPoints(tuple(kinematics.joint_names), np.array([TIME_FROM_START]),
                              solved.q[np.newaxis])
    arm.submit(goal_from_points(arm.model, points, arm.tolerances, None, 'readme'))
    arm.run_until(lambda: arm.ended('readme'), TIME_FROM_START + 2.0, 'the goal ending')
    [ended] = arm.ended('readme')
    assert ended.outcome is Outcome.SUCCEEDED, ended.message
    # the arm where the README asked for, by the library's forward kinematics
    q = arm.hold_at_rest()
    np.testing.assert_allclose(arm.model.fk(q)[:3, 3], tip, atol=1e-3)
