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
One loop, two transports: the library's closed loop against the graph's processes in lockstep.

Over DDS, through a host that stops both processes mid-motion: the PUMA 560's joint states for a
goal are the library's. The nodes' cores in one process against the library, for one goal and
for a goal preempted by a newer one: test/core/test_graph_lockstep.py.
"""

import math

from closed_loop import PACED, quintic, SUCCEEDED
from graph_harness import assert_same_states, library_states
import numpy as np
import pytest
from robot_dynamics.controller import DEFAULT_WALL_STATE_TIMEOUT
from robot_dynamics.ros.wire.conversions import to_seconds
from robot_dynamics.simulator import DEFAULT_LOCKSTEP_TIMEOUT
from robot_dynamics.trajectory import TrajectoryPoints

pytestmark = pytest.mark.ros

#: Simulated time [s] from the graph's readiness to the goal's start (a whole second,
#: :func:`_start`); the goal is sent before it with simulated time held (``Loop.send_before``),
#: on a loop paced to the wall clock, whose set-up takes as long as the host makes it.
LEAD = 2.0
#: Simulated time [s] compared after the start.
COMPARED = 3.0
#: A stop of both processes [s]: longer than lockstep_timeout and wall_state_timeout, which it
#: must not trip on simulated time; shorter than the discovery lease (5 s), after which DDS
#: drops the stopped processes and their pending replies.
STALL = max(DEFAULT_LOCKSTEP_TIMEOUT, DEFAULT_WALL_STATE_TIMEOUT) + 0.5


def _points(msg):
    """Return the TrajectoryPoints of a JointTrajectory message (what a trajectory file holds)."""
    def rows(field):
        return np.array([getattr(p, field) for p in msg.points])
    return TrajectoryPoints(tuple(msg.joint_names),
                            np.array([to_seconds(p.time_from_start) for p in msg.points]),
                            rows('positions'), rows('velocities'), rows('accelerations'))


def _start(arm):
    """Return the first whole second of simulated time at least LEAD after the newest state."""
    return float(math.ceil(arm.now() + LEAD))


def _graph_states(arm, start, end):
    """Return the graph's joint states from ``start`` to ``end``: (t, q, qd, effort) arrays."""
    arm.probe.wait_for(lambda: arm.now() >= end, timeout=120.0, what=f'{end} s simulated')
    states = [m for m, _ in arm.states if start <= to_seconds(m.header.stamp) <= end + 1e-9]
    order = [list(states[0].name).index(j) for j in arm.model.joint_names]
    return (np.array([to_seconds(m.header.stamp) for m in states]),
            *(np.array([np.asarray(getattr(m, f))[order] for m in states])
              for f in ('position', 'velocity', 'effort')))


def _assert_same(graph_states, library):
    assert_same_states(graph_states, library, int(round(COMPARED * 1000)) + 1)


def test_simulate_gives_the_joint_states_of_the_lockstep_graph(loop):
    # one robot and one goal: the library's loop is the nodes' cores in one process, on the
    # other robots and for a preempted goal (test/core/test_graph_lockstep.py); here the
    # transport, through a host that stops both processes mid-motion
    arm = loop('puma560', simulator=PACED)
    q0, start = arm.position(), _start(arm)
    msg, _ = quintic(arm.model, q0, q0 + [0.3, -0.2, 0.2, 0.3, -0.3, 0.4], 1.5)
    msg.header.stamp.sec = int(start)
    handle = arm.send_before(start, msg)
    arm.probe.wait_for(lambda: arm.now() > start + 0.2, what='the motion under way')
    arm.stall(STALL)
    result = arm.result(handle)
    assert result.status == SUCCEEDED, result.result.error_string
    end = start + COMPARED
    record, ours = library_states('puma560', arm.model, [(1.0, _points(msg), start, 'goal')],
                                  start, end)
    assert [e.outcome.value for _, e in record.events if e.tag == 'goal' and e.outcome] \
        == ['succeeded']
    _assert_same(_graph_states(arm, start, end), ours)
