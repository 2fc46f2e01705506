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


"""AwakeTime: the wall time a process ran, a stall of the host left out."""

import pytest
from robot_dynamics.awake import AwakeTime


@pytest.fixture
def clock():
    """Return the test's clock [s]: ``clock[0]``, advanced by the test."""
    return [100.0]


def test_looks_at_its_period_count_all_the_time(clock):
    waited = AwakeTime(0.1, lambda: clock[0])
    for _ in range(25):
        clock[0] += 0.1
        waited.look()
    assert waited.elapsed == pytest.approx(2.5, abs=1e-12)
    # a look that is late by less than a period (a busy, running process) counts in full
    clock[0] += 0.19
    assert waited.look() == pytest.approx(2.69, abs=1e-12)


def test_a_stall_counts_two_periods_and_restart_counts_from_now(clock):
    waited = AwakeTime(0.1, lambda: clock[0])
    clock[0] += 0.05
    assert waited.look() == pytest.approx(0.05, abs=1e-12)
    clock[0] += 3.0                   # the process did not run: a stall of the host
    assert waited.look() == pytest.approx(0.25, abs=1e-12)
    clock[0] += 0.1
    assert waited.look() == pytest.approx(0.35, abs=1e-12)
    clock[0] += 5.0
    waited.restart()
    assert waited.elapsed == 0.0
    clock[0] += 0.08
    assert waited.look() == pytest.approx(0.08, abs=1e-12)


@pytest.mark.parametrize('period', [0.0, -1.0, float('nan')])
def test_a_period_that_is_no_time_is_refused(period):
    with pytest.raises(ValueError, match='period: expected a positive time'):
        AwakeTime(period)
