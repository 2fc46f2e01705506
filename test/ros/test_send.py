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
``robot-dynamics send`` against a stand-in action server: its goal, results, Ctrl-C and absence.

The server runs in this process on the module's domain and does what the controller's action
would: it takes the goal and succeeds, aborts with an error code and string, rejects it, or runs
until the goal is canceled (or goes away). The installed console script runs once end to end
(its exit status and output, and the goal that arrives, against the trajectory file); the other
cases run the command's handler in this process, still over DDS, with a real SIGINT for Ctrl-C.
What send decides without a server (a bad file refused, a Cartesian file's goal):
test/core/test_send_push_files.py.
"""

import threading
import time

from control_msgs.action import FollowJointTrajectory
from interrupt import interrupted
import numpy as np
import pytest
import rclpy
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.context import Context
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from robot_dynamics.ros.tools.send import Patience
from robot_dynamics.ros.wire.conversions import to_seconds
from robot_dynamics.trajectory import TrajectoryPoints

TIMEOUT = 60.0
Result = FollowJointTrajectory.Result


class StandIn:
    """A FollowJointTrajectory server on its own node and executor threads."""

    def __init__(self, domain, action, behaviour, answer_after=0.0):
        """``answer_after`` [s]: how long the goal's answer waits after its request came."""
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = Node('stand_in', context=self.context)
        self.goals, self.canceled, self.closing = [], threading.Event(), threading.Event()
        self.requested = threading.Event()
        self.behaviour = behaviour
        group = ReentrantCallbackGroup()

        def answer(goal):
            self.requested.set()
            time.sleep(answer_after)
            return GoalResponse.REJECT if behaviour == 'reject' else GoalResponse.ACCEPT
        self.server = ActionServer(
            self.node, FollowJointTrajectory, action, self.execute, callback_group=group,
            goal_callback=answer, cancel_callback=lambda handle: CancelResponse.ACCEPT)
        self.executor = MultiThreadedExecutor(num_threads=2, context=self.context)
        self.executor.add_node(self.node)
        self.spinning = True
        self.thread = threading.Thread(target=self.spin, daemon=True)
        self.thread.start()

    def spin(self):
        while self.spinning:
            try:
                self.executor.spin_once(timeout_sec=0.05)
            except ExternalShutdownException:
                return

    def execute(self, handle):
        self.goals.append(handle.request)
        if self.behaviour == 'succeed':
            handle.succeed()
            return Result(error_code=Result.SUCCESSFUL, error_string='goal reached')
        if self.behaviour == 'abort':
            handle.abort()
            return Result(error_code=Result.PATH_TOLERANCE_VIOLATED,
                          error_string="path tolerance violated: {'joint1': 0.2}")
        deadline = time.monotonic() + TIMEOUT
        while not handle.is_cancel_requested and time.monotonic() < deadline:
            if self.closing.is_set():       # gone without a word, as a killed controller
                return Result()
            time.sleep(0.01)
        self.canceled.set()
        handle.canceled()
        return Result(error_code=Result.SUCCESSFUL, error_string='canceled')

    def close(self):
        self.spinning = False
        self.thread.join()
        self.server.destroy()
        self.node.destroy_node()
        self.closing.set()          # a goal still running ends with no server to answer for it
        self.context.try_shutdown()


@pytest.fixture(scope='module')
def stand_ins(ros_domain):
    """Return ``get(action, behaviour, answer_after=0.0)``: the module's stand-in servers."""
    servers = {}

    def get(action, behaviour, answer_after=0.0):
        if action not in servers:
            servers[action] = StandIn(ros_domain, action, behaviour, answer_after)
        return servers[action]
    yield get
    for server in servers.values():
        server.close()


@pytest.fixture
def trajectory_file(tmp_path):
    times = np.array([0.5, 1.0, 1.75])
    q = np.array([[0.1, 0.2], [0.3, 0.1], [0.35, -0.05]])
    qd = np.array([[0.0, 0.0], [0.5, -0.3], [0.0, 0.0]])
    qdd = np.array([[0.0, 0.0], [0.1, 0.2], [0.0, 0.0]])
    points = TrajectoryPoints(('joint1', 'joint2'), times, q, qd, qdd)
    path = tmp_path / 'trajectory.yaml'
    path.write_text(points.to_yaml())
    return path, points


@pytest.mark.ros
def test_send_delivers_the_file_and_reports_success(processes, stand_ins, trajectory_file):
    path, points = trajectory_file
    server = stand_ins('/arm/follow_joint_trajectory', 'succeed')
    proc = processes.start('send', ['robot-dynamics', 'send', str(path), '--action',
                                    '/arm/follow_joint_trajectory'])
    proc.wait(TIMEOUT)
    status, output = proc.returncode, processes.output(proc)
    assert status == 0, output
    assert 'send: succeeded: goal reached' in output
    (goal,) = server.goals
    trajectory = goal.trajectory
    assert list(trajectory.joint_names) == ['joint1', 'joint2']
    assert to_seconds(trajectory.header.stamp) == 0.0               # start at once
    np.testing.assert_array_equal([p.positions for p in trajectory.points], points.positions)
    np.testing.assert_array_equal([p.velocities for p in trajectory.points], points.velocities)
    np.testing.assert_array_equal([p.accelerations for p in trajectory.points],
                                  points.accelerations)
    np.testing.assert_allclose([to_seconds(p.time_from_start) for p in trajectory.points],
                               points.time_from_start, atol=1e-9)


@pytest.mark.ros
@pytest.mark.parametrize('behaviour, words', [
    ('abort', "PATH_TOLERANCE_VIOLATED: path tolerance violated: {'joint1': 0.2}"),
    ('reject', 'rejected the goal'),
])
def test_send_reports_the_controllers_error(here, stand_ins, trajectory_file, behaviour, words):
    path, _ = trajectory_file
    stand_ins(f'/{behaviour}/follow_joint_trajectory', behaviour)
    status, output = here('send', str(path), '--action', f'/{behaviour}/follow_joint_trajectory')
    assert status == 1, output
    assert words in output


@pytest.mark.ros
def test_send_without_a_server(here, trajectory_file):
    path, _ = trajectory_file
    status, output = here('send', str(path), '--action', '/nowhere/follow_joint_trajectory',
                          '--timeout', '1')
    assert status == 1
    assert 'no action server /nowhere/follow_joint_trajectory answered within 1 s' in output


@pytest.mark.ros
@pytest.mark.parametrize('when', ['running', 'answering'])
def test_interrupting_send_cancels_the_goal(here, stand_ins, trajectory_file, when):
    # 'answering': Ctrl-C while the server's acceptance is on its way (it answers 0.3 s after
    # the request): the goal it then accepts is canceled all the same
    path, _ = trajectory_file
    action = f'/{when}/follow_joint_trajectory'
    server = stand_ins(action, 'run', answer_after=0.3 if when == 'answering' else 0.0)
    status, output = interrupted(
        lambda: here('send', str(path), '--action', action),
        lambda: server.goals if when == 'running' else server.requested.is_set())
    assert server.requested.is_set(), output
    assert status == 130, output
    assert server.canceled.wait(TIMEOUT)
    assert 'interrupted; goal canceled' in output


@pytest.mark.ros
def test_interrupting_send_after_its_server_went_away(ros_domain, here, trajectory_file):
    # the controller stopped (bringup's Ctrl-C) while the goal ran, then Ctrl-C on send: it
    # ends at once and says that no one answered the cancel (before: "goal canceled", 5-10 s)
    path, _ = trajectory_file
    server = StandIn(ros_domain, '/brief/follow_joint_trajectory', 'run')
    try:
        status, output = interrupted(
            lambda: here('send', str(path), '--action', '/brief/follow_joint_trajectory'),
            lambda: server.goals, before=server.close)
        assert server.goals, output
        assert status == 130, output
        assert 'interrupted; cancel requested, no answer' in output
        assert 'goal canceled' not in output and 'Traceback' not in output
    finally:
        if server.spinning:
            server.close()


def test_the_result_is_waited_for_while_the_goal_shows_progress():
    # a 5 s goal sent at t = 100 s on the monotonic clock, given up 60 s after its end ...
    patience = Patience(100.0, 5.0, margin=60.0)
    assert patience() == 165.0
    patience.feedback(104.0)                # feedback within its nominal time changes nothing
    assert patience() == 165.0
    # ... unless it still runs then (simulated time slower than the wall clock): 60 s after
    # its newest feedback
    patience.feedback(150.0)
    assert patience() == 210.0
    patience.feedback(149.0)                # a late callback never brings the deadline back
    assert patience() == 210.0
