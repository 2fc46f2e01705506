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
Subscriptions read outside the executor, and the heap frozen once a node is set up.

The reading is tested both ways ``compat`` offers: outside the executor (rclpy's C extension),
and the fallback where the executor dispatches into a holder of the newest message.
"""

import gc
import threading

import pytest
from robot_dynamics import RobotModel
from robot_dynamics.ros.nodes.description import ModelSubscription
from robot_dynamics.ros.wire import compat
from robot_dynamics.ros.wire.on_demand import OnDemand, SubscriptionThread, take_next
from robot_dynamics.ros.wire.qos import DESCRIPTION_QOS
from std_msgs.msg import Int64, String

pytestmark = pytest.mark.ros


@pytest.fixture
def node(local_node):
    """Return an in-process node and its executor (spun by the test)."""
    return local_node


@pytest.fixture(params=[True, False], ids=['outside_executor', 'executor_fallback'])
def outside_executor(request, monkeypatch):
    """Read on-demand subscriptions outside the executor, or (the fallback) through it."""
    monkeypatch.setattr(compat, 'OUTSIDE_EXECUTOR', request.param)
    return request.param


def _subscribe(node):
    return node.create_subscription(Int64, '/numbers', lambda msg: pytest.fail('dispatched'), 1,
                                    callback_group=OnDemand())


def test_the_executor_never_dispatches_an_on_demand_subscription(node, probe,
                                                                 outside_executor):
    local, executor = node
    subscription = _subscribe(local)
    # the fallback: the executor dispatches into a holder, never to the node's callback
    assert isinstance(subscription.callback, compat.NewestMessage) is not outside_executor
    publisher = probe.node.create_publisher(Int64, '/numbers', 10)
    probe.wait_for(lambda: publisher.get_subscription_count() > 0, what='the subscription')
    for value in range(5):
        publisher.publish(Int64(data=value))
    for _ in range(20):
        executor.spin_once(timeout_sec=0.01)     # would call the failing callback
    # the newest only (depth 1), once
    probe.wait_for(lambda: executor.spin_once(timeout_sec=0.01)
                   or (msg := take_next(subscription)) is not None and msg.data == 4,
                   what='the newest message')
    assert take_next(subscription) is None


def test_thread_calls_back_for_each_message_without_the_executor(node, probe,
                                                                 outside_executor):
    local, executor = node
    subscription = _subscribe(local)
    lock = threading.Lock()
    received = []

    def callback(msg):
        assert lock.locked()                   # under the lock it shares with the callbacks
        received.append((msg.data, threading.current_thread().name))
    thread = SubscriptionThread(local, subscription, callback, lock, 'numbers')
    try:
        publisher = probe.node.create_publisher(Int64, '/numbers', 10)

        def answered(value):
            publisher.publish(Int64(data=value))
            executor.spin_once(timeout_sec=0.01)    # dispatches nothing, or fills the holder
            return any(data == value for data, _ in received)
        # the thread alone calls back
        for value in (7, 8, 9):
            probe.wait_for(lambda value=value: answered(value), what=f'message {value}')
        assert {name for _, name in received} == {'numbers'}
    finally:
        thread.stop()
    assert not thread._thread.is_alive()


def test_the_thread_waits_on_the_subscription_it_is_given_instead(node, probe, outside_executor):
    local, executor = node
    old = _subscribe(local)
    new = local.create_subscription(Int64, '/others', lambda msg: pytest.fail('dispatched'), 1,
                                    callback_group=OnDemand())
    received = []

    def periodic():            # the thread's own callback, as the controller's watchdog
        if not received and old in local.subscriptions:
            thread.resubscribe(new)
    thread = SubscriptionThread(local, old, lambda msg: received.append(msg.data), None,
                                'numbers', periodic=periodic, period=0.01)
    try:
        probe.wait_for(lambda: old not in local.subscriptions, what='the old one destroyed')
        assert new in local.subscriptions
        numbers = probe.node.create_publisher(Int64, '/numbers', 10)
        others = probe.node.create_publisher(Int64, '/others', 10)
        probe.wait_for(lambda: others.get_subscription_count() > 0, what='the new one')
        assert numbers.get_subscription_count() == 0

        def answered(value):
            others.publish(Int64(data=value))
            executor.spin_once(timeout_sec=0.01)    # dispatches nothing, or fills the holder
            return value in received
        probe.wait_for(lambda: answered(5), what='a message through the new one')
        assert set(received) == {5}
    finally:
        thread.stop()


def test_an_error_in_the_thread_is_raised_in_the_executor(node, probe, outside_executor):
    local, executor = node
    subscription = _subscribe(local)

    def callback(msg):
        raise ValueError(f'bad number {msg.data}')
    thread = SubscriptionThread(local, subscription, callback, threading.Lock(), 'numbers')
    try:
        publisher = probe.node.create_publisher(Int64, '/numbers', 10)
        probe.wait_for(lambda: publisher.get_subscription_count() > 0, what='the subscription')
        publisher.publish(Int64(data=13))
        with pytest.raises(ValueError, match='bad number 13'):
            for _ in range(2400):          # 120 s
                executor.spin_once(timeout_sec=0.05)
                publisher.publish(Int64(data=13))
    finally:
        thread.stop()


def test_the_heap_is_frozen_once_the_model_is_built(node, probe):
    local, executor = node
    built = []
    ModelSubscription(local, '/robot_description', {}, built.append)
    publisher = probe.node.create_publisher(String, '/robot_description', DESCRIPTION_QOS)
    publisher.publish(String(data=RobotModel.load('planar_2r').to_urdf()))
    probe.wait_for(lambda: executor.spin_once(timeout_sec=0.05) or built, what='the model')
    # the model the node built is frozen: no longer among the objects that collections walk
    model = built[0]
    assert gc.is_tracked(model) and not any(o is model for o in gc.get_objects())
