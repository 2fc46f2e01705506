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
The loop under faults on the test's clock: a simulator or a controller killed, and a new one.

The simulator's loop and the controller with its watchdog, as the nodes run them, on the
graph's parameter files (``test/graph_harness.py``); the time-outs are the shipped defaults,
and the clock moves only as the parts wait.
"""

from graph_harness import LoopGraph
import numpy as np
import pytest
from robot_dynamics.controller import DEFAULT_STATE_TIMEOUT, DEFAULT_WALL_STATE_TIMEOUT, Mode
from robot_dynamics.events import Outcome
from robot_dynamics.follower import Goal
from robot_dynamics.trajectory import point_to_point

#: Largest joint speed [rad/s or m/s] of an arm at rest.
REST_VELOCITY = 1e-3


def _quintic(arm, offset, duration, tag='goal'):
    """Return a goal along the rest-to-rest quintic from the arm's position by ``offset``."""
    q0 = arm.states[-1].q
    times = np.linspace(0.0, duration, 21)
    sample = point_to_point(q0, q0 + offset, duration, 'quintic').sample(times)
    return Goal(tag, None, times, sample.q, sample.qd, sample.qdd, arm.tolerances)


def _holding(arm):
    arm.run_until(lambda: arm.mode() is Mode.HOLD, 1.0, 'the controller holding')


def _ended(arm, tag):
    """Return the event that ended the goal ``tag``."""
    ended = [e for e in arm.events if e.tag == tag and e.outcome is not None]
    assert len(ended) == 1, arm.events
    return ended[0]


def test_killed_simulator_safe_mode_then_resume_without_a_torque_jump():
    # real time: stale after the shipped state_timeout of wall time
    arm = LoopGraph('planar_2r', lockstep=False,
                    controller={'safe_mode': 'gravity_compensation'})
    _holding(arm)
    arm.submit(_quintic(arm, [0.6, -0.6], 3.0))
    arm.run_until(lambda: arm.mode() is Mode.TRAJECTORY, 1.0, 'tracking')
    arm.run_for(0.5)
    arm.kill_simulator()                                   # a crash, no goodbye
    killed = arm.clock()
    arm.run_until(lambda: arm.mode() is Mode.SAFE, 1.0, 'the safe mode')
    # within a look of the watchdog after the time-out
    assert DEFAULT_STATE_TIMEOUT < arm.clock() - killed <= DEFAULT_STATE_TIMEOUT \
        + 2 * arm.watch.period
    assert arm.said('no joint state for 0.05 s: safe mode (gravity compensation)')
    # gravity compensation at the last measured position; nothing from its stale velocity
    safe = next(c for c in arm.cycles if c.mode is Mode.SAFE)
    np.testing.assert_allclose(safe.command, arm.model.gravity_torques(safe.q), rtol=0,
                               atol=1e-12)
    ended = _ended(arm, 'goal')
    assert ended.outcome is not Outcome.SUCCEEDED and 'safe mode' in ended.message
    count = len(arm.cycles)
    arm.start_simulator()                    # a fresh arm, at its initial positions
    # a new source of states, taken once the old one has been silent for the source time-out
    arm.run_until(lambda: sum(c.mode is Mode.HOLD for c in arm.cycles[count:]) > 500, 5.0,
                  'half a second of holding again')
    resumed = [c for c in arm.cycles[count:] if c.mode is Mode.HOLD]
    # holding where the new arm is: what the law asks for stays inside the limits
    requested = np.array([c.requested for c in resumed])
    assert np.all(np.abs(requested) <= arm.sim.model.effort_limit)
    assert not any(c.saturated.any() for c in resumed)
    np.testing.assert_allclose(resumed[-1].q, resumed[0].q, atol=1e-3)
    np.testing.assert_allclose(resumed[0].q, [0.4, 0.8], atol=1e-3)


def test_under_lockstep_a_dead_simulator_is_noticed_on_the_wall_clock():
    # on simulated time the states' clock stops with the simulator: the wall clock tells
    arm = LoopGraph('planar_2r')
    _holding(arm)
    arm.submit(_quintic(arm, [0.6, -0.6], 3.0))
    arm.run_until(lambda: arm.mode() is Mode.TRAJECTORY, 1.0, 'tracking')
    arm.run_for(0.5)
    arm.kill_simulator()
    killed = arm.clock()
    arm.run_until(lambda: arm.mode() is Mode.SAFE, 2 * DEFAULT_WALL_STATE_TIMEOUT, 'safe mode')
    assert DEFAULT_WALL_STATE_TIMEOUT < arm.clock() - killed <= DEFAULT_WALL_STATE_TIMEOUT \
        + 2 * arm.watch.period
    assert arm.said(f'no joint state for {DEFAULT_WALL_STATE_TIMEOUT:g} s of wall time')
    ended = _ended(arm, 'goal')
    assert ended.outcome is not Outcome.SUCCEEDED and 'safe mode' in ended.message


@pytest.mark.parametrize('lockstep', [False, True], ids=['real_time', 'lockstep'])
def test_killed_controller_zero_effort_then_a_new_one_holds(lockstep):
    # without the simulated brakes, as a drive without a watchdog (with them, the default, the
    # arm stays where it was: test_simulator.py)
    arm = LoopGraph('planar_2r', lockstep=lockstep, simulator={'brake_on_timeout': False})
    _holding(arm)
    q_start = arm.states[-1].q
    arm.kill_controller()
    count = len(arm.states)
    # the simulator's command timeout: zero effort, and the arm falls under gravity
    arm.run_until(lambda: any(not s.effort.any() for s in arm.states[count:]), 2.0,
                  'zero effort after the command timeout')
    arm.run_until(lambda: arm.sim.statuses and arm.sim.statuses[-1].command_timed_out, 1.0,
                  'the time-out said')
    # lockstep: the state the dead controller did not answer is counted, and the simulator
    # steps on without waiting
    assert (arm.sim.statuses[-1].unanswered_states > 0) == lockstep
    fallen = arm.states[-1].q
    arm.run_until(lambda: np.abs(arm.states[-1].q - fallen).max() > 0.05, 2.0, 'the arm falling')
    count = len(arm.cycles)
    arm.start_controller()
    arm.run_until(lambda: [c for c in arm.cycles[count:] if c.mode is Mode.HOLD], 1.0,
                  'the new controller')
    # it holds where it finds the arm, and the motion stops there, not back at the old
    # controller's set-point
    arm.run_until(lambda: np.abs(arm.states[-1].qd).max() < REST_VELOCITY, 30.0,
                  'the arm at rest, held')
    last = arm.cycles[-1]
    assert last.mode is Mode.HOLD and not last.reference.qd.any()
    np.testing.assert_allclose(arm.states[-1].q, last.reference.q, atol=0.05)
    assert np.abs(last.reference.q - q_start).max() > 0.05
