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
An external wrench at a named frame, against Pinocchio's RNEA and ABA with external forces.

``f_ext`` is the wrench the arm exerts on the environment at the frame's origin (base axes);
Pinocchio's ``fext`` is the force the environment applies to each joint's body, in that joint's
frame, so the two differ in sign and in where they are expressed.
"""

import numpy as np
import pinocchio as pin
import pytest
from randomchain import PinDynamics, random_q
from robot_dynamics import RobotModel
from robot_dynamics.errors import InputError

TOL = 1e-9


def pin_forces(ref, q, frame, f_ext):
    """Pinocchio's per-joint forces for the arm's wrench ``f_ext`` (6,) at ``frame``'s origin."""
    model, data = ref.model, ref.data
    pin.forwardKinematics(model, data, ref.chain.q(q))
    pin.updateFramePlacements(model, data)
    fid = ref.chain.frame_id(frame)
    p = data.oMf[fid].translation
    f_env, n_env = -f_ext[:3], -f_ext[3:]
    # the environment's wrench at the world origin, then in the frame of the body's joint
    world = pin.Force(f_env, n_env + np.cross(p, f_env))
    forces = pin.StdVec_Force()
    for _ in range(model.njoints):
        forces.append(pin.Force.Zero())
    joint = model.frames[fid].parentJoint
    forces[joint] = data.oMi[joint].actInv(world)
    return forces


@pytest.mark.parametrize('name', ['iiwa14', 'puma560', 'scara'])
def test_wrench_at_a_frame_matches_pinocchio_rnea_and_aba(name, rng):
    model = RobotModel.load(name)
    ref = PinDynamics(model, model.to_urdf())
    frames = [link for link in model.link_names if link != model.base_link]
    checked = 0
    for q in random_q(rng, model, (3,)):
        qd, qdd, tau = rng.normal(size=(3, model.dof))
        for frame in (frames[len(frames) // 2], frames[-2], model.tip_link):
            F = rng.normal(size=6) * [20, 20, 20, 2, 2, 2]
            forces = pin_forces(ref, q, frame, F)
            cq, v = ref.chain.q(q), ref.v
            tau_pin = pin.rnea(ref.model, ref.data, cq, v(qd), v(qdd), forces)[ref.iv]
            tau_ours = model.inverse_dynamics(q, qd, qdd, f_ext=F, f_ext_frame=frame)
            assert np.abs(tau_ours - tau_pin).max() < TOL * (1 + np.abs(tau_pin).max())
            qdd_pin = pin.aba(ref.model, ref.data, cq, v(qd), v(tau), forces)[ref.iv]
            for method in ('aba', 'crba'):
                qdd_ours = model.forward_dynamics(q, qd, tau, f_ext=F, f_ext_frame=frame,
                                                  method=method)
                assert np.abs(qdd_ours - qdd_pin).max() < 1e-7 * (1 + np.abs(qdd_pin).max())
            checked += 1
    assert checked == 9


def test_wrench_at_the_tip_is_the_default_and_a_batch_broadcasts(rng):
    model = RobotModel.load('iiwa14')
    q, qd, qdd = rng.normal(size=(3, 4, model.dof))
    F = rng.normal(size=6)
    tip = model.inverse_dynamics(q, qd, qdd, f_ext=F)
    assert np.allclose(model.inverse_dynamics(q, qd, qdd, f_ext=F, f_ext_frame=model.tip_link),
                       tip, rtol=0, atol=1e-10)
    mid = model.link_names[3]
    batch = model.inverse_dynamics(q, qd, qdd, f_ext=F, f_ext_frame=mid)
    one = model.inverse_dynamics(q[1], qd[1], qdd[1], f_ext=F, f_ext_frame=mid)
    assert np.allclose(batch[1], one, rtol=0, atol=1e-10)
    # a wrench on a link moves only the joints before it: J^T F has zeros after that body
    body, _ = model.link_body(mid)
    diff = batch - model.inverse_dynamics(q, qd, qdd)
    assert np.abs(diff[:, body:]).max() < 1e-10 < np.abs(diff[:, :body]).max()


def test_unknown_frame_is_refused():
    model = RobotModel.load('planar_2r')
    with pytest.raises(InputError, match="unknown frame 'nowhere'"):
        model.forward_dynamics([0, 0], [0, 0], [0, 0], f_ext=np.ones(6), f_ext_frame='nowhere')
