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

"""Stamps: seconds and integer nanoseconds, and periods counted on a rate's grid."""

import numpy as np
import pytest
from robot_dynamics import stamps


def test_a_stamp_round_trips_through_sec_and_nanosec():
    for ns in (0, 1, 999_999_999, 1_796_588_302_686_407_424):
        sec, nanosec = stamps.split(ns)
        assert 0 <= nanosec < stamps.NS_PER_S and stamps.join(sec, nanosec) == ns
        assert stamps.s_to_ns(stamps.ns_to_s(ns)) == ns or ns > 2 ** 53


@pytest.mark.parametrize('rate_hz, period_ns', [(100.0, 10_000_000), (50.0, 20_000_000),
                                                (1000.0, 1_000_000), (8.0, 125_000_000)])
def test_periods_are_counted_exactly_on_every_1_ms_step(rate_hz, period_ns):
    # two hours of 1 ms control cycles: each state's time as the controller has it (seconds
    # from integer nanoseconds); floating point puts 0.29 s x 100 Hz at 28.999999999999996
    ns = np.arange(0, 7_200_000_000_000, 1_000_000, dtype=np.int64)[::997]
    counted = [stamps.periods(stamps.ns_to_s(int(t)), rate_hz) for t in ns]
    np.testing.assert_array_equal(counted, ns // period_ns)
    assert 0.29 * 100.0 < 29 and stamps.periods(0.29, 100.0) == 29


def test_a_rate_that_is_no_whole_number_of_nanoseconds_is_counted_exactly():
    # 30 Hz: a period of 33,333,333.3 ns; period k starts at ceil(k / 30 s)
    assert [stamps.periods(stamps.ns_to_s(ns), 30.0)
            for ns in (33_333_333, 33_333_334, 66_666_666, 66_666_667, 1_000_000_000)] == \
        [0, 1, 1, 2, 30]
