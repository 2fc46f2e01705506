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
Fixtures for tests that run ROS 2 nodes as real processes over DDS.

Isolation: every test module gets its own ``ROS_DOMAIN_ID``, held through a lock file for as long
as the module runs, so that concurrent test runs on the machine (and the modules of one run) never
see each other's traffic; discovery stays on loopback; ``ROS_LOG_DIR`` is a temporary folder.
Processes are started in their own process group and always stopped by their group id (SIGINT, then
SIGKILL), also when a test fails; their output is kept, and its newest lines are part of the report
of a test that fails. The test's own node lives in its own rclpy context on that domain and spins
in a background thread; tests wait on conditions with generous time-outs, never on sleeps.
"""

import atexit
import collections
from collections.abc import Sequence
import gc
import io
import os
import queue
import shutil
import tempfile
import threading
import time

from closed_loop import Loop
from isolation import environment, lock_domain, Processes
import pytest
import rclpy
from rclpy.client import Client
from rclpy.context import Context
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from rclpy.subscription import Subscription
from robot_dynamics.cli import build_parser
from robot_dynamics.ros.wire.middleware import PROFILE_VARIABLES, use_profile
from robot_dynamics.ros.wire.on_demand import OnDemand, take_next
from robot_dynamics.ros.wire.qos import SERVICE_CLIENT

# Discovery stays on loopback for the test process too, however pytest was started.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
if 'ROS_LOG_DIR' not in os.environ:
    os.environ['ROS_LOG_DIR'] = tempfile.mkdtemp(prefix='robot_dynamics_ros_log_')
    atexit.register(shutil.rmtree, os.environ['ROS_LOG_DIR'], ignore_errors=True)

#: Generous limit for anything to happen (process start, discovery, a reply) [s]; the first
#: start in a new install compiles the library's kernels.
TIMEOUT = 120.0
COLLECT_QOS = QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE)
#: How long [s] a service call waits for its reply before it asks again (``TestNode.call``).
RESEND = 10.0


class Collected(Sequence):
    """
    The messages of one topic in the order they came, as ``(message, monotonic time)``.

    Up to date whenever it is read: the subscription is read outside the executor, as raw bytes
    (a take, about 10 us), by the probe's thread and at every read, and decoded when read. A
    callback per message from rclpy's executor costs the test process about 0.3 ms each: on a
    busy host a simulator running faster than real time leaves such a list seconds behind, and
    its newest entry is not where the arm is. The time is when the message was taken.
    """

    def __init__(self, node, msg_type, topic, qos):
        self._msg_type = msg_type
        self._subscription = node.create_subscription(msg_type, topic, lambda data: None, qos,
                                                      raw=True, callback_group=OnDemand())
        self._lock = threading.Lock()
        self._taken = []
        self._messages = []

    def take(self):
        """Take what arrived (cheap: no decoding)."""
        with self._lock:
            while (data := take_next(self._subscription)) is not None:
                self._taken.append((data, time.monotonic()))

    def _current(self):
        self.take()
        with self._lock:
            self._messages += [(deserialize_message(data, self._msg_type), at)
                               for data, at in self._taken]
            self._taken.clear()
            return self._messages

    def __getitem__(self, index):
        return self._current()[index]

    def __len__(self):
        return len(self._current())

    def __iter__(self):
        return iter(list(self._current()))


class TestNode:
    """
    The test's own node, spinning in a background thread, with waiting helpers.

    An entity created on it is destroyed with :meth:`destroy`, in the spinning thread: destroyed
    from another thread, it invalidates a handle in the wait set that the executor is building
    ("pointer is invalid"), and the spinning thread dies.
    """

    def __init__(self, domain):
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = Node('test_probe', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._spinning = True
        self._collected = []
        self._destroying = queue.SimpleQueue()      # (entity, done) for the spinning thread
        self.died = None                            # what ended the spinning thread
        self.requests = collections.Counter()       # by service: the requests call() sent
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self):
        # a flag of our own, not the context's shutdown, ends the loop: nothing is destroyed
        # until the thread has left the executor (rclpy's waitables fail on a handle destroyed
        # under them)
        try:
            while self._spinning:
                try:
                    self.executor.spin_once(timeout_sec=0.05)
                except ExternalShutdownException:
                    return
                for collected in self._collected:
                    collected.take()
                # between two waits, as a callback of the executor would
                while not self._destroying.empty():
                    entity, done = self._destroying.get()
                    for kind, destroy in ((Publisher, self.node.destroy_publisher),
                                          (Subscription, self.node.destroy_subscription),
                                          (Client, self.node.destroy_client)):
                        if isinstance(entity, kind):
                            destroy(entity)
                            break
                    else:
                        entity.destroy()        # an action client
                    done.set()
        except BaseException as exc:
            self.died = exc
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Join the spinning thread, then destroy the node and shut the context down."""
        self._spinning = False
        self.thread.join(timeout=TIMEOUT)
        if self.thread.is_alive():
            pytest.fail('the test node did not stop spinning')
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    def destroy(self, entity):
        """Destroy ``entity`` (a publisher, subscription, client or action client of the node)."""
        done = threading.Event()
        self._destroying.put((entity, done))
        self.wait_for(done.is_set, what=f'the spinning thread to destroy {entity!r}')

    def wait_for(self, condition, timeout=TIMEOUT, what='condition', fail=True):
        """
        Poll ``condition()`` until true; return its value.

        After ``timeout`` fail the test naming ``what`` (``fail=False``: return the false value);
        at once if the node no longer spins (nothing it waits for would come).
        """
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if self.died is not None:
                pytest.fail(f'waiting for {what}: the test node stopped spinning: '
                            f'{self.died!r}')
            if time.monotonic() > deadline:
                if not fail:
                    return value
                pytest.fail(f'timed out after {timeout:g} s waiting for {what}')
            time.sleep(0.01)

    def collect(self, msg_type, topic, qos=None):
        """
        Subscribe to ``topic``; return its :class:`Collected` messages.

        The default QoS is reliable with a deep history, so that a burst (a simulator running
        faster than real time) is not thinned out before the test reads it.
        """
        collected = Collected(self.node, msg_type, topic,
                              qos if qos is not None else COLLECT_QOS)
        self._collected = self._collected + [collected]      # read by the spinning thread
        return collected

    def client(self, srv_type, name, timeout=TIMEOUT):
        """Return a client of ``name`` once the service is there."""
        client = self.node.create_client(srv_type, name, qos_profile=SERVICE_CLIENT)
        self.wait_for(lambda: client.service_is_ready(), timeout, f'service {name}')
        return client

    def call(self, client, request, timeout=TIMEOUT):
        """
        Call a service and return its response (fail after ``timeout``).

        The request is sent again every RESEND seconds until one is answered: a server's reply
        is lost while its middleware has not yet matched this client's reply reader (discovery
        is not symmetric: the client can see the server well before; on a busy host seconds
        before). So only for requests that may be repeated (queries, idempotent settings).
        """
        deadline = time.monotonic() + timeout
        futures = []
        while True:
            futures.append(client.call_async(request))
            self.requests[client.srv_name] += 1
            answered = self.wait_for(lambda: any(f.done() for f in futures),
                                     min(RESEND, max(deadline - time.monotonic(), 0.0)),
                                     f'a reply from {client.srv_name}', fail=False)
            if answered or time.monotonic() > deadline:
                break
        if not answered:
            pytest.fail(f'timed out after {timeout:g} s waiting for a reply from '
                        f'{client.srv_name} (asked {len(futures)} times)')
        return next(f for f in futures if f.done()).result()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Add the output of the processes a failed test started to its report."""
    report = (yield).get_result()
    for name in ('processes', 'module_processes'):
        procs = getattr(item, 'funcargs', {}).get(name) if report.failed else None
        if procs is not None and procs.started:
            report.sections.append((f'output of {name}, newest lines', procs.tails()))


@pytest.fixture(scope='module')
def ros_domain():
    """Return a ROS domain id held by this test module alone."""
    # This process's heap (Pinocchio, Robotics Toolbox and the library tests before these) makes
    # a full collection take 0.1 s and more, with the GIL, while the probe collects 1 kHz streams
    # and the nodes share the two cores: what is alive now is frozen before the nodes start.
    gc.collect()
    gc.freeze()
    domain, handle = lock_domain()
    yield domain
    handle.close()


@pytest.fixture(scope='module')
def ros_env(ros_domain, tmp_path_factory):
    """Return the environment of processes started by this module."""
    return environment(ros_domain, tmp_path_factory.mktemp('ros_log'))


@pytest.fixture(scope='module')
def module_processes(ros_env, tmp_path_factory):
    """Start processes for this module's fixtures; every one is stopped at the module's end."""
    with Processes(ros_env, tmp_path_factory.mktemp('processes')) as procs:
        yield procs


@pytest.fixture
def here(ros_domain, monkeypatch, capsys):
    """
    Return ``run(command, *arguments)``: a robot-dynamics command's handler in this process.

    ``run`` returns the command's exit status and its output (what it wrote and its stderr);
    ``run.out`` is what the command running (or the last one) has written so far.
    The command's node joins this process's DDS (the probe's, on the loopback) on the module's
    domain; its profile named beforehand, the command leaves the environment as it found it.
    """
    monkeypatch.setenv('ROS_DOMAIN_ID', str(ros_domain))
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    named = dict(os.environ)
    use_profile(named)
    for name in PROFILE_VARIABLES.values():
        if named.get(name) and not os.environ.get(name):
            monkeypatch.setenv(name, named[name])

    def run(command, *arguments):
        args = build_parser().parse_args([command, *arguments])
        run.out = io.StringIO()
        status = args.handler(args, out=run.out)
        return status, run.out.getvalue() + capsys.readouterr().err
    run.out = io.StringIO()
    return run


@pytest.fixture
def processes(ros_env, tmp_path):
    """Start processes for one test; every one is stopped at its end, also when it fails."""
    with Processes(ros_env, tmp_path) as procs:
        yield procs


@pytest.fixture
def local_node(ros_domain):
    """Return a node of this process on the module's domain and its executor (the test spins)."""
    context = Context()
    rclpy.init(context=context, domain_id=ros_domain)
    node = Node('local_test', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        yield node, executor
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


@pytest.fixture(scope='module')
def module_probe(ros_domain):
    """Return a :class:`TestNode` on the module's domain for the module's fixtures."""
    with TestNode(ros_domain) as node:
        yield node


@pytest.fixture
def probe(ros_domain):
    """
    Return a :class:`TestNode` on the module's domain for one test.

    One per test: what a test subscribed to (1 kHz streams) goes away with it, so the next test
    does not pay for the earlier tests' subscriptions.
    """
    with TestNode(ros_domain) as node:
        yield node


@pytest.fixture
def loop(processes, probe):
    """
    Return ``start(robot, controller=(), simulator=(), lockstep=True)``: a ``closed_loop.Loop``.

    Everything it started stops after the test.
    """
    started = []

    def start(robot, controller=(), simulator=(), lockstep=True):
        started.append(Loop(processes, probe, robot, controller, simulator, lockstep))
        return started[-1]
    yield start
    for item in started:
        item.stop()
