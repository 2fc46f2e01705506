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
PreparedModel: the same numbers as the checked API, into the caller's buffers.

Truth is the public functions (themselves tested against Pinocchio and closed forms): on random
states of every bundled robot and of random URDF chains, every method must equal the model's
method of the same name to 1e-12 (relative to the result's scale), friction, another link and
another gravity included, and write into ``out`` when given. Wrong sizes must raise, naming
the argument; a singular mass matrix raises as ``forward_dynamics`` does.
"""

import numpy as np
import pytest
from randomchain import random_models, random_q
from robot_dynamics import RobotModel, ShapeError, SingularMassMatrixError
from robot_dynamics.prepared import PreparedModel

N_STATES = 20
TOL = 1e-12


def close(ours, reference):
    """Assert equality to TOL relative to the reference's largest entry (at least 1)."""
    scale = max(1.0, float(np.abs(reference).max()))
    np.testing.assert_allclose(ours, reference, rtol=0.0, atol=TOL * scale)


def with_friction(model, rng):
    """Return ``model`` with random viscous damping and Coulomb friction on every joint."""
    return model.replace(damping=rng.uniform(0.1, 2.0, model.dof),
                         friction=rng.uniform(0.1, 2.0, model.dof))


def check_equal(model, prepared, rng, link=None, gravity=None):
    n = model.dof
    outputs = {'inverse_dynamics': np.empty(n), 'forward_dynamics': np.empty(n),
               'gravity_torques': np.empty(n), 'mass_matrix': np.empty((n, n)),
               'fk': np.empty((4, 4)), 'jacobian': np.empty((6, n))}
    for _ in range(N_STATES):
        q = random_q(rng, model, ())
        qd, qdd, tau = rng.normal(size=(3, n))
        options = {'gravity': gravity}
        for friction in (False, True):
            close(prepared.inverse_dynamics(q, qd, qdd, friction=friction),
                  model.inverse_dynamics(q, qd, qdd, friction=friction, **options))
            close(prepared.forward_dynamics(q, qd, tau, friction=friction),
                  model.forward_dynamics(q, qd, tau, friction=friction, **options))
        close(prepared.gravity_torques(q), model.gravity_torques(q, **options))
        close(prepared.mass_matrix(q), model.mass_matrix(q))
        close(prepared.fk(q), model.fk(q, link))
        close(prepared.jacobian(q), model.jacobian(q, link))
        # into the caller's buffers, which are returned
        calls = {'inverse_dynamics': (q, qd, qdd), 'forward_dynamics': (q, qd, tau),
                 'gravity_torques': (q,), 'mass_matrix': (q,), 'fk': (q,), 'jacobian': (q,)}
        for name, args in calls.items():
            out = outputs[name]
            out[...] = np.nan
            assert getattr(prepared, name)(*args, out=out) is out
            close(out, getattr(prepared, name)(*args))


@pytest.mark.parametrize('name', RobotModel.available())
def test_equal_to_the_checked_api_on_every_bundled_robot(name, rng):
    model = with_friction(RobotModel.load(name), rng)
    check_equal(model, model.prepare(), rng)


def test_equal_on_random_chains(rng):
    for xml, model in random_models(8, seed=18, min_joints=1, max_joints=9, fixed_prob=0.3):
        model = with_friction(model, rng)
        check_equal(model, PreparedModel(model), rng)


def test_other_links_and_gravity(bundled, rng):
    model = bundled['puma560']
    gravity = np.array([0.3, -1.2, -9.0])
    # a link on the base (body 0: fk is its fixed pose, the Jacobian zero), one midway, the tip
    for link in (model.base_link, model.link_names[3], model.tip_link):
        prepared = model.prepare(link=link, gravity=gravity)
        assert prepared.link == link
        check_equal(model, prepared, rng, link=link, gravity=gravity)
    np.testing.assert_array_equal(model.prepare(link=model.base_link).jacobian(np.zeros(6)),
                                  np.zeros((6, 6)))


def test_bad_preparation_and_sizes(bundled):
    model = bundled['scara']
    with pytest.raises(ValueError, match='unknown link'):
        model.prepare(link='no_such_link')
    with pytest.raises(ShapeError, match='gravity'):
        model.prepare(gravity=[0.0, -9.81])
    prepared = model.prepare()
    q, n = np.zeros(3), 3
    cases = (
        (lambda: prepared.inverse_dynamics(q, np.zeros(2), q),
         r'qd: expected shape \(3,\), got \(2,\)'),
        (lambda: prepared.inverse_dynamics(q, q, q, out=np.empty(4)), 'out: '),
        (lambda: prepared.forward_dynamics(q, q, np.zeros(5)), 'tau: '),
        (lambda: prepared.gravity_torques(np.zeros(4)), 'q: '),
        (lambda: prepared.mass_matrix(q, out=np.empty((n, n + 1))),
         r'out: expected shape \(3, 3\)'),
        (lambda: prepared.fk(np.zeros(2)), 'q: '),
        (lambda: prepared.jacobian(q, out=np.empty((3, n))), r'out: expected shape \(6, 3\)'),
    )
    for call, message in cases:
        with pytest.raises(ShapeError, match=message):
            call()


def test_singular_mass_matrix_raises(planar_2r):
    # the last body has neither mass nor inertia: joint 2 moves nothing
    inertia = planar_2r.inertia.copy()
    inertia[1] = 0.0
    model = planar_2r.replace(mass=[planar_2r.mass[0], 0.0], inertia=inertia)
    with pytest.raises(SingularMassMatrixError, match='joint2'):
        model.prepare().forward_dynamics(np.array([0.3, 0.7]), np.zeros(2), np.ones(2))
