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
What a 3D view draws of an arm: its visual geometry, where each piece is at ``q``, the camera.

A :class:`Visual` is one piece of geometry fixed to a link: a primitive (box, cylinder,
sphere, capsule; cylinders and capsules along their own z axis, centred at their origin, as in
URDF) or a mesh file. Three sources:

- :func:`primitive_visuals`: geometry generated from the kinematics alone (a cylinder along
  each link between joint origins, a housing on each joint along its axis, a rod for each
  prismatic joint as long as its stroke, a tool flange at the tip), one colour per body. The
  bundled URDFs carry it, and ``RobotModel.to_urdf`` writes it (DH robots);
- :func:`urdf_visuals`: the ``<visual>`` elements of a URDF, meshes resolved to files
  (:func:`resolve_mesh`); a body none of whose links has a visual gets capsules between its
  joint origins (:func:`segments`);
- :class:`Scene`: the visuals of one model, and :meth:`Scene.poses` their base-frame poses for
  one ``q`` or a batch (one vectorised pass over the chain,
  :func:`~robot_dynamics.kinematics.frame_poses`).

:func:`camera_framing` places a camera that shows the whole arm whatever its size. No ROS here:
the view (``robot-dynamics view``) and tests use it alike.
"""

from dataclasses import dataclass
import os
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np

from . import kinematics
from .errors import ModelError
from .urdf import body_links, origin_pose, parse

SHAPES = ('box', 'cylinder', 'sphere', 'capsule', 'mesh')
#: Body colours (RGBA, 0..1): base, then one per moving body, cycled; far apart in hue.
PALETTE = (
    (0.35, 0.35, 0.38, 1.0),    # base: dark grey
    (0.95, 0.55, 0.10, 1.0),    # orange
    (0.15, 0.45, 0.85, 1.0),    # blue
    (0.20, 0.70, 0.30, 1.0),    # green
    (0.75, 0.25, 0.70, 1.0),    # purple
    (0.85, 0.20, 0.20, 1.0),    # red
    (0.10, 0.70, 0.75, 1.0),    # teal
    (0.90, 0.80, 0.15, 1.0),    # yellow
)


@dataclass(frozen=True)
class Visual:
    """
    One piece of geometry fixed to ``link``.

    ``origin`` is its pose in the link's frame (4, 4). ``size`` by ``shape``: box ``(x, y,
    z)`` [m]; cylinder and capsule ``(radius, length)`` along z (a capsule's length between its
    caps' centres); sphere ``(radius,)``; mesh the scale ``(sx, sy, sz)`` of the file ``mesh``
    (a path; None when it could not be resolved). ``rgba`` in 0..1.
    """

    link: str
    origin: np.ndarray
    shape: str
    size: tuple
    rgba: tuple
    mesh: str = None


def body_colour(body):
    """Return the RGBA colour of body ``body`` (0: the base) in :data:`PALETTE`."""
    return PALETTE[0] if body == 0 else PALETTE[1 + (body - 1) % (len(PALETTE) - 1)]


def reach(model):
    """
    Return the arm's size [m]: the lengths between joint origins and the prismatic strokes.

    The sum of ``|p|`` over the joint placements and the tip's offset on the last body, plus
    ``upper - lower`` of each prismatic joint: no point of the arm (without its visuals) is
    farther than this from the base origin.
    """
    lengths = np.linalg.norm(model.joint_placement[:, :3, 3], axis=1).sum()
    lengths += np.linalg.norm(model.frames[model.tip_link][1][:3, 3])
    strokes = np.where(model.is_prismatic, model.upper - model.lower, 0.0)
    return float(lengths + np.sum(np.where(np.isfinite(strokes), strokes, 0.0)))


def segments(model):
    """
    Return the arm's segments between joint origins: ``[(body, start, end), ...]``.

    ``start`` and ``end`` (3,) are in the body's frame: body 0 (the base) from its origin to joint
    1's, body i from its origin (joint i's origin moved by ``q_i``) to joint i+1's, the last body
    to the tip. Segments shorter than 1e-9 m are left out.
    """
    ends = [T[:3, 3] for T in model.joint_placement] + [model.frames[model.tip_link][1][:3, 3]]
    return [(body, np.zeros(3), np.array(end, dtype=float)) for body, end in enumerate(ends)
            if np.linalg.norm(end) > 1e-9]


def along(start, end):
    """Return the pose (4, 4) whose z axis runs from ``start`` to ``end``, at their middle."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    return _z_along(end - start, (start + end) / 2)


def _z_along(direction, centre):
    """Return a pose at ``centre`` whose z axis is ``direction`` (any x, y)."""
    z = direction / np.linalg.norm(direction)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    T = np.eye(4)
    T[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    T[:3, 3] = centre
    return T


def primitive_visuals(model):
    """
    Generate visuals from the kinematics of ``model`` alone: a list of :class:`Visual`.

    With ``r = 0.035 * reach(model)`` (at least 5 mm): a cylinder of radius ``r`` along each
    :func:`segments` entry on its body's link; on each joint a housing (cylinder of radius
    ``1.4 r``, length ``2.8 r``) along its axis, on the parent body (the one that carries it);
    on each prismatic joint's body a rod (radius ``0.6 r``) from the body origin against the
    motion, as long as the stroke plus the housing (the SCARA's quill); at the tip a flange
    (radius ``1.3 r``, ``0.4 r`` thick) across the last segment (or the tip's z axis), which
    makes sure the last body is drawn too. Colours: :func:`body_colour`. The links are the
    body links of :func:`~robot_dynamics.urdf.body_links` (the names ``model_to_urdf`` writes).
    """
    links = [model.base_link] + body_links(model)
    r = max(0.035 * reach(model), 0.005)
    visuals = []
    for body, start, end in segments(model):
        visuals.append(Visual(links[body], along(start, end), 'cylinder',
                              (r, float(np.linalg.norm(end - start))), body_colour(body)))
    for i, T_joint in enumerate(model.joint_placement):
        axis = T_joint[:3, :3] @ model.joint_axis[i]
        visuals.append(Visual(links[i], _z_along(axis, T_joint[:3, 3]), 'cylinder',
                              (1.4 * r, 2.8 * r), body_colour(i)))
        if model.is_prismatic[i]:
            stroke = model.upper[i] - model.lower[i]
            length = (stroke if np.isfinite(stroke) else reach(model)) + 1.4 * r
            a = model.joint_axis[i] / np.linalg.norm(model.joint_axis[i])
            visuals.append(Visual(links[i + 1], along(np.zeros(3), -length * a), 'cylinder',
                                  (0.6 * r, float(length)), body_colour(i + 1)))
    tip_body, T_tip = model.frames[model.tip_link]
    last = [(s, e) for body, s, e in segments(model) if body == model.dof]
    direction = (np.linalg.inv(T_tip[:3, :3]) @ (last[0][1] - last[0][0]) if last
                 else np.array([0.0, 0.0, 1.0]))
    flange = _z_along(direction, -0.2 * r * direction / np.linalg.norm(direction))
    visuals.append(Visual(model.tip_link, flange, 'cylinder', (1.3 * r, 0.4 * r),
                          body_colour(tip_body)))
    return visuals


def resolve_mesh(filename, base_dir=None, package_dirs=None):
    """
    Return the file a URDF mesh ``filename`` names, or None when it is not found.

    ``package://PKG/path``: ``PKG/path`` under each of ``package_dirs`` (folders that hold
    packages, or a package's own folder named ``PKG``), then ``share/PKG/path`` under each
    prefix of ``AMENT_PREFIX_PATH`` and ``PKG/path`` under each folder of ``ROS_PACKAGE_PATH``;
    ``file://`` URIs: the path; anything else: a path relative to ``base_dir`` (the URDF file's
    folder) unless absolute.
    """
    url = urlparse(filename)
    if url.scheme == 'package':
        package, rest = url.netloc, unquote(url.path).lstrip('/')
        roots = []
        for folder in package_dirs or ():
            folder = Path(folder)
            roots += [folder / package] + ([folder] if folder.name == package else [])
        for prefix in filter(None, os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep)):
            roots.append(Path(prefix) / 'share' / package)
        for folder in filter(None, os.environ.get('ROS_PACKAGE_PATH', '').split(os.pathsep)):
            roots.append(Path(folder) / package)
        candidates = [root / rest for root in roots]
    elif url.scheme == 'file':
        candidates = [Path(unquote(url.path))]
    else:
        path = Path(filename)
        candidates = [path if path.is_absolute() or base_dir is None else Path(base_dir) / path]
    return next((str(p) for p in candidates if p.is_file()), None)


def urdf_visuals(source, model, base_dir=None, package_dirs=None):
    """
    Return the visuals of the URDF ``source`` (path or text) for ``model``: a list of Visual.

    Every ``<visual>`` of a link of the model (links above the base are left out), with its
    material's colour (the robot's named materials too; none: its body's colour); meshes are
    resolved by :func:`resolve_mesh` (``base_dir`` defaults to the URDF file's folder). A body
    none of whose links has a visual gets a capsule along each of its :func:`segments`.
    """
    if base_dir is None and not str(source).lstrip().startswith('<'):
        base_dir = Path(str(source)).parent
    robot = parse(source)
    named = {m.name: m for m in robot.materials or ()}
    visuals, drawn = [], set()
    for link in robot.links:
        if link.name not in model.frames:
            continue
        body = model.frames[link.name][0]
        for v in link.visuals or ():
            item = _visual(link.name, v, named, body_colour(body), base_dir, package_dirs)
            if item is not None:
                visuals.append(item)
                drawn.add(body)
    links = {}
    for link, (body, T) in model.frames.items():
        if np.array_equal(T, np.eye(4)):
            links.setdefault(body, link)
    r = max(0.03 * reach(model), 0.005)
    for body, start, end in segments(model):
        if body not in drawn:
            visuals.append(Visual(links[body], along(start, end), 'capsule',
                                  (r, float(np.linalg.norm(end - start))), body_colour(body)))
    return visuals


def _visual(link, v, named, default_rgba, base_dir, package_dirs):
    """Return the :class:`Visual` of urdf_parser_py's visual ``v``, or None (no geometry)."""
    g = v.geometry
    kind = type(g).__name__.lower()
    material = v.material
    if material is not None and material.color is None and material.name in named:
        material = named[material.name]
    rgba = (tuple(float(c) for c in material.color.rgba)
            if material is not None and material.color is not None else default_rgba)
    origin = origin_pose(v.origin)
    if kind == 'box':
        return Visual(link, origin, 'box', tuple(float(s) for s in g.size), rgba)
    if kind == 'cylinder':
        return Visual(link, origin, 'cylinder', (float(g.radius), float(g.length)), rgba)
    if kind == 'sphere':
        return Visual(link, origin, 'sphere', (float(g.radius),), rgba)
    if kind == 'mesh':
        scale = tuple(float(s) for s in g.scale) if g.scale else (1.0, 1.0, 1.0)
        return Visual(link, origin, 'mesh', scale, rgba,
                      resolve_mesh(g.filename, base_dir, package_dirs))
    return None


class Scene:
    """
    The visuals of one model, placed on its bodies; :meth:`poses` puts them in the base frame.

    ``visuals`` is a list of :class:`Visual` whose links are in ``model.frames``.
    """

    def __init__(self, model, visuals):
        for v in visuals:
            if v.link not in model.frames:
                raise ModelError(f'visual on link {v.link!r}, which is not part of model '
                                 f'{model.name!r} (links: {model.link_names})')
            if v.shape not in SHAPES:
                raise ModelError(f'visual shape {v.shape!r} is not one of {SHAPES}')
        self.model = model
        self.visuals = list(visuals)
        self.bodies = np.array([model.frames[v.link][0] for v in visuals], dtype=int)
        self.T_body_visual = np.array([model.frames[v.link][1] @ v.origin for v in visuals]
                                      ).reshape(-1, 4, 4)

    @classmethod
    def from_urdf(cls, source, model, base_dir=None, package_dirs=None):
        """Build the scene of ``model`` from the visuals of URDF ``source`` (urdf_visuals)."""
        return cls(model, urdf_visuals(source, model, base_dir, package_dirs))

    def poses(self, q):
        """Return ``T_base_visual`` (..., V, 4, 4) of every visual at ``q`` (..., n)."""
        return kinematics.frame_poses(self.model, q, self.bodies, self.T_body_visual)

    def points(self, q):
        """Return the joint origins and the tip (..., n + 1, 3) at ``q``, base frame."""
        joints = kinematics.joint_frames(self.model, q)[..., :3, 3]
        tip = kinematics.fk(self.model, q)[..., None, :3, 3]
        return np.concatenate([joints, tip], axis=-2)


def camera_framing(model, q, fov=np.deg2rad(50.0), direction=(1.0, -1.4, 0.9)):
    """
    Place a camera that shows the arm at ``q`` with room for its reach: ``(position, target)``.

    The sphere around the base origin and the arm's points (joint origins, tip, base) of radius
    ``rho`` = the larger of ``0.6 * reach(model)`` and their farthest distance from its
    centre, is seen from along ``direction`` (base frame; default: front right, from above) at
    the distance where it just fits a vertical field of view ``fov`` [rad]: ``rho / sin(fov/2)``.
    Both (3,) in the base frame [m]; z is up.
    """
    scene = Scene(model, [])
    pts = np.vstack([np.zeros(3), scene.points(np.asarray(q, dtype=float))])
    centre = (pts.min(axis=0) + pts.max(axis=0)) / 2
    rho = max(0.6 * reach(model), float(np.linalg.norm(pts - centre, axis=1).max()), 1e-3)
    d = np.asarray(direction, dtype=float)
    position = centre + rho / np.sin(fov / 2) * d / np.linalg.norm(d)
    return position, centre
