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
Dynamics (RNEA, CRBA, ABA, Coriolis matrix): robot_dynamics, Pinocchio, Robotics Toolbox.

Robots: the planar 2R (the two-link arm of Hayes' lecture notes, 2008), the SCARA (RRP), the
PUMA 560 (6-DOF) and the iiwa14 (7-DOF), all bundled. Operations (ours, Pinocchio, Robotics
Toolbox):

- ``inverse_dynamics`` (RNEA): ``pin.rnea``, ``DHRobot.rne``;
- ``mass_matrix`` (CRBA): ``pin.crba`` (upper triangle only), ``DHRobot.inertia``;
- ``forward_dynamics`` (ABA, the default method): ``pin.aba``, ``DHRobot.accel``;
- ``coriolis`` (``coriolis_matrix``, Christoffel form): ``pin.computeCoriolisMatrix``,
  ``DHRobot.coriolis`` (the same matrix, entry by entry).

Pinocchio has no batch API, so its batch is a Python loop over the states; ``rne``,
``inertia``, ``accel`` and ``coriolis`` of Robotics Toolbox take (N, n) arrays (they loop
inside; timed once, on a tenth of the states with ``--quick``). Robotics Toolbox models:
``rtb.models.DH.Puma560`` (the same published parameters as ours) without its motor inertia and
friction, which our model does not have; for the others a ``DHRobot`` with the same DH rows,
masses, centres of mass and inertias. Before timing, the three libraries must agree on the
results.

Targets, shown in the ``target`` column: single-state 6-DOF ``inverse_dynamics`` <= 40 us and
``forward_dynamics`` <= 80 us; every batch operation faster per state than Pinocchio called in
a Python loop.
"""

from common import best_us, check_close, Fixture, N_BATCH, REPO, timing_row
import numpy as np

GROUP = 'dynamics'
ROBOTS = ('planar_2r', 'scara', 'puma560', 'iiwa14')
SIX_DOF = 'puma560'
TARGET_ID_US = 40.0
TARGET_FD_US = 80.0


def rtb_robot(name):
    """Return the Robotics Toolbox model of a bundled robot, dynamics included."""
    import roboticstoolbox as rtb
    if name == 'puma560':
        robot = rtb.models.DH.Puma560().nofriction(coulomb=True, viscous=True)
        for link in robot.links:
            link.Jm = 0.0       # no motor (armature) inertia in our model
        return robot
    if name == 'planar_2r':
        from spatialmath import SE3
        # Hayes' two-link arm; standard DH puts frame i at the end of link i, so the COM is at
        # -lCG_i along x_i. DH moves the arm in its x-y plane, ours in the x-z plane (joint
        # axes -y): the base Rx(pi/2) maps one onto the other, the tool Rx(-pi/2) gives our tip
        links = [rtb.RevoluteDH(a=2.0, alpha=0.0, m=2.0, r=[-1.0, 0.0, 0.0],
                                I=np.diag([1.0, 2.0, 3.0]), Jm=0.0, G=1.0),
                 rtb.RevoluteDH(a=2.0, alpha=0.0, m=1.0, r=[-1.0, 0.0, 0.0],
                                I=np.diag([3.0, 2.0, 1.0]), Jm=0.0, G=1.0)]
        return rtb.DHRobot(links, name='planar_2r', base=SE3.Rx(np.pi / 2),
                           tool=SE3.Rx(-np.pi / 2), gravity=[0.0, 0.0, -9.81])
    if name in ('scara', 'iiwa14'):
        return rtb_from_dh_yaml(REPO / 'config' / f'{name}.dh.yaml')
    raise KeyError(name)


def rtb_from_dh_yaml(path):
    """Build a Robotics Toolbox ``DHRobot`` from one of our standard-DH YAML files."""
    import roboticstoolbox as rtb
    import yaml
    doc = yaml.safe_load(path.read_text())
    assert doc.get('convention', 'standard') == 'standard', path
    links = []
    for row in doc['joints']:
        ixx, ixy, ixz, iyy, iyz, izz = row.get('inertia', [0.0] * 6)
        common = {'a': row['a'], 'alpha': row['alpha'], 'm': row.get('mass', 0.0),
                  'r': row.get('com', [0.0, 0.0, 0.0]), 'Jm': 0.0, 'G': 1.0,
                  'I': np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])}
        if row['type'] == 'revolute':
            links.append(rtb.RevoluteDH(d=row['d'], offset=row['theta'], **common))
        else:
            links.append(rtb.PrismaticDH(theta=row['theta'], offset=row['d'], **common))
    return rtb.DHRobot(links, name=doc.get('name', path.stem),
                       gravity=doc.get('gravity', [0.0, 0.0, -9.81]))


class PinFunctions:
    """Pinocchio's rnea, crba, aba and Coriolis matrix on a fixture's states (converted once)."""

    def __init__(self, fx):
        self.pin, self.model, self.data = fx.pin, fx.pin_model, fx.pin_data
        self.model.gravity.linear = np.array(fx.model.gravity)
        self.idx = fx.pin_idx_v
        self.Q, self.Qd = fx.pin_q(fx.Q), fx.pin_v(fx.Qd)
        self.Qdd, self.Tau = fx.pin_v(fx.Qdd), fx.pin_v(fx.Tau)

    def rnea(self, k=0):
        return self.pin.rnea(self.model, self.data, self.Q[k], self.Qd[k], self.Qdd[k])

    def crba(self, k=0):
        return self.pin.crba(self.model, self.data, self.Q[k])

    def aba(self, k=0):
        return self.pin.aba(self.model, self.data, self.Q[k], self.Qd[k], self.Tau[k])

    def coriolis(self, k=0):
        return self.pin.computeCoriolisMatrix(self.model, self.data, self.Q[k], self.Qd[k])

    def loop(self, fn):
        """Return a function that calls ``fn`` on every state (Pinocchio's batch)."""
        pin, model, data = self.pin, self.model, self.data
        if fn == 'rnea':
            def run():
                for q, v, a in zip(self.Q, self.Qd, self.Qdd):
                    pin.rnea(model, data, q, v, a)
        elif fn == 'crba':
            def run():
                for q in self.Q:
                    pin.crba(model, data, q)
        elif fn == 'aba':
            def run():
                for q, v, t in zip(self.Q, self.Qd, self.Tau):
                    pin.aba(model, data, q, v, t)
        else:
            def run():
                for q, v in zip(self.Q, self.Qd):
                    pin.computeCoriolisMatrix(model, data, q, v)
        return run

    def in_our_order(self, x):
        x = np.asarray(x)
        if x.ndim == 2:
            x = np.triu(x) + np.triu(x, 1).T
            return x[np.ix_(self.idx, self.idx)]
        return x[self.idx]


def check_agreement(fx, robot, pf):
    """Compare the four operations of the three libraries on a few states (raises if not)."""
    model = fx.model
    n_check = 5
    Q, Qd, Qdd, Tau = fx.Q[:n_check], fx.Qd[:n_check], fx.Qdd[:n_check], fx.Tau[:n_check]
    tau, M, qdd, C = (model.inverse_dynamics(Q, Qd, Qdd), model.mass_matrix(Q),
                      model.forward_dynamics(Q, Qd, Tau), model.coriolis_matrix(Q, Qd))
    for k in range(n_check):
        scale = 1.0 + np.abs(qdd[k]).max()
        check_close(f'{fx.name} rnea vs pinocchio', tau[k], pf.in_our_order(pf.rnea(k)))
        check_close(f'{fx.name} crba vs pinocchio', M[k], pf.in_our_order(pf.crba(k)))
        check_close(f'{fx.name} aba vs pinocchio', qdd[k] / scale,
                    pf.in_our_order(pf.aba(k)) / scale)
        check_close(f'{fx.name} coriolis vs pinocchio', C[k],
                    pf.coriolis(k)[np.ix_(pf.idx, pf.idx)])
        check_close(f'{fx.name} rne vs rtb', tau[k], robot.rne(Q[k], Qd[k], Qdd[k]))
        check_close(f'{fx.name} inertia vs rtb', M[k], robot.inertia(Q[k]))
        # rtb's accel inverts M explicitly: agreement to ~1e-9 of |qdd| on the PUMA
        check_close(f'{fx.name} accel vs rtb', qdd[k] / scale,
                    robot.accel(Q[k], Qd[k], Tau[k]) / scale, tol=1e-7)
        check_close(f'{fx.name} coriolis vs rtb', C[k], robot.coriolis(Q[k], Qd[k]))
    check_close(f'{fx.name} batch rne vs rtb', tau, robot.rne(Q, Qd, Qdd))


def target(name, operation, mode, ours, pin_us):
    """Return the target of a row with its status, or None."""
    if mode == 'batch':
        return '< pinocchio loop: ' + ('met' if ours < pin_us else 'MISSED')
    if name == SIX_DOF and operation == 'inverse_dynamics':
        return f'<= {TARGET_ID_US:g} us: ' + ('met' if ours <= TARGET_ID_US else 'MISSED')
    if name == SIX_DOF and operation == 'forward_dynamics':
        return f'<= {TARGET_FD_US:g} us: ' + ('met' if ours <= TARGET_FD_US else 'MISSED')
    return None


def bench_robot(name, quick=False):
    """Return the timing rows of one robot."""
    repeat = 1 if quick else 7
    fx = Fixture(name)
    model, robot, pf = fx.model, rtb_robot(name), PinFunctions(fx)
    check_agreement(fx, robot, pf)           # also compiles (or loads) the numba kernels
    q, qd, qdd, tau = fx.q, fx.qd, fx.qdd, fx.tau
    Q, Qd, Qdd, Tau = fx.Q, fx.Qd, fx.Qdd, fx.Tau
    # RTB loops over a batch in Python (~0.1 ms a state): a tenth of the batch when quick
    n_rtb = N_BATCH // 10 if quick else N_BATCH
    Qr, Qdr, Qddr, Taur = Q[:n_rtb], Qd[:n_rtb], Qdd[:n_rtb], Tau[:n_rtb]
    # warm up every call that is timed (numba specializations for one state and a batch)
    model.inverse_dynamics(Q, Qd, Qdd)
    model.mass_matrix(Q)
    model.forward_dynamics(Q, Qd, Tau)
    model.coriolis_matrix(Q, Qd)

    single = {'repeat': repeat}
    batch = {'per_call': N_BATCH, 'repeat': max(1, repeat // 2),
             'budget_s': 1.0 if quick else 4.0}
    rtb_batch = {'per_call': n_rtb, 'repeat': 1, 'budget_s': 1.0, 'min_time_s': 0.0}
    cases = [
        ('inverse_dynamics',
         lambda: model.inverse_dynamics(q, qd, qdd), pf.rnea,
         lambda: robot.rne(q, qd, qdd),
         lambda: model.inverse_dynamics(Q, Qd, Qdd), pf.loop('rnea'),
         lambda: robot.rne(Qr, Qdr, Qddr)),
        ('mass_matrix',
         lambda: model.mass_matrix(q), pf.crba,
         lambda: robot.inertia(q),
         lambda: model.mass_matrix(Q), pf.loop('crba'),
         lambda: robot.inertia(Qr)),
        ('forward_dynamics',
         lambda: model.forward_dynamics(q, qd, tau), pf.aba,
         lambda: robot.accel(q, qd, tau),
         lambda: model.forward_dynamics(Q, Qd, Tau), pf.loop('aba'),
         lambda: robot.accel(Qr, Qdr, Taur)),
        ('coriolis',
         lambda: model.coriolis_matrix(q, qd), pf.coriolis,
         lambda: robot.coriolis(q, qd),
         lambda: model.coriolis_matrix(Q, Qd), pf.loop('coriolis'),
         lambda: robot.coriolis(Qr, Qdr)),
    ]
    rows = []
    for operation, ours1, pin1, rtb1, oursN, pinN, rtbN in cases:
        for mode, timings in (
                ('single', (best_us(ours1, **single), best_us(pin1, **single),
                            best_us(rtb1, **single))),
                ('batch', (best_us(oursN, **batch), best_us(pinN, **batch),
                           best_us(rtbN, **rtb_batch)))):
            row = timing_row(GROUP, name, operation, mode, *timings)
            row['target'] = target(name, operation, mode, timings[0], timings[1])
            rows.append(row)
    return rows


def run(quick=False):
    """Return the rows of this benchmark (see common.py for the row format)."""
    rows = []
    for name in ROBOTS:
        rows.extend(bench_robot(name, quick=quick))
    return rows
