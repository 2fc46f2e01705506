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
How a node process starts and stops: one function behind every node's ``main``.

SIGINT and SIGTERM end the spinning, then the node is destroyed while its context is still up,
so that what it says last goes out (the controller's final safe command: drives keep the last
command they got), and only then is the context shut down: a clean stop, exit status 0.
rclpy's own signal handlers would shut the context down first, so they are not installed. An
error in the node's construction (bad parameters, a bad robot description), or a
``StartupError`` from a callback (a check that needs the first messages, e.g. the hardware's
joint names), is logged as fatal and gives exit status 1, so that launch files and
``robot-dynamics bringup`` see a failed start; the node is destroyed all the same. So is a
``NodeFailure`` from a callback (a part the node cannot go on without has ended): one fatal
line, exit status 1. A teardown that does not end within ``TEARDOWN_BOUND`` ends the process,
exit status 1 (:func:`bounded_teardown`).
"""

import contextlib
import ctypes
import faulthandler
import gc
import os
import signal
import sys
import threading

import rclpy
from rclpy.exceptions import InvalidParameterValueException, ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from ..wire import middleware
from ...errors import RobotDynamicsError


class StartupError(RobotDynamicsError):
    """The node cannot run with what it finds (raised from a callback, so also after start)."""


class NodeFailure(RobotDynamicsError):
    """The node cannot go on (raised from a callback): one fatal line, exit status 1."""


#: Set by ``robot-dynamics bringup`` to its pid in the environment of the node processes it
#: starts: such a node ends when bringup does, even when bringup is killed (SIGKILL).
PARENT_ENV = 'ROBOT_DYNAMICS_BRINGUP_PID'


def _end_with_parent():
    """Have the kernel send SIGTERM when the bringup that started this process dies (Linux)."""
    parent = os.environ.get(PARENT_ENV)
    if not parent:
        return
    try:
        ctypes.CDLL('libc.so.6', use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != int(parent):     # bringup died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


#: How long a thread holds the GIL while another waits for it [s]. Python's default is several
#: control periods: a busy executor thread (a flood of messages) would hold back the simulator's
#: stepping thread, or one node of an in-process bringup the others, for as long.
SWITCH_INTERVAL = 1e-4


def share_the_gil():
    """Have Python hand the GIL between the threads of this process every SWITCH_INTERVAL."""
    sys.setswitchinterval(SWITCH_INTERVAL)


def freeze_heap():
    """
    Exempt every object alive now from later garbage collections: call once a node is set up.

    A full collection walks the whole heap, which numpy, scipy, numba and rclpy make large in a
    node process: a pause of many control periods, missed cycles and a tripped state watchdog,
    each time one comes. What the node allocates afterwards is collected as usual. No collection
    first: it would be that pause once more, while the node's threads already run; the garbage
    frozen with the rest is what start-up left, once. Also once a process has stopped: the
    interpreter's last collections at its exit then skip the heap too.
    """
    gc.freeze()


#: Errors that mean "this node cannot start with this configuration".
START_ERRORS = (RobotDynamicsError, ParameterException, InvalidParameterValueException)


#: Longest time [s] a stopping process waits for the middleware's teardown (normally
#: milliseconds). Fast DDS 2.14 (Jazzy) once never returned from deleting a writer of a node
#: stopped beside other nodes stopping; it held the GIL, so the node was deaf to every signal
#: but SIGKILL.
TEARDOWN_BOUND = 10.0


@contextlib.contextmanager
def bounded_teardown():
    """
    Run the block (the destruction of nodes and of their context) in at most TEARDOWN_BOUND.

    Past it, a thread of faulthandler's, which needs no GIL, prints "Timeout" and every
    thread's stack to stderr, and ends the process with exit status 1. For the process's own
    ending only: there is one such timer per process.
    """
    faulthandler.dump_traceback_later(TEARDOWN_BOUND, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def bound_the_exit():
    """
    End the process within TEARDOWN_BOUND from now, whatever is left of its exit.

    For a process whose ROS part has ended (:func:`teardown`) but whose interpreter still joins
    a library's threads at exit (the view's web server), as :func:`bounded_teardown` does for the
    middleware: past the bound, every thread's stack to stderr and exit status 1.
    """
    faulthandler.dump_traceback_later(TEARDOWN_BOUND, exit=True)


def answer_where():
    """Print every thread's stack to stderr on SIGUSR1 (a process that does not stop)."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)


def spin_until(executor, stop):
    """Spin ``executor`` until the event ``stop`` is set (or its context shuts down)."""
    # a wait with a time-out: Python runs a signal's handler only between two of its own steps,
    # and an executor with nothing to do would otherwise wait in C++ forever
    while not stop.is_set() and executor.context.ok():
        executor.spin_once(timeout_sec=middleware.STOP_POLL)


def run_node(node_class, name, args=None):
    """Construct ``node_class()`` and spin it until SIGINT or SIGTERM; return the exit status."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, frame: stop.set())
    answer_where()
    _end_with_parent()
    share_the_gil()
    middleware.init(args=args)
    node = None
    try:
        executor = SingleThreadedExecutor()
        node = node_class()
        executor.add_node(node)
        spin_until(executor, stop)
    except NodeFailure as exc:
        rclpy.logging.get_logger(name).fatal(str(exc))
        return 1
    except START_ERRORS as exc:
        rclpy.logging.get_logger(name).fatal(f'cannot start: {exc}')
        return 1
    except ExternalShutdownException:
        pass
    except Exception:  # noqa: B902 - rclpy raises assorted errors when shut down mid-callback
        if rclpy.ok():
            raise
    finally:
        teardown(node)
    return 0


def teardown(node):
    """
    End a process's ROS part: destroy ``node`` (if any), then the context, within TEARDOWN_BOUND.

    The node goes first, the context still up, so that its last messages go out. Then SIGINT and
    SIGTERM are ignored (from the main thread): a second one (a supervisor's repeat on a loaded
    host) during the interpreter's exit would otherwise kill it there, with Python's default
    action restored, and turn a clean stop into a death by signal.
    """
    with bounded_teardown():
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
