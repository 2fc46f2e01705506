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

"""Bundled robots: the files agree with each other and with their published sources."""

import numpy as np
import pytest

from robot_dynamics import RobotModel
from robot_dynamics.robots import share_directory

PAIRS = ['scara', 'puma560', 'iiwa14']


def _states(model, rng, count=20):
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    return rng.uniform(lo, hi, (count, model.dof)), rng.normal(size=(2, count, model.dof))


def test_available_lists_every_robot_file():
    names = RobotModel.available()
    for name in ('scara', 'planar_2r', 'rp_arm', 'puma560', 'iiwa14', 'planar_3r'):
        assert name in names
    share = share_directory()
    assert (share / 'package.xml').is_file()
    assert sorted(p.stem for p in (share / 'urdf').glob('*.urdf')) == \
        sorted(n for n in names if (share / 'urdf' / f'{n}.urdf').is_file())


@pytest.mark.parametrize('name', PAIRS)
def test_urdf_file_matches_dh_table(name):
    """The URDF in urdf/ and the DH table in config/ describe the same robot."""
    from_urdf = RobotModel.load(name)
    from_dh = RobotModel.from_dh(str(share_directory() / 'config' / f'{name}.dh.yaml'))
    assert from_urdf.joint_names == from_dh.joint_names
    assert from_urdf.joint_types == from_dh.joint_types
    for field in ('lower', 'upper', 'effort_limit', 'velocity_limit', 'damping', 'friction'):
        np.testing.assert_array_equal(getattr(from_urdf, field), getattr(from_dh, field))
    rng = np.random.default_rng(7)
    q, (qd, qdd) = _states(from_urdf, rng)
    np.testing.assert_allclose(from_urdf.fk(q), from_dh.fk(q), atol=1e-12)
    np.testing.assert_allclose(from_urdf.mass_matrix(q), from_dh.mass_matrix(q), atol=1e-12)
    np.testing.assert_allclose(from_urdf.inverse_dynamics(q, qd, qdd, friction=True),
                               from_dh.inverse_dynamics(q, qd, qdd, friction=True), atol=1e-10)


def test_generated_urdfs_are_current():
    """urdf/puma560.urdf and urdf/iiwa14.urdf are to_urdf() of their DH tables, unedited."""
    for name in ('puma560', 'iiwa14'):
        dh = RobotModel.from_dh(str(share_directory() / 'config' / f'{name}.dh.yaml'))
        text = (share_directory() / 'urdf' / f'{name}.urdf').read_text()
        assert text == dh.to_urdf(), f'regenerate urdf/{name}.urdf from config/{name}.dh.yaml'


def test_puma560_matches_published_dh():
    """Kinematics and rigid-body dynamics equal Corke's Puma560 (Robotics Toolbox)."""
    import roboticstoolbox as rtb
    puma = rtb.models.DH.Puma560()
    for link in puma.links:   # our model has no motor inertia and no friction
        link.Jm, link.B, link.Tc = 0.0, 0.0, [0.0, 0.0]
    model = RobotModel.load('puma560')
    np.testing.assert_array_equal(model.mass, [link.m for link in puma.links])
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-1.0, 1.0, (3, 10, 6))
    for k in range(10):
        np.testing.assert_allclose(model.fk(q[k]), puma.fkine(q[k]).A, atol=1e-12)
        np.testing.assert_allclose(model.jacobian(q[k]), puma.jacob0(q[k]), atol=1e-12)
        np.testing.assert_allclose(model.inverse_dynamics(q[k], qd[k], qdd[k]),
                                   puma.rne(q[k], qd[k], qdd[k], gravity=model.gravity),
                                   rtol=1e-9, atol=1e-9)


def test_planar_2r_has_the_seed_parameters():
    """Check l = 2, 2; lCG = 1, 1; m = 2, 1; Izz = 3, 1 about the joint axis (Hayes §5.4)."""
    model = RobotModel.load('planar_2r')
    np.testing.assert_array_equal(model.mass, [2.0, 1.0])
    np.testing.assert_allclose(model.com, [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    axis_inertia = np.einsum('i,nij,j->n', model.joint_axis[0], model.inertia, model.joint_axis[0])
    np.testing.assert_allclose(axis_inertia, [3.0, 1.0])
    np.testing.assert_allclose(model.fk([0.0, 0.0])[:3, 3], [4.0, 0.0, 0.0])
