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
Forward kinematics and the geometric Jacobian of the tip: robot_dynamics, Pinocchio, RTB.

Robots: the PUMA 560 (6-DOF), the SCARA (RRP), the planar 2R and the iiwa14 (7-DOF), all
bundled. Peers:

- Pinocchio: ``forwardKinematics`` + ``updateFramePlacement`` for fk, ``computeFrameJacobian``
  (``LOCAL_WORLD_ALIGNED``, the same convention as ours; it runs the forward pass itself) for
  the Jacobian. Pinocchio has no batch API, so batch = a Python loop over the states.
- Robotics Toolbox: the ``DHRobot`` models of ``bench_dynamics.rtb_robot`` (the same DH tables);
  ``fkine`` and ``jacob0``. ``fkine`` takes a trajectory (N, n), which is its batch; ``jacob0``
  does not, so its batch is a Python loop.

Before timing, the three libraries must agree on the pose and the Jacobian. Target, in the
``target`` column: every batch operation faster per state than Pinocchio in a Python loop.
"""

from bench_dynamics import rtb_robot
from common import best_us, check_close, Fixture, N_BATCH, timing_row

GROUP = 'kinematics'
ROBOTS = ('puma560', 'scara', 'planar_2r', 'iiwa14')


def check_agreement(fx, robot, pin_q):
    """Compare fk and jacobian of the three libraries on a few states (raises if not equal)."""
    pin, pm, pd, fid = fx.pin, fx.pin_model, fx.pin_data, fx.pin_frame()
    model = fx.model
    for q, qp in zip(fx.Q[:5], pin_q[:5]):
        T, J = model.fk(q), model.jacobian(q)
        pin.forwardKinematics(pm, pd, qp)
        check_close(f'{fx.name} fk vs pinocchio', T,
                    pin.updateFramePlacement(pm, pd, fid).homogeneous)
        J_pin = pin.computeFrameJacobian(pm, pd, qp, fid, pin.LOCAL_WORLD_ALIGNED)
        check_close(f'{fx.name} jacobian vs pinocchio', J, J_pin[:, fx.pin_idx_v])
        check_close(f'{fx.name} fk vs rtb', T, robot.fkine(q).A)
        check_close(f'{fx.name} jacobian vs rtb', J, robot.jacob0(q))
    check_close(f'{fx.name} batch fk vs rtb', model.fk(fx.Q[:50]), robot.fkine(fx.Q[:50]).A)


def bench_robot(name, quick=False):
    """Return the timing rows of one robot."""
    repeat = 1 if quick else 7
    fx = Fixture(name)
    model, robot = fx.model, rtb_robot(name)
    pin, pm, pd, fid = fx.pin, fx.pin_model, fx.pin_data, fx.pin_frame()
    frame = pin.LOCAL_WORLD_ALIGNED
    pin_q = fx.pin_q(fx.Q)                # converted once, outside the timed code
    check_agreement(fx, robot, pin_q)
    q, qp, Q = fx.q, pin_q[0], fx.Q

    def pin_fk(qp=qp):
        pin.forwardKinematics(pm, pd, qp)
        return pin.updateFramePlacement(pm, pd, fid)

    def pin_fk_batch():
        for qp in pin_q:
            pin.forwardKinematics(pm, pd, qp)
            pin.updateFramePlacement(pm, pd, fid)

    def pin_jacobian_batch():
        for qp in pin_q:
            pin.computeFrameJacobian(pm, pd, qp, fid, frame)

    def rtb_jacobian_batch():
        for qk in Q:
            robot.jacob0(qk)

    single = {'repeat': repeat}
    batch = {'per_call': N_BATCH, 'repeat': max(1, repeat // 2),
             'budget_s': 1.0 if quick else 4.0}
    rows = [
        timing_row(GROUP, name, 'fk', 'single',
                   best_us(lambda: model.fk(q), **single),
                   best_us(pin_fk, **single),
                   best_us(lambda: robot.fkine(q), **single)),
        timing_row(GROUP, name, 'jacobian', 'single',
                   best_us(lambda: model.jacobian(q), **single),
                   best_us(lambda: pin.computeFrameJacobian(pm, pd, qp, fid, frame), **single),
                   best_us(lambda: robot.jacob0(q), **single)),
        timing_row(GROUP, name, 'fk', 'batch',
                   best_us(lambda: model.fk(Q), **batch),
                   best_us(pin_fk_batch, **batch),
                   best_us(lambda: robot.fkine(Q), **batch)),
        timing_row(GROUP, name, 'jacobian', 'batch',
                   best_us(lambda: model.jacobian(Q), **batch),
                   best_us(pin_jacobian_batch, **batch),
                   best_us(rtb_jacobian_batch, **{**batch, 'repeat': 1})),
    ]
    for row in rows:
        faster = row['ours_us'] < row['pinocchio_us']
        row['target'] = ('< pinocchio loop: ' + ('met' if faster else 'MISSED')
                         if row['mode'] == 'batch' else None)
    return rows


def run(quick=False):
    """Return the rows of this benchmark (see common.py for the row format)."""
    rows = []
    for name in ROBOTS:
        rows.extend(bench_robot(name, quick=quick))
    return rows
