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

"""The simulated arm (robot_dynamics.plant) under effort commands, against rk4_step."""

import numpy as np
import pytest
from robot_dynamics import InputError, RobotModel
from robot_dynamics.integrators import rk4_step
from robot_dynamics.plant import hard_stops, Plant


@pytest.mark.parametrize('friction', [False, True])
def test_effort_steps_follow_rk4_step_of_the_clipped_command(bundled_model, friction, rng):
    """Each step: the command clipped to the effort limits, rk4_step, then the hard stops."""
    # damping and Coulomb friction on every joint, scaled by its inertia (not stiff at 1 kHz)
    inertia = np.diag(bundled_model.mass_matrix(Plant(bundled_model, 1e-3).q))
    model = bundled_model.replace(damping=0.5 * inertia, friction=1e-4 * inertia)
    plant = Plant(model, 1e-3, friction=friction)
    q, qd = plant.q.copy(), plant.qd.copy()
    for _ in range(50):
        # about a third of the values beyond the limits
        command = rng.normal(scale=0.5, size=model.dof) * model.effort_limit
        plant.step(command)
        effort = np.clip(command, -model.effort_limit, model.effort_limit)
        q, qd, at_lower, at_upper = hard_stops(model, *rk4_step(model, q, qd, effort, 1e-3,
                                                                friction=friction))
        np.testing.assert_allclose(plant.q, q, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(plant.qd, qd, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(plant.effort, effort)
        np.testing.assert_array_equal(plant.at_lower, at_lower)
        np.testing.assert_array_equal(plant.at_upper, at_upper)
    assert plant.t == pytest.approx(50e-3)


def test_a_diverging_step_raises_and_keeps_the_state(planar_2r):
    plant = Plant(planar_2r, 1.0, q0=[0.1, 0.2], qd0=[1e300, 0.0])
    q, qd, t = plant.q.copy(), plant.qd.copy(), plant.t
    with pytest.raises(InputError, match='diverged'):
        plant.step(np.zeros(2))
    np.testing.assert_array_equal(plant.q, q)
    np.testing.assert_array_equal(plant.qd, qd)
    assert plant.t == t


def test_bad_commands_are_rejected_by_name(planar_2r):
    plant = Plant(planar_2r, 1e-3)
    for command in ([1.0], [np.nan, 0.0]):
        with pytest.raises(InputError, match='command'):
            plant.step(command)


def test_a_braked_step_holds_the_arm_and_the_clock_runs():
    model = RobotModel.load('planar_2r')
    plant = Plant(model, 1e-3, q0=[0.4, 0.8], qd0=[0.3, -0.2])
    for _ in range(10):
        plant.step(None)
    np.testing.assert_array_equal(plant.q, [0.4, 0.8])
    np.testing.assert_array_equal(plant.qd, [0.0, 0.0])
    assert plant.t == pytest.approx(0.01, abs=1e-15)
    plant.step([0.0, 0.0])      # released: gravity pulls the arm down
    assert plant.q[0] < 0.4
