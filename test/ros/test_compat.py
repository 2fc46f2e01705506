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
What ``robot_dynamics.ros.wire.compat`` promises, on whichever rclpy the environment has.

The reading of subscriptions outside the executor (and its fallback) is tested through
``on_demand`` in test_on_demand.py.
"""

import time

from control_msgs.action import FollowJointTrajectory
import pytest
import rclpy
from rclpy.action import ActionServer
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.serialization import deserialize_message
from robot_dynamics.ros.wire import compat
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

pytestmark = pytest.mark.ros


@pytest.fixture
def context(ros_domain):
    """Return an rclpy context of its own on the module's domain."""
    context = Context()
    rclpy.init(context=context, domain_id=ros_domain)
    yield context
    rclpy.try_shutdown(context=context)


def _wait(condition, what):
    deadline = time.monotonic() + 60.0
    while not condition():
        assert time.monotonic() < deadline, f'no {what} within 60 s'
        time.sleep(0.01)


@pytest.mark.parametrize('take', ['rcl', 'compat'])
def test_each_message_of_a_raw_subscription_names_its_publisher(context, take):
    # two nodes publish on one topic; each message's GID is its publisher's in the graph, and
    # its bytes the message it sent: rcl's take (what Jazzy's raw subscriptions use) and
    # compat.take, on either distribution
    nodes = [Node(f'compat_{name}', context=context) for name in ('reader', 'left', 'right')]
    try:
        reader = nodes[0]
        subscription = reader.create_subscription(JointState, 'two_sources', lambda msg: None,
                                                  10, raw=True)
        publishers = [node.create_publisher(JointState, 'two_sources', 10) for node in nodes[1:]]
        _wait(lambda: all(p.get_subscription_count() for p in publishers) and len(
            reader.get_publishers_info_by_topic('two_sources')) == 2, 'match')
        gids = {info.node_name: bytes(info.endpoint_gid).hex()
                for info in reader.get_publishers_info_by_topic('two_sources')}
        read = compat.SerializedTake() if take == 'rcl' else \
            lambda handle: compat.take(subscription, with_info=True)
        assert read(subscription.handle) is None          # nothing yet
        sent = {}
        for publisher, node in zip(publishers, nodes[1:]):
            sent[node.get_name()] = JointState(name=[node.get_name()] * 200,
                                               position=[float(len(sent))] * 200)
            publisher.publish(sent[node.get_name()])
        taken = []

        def both():
            taken.extend(t for t in [read(subscription.handle)] if t is not None)
            return len(taken) == 2
        _wait(both, 'two messages')
        for data, info in taken:
            msg = deserialize_message(data, JointState)
            assert msg == sent[msg.name[0]]            # over the first buffer's 1,024 bytes
            gid = info['publisher_gid']
            assert gid['implementation_identifier'] == 'rmw_fastrtps_cpp'
            assert gids[msg.name[0]].startswith(bytes(gid['data']).hex().rstrip('0'))
            assert info['source_timestamp'] <= info['received_timestamp']
        assert compat.PUBLISHER_GID
    finally:
        for node in nodes:
            node.destroy_node()


def test_rcl_error_is_what_rclpy_raises_for_a_node_not_discovered(context):
    # what bringup's readiness check catches while a node is not discovered yet
    node = Node('compat_test', context=context)
    try:
        with pytest.raises(compat.RCLError, match='nonexistent node'):
            node.get_service_names_and_types_by_node('no_such_node', '/')
    finally:
        node.destroy_node()


class _SlowSend:
    """
    An action client's rcl handle that pauses after sending each request.

    The response then comes back before rclpy's send call has recorded the request: the race
    of ros2/rclpy#1123, made certain.
    """

    def __init__(self, handle):
        self._handle = handle

    def __getattr__(self, name):
        attribute = getattr(self._handle, name)
        if not name.startswith('send_'):
            return attribute

        def send(*args):
            sequence_number = attribute(*args)
            time.sleep(0.2)
            return sequence_number
        return send

    def __enter__(self):
        return self._handle.__enter__()

    def __exit__(self, *exc):
        return self._handle.__exit__(*exc)


def test_action_client_keeps_responses_that_come_before_the_send_returns(probe):
    def execute(goal_handle):
        goal_handle.succeed()
        return FollowJointTrajectory.Result(error_string='done')
    ActionServer(probe.node, FollowJointTrajectory, 'slow_send', execute)
    client = compat.ActionClient(probe.node, FollowJointTrajectory, 'slow_send')
    probe.wait_for(client.server_is_ready, what='the action server')
    client._client_handle = _SlowSend(client._client_handle)
    # sent from this thread while the probe's executor spins in its own, as the demo does
    sent = client.send_goal_async(FollowJointTrajectory.Goal())
    probe.wait_for(sent.done, 10.0, 'the goal response')
    assert sent.result().accepted
    result = sent.result().get_result_async()
    probe.wait_for(result.done, 10.0, 'the result response')
    assert result.result().result.error_string == 'done'


class _CountingExecutor(SingleThreadedExecutor):
    """A single-threaded executor that counts its wake-ups (what futures' done callbacks do)."""

    wakes = 0

    def wake(self):
        self.wakes += 1
        super().wake()


def test_action_client_answers_an_executor_as_soon_as_it_joins_its_node(context):
    # an executor spinning the node in another thread may ask the new client for its entities
    # the moment it is added (Kilted's rclpy created the client's lock only after that: the
    # AttributeError ended a test probe's spinning thread)
    node = Node('compat_test', context=context)
    asked = []
    add_waitable = node.add_waitable

    def add_and_ask(waitable):
        add_waitable(waitable)
        asked.append(waitable.get_num_entities())
    node.add_waitable = add_and_ask
    try:
        compat.ActionClient(node, FollowJointTrajectory, 'follow')
        # the goal, cancel and result clients; the feedback and status subscriptions
        assert [(n.num_clients, n.num_subscriptions) for n in asked] == [(3, 2)]
    finally:
        node.destroy_node()


def test_spin_until_complete_wakes_the_executor_once_per_call(context):
    node = Node('compat_test', context=context)
    executor = _CountingExecutor(context=context)
    executor.add_node(node)
    try:
        node.create_service(Trigger, 'trigger',
                            lambda request, response: Trigger.Response(success=True))
        client = node.create_client(Trigger, 'trigger')
        assert client.wait_for_service(timeout_sec=60.0)
        before = executor.wakes
        for _ in range(200):
            future = client.call_async(Trigger.Request())
            compat.spin_until_complete(executor, future, 10.0)
            assert future.done() and future.result().success
        # one done callback per call (Jazzy's spin_until_future_complete adds one per turn of
        # its loop, and their wake-ups make the next call's loop turn more: thousands here)
        assert executor.wakes - before <= 200
        # a reply that does not come: back after the timeout, the future still pending
        silent = node.create_client(Trigger, 'nobody_serves_this')
        future = silent.call_async(Trigger.Request())
        compat.spin_until_complete(executor, future, 0.2)
        assert not future.done()
    finally:
        executor.shutdown()
        node.destroy_node()
