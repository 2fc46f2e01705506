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
as the module runs, so that concurrent test runs on the machine (and the modules of one run)
never see each other's traffic; discovery stays on loopback; ``ROS_LOG_DIR`` is a temporary
folder. Processes are started in their own process group and always stopped by their group id
(SIGINT, then SIGKILL), also when a test fails; their output is kept and shown when a check
about them fails. The test's own node lives in its own rclpy context on that domain and spins in
a background thread; tests wait on conditions with generous time-outs, never on sleeps.
"""

import fcntl
import os
from pathlib import Path
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy

# Discovery stays on loopback for the test process too, however pytest was started.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.setdefault('ROS_LOG_DIR', tempfile.mkdtemp(prefix='robot_dynamics_ros_log_'))

#: Generous limit for anything to happen (process start, discovery, a reply) [s]; the first
#: start in a new install compiles the library's kernels.
TIMEOUT = 120.0
BIN = Path(sys.executable).parent
COLLECT_QOS = QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE)
_DOMAINS = range(1, 102)
_LOCK_DIR = Path(tempfile.gettempdir()) / 'robot_dynamics_ros_domains'


def _lock_domain():
    """Return ``(domain, open lock file)`` for the first domain no other process holds."""
    _LOCK_DIR.mkdir(exist_ok=True)
    for domain in _DOMAINS:
        handle = open(_LOCK_DIR / f'{domain}.lock', 'w')
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        return domain, handle
    raise RuntimeError(f'every ROS domain in {_DOMAINS} is in use on this machine')


class Processes:
    """Start processes on the test's domain and stop them all, by process group."""

    def __init__(self, env, log_dir):
        self.env = env
        self.log_dir = log_dir
        self.started = []

    def start(self, name, args):
        """Start ``args`` (a list; a bare executable name is looked up in the venv's bin)."""
        if not os.path.isabs(args[0]) and (BIN / args[0]).exists():
            args = [str(BIN / args[0])] + list(args[1:])
        log = open(self.log_dir / f'{name}-{len(self.started)}.log', 'w+')
        proc = subprocess.Popen(args, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        proc.log = log
        proc.name = name
        self.started.append(proc)
        return proc

    @staticmethod
    def output(proc):
        """Return everything ``proc`` printed so far."""
        proc.log.flush()
        return Path(proc.log.name).read_text()

    def stop(self, proc, sig=signal.SIGINT, timeout=20.0):
        """Stop ``proc``'s process group with ``sig``, then SIGKILL; return its exit status."""
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        try:   # whatever of its group is left (children of a bringup, say)
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return proc.wait()

    def stop_all(self):
        """Stop every process started here (newest first)."""
        for proc in reversed(self.started):
            self.stop(proc)
            proc.log.close()


class TestNode:
    """
    The test's own node, spinning in a background thread, with waiting helpers.

    Entities created on it live until the module's end: destroying one while the executor
    spins in another thread invalidates a handle the executor holds.
    """

    def __init__(self, domain):
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = Node('test_probe', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self):
        try:
            self.executor.spin()
        except ExternalShutdownException:
            pass

    def close(self):
        """Shut the context down and join the spinning thread."""
        rclpy.try_shutdown(context=self.context)
        self.thread.join(timeout=10.0)
        self.node.destroy_node()

    @staticmethod
    def wait_for(condition, timeout=TIMEOUT, what='condition'):
        """Poll ``condition()`` until true; fail the test naming ``what`` after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                pytest.fail(f'timed out after {timeout:g} s waiting for {what}')
            time.sleep(0.01)

    def collect(self, msg_type, topic, qos=None):
        """
        Subscribe to ``topic``; return the list that receives ``(message, monotonic time)``.

        The default QoS is reliable with a deep history, so that a burst (a simulator running
        faster than real time) is not thinned out before the test reads it.
        """
        received = []
        self.node.create_subscription(
            msg_type, topic, lambda msg: received.append((msg, time.monotonic())),
            qos if qos is not None else COLLECT_QOS)
        return received

    def client(self, srv_type, name, timeout=TIMEOUT):
        """Return a client of ``name`` once the service is there."""
        client = self.node.create_client(srv_type, name)
        self.wait_for(lambda: client.service_is_ready(), timeout, f'service {name}')
        return client

    def call(self, client, request, timeout=TIMEOUT):
        """Call a service and return its response (fail after ``timeout``)."""
        future = client.call_async(request)
        self.wait_for(future.done, timeout, f'a reply from {client.srv_name}')
        return future.result()


@pytest.fixture(scope='module')
def ros_domain():
    """Return a ROS domain id held by this test module alone."""
    domain, handle = _lock_domain()
    yield domain
    handle.close()


@pytest.fixture(scope='module')
def ros_env(ros_domain, tmp_path_factory):
    """Return the environment of processes started by this module."""
    env = dict(os.environ)
    env.update(ROS_DOMAIN_ID=str(ros_domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               ROS_LOG_DIR=str(tmp_path_factory.mktemp('ros_log')),
               AMENT_PREFIX_PATH=os.pathsep.join(
                   p for p in (sys.prefix, os.environ.get('AMENT_PREFIX_PATH')) if p),
               PYTHONUNBUFFERED='1', RCUTILS_LOGGING_BUFFERED_STREAM='0')
    return env


@pytest.fixture(scope='module')
def processes(ros_env, tmp_path_factory):
    """Start processes for this module; every one of them is stopped at the end."""
    procs = Processes(ros_env, tmp_path_factory.mktemp('processes'))
    try:
        yield procs
    finally:
        procs.stop_all()


@pytest.fixture(scope='module')
def probe(ros_domain):
    """Return the module's :class:`TestNode` on its domain."""
    node = TestNode(ros_domain)
    try:
        yield node
    finally:
        node.close()
