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
Identification (issue 16): the regressor against Pinocchio's, and the whole job's wall time.

- ``regressor``: ``model.regressor`` (the ``(n, 10 n)`` joint-torque regressor) against
  ``pin.computeJointTorqueRegressor`` on the same URDF, one state and a batch of 10,000 (a
  Python loop for Pinocchio), on the planar 2R, the PUMA 560 and the iiwa14;
  ``slotine_li_regressor`` (two velocities, the adaptive law's) has no Pinocchio counterpart.
  Before timing, the two regressors must agree.
- ``identification``: 60 s of 1 kHz joint states of the PUMA 560 following an optimised
  excitation (positions with an encoder's noise, torques with noise, from the model's inverse
  dynamics): ``signals.filtered`` (filter, differentiate, decimate to 100 Hz), the base
  parameters, the weighted least squares and the physically consistent model, each timed once
  (wall time, seconds); and the stacked regressor of the decimated samples against Pinocchio's
  in a loop over them (the part a Pinocchio user would call).
- ``excitation``: ``excitation.optimise`` of the PUMA 560 (30 s, 5 harmonics), wall time.
"""

import time

from common import best_us, check_close, Fixture, N_BATCH, timing_row
import numpy as np

GROUP = 'identification'
ROBOTS = ('planar_2r', 'puma560', 'iiwa14')
SIX_DOF = 'puma560'
DURATION = 60.0          # s of recorded joint states
RATE = 1000.0            # Hz
TORQUE_NOISE = 0.05      # fraction of each joint's largest torque
POSITION_NOISE = 1e-5    # rad


def pin_regressor(fx):
    """Return ``regressor(k)`` and ``loop(Q, Qd, Qdd)``: Pinocchio's, in our column order."""
    pin, model, data = fx.pin, fx.pin_model, fx.pin_data
    model.gravity.linear = np.array(fx.model.gravity)
    joints = [model.getJointId(name) for name in fx.model.joint_names]
    columns = np.concatenate([np.arange(10 * (j - 1), 10 * j) for j in joints])
    Q, Qd, Qdd = fx.pin_q(fx.Q), fx.pin_v(fx.Qd), fx.pin_v(fx.Qdd)

    def regressor(k=0):
        return pin.computeJointTorqueRegressor(model, data, Q[k], Qd[k], Qdd[k])

    def ours_order(Y):
        return np.reshape(Y, (model.nv, -1))[fx.pin_idx_v][:, columns]

    def loop(q, qd, qdd):
        def run():
            for a, b, c in zip(q, qd, qdd):
                pin.computeJointTorqueRegressor(model, data, a, b, c)
        return run

    return regressor, ours_order, loop, (Q, Qd, Qdd)


def bench_regressor(name, quick):
    fx = Fixture(name)
    model = fx.model
    regressor, ours_order, loop, (Q, Qd, Qdd) = pin_regressor(fx)
    for k in range(5):
        check_close(f'{name} regressor vs pinocchio',
                    model.regressor(fx.Q[k], fx.Qd[k], fx.Qdd[k]), ours_order(regressor(k)))
    q, qd, qdd = fx.q, fx.qd, fx.qdd
    model.regressor(fx.Q, fx.Qd, fx.Qdd)                     # compile / load the kernel
    repeat = 1 if quick else 7
    single = {'repeat': repeat}
    batch = {'per_call': N_BATCH, 'repeat': max(1, repeat // 2),
             'budget_s': 1.0 if quick else 4.0}
    rows = [
        timing_row(GROUP, name, 'regressor', 'single',
                   best_us(lambda: model.regressor(q, qd, qdd), **single),
                   best_us(regressor, **single)),
        timing_row(GROUP, name, 'regressor', 'batch',
                   best_us(lambda: model.regressor(fx.Q, fx.Qd, fx.Qdd), **batch),
                   best_us(loop(Q, Qd, Qdd), **batch)),
        timing_row(GROUP, name, 'slotine_li_regressor', 'single',
                   best_us(lambda: model.slotine_li_regressor(q, qd, qd, qdd), **single)),
    ]
    return rows


def recorded_samples(model, motion, seed=2026):
    """Return 60 s of 1 kHz ``(t, q, tau)`` along ``motion`` (periodic), noisy as measured."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, DURATION, 1.0 / RATE)
    point = motion.sample(t % motion.duration)
    tau = model.inverse_dynamics(point.q, point.qd, point.qdd, friction=True)
    q = point.q + POSITION_NOISE * rng.standard_normal(point.q.shape)
    tau = tau + TORQUE_NOISE * np.abs(tau).max(axis=0) * rng.standard_normal(tau.shape)
    return t, q, tau


def bench_identification():
    """Return the rows of the 60 s identification and of the excitation optimisation."""
    from robot_dynamics import excitation, identification, RobotModel, signals
    model = RobotModel.load(SIX_DOF)
    identification.base_parameters(model)                   # warm up (kernels, imports)
    start = time.perf_counter()
    motion = excitation.optimise(model)
    optimise_s = time.perf_counter() - start
    t, q, tau = recorded_samples(model, motion)
    stages = {}
    start = time.perf_counter()
    prepared = signals.filtered(t, q, tau)
    stages['signals.filtered'] = time.perf_counter() - start
    start = time.perf_counter()
    base = identification.base_parameters(model)
    stages['base_parameters'] = time.perf_counter() - start
    start = time.perf_counter()
    found = identification.estimate(model, prepared.q, prepared.qd, prepared.qdd, prepared.tau,
                                    base=base)
    stages['estimate (weighted least squares)'] = time.perf_counter() - start
    start = time.perf_counter()
    consistent = identification.consistent_model(model, found)
    stages['consistent_model'] = time.perf_counter() - start
    truth = base.values(identification.parameters(model))
    z = np.abs(found.values - truth) / found.std
    rows = [{'table': f'{SIX_DOF}: identification of {DURATION:g} s of {RATE:g} Hz joint '
                      f'states ({len(prepared.t)} samples after filtering), wall time',
             'stage': stage, 'seconds': seconds} for stage, seconds in stages.items()]
    rows.append({'table': rows[0]['table'], 'stage': 'total', 'seconds': sum(stages.values())})
    rows.append({'table': f"{SIX_DOF}: the identification's results",
                 'base parameters': base.count, 'condition number': found.condition_number,
                 'largest |error| / std': float(z.max()),
                 'consistent model, largest deviation / std':
                     float(np.nanmax(consistent.deviation))})
    rows.append({'table': f'{SIX_DOF}: excitation.optimise ({motion.periods} x '
                          f'{motion.period:g} s, {motion.a.shape[0]} harmonics), wall time',
                 'seconds': optimise_s, 'condition number': motion.condition_number})
    # the stacked regressor of those samples, ours in one call, Pinocchio's in a loop
    fx = Fixture(SIX_DOF, n_batch=1)
    pin, pin_model, pin_data = fx.pin, fx.pin_model, fx.pin_data
    Q, Qd, Qdd = fx.pin_q(prepared.q), fx.pin_v(prepared.qd), fx.pin_v(prepared.qdd)

    def pinocchio():
        for a, b, c in zip(Q, Qd, Qdd):
            pin.computeJointTorqueRegressor(pin_model, pin_data, a, b, c)

    count = len(prepared.t)
    rows.append(timing_row(GROUP, SIX_DOF, f'regressor of the {count} samples', 'batch',
                           best_us(lambda: model.regressor(prepared.q, prepared.qd,
                                                           prepared.qdd), per_call=count,
                                   repeat=3, budget_s=2.0),
                           best_us(pinocchio, per_call=count, repeat=3, budget_s=2.0)))
    return rows


def run(quick=False):
    """Return the rows of this benchmark (see common.py for the row format)."""
    rows = []
    for name in ROBOTS:
        rows.extend(bench_regressor(name, quick))
    return rows + bench_identification()
