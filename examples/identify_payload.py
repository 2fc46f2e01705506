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
Identify a payload the model does not know, in the library (no ROS), and control with the result.

The "real arm" is the bundled PUMA 560 holding a 2 kg payload 5 cm beyond its flange (its last
link weighs 0.09 kg); the controller's model is the bundled one. Steps, as on a real arm:
excite (an optimised trajectory), record (the closed loop at 1 kHz, positions with an encoder's
noise, torques with 1 % noise), identify (filter, weighted least squares on 80 % of the samples, a
physically consistent model), then compare the torque prediction on the held-out 20 % and the
computed-torque tracking of the default reference with the nominal and the identified model.
Run: ``.venv/bin/python examples/identify_payload.py`` (about half a minute).
"""

import numpy as np

from robot_dynamics import closed_loop, control, excitation, identify, RobotModel

model = RobotModel.load('puma560')
plant = closed_loop.with_payload(model, 2.0, com=[0.0, 0.0, 0.05])
rng = np.random.default_rng(0)

# excite: 30 s (three periods of 10 s) from where the simulated arm starts
start = np.array([0.0, 0.8, -2.2, 0.0, 0.6, 0.0])
motion = excitation.optimise(model, start=start, duration=30.0)
reference = motion.trajectory(lead_in=1.0)
print(f'excitation: {motion.periods} x {motion.period:g} s, base regressor condition number '
      f'{motion.condition_number:.3g}')

# record: computed torque on the nominal model drives the arm with the payload, stiff enough
# (150 rad/s) that the wrist, whose nominal inertia is far below the payload's, stays on its
# reference: at the default 20 rad/s it ran a radian off into its stop, and what a stop does
# is no rigid-body dynamics to identify
controller = control.default_law('computed_torque', model, start, natural_frequency=150.0)
record = closed_loop.track_reference(plant, controller, reference, reference.end_time, q0=start)
q = record.q + 1e-5 * rng.standard_normal(record.q.shape)
# torque noise of 1 % of each joint's largest torque (a wrist's sensor is smaller)
noise = 0.01 * np.abs(record.tau_applied).max(axis=0)
tau = record.tau_applied + noise * rng.standard_normal(record.q.shape)

# identify: the pipeline of robot-dynamics identify, on these samples
found = identify.from_samples(model, record.t, q, tau, held_out=0.2)
identified = found.identified
print(f'identified {found.base.count} base parameters from {len(found.train.t)} samples, '
      f'condition number {found.result.estimate.condition_number:.3g}')
# the payload's mass shows in what the data see, e.g. the torques that hold the arm still
for label, candidate in (('nominal', model), ('with the payload', plant),
                         ('identified', identified)):
    print(f'gravity torque at the start, {label} model [N m]: '
          f'{np.array2string(candidate.gravity_torques(start), precision=3)}')
for label, key in (('nominal', identify.NOMINAL), ('identified', identify.IDENTIFIED)):
    print(f'held-out rms torque error, {label} model [N m]: '
          f'{np.array2string(found.rms[key], precision=4)}')

# control: computed torque on each model, the default reference of robot-dynamics simulate
motion, _ = closed_loop.reference_trajectory(plant, 4.0)
home = closed_loop.home_configuration(model)
for label, candidate in (('nominal', model), ('identified', identified), ('exact', plant)):
    law = control.default_law('computed_torque', candidate, home)
    run = closed_loop.track_reference(plant, law, motion, 4.0)
    error = closed_loop.tracking_error(plant, run, motion)
    print(f'computed torque with the {label} model: rms tracking error '
          f'{np.sqrt(np.mean(error ** 2)):.3e} rad, max {np.abs(error).max():.3e} rad')
