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
The bundled robots' geometry and the scene module, against FK and the models without geometry.

Truth: the same URDF with its ``<visual>`` and ``<collision>`` elements removed (the dynamics
must not change, 1e-12), ``fk`` of each visual's link times its origin, the joint origins of
``joint_frames``, and the files on disk for meshes.
"""

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from randomchain import random_q
from robot_dynamics import RobotModel, robots
from robot_dynamics.model import from_source
from robot_dynamics.scene import (body_colour, camera_framing, primitive_visuals, reach,
                                  resolve_mesh, Scene, segments, urdf_visuals)
from test_real_urdfs import robots_dir

URDF_ROBOTS = [name for name in RobotModel.available() if robots.path(name).suffix == '.urdf']
DH_ROBOTS = [name for name in RobotModel.available() if name not in URDF_ROBOTS]
GEOMETRY = re.compile(r'\s*<(visual|collision)>.*?</\1>', re.S)


def _without_geometry(text):
    return GEOMETRY.sub('', text)


@pytest.mark.parametrize('name', URDF_ROBOTS)
def test_bundled_geometry_leaves_the_dynamics_unchanged(name):
    text = robots.path(name).read_text()
    assert '<visual>' in text and '<collision>' in text
    bare = RobotModel.from_urdf(_without_geometry(text))
    model = RobotModel.from_urdf(text)
    for attr in ('mass', 'com', 'inertia', 'joint_placement', 'joint_axis', 'lower', 'upper',
                 'effort_limit', 'velocity_limit', 'damping', 'friction'):
        np.testing.assert_allclose(getattr(model, attr), getattr(bare, attr), rtol=0,
                                   atol=1e-12, err_msg=attr)
    rng = np.random.default_rng(3)
    q, qd, qdd = random_q(rng, model, (5,)), rng.normal(size=(5, model.dof)), \
        rng.normal(size=(5, model.dof))
    np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd, friction=True),
                               bare.inverse_dynamics(q, qd, qdd, friction=True), rtol=0,
                               atol=1e-12)


@pytest.mark.parametrize('name', URDF_ROBOTS + DH_ROBOTS)
def test_every_body_is_drawn_in_its_own_colour(name):
    model = RobotModel.load(name)
    _, urdf = from_source(robot=name)
    visuals = urdf_visuals(urdf, model)
    assert all(v.shape == 'cylinder' for v in visuals)     # primitives, no capsule fallback
    colours = {}
    for v in visuals:
        colours.setdefault(model.frames[v.link][0], set()).add(v.rgba)
    bodies = sorted(colours)
    assert bodies == list(range(model.dof + 1))
    assert all(len(c) == 1 for c in colours.values())
    assert len({c.pop() for c in colours.values()}) == min(model.dof + 1, 8)
    # collision elements: the same geometry, one per visual
    root = ET.fromstring(urdf)
    assert len(root.findall('.//collision')) == len(root.findall('.//visual')) == len(visuals)


@pytest.mark.parametrize('name', URDF_ROBOTS)
def test_bundled_geometry_is_the_generated_one(name):
    model = RobotModel.load(name)

    def order(v):
        return v.link, tuple(np.round(v.origin[:3, 3], 9)), v.size

    written = sorted(urdf_visuals(str(robots.path(name)), model), key=order)
    generated = sorted(primitive_visuals(model), key=order)
    assert [(v.link, v.shape) for v in written] == [(v.link, v.shape) for v in generated]
    for w, g in zip(written, generated):
        np.testing.assert_allclose(w.origin, g.origin, atol=1e-12)
        np.testing.assert_allclose(w.size, g.size, rtol=1e-12)
        np.testing.assert_allclose(w.rgba, g.rgba)


@pytest.mark.parametrize('name', ['scara', 'puma560', 'planar_3r'])
def test_visual_poses_are_fk_of_their_links(name):
    model = RobotModel.load(name)
    scene = Scene.from_urdf(from_source(robot=name)[1], model)
    q = random_q(np.random.default_rng(1), model, (7,))
    poses = scene.poses(q)
    assert poses.shape == (7, len(scene.visuals), 4, 4)
    for k, v in enumerate(scene.visuals):
        np.testing.assert_allclose(poses[:, k], model.fk(q, v.link) @ v.origin, atol=1e-12)
    np.testing.assert_allclose(scene.poses(q[2]), poses[2], atol=1e-14)


def test_scara_quill_rod_spans_the_stroke_through_the_forearm():
    model = RobotModel.load('scara')
    rods = [v for v in primitive_visuals(model) if v.link == 'quill' and v.shape == 'cylinder']
    # the quill: the rod on the quill's body, at least as long as the stroke (0.3 m)
    assert len(rods) == 1 and rods[0].size[1] > 0.3
    scene = Scene(model, rods)
    for q3 in (0.0, 0.3):
        T = scene.poses(np.array([0.2, -0.4, q3]))[0]
        ends = T[:3, 3] + np.outer([-0.5, 0.5], T[:3, 2] * rods[0].size[1])
        # from the tip up through the forearm's plane (z = 0.45 m)
        tip = model.fk(np.array([0.2, -0.4, q3]))[:3, 3]
        np.testing.assert_allclose(ends[np.argmin(ends[:, 2])], tip, atol=1e-12)
        assert ends[:, 2].max() > 0.45


def test_links_without_visuals_are_capsules_between_joint_origins():
    model = RobotModel.load('puma560')
    bare = _without_geometry(robots.path('puma560').read_text())
    scene = Scene.from_urdf(bare, model)
    assert all(v.shape == 'capsule' for v in scene.visuals)
    assert len(scene.visuals) == len(segments(model))
    q = random_q(np.random.default_rng(5), model, (4,))
    points = np.concatenate([np.zeros((4, 1, 3)), model.joint_frames(q)[:, :, :3, 3],
                             model.fk(q)[:, None, :3, 3]], axis=1)
    poses = scene.poses(q)
    for k, (v, (body, _, _)) in enumerate(zip(scene.visuals, segments(model))):
        half = poses[:, k, :3, 2] * v.size[1] / 2
        # body b runs from joint b's origin (the base origin for b = 0) to the next one's
        np.testing.assert_allclose(poses[:, k, :3, 3] - half, points[:, body], atol=1e-12)
        np.testing.assert_allclose(poses[:, k, :3, 3] + half, points[:, body + 1], atol=1e-12)
        assert v.rgba == body_colour(body)


def test_meshes_resolve_to_files():
    share = robots_dir().parent
    path = robots_dir() / 'ur_description/urdf/ur5_robot.urdf'
    model = RobotModel.from_urdf(str(path), base_link='base_link', tip_link='tool0')
    visuals = urdf_visuals(str(path), model, package_dirs=[share])
    meshes = [v for v in visuals if v.shape == 'mesh']
    assert len(meshes) >= 7 and all(v.mesh and v.mesh.endswith('.dae') for v in meshes)
    # the three forms of a mesh's name
    mesh = meshes[0].mesh
    relative = mesh.split('/robots/')[1]
    assert resolve_mesh('package://example-robot-data/robots/' + relative, None, [share]) == mesh
    assert resolve_mesh('file://' + mesh) == mesh
    assert resolve_mesh('../meshes/ur5/visual/base.dae', path.parent) == str(
        path.parent / '../meshes/ur5/visual/base.dae')
    assert resolve_mesh('package://no_such_package/a.stl', None, [share]) is None


@pytest.mark.parametrize('name', ['planar_2r', 'scara', 'iiwa14'])
def test_camera_frames_the_arm_whatever_its_size(name):
    model = RobotModel.load(name)
    fov = np.deg2rad(50)
    for q in random_q(np.random.default_rng(2), model, (3,)):
        position, target = camera_framing(model, q, fov)
        axis = (target - position) / np.linalg.norm(target - position)
        points = np.vstack([np.zeros(3), Scene(model, []).points(q)])
        rays = points - position
        angles = np.arccos(np.clip(rays @ axis / np.linalg.norm(rays, axis=1), -1, 1))
        # every point of the arm in view, and the arm no speck: its reach spans a good part
        assert angles.max() < fov / 2
        assert np.arcsin(0.6 * reach(model) / np.linalg.norm(target - position)) > 0.5 * fov / 2
