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

rclpy's executor runs Python for every message it dispatches (it rebuilds its wait set from every
entity of the node each time), which a 1 kHz stream turns into a large share of a core (the
README's performance section has the figures). A subscription in the :class:`OnDemand` group is
never dispatched by it. DDS keeps its newest message (depth 1) until :func:`take_next` reads it:
when the node needs a sample (the kinematics node's seeds, the simulator's command at each step);
with a :class:`Waiter`, which sleeps in a wait set holding that subscription alone until a message
comes (the lockstep simulator waiting for the command that answers its state); or in a
:class:`SubscriptionThread` that waits so and calls back for each message (the controller's cycle
on each joint state). The take and the wait come from rclpy's C extension, through
:mod:`~robot_dynamics.ros.wire.compat`.
"""

import contextlib
import threading
import time

from rclpy.callback_groups import CallbackGroup

from . import compat

#: How often a waiting SubscriptionThread looks at its stop flag [s].
POLL = 0.05


class OnDemand(CallbackGroup):
    """
    A callback group the executor never runs: its subscriptions are read when needed.

    Subscriptions only. Where rclpy offers no way to read them outside the executor
    (``compat.OUTSIDE_EXECUTOR`` false), the executor runs them after all, into a
    :class:`~robot_dynamics.ros.wire.compat.NewestMessage` instead of their callback.
    """

    def __init__(self):
        super().__init__()
        self._executor_reads = not compat.OUTSIDE_EXECUTOR

    def add_entity(self, entity):
        super().add_entity(entity)
        if self._executor_reads:
            compat.hold_newest(entity)

    def can_execute(self, entity):
        return self._executor_reads

    def beginning_execution(self, entity):
        return self._executor_reads

    def ending_execution(self, entity):
        pass


def take_next(subscription, with_info=False):
    """
    Return the next message ``subscription`` (of an :class:`OnDemand` group) holds, or None.

    With a history of depth 1 (the loop's QoS) that is the newest. ``with_info``: ``(message,
    info)``, info being the middleware's message info (``source_timestamp`` [ns, the
    publisher's system clock], ``received_timestamp``, ...).
    """
    return compat.take(subscription, with_info)


class Waiter:
    """Wait for the next message of an :class:`OnDemand` subscription, in a wait set of its own."""

    def __init__(self, node, subscription):
        self._subscription = subscription
        self._waiter = compat.SubscriptionWaiter(node.context, subscription)

    def wait(self, timeout, with_info=False):
        """Return the next message (see :func:`take_next`), waiting up to ``timeout`` [s]."""
        # a message already there ends the wait at once
        self._waiter.wait(timeout)
        return take_next(self._subscription, with_info)


class SubscriptionThread:
    """
    Call ``callback(msg)`` for each message of an :class:`OnDemand` subscription, under ``lock``.

    ``lock`` None: a callback that takes the locks it needs itself.

    With ``with_info``: ``callback(msg, info)``, info as :func:`take_next` gives it. With
    ``newest_of(msg, info)`` as well, which names a message's source: of the messages that came
    together, each source's newest alone goes to the callback (in the order they came), as a
    history of one per source would keep. A deep history then lets no other publisher's
    messages displace the newest of the one that is followed.

    The thread sleeps in a wait set of that subscription alone (the GIL released), so a message
    costs its callback and one take, not a pass of the executor. ``periodic()``, if given, is
    called holding ``lock`` too, at least every ``period`` [s] whether messages come or not (a
    watchdog: rclpy's executor would spend more on waking for it than the cycle costs). An
    exception from either ends the thread and is raised again in the executor's thread, where
    the node's own callbacks fail: a :class:`~robot_dynamics.ros.nodes.runner.StartupError` stops
    the node as it would there. :meth:`resubscribe` replaces the subscription. Call :meth:`stop`
    before the node is destroyed.
    """

    def __init__(self, node, subscription, callback, lock, name, periodic=None, period=POLL,
                 with_info=False, newest_of=None):
        self._node = node
        self._with_info = with_info
        self._newest_of = newest_of
        self._subscription = subscription
        self._callback = callback
        self._periodic = periodic
        self._period = period
        self._lock = contextlib.nullcontext() if lock is None else lock
        self._stopping = threading.Event()
        self._renewed = None
        self._error = None
        self._raise = node.create_guard_condition(self._raise_error)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self):
        waiter = Waiter(self._node, self._subscription)
        wait = min(POLL, self._period)
        due = time.monotonic() + self._period
        try:
            while not self._stopping.is_set():
                for msg in self._handed_on(waiter.wait(wait, self._with_info)):
                    with self._lock:
                        self._callback(*(msg if self._with_info else (msg,)))
                if self._periodic is not None and time.monotonic() >= due:
                    due = time.monotonic() + self._period
                    with self._lock:
                        self._periodic()
                    if self._renewed is not None:
                        # here, in the thread, where the old one is not waited on
                        self._node.destroy_subscription(self._subscription)
                        self._subscription, self._renewed = self._renewed, None
                        waiter = Waiter(self._node, self._subscription)
        except Exception as exc:  # noqa: B902 - any error: the executor's thread decides
            if self._stopping.is_set() or not self._node.context.ok():
                return      # shut down under a wait or a take: a normal stop
            self._error = exc
            self._raise.trigger()

    def _handed_on(self, first):
        """Return the messages for the callback, from ``first`` (None: none came)."""
        if first is None:
            return ()
        if self._newest_of is None:
            return (first,)
        newest = {}
        while first is not None:
            source = self._newest_of(*first)
            newest.pop(source, None)    # a source's place: where its newest came
            newest[source] = first
            first = take_next(self._subscription, with_info=True)
        return newest.values()

    def resubscribe(self, subscription):
        """
        Wait on ``subscription`` (of an :class:`OnDemand` group) instead, the old one destroyed.

        From the thread's own callbacks (``periodic``): the change is made after it returns.
        """
        self._renewed = subscription

    def _raise_error(self):
        raise self._error

    def stop(self):
        """End the thread (within POLL) and wait for it."""
        self._stopping.set()
        self._thread.join()
