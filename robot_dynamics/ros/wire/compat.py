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
What the nodes need from rclpy beyond its documented API, and what differs between versions.

The nodes run on Jazzy's rclpy (7.1) and Kilted's (9.1). Everything here works on both; the
rest of the package uses rclpy's public API only, the same way on both.

- :data:`RCLError`: the error rcl's calls raise (e.g. asking about a node not discovered yet).
  It lives in rclpy's C extension; Kilted re-exports it in ``rclpy.subscription``, Jazzy nowhere.
- Reading a subscription outside the executor (:func:`take`, :class:`SubscriptionWaiter`, used
  by :mod:`~robot_dynamics.ros.wire.on_demand`): a take and a wait set of one subscription, from
  rclpy's C extension, as rclpy's own executor and ``wait_for_message`` do. Should a version
  lack them (:data:`OUTSIDE_EXECUTOR` false), the executor dispatches such a subscription into
  a :class:`NewestMessage` instead (:func:`hold_newest`): public API, the same results, the
  executor's cost per message.
- :data:`PUBLISHER_GID`: the publisher of each message a raw subscription takes. Kilted's rclpy
  gives it; Jazzy's drops it from the middleware's message info, so there a raw subscription is
  taken with rcl's own ``rcl_take_serialized_message`` (:class:`SerializedTake`, through ctypes
  from the librcl that rclpy loaded), which returns the whole info.
- :class:`ActionClient`: Jazzy's loses a goal, cancel or result response that arrives before
  the call that sent the request has recorded it, and that call's future never completes
  (ros2/rclpy#1123; Kilted locks around both). It happens when the executor spins in another
  thread than the one that sends, as in the demo. Kilted's, created while an executor spins
  its node in another thread, can fail that executor once (a lock created after the client
  joined the node).
- :func:`spin_until_complete`: Jazzy's ``spin_until_future_complete`` adds a done callback to
  the future at each turn of its loop, and each one becomes a task for the executor when the
  future completes (ros2/rclpy#1374; Kilted adds one). Those tasks wake the next call's loop,
  which adds more: a client that calls a service in a loop spends more and more CPU per call.
"""

import ctypes
import os
import threading
import time

from rclpy import subscription as _subscription
from rclpy.action import ActionClient as _ActionClient

from .qos import SERVICE_CLIENT

try:
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
except ImportError:     # rclpy moved its C extension: RuntimeError and the fallback below
    _rclpy = None

#: The error rcl's calls raise (a RuntimeError; ``NodeNameNonExistentError`` is one).
RCLError = getattr(_rclpy, 'RCLError', RuntimeError)

#: Whether rclpy's own take gives a message's publisher (``publisher_gid``: rclpy 9, Kilted, on).
_RCLPY_GID = 'publisher_gid' in getattr(getattr(_subscription, 'MessageInfo', None),
                                        '__annotations__', {})
#: rcl's constants (rcl/types.h, rmw/types.h).
_RCL_RET_OK, _RCL_RET_SUBSCRIPTION_TAKE_FAILED = 0, 401
_SEQUENCE_NUMBER_UNSUPPORTED = 2**64 - 1
#: The size of a GID's data in rmw_gid_t (RMW_GID_STORAGE_SIZE, since Iron).
_GID_STORAGE_SIZE = 16


class _Allocator(ctypes.Structure):
    """rcutils_allocator_t."""

    _fields_ = [('allocate', ctypes.c_void_p), ('deallocate', ctypes.c_void_p),
                ('reallocate', ctypes.c_void_p), ('zero_allocate', ctypes.c_void_p),
                ('state', ctypes.c_void_p)]


class _SerializedMessage(ctypes.Structure):
    """rcl_serialized_message_t (rcutils_uint8_array_t)."""

    _fields_ = [('buffer', ctypes.POINTER(ctypes.c_uint8)), ('buffer_length', ctypes.c_size_t),
                ('buffer_capacity', ctypes.c_size_t), ('allocator', _Allocator)]


class _Gid(ctypes.Structure):
    """rmw_gid_t."""

    _fields_ = [('implementation_identifier', ctypes.c_char_p),
                ('data', ctypes.c_uint8 * _GID_STORAGE_SIZE)]


class _MessageInfo(ctypes.Structure):
    """rmw_message_info_t."""

    _fields_ = [('source_timestamp', ctypes.c_int64), ('received_timestamp', ctypes.c_int64),
                ('publication_sequence_number', ctypes.c_uint64),
                ('reception_sequence_number', ctypes.c_uint64), ('publisher_gid', _Gid),
                ('from_intra_process', ctypes.c_bool)]


def _loaded_library(name):
    """Return the path of the shared library ``name`` (e.g. 'librcl') in this process, or None."""
    try:
        with open('/proc/self/maps') as maps:
            for line in maps:
                path = line.split()[-1]
                if os.path.basename(path).split('.so')[0] == name and '.so' in path:
                    return path
    except OSError:     # not Linux
        pass
    return None


class SerializedTake:
    """
    rcl's take of a serialized message (CDR) with its whole message info, publisher included.

    Calls the librcl and librcutils that rclpy loaded, so it runs on that rclpy's subscription
    handles. Thread-safe: each call has its own buffer.
    """

    #: The buffer a take starts with [bytes]; the middleware grows it to a larger message.
    CAPACITY = 1024

    def __init__(self):
        rcl, rcutils = (ctypes.CDLL(_loaded_library(name) or f'{name}.so')
                        for name in ('librcl', 'librcutils'))
        self._take = rcl.rcl_take_serialized_message
        self._take.argtypes = [ctypes.c_void_p, ctypes.POINTER(_SerializedMessage),
                               ctypes.POINTER(_MessageInfo), ctypes.c_void_p]
        self._take.restype = ctypes.c_int32
        rcutils.rcutils_get_default_allocator.restype = _Allocator
        self._allocator = rcutils.rcutils_get_default_allocator()
        self._init = rcutils.rcutils_uint8_array_init
        self._init.argtypes = [ctypes.POINTER(_SerializedMessage), ctypes.c_size_t,
                               ctypes.POINTER(_Allocator)]
        self._fini = rcutils.rcutils_uint8_array_fini
        self._fini.argtypes = [ctypes.POINTER(_SerializedMessage)]
        self._reset_error = rcutils.rcutils_reset_error

    def __call__(self, handle):
        """
        Return ``(data, info)`` of the next message of rclpy's subscription ``handle``, or None.

        ``info`` has rclpy's keys (``source_timestamp``, ...) and ``publisher_gid``
        (``{'implementation_identifier', 'data'}``, as Kilted's rclpy gives it).
        """
        message, info = _SerializedMessage(), _MessageInfo()
        if self._init(ctypes.byref(message), self.CAPACITY, ctypes.byref(self._allocator)):
            self._reset_error()
            raise MemoryError('cannot allocate a buffer for a serialized message')
        try:
            with handle:
                ret = self._take(handle.pointer, ctypes.byref(message), ctypes.byref(info),
                                 None)
            if ret == _RCL_RET_SUBSCRIPTION_TAKE_FAILED:
                return None
            if ret != _RCL_RET_OK:
                self._reset_error()
                raise RCLError(f'rcl_take_serialized_message failed with code {ret}')
            data = ctypes.string_at(message.buffer, message.buffer_length)
        finally:
            self._fini(ctypes.byref(message))
        reception = info.reception_sequence_number
        return data, {
            'source_timestamp': info.source_timestamp,
            'received_timestamp': info.received_timestamp,
            'publication_sequence_number': info.publication_sequence_number,
            'reception_sequence_number': None if reception == _SEQUENCE_NUMBER_UNSUPPORTED
            else reception,
            'publisher_gid': {'implementation_identifier':
                              (info.publisher_gid.implementation_identifier or b'').decode(),
                              'data': bytes(info.publisher_gid.data)}}


def _serialized_take():
    """Return a :class:`SerializedTake` where rclpy's take lacks the publisher, else None."""
    if _RCLPY_GID or not hasattr(getattr(_rclpy, 'Subscription', None), 'pointer'):
        return None
    try:
        return SerializedTake()
    except (OSError, AttributeError):      # no such library or symbol: rclpy's take then
        return None


_SERIALIZED_TAKE = _serialized_take()
#: Whether a raw subscription's messages name their publisher (``publisher_gid`` in the info of
#: :func:`take`): from rclpy where it gives it, else from rcl (:class:`SerializedTake`).
PUBLISHER_GID = _RCLPY_GID or _SERIALIZED_TAKE is not None

#: Whether rclpy's C extension offers what reading a subscription outside the executor takes.
OUTSIDE_EXECUTOR = (hasattr(_rclpy, 'WaitSet')
                    and hasattr(getattr(_rclpy, 'Subscription', None), 'take_message'))


class NewestMessage:
    """
    The newest message the executor dispatched to a subscription, until :meth:`pop` takes it.

    A subscription's callback where rclpy cannot read it outside the executor
    (:func:`hold_newest`); thread-safe.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._taken = None
        #: set while a message waits to be taken
        self.arrived = threading.Event()

    def __call__(self, msg, info):
        with self._lock:
            self._taken = (msg, info)
            self.arrived.set()

    def pop(self):
        """Return the held ``(message, info)`` and forget it, or None."""
        with self._lock:
            taken, self._taken = self._taken, None
            self.arrived.clear()
        return taken


def hold_newest(subscription):
    """Have the executor keep ``subscription``'s newest message for :func:`take` (fallback)."""
    subscription.callback = NewestMessage()


def take(subscription, with_info=False):
    """
    Return the next message ``subscription`` holds and remove it, or None.

    The oldest in its middleware queue: the newest for a subscription of depth 1. With
    ``with_info``: ``(message, info)``, the middleware's message info as a dict (a raw
    subscription's names its publisher: :data:`PUBLISHER_GID`). Safe in any
    thread; rclpy's executor must not dispatch the subscription (or it takes them first),
    unless :func:`hold_newest` made the executor's dispatch the way messages come in.
    """
    held = subscription.callback
    if isinstance(held, NewestMessage):
        taken = held.pop()
        if taken is not None:
            # rclpy's MessageInfo there, a dict of the same keys from the C extension's take
            taken = (taken[0], dict(taken[1]))
    elif subscription.raw and _SERIALIZED_TAKE is not None:
        taken = _SERIALIZED_TAKE(subscription.handle)
    else:
        with subscription.handle:
            taken = subscription.handle.take_message(subscription.msg_type, subscription.raw)
    if taken is None:
        return None
    return taken if with_info else taken[0]


class SubscriptionWaiter:
    """Sleep until one subscription has a message (the GIL released), in one thread at a time."""

    def __init__(self, context, subscription):
        self._subscription = subscription
        self._held = subscription.callback
        if not isinstance(self._held, NewestMessage):
            self._held = None
            self._wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, context.handle)

    def wait(self, timeout_sec):
        """Return when a message may be there for :func:`take`, or after ``timeout_sec`` [s]."""
        if self._held is not None:
            self._held.arrived.wait(timeout_sec)
            return
        with self._subscription.handle:
            self._wait_set.clear_entities()
            self._wait_set.add_subscription(self._subscription.handle)
            self._wait_set.wait(round(timeout_sec * 1e9))


class ActionClient(_ActionClient):
    """
    rclpy's action client, safe to use from a thread other than the executor's.

    Its goal, result and cancel clients take :data:`~.qos.SERVICE_CLIENT` unless told otherwise.

    A lock holds the executor's take of responses back while a request is sent and recorded,
    so that no response arrives for a request it does not know yet (what Kilted's rclpy does
    itself). ``ClientGoalHandle.cancel_goal_async`` and ``get_result_async`` come through the
    overridden ``_cancel_goal_async`` and ``_get_result_async``, which both versions have.
    """

    def __init__(self, *args, **kwargs):
        self._sending = threading.Lock()
        # Kilted's client adds itself to the node before it creates the lock its executor
        # methods take: an executor spinning in another thread can ask it for its entities in
        # between (AttributeError '_lock', which ends that executor's spin). Its own lock
        # replaces this one before the client is used.
        self._lock = threading.Lock()
        for service in ('goal', 'result', 'cancel'):
            kwargs.setdefault(f'{service}_service_qos_profile', SERVICE_CLIENT)
        super().__init__(*args, **kwargs)

    def take_data(self):
        with self._sending:
            return super().take_data()

    def send_goal_async(self, *args, **kwargs):
        with self._sending:
            return super().send_goal_async(*args, **kwargs)

    def _cancel_goal_async(self, goal_handle):
        with self._sending:
            return super()._cancel_goal_async(goal_handle)

    def _get_result_async(self, goal_handle):
        with self._sending:
            return super()._get_result_async(goal_handle)


def spin_until_complete(executor, future, timeout_sec):
    """
    Spin ``executor`` until ``future`` is done or ``timeout_sec`` [s] have passed.

    ``executor.spin_until_future_complete`` as Kilted's rclpy does it: one done callback that
    wakes the executor, whichever thread completes the future.
    """
    deadline = time.monotonic() + timeout_sec
    future.add_done_callback(lambda _: executor.wake())
    while not future.done():
        left = deadline - time.monotonic()
        if left <= 0.0:
            return
        executor.spin_once(timeout_sec=left)
