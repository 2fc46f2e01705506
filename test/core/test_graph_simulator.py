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
The simulator node's decisions on the test's clock: brakes, real-time stamps, a push, an impostor.

The node's loop (``test/graph_harness.py``): the brakes until the first command and a reset,
the stamps of real-time steps against the clock they were due on, a push held by the computed
torque law's stiffness (against ``fsolve`` of the equilibrium) and the commands of a second
source ignored. Through the middleware (the joint order of the hardware, the wrench and status
messages, a source named by its publisher's GID): test/ros/test_simulator_node.py.
"""

from graph_harness import LoopGraph, SimulatorGraph
import numpy as np
from robot_dynamics.controller import Mode
from robot_dynamics.events import Kind
from scipy.optimize import fsolve


class TimedGraph(SimulatorGraph):
    """A :class:`SimulatorGraph` that also keeps when (system clock [ns]) each state came out."""

    def __init__(self, *args, **kwargs):
        self.published_ns = []
        super().__init__(*args, **kwargs)

    def publish_state(self, stamp_ns):
        super().publish_state(stamp_ns)
        self.published_ns.append(self.clock.system_ns())


def test_brakes_hold_the_arm_until_the_first_command():
    arm = SimulatorGraph('planar_2r', initial_positions=[0.4, 0.8])
    arm.run_until(lambda: len(arm.states) > 300, 1.0, '300 joint states')
    # gravity acts, but nothing moves before a controller commands
    assert all(s.q.tolist() == [0.4, 0.8] and s.qd.tolist() == [0.0, 0.0] for s in arm.states)
    count = len(arm.states)
    arm.answer = lambda state: np.zeros(2)     # zero effort: it falls
    arm.run_until(lambda: any(s.q[0] < 0.39 for s in arm.states[count:]), 1.0,
                  'the arm to fall once commanded')      # joint1
    # ~/reset (the view's Reset): the initial state again, stamped as the reply says
    t0 = arm.reset()
    restored = arm.since(t0, t0)
    assert [(s.q.tolist(), s.qd.tolist()) for s in restored] == [([0.4, 0.8], [0.0, 0.0])]


def test_real_time_stamps_are_the_steps_times():
    arm = TimedGraph('planar_2r')
    # the node's warm-up between its build and the first step (the stamps once started at the
    # build: every state ~0.2 s too old)
    arm.clock.stall(0.2)
    arm.run_until(lambda: len(arm.states) > 1000, 2.0, '1,000 joint states')
    stamps = np.array([s.stamp_ns for s in arm.states[:1000]])
    # on the 1 kHz grid to the nanosecond
    gaps = np.diff(stamps)
    assert np.all(gaps > 0) and np.all(gaps % 1_000_000 == 0), np.unique(gaps)
    # on the system clock at the time each step was due: states come within 0.1 s of their
    # stamps, never before them
    delays = (np.array(arm.published_ns[:1000]) - stamps) * 1e-9
    assert delays.max() < 0.1 and delays.min() > -0.002, (delays.min(), delays.max())


def _settled(arm, after):
    """Run until the arm has been at rest for 1 s of simulated time after ``after`` [s]."""
    arm.run_until(lambda: arm.states[-1].t > after + 1.0 and np.abs(
        arm.states[-1].qd).max() < 1e-7, 120.0, 'the arm at rest')


def test_a_push_moves_the_arm_against_its_stiffness_and_an_impostor_does_not():
    # lockstep, computed torque holding at rest: tau = kp M(q) (q_ref - q) + g(q), so the push's
    # torque J^T w is held by the stiffness kp M(q)
    arm = LoopGraph('planar_2r')
    model = arm.model
    arm.hold_at_rest()
    held = arm.cycles[-1].reference.q.copy()
    w = np.array([10.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    before = model.fk(arm.states[-1].q)[:3, 3]
    arm.push(w[:3])
    arm.run_until(lambda: arm.sim.statuses and arm.sim.statuses[-1].wrench[0] == 10.0, 1.0,
                  'the wrench in the status')
    _settled(arm, arm.states[-1].t)
    q = arm.states[-1].q
    kp = 20.0 ** 2        # the shipped natural frequency [rad/s], squared

    def residual(x):
        return kp * model.mass_matrix(x) @ (held - x) + model.jacobian(x).T @ w
    expected = fsolve(residual, held, xtol=1e-12)
    np.testing.assert_allclose(q, expected, atol=1e-6)
    # pushed along +x: the tip went that way
    assert model.fk(q)[0, 3] - before[0] > 1e-4
    assert arm.sim.statuses[-1].wrench_frame == 'tip'
    # NaN and an unknown frame are refused, said; the push stays
    for bad, frame in (([float('nan'), 0.0, 0.0, 0.0, 0.0, 0.0], ''),
                       ([1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 'nowhere')):
        arm.sim.push(np.array(bad), frame)
        arm.run_for(0.01)
    refused = arm.sim.refused_wrenches
    assert len(refused) == 2 and 'nan' in refused[0] and "'nowhere'" in refused[1], refused
    status = arm.sim.statuses[-1]
    assert status.wrench.tolist() == w.tolist() and status.wrench_frame == 'tip'
    # a zero wrench removes it: back where it was held
    arm.push([0.0, 0.0, 0.0])
    arm.run_until(lambda: arm.sim.statuses[-1].wrench[0] == 0.0, 1.0, 'no wrench in the status')
    _settled(arm, arm.states[-1].t)
    np.testing.assert_allclose(arm.states[-1].q, held, atol=1e-6)
    # an impostor on the command topic, beside the controller: ignored, counted, named; the arm
    # stays held
    answer = arm.sim.answer

    def with_impostor(state):
        arm.sim.send([50.0, -30.0], source='impostor')
        return answer(state)
    arm.sim.answer = with_impostor
    count = len(arm.states)
    arm.run_until(lambda: arm.sim.statuses[-1].ignored_commands > 10, 1.0,
                  'the ignored commands')
    [said] = arm.sim.said('commands from a second source')
    assert said.kind is Kind.SECOND_SOURCE and said.tag == ('controller', 'impostor')
    assert arm.mode() is Mode.HOLD
    moved = np.array([s.q for s in arm.states[count:]]) - held
    assert np.abs(moved).max() < 1e-6
