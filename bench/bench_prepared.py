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
Single calls in a loop: ``PreparedModel`` (the fast path) against the checked API and Pinocchio.

Per call on one state, microseconds of this process's CPU time (``time.process_time``: on a
shared machine the wall clock also counts the time other jobs hold the core): ``ours_us`` the
prepared model's method writing into a buffer of the caller's (``out=``), ``checked_us`` the
model's method of the same name (input checks, batch of one, a new array), ``pinocchio_us``
Pinocchio's function on its model and data (``rnea``, ``aba``, ``computeGeneralizedGravity``,
``crba``, ``forwardKinematics`` + ``updateFramePlacement``, ``computeFrameJacobian`` in
``LOCAL_WORLD_ALIGNED``). Robots: the planar 2R, the SCARA (RRP), the PUMA 560 and the iiwa14.
Before timing, the prepared model must equal the checked API and Pinocchio. Target, in the
``target`` column: within ``TARGET_RATIO`` x Pinocchio (issue 18).
"""

import time

from bench_dynamics import PinFunctions
from common import best_us, check_close, Fixture, timing_row
import numpy as np

GROUP = 'prepared'
ROBOTS = ('planar_2r', 'scara', 'puma560', 'iiwa14')
TARGET_RATIO = 3.0


def bench_robot(name, quick=False):
    """Return the timing rows of one robot."""
    options = {'repeat': 1 if quick else 7, 'clock': time.process_time}
    fx = Fixture(name)
    model, pf = fx.model, PinFunctions(fx)
    pin, frame = fx.pin, fx.pin_frame()
    prepared = model.prepare()
    q, qd, qdd, tau = fx.q, fx.qd, fx.qdd, fx.tau
    n = model.dof
    vector, matrix, pose, J = np.empty(n), np.empty((n, n)), np.empty((4, 4)), np.empty((6, n))

    def pin_fk():
        pin.forwardKinematics(pf.model, pf.data, pf.Q[0])
        return pin.updateFramePlacement(pf.model, pf.data, frame)

    def pin_jacobian():
        return pin.computeFrameJacobian(pf.model, pf.data, pf.Q[0], frame,
                                        pin.LOCAL_WORLD_ALIGNED)

    # (operation, ours, checked, Pinocchio as timed, its result in our layout)
    cases = (
        ('inverse_dynamics', lambda: prepared.inverse_dynamics(q, qd, qdd, vector),
         lambda: model.inverse_dynamics(q, qd, qdd), pf.rnea, pf.in_our_order),
        ('forward_dynamics', lambda: prepared.forward_dynamics(q, qd, tau, vector),
         lambda: model.forward_dynamics(q, qd, tau), pf.aba, pf.in_our_order),
        ('gravity_torques', lambda: prepared.gravity_torques(q, vector),
         lambda: model.gravity_torques(q),
         lambda: pin.computeGeneralizedGravity(pf.model, pf.data, pf.Q[0]), pf.in_our_order),
        ('mass_matrix', lambda: prepared.mass_matrix(q, matrix), lambda: model.mass_matrix(q),
         pf.crba, pf.in_our_order),
        ('fk', lambda: prepared.fk(q, pose), lambda: model.fk(q), pin_fk,
         lambda placement: placement.homogeneous),
        ('jacobian', lambda: prepared.jacobian(q, J), lambda: model.jacobian(q), pin_jacobian,
         lambda jacobian: jacobian[:, fx.pin_idx_v]),
    )
    rows = []
    for operation, fast, checked, pinocchio, ours_layout in cases:
        check_close(f'{name} {operation}: prepared vs checked', fast(), checked(), tol=1e-12)
        scale = 1.0 + np.abs(checked()).max()
        check_close(f'{name} {operation}: prepared vs pinocchio', fast() / scale,
                    ours_layout(pinocchio()) / scale)
        row = timing_row(GROUP, name, operation, 'single', best_us(fast, **options),
                         best_us(pinocchio, **options))
        del row['rtb_us']
        row['checked_us'] = best_us(checked, **options)
        met = row['ours_us'] <= TARGET_RATIO * row['pinocchio_us']
        row['target'] = f'<= {TARGET_RATIO:g}x pinocchio: ' + ('met' if met else 'MISSED')
        rows.append(row)
    return rows


def run(quick=False):
    """Return the rows of this benchmark (see common.py for the row format)."""
    return [row for name in ROBOTS for row in bench_robot(name, quick=quick)]
