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
Every entry point keeps the graph on loopback; ``send`` notices a controller that died.

Run as the user runs them, with ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` as this machine
sets it: a bringup in one process, a node started alone (``python -m``), ``send`` and the demo.
Each process's own sockets (``/proc/<pid>/fd`` matched to ``/proc/<pid>/net/*``) must be bound
to loopback or to a multicast group, none to the wildcard or the host's address. (The bringup
with one process per node: ``test_bringup.py``.)
"""

import signal
import sys
import time

from loopback import off_loopback, sockets
import numpy as np
import pytest
from robot_dynamics.trajectory import TrajectoryPoints

pytestmark = pytest.mark.ros

#: Hang guard [s] for a start or an exit (not a measurement).
TIMEOUT = 240.0
RUNNING = 'running; Ctrl-C stops every node'
#: The goal that runs while the controller is killed [s]: longer than TIMEOUT / 4, the wait for
#: send to exit, so that only noticing the loss ends it in time.
GOAL_TIME = 120.0


def _wait_output(processes, proc, text):
    deadline = time.monotonic() + TIMEOUT
    while text not in processes.output(proc):
        assert proc.poll() is None and time.monotonic() < deadline, processes.output(proc)
        time.sleep(0.1)


def _assert_on_loopback(pid):
    held = sockets(pid)
    assert any(address.is_loopback for _, address, _ in held), held   # it does use the network
    assert off_loopback([pid]) == [], held


@pytest.fixture(scope='module')
def bringup(module_processes):
    # In lockstep a host that stalls the graph stops its clock too: the goal below runs until
    # the kill (in real time a 50 ms stall of the simulator ends it in safe mode first). Paced
    # to the wall clock: unpaced, the idle graph took a core for the whole module.
    proc = module_processes.start('bringup', ['robot-dynamics', 'bringup', '--robot',
                                              'planar_2r', '--lockstep', '-p',
                                              'simulator.realtime:=true'])
    _wait_output(module_processes, proc, RUNNING)
    return proc


def test_a_node_run_alone_stays_on_loopback(processes):
    proc = processes.start('model', [sys.executable, '-m', 'robot_dynamics.ros.nodes.model_node',
                                     '--ros-args', '-p', 'robot:=planar_2r'])
    _wait_output(processes, proc, 'publish')
    _assert_on_loopback(proc.pid)
    assert processes.stop(proc, signal.SIGINT) == 0, processes.output(proc)


def test_the_demo_stays_on_loopback(processes, tmp_path):
    proc = processes.start('demo', ['robot-dynamics', 'demo', '--robot', 'planar_2r',
                                    '--lockstep'])
    _wait_output(processes, proc, 'demo: planning through /compute_ik')
    _assert_on_loopback(proc.pid)
    processes.stop(proc, signal.SIGTERM)


def test_send_stays_on_loopback_and_fails_when_the_controller_dies(bringup, module_processes,
                                                                   tmp_path):
    _assert_on_loopback(bringup.pid)
    # hold the start (the simulator's initial positions) for GOAL_TIME
    start = [0.4, 0.8]
    points = TrajectoryPoints(('joint1', 'joint2'), np.array([1.0, GOAL_TIME]),
                              np.array([start, start]))
    path = tmp_path / 'hold.yaml'
    path.write_text(points.to_yaml())
    send = module_processes.start('send', ['robot-dynamics', 'send', str(path)])
    _wait_output(module_processes, bringup, 'accepted: 2 points')
    _assert_on_loopback(send.pid)
    bringup.send_signal(signal.SIGKILL)    # the controller with it, without a word
    bringup.wait()
    assert send.wait(GOAL_TIME / 4) == 1, module_processes.output(send)
    output = module_processes.output(send)
    assert ('send: failed: the action server /controller/follow_joint_trajectory is gone'
            in output), output
