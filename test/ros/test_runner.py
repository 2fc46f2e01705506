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

"""How every node process stops (``runner.run_node``)."""

import sys

import pytest

pytestmark = pytest.mark.ros

#: A node that asks for its own stop, then what the process's signals are once stopped.
SCRIPT = """
import os, signal
from rclpy.node import Node
from robot_dynamics.ros.nodes.runner import run_node

class Stops(Node):
    def __init__(self):
        super().__init__('stops')
        self.create_timer(0.05, lambda: os.kill(os.getpid(), signal.SIGINT))

status = run_node(Stops, 'stops')
print('status', status, 'handlers', [signal.getsignal(s) is signal.SIG_IGN
                                     for s in (signal.SIGINT, signal.SIGTERM)], flush=True)
os.kill(os.getpid(), signal.SIGINT)
os.kill(os.getpid(), signal.SIGTERM)
"""


def test_a_stopped_node_process_ignores_the_signals_that_follow(processes):
    # A supervisor that repeats its SIGINT on a loaded host (the test fixtures after 10 s) hit
    # a node in the interpreter's exit, which restores the default action of a handler written
    # in Python (CPython's signal module at finalisation; SIG_IGN it leaves): exit status -2
    # where the stop was clean. Once stopped, the signals are ignored.
    proc = processes.start('stops', [sys.executable, '-c', SCRIPT])
    assert proc.wait(60) == 0, processes.output(proc)
    assert 'status 0 handlers [True, True]' in processes.output(proc)
