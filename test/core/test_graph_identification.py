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
The arm's own dynamics in the graph's loop: a payload the model does not know, and what fixes it.

The simulator carries a payload at the tip of the planar 2R that the controller's model lacks
("the real arm" against what the controller believes), the nodes' loops in lockstep on the
test's clock (``test/graph_harness.py``). Identification from the graph's own run (the
excitation ``robot-dynamics excite --duration 10`` makes, tracked, its joint states identified
as ``robot-dynamics identify`` identifies a recording's) predicts held-out torques ten times
better than the nominal model and finds the payload's torques again; with the identified URDF as
its model, computed torque tracks the same motion at least twice as well as with the nominal
one. The adaptive law learns the payload through the controller's loop, where computed torque
with the wrong model stays off. The workflow with the command line over ROS (excite, bringup
--record, send, identify): test/ros/test_identify_your_arm.py.
"""

from graph_harness import LoopGraph, state_arrays
import numpy as np
import pytest
from robot_dynamics import excitation, identify, parameter_files, RobotModel
from robot_dynamics.closed_loop import goal_from_points, with_payload
from robot_dynamics.controller import Mode
from robot_dynamics.events import Outcome
from robot_dynamics.follower import Goal
from robot_dynamics.trajectory import point_to_point, TrajectoryPoints
from robot_dynamics.urdf import set_dynamic_parameters

ROBOT = 'planar_2r'
#: The payload at the tip of the planar 2R [kg] (its tip origin), unknown to the description.
PAYLOAD_KG = 1.5
#: How fast the adaptive law learns here: the planar 2R takes 100 times the default, which is
#: set for arms like the PUMA 560 (its loop at 1 kHz goes unstable at ten times the default).
ADAPTATION_GAIN = 1e-2
#: The excitation's length [s], as ``robot-dynamics excite --duration 10``.
EXCITATION_S = 10.0
#: How long after its last point a goal may take to settle [s] (the ROS test's goals' tolerance).
GOAL_TIME = 5.0
#: The motion tracked: from where the arm holds, by this much and back [rad].
STEP = np.array([0.6, -0.5])


def _graph(law='computed_torque', model=None, simulator=None):
    """Return the planar 2R's loop with the payload; the controller's ``model`` if given."""
    return LoopGraph(ROBOT, simulator={'payload_mass': PAYLOAD_KG, **(simulator or {})},
                     controller={'control_law': law, 'adaptation_gain': ADAPTATION_GAIN},
                     model=model)


def _repeated(arm, q0, repetitions, segment):
    """Return the goal q0 -> q0 + STEP -> q0 ... ``repetitions`` times, ``segment`` s each way."""
    times = np.linspace(0.0, segment, 21)
    legs = [point_to_point(a, b, segment, 'quintic').sample(times)
            for a, b in ((q0, q0 + STEP), (q0 + STEP, q0))]
    t, q, qd, qdd = [np.zeros(1)], [legs[0].q[:1]], [legs[0].qd[:1]], [legs[0].qdd[:1]]
    for k in range(2 * repetitions):
        leg = legs[k % 2]
        t.append(times[1:] + k * segment)
        q.append(leg.q[1:])
        qd.append(leg.qd[1:])
        qdd.append(leg.qdd[1:])
    return Goal('repeated', None, *map(np.concatenate, (t, q, qd, qdd)),
                arm.tolerances._replace(goal_time=GOAL_TIME))


def _follow(arm, goal):
    """Run ``goal`` to its success; return the stamps and the tracking errors of its cycles."""
    count = len(arm.cycles)
    arm.submit(goal)
    arm.run_until(arm.ended, goal.time_from_start[-1] + GOAL_TIME + 1.0, 'the goal ending')
    [ended] = arm.ended()
    assert ended.outcome is Outcome.SUCCEEDED, ended.message
    moving = [c for c in arm.cycles[count:] if c.mode is Mode.TRAJECTORY]
    return (np.array([c.t for c in moving]),
            np.array([c.reference.q - c.q for c in moving]))


@pytest.fixture(scope='module')
def identified(tmp_path_factory):
    """Identify the arm from the graph's run of the excitation; return it and its URDF file."""
    model = RobotModel.load(ROBOT)
    start = parameter_files.file_values([parameter_files.parameter_file(ROBOT)],
                                        'simulator')['initial_positions']
    motion = excitation.optimise(model, start=start, duration=EXCITATION_S)
    arm = _graph()
    arm.hold_at_rest()
    points = TrajectoryPoints(model.joint_names, *motion.points())
    # as `robot-dynamics send` hands the file over: from the newest state, the default tolerances
    arm.submit(goal_from_points(model, points, arm.tolerances, tag='excitation'))
    arm.run_until(arm.ended, points.time_from_start[-1] + arm.tolerances.goal_time + 1.0,
                  'the excitation ending')
    [ended] = arm.ended()
    assert ended.outcome is Outcome.SUCCEEDED, ended.message
    # what the recording's /joint_states hold: positions and the applied torques
    t, q, _, tau = state_arrays(arm.states)
    found = identify.from_samples(model, t, q, tau)
    folder = tmp_path_factory.mktemp('identified')
    nominal, urdf = folder / 'nominal.urdf', folder / 'identified.urdf'
    nominal.write_text(model.to_urdf())
    urdf.write_text(set_dynamic_parameters(model.to_urdf(), found.identified))
    return found, nominal, urdf


def test_identify_a_payload_from_the_graphs_run(identified):
    found, _, urdf = identified
    figures = found.report()['held_out_rms_torque_error']
    recorded, ours = figures['recorded_model_overall'], figures['identified_model_overall']
    print(f'held-out rms torque error [N m]: recorded model {recorded:.3g}, '
          f'identified {ours:.3g}')
    assert recorded >= 10.0 * ours
    # the payload found again, as far as the dynamics tell it (the base parameters): the
    # identified URDF's torques are those of the arm with its payload
    model = RobotModel.load(ROBOT)
    arm, plant = RobotModel.from_urdf(str(urdf)), with_payload(model, PAYLOAD_KG)
    rng = np.random.default_rng(7)
    q, qd, qdd = (rng.uniform(-2.0, 2.0, (200, model.dof)) for _ in range(3))
    truth = plant.inverse_dynamics(q, qd, qdd)
    assert np.abs(arm.inverse_dynamics(q, qd, qdd) - truth).max() < 0.02 * np.abs(truth).max()


def test_the_identified_model_tracks_better(identified):
    _, nominal, urdf = identified
    rms = {}
    # the same motion, the same arm with its payload, the controller's model nominal or found
    for name, description in (('nominal', nominal), ('identified', urdf)):
        arm = _graph(model=RobotModel.from_urdf(str(description)),
                     simulator={'plant_urdf_file': str(nominal)})
        _, error = _follow(arm, _repeated(arm, arm.hold_at_rest(), 1, 1.5))
        rms[name] = float(np.sqrt(np.mean(error ** 2)))
    print(f'computed torque tracking rms [rad]: nominal model {rms["nominal"]:.3g}, '
          f'identified {rms["identified"]:.3g}')
    assert rms['identified'] < 0.5 * rms['nominal']


def test_the_adaptive_law_learns_the_payload_through_the_controllers_loop():
    repetitions, segment = 4, 1.0
    per_repetition = {}
    for law in ('computed_torque', 'adaptive'):
        arm = _graph(law)
        t, error = _follow(arm, _repeated(arm, arm.hold_at_rest(), repetitions, segment))
        k = np.minimum(((t - t[0]) // (2 * segment)).astype(int), repetitions - 1)
        per_repetition[law] = [float(np.sqrt(np.mean(error[k == r] ** 2)))
                               for r in range(repetitions)]
        if law == 'adaptive':
            # what the controller node publishes on ~/parameter_estimate
            estimator = arm.controller.law
            estimate = estimator.state.estimate
            assert np.all(estimator.lower <= estimate)
            assert np.all(estimate <= estimator.upper)
            assert np.any(estimate != estimator.nominal)
            assert len(estimator.parameter_names) == estimate.size
    print(f'tracking rms per repetition [rad]: {per_repetition}')
    fixed, learning = per_repetition['computed_torque'], per_repetition['adaptive']
    # computed torque with the wrong model stays off; the adaptive law's error falls to a small
    # fraction of it over the repetitions
    assert max(fixed) < 1.5 * min(fixed)
    assert learning[-1] < 0.5 * learning[0]
    assert learning[-1] < 0.2 * fixed[-1]
