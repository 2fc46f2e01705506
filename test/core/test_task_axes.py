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

"""One task-axis rule: the rows the tip moves, for IK, the laws and the node's parameters."""

import itertools

import numpy as np
import pytest

from robot_dynamics import RobotModel
from robot_dynamics.control import ResolvedAcceleration
from robot_dynamics.errors import InputError
from robot_dynamics.spatial import matrix_to_rotvec
from robot_dynamics.task_space import configured_task_law, OperationalSpace


def fd_jacobian(model, q, h=1e-6):
    """Tip Jacobian (6, n) by central differences of FK: independent of model.jacobian."""
    J = np.empty((6, model.dof))
    for j in range(model.dof):
        dq = np.zeros(model.dof)
        dq[j] = h
        Tp, Tm = model.fk(q + dq), model.fk(q - dq)
        J[:3, j] = (Tp[:3, 3] - Tm[:3, 3]) / (2 * h)
        J[3:, j] = matrix_to_rotvec(Tp[:3, :3] @ Tm[:3, :3].T) / (2 * h)
    return J


def spanned_axes(model, samples=6):
    """Return the first rows (in row order) of a full-rank set of the FD Jacobian's rows."""
    rng = np.random.default_rng(42)
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    Js = [fd_jacobian(model, q) for q in rng.uniform(lo, hi, (samples, model.dof))]

    def rank(rows):
        return max(np.linalg.matrix_rank(J[list(rows)], tol=1e-6) for J in Js)
    full = rank(range(6))
    first = next(c for c in itertools.combinations(range(6), full) if rank(c) == full)
    mask = np.zeros(6)
    mask[list(first)] = 1.0
    return mask


@pytest.mark.parametrize('name', RobotModel.available())
def test_the_one_rule_is_the_axes_the_jacobian_spans(name):
    model = RobotModel.load(name)
    np.testing.assert_array_equal(model.task_mask, spanned_axes(model))
    # IK, the task-space law and the resolved-acceleration law use that mask by default
    law = OperationalSpace(model, 100.0)
    np.testing.assert_array_equal(law.mask, model.task_mask)
    np.testing.assert_array_equal(ResolvedAcceleration(model, 100.0, 20.0).mask,
                                  model.task_mask)


def test_planar_arms_control_their_plane():
    # planar_2r turns about y: it moves x, z (not y); planar_3r about z: x, y and yaw
    np.testing.assert_array_equal(RobotModel.load('planar_2r').task_mask, [1, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(RobotModel.load('planar_3r').task_mask, [1, 1, 0, 0, 0, 1])
    np.testing.assert_array_equal(RobotModel.load('scara').task_mask, [1, 1, 1, 0, 0, 0])


def parameters(**values):
    return lambda name, default: values.get(name.replace('.', '_'), default)


def test_an_axis_the_arm_cannot_move_is_refused():
    scara = RobotModel.load('scara')
    with pytest.raises(InputError, match=r'cartesian.controlled_axes: the joints cannot move the '
                       r'tip along .rx.; they move it along \[.x., .y., .z., .rz.\]'):
        configured_task_law(scara, parameters(cartesian_controlled_axes=['rx']))
    with pytest.raises(InputError, match=r"only 3 of \['x', 'y', 'z', 'rz'\]"):
        OperationalSpace(scara, 100.0, mask=[1, 1, 1, 0, 0, 1])
    # x, y and yaw all come from the two arm joints (the quill only moves z): refused
    with pytest.raises(InputError, match=r"only 2 of \['x', 'y', 'rz'\]"):
        configured_task_law(scara, parameters(cartesian_controlled_axes=['x', 'y', 'rz']))
    law = configured_task_law(scara, parameters(cartesian_controlled_axes=['x', 'rz']))
    np.testing.assert_array_equal(law.mask, [1, 0, 0, 0, 0, 1])


def test_a_posture_outside_the_limits_is_refused():
    scara = RobotModel.load('scara')
    with pytest.raises(InputError, match=r"nullspace.posture: joint '\w+' at 100 is outside its "
                       r'limits \[-?[\d.]+, [\d.]+\]'):
        configured_task_law(scara, parameters(nullspace_posture=[100.0, 100.0, 100.0]))
    inside = (scara.lower + scara.upper) / 2
    law = configured_task_law(scara, parameters(nullspace_posture=inside.tolist()))
    np.testing.assert_array_equal(law.posture, inside)
