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

"""The controller's goal process: the package it runs, how its end is told, its outbox."""

import os
from pathlib import Path
import signal
import socket
import subprocess
import sys
import threading
from types import SimpleNamespace

import numpy as np
import pytest
from robot_dynamics.ros.nodes import goals, runner
from robot_dynamics.ros.nodes.goals import (CANCEL, GoalProcess, how_it_ended, JOINT, Outbox,
                                            TARGET)
from robot_dynamics.ros.nodes.runner import NodeFailure

#: Generous limit for a process to start and end [s] (its imports, on a busy host).
TIMEOUT = 120.0


def test_the_goal_process_runs_the_controllers_package_whatever_the_working_directory(
        tmp_path, monkeypatch, capfd):
    # started with `python -m` in a checkout's root, the child ran the source tree beside an
    # installed controller (and compiled the library's kernels into it)
    decoy = tmp_path / 'robot_dynamics'
    decoy.mkdir()
    (decoy / '__init__.py').write_text("raise SystemExit('the decoy package was imported')\n")
    monkeypatch.chdir(tmp_path)
    ours, theirs = socket.socketpair()
    fd = theirs.detach()
    child = goals.spawn(fd)
    os.close(fd)
    ours.close()            # no set-up comes: the child ends at once, status 0
    assert child.wait(TIMEOUT) == 0, capfd.readouterr().err


class ControllerNode:
    """What GoalProcess asks of the controller node; its guard condition as an event."""

    context = SimpleNamespace(get_domain_id=lambda: int(os.environ.get('ROS_DOMAIN_ID', '0')))

    def __init__(self):
        self.triggered = threading.Event()
        self.raise_error = None

    def create_guard_condition(self, callback):
        self.raise_error = callback
        return SimpleNamespace(trigger=self.triggered.set)

    def destroy_guard_condition(self, guard):
        pass

    def get_name(self):
        return 'controller'

    def get_namespace(self):
        return '/'

    def get_logger(self):
        return SimpleNamespace(name='controller')

    def get_parameter(self, name):
        return SimpleNamespace(value=False)

    def resolve_topic_name(self, name):
        return name


def test_a_killed_goal_process_fails_the_node_naming_the_signal():
    # it said "the goal process ended (, status None)", with a traceback
    node = ControllerNode()
    process = GoalProcess(node, '', {}, on_checked=None)
    try:
        process.process.kill()          # at its start, before it reaches the middleware
        assert node.triggered.wait(TIMEOUT)
        with pytest.raises(NodeFailure) as failure:
            node.raise_error()          # what the node's executor runs
        assert str(failure.value) == ('the goal process ended: killed by SIGKILL; no goal can '
                                      'come, the controller stops')
    finally:
        process.stop()


@pytest.mark.parametrize('status, words', [
    (-signal.SIGKILL, 'killed by SIGKILL'), (-signal.SIGSEGV, 'killed by SIGSEGV'),
    (-(signal.SIGRTMIN + 1), f'killed by signal {signal.SIGRTMIN + 1}'),
    (1, 'exit status 1'), (0, 'exit status 0'),
    (None, 'its pipe closed, the process still running')])
def test_how_a_process_ended_names_its_status_or_its_signal(status, words):
    assert how_it_ended(status) == words


#: A goal process that streams three targets through its outbox, as the controller takes them.
STREAMS = """
import sys
from multiprocessing.connection import Connection
from robot_dynamics.ros.nodes.goals import Outbox, TAKEN, TARGET

conn = Connection(int(sys.argv[1]))
conn.recv()                             # the set-up
outbox = Outbox(conn)
for x in range(3):
    outbox.send(TARGET, goal=x)
for _ in range(2):
    assert conn.recv() == (TAKEN, b'')
    outbox.taken()
"""


def test_the_controller_answers_each_target_so_the_newest_crosses_next(monkeypatch):
    def streams(fd):
        return subprocess.Popen([sys.executable, '-c', STREAMS, str(fd)], pass_fds=(fd,),
                                cwd=Path(goals.__file__).parents[3])
    monkeypatch.setattr(goals, 'spawn', streams)
    taken = []
    process = GoalProcess(ControllerNode(), '', {},
                          on_checked=lambda kind, handle, goal: taken.append((kind, goal)))
    try:
        assert process.process.wait(TIMEOUT) == 0
    finally:
        process.stop()
    assert taken == [(TARGET, 0), (TARGET, 2)]


#: A node that cannot go on, as the controller when its goal process ended.
FAILS = """
from robot_dynamics.ros.nodes.runner import NodeFailure, run_node


class Fails:
    def __init__(self):
        raise NodeFailure('the goal process ended: killed by SIGKILL')


raise SystemExit(run_node(Fails, 'controller'))
"""


@pytest.mark.ros
def test_a_node_failure_is_one_fatal_line_and_exit_status_1():
    # run beside the package this test imported (rclpy is started, no node: no DDS)
    done = subprocess.run([sys.executable, '-c', FAILS], cwd=Path(runner.__file__).parents[3],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 1, done.stderr
    assert 'Traceback' not in done.stderr
    [fatal] = [line for line in done.stderr.splitlines() if 'FATAL' in line]
    assert fatal.endswith('[controller]: the goal process ended: killed by SIGKILL'), fatal


class Pipe:
    """A connection that keeps what is sent."""

    def __init__(self):
        self.sent = []

    def send(self, message):
        self.sent.append(message)


def _poses(count):
    """Return ``count`` distinct poses (4, 4): translations along x by their index [m]."""
    poses = np.tile(np.eye(4), (count, 1, 1))
    poses[:, 0, 3] = np.arange(count)
    return poses


def _targets(messages):
    """Return the x [m] of each target in ``messages``."""
    return [goal[0, 3] for kind, _, goal in messages if kind == TARGET]


def test_a_flood_of_targets_leaves_at_most_two_before_a_goal_and_the_newest_goes():
    # 7-8 kHz of target_pose for 5 s filled the pipe: a joint goal sent at its end was answered
    # 5.5-8.1 s later
    pipe = Pipe()
    outbox = Outbox(pipe)
    for pose in _poses(10000):          # the controller takes none meanwhile
        outbox.send(TARGET, goal=pose)
    outbox.send(JOINT, b'goal', 'the goal')
    # the first target (in flight), the newest (in order: it came before the goal), the goal
    assert [kind for kind, _, _ in pipe.sent] == [TARGET, TARGET, JOINT]
    assert _targets(pipe.sent) == [0.0, 9999.0]
    assert pipe.sent[2] == (JOINT, b'goal', 'the goal')
    outbox.taken()
    outbox.taken()
    assert len(pipe.sent) == 3          # nothing left to send
    outbox.send(TARGET, goal=_poses(2)[1])
    assert _targets(pipe.sent[3:]) == [1.0]     # none in flight: at once


def test_targets_cross_one_at_a_time_the_newest_next_and_a_cancel_never_waits():
    pipe = Pipe()
    outbox = Outbox(pipe)
    poses = _poses(10)
    outbox.send(TARGET, goal=poses[0])
    for pose in poses[1:6]:
        outbox.send(TARGET, goal=pose)
    assert _targets(pipe.sent) == [0.0]
    outbox.taken()                      # the controller dealt with 0: the newest, 5, goes
    assert _targets(pipe.sent) == [0.0, 5.0]
    outbox.send(TARGET, goal=poses[6])
    outbox.send(CANCEL, b'goal')        # at once, after the target that came before it
    assert [kind for kind, _, _ in pipe.sent[2:]] == [TARGET, CANCEL]
    assert _targets(pipe.sent) == [0.0, 5.0, 6.0]
    outbox.taken()
    outbox.taken()
    outbox.send(TARGET, goal=poses[7])
    assert _targets(pipe.sent) == [0.0, 5.0, 6.0, 7.0]
