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
The demo's goal as its client sends it, run by the graph's loop in one process: it repeats.

``robot-dynamics demo``'s request (:mod:`robot_dynamics.ros.tools.demo`: the plan as one joint
goal, started on the client's grid) is converted as the controller node's goal process converts
it (:mod:`robot_dynamics.ros.nodes.goals`) and run by the simulator's and the controller's
loops in lockstep on the test's clock (``test/graph_harness.py``), paced to it as ``make demo``
runs them or as fast as they go. The plan is the library's, whose IK (``RobotModel.ik``) the
kinematics node's /compute_ik calls. Truth: the same goal run again, started at another time.
The report's tracking figures are taken from the controller's states as the node publishes
them (100 Hz), as the demo's are from the recorded ones. The plan and its run on every robot:
test_pick_and_place.py; through the processes, the demo as a user runs it:
test/ros/test_demo.py.
"""

import io
from types import SimpleNamespace

from graph_harness import LoopGraph
import numpy as np
import pytest
from robot_dynamics import pick_and_place as pp
from robot_dynamics.controller import Mode
from robot_dynamics.events import Outcome
from robot_dynamics.ros.nodes.goals import given_tolerances, joint_goal, with_defaults
from robot_dynamics.ros.tools import demo
from robot_dynamics.ros.wire.conversions import time_msg
from robot_dynamics.stamps import ns_to_s, s_to_ns

#: The simulator paced to the clock, as make demo runs it (else as fast as the loop goes).
PACED = {'realtime': True}
#: The controller's states kept after a goal ends [s] (the demo stops its graph soon after).
AFTER = 0.5
#: A nominal duration [s] short enough to slow the planar 2R's plan for its limits (3 s).
SHORT = 2.0


def _start_ns(arm):
    """Return when the demo's client starts a goal sent now [ns], from the newest state."""
    stamp = time_msg(arm.states[-1].stamp_ns)
    client = SimpleNamespace(newest_state=lambda: SimpleNamespace(header=SimpleNamespace(
        stamp=stamp)))
    return demo.DemoClient.start_ns(client)


def _follow(arm, request, tag, duration):
    """Hand the demo's FollowJointTrajectory request over as the node does; run it to its end."""
    goal = joint_goal(request.trajectory, arm.model, given_tolerances(request, arm.model))
    arm.submit(goal._replace(tag=tag, tolerances=with_defaults(goal.tolerances, arm.tolerances)))
    # the goal starts up to START_LEAD after it is sent, and may end GOAL_TIME after its end
    arm.run_until(lambda: arm.ended(tag), demo.START_LEAD + duration + demo.GOAL_TIME + 1.0,
                  f'the goal {tag!r} ending')
    [ended] = arm.ended(tag)
    assert ended.outcome is Outcome.SUCCEEDED, ended.message


def _report(arm, since):
    """Return the tracking figures of the controller's published states from ``since`` [s]."""
    moving = [c for c in arm.published['state']
              if c.t >= since and c.mode is Mode.TRAJECTORY]
    error = np.array([c.reference.q - c.q for c in moving])
    return {'tracking_samples': len(moving),
            'rms_tracking_error': float(np.sqrt(np.mean(error ** 2))),
            'max_tracking_error': float(np.abs(error).max()),
            'missed_cycles': arm.controller.missed_cycles}


def _demo(paced, planning):
    """
    Run the demo's joint goal (``--duration`` SHORT) on the planar 2R; return its report.

    The goal is sent ``planning`` [s] after the controller began holding the arm.
    """
    arm = LoopGraph('planar_2r', simulator=PACED if paced else None)
    arm.run_until(lambda: arm.mode() is Mode.HOLD, 1.0, 'the controller holding')
    arm.run_for(planning)
    motion = pp.plan(arm.model, arm.states[-1].q, SHORT)
    since = arm.states[-1].t
    _follow(arm, demo.goal_message(arm.model, motion, _start_ns(arm)), 'demo', motion.duration)
    arm.run_for(AFTER)
    return _report(arm, since)


def test_the_demo_repeats_its_numbers_paced_and_as_fast_as_the_loop_goes():
    # the goal starts once the plan is ready, at another simulated time in each run (planning
    # through /compute_ik takes what the host gives it): the demo's client starts it on a grid,
    # so that the controller's 100 Hz states sample the same motion at the same instants (here
    # the goals are sent 3 ms apart on the 10 ms grid of those states: started there, off the
    # client's grid, the rms errors differ by 2e-5 of theirs)
    paced, fast = _demo(True, 0.373), _demo(False, 0.816)
    assert paced['missed_cycles'] == fast['missed_cycles'] == 0
    assert paced['tracking_samples'] == fast['tracking_samples'] > 0
    # the same motion, up to the rounding of the times (bit for bit with a goal at a fixed
    # time: test_graph_lockstep.py; the processes over DDS as the library's loop, bit for bit:
    # test/ros/test_simulate.py)
    for key in ('rms_tracking_error', 'max_tracking_error'):
        assert paced[key] == pytest.approx(fast[key], rel=1e-9, abs=0.0), key


def _late_by(transit):
    """
    Return a demo client whose goals reach a controller ``transit`` [s] of simulated time late.

    As in lockstep on a busy host: simulated time runs on while a goal travels. The stand-in
    controller refuses a goal whose start has passed when it comes, with the code the
    controller node gives (OLD_HEADER_TIMESTAMP); the goals here are their starts [ns].
    """
    codes = demo.FollowJointTrajectory.Result
    now, sent = [10.0], []

    def follow(action, start, duration):
        now[0] += transit
        sent.append(ns_to_s(start))
        late = start < s_to_ns(now[0])
        return SimpleNamespace(result=SimpleNamespace(
            error_code=codes.OLD_HEADER_TIMESTAMP if late else codes.SUCCESSFUL))
    client = SimpleNamespace(follow=follow, sent=sent, newest_state=lambda: SimpleNamespace(
        header=SimpleNamespace(stamp=time_msg(s_to_ns(now[0])))))
    client.start_ns = lambda lead=demo.START_LEAD: demo.DemoClient.start_ns(client, lead)
    return client


def test_a_goal_that_came_after_its_start_is_sent_again_further_ahead():
    codes = demo.FollowJointTrajectory.Result
    client, out = _late_by(3.0), io.StringIO()
    result, start = demo.DemoClient.follow_from_next_start(client, 'action', lambda s: s, 2.0,
                                                           out)
    # started 1, 2 and 4 s after the newest state (on the grid, START_EARLY before it): the
    # third comes 3 s later, before its start
    assert result.result.error_code == codes.SUCCESSFUL
    np.testing.assert_allclose(client.sent, [11.0, 15.0, 20.0] - np.float64(demo.START_EARLY),
                               rtol=0.0, atol=1e-9)
    assert ns_to_s(start) == client.sent[-1]
    assert out.getvalue().splitlines() == [
        'demo: the goal came after its start (simulated time ran on while it travelled): sent '
        f'again, starting {lead} s ahead' for lead in (2, 4)]
    # never further ahead than MAX_LEAD: then the refusal is the result
    client = _late_by(1000.0)
    result, _ = demo.DemoClient.follow_from_next_start(client, 'action', lambda s: s, 2.0,
                                                       io.StringIO())
    assert result.result.error_code == codes.OLD_HEADER_TIMESTAMP
    assert len(client.sent) == 1 + int(np.log2(demo.MAX_LEAD / demo.START_LEAD))
