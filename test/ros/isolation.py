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
Isolated ROS 2 process groups: a domain held through a lock file, and processes stopped by group.

Used by the fixtures of ``conftest.py`` next to this file and by ``bench/bench_ros.py``, so that
tests and benchmarks running at the same time on this machine take distinct ``ROS_DOMAIN_ID``s
from one pool and never see each other's traffic. Discovery stays on loopback.
"""

import ctypes
import fcntl
import os
from pathlib import Path
import signal
import socket
import subprocess
import sys
import tempfile
import warnings

BIN = Path(sys.executable).parent
_DOMAINS = range(1, 102)
_LOCK_DIR = Path(tempfile.gettempdir()) / 'robot_dynamics_ros_domains'


def try_lock(path):
    """Return the file ``path`` open and locked by this process, or None if another holds it."""
    handle = open(path, 'w')
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


def lock_domain():
    """Return ``(domain, open lock file)`` for the first domain no other process holds."""
    _LOCK_DIR.mkdir(exist_ok=True)
    for domain in _DOMAINS:
        handle = try_lock(_LOCK_DIR / f'{domain}.lock')
        if handle is not None:
            return domain, handle
    raise RuntimeError(f'every ROS domain in {_DOMAINS} is in use on this machine')


def environment(domain, log_dir):
    """
    Return the environment of processes on ``domain`` logging to ``log_dir``.

    Their temporary files go there too (``TMPDIR``), removed with it.
    """
    env = dict(os.environ)
    env.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               ROS_LOG_DIR=str(log_dir), TMPDIR=str(log_dir),
               AMENT_PREFIX_PATH=os.pathsep.join(
                   p for p in (sys.prefix, os.environ.get('AMENT_PREFIX_PATH')) if p),
               PYTHONUNBUFFERED='1', RCUTILS_LOGGING_BUFFERED_STREAM='0')
    return env


#: Headless Chromium's flags for the view's page here: WebGL in software (no GPU on these hosts).
CHROMIUM_ARGS = ('--use-gl=angle', '--use-angle=swiftshader', '--enable-unsafe-swiftshader')


def free_port():
    """Return a TCP port on 127.0.0.1 that nothing listens on now (for a view's server)."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _end_with_the_test():
    """
    In the child before it runs: SIGTERM to it when the test process dies (Linux).

    A test run killed by a signal runs no fixture: its nodes (in sessions of their own) would
    go on publishing on a domain that a later run takes. A bringup ends its own nodes on SIGTERM.
    SIGINT and SIGTERM take their default action, as from a terminal: a suite started in the
    background by a shell without job control (``make test &`` in a script, a CI runner's)
    runs with SIGINT ignored, which every process it starts inherits (a Ctrl-C test's demo
    then ran to its end, deaf to the signal).
    """
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)     # PR_SET_PDEATHSIG


def hung_in_middleware_teardown(output):
    """
    Return whether ``output`` ends in the dump of a teardown past its bound in the middleware.

    That dump (``runner.bounded_teardown``, ``runner.bound_the_exit``: faulthandler's "Timeout
    (h:mm:ss)!", then every thread's stack, innermost call first) has a thread that is in
    rclpy's code and was sent there by a node's teardown (``run_node``, or the ``stop`` of an
    in-process bringup), or no thread with a Python frame left: the interpreter's exit after
    the ROS part ended, in the C++ teardown of the middleware's (a view beside another suite).
    """
    _, timeout, dump = output.rpartition('Timeout (')
    if not timeout:
        return False
    stacks = dump.split('(most recent call first):')[1:]
    for stack in stacks:
        frames = [line.strip() for line in stack.splitlines() if line.strip().startswith('File')]
        if (frames and '/rclpy/' in frames[0]
                and any(f.endswith((' in run_node', ' in stop')) for f in frames)):
            return True
    return bool(stacks) and all('<no Python frame>' in stack for stack in stacks)


class Processes:
    """Start processes on the test's domain and stop them all, by process group."""

    def __init__(self, env, log_dir):
        self.env = env
        self.log_dir = Path(log_dir)
        self.started = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop_all()

    def start(self, name, args):
        """Start ``args`` (a list; a bare executable name is looked up in the venv's bin)."""
        if not os.path.isabs(args[0]) and (BIN / args[0]).exists():
            args = [str(BIN / args[0])] + list(args[1:])
        log = open(self.log_dir / f'{name}-{len(self.started)}.log', 'w+')
        proc = subprocess.Popen(args, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=_end_with_the_test)
        proc.log = log
        proc.name = name
        self.started.append(proc)
        return proc

    @staticmethod
    def output(proc):
        """Return everything ``proc`` printed so far (also once it is stopped, its log closed)."""
        if not proc.log.closed:
            proc.log.flush()
        return Path(proc.log.name).read_text(errors='replace')

    def tails(self, lines=60):
        """Return the last ``lines`` lines of every process's output, each under its command."""
        return '\n'.join(f'$ {" ".join(proc.args)}  (pid {proc.pid}, status {proc.poll()})\n'
                         + '\n'.join(self.output(proc).splitlines()[-lines:])
                         for proc in self.started)

    def stop(self, proc, sig=signal.SIGINT, timeout=20.0):
        """
        Stop ``proc``'s process group with ``sig``, then SIGKILL; return its exit status.

        ``sig`` goes twice, ``timeout / 2`` apart: rarely (about one stop in a hundred suite
        runs' worth) a node did not end on the first SIGINT; a second one ends it cleanly,
        where SIGKILL would fail the test's check of the exit status. A node whose teardown
        the middleware held past its bound (:func:`hung_in_middleware_teardown`; Fast DDS, once
        in some twenty suite runs) stopped as asked and ended the hang itself: status 0, with a
        warning in the test report.
        """
        for _ in range(2):
            if proc.poll() is not None:
                break
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout / 2)
            except subprocess.TimeoutExpired:
                pass
        if proc.poll() is None:
            # still there: node processes print every thread's stack on SIGUSR1 (runner.py), so
            # the output shows where it hung
            try:
                os.killpg(proc.pid, signal.SIGUSR1)
                proc.wait(2.0)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        try:   # whatever of its group is left (children of a bringup, say)
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        status = proc.wait()
        output = self.output(proc) if status == 1 else ''
        if hung_in_middleware_teardown(output):
            # a built-in category: pytest-xdist rebuilds a worker's warning by importing its
            # class's module, which a test helper's is not to the controller process
            warnings.warn(UserWarning(
                f'{" ".join(proc.args)}: the middleware held its teardown past the bound\n'
                + output[-3000:]))
            return 0
        return status

    def stop_all(self):
        """Stop every process started here (newest first)."""
        for proc in reversed(self.started):
            self.stop(proc)
            proc.log.close()
