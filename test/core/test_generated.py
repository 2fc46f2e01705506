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
Code generated per robot (robot_dynamics.generated) against the recursions; its operation counts.

The small robots are compiled with numba (seconds each) in a cache folder of the test's own;
the PUMA 560 and iiwa14 (whose kernels numba compiles in about a minute) run the same generated
source as plain Python, which checks the same arithmetic.
"""

import ast
import types

import numpy as np
import pytest
from randomchain import PinDynamics
from robot_dynamics import generated, RobotModel
from robot_dynamics.errors import ShapeError

TOL = 1e-12
PIN_TOL = 1e-10      # Pinocchio's own rounding: what test_dynamics.py allows the recursions
SMALL = ('planar_2r', 'rp_arm', 'scara', 'planar_3r')


@pytest.fixture(scope='module')
def cache(tmp_path_factory):
    """Point the generated code's cache at a folder of this module's own."""
    with pytest.MonkeyPatch.context() as mp:
        folder = tmp_path_factory.mktemp('generated')
        mp.setenv('ROBOT_DYNAMICS_CACHE', str(folder))
        yield folder


def close(a, b, what, tol=TOL):
    err = np.abs(a - b).max() / max(1.0, np.abs(b).max())
    assert err < tol, f'{what}: differs by {err:.3g}'


def check_kernels(model, k, rng):
    n = model.dof
    for _ in range(3):
        q, qd, qdd = rng.uniform(-np.pi, np.pi, n), rng.normal(size=n), rng.normal(size=n)
        out, M = np.empty(n), np.empty((n, n))
        assert k.inverse_dynamics(q, qd, qdd, out)
        close(out, model.inverse_dynamics(q, qd, qdd), f'{model.name} tau')
        assert k.gravity_torques(q, out)
        close(out, model.gravity_torques(q), f'{model.name} g')
        assert k.mass_matrix(q, M)
        close(M, model.mass_matrix(q), f'{model.name} M')
        assert k.coriolis_matrix(q, qd, M)
        close(M, model.coriolis_matrix(q, qd), f'{model.name} C')


@pytest.mark.parametrize('name', SMALL)
def test_compiled_kernels_equal_the_recursion(name, cache, rng):
    model = RobotModel.load(name)
    k = generated.kernels(model)
    assert k.path.parent == cache and k.generation_time > 0
    check_kernels(model, k, rng)
    again = generated.kernels(model)       # from the cache: nothing generated
    assert again.path == k.path and again.generation_time == 0
    assert not k.inverse_dynamics(np.zeros(model.dof + 1), np.zeros(model.dof),
                                  np.zeros(model.dof), np.empty(model.dof))


def as_python(source):
    """Execute generated source without numba: the same arithmetic in plain Python."""
    numba = types.SimpleNamespace(njit=lambda **options: (lambda f: f))
    namespace = {'numba': numba}
    exec(compile(source.replace('import numba\n', ''), '<generated>', 'exec'), namespace)
    return types.SimpleNamespace(**namespace)


def test_puma560_generated_source_equals_the_recursion_and_pinocchio(rng):
    model = random_parameters(RobotModel.load('puma560'), rng)
    source, _ = generated.generate_source(model)
    k = as_python(source)
    check_kernels(model, k, rng)
    pin = PinDynamics(model, model.to_urdf())
    n = model.dof
    q, qd, qdd = rng.uniform(-np.pi, np.pi, n), rng.normal(size=n), rng.normal(size=n)
    out, M = np.empty(n), np.empty((n, n))
    k.inverse_dynamics(q, qd, qdd, out)
    close(out, pin.rnea(q, qd, qdd), 'tau (Pinocchio)', PIN_TOL)
    k.gravity_torques(q, out)
    close(out, pin.gravity(q), 'g (Pinocchio)', PIN_TOL)
    k.mass_matrix(q, M)
    close(M, pin.crba(q), 'M (Pinocchio)', PIN_TOL)
    k.coriolis_matrix(q, qd, M)
    close(M, pin.coriolis(q, qd), 'C (Pinocchio)', PIN_TOL)


def test_iiwa14_generated_dynamics_equal_the_recursion_and_pinocchio(rng):
    """The 7-joint arm's tau, M and g (its Coriolis program takes most of the generation)."""
    model = RobotModel.load('iiwa14')
    source, _ = generated.generate_source(
        model, kernels=('inverse_dynamics', 'mass_matrix', 'gravity_torques'))
    k = as_python(source)
    pin = PinDynamics(model, model.to_urdf())
    out, M = np.empty(7), np.empty((7, 7))
    for _ in range(3):
        q, qd, qdd = rng.uniform(-np.pi, np.pi, 7), rng.normal(size=7), rng.normal(size=7)
        assert k.inverse_dynamics(q, qd, qdd, out)
        close(out, model.inverse_dynamics(q, qd, qdd), 'iiwa14 tau')
        close(out, pin.rnea(q, qd, qdd), 'iiwa14 tau (Pinocchio)', PIN_TOL)
        k.mass_matrix(q, M)
        close(M, model.mass_matrix(q), 'iiwa14 M')
        close(M, pin.crba(q), 'iiwa14 M (Pinocchio)', PIN_TOL)
        k.gravity_torques(q, out)
        close(out, model.gravity_torques(q), 'iiwa14 g')
        close(out, pin.gravity(q), 'iiwa14 g (Pinocchio)', PIN_TOL)


def random_parameters(model, rng):
    """Return ``model`` with random, physically consistent inertial parameters."""
    n = model.dof
    A = rng.normal(size=(n, 3, 3))
    return model.replace(mass=rng.uniform(0.5, 3.0, n),
                         com=np.asarray(model.com) + rng.uniform(-0.1, 0.1, (n, 3)),
                         inertia=0.05 * A @ np.swapaxes(A, 1, 2) + 0.01 * np.eye(3))


def test_other_gravity_is_another_model(cache, rng):
    model = RobotModel.load('planar_2r')
    g = np.array([1.0, -2.0, -9.0])
    k = generated.kernels(model, gravity=g)
    assert k.path != generated.kernels(model).path
    q = rng.normal(size=2)
    out = np.empty(2)
    k.gravity_torques(q, out)
    close(out, model.gravity_torques(q, gravity=g), 'g, other gravity')


def test_prepared_model_with_generated_code(cache, rng):
    model = RobotModel.load('scara')
    fast, plain = model.prepare(generated=True), model.prepare()
    assert fast.generated is not None and plain.generated is None
    for _ in range(3):
        q, qd, qdd = rng.uniform(-1, 1, 3), rng.normal(size=3), rng.normal(size=3)
        for friction in (False, True):
            close(fast.inverse_dynamics(q, qd, qdd, friction=friction),
                  plain.inverse_dynamics(q, qd, qdd, friction=friction), f'tau {friction}')
        close(fast.gravity_torques(q), plain.gravity_torques(q), 'g')
        close(fast.mass_matrix(q), plain.mass_matrix(q), 'M')
        close(fast.coriolis_matrix(q, qd), plain.coriolis_matrix(q, qd), 'C')
        close(plain.coriolis_matrix(q, qd), model.coriolis_matrix(q, qd), 'C (recursion)')
    with pytest.raises(ShapeError, match='qdd'):
        fast.inverse_dynamics(np.zeros(3), np.zeros(3), np.zeros(2))
    with pytest.raises(ShapeError, match='out'):
        fast.mass_matrix(np.zeros(3), np.empty((2, 2)))


def test_environment_switch_reaches_the_controllers_one_state_law(cache, monkeypatch, rng):
    from robot_dynamics.control import ComputedTorque
    model = RobotModel.load('planar_2r')
    monkeypatch.setenv('ROBOT_DYNAMICS_GENERATED', '1')
    assert model.prepare().generated is not None
    law = ComputedTorque(model, kp=100.0, kd=20.0).for_one_state()
    monkeypatch.setenv('ROBOT_DYNAMICS_GENERATED', '0')
    assert model.prepare().generated is None
    recursion = ComputedTorque(model, kp=100.0, kd=20.0).for_one_state()
    q, qd, q_d, qd_d, qdd_d = rng.normal(size=(5, 2))
    close(law(0.0, q, qd, (q_d, qd_d, qdd_d)).tau_requested,
          recursion(0.0, q, qd, (q_d, qd_d, qdd_d)).tau_requested, 'computed torque')


def test_environment_switch_reaches_the_simulated_arm(cache, monkeypatch, rng):
    from robot_dynamics.plant import Plant
    model = RobotModel.load('scara')                  # with friction, a prismatic joint
    fast = model.prepare(generated=True)
    for friction in (False, True):
        q, qd, tau = rng.uniform(-1, 1, 3), rng.normal(size=3), rng.normal(size=3)
        close(fast.forward_dynamics(q, qd, tau, friction=friction),
              model.forward_dynamics(q, qd, tau, friction=friction), f'qdd {friction}')
    # a second of the arm under a sine torque: the same states, M qdd = tau - h against ABA
    plants = {}
    for switch in ('1', '0'):
        monkeypatch.setenv('ROBOT_DYNAMICS_GENERATED', switch)
        plant = Plant(model, 1e-3, q0=[0.2, 0.9, 0.1])
        assert (plant._prepared.generated is not None) == (switch == '1')
        for k in range(1000):
            plant.step(model.gravity_torques(plant.q) + 2.0 * np.sin(k * 1e-2 + np.arange(3)))
        plants[switch] = plant
    close(plants['1'].q, plants['0'].q, 'q after 1 s', 1e-9)
    close(plants['1'].qd, plants['0'].qd, 'qd after 1 s', 1e-9)
    assert np.abs(plants['0'].q - [0.2, 0.9, 0.1]).max() > 0.01     # it moved


def test_prepared_model_falls_back_with_a_warning(monkeypatch, tmp_path):
    blocker = tmp_path / 'not_a_folder'
    blocker.write_text('')
    monkeypatch.setenv('ROBOT_DYNAMICS_CACHE', str(blocker / 'cache'))
    model = RobotModel.load('planar_2r')
    with pytest.warns(RuntimeWarning, match='no generated code.*using the recursion'):
        prepared = model.prepare(generated=True)
    assert prepared.generated is None
    q = np.array([0.3, -0.4])
    close(prepared.gravity_torques(q), model.gravity_torques(q), 'g, fallback')


# ---- operation counts ---------------------------------------------------------------------------

PENDULUM = """<robot name="pendulum">
  <link name="base"/>
  <joint name="j" type="continuous">
    <parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
  </joint>
  <link name="arm">
    <inertial><origin xyz="0.5 0 0"/><mass value="2"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial>
  </link>
</robot>"""


def test_operation_counts_of_a_hand_countable_arm():
    """
    One link turning about z, gravity along z: tau = (izz + m l^2) qdd, and no gravity torque.

    The Newton-Euler program: wd x c = (0, l qdd, 0) (1 mul), F_y = m (l qdd) (1), the moment of
    F about the joint l F_y (1), I wd = izz qdd (1), n_z = izz qdd + l F_y (1 add); the
    centripetal force (along x) gives no moment about z and is dropped: 4 mul, 1 add.
    """
    model = RobotModel.from_urdf(PENDULUM)
    source, ops = generated.generate_source(model)
    assert ops['inverse_dynamics'] == {'mul': 4, 'add': 1, 'div': 0, 'fn': 0}
    assert ops['gravity_torques'] == {'mul': 0, 'add': 0, 'div': 0, 'fn': 0}
    k = as_python(source)
    out = np.empty(1)
    k.inverse_dynamics(np.array([0.7]), np.array([3.0]), np.array([2.0]), out)
    assert out[0] == pytest.approx((0.3 + 2 * 0.5 ** 2) * 2.0, abs=1e-14)


def ast_counts(source, name):
    """Count the arithmetic of one generated function in its Python syntax tree."""
    tree = ast.parse(source)
    function = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == name)
    count = {'mul': 0, 'add': 0, 'div': 0, 'fn': 0}
    # the body only: the decorator is no arithmetic
    for node in (inner for statement in function.body for inner in ast.walk(statement)):
        if isinstance(node, ast.If):          # the size check is not arithmetic of the model
            for inner in ast.walk(node.test):
                inner.skip = True
        if getattr(node, 'skip', False):
            continue
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Mult):
                count['mul'] += 1
            elif isinstance(node.op, (ast.Add, ast.Sub)):
                count['add'] += 1
            elif isinstance(node.op, ast.Div):
                count['div'] += 1
            elif isinstance(node.op, ast.Pow):
                count['mul'] += node.right.value - 1
        elif isinstance(node, ast.Call):
            count['fn'] += 1
    return count


@pytest.mark.parametrize('name', ['planar_2r', 'rp_arm', 'scara'])
def test_operation_counts_are_those_of_the_generated_code(name):
    source, ops = generated.generate_source(RobotModel.load(name))
    for kernel, count in ops.items():
        assert ast_counts(source, kernel) == count, kernel


def test_table_8_1_and_the_general_recursion():
    table = generated.table_8_1(6)
    assert table['Lagrange (4x4)'] == (27 * 216 / 2 + 165 * 36 / 2 + 30, 40 * 72 + 58 * 36 - 128)
    assert table['modified Newton-Euler'] == (513, 504)
    assert table['recursive Lagrange'] == (1356, 864)
    two, three, four = (generated.general_counts(n) for n in (2, 3, 4))
    # the general recursion grows linearly: each joint between the first and the last costs
    # the same
    for op in ('mul', 'add'):
        assert four[op] - three[op] == three[op] - two[op] > 0
