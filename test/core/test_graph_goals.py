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
Goals in the loop on the test's clock: a newer goal preempts, a cancel stops smoothly.

The controller and the simulator as the nodes run them in lockstep, on the graph's parameter
files (``test/graph_harness.py``): a goal arrives at the simulated time the test chooses, so
nothing is held in transit and nothing is tried again.
"""

from graph_harness import LoopGraph
import numpy as np
from robot_dynamics.controller import Mode
from robot_dynamics.events import Outcome
from robot_dynamics.follower import Goal
from robot_dynamics.trajectory import point_to_point

#: The controller's default stop time [s] (config: stop_time): a cancel decelerates over it.
STOP_TIME = 0.25


def _quintic(arm, q0, q1, duration, tag, goal_time=0.0):
    """Return the goal ``tag`` along the rest-to-rest quintic from ``q0`` to ``q1``."""
    times = np.linspace(0.0, duration, 21)
    path = point_to_point(q0, q1, duration, 'quintic')
    sample = path.sample(times)
    tolerances = arm.tolerances._replace(goal_time=goal_time)
    return Goal(tag, None, times, sample.q, sample.qd, sample.qdd, tolerances), path


def _outcome(arm, tag):
    [ended] = [e for e in arm.events if e.tag == tag and e.outcome is not None]
    return ended


def test_a_newer_goal_preempts_and_cancel_stops_smoothly():
    arm = LoopGraph('planar_2r')
    arm.run_until(lambda: arm.mode() is Mode.HOLD, 1.0, 'the controller holding')
    q0 = arm.states[-1].q
    first, _ = _quintic(arm, q0, q0 + [0.8, 0.0], 20.0, 'first')
    arm.submit(first)
    arm.run_for(0.5)
    assert arm.mode() is Mode.TRAJECTORY
    newer, path = _quintic(arm, q0, q0 + [0.0, 0.6], 2.0, 'newer', goal_time=2.0)
    arm.submit(newer)
    arm.run_until(lambda: [e for e in arm.events if e.tag == 'first' and e.outcome], 0.01,
                  'the first goal ending at the next state')
    ended = _outcome(arm, 'first')
    assert ended.outcome is Outcome.PREEMPTED and 'preempted' in ended.message
    arm.run_until(lambda: [e for e in arm.events if e.tag == 'newer' and e.outcome], 5.0,
                  'the newer goal ending')
    assert _outcome(arm, 'newer').outcome is Outcome.SUCCEEDED
    np.testing.assert_allclose(arm.states[-1].q, path.end, atol=1e-3)
    # cancel in the middle of a motion: the arm comes to rest and holds there
    q0 = arm.states[-1].q
    motion, _ = _quintic(arm, q0, q0 + [-0.8, 0.5], 2.0, 'cancelled')
    arm.submit(motion)
    arm.run_until(lambda: np.abs(arm.states[-1].qd).max() > 0.3, 2.0, 'speed')
    count = len(arm.cycles)
    arm.cancel('cancelled')
    assert _outcome(arm, 'cancelled').outcome is Outcome.CANCELED
    arm.run_for(1.0)
    after = arm.cycles[count:]
    assert all(c.mode is Mode.HOLD for c in after[-len(after) // 2:])
    # smooth: the reference decelerates at most |qd| / stop_time; then it rests
    reference_qdd = np.array([c.reference.qdd for c in after])
    assert np.abs(reference_qdd).max() < 2.0 / STOP_TIME
    assert np.abs(after[-1].reference.qd).max() == 0.0
    assert np.abs(arm.states[-1].qd).max() < 1e-2
