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
The recorder: chosen topics into an MCAP file that ``ros2 bag`` and Foxglove Studio replay.

The file is laid out as rosbag2's MCAP storage writes it: profile ``ros2``, one schema per
message type named ``pkg/msg/Type`` with its complete ``ros2msg`` definition
(:mod:`~robot_dynamics.ros.tools.definitions`), one channel per topic with message encoding ``cdr``
and the metadata ``offered_qos_profiles`` (the publishers' QoS, so that ``ros2 bag play``
offers ``/robot_description`` transient-local again) and ``topic_type_hash``, and each message's
serialized CDR bytes as received. ``log_time`` is the time the message was received (the
middleware's receive stamp; under ``use_sim_time`` the node's simulated clock when it is
written), ``publish_time`` the publisher's source timestamp, as rosbag2 records them. Messages
are zstd-compressed in chunks of about 1 MB. Every CRC the format has is written (each chunk's,
the data section's, the summary's), so that a reader finds any damage to the file.

Nothing is done per message that is not needed: the subscriptions are raw (nothing is
deserialised) and read outside rclpy's executor, whose pass per message cost more than the
whole write, by one thread that takes everything that arrived every ``DRAIN_PERIOD`` (the
subscriptions queue up to ``QUEUE_DEPTH`` messages each in between).

Topics are found in the graph (``get_topic_names_and_types``) once a second, so topics whose
publishers start after the recorder are picked up; a topic is subscribed once it has a
publisher, with a QoS that matches every publisher then present (reliable and transient-local
only if all of them are, as rosbag2 adapts it). The file is finished (summary, statistics,
indexes) when the node is destroyed; a process killed with SIGKILL leaves the chunks written so
far, readable by MCAP readers that recover unfinished files.
"""

import importlib
import os
import sys
import threading

from mcap.well_known import MessageEncoding, Profile, SchemaEncoding
from mcap.writer import Writer
import rclpy.logging
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
import yaml

from .definitions import DefinitionNotFoundError, message_definition, namespace, RECORDED_TOPICS
from ..nodes.parameters import declare, Spec
from ..nodes.runner import run_node
from ..wire.on_demand import OnDemand, take_next
from ...errors import InputError
from ...stamps import split

PARAMETERS = (
    Spec('path', '', 'MCAP file to write (must not exist yet; its folder must).'),
    Spec('topics', list(RECORDED_TOPICS),
         'Topics to record, absolute names; each is subscribed once it has a publisher '
         '(default: robot_dynamics.ros.tools.definitions.RECORDED_TOPICS).'),
    Spec('namespaces', [''],
         "Arms' namespaces (e.g. [/left, /right]): each of the topics is recorded under each of "
         'them (default: the root only, the topics as given).'),
    Spec('graph_period', 1.0, 'How often the graph is searched for the topics [s].',
         bounds=(0.05, 60.0)),
)

#: Depth of each subscription's queue: 1 s of a 1 kHz topic, for the moments the recorder's
#: thread is late (a chunk being compressed, a loaded machine).
QUEUE_DEPTH = 1000
#: Chunk size of the MCAP file [bytes] (the unit of compression and of loss on a hard kill).
CHUNK_SIZE = 1024 * 1024
#: How often the recorder's thread takes what arrived [s]: 50 wake-ups a second for every topic.
DRAIN_PERIOD = 0.02


def message_class(type_name):
    """Return the Python class of ``pkg/msg/Name`` or an action's ``pkg/action/X_Part``."""
    package, folder, name = type_name.split('/')
    module = importlib.import_module(f'{package}.{folder}')
    if hasattr(module, name):
        return getattr(module, name)
    action, _, part = name.partition('_')
    # rosidl exports an action's feedback message only through the action's Impl
    implementation = getattr(getattr(module, action, None), 'Impl', None)
    if part == 'FeedbackMessage' and implementation is not None:
        return implementation.FeedbackMessage
    raise InputError(f'message type {type_name!r}: no class {name} in {module.__name__}')


def _duration(duration):
    sec, nsec = split(duration.nanoseconds)
    return {'sec': sec, 'nsec': nsec}


def offered_qos_yaml(profiles):
    """Return rosbag2's ``offered_qos_profiles`` channel metadata (YAML) for QoS profiles."""
    return yaml.safe_dump([{
        'history': p.history.short_key,
        'depth': p.depth,
        'reliability': p.reliability.short_key,
        'durability': p.durability.short_key,
        'deadline': _duration(p.deadline),
        'lifespan': _duration(p.lifespan),
        'liveliness': p.liveliness.short_key,
        'liveliness_lease_duration': _duration(p.liveliness_lease_duration),
        'avoid_ros_namespace_conventions': p.avoid_ros_namespace_conventions,
    } for p in profiles], sort_keys=False)


def subscription_qos(profiles):
    """Return a QoS that receives from every publisher with one of ``profiles``."""
    reliable = all(p.reliability == ReliabilityPolicy.RELIABLE for p in profiles)
    transient = all(p.durability == DurabilityPolicy.TRANSIENT_LOCAL for p in profiles)
    return QoSProfile(
        depth=QUEUE_DEPTH,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if transient else DurabilityPolicy.VOLATILE)


def check_new(path):
    """Raise ``InputError`` if a recording cannot be started at ``path``: it exists already."""
    if os.path.exists(path):
        raise InputError(f'recording {os.fspath(path)!r} exists already: remove it or choose '
                         'another path')


class McapRecorder:
    """
    An MCAP file of serialized ROS 2 messages; thread-safe; no ROS types.

    :meth:`add_topic` registers a topic (and its type's schema once), :meth:`write` appends
    one message's CDR bytes, :meth:`close` finishes the file (later writes are ignored).
    """

    def __init__(self, path):
        self.path = os.fspath(path)
        check_new(self.path)
        try:
            self._stream = open(self.path, 'xb')
        except OSError as exc:
            raise InputError(f'recording {self.path!r}: cannot create it: {exc}') from None
        self._writer = Writer(self._stream, chunk_size=CHUNK_SIZE, enable_data_crcs=True)
        self._writer.start(profile=Profile.ROS2, library='robot_dynamics recorder')
        self._schemas = {}
        self._lock = threading.Lock()
        self.counts = {}
        self.closed = False

    def add_topic(self, topic, type_name, definition, offered_qos='', type_hash=''):
        """
        Register ``topic`` of ``type_name``; return its channel id.

        ``definition`` is the type's complete ``ros2msg`` text, registered once per type; None
        gives a schema without definition (encoding empty, as the MCAP specification says):
        its messages are still recorded and replay with ``ros2 bag`` where the type is
        installed, but readers without it cannot decode them.
        """
        with self._lock:
            if type_name not in self._schemas:
                encoding, data = ((SchemaEncoding.ROS2, definition.encode())
                                  if definition is not None else ('', b''))
                self._schemas[type_name] = self._writer.register_schema(type_name, encoding,
                                                                        data)
            channel = self._writer.register_channel(
                topic, MessageEncoding.CDR, self._schemas[type_name],
                {'offered_qos_profiles': offered_qos, 'topic_type_hash': type_hash})
            self.counts[topic] = 0
        return channel

    def write(self, channel, topic, data, log_time, publish_time):
        """Append one message (CDR bytes) to ``channel``; times in integer nanoseconds."""
        with self._lock:
            if self.closed:
                return
            count = self.counts[topic]
            self._writer.add_message(channel, log_time, data, publish_time, sequence=count)
            self.counts[topic] = count + 1

    def close(self):
        """Finish the file: the last chunk, the summary and the statistics."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self._writer.finish()
            self._stream.close()


class RecorderNode(Node):
    """Record the ``topics`` parameter's topics to the MCAP file ``path`` until destroyed."""

    def __init__(self, **kwargs):
        super().__init__('recorder', **kwargs)
        self.params = declare(self, PARAMETERS)
        if not self.params.path:
            raise InputError('path: give the MCAP file to write (e.g. -p path:=run.mcap)')
        bad = [t for t in self.params.topics if not t.startswith('/')]
        if bad:
            raise InputError(f'topics: expected absolute names (starting with /), got {bad}')
        self.recorder = McapRecorder(self.params.path)
        self._name = self.get_name()   # for the last log line, when the handle may be gone
        self._pending = list(dict.fromkeys(
            namespace(ns) + topic
            for ns in self.params.namespaces for topic in self.params.topics))
        self._recorded = []            # (subscription, channel, topic), read by the thread
        self._lock = threading.Lock()
        self._sim_time = self.get_parameter('use_sim_time').value
        self.get_logger().info(f'recording to {self.recorder.path}: {", ".join(self._pending)} '
                               '(each once it has a publisher)')
        self.discover()
        self._timer = self.create_timer(self.params.graph_period, self.discover)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drain_loop, name='recorder', daemon=True)
        self._thread.start()

    def discover(self):
        """Subscribe to the wanted topics that have publishers now."""
        if not self._pending:
            return
        types = dict(self.get_topic_names_and_types())
        for topic in [t for t in self._pending if t in types]:
            publishers = self.get_publishers_info_by_topic(topic)
            if not publishers:
                continue   # only subscribers so far: nothing to record yet
            if len(types[topic]) != 1:
                self.get_logger().error(f'not recording {topic}: it has several types '
                                        f'{types[topic]}')
                self._pending.remove(topic)
                continue
            self._pending.remove(topic)
            self._subscribe(topic, types[topic][0], publishers)

    def _subscribe(self, topic, type_name, publishers):
        try:
            msg_type = message_class(type_name)
        except (ImportError, InputError) as exc:
            self.get_logger().error(f'not recording {topic}: cannot import {type_name} ({exc})')
            return
        try:
            definition = message_definition(type_name)
        except DefinitionNotFoundError as exc:
            definition = None
            self.get_logger().warning(f'recording {topic} without its message definition '
                                      f'(readers without ROS cannot decode it): {exc}')
        profiles = [info.qos_profile for info in publishers]
        channel = self.recorder.add_topic(topic, type_name, definition,
                                          offered_qos_yaml(profiles),
                                          str(publishers[0].topic_type_hash))
        subscription = self.create_subscription(msg_type, topic, lambda data: None,
                                                subscription_qos(profiles), raw=True,
                                                callback_group=OnDemand())
        with self._lock:
            self._recorded.append((subscription, channel, topic))
        self.get_logger().info(f'recording {topic} ({type_name})')

    def recording(self, topic):
        """Return whether ``topic`` is subscribed to and its subscription has a publisher."""
        with self._lock:
            return any(name == topic and subscription.get_publisher_count() > 0
                       for subscription, _, name in self._recorded)

    def _drain_loop(self):
        while not self._stop.wait(DRAIN_PERIOD):
            self.drain()

    def drain(self):
        """Write every message that arrived since the last call."""
        with self._lock:
            recorded = list(self._recorded)
        clock = self.get_clock()
        for subscription, channel, topic in recorded:
            while (taken := take_next(subscription, with_info=True)) is not None:
                data, info = taken
                received = clock.now().nanoseconds if self._sim_time \
                    else info['received_timestamp']
                if not self.recorder.counts[topic]:
                    # "recording" says subscribed; this, that the topic's data reach the file
                    self.get_logger().info(f'{topic}: first message recorded')
                self.recorder.write(channel, topic, data, received, info['source_timestamp'])

    def destroy_node(self):
        """Finish the MCAP file, then destroy the node."""
        # called twice when rclpy's context shutdown destroys the node before its owner does
        finishing = not self.recorder.closed
        self._stop.set()
        self._thread.join()
        if finishing and self.context.ok():
            self.drain()
        self.recorder.close()
        result = super().destroy_node()
        if not finishing:
            return result
        # logged after destroy_node, through a logger that no longer publishes to /rosout (the
        # context is shut down already when a signal stopped the process)
        counts = self.recorder.counts
        rclpy.logging.get_logger(self._name).info(
            f'wrote {sum(counts.values())} messages on {len(counts)} topics to '
            f'{self.recorder.path}')
        return result


def main(args=None):
    """Run the recorder node (``-p path:=FILE.mcap``)."""
    return run_node(RecorderNode, 'recorder', args)


if __name__ == '__main__':
    sys.exit(main())
