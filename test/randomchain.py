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
Random serial chains as URDF text, and the same chain in Pinocchio, for property tests.

:func:`random_urdf` writes a chain of ``n_joints`` moving joints (revolute, continuous,
prismatic) with fixed joints in between. Everything that the URDF parser must honour is random:
joint origins (xyz and rpy), unit axes in any direction, masses, COM offsets, inertial frames
with their own rpy, full positive-definite inertia tensors that satisfy the triangle inequality,
limits and dynamics damping/friction. Some fixed links carry an inertial and some do not; a
link without inertial is always rigidly attached (through fixed joints) to one that has one, as
the library requires. Link names are ``base_link``, ``link_1``, ``link_2``, ... in chain order,
joint names ``joint_1``, ... (fixed ones ``fixed_<k>``); the last link is the unique leaf.

:class:`PinChain` builds the same URDF with ``pinocchio.buildModelFromXML`` and evaluates poses
and Jacobians by link name, with ``q`` in robot_dynamics' layout (one number per joint; a
continuous joint is ``(cos, sin)`` in Pinocchio).

Used by the kinematics tests and reused by the dynamics tests: keep the signature stable.
"""

import dataclasses

import numpy as np

MOVING_TYPES = ('revolute', 'continuous', 'prismatic')


def random_rotation(rng):
    """Return a uniformly distributed random rotation matrix (3, 3)."""
    q = rng.normal(size=4)
    x, y, z, w = q / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def random_unit_vector(rng):
    """Return a random unit vector (3,) in any direction (not only x, y or z)."""
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_inertia(rng, mass=1.0, size=0.2):
    """
    Return a random inertia tensor (3, 3) about the COM: symmetric, positive definite.

    Built from principal moments ``(sy + sz, sx + sz, sx + sy) * mass`` with random second
    moments ``s > 0`` (so the triangle inequality holds strictly), turned by a random rotation.
    """
    s = rng.uniform(0.05, 1.0, size=3) * size ** 2
    moments = mass * np.array([s[1] + s[2], s[0] + s[2], s[0] + s[1]])
    R = random_rotation(rng)
    inertia = R @ np.diag(moments) @ R.T
    return 0.5 * (inertia + inertia.T)


def _fmt(values):
    return ' '.join(repr(float(v)) for v in np.ravel(values))


def _origin(xyz, rpy):
    return f'<origin xyz="{_fmt(xyz)}" rpy="{_fmt(rpy)}"/>'


def _random_rpy(rng):
    # pitch kept off +-pi/2 so the rpy stays far from gimbal lock (any rotation is still reachable)
    return np.array([rng.uniform(-np.pi, np.pi), rng.uniform(-1.4, 1.4),
                     rng.uniform(-np.pi, np.pi)])


def _inertial(rng):
    mass = rng.uniform(0.2, 5.0)
    inertia = random_inertia(rng, mass)
    names = (('ixx', 0, 0), ('ixy', 0, 1), ('ixz', 0, 2), ('iyy', 1, 1), ('iyz', 1, 2),
             ('izz', 2, 2))
    attrs = ' '.join(f'{k}="{float(inertia[a, b])!r}"' for k, a, b in names)
    return ('    <inertial>\n'
            f'      {_origin(rng.uniform(-0.2, 0.2, 3), _random_rpy(rng))}\n'
            f'      <mass value="{mass!r}"/>\n'
            f'      <inertia {attrs}/>\n'
            '    </inertial>\n')


@dataclasses.dataclass
class ChainSpec:
    """What :func:`random_chain` generated, for tests that need more than the XML."""

    xml: str
    joint_names: list   # moving joints, in chain order
    joint_types: list   # 'revolute', 'continuous' or 'prismatic'
    link_names: list    # every link, base first, tip last
    massless_links: list  # links written without <inertial>

    @property
    def dof(self):
        """Return the number of moving joints."""
        return len(self.joint_names)


def random_chain(rng, n_joints, prismatic_prob=0.3, fixed_prob=0.2, continuous_prob=0.1,
                 massless_prob=0.3, name='random_chain'):
    """
    Generate a random serial chain; see :func:`random_urdf` (this also returns the layout).

    ``massless_prob`` is the chance that a link is written without ``<inertial>`` where that is
    allowed: a fixed link (always attached to a link with one), or a moving link whose next joint
    is made fixed and whose next link then gets an inertial.
    """
    links = ['base_link']
    parts = [f'<?xml version="1.0"?>\n<robot name="{name}">\n']
    base_inertial = _inertial(rng) if rng.uniform() < 0.5 else ''
    parts.append(f'  <link name="base_link">\n{base_inertial}  </link>\n')
    joint_names, joint_types, massless = [], [], []
    n_fixed = 0
    # per moving joint: optional fixed joints before it; then optional fixed joints at the end
    plan = []
    for _ in range(n_joints):
        while rng.uniform() < fixed_prob:
            plan.append('fixed')
        u = rng.uniform()
        if u < prismatic_prob:
            plan.append('prismatic')
        elif u < prismatic_prob + continuous_prob:
            plan.append('continuous')
        else:
            plan.append('revolute')
    while rng.uniform() < fixed_prob:
        plan.append('fixed')
    # a link with no <inertial> is only allowed with a massive link in its rigid group: the
    # group of a moving link is that link plus the fixed links that follow it
    needs_mass = False   # the current rigid group has no inertial yet
    for k, kind in enumerate(plan):
        nxt = plan[k + 1] if k + 1 < len(plan) else None
        parent = links[-1]
        child = f'link_{len(links)}'
        links.append(child)
        if kind == 'fixed':
            n_fixed += 1
            jname = f'fixed_{n_fixed}'
        else:
            jname = f'joint_{len(joint_names) + 1}'
            joint_names.append(jname)
            joint_types.append(kind)
        xyz = rng.uniform(-0.5, 0.5, 3)
        joint = [f'  <joint name="{jname}" type="{kind}">\n',
                 f'    <parent link="{parent}"/>\n    <child link="{child}"/>\n',
                 f'    {_origin(xyz, _random_rpy(rng))}\n']
        if kind != 'fixed':
            joint.append(f'    <axis xyz="{_fmt(random_unit_vector(rng))}"/>\n')
            effort, velocity = rng.uniform(10.0, 200.0), rng.uniform(0.5, 5.0)
            if kind == 'continuous':
                joint.append(f'    <limit effort="{effort!r}" velocity="{velocity!r}"/>\n')
            else:
                if kind == 'prismatic':
                    lower, upper = rng.uniform(-0.6, -0.1), rng.uniform(0.1, 0.6)
                else:
                    lower, upper = rng.uniform(-3.0, -0.5), rng.uniform(0.5, 3.0)
                joint.append(f'    <limit lower="{lower!r}" upper="{upper!r}" '
                             f'effort="{effort!r}" velocity="{velocity!r}"/>\n')
            joint.append(f'    <dynamics damping="{rng.uniform(0.0, 2.0)!r}" '
                         f'friction="{rng.uniform(0.0, 1.0)!r}"/>\n')
        joint.append('  </joint>\n')
        parts.extend(joint)
        if kind != 'fixed':
            # a moving link may go without inertial only if a fixed link with one follows
            skip = nxt == 'fixed' and rng.uniform() < massless_prob
            needs_mass = skip
        else:
            # a fixed link must carry the mass if its group has none yet; otherwise optional
            skip = not needs_mass and rng.uniform() < massless_prob
            needs_mass = needs_mass and skip
        if skip:
            massless.append(child)
            parts.append(f'  <link name="{child}"/>\n')
        else:
            parts.append(f'  <link name="{child}">\n{_inertial(rng)}  </link>\n')
    parts.append('</robot>\n')
    return ChainSpec(xml=''.join(parts), joint_names=joint_names, joint_types=joint_types,
                     link_names=links, massless_links=massless)


def random_urdf(rng, n_joints, prismatic_prob=0.3, fixed_prob=0.2, continuous_prob=0.1):
    """
    Return the URDF text of a random serial chain with ``n_joints`` moving joints.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (seeded by the caller for reproducible tests).
    n_joints : int
        Number of moving joints (the model's dof).
    prismatic_prob, continuous_prob : float
        Chance that a moving joint is prismatic, or continuous; otherwise revolute with limits.
    fixed_prob : float
        Chance, repeated, of a fixed joint before each moving joint and after the last one.

    Returns
    -------
    str
        URDF XML. The root is ``base_link`` and the last link is the unique leaf (the tip).

    """
    return random_chain(rng, n_joints, prismatic_prob=prismatic_prob, fixed_prob=fixed_prob,
                        continuous_prob=continuous_prob).xml


def random_q(rng, model, shape=()):
    """Random joint positions (shape + (dof,)) inside finite limits, else in [-pi, pi]."""
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    return rng.uniform(lo, hi, size=tuple(shape) + (model.dof,))


def random_models(count, seed=0, min_joints=1, max_joints=8, **options):
    """
    Return ``count`` reproducible random chains as ``(URDF text, RobotModel)`` pairs.

    The number of moving joints is drawn from ``min_joints..max_joints``; ``options`` go to
    :func:`random_urdf`.
    """
    from robot_dynamics import RobotModel
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        xml = random_urdf(rng, int(rng.integers(min_joints, max_joints + 1)), **options)
        out.append((xml, RobotModel.from_urdf(xml)))
    return out


class PinChain:
    """
    A URDF built in Pinocchio, evaluated by link name with robot_dynamics' ``q`` layout.

    Pinocchio's tree (without a root joint) must be the serial chain of the robot_dynamics model
    it is compared with; joints are matched by name, so joint order does not matter.
    """

    def __init__(self, xml, joint_names):
        import pinocchio as pin
        self.pin = pin
        self.model = pin.buildModelFromXML(xml)
        self.data = self.model.createData()
        self.joint_names = list(joint_names)
        ids = [self.model.getJointId(name) for name in self.joint_names]
        missing = [n for n, i in zip(self.joint_names, ids) if i >= self.model.njoints]
        if missing:
            raise KeyError(f'joints {missing} not in the Pinocchio model')
        joints = [self.model.joints[i] for i in ids]
        self.idx_q = [j.idx_q for j in joints]
        self.idx_v = [j.idx_v for j in joints]
        self.unbounded = [j.nq == 2 for j in joints]   # continuous: (cos, sin)
        if self.model.nv != len(self.joint_names):
            raise ValueError(f'Pinocchio model has nv = {self.model.nv}, expected '
                             f'{len(self.joint_names)}')

    def frame_id(self, link):
        """Pinocchio frame id of the link (BODY frame) named ``link``."""
        fid = self.model.getFrameId(link, self.pin.BODY)
        if fid >= self.model.nframes:
            raise KeyError(f'link {link!r} is not a BODY frame of the Pinocchio model')
        return fid

    def q(self, q):
        """Convert one robot_dynamics state (dof,) to Pinocchio's configuration (nq,)."""
        out = self.pin.neutral(self.model)
        for value, iq, unbounded in zip(q, self.idx_q, self.unbounded):
            if unbounded:
                out[iq:iq + 2] = (np.cos(value), np.sin(value))
            else:
                out[iq] = value
        return out

    def fk(self, q, link):
        """Pose (4, 4) of ``link`` in the world (= base) frame."""
        pin = self.pin
        pin.forwardKinematics(self.model, self.data, self.q(q))
        fid = self.frame_id(link)
        pin.updateFramePlacement(self.model, self.data, fid)
        return self.data.oMf[fid].homogeneous.copy()

    def jacobian(self, q, link):
        """Frame Jacobian (6, dof), LOCAL_WORLD_ALIGNED, columns in robot_dynamics' order."""
        pin = self.pin
        fid = self.frame_id(link)
        J = pin.computeFrameJacobian(self.model, self.data, self.q(q), fid,
                                     pin.LOCAL_WORLD_ALIGNED)
        # eigenpy returns a (6, 1) matrix as a vector (6,)
        return np.reshape(J, (6, self.model.nv))[:, self.idx_v].copy()


class PinDynamics:
    """Pinocchio's dynamics algorithms on the same URDF, in robot_dynamics' joint layout."""

    def __init__(self, model, xml, gravity=None):
        self.chain = PinChain(xml, model.joint_names)
        self.pin, self.model, self.data = self.chain.pin, self.chain.model, self.chain.data
        self.model.gravity.linear = np.array(model.gravity if gravity is None else gravity)
        self.iv = np.array(self.chain.idx_v)

    def v(self, x):
        """Return joint-space values (n,) in Pinocchio's velocity layout."""
        out = np.zeros(self.model.nv)
        out[self.iv] = x
        return out

    def rnea(self, q, qd, qdd):
        pin, q = self.pin, self.chain.q(q)
        return pin.rnea(self.model, self.data, q, self.v(qd), self.v(qdd))[self.iv]

    def crba(self, q):
        M = np.array(self.pin.crba(self.model, self.data, self.chain.q(q)))
        M = np.triu(M) + np.triu(M, 1).T     # Pinocchio fills the upper triangle only
        return M[np.ix_(self.iv, self.iv)]

    def gravity(self, q):
        return self.pin.computeGeneralizedGravity(self.model, self.data, self.chain.q(q))[self.iv]

    def aba(self, q, qd, tau):
        pin, q = self.pin, self.chain.q(q)
        return pin.aba(self.model, self.data, q, self.v(qd), self.v(tau))[self.iv]

    def coriolis(self, q, qd):
        pin, q = self.pin, self.chain.q(q)
        C = np.array(pin.computeCoriolisMatrix(self.model, self.data, q, self.v(qd)))
        return C[np.ix_(self.iv, self.iv)]

    def regressor(self, q, qd, qdd):
        pin, q = self.pin, self.chain.q(q)
        Y = pin.computeJointTorqueRegressor(self.model, self.data, q, self.v(qd), self.v(qdd))
        # eigenpy returns a single-row matrix as a vector
        Y = np.reshape(Y, (self.model.nv, -1))[self.iv]
        # columns come per Pinocchio joint (1..njoints-1): reorder to our joints
        joints = [self.model.getJointId(name) for name in self.chain.joint_names]
        return np.concatenate([Y[:, 10 * (j - 1):10 * j] for j in joints], axis=1)

    def parameters(self):
        return np.concatenate([
            self.model.inertias[self.model.getJointId(name)].toDynamicParameters()
            for name in self.chain.joint_names])
