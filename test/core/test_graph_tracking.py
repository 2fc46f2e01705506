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
The loop tracks a quintic on the test's clock, each robot within its bound.

The simulator and the controller in lockstep as the nodes run them, on the robot's parameter
files (``test/graph_harness.py``). Through the processes, a goal end to end with the
controller's state messages (planar_2r): test/ros/test_controller_node.py.
"""

from graph_harness import LoopGraph, state_arrays
import numpy as np
import pytest
from robot_dynamics.controller import Mode
from robot_dynamics.events import Outcome
from robot_dynamics.follower import Goal
from robot_dynamics.trajectory import point_to_point

#: Largest joint speed [rad/s or m/s] of an arm at rest.
REST_VELOCITY = 1e-3
#: How long the motion lasts [s], and how long after the goal is handed over it starts.
DURATION, LEAD = 2.0, 0.5
#: How long after its last point the goal may take to settle [s].
GOAL_TIME = 2.0


def _rms(error):
    return np.sqrt(np.mean(np.asarray(error) ** 2))


@pytest.mark.parametrize('robot, bound', [('planar_2r', 1e-3), ('scara', 1e-3),
                                          ('puma560', 1e-2)])
def test_the_loop_tracks_a_quintic(robot, bound):
    arm = LoopGraph(robot)
    model = arm.model
    arm.run_until(lambda: arm.mode() is Mode.HOLD
                  and np.abs(arm.states[-1].qd).max() < REST_VELOCITY, 5.0,
                  'the arm held at rest')
    q0 = arm.states[-1].q
    q1 = np.clip(q0 + np.where(model.is_prismatic, 0.1, 0.6), model.lower, model.upper)
    path = point_to_point(q0, q1, DURATION, 'quintic')
    times = np.linspace(0.0, DURATION, 21)
    sample = path.sample(times)
    # at a set time: the joint states are compared with the quintic at their stamps
    start = arm.states[-1].t + LEAD
    arm.submit(Goal('goal', start, times, sample.q, sample.qd, sample.qdd,
                    arm.tolerances._replace(goal_position=np.full(model.dof, bound),
                                            goal_time=GOAL_TIME)))
    arm.run_until(arm.ended, LEAD + DURATION + GOAL_TIME, 'the goal ending')
    [ended] = arm.ended()
    assert ended.outcome is Outcome.SUCCEEDED, ended.message
    # a state and its cycle every period, all through the motion
    samples = DURATION / arm.controller.period
    # the controller's own account of the motion
    moving = [c for c in arm.cycles if c.mode is Mode.TRAJECTORY]
    assert len(moving) >= samples
    assert _rms([c.reference.q - c.q for c in moving]) < bound
    # independently: the simulated joint states against the planned quintic at their stamps
    t, q, _, _ = state_arrays(arm.sim.since(start, start + DURATION))
    assert len(t) >= samples
    assert _rms(q - path.sample(t - start).q) < bound
    np.testing.assert_allclose(arm.states[-1].q, q1, atol=bound)
