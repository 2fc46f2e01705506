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
The operational-space law per state: what a 1 kHz Cartesian impedance loop pays per cycle.

``ours``: :meth:`OperationalSpace.for_one_state` (one compiled call: pose, J, Jdot qd, M, h and
the law). ``computed_torque``: the joint computed-torque law's one-state path on the same
state, the cost of a joint controller's cycle. ``pinocchio``: the same quantities from
Pinocchio (kinematics, Jacobian and its time variation, CRBA, non-linear effects) and the law's
algebra in numpy, in a loop; both torques are checked to agree before timing.
"""

from common import best_us, check_close, Fixture, timing_row
import numpy as np

from robot_dynamics.control import ComputedTorque
from robot_dynamics.task_space import OperationalSpace

GROUP = 'task_space'
ROBOTS = ('scara', 'iiwa14')
STIFFNESS = [1000.0] * 3 + [100.0] * 3


def _pinocchio_law(fx, rows, stiffness, zeta, kn, zn, posture):
    """Return ``tau(q, qd, pose_d)`` of the law from Pinocchio's quantities (at rest reference)."""
    pin, model, data = fx.pin, fx.pin_model, fx.pin_data
    fid, iv = fx.pin_frame(), fx.pin_idx_v
    k = np.asarray(stiffness)[rows]

    def tau(q, qd, pose_d):
        cq, v = fx.pin_q(q), fx.pin_v(qd)
        pin.computeJointJacobiansTimeVariation(model, data, cq, v)
        pin.updateFramePlacements(model, data)
        J = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[np.ix_(rows, iv)]
        Jd = pin.getFrameJacobianTimeVariation(model, data, fid,
                                               pin.LOCAL_WORLD_ALIGNED)[np.ix_(rows, iv)]
        M = pin.crba(model, data, cq)
        M = (np.triu(M) + np.triu(M, 1).T)[np.ix_(iv, iv)]
        h = pin.nonLinearEffects(model, data, cq, v)[iv]
        T = data.oMf[fid]
        e = np.concatenate((pose_d[:3, 3] - T.translation,
                            pin.log3(pose_d[:3, :3] @ T.rotation.T)))[rows]
        tau0 = kn * (posture - q) - 2 * zn * np.sqrt(kn * np.diag(M)) * qd
        X = np.linalg.solve(M, np.column_stack((J.T, tau0)))
        m = rows.size
        Lam = np.linalg.inv(J @ X[:, :m])
        s, U = np.linalg.eigh(Lam)
        L = U * np.sqrt(s)
        Li = np.linalg.inv(L)
        w, W = np.linalg.eigh(Li @ np.diag(k) @ Li.T)
        D = 2 * zeta * L @ (W * np.sqrt(w)) @ W.T @ L.T
        F = Lam @ (-Jd @ qd) + k * e - D @ (J @ qd) - Lam @ (J @ X[:, m])
        return h + J.T @ F + tau0
    return tau


def run(quick=False):
    """Return one row per robot: the law per state, against joint computed torque and pin."""
    rows_out = []
    for name in ROBOTS:
        fx = Fixture(name)
        model = fx.model
        q = np.array(fx.q)
        qd = 0.1 * np.array(fx.qd)
        posture = q + 0.05
        law = OperationalSpace(model, STIFFNESS, null_stiffness=10.0, posture=posture)
        rows = np.flatnonzero(model.task_mask)
        pose_d = model.fk(q)
        pose_d[:3, 3] += 0.01
        zero6 = np.zeros(6)
        ref = (pose_d, zero6, zero6)
        ours = law.for_one_state()
        joint = ComputedTorque(model, 400.0, 40.0).for_one_state()
        z = np.zeros(model.dof)
        joint_ref = (q + 0.01, z, z)
        peer = _pinocchio_law(fx, rows, STIFFNESS, law.damping_ratio, law.null_stiffness,
                              law.null_damping_ratio, posture)
        check_close(f'{name} operational space vs pinocchio',
                    law.compute(0.0, q, qd, ref).tau_requested, peer(q, qd, pose_d), tol=1e-7)
        ours(0.0, q, qd, ref)               # compile or load the kernels first
        joint(0.0, q, qd, joint_ref)
        budget = 0.5 if quick else 2.0
        row = timing_row(GROUP, name, 'operational_space', 'single',
                         best_us(lambda: ours(0.0, q, qd, ref), budget_s=budget),
                         pinocchio_us=best_us(lambda: peer(q, qd, pose_d), budget_s=budget))
        row['computed_torque_us'] = best_us(lambda: joint(0.0, q, qd, joint_ref),
                                            budget_s=budget)
        rows_out.append(row)
    return rows_out
