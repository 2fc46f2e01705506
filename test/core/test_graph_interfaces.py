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
The command interfaces on the test's clock: a goal tracked, and the safe command of a stall.

The simulator and the controller of planar_2r as the nodes run them
(``test/graph_harness.py``), both set to one ``command_interface``. Through the processes of
``bringup --hardware``, with the hardware's joint order and topics, the interface not checked
here: test/ros/test_hardware.py.
"""

from graph_harness import LoopGraph
import numpy as np
import pytest
from robot_dynamics.controller import Mode
from robot_dynamics.events import Outcome
from robot_dynamics.follower import Goal
from robot_dynamics.trajectory import point_to_point

#: Largest joint speed [rad/s] of an arm at rest.
REST_VELOCITY = 1e-3


def _arm(interface, lockstep):
    """Return planar_2r's loop with both nodes on ``interface``, held at rest."""
    arm = LoopGraph('planar_2r', lockstep=lockstep,
                    simulator={'command_interface': interface},
                    controller={'command_interface': interface})
    arm.run_until(lambda: arm.mode() is Mode.HOLD and arm.sim.statuses
                  and np.abs(arm.states[-1].qd).max() < REST_VELOCITY, 5.0,
                  'the arm held at rest')
    # what the simulator says it takes
    assert arm.sim.statuses[-1].interface == interface
    return arm


def _quintic(arm, offset, duration, goal_time=0.0):
    """Return the goal along the rest-to-rest quintic from the arm's position by ``offset``."""
    q0 = arm.states[-1].q
    path = point_to_point(q0, q0 + offset, duration, 'quintic')
    times = np.linspace(0.0, duration, 21)
    sample = path.sample(times)
    return Goal('goal', None, times, sample.q, sample.qd, sample.qdd,
                arm.tolerances._replace(goal_time=goal_time)), path


# the velocity interface through the processes: test_hardware.py
@pytest.mark.parametrize('interface, tolerance', [
    # the effort loop ends within its default goal tolerance; the position follower on the goal
    ('effort', 1e-2), ('position', 1e-12)])
def test_each_command_interface_brings_the_arm_to_the_goal(interface, tolerance):
    # lockstep on simulated time, as test_hardware.py runs the arm
    arm = _arm(interface, lockstep=True)
    q0 = arm.states[-1].q
    # held where it is
    np.testing.assert_allclose(arm.cycles[-1].reference.q, q0, atol=1e-3)
    goal, path = _quintic(arm, [0.5, -0.5], 2.0, goal_time=2.0)
    arm.submit(goal)
    arm.run_until(arm.ended, 5.0, 'the goal ending')
    [ended] = arm.ended()
    assert ended.outcome is Outcome.SUCCEEDED, ended.message
    arm.run_until(lambda: np.abs(arm.states[-1].q - path.end).max() < tolerance, 10.0,
                  f'the arm on the goal within {tolerance:g}')


# the position interface and the safe command sent on a stop: test_graph_hardware.py (the
# velocity interface's stop through the processes: test_hardware.py); gravity compensation
# after a killed simulator: test_graph_faults.py
@pytest.mark.parametrize('interface', ['effort', 'velocity'])
def test_a_stall_of_the_states_sends_the_safe_command(interface):
    # real time, as on an arm: its joint states stop while the controller runs on
    arm = _arm(interface, lockstep=False)
    goal, _ = _quintic(arm, [0.6, -0.6], 4.0)
    arm.submit(goal)
    arm.run_until(lambda: np.abs(arm.states[-1].qd).max() > 0.1, 4.0, 'the arm moving')

    def safe(command):
        # zero effort (the shipped safe_mode) or zero velocity, exactly: no motion commanded
        return command is not None and not command.any()
    count = len(arm.cycles)
    arm.stall_simulator()
    arm.run_until(lambda: any(safe(c.command) for c in arm.cycles[count:]), 1.0,
                  'the safe command after the stall')
    assert arm.said('safe mode')
    # it is repeated while the states stay stale: a driver that missed one gets the next
    count = len(arm.cycles)
    arm.run_until(lambda: sum(safe(c.command) for c in arm.cycles[count:]) >= 3, 1.0,
                  'the safe command again')
    assert all(c.mode is Mode.SAFE and safe(c.command) for c in arm.cycles[count:])
    arm.resume_simulator()
    arm.run_until(lambda: arm.mode() is Mode.HOLD, 1.0, 'holding again')
    # and the last command of a controller that stops
    assert safe(arm.controller.final_command().command)
