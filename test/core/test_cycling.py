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
The controller node's loop (Cycling) over a port in memory, on a clock the test owns.

Truth: the publication grids counted by hand on integer nanoseconds (100 Hz of 1 kHz states:
every tenth, whatever the start), the mode change published at once, the safe command after a
port that fails, the timer's cycle at the newest state's time plus the time since.
"""

import numpy as np
import pytest
from robot_dynamics import RobotModel
from robot_dynamics.closed_loop import default_law
from robot_dynamics.controller import Controller, Cycling, Kind, Mode, Trigger
from robot_dynamics.follower import Goal, Tolerances
from robot_dynamics.stamps import Grid

DT = 1e-3


class Port:
    """What the node would publish, kept."""

    def __init__(self, fail=False):
        self.commands, self.states, self.tips, self.feedback, self.events = [], [], [], [], []
        self.fail = fail

    def send_command(self, cycle):
        self.commands.append((cycle.t, cycle.mode, cycle.command.copy()))
        if self.fail:
            self.fail = False
            raise OSError('the publisher is gone')

    def publish_state(self, cycle):
        self.states.append((cycle.t, cycle.mode))

    def publish_tip(self, cycle):
        self.tips.append(cycle.t)

    def publish_feedback(self, cycle, goal):
        self.feedback.append((cycle.t, goal.tag))

    def report(self, events):
        self.events += events


class Clock:
    """A clock that moves when the test sets it."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture
def arm():
    return RobotModel.load('planar_2r')


def _cycling(arm, port, trigger=Trigger.STATE, sim_time=True, clock=None):
    controller = Controller(arm, default_law('computed_torque', arm, np.zeros(arm.dof)))
    return Cycling(controller, port, sim_time=sim_time, trigger=trigger, rates=(100.0, 50.0, 20.0),
                   clock=clock or Clock())


def test_the_grids_publish_once_a_period_of_the_states_clock(arm):
    port = Port()
    cycling = _cycling(arm, port)
    q = np.array([0.3, 0.4])
    start = 0.294         # off the grids: the first of each is at once
    for k in range(1000):
        t = start + k * DT
        cycling.state(t, q, np.zeros(2), 'sim', t)
    assert len(port.commands) == 1000
    # the first state, then each tenth from 0.300 s: periods counted on integer nanoseconds
    assert [t for t, _ in port.states] == pytest.approx(
        [start] + [0.3 + 0.01 * k for k in range(100)], abs=1e-12)
    assert port.tips == pytest.approx([start] + [0.3 + 0.02 * k for k in range(50)], abs=1e-12)
    assert port.feedback == []                 # no goal runs
    # a goal with a tag: its feedback at 20 Hz while it runs; a goal from a topic has none
    tag = object()
    t0 = start + 1000 * DT
    cycling.controller.submit(Goal(tag, None, np.array([0.5]), (q + 0.1)[None, :], None, None,
                                   Tolerances.unchecked(2)))
    for k in range(1000):
        t = t0 + k * DT
        cycling.state(t, q, np.zeros(2), 'sim', t)
    running = [t for t, mode, _ in port.commands[1000:] if mode is Mode.TRAJECTORY]
    assert running and {g for _, g in port.feedback} == {tag}
    assert len(port.feedback) == len({round(t * 20 - 1e-9) for t in running})
    # the mode changed (hold -> trajectory -> hold): published at once, off the grid
    changes = [(t, mode) for t, mode in port.states if t > t0 - DT / 2]
    assert changes[0] == (pytest.approx(t0), Mode.TRAJECTORY)
    assert (pytest.approx(running[-1] + DT), Mode.HOLD) in changes


def test_a_port_that_fails_gets_the_safe_command_and_a_fault(arm):
    port = Port(fail=True)
    cycling = _cycling(arm, port)
    cycling.state(1.0, np.array([0.3, 0.4]), np.zeros(2), 'sim', 1.0)
    (t1, mode1, tau1), (t2, mode2, tau2) = port.commands
    assert mode1 is Mode.HOLD and mode2 is Mode.SAFE and t1 == t2 == 1.0
    np.testing.assert_array_equal(tau2, np.zeros(2))      # zero effort, the default safe mode
    faults = [e for e in port.events if e.kind is Kind.FAULT]
    assert len(faults) == 1 and 'OSError: the publisher is gone' in faults[0].message
    assert cycling.controller.mode is Mode.SAFE


def test_the_timer_cycles_at_the_newest_state_plus_the_time_since(arm):
    port, clock = Port(), Clock()
    cycling = _cycling(arm, port, trigger='timer', sim_time=False, clock=clock)
    cycling.tick()
    assert port.commands == []              # no state yet: nothing to send
    clock.now = 5.0
    cycling.state(100.0, np.array([0.3, 0.4]), np.zeros(2), 'arm')
    assert port.commands == []              # kept, not answered: the timer cycles
    clock.now = 5.004
    cycling.tick()
    assert port.commands[-1][0] == pytest.approx(100.004, abs=1e-12)
    # the watchdog: 0.05 s without a state (the default time-out) is the safe mode
    clock.now = 5.06
    cycling.look()
    assert port.commands[-1][1] is Mode.SAFE
    assert [e.kind for e in port.events].count(Kind.SAFE_MODE) == 1


def test_a_grid_is_on_whole_periods_and_never_at_zero_rate():
    grid = Grid(100.0)
    # 0.29 s x 100 Hz is 28.999999999999996 in floating point: the period is still 29
    assert [grid.due(t) for t in (0.285, 0.289, 0.29, 0.295, 0.3)] == \
        [True, False, True, False, True]
    assert grid.due(0.301, now=True) and not grid.due(0.305)
    assert not any(Grid(0.0).due(t, now=True) for t in (0.0, 1.0))
