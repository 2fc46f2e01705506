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
Lockstep on the test's clock: the library's loop is the nodes' loop, and a run repeats itself.

The simulator and the controller as the nodes run them on the graph's parameter files
(``test/graph_harness.py``), paced to the clock as ``make demo`` runs them; the library's
loop is :func:`~robot_dynamics.closed_loop.closed_loop` configured from the same files: the
same joint states for a goal, and for a goal preempted by a newer one. The graph's processes over
DDS against the library: test/ros/test_simulate.py.
"""

from graph_harness import assert_same_states, library_states, LoopGraph, state_arrays
import numpy as np
import pytest
from robot_dynamics.closed_loop import goal_from_points
from robot_dynamics.controller import DEFAULT_WALL_STATE_TIMEOUT
from robot_dynamics.events import Outcome
from robot_dynamics.simulator import DEFAULT_LOCKSTEP_TIMEOUT
from robot_dynamics.trajectory import point_to_point, TrajectoryPoints

#: The simulator paced to the clock, as make demo runs it: the clock moves, and the controller's
#: watchdog looks on it (as fast as it runs, the clock stands still).
PACED = {'realtime': True}
#: When the goal is handed to the controller, and when it starts [s, simulated].
SUBMITTED, START = 1.0, 2.0
#: A stop of the host [s], longer than either wait on the wall clock that lockstep keeps.
STALL = max(DEFAULT_LOCKSTEP_TIMEOUT, DEFAULT_WALL_STATE_TIMEOUT) + 0.5


def _quintic(model, q0, q1, duration):
    """Return 21 points of the rest-to-rest quintic from ``q0`` to ``q1``."""
    times = np.linspace(0.0, duration, 21)
    sample = point_to_point(q0, q1, duration, 'quintic').sample(times)
    return TrajectoryPoints(tuple(model.joint_names), times, sample.q, sample.qd, sample.qdd)


def _points(arm, move, duration=1.5):
    """Return 21 points of the rest-to-rest quintic from the arm's position by ``move``."""
    q0 = arm.states[-1].q
    return _quintic(arm.model, q0, q0 + move, duration)


def _at(arm, t, what):
    """Run until the newest state is stamped ``t`` [s] or later."""
    arm.run_until(lambda: arm.states and arm.states[-1].t >= t, t + 2 * STALL + 1.0, what)


# the puma560's: through the processes, test_simulate.py
@pytest.mark.parametrize('robot, move', [('planar_2r', [0.6, -0.5]),
                                         ('scara', [0.5, -0.6, 0.1])])
def test_the_library_loop_gives_the_joint_states_of_the_nodes_loop(robot, move):
    arm = LoopGraph(robot, simulator=PACED)
    _at(arm, SUBMITTED, 'the time to hand the goal over')
    points = _points(arm, move)
    arm.submit(goal_from_points(arm.model, points, arm.tolerances, START, 'goal'))
    end = START + 3.0
    _at(arm, end, 'the goal and a second after it')
    record, ours = library_states(robot, arm.model, [(SUBMITTED, points, START, 'goal')],
                                  0.0, end)
    assert [e.outcome for _, e in record.events if e.outcome] == [Outcome.SUCCEEDED]
    assert [e.outcome for e in arm.ended()] == [Outcome.SUCCEEDED]
    # every state from the first, the hold before the goal too
    assert_same_states(state_arrays(arm.sim.since(0.0, end)), ours, int(round(end * 1000)) + 1)


def test_a_preempting_goal_gives_the_joint_states_of_the_library_loop():
    arm = LoopGraph('planar_2r', simulator=PACED)
    _at(arm, SUBMITTED, 'the time to hand the first goal over')
    q0 = arm.states[-1].q
    first = _quintic(arm.model, q0, q0 + [0.6, -0.5], 2.5)
    arm.submit(goal_from_points(arm.model, first, arm.tolerances, START, 'first'))
    # handed over once the first is under way, starting before the first ends
    handed, begins = START + 0.5, START + 1.2
    _at(arm, handed, 'the first goal under way')
    second = _quintic(arm.model, q0 + [0.3, -0.2], q0 + [-0.2, 0.3], 1.0)
    arm.submit(goal_from_points(arm.model, second, arm.tolerances, begins, 'second'))
    end = START + 3.0
    _at(arm, end, 'the second goal and 0.8 s after it')
    record, ours = library_states('planar_2r', arm.model,
                                  [(SUBMITTED, first, START, 'first'),
                                   (handed, second, begins, 'second')], 0.0, end)
    outcomes = {'first': Outcome.PREEMPTED, 'second': Outcome.SUCCEEDED}
    assert {e.tag: e.outcome for _, e in record.events if e.outcome} == outcomes
    assert {e.tag: e.outcome for e in arm.ended()} == outcomes
    assert len(arm.ended()) == 2
    # every state from the first: the hold, the first goal, the handover, the second
    assert_same_states(state_arrays(arm.sim.since(0.0, end)), ours, int(round(end * 1000)) + 1)


def _late_once(arm, seconds):
    """Make the controller's next answer ``seconds`` late, the simulator waiting for it."""
    answer, late = arm.sim.answer, [True]

    def answered(state):
        if late:
            late.clear()
            arm.clock.stall(seconds)
            return None
        return answer(state)
    arm.sim.answer = answered


def _run(stall):
    """Return the scara's states and commands around a goal; the host stalls ``stall`` [s]."""
    arm = LoopGraph('scara', simulator=PACED)
    _at(arm, SUBMITTED, 'the time to hand the goal over')
    points = _points(arm, [0.5, -0.6, 0.1])
    arm.submit(goal_from_points(arm.model, points, arm.tolerances._replace(goal_time=1.0),
                                START, 'goal'))
    if stall:
        # the host stops both between two steps, then while the simulator waits for an answer
        _at(arm, START + 0.2, 'the motion under way')
        arm.clock.stall(stall)
        _at(arm, START + 0.6, 'the motion on')
        _late_once(arm, stall)
    _at(arm, START + 2.0, 'the goal and 0.5 s after it')
    [ended] = arm.ended('goal')
    assert ended.outcome is Outcome.SUCCEEDED, ended.message
    assert arm.said('accepted: 21 points over 1.500 s, starting in')
    assert arm.controller.missed_cycles == 0
    # the stops are in the clock, not in simulated time
    assert arm.clock() - arm.states[-1].t >= 2 * stall
    window = arm.sim.since(START - 0.1, START + 2.0)
    commands = [c.command for c in arm.cycles if START - 0.1 <= c.t <= START + 2.0]
    return (*state_arrays(window), np.array(commands))


def test_lockstep_runs_are_equal_bit_for_bit_through_stalls_of_the_host():
    # on simulated time a stall is no fault: neither the simulator's wait for the answer nor
    # the controller's watchdog counts the time the host did not run them
    runs = _run(0.0), _run(STALL)
    assert len(runs[0][0]) == 2101 and np.all(np.diff(runs[0][0]) > 0)
    for first, second in zip(*runs):
        assert np.array_equal(first, second)
