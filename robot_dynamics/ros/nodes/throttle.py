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
Throttled log lines that cost nothing while throttled.

rclpy's ``throttle_duration_sec`` decides after it has found the caller's frame and source line
(``inspect.getframeinfo``), on every call, whether the line is printed or not: longer than a
1 kHz control cycle (the README's ROS 2 performance section has the figure). A node that logs
on a hot path (every saturated cycle, every message of a flood) asks a :class:`Throttle` first
and builds the line only when it is due.
"""

import math
import time

#: Said after a line that is logged at most once a second.
THROTTLED = 'lines like this one are logged at most once a second'


class Throttle:
    """``throttle(key, period)`` is true at most once per ``period`` [s] for each ``key``."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._due = {}
        self._held = {}

    def __call__(self, key, period):
        now = self._clock()
        if now < self._due.get(key, -math.inf):
            self._held[key] = self._held.get(key, 0) + 1
            return False
        self._due[key] = now + period
        return True

    def held(self, key, period):
        """
        Return None while ``key`` is throttled, else how many calls it held back since its last.

        For a line that may come in bursts (a fault that comes and goes): one line a period,
        which says how many it stands for.
        """
        if not self(key, period):
            return None
        return self._held.pop(key, 0)

    def warn(self, logger, key, line):
        """Log ``line`` as a warning, saying so, at most once a second per ``key``."""
        if self(key, 1.0):
            logger.warning(f'{line} ({THROTTLED})')
