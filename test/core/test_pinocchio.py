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
Poses and Jacobians against Pinocchio on the same URDF text (pin is a declared test dependency).

Pinocchio's frame Jacobian in ``LOCAL_WORLD_ALIGNED`` is the library's convention: rows
``vx vy vz wx wy wz``, base-frame axes, at the link origin. Both must agree to 1e-10 on every
bundled URDF (the files in urdf/ and ``to_urdf()`` of every bundled model, DH ones included)
and on random URDFs, for every link frame.
"""

from functools import lru_cache
from pathlib import Path
import re

import numpy as np
import pinocchio  # noqa: F401 - a missing pin must fail loudly, not skip
import pytest
from randomchain import PinChain, random_models, random_q
from robot_dynamics import RobotModel

URDF_DIR = Path(__file__).resolve().parents[2] / 'urdf'
TOL = 1e-10
N_RANDOM = 30
STATES = 4


@lru_cache(maxsize=None)
def random_chains():
    return random_models(N_RANDOM, seed=11, min_joints=1, max_joints=9, fixed_prob=0.3)


def urdf_files():
    files = sorted(URDF_DIR.glob('*.urdf'))
    assert files, f'no URDF files in {URDF_DIR}'
    return files


def compare(model, xml, rng, states=STATES):
    """Compare fk and jacobian of every link of ``model`` with Pinocchio on ``xml``."""
    pc = PinChain(xml, model.joint_names)
    q = random_q(rng, model, (states,))
    q[0] = 0.0
    T_all = {link: model.fk(q, link) for link in model.link_names}
    J_all = {link: model.jacobian(q, link) for link in model.link_names}
    worst = 0.0
    for k in range(states):
        for link in model.link_names:
            T_pin = pc.fk(q[k], link)
            J_pin = pc.jacobian(q[k], link)
            err_T = np.abs(T_all[link][k] - T_pin).max()
            err_J = np.abs(J_all[link][k] - J_pin).max()
            assert err_T < TOL, f'{model.name} {link} fk differs by {err_T:.3g} at q={q[k]}'
            assert err_J < TOL, f'{model.name} {link} jacobian differs by {err_J:.3g} at {q[k]}'
            worst = max(worst, err_T, err_J)
    return worst


@pytest.mark.parametrize('path', urdf_files(), ids=lambda p: p.name)
def test_bundled_urdf_files_agree_with_pinocchio(path, rng):
    xml = path.read_text()
    model = RobotModel.from_urdf(str(path))
    compare(model, xml, rng)
    # and every link of the file is a frame of the model (nothing dropped)
    pin_bodies = {f.name for f in PinChain(xml, model.joint_names).model.frames
                  if f.type == pinocchio.BODY}
    assert pin_bodies == set(model.link_names)


@pytest.mark.parametrize('name', RobotModel.available())
def test_to_urdf_of_every_bundled_robot_agrees_with_pinocchio(name, rng):
    model = RobotModel.load(name)
    compare(model, model.to_urdf(), rng)


@pytest.mark.parametrize('index', range(N_RANDOM))
def test_random_urdf_agrees_with_pinocchio(index, rng):
    xml, model = random_chains()[index]
    compare(model, xml, rng)


def test_random_urdfs_exercise_every_feature():
    xmls = [xml for xml, _ in random_chains()]
    text = '\n'.join(xmls)
    for kind in ('revolute', 'continuous', 'prismatic', 'fixed'):
        assert f'type="{kind}"' in text
    # fixed joints (more links than moving joints) and links without <inertial>
    assert any(m.dof != len(m.link_names) - 1 for _, m in random_chains())
    assert any(re.search(r'<link name="link_\d+"/>', xml) for xml in xmls)


def test_to_urdf_of_random_models_agrees_with_pinocchio(rng):
    for xml, model in random_chains()[:8]:
        compare(model, model.to_urdf(), rng, states=2)


def test_to_urdf_without_optional_limits_is_valid_urdf():
    # Bug: DH rows may omit lower/upper/effort/velocity (RobotModel.from_dh), and to_urdf()
    # then writes effort="inf" velocity="inf" (and lower="-inf" upper="inf" for a prismatic
    # row), which urdfdom - the parser of Pinocchio, robot_state_publisher, RViz, MoveIt -
    # rejects ("effort value (inf) is not a valid float").
    model = RobotModel.from_dh([
        {'a': 0.5, 'alpha': 0.0, 'd': 0.3, 'theta': 0.0, 'type': 'revolute', 'mass': 1.0},
        {'a': 0.4, 'alpha': np.pi, 'd': 0.2, 'theta': 0.0, 'type': 'revolute', 'mass': 1.0,
         'lower': -2.0, 'upper': 2.0},
        {'a': 0.0, 'alpha': np.pi, 'd': 0.0, 'theta': 0.0, 'type': 'prismatic', 'mass': 0.5}])
    xml = model.to_urdf()
    pinocchio.buildModelFromXML(xml)
    compare(model, xml, np.random.default_rng(0))
    back = RobotModel.from_urdf(xml)
    for field in ('lower', 'upper', 'velocity_limit', 'effort_limit'):
        assert np.array_equal(getattr(back, field), getattr(model, field)), field
