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


"""Throttled log lines, on a clock the test owns."""

from robot_dynamics.ros.nodes.throttle import Throttle


class Clock:

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_throttled_key_is_due_once_a_period_and_says_how_many_it_held_back():
    clock = Clock()
    throttle = Throttle(clock)
    assert throttle.held('safe mode', 10.0) == 0          # the first is due, nothing held
    for _ in range(5):                                    # a host flapping it for 9.5 s
        clock.now += 1.9
        assert throttle.held('safe mode', 10.0) is None
    assert throttle('other', 10.0)                        # keys are apart
    clock.now += 0.5                                      # 10 s since the last line
    assert throttle.held('safe mode', 10.0) == 5
    clock.now += 10.0
    assert throttle.held('safe mode', 10.0) == 0          # the count starts again
