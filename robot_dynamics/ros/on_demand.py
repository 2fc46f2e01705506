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
Subscriptions read outside rclpy's executor: on demand, or by a thread waiting on them alone.

rclpy's executor spends ~0.25-0.5 ms of Python on every message it dispatches (it rebuilds its
wait set from every entity of the node each time): a quarter to half a core for a 1 kHz stream.
A subscription in the :class:`OnDemand` group is never dispatched by it. DDS keeps its newest
message (depth 1) until :func:`take_next` reads it: when the node needs a sample (the
kinematics node's seeds, the simulator's command at each step); with a :class:`Waiter`, which
sleeps in a wait set holding that subscription alone until a message comes (the lockstep
simulator waiting for the command that answers its state); or in a :class:`SubscriptionThread`
that waits so and calls back for each message (the controller's cycle on each joint state).
"""

import threading

from rclpy.callback_groups import CallbackGroup
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

#: How often a waiting SubscriptionThread looks at its stop flag [ns].
POLL_NS = 50_000_000


class OnDemand(CallbackGroup):
    """A callback group the executor never runs: its subscriptions are read when needed."""

    def can_execute(self, entity):
        return False

    def beginning_execution(self, entity):
        return False

    def ending_execution(self, entity):
        pass


def take_next(subscription, with_info=False):
    """
    Return the next message ``subscription`` (of an :class:`OnDemand` group) holds, or None.

    With a history of depth 1 (the loop's QoS) that is the newest. ``with_info``: ``(message,
    info)``, info being rmw's message info (``source_timestamp`` [ns, the publisher's system
    clock], ``received_timestamp``, ...).
    """
    # what rclpy's executor and wait_for_message do with a subscription that is ready
    with subscription.handle:
        taken = subscription.handle.take_message(subscription.msg_type, subscription.raw)
    if taken is None:
        return None
    return taken if with_info else taken[0]


class Waiter:
    """Wait for the next message of an :class:`OnDemand` subscription, in a wait set of its own."""

    def __init__(self, node, subscription):
        self._subscription = subscription
        self._wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, node.context.handle)

    def wait(self, timeout_ns, with_info=False):
        """Return the newest message (see :func:`take_next`), waiting up to ``timeout_ns``."""
        # a message already there ends the wait at once
        with self._subscription.handle:
            self._wait_set.clear_entities()
            self._wait_set.add_subscription(self._subscription.handle)
            self._wait_set.wait(timeout_ns)
        return take_next(self._subscription, with_info)


class SubscriptionThread:
    """
    Call ``callback(msg)`` holding ``lock`` for each message of an :class:`OnDemand` subscription.

    The thread sleeps in a wait set of that subscription alone (the GIL released), so a message
    costs its callback and one take, not a pass of the executor. An exception from ``callback``
    ends the thread and is raised again in the executor's thread, where the node's own callbacks
    fail: a :class:`~robot_dynamics.ros.runner.StartupError` stops the node as it would there.
    Call :meth:`stop` before the node is destroyed.
    """

    def __init__(self, node, subscription, callback, lock, name):
        self._node = node
        self._subscription = subscription
        self._callback = callback
        self._lock = lock
        self._stopping = threading.Event()
        self._error = None
        self._raise = node.create_guard_condition(self._raise_error)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self):
        waiter = Waiter(self._node, self._subscription)
        try:
            while not self._stopping.is_set():
                msg = waiter.wait(POLL_NS)
                if msg is not None:
                    with self._lock:
                        self._callback(msg)
        except Exception as exc:  # noqa: B902 - any error: the executor's thread decides
            if self._stopping.is_set() or not self._node.context.ok():
                return      # shut down under a wait or a take: a normal stop
            self._error = exc
            self._raise.trigger()

    def _raise_error(self):
        raise self._error

    def stop(self):
        """End the thread (within POLL_NS) and wait for it."""
        self._stopping.set()
        self._thread.join()
