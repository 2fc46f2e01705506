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
Wall time that passes while this process runs: the time-outs of a loop on simulated time.

On simulated time a host that stalls stops the simulated clock too, so a stall is not a fault.
The loop still needs a few wall-time limits (lockstep's wait for the controller's answer, the
controller's ``wall_state_timeout`` that notices a dead simulator), and on a busy host a
process is not run for up to a second at a time. Counted on the wall clock, such a stall of
the waiting process itself would end the wait while the answer is on its way. An
:class:`AwakeTime` counts only the time the waiting process ran: the waiter looks at it at
least every ``period`` [s] while it runs, and a longer gap between two looks says the
process did not run meanwhile: of it, only ``2 * period`` counts.

The clock is a monotonic one in seconds, ``time.monotonic`` unless another is given (a test's
own, that it advances).
"""

import time


class AwakeTime:
    """Seconds spent awake since :meth:`restart`, looked at every ``period`` [s] or sooner."""

    def __init__(self, period, clock=time.monotonic):
        if not period > 0.0:
            raise ValueError(f'period: expected a positive time in seconds, got {period!r}')
        self.period = period
        self.clock = clock
        self.elapsed = 0.0
        self._last = clock()

    def restart(self, now=None):
        """Count from ``now`` (the clock's time, by default the present)."""
        self.elapsed = 0.0
        self._last = self.clock() if now is None else now

    def look(self):
        """Return the seconds awake since :meth:`restart` (a gap counts 2 periods at most)."""
        now = self.clock()
        self.elapsed += min(now - self._last, 2.0 * self.period)
        self._last = now
        return self.elapsed
