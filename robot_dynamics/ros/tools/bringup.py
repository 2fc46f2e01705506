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
``robot-dynamics bringup``: start the node set of :mod:`~robot_dynamics.ros.tools.graph`.

For pip installs, where ``ros2 launch`` is not available: the same nodes, parameter files and
remappings as ``launch/sim.launch.py``. By default all nodes run in this process, each spun by
its own single-threaded executor in its own thread; ``processes=True`` starts one process per
node instead (each node's console script, as ``ros2 run`` would). SIGINT or SIGTERM stops
everything cleanly, exit status 0: the nodes in the reverse order of their start, each once the
one before has stopped, so that no node sees what it watches go away (the controller, which
would take a simulator that ended for a fault, stops first). A node that fails to start or dies
stops the rest, exit status 1.
"""

import importlib
import os
from pathlib import Path
import signal
import subprocess
import sys
import tempfile
import threading
import time

import rclpy
from rclpy.action import get_action_server_names_and_types_by_node
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
import yaml

from . import graph
from .recorder import RecorderNode
from ..nodes.runner import answer_where, bounded_teardown, freeze_heap, PARENT_ENV, \
    share_the_gil, spin_until, START_ERRORS
from ..wire import middleware
from ..wire.compat import RCLError

EXIT_OK = 0
EXIT_FAILED = 1
#: Time allowed for every node to have its model and serve [s]; the first start of a new install
#: compiles the library's kernels (tens of seconds), later starts load them from the cache.
READY_TIMEOUT = 180.0
#: After this long without every node ready [s], say who is waited for and why it may take long.
SLOW_START = 15.0
#: Time a node process gets to exit after SIGTERM before it is killed [s].
STOP_TIMEOUT = 10.0
_PARAMETER_SERVICES = ('describe_parameters', 'get_parameter_types', 'get_parameters',
                       'list_parameters', 'set_parameters', 'set_parameters_atomically',
                       'get_type_description')


class Bringup:
    """
    A running node set; :meth:`start`, then :meth:`wait` until a signal or a failure.

    Parameters
    ----------
    specs : list of graph.NodeSpec
        The nodes to start (``graph.nodes(mode)``).
    parameter_files : list of path
        Given to every node, in order.
    overrides : dict
        ``{node name: [(parameter, value text), ...]}`` applied after the files.
    processes : bool
        One process per node instead of threads in this process.
    namespace : str
        The arm's namespace (``graph.namespace``), '' for the root. The parameters then go to
        the nodes in a file of their own (``graph.namespaced_parameters``), removed at
        :meth:`stop`.

    """

    def __init__(self, specs, parameter_files, overrides=None, processes=False, out=sys.stdout,
                 namespace=''):
        self.specs = list(specs)
        self.namespace = namespace
        self._namespaced_file = None
        overrides = overrides or {}
        if namespace:
            with tempfile.NamedTemporaryFile('w', prefix='robot_dynamics_', suffix='.yaml',
                                             delete=False) as f:
                yaml.safe_dump(graph.namespaced_parameters(self.specs, parameter_files,
                                                           overrides, namespace), f)
            self._namespaced_file = f.name
            parameter_files, overrides = [f.name], {}
        self.arguments = {spec.name: graph.ros_arguments(spec, parameter_files,
                                                         overrides.get(spec.name, ()), namespace)
                          for spec in self.specs}
        self.processes = processes
        self.out = out
        self.stop_event = threading.Event()
        self.failure = None
        self._children = {}
        self._threads = []
        self._nodes = []
        self._probe = None

    # ---- start ----------------------------------------------------------------------------------

    def start(self):
        """Start every node; raise on a node that cannot be built in this process."""
        if not self.processes:
            share_the_gil()
            for spec in self.specs:
                node_class = getattr(importlib.import_module(spec.module), spec.node_class)
                self._nodes.append(node_class(cli_args=self.arguments[spec.name]))
            for node in self._nodes:
                self._spin_in_thread(node)
        else:
            # Each node in a session of its own: Ctrl-C in a terminal signals the foreground
            # process group, and a node that got that SIGINT and then bringup's stop would be
            # interrupted again while shutting down (a traceback). Bringup alone stops them,
            # once each.
            env = dict(os.environ, **{PARENT_ENV: str(os.getpid())})
            for spec in self.specs:
                self._children[spec.name] = subprocess.Popen(
                    _command(spec) + self.arguments[spec.name], env=env, start_new_session=True)
        self._probe = Node('bringup_probe', namespace=self.namespace or None)
        self._spin_in_thread(self._probe)

    def add_node(self, node):
        """Spin another node of this process (a recorder, a client) until :meth:`stop`."""
        self._nodes.append(node)
        self._spin_in_thread(node)

    def _spin_in_thread(self, node):
        # built here, not in the thread: only stop() (this thread) shuts the context down, and
        # an executor built on a context already shut down fails half-way (a traceback at exit)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        stop = threading.Event()

        def spin():
            try:
                spin_until(executor, stop)
            except ExternalShutdownException:
                pass
            except Exception as exc:  # noqa: B902 - a node died: report it and stop the rest
                if rclpy.ok():
                    self.failure = f'node {node.get_name()!r} failed: {exc}'
                    self.stop_event.set()
        thread = threading.Thread(target=spin, name=f'spin_{node.get_name()}', daemon=True)
        thread.start()
        self._threads.append((stop, thread))

    # ---- readiness ------------------------------------------------------------------------------

    def wait_ready(self, timeout=READY_TIMEOUT):
        """Wait until every node serves (see ``NodeSpec.ready``); return False on failure."""
        start = time.monotonic()
        deadline, slow = start + timeout, start + SLOW_START
        pending = list(self.specs)
        while pending:
            if self._check_children() or self.stop_event.is_set():
                return False
            pending = [spec for spec in pending if not self._is_ready(spec)]
            if pending and slow is not None and time.monotonic() > slow:
                slow = None
                say(self.out, f'  waiting for {", ".join(spec.name for spec in pending)} '
                              f'({SLOW_START:g} s so far): the first start of an install '
                              "compiles the library's kernels (numba), a minute or more; "
                              '`python -m robot_dynamics.precompile` (make setup) does it '
                              'beforehand')
            if time.monotonic() > deadline:
                self.failure = (f'not ready after {timeout:g} s: '
                                f'{", ".join(spec.name for spec in pending)}')
                return False
            self.stop_event.wait(0.1)
        return True

    def _is_ready(self, spec):
        kind, *names = spec.ready
        names = {graph.resolve(name, self.namespace) for name in names}
        probe = self._probe
        if kind == 'publisher':
            return all(any(info.node_name == spec.name and info.node_namespace == self._where
                           for info in probe.get_publishers_info_by_topic(name))
                       for name in names)
        query = probe.get_service_names_and_types_by_node if kind == 'service' else \
            self._actions
        return names <= {offered_name for offered_name, _ in self._offered(spec, query)}

    def _actions(self, node, where):
        return get_action_server_names_and_types_by_node(self._probe, node, where)

    def _offered(self, spec, query):
        """Return ``query(node, namespace)`` of the node and its children, joined."""
        offered = []
        for node in (spec.name,) + spec.children:
            try:
                offered += query(node, self._where)
            except RCLError:   # not discovered yet (NodeNameNonExistentError)
                pass
        return offered

    @property
    def _where(self):
        """Return the nodes' namespace as the graph queries take it."""
        return self.namespace or '/'

    def describe(self):
        """Return what each node publishes, subscribes to and serves, as printable lines."""
        probe = self._probe
        lines = []
        for spec in self.specs:
            services = [s for s, _ in self._offered(
                spec, probe.get_service_names_and_types_by_node)
                if s.rsplit('/', 1)[-1] not in _PARAMETER_SERVICES and '/_action/' not in s]
            actions = [a for a, _ in self._offered(spec, self._actions)]
            pubs = [t for t, _ in self._offered(spec, probe.get_publisher_names_and_types_by_node)
                    if t not in ('/rosout', '/parameter_events') and '/_action/' not in t]
            subs = [t for t, _ in self._offered(
                spec, probe.get_subscriber_names_and_types_by_node) if t != '/parameter_events']
            lines.append(f'  {graph.resolve(spec.name, self.namespace)} ({spec.executable})')
            for label, names in (('publishes', pubs), ('subscribes', subs),
                                 ('serves', services), ('actions', actions)):
                if names:       # a node and its children may share a topic (/clock)
                    lines.append(f'      {label:<10} {" ".join(sorted(set(names)))}')
        return lines

    # ---- run and stop ---------------------------------------------------------------------------

    def _check_children(self):
        """Record a node process that exited; return True if one did."""
        for name, child in self._children.items():
            code = child.poll()
            if code is not None:
                self.failure = f'node {name!r} exited with status {code}'
                return True
        return False

    def wait(self):
        """Block until a signal (clean stop) or a failure."""
        while not self.stop_event.wait(0.2):
            if self._check_children():
                return

    def stop(self):
        """
        Stop every node, in the reverse order of their start, each after the one before.

        Node processes first (SIGTERM, killed if still there after STOP_TIMEOUT), then the
        graph's nodes of this process, then the probe and the nodes added (a recorder records
        until the graph is gone): each stops spinning, and they are destroyed before the
        context is shut down, so that what they say last goes out (the controller's final safe
        command).
        """
        # SIGTERM, not SIGINT: a node process that is still importing (a start that failed
        # elsewhere) ends silently, where SIGINT would print a KeyboardInterrupt traceback; a
        # running node shuts down cleanly through rclpy's handler either way.
        for child in reversed(list(self._children.values())):
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
            try:
                child.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        graph_nodes = 0 if self.processes else len(self.specs)
        for stop, thread in self._threads[:graph_nodes][::-1] + self._threads[graph_nodes:]:
            stop.set()
            thread.join(timeout=STOP_TIMEOUT)
        with bounded_teardown():
            for node in self._nodes + ([self._probe] if self._probe else []):
                node.destroy_node()
            rclpy.try_shutdown()
        if self._namespaced_file:
            os.unlink(self._namespaced_file)


def recorder_arguments(path, parameter_files, overrides, namespace=''):
    """Return the ``--ros-args`` of a recorder of the arm's topics to ``path`` (MCAP)."""
    return ['--ros-args', '-p', f'path:={path}',
            *graph.clock_arguments(parameter_files, overrides, namespace),
            *(['-r', f'__ns:={namespace}', '-p', f'namespaces:=[{namespace}]'] if namespace
              else [])]


def say(out, *lines):
    """
    Print ``lines`` to ``out`` in one write, then flush.

    The nodes log to the same terminal from their own threads and processes: ``print`` writes
    a line and its newline separately (unbuffered, as under ``PYTHONUNBUFFERED``), and a log
    line written between the two ends up glued to the printed one.
    """
    out.write(''.join(f'{line}\n' for line in lines))
    out.flush()


def _command(spec):
    """Return the node's console script next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).parent / spec.executable
    return [str(script)] if script.is_file() else [sys.executable, '-m', spec.module]


def start_view(port, out=sys.stdout, namespace=''):
    """
    Start ``robot-dynamics view --port PORT`` in a process of its own; return the process.

    ``namespace``: the arm's (``graph.namespace``), whose graph it shows.

    It ends with this process (even a killed one); a taken port is an ``InputError`` before
    anything starts. Its address is printed once it serves (a page opened at once would find
    nothing there), or that it ended before; the process's ``page_open`` (an Event) is set once
    a page has connected.
    """
    from ...viewer import check_port
    check_port('127.0.0.1', port)
    env = dict(os.environ, **{PARENT_ENV: str(os.getpid())})
    process = subprocess.Popen([sys.executable, '-m', 'robot_dynamics.ros.tools.view', '--port',
                                str(port), '--namespace', namespace], env=env,
                               start_new_session=True, stdout=subprocess.PIPE, text=True)
    process.page_open = threading.Event()
    threading.Thread(target=_say_address, args=(process, out), name='view_address',
                     daemon=True).start()
    return process


def _say_address(process, out):
    """Pass on the line the view prints once it serves (``view: URL``); read it to its end."""
    from .view import PAGE_OPEN
    served = False
    for line in process.stdout:
        if line.startswith(PAGE_OPEN):
            process.page_open.set()
        elif not served and line.startswith('view: '):
            served = True
            say(out, f'{line.strip()} (the arm in a browser)')
    if not served:
        say(out, f'view: ended before it served (exit status {process.wait()})')


def stop_view(process):
    """Stop a view started by :func:`start_view` (SIGTERM, then SIGKILL after STOP_TIMEOUT)."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run(specs, parameter_files, overrides=None, processes=False, out=sys.stdout, title='',
        record=None, namespace='', view=None):
    """
    Start the node set, print what runs, wait for SIGINT or SIGTERM; return exit status.

    For a process's whole life (the command's): once everything stopped, SIGINT and SIGTERM
    stay ignored.

    ``record``: an MCAP file to record the default topics of
    :class:`~robot_dynamics.ros.tools.recorder.RecorderNode` into, from this process (those of
    ``namespace``, the arm's: ``graph.namespace``). ``view``: a port to serve the live view on
    (:func:`start_view`), or None.
    """
    answer_where()
    viewer = start_view(view, out, namespace) if view else None
    middleware.init()
    bringup = Bringup(specs, parameter_files, overrides, processes, out, namespace)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: bringup.stop_event.set())
    try:
        how = 'one process per node' if processes else 'one process'
        where = f' in {namespace}' if namespace else ''
        say(out, f'{title}: starting {len(specs)} nodes{where} ({how}, ROS_DOMAIN_ID='
                 f'{os.environ.get("ROS_DOMAIN_ID", "0")})')
        try:
            bringup.start()
            if record:
                bringup.add_node(RecorderNode(cli_args=recorder_arguments(
                    record, parameter_files, overrides or {}, namespace)))
        except START_ERRORS as exc:
            bringup.failure = f'cannot start: {exc}'
        else:
            if bringup.wait_ready():
                say(out, *bringup.describe(), *([f'  recording to {record}'] if record else []),
                    'running; Ctrl-C stops every node')
                bringup.wait()
    finally:
        bringup.stop()
        stop_view(viewer)
        # what is left is the interpreter's exit: a repeated signal (a supervisor's, on a
        # loaded host) during it would otherwise end it by Python's default action, a clean
        # stop turned into a death by signal (runner.teardown does the same in the nodes)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
        # and its last garbage collections need not walk the heap (1-2 s on a loaded host)
        freeze_heap()
    if bringup.failure:
        say(sys.stderr, f'{title}: {bringup.failure}')
        return EXIT_FAILED
    say(out, f'{title}: stopped')
    return EXIT_OK
