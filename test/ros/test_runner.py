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

"""How every node process stops (``runner.run_node``, and the view's loop: ``runner.teardown``)."""

import sys

from isolation import hung_in_middleware_teardown
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


#: The live view (its own loop, not run_node's), stopped the same way.
VIEW = """
import os, signal, socket, threading, time
import rclpy
from robot_dynamics.ros.tools import view

free = socket.socket()
free.bind(('127.0.0.1', 0))
port = free.getsockname()[1]
free.close()


def stop_once_up():     # once its handlers are installed: the context is up after them
    while not rclpy.ok():
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGINT)


threading.Thread(target=stop_once_up, daemon=True).start()
status = view.run(port=port)
print('status', status, 'handlers', [signal.getsignal(s) is signal.SIG_IGN
                                     for s in (signal.SIGINT, signal.SIGTERM)], flush=True)
os.kill(os.getpid(), signal.SIGINT)
os.kill(os.getpid(), signal.SIGTERM)
"""


@pytest.mark.parametrize('script', [SCRIPT, VIEW], ids=['node', 'view'])
def test_a_stopped_node_process_ignores_the_signals_that_follow(processes, script):
    # A supervisor that repeats its SIGINT on a loaded host (the test fixtures after 10 s) hit
    # a node in the interpreter's exit, which restores the default action of a handler written
    # in Python (CPython's signal module at finalisation; SIG_IGN it leaves): exit status -2
    # where the stop was clean (seen for the view too). Once stopped, the signals are ignored.
    proc = processes.start('stops', [sys.executable, '-c', script])
    assert proc.wait(60) == 0, processes.output(proc)
    assert 'status 0 handlers [True, True]' in processes.output(proc)


#: The view with a thread that the interpreter joins at exit and that never ends: how the
#: view's exit once held (its web server's threads, a page still connected, a busy host).
VIEW_HELD = VIEW.replace('status = view.run(port=port)', """
threading.Thread(target=lambda: time.sleep(3600), name='held_at_exit').start()
status = view.run(port=port)""")


def test_a_stopped_view_ends_within_the_bound_when_its_exit_is_held(processes):
    proc = processes.start('held', [sys.executable, '-c', VIEW_HELD])
    assert proc.wait(60) == 1, processes.output(proc)
    output = processes.output(proc)
    # stopped cleanly, then the held exit ended by the bound with every thread's stack
    assert 'status 0 handlers [True, True]' in output, output
    assert 'Timeout (0:00:10)!' in output and 'in <lambda>' in output, output


#: A node whose destruction blocks in C with the GIL held, deaf to signals: how Fast DDS once
#: held a node's teardown (deleting a writer) on Jazzy.
HANGS = """
import ctypes, os, signal
from rclpy.node import Node
from robot_dynamics.ros.nodes.runner import run_node

class Hangs(Node):
    def __init__(self):
        super().__init__('hangs')
        self.create_timer(0.05, lambda: os.kill(os.getpid(), signal.SIGINT))

    def destroy_node(self):
        ctypes.PyDLL(None).sleep(3600)      # PyDLL: the GIL stays held

run_node(Hangs, 'hangs')
"""

#: The end of the output of the model node that the middleware held (CI, Jazzy).
HELD = """[INFO] [1795898596.931413535] [model]: publishing RobotModel('iiwa14', dof=7 (RRRRRRR))
Timeout (0:00:10)!
Thread 0x00007f54245ea5c0 (most recent call first):
  File "/venv/lib/python3.11/site-packages/rclpy/publisher.py", line 105 in destroy
  File "/venv/lib/python3.11/site-packages/rclpy/node.py", line 1833 in destroy_publisher
  File "/venv/lib/python3.11/site-packages/rclpy/node.py", line 1953 in destroy_node
  File "/venv/robot_dynamics/ros/nodes/runner.py", line 130 in run_node
  File "/venv/robot_dynamics/ros/nodes/model_node.py", line 61 in main
"""


def test_a_teardown_that_hangs_ends_the_process_within_its_bound(processes):
    from robot_dynamics.ros.nodes.runner import TEARDOWN_BOUND
    proc = processes.start('hangs', [sys.executable, '-c', HANGS])
    assert proc.wait(TEARDOWN_BOUND + 60) == 1, processes.output(proc)
    output = processes.output(proc)
    assert f'Timeout (0:00:{TEARDOWN_BOUND:02.0f})!' in output, output
    assert ' in destroy_node' in output and ' in run_node' in output, output
    # the hang is in the node's own code here, not in rclpy's: a test's stop reports it
    assert not hung_in_middleware_teardown(output)
    assert hung_in_middleware_teardown(HELD)
    assert not hung_in_middleware_teardown(HELD.replace('/rclpy/', '/robot_dynamics/'))
    assert not hung_in_middleware_teardown(HELD.replace('Timeout (', 'Current thread ('))
    # the interpreter's exit held after the last Python frame ended (the view's, once, beside
    # another suite): the middleware's C++ teardown; a Python thread that holds it is no such
    exited = ('(viser) Server stopped\nTimeout (0:00:10)!\n'
              'Thread 0x00007fabcb3c6500 (most recent call first):\n  <no Python frame>\n')
    assert hung_in_middleware_teardown(exited)
    assert not hung_in_middleware_teardown(exited + 'Thread 0x00007fabcb3c6600 (most recent '
                                           'call first):\n  File "x.py", line 1 in <lambda>\n')


def test_a_stop_reports_a_hang_held_by_the_middleware_as_a_warning(processes):
    # the process ended as bounded_teardown ends it, the hang in rclpy: a stop as asked; any
    # other exit status 1 stays one
    held = processes.start('held', [sys.executable, '-c',
                                    f'import sys; sys.stderr.write({HELD!r}); sys.exit(1)'])
    held.wait(60)
    with pytest.warns(UserWarning, match='the middleware held its teardown past the bound'):
        assert processes.stop(held) == 0
    failed = processes.start('failed', [sys.executable, '-c', 'import sys; sys.exit(1)'])
    failed.wait(60)
    assert processes.stop(failed) == 1
