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
The simulator node's loop on the test's clock: falling, energy, effort, stops, commands, stalls.

Against the library (the integrator, energy), with lockstep's wait for an answer that does not
come.

The loop is the node's (:class:`robot_dynamics.simulator.Stepping`, its stepping thread); the
bus and the clock are the test's (``test/graph_harness.py``).
"""

from graph_harness import SimulatorGraph
import numpy as np
from robot_dynamics.events import Kind
from robot_dynamics.integrators import simulate
from robot_dynamics.simulator import DEFAULT_LOCKSTEP_TIMEOUT


def test_zero_effort_planar_2r_falls():
    arm = SimulatorGraph('planar_2r', initial_positions=[0.4, 0.8], brake_until_command=False)
    arm.run_for(0.1)
    # it has been falling since it started; reset, and watch it fall from the initial state
    t0 = arm.reset()
    arm.run_until(lambda: arm.states[-1].t > t0 + 0.3, 1.0, '0.3 s of falling')
    states = arm.since(t0)
    q = np.array([s.q for s in states])
    assert all(not s.effort.any() for s in states)
    # under gravity alone the first link drops and the potential energy falls
    assert q[-1, 0] < 0.4 - 0.1
    assert np.all(np.diff(q[:50, 0]) <= 0.0)
    potential = arm.model.potential_energy(q)
    assert potential[-1] < potential[0] - 1.0


def test_energy_is_conserved_without_friction():
    q0, qd0 = [-1.2, 0.5], [1.0, -0.5]
    # hanging near the bottom: a swing that never reaches the +-pi stops
    arm = SimulatorGraph('planar_2r', realtime=False, friction=False, publish_rate_hz=200.0,
                         brake_until_command=False, initial_positions=q0,
                         initial_velocities=qd0)
    arm.run_for(0.01)
    t0 = arm.reset()
    arm.run_until(lambda: arm.states[-1].t >= t0 + 5.0, 6.0, '5 s of simulated time')
    states = arm.since(t0, t0 + 5.0)
    q, qd = np.array([s.q for s in states]), np.array([s.qd for s in states])
    model = arm.model
    energy = model.kinetic_energy(q, qd) + model.potential_energy(q)
    e0 = model.kinetic_energy(q0, qd0) + model.potential_energy(q0)
    assert states[-1].t - t0 > 4.9 and len(states) > 50
    assert np.abs(qd).max() > 0.5                         # it moved
    assert np.abs(energy - e0).max() < 1e-6 * abs(e0)
    assert not any(s.at_lower.any() or s.at_upper.any() for s in arm.statuses)


def test_constant_effort_follows_the_library_simulation():
    tau, q0 = np.array([30.0, 6.0]), np.array([0.2, 0.3])
    arm = SimulatorGraph('planar_2r', realtime=False, publish_rate_hz=100.0,
                         command_timeout=0.0, initial_positions=q0)
    arm.send(tau)
    arm.run_until(lambda: any((s.effort == tau).all() for s in arm.states), 1.0,
                  'the command to apply')
    t0 = arm.reset()
    arm.run_until(lambda: arm.states[-1].t > t0 + 2.0, 3.0, '2 s after the reset')
    run = simulate(arm.model, q0, np.zeros(2), lambda t, q, qd: tau, 1e-3, 2.0, friction=True)
    compared = 0
    for s in arm.since(t0):
        k = int(round((s.t - t0) / 1e-3))
        if k < len(run.t):
            np.testing.assert_allclose(s.q, run.q[k], rtol=0, atol=1e-9)
            np.testing.assert_allclose(s.qd, run.qd[k], rtol=0, atol=1e-9)
            compared += 1
    assert compared > 100 and np.abs(run.q[-1] - q0).max() > 0.1


def test_a_joint_driven_into_its_limit_stops_there():
    # the SCARA's quill (prismatic, 0 .. 0.3 m, positive down) slides down under gravity
    arm = SimulatorGraph('scara', realtime=False, publish_rate_hz=100.0,
                         brake_until_command=False, initial_positions=[0.0, 1.2, 0.05])
    arm.run_until(lambda: arm.states and arm.states[-1].t > 3.0, 4.0, '3 s of simulated time')
    quill = arm.model.joint_names.index('quill')
    last = arm.states[-1]
    assert last.q[quill] == 0.3 and last.qd[quill] == 0.0
    contact = [s for s in arm.statuses if s.at_upper[quill]]
    assert contact and not contact[-1].at_lower.any()
    assert contact[-1].at_upper.tolist() == [j == 'quill' for j in arm.model.joint_names]


def test_commands_timeout_rejects_and_reset():
    arm = SimulatorGraph('planar_2r', command_timeout=0.5, brake_on_timeout=False,
                         initial_positions=[0.4, 0.8])
    good = np.array([20.0, 5.0])

    def effort_is(values, after):
        return lambda: any((s.effort == values).all() for s in arm.states[after:])
    arm.send(good)
    arm.run_until(effort_is(good, 0), 1.0, 'the good command')
    # malformed commands are rejected and the good one stays in force
    count = len(arm.states)
    for k, bad in enumerate(([1.0], [1.0, 2.0, 3.0], [np.nan, 1.0], [1.0, np.inf])):
        arm.send(bad)
        arm.stepping.once()
        assert arm.sim.rejected_commands == k + 1
        arm.send(good)
        arm.stepping.once()
    assert all((s.effort == good).all() for s in arm.states[count:])
    assert len(arm.said('rejected command')) == 4
    # no command for 0.5 s: zero effort, said once
    count = len(arm.states)
    arm.run_until(effort_is([0.0, 0.0], count), 1.0, 'zero effort after the time-out')
    arm.run_until(lambda: arm.statuses[-1].command_timed_out, 0.2, 'the time-out in the status')
    count = len(arm.states)
    arm.run_for(0.5)
    assert len(arm.states) > count + 490
    assert all(not s.effort.any() for s in arm.states[count:])
    assert len(arm.said('no valid command')) == 1
    # commands return
    count = len(arm.states)
    arm.send(good)
    arm.run_until(effort_is(good, count), 1.0, 'commands to apply again')
    assert [e.kind for e in arm.said('commands arrive')] == [Kind.COMMANDS_BACK] * 2
    # reset: the initial state again
    t0 = arm.reset()
    state = arm.since(t0, t0)[0]
    assert state.q.tolist() == [0.4, 0.8] and state.qd.tolist() == [0.0, 0.0]


def test_a_stalled_simulator_says_so_and_catches_up():
    arm = SimulatorGraph('planar_2r')
    arm.run_until(lambda: len(arm.states) > 100, 1.0, '100 joint states')
    late_before = arm.sim.late_steps
    arm.clock.stall(0.3)        # what a loaded host does to a process
    # the steps due in the stall run at once: simulated time comes back to wall time, 0.3 s
    # behind otherwise (stamps on the system clock at the step's time on the 1 ms grid)
    arm.run_until(lambda: (arm.clock.system_ns() - arm.states[-1].stamp_ns) * 1e-9 < 0.002,
                  0.5, 'simulated time back on wall time')
    # each of the 300 steps due in the stall but its last ran over one step (1 ms) late
    assert arm.sim.late_steps - late_before >= 298
    # each more than STALL (50 ms) late is a stall (the node logs them throttled)
    stalls = [e for e in arm.events if e.kind is Kind.STALL]
    assert len(stalls) == 250 and 'ms late: this process did not run' in stalls[0].message
    stamps = np.array([s.stamp_ns for s in arm.states])
    assert np.all(np.diff(stamps) == 1_000_000)     # on the grid, none dropped


def test_lockstep_without_an_answer_steps_on_and_waits_again_once_answered():
    # the controller answers each state but stops answering for a while (a process the host
    # did not run): lockstep_timeout of the simulator's own time later the state is counted
    # unanswered and the simulator steps on in real time; the next answer ends that
    silent = []

    def answer(state):
        return None if silent else np.zeros(2)
    arm = SimulatorGraph('planar_2r', lockstep=True, realtime=False, answer=answer,
                         initial_positions=[0.4, 0.8])
    arm.run_until(lambda: len(arm.states) > 100, 1.0, '100 answered states')
    assert arm.sim.unanswered_states == 0
    assert [e.kind for e in arm.events] == [Kind.COMMANDS_BACK]      # the first command
    silent.append(True)
    waited_from = arm.clock()
    t = arm.states[-1].t
    arm.run_until(lambda: arm.sim.unanswered_states, 2.0, 'the unanswered state')
    # the wait is the time-out on the clock, and simulated time stood still meanwhile
    assert arm.clock() - waited_from >= DEFAULT_LOCKSTEP_TIMEOUT
    assert arm.states[-1].t - t <= 0.0011
    unanswered = arm.said('lockstep: no command answered')
    assert len(unanswered) == 1 and unanswered[0].kind is Kind.UNANSWERED
    # stepping on without waiting: paced to the clock, simulated time runs with it
    wall, t = arm.clock(), arm.states[-1].t
    arm.run_for(0.5)
    assert abs((arm.states[-1].t - t) - (arm.clock() - wall)) < 0.002
    assert arm.sim.unanswered_states == 1
    silent.clear()
    arm.run_for(0.2)
    wall, t = arm.clock(), arm.states[-1].t
    arm.run_until(lambda: arm.states[-1].t >= t + 0.5, 1.0, 'answered again')
    # answered at once, no time passes on the clock: lockstep as fast as it runs
    assert arm.clock() == wall and arm.sim.unanswered_states == 1
