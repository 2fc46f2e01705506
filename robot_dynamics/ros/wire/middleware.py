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
rclpy started with the package's Fast DDS profile: loopback only, lost samples sent again in 50 ms.

Loopback by default: the graph is a robot's control loop, and nothing on another host should
reach it or hear it. The profile ``fastdds/loopback_v2.xml`` (``_v3``: the element names differ
between Fast DDS 2, up to Jazzy, and 3, from Kilted) gives every participant shared memory and
UDP on 127.0.0.1 only, Fast DDS's built-in transports (bound to every interface) off, and
discovery's multicast group joined on loopback alone. ``ROS_AUTOMATIC_DISCOVERY_RANGE`` would
undo that: with ``LOCALHOST``, Kilted's rmw_fastrtps adds a UDP transport of its own, bound to
0.0.0.0, whatever the profile says. So where that variable is unset or ``LOCALHOST`` the process
sets it to ``SYSTEM_DEFAULT`` (the profile decides, on Jazzy and Kilted alike); its child
processes inherit both. A graph across machines is an explicit choice:
``ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET`` loads ``fastdds/writers_v2.xml`` (``_v3``) instead,
Fast DDS's own transports and discovery (secure it with SROS2, see the README).

Both profiles make every reliable writer's heartbeat period 50 ms. A reliable reader that missed
a sample asks for it when the writer's heartbeat tells it what was sent, and it delivers in
order, so what follows waits too. Fast DDS's periodic heartbeat comes every 3 s by default. On a
host that does not run a process for a while (a loaded machine) Fast DDS's shared-memory
transport loses a sample now and then, and nothing else repairs it sooner where no more samples
follow: in lockstep the simulator publishes one state and waits for its answer, and that wait
ended at ``lockstep_timeout`` (1 s) instead.

A service's answer waits for its client: rmw_fastrtps sends it only once the service's response
writer has discovered the client's reader, and drops it after the writer's ``max_blocking_time``
(Fast DDS: 100 ms). A client sends as soon as it has discovered the server, and on a busy host the
server can take longer to discover the client: an action client then waits for its goal's answer
forever. The wait holds the interpreter's lock (rclpy sends with it held), and so a control cycle
in the same process: only a process without one waits longer, :func:`wait_for_clients`.

The environment keeps the last word: a profile of its own (``FASTDDS_DEFAULT_PROFILES_FILE``,
``FASTRTPS_DEFAULT_PROFILES_FILE``) or another middleware (``RMW_IMPLEMENTATION``) is left
alone, and so is the discovery range then.
"""

import atexit
import contextlib
import importlib.metadata
import os
from pathlib import Path
import re
import signal
import tempfile
import threading
import time

import rclpy
from rclpy.signals import SignalHandlerOptions

from ...stamps import s_to_ns, split

#: Longest time [s] a wait of a process's own stays deaf to a stop (an executor's spin, a tool's
#: wait): Python runs a signal's handler only between two of its own steps.
STOP_POLL = 0.1
#: The variables by which Fast DDS 2 and 3 find a profile (Kilted's rmw_fastrtps reads both).
PROFILE_VARIABLES = {2: 'FASTRTPS_DEFAULT_PROFILES_FILE', 3: 'FASTDDS_DEFAULT_PROFILES_FILE'}
PROFILES = Path(__file__).with_name('fastdds')
#: ROS 2 distributions with Fast DDS 2 (their rclpy: up to 7); later ones have Fast DDS 3.
FAST_DDS_2 = ('humble', 'iron', 'jazzy')
#: ROS 2's discovery range variable; its value that opts in to a graph across machines, and
#: the one under which the profile alone decides.
RANGE_VARIABLE = 'ROS_AUTOMATIC_DISCOVERY_RANGE'
NETWORK_RANGE = 'SUBNET'
PROFILE_RANGE = 'SYSTEM_DEFAULT'
#: The writer profile that rmw_fastrtps gives every service's response writer, where there is one.
SERVICE_PROFILE = 'service'
_DEFAULT_WRITER = re.compile(r'<data_writer profile_name="robot_dynamics_writer"[^>]*>(.*?)'
                             r'</data_writer>', re.S)


def fast_dds_major(environ=os.environ):
    """Return Fast DDS's major version of this ROS 2 (2 or 3), or None where unknown."""
    distro = environ.get('ROS_DISTRO')
    if distro:
        return 2 if distro in FAST_DDS_2 else 3
    for name in ('rclpy', 'ros-rclpy'):
        try:
            major = int(importlib.metadata.version(name).split('.')[0])
        except (importlib.metadata.PackageNotFoundError, ValueError):
            continue
        return 2 if major <= 7 else 3
    return None


def use_profile(environ=os.environ):
    """
    Name the package's Fast DDS profile in ``environ`` unless it names one; return its path.

    ``loopback_v<major>.xml``, with ``ROS_AUTOMATIC_DISCOVERY_RANGE`` set to ``SYSTEM_DEFAULT``
    where it was unset or ``LOCALHOST``; ``writers_v<major>.xml`` where it is ``SUBNET``. None
    (and ``environ`` untouched) where a profile or another middleware is named, or the Fast DDS
    version is unknown. Call before rclpy starts: Fast DDS reads it once.
    """
    if any(environ.get(name) for name in PROFILE_VARIABLES.values()):
        return None
    if not environ.get('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp').startswith('rmw_fastrtps'):
        return None
    major = fast_dds_major(environ)
    if major is None:
        return None
    scope = environ.get(RANGE_VARIABLE, '').upper()
    if scope == NETWORK_RANGE:
        path = PROFILES / f'writers_v{major}.xml'
    else:
        path = PROFILES / f'loopback_v{major}.xml'
        if scope in ('', 'LOCALHOST'):
            environ[RANGE_VARIABLE] = PROFILE_RANGE
    environ[PROFILE_VARIABLES[major]] = str(path)
    return path


def wait_for_clients(seconds, environ=os.environ):
    """
    Make this process's services wait up to ``seconds`` for a client's reader; return the profile.

    The package's profile in force, its services' response writers given the profile
    :data:`SERVICE_PROFILE` (its writers' settings and a ``max_blocking_time`` of ``seconds``),
    written to a temporary file that ``environ`` names instead (removed at exit). None (and
    ``environ`` untouched) where the profile in force is not one of the package's files. Call
    before rclpy starts.
    """
    for variable in PROFILE_VARIABLES.values():
        named = Path(environ.get(variable) or PROFILES)
        # the package's, from this copy of it or another (a checkout's, named by its tests)
        ours = PROFILES / named.name
        if named.is_file() and ours.is_file() and named.read_bytes() == ours.read_bytes():
            break
    else:
        return None
    text = ours.read_text()
    sec, nanosec = split(s_to_ns(seconds))
    service = (f'<data_writer profile_name="{SERVICE_PROFILE}">\n      <qos><reliability>'
               f'<max_blocking_time><sec>{sec}</sec><nanosec>{nanosec}</nanosec>'
               f'</max_blocking_time></reliability></qos>'
               f'{_DEFAULT_WRITER.search(text).group(1)}</data_writer>\n  </profiles>')
    fd, path = tempfile.mkstemp(prefix='robot_dynamics_fastdds_', suffix='.xml')
    with os.fdopen(fd, 'w') as out:
        out.write(text.replace('</profiles>', service))
    atexit.register(Path(path).unlink, missing_ok=True)
    environ[variable] = path
    return Path(path)


def init(answer_wait=None, **kwargs):
    """
    Start rclpy (``kwargs``: rclpy.init's) with the package's profile, no signal handlers.

    ``answer_wait``: how long [s] the services' answers wait for their clients
    (:func:`wait_for_clients`; None: Fast DDS's 100 ms).
    """
    use_profile()
    if answer_wait is not None:
        wait_for_clients(answer_wait)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO, **kwargs)


@contextlib.contextmanager
def tool_node(name):
    """
    Yield ``(node, stop)``: a node of its own context, and the Event SIGINT and SIGTERM set.

    For the command-line tools that talk to the graph for a while: the signals only ask them to
    end (their handlers are restored on exit), so that they can tidy up what they started.
    """
    context = rclpy.Context()
    init(context=context)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set())
                for sig in (signal.SIGINT, signal.SIGTERM)}
    node = rclpy.create_node(name, context=context)
    try:
        yield node, stop
    finally:
        node.destroy_node()
        context.try_shutdown()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def stopped(stop, seconds):
    """
    Wait up to ``seconds`` for ``stop`` (a :func:`tool_node`'s); return whether it was set.

    In slices of STOP_POLL: a signal that another thread of the process takes (one of the
    middleware's: the kernel may hand a Ctrl-C to any) runs its Python handler only once the
    main thread runs Python again, which one long wait would put off to its end.
    """
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0.0:
        if stop.wait(min(STOP_POLL, left)):
            return True
    return stop.is_set()
