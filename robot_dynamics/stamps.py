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
Time stamps: the one conversion between seconds and integer nanoseconds.

The library counts time in seconds (floats); a stamp is integer nanoseconds, as ROS's
``builtin_interfaces`` Time and Duration (``sec`` and ``nanosec``) are: a float of seconds
since 1970 resolves only about 0.2 µs, so stamps that must round-trip stay integers.
"""

#: Nanoseconds per second.
NS_PER_S = 1_000_000_000


def s_to_ns(seconds):
    """Return ``seconds`` [s] as the nearest integer nanoseconds."""
    return int(round(float(seconds) * NS_PER_S))


def ns_to_s(ns):
    """Return integer nanoseconds ``ns`` in seconds (the nearest float)."""
    return ns / NS_PER_S


def split(ns):
    """Return ``(sec, nanosec)`` of integer nanoseconds ``ns``, ``0 <= nanosec < NS_PER_S``."""
    return divmod(int(ns), NS_PER_S)


def join(sec, nanosec):
    """Return integer nanoseconds of a stamp's ``sec`` and ``nanosec``."""
    return int(sec) * NS_PER_S + int(nanosec)


def periods(seconds, rate_hz):
    """
    Return how many whole periods of ``rate_hz`` [Hz] > 0 have passed at ``seconds`` [s].

    Counted on integer nanoseconds, exactly: in floating point 0.29 s x 100 Hz is
    28.999999999999996 (and so 137 of the first 20,000 1 ms steps), which puts a publication
    on a 10 ms grid a cycle late at some times and not at others: two runs that start at
    different times would sample alike motions differently.
    """
    num, den = float(rate_hz).as_integer_ratio()
    return s_to_ns(seconds) * num // (den * NS_PER_S)


class Grid:
    """
    The times to publish at on a grid of ``rate_hz`` [Hz] of a clock: once in each period.

    Asked at each cycle's time, it says yes at the first cycle of a period (:func:`periods`:
    runs that start at different times sample alike). A rate of 0 or less: never.
    """

    def __init__(self, rate_hz):
        self.rate_hz = float(rate_hz)
        self._next = None       # the next period to publish in

    def due(self, seconds, now=False):
        """Return whether to publish at ``seconds`` [s]; ``now``: yes, whatever the period."""
        if self.rate_hz <= 0.0:
            return False
        period = periods(seconds, self.rate_hz)
        if not now and self._next is not None and period < self._next:
            return False
        self._next = period + 1
        return True


__all__ = ['Grid', 'join', 'ns_to_s', 'NS_PER_S', 'periods', 's_to_ns', 'split']
