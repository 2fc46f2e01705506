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
Inverse-kinematics benchmark: robot_dynamics against TRAC-IK and Robotics Toolbox's ``ik_LM``.

Arms: the bundled 6-DOF PUMA 560 and 7-DOF KUKA iiwa 14, and two arms with spherical wrists from
real URDFs of the ``example-robot-data`` package: the Kinova Jaco 2 (j2s6s200, base to end
effector) and the left arm of Talos (``arm_left_1_link`` to ``arm_left_7_link``: joints 2-7).
For each arm, ``n_poses`` reachable targets are drawn as fk of joint positions uniform inside the
limits (``[-pi, pi]`` for continuous joints; fixed seed). Every solver gets the same targets and
the same verdict: a solve succeeds when fk (ours) of the returned q is within 1e-6 m and
1e-6 rad of the target, q is inside the joint limits, and the call returned within the 5 ms
budget. Times are wall-clock per call, Python overhead included, in milliseconds.

Solvers:

- ``ours closed form``: ``model.ik(T, method='analytic')`` where the arm has a closed form (the
  path ``method='auto'`` takes): every branch computed and verified, the one nearest the seed.
- ``ours numeric``: ``model.ik(T, method='numeric', timeout=0.005)``; both start from the default
  seed, the middle of the joint ranges.
- ``trac-ik``: TRAC-IK (Beeson and Ames 2015; the ``pytracik`` bindings, KDL inside), ``Speed``
  mode, 5 ms timeout, ``eps = 1e-6 / sqrt(3)`` (per component, so that its success implies
  ours), seeded with the same middle of the ranges, on the URDF
  that our model was loaded from (``model.to_urdf()`` for the bundled arms) without its
  ``<safety_controller>`` tags (pytracik 0.0.3 reads their soft limits as 0). The target is
  handed over as position and quaternion, converted before the clock starts.
- ``rtb ik_LM`` (bundled arms, built from their DH tables): C++ Levenberg-Marquardt of Robotics
  Toolbox, its defaults (random start, 30 iterations x 100 searches), its residual tolerance set
  so that its own success implies ours; checked against our fk before timing.

Each row also gives ``median_vs_tracik`` and ``p99_vs_tracik``: the solver's median and p99 time
over TRAC-IK's on the same arm (below 1: faster than TRAC-IK).

Run ``python bench/bench_ik.py --poses 10000`` (prints the table); :func:`run` returns the rows
for ``bench/run.py``.
"""

import argparse
import importlib.metadata
import re
import time

import numpy as np
from robot_dynamics import ik, RobotModel
from robot_dynamics.robots import share_directory
from robot_dynamics.spatial import matrix_to_quaternion, pose_error
import yaml

#: Arms: a bundled robot name, or ``(package file, base link, tip link)`` from example-robot-data.
ARMS = {
    'puma560': 'puma560',
    'iiwa14': 'iiwa14',
    'jaco2': ('kinova_description/robots/kinova.urdf', 'j2s6s200_link_base',
              'j2s6s200_end_effector'),
    'talos_arm': ('talos_data/robots/talos_left_arm.urdf', 'arm_left_1_link',
                  'arm_left_7_link'),
}
BUDGET = 0.005           # s per solve
TOL = 1e-6               # m and rad
#: rtb's tolerance is on E = e^T e / 2; E < TOL^2 / 2 implies |dp| < TOL and |dtheta| < TOL.
RTB_TOL = 0.5 * TOL ** 2
#: TRAC-IK's tolerance bounds each pose-error component: |e_i| <= TOL / sqrt(3) for the three
#: position (rotation) rows implies a norm <= TOL, so its own success implies ours.
TRACIK_EPS = TOL / np.sqrt(3.0)
#: our fk and the rtb DHRobot built from the same table must agree to this [m, rad].
FK_AGREEMENT = 1e-9
#: targets per robot of a quick (smoke) run
QUICK_POSES = 300


def example_robot_data(path):
    """Return the path of a file of the example-robot-data package (its ``robots`` folder)."""
    return importlib.metadata.distribution('example-robot-data').locate_file(
        f'cmeel.prefix/share/example-robot-data/robots/{path}')


def load_arm(name):
    """Return ``(model, urdf text)`` of an arm of :data:`ARMS`."""
    source = ARMS[name]
    if isinstance(source, str):
        model = RobotModel.load(source)
        return model, model.to_urdf()
    path, base, tip = source
    urdf = example_robot_data(path).read_text()
    return RobotModel.from_urdf(urdf, base_link=base, tip_link=tip), urdf


def random_targets(model, n_poses, seed):
    """Return joint positions uniform in the limits (n_poses, n) and their tip poses."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    q = rng.uniform(lo, hi, (n_poses, model.dof))
    return q, model.fk(q)


def verified(model, q, target):
    """Check a solution independently: fk within TOL of the target and q inside the limits."""
    if q is None:
        return False
    e = pose_error(model.fk(q), target)
    return bool(np.linalg.norm(e[:3]) <= TOL and np.linalg.norm(e[3:]) <= TOL
                and np.all(q >= model.lower) and np.all(q <= model.upper))


def time_solver(model, targets, solve):
    """Time ``solve(i) -> q or None`` on every target i; return (successes (N,), times [s])."""
    ok = np.zeros(len(targets), dtype=bool)
    times = np.zeros(len(targets))
    for i, target in enumerate(targets):
        t0 = time.perf_counter()
        q = solve(i)
        times[i] = time.perf_counter() - t0
        ok[i] = times[i] <= BUDGET and verified(model, q, target)
    return ok, times


def rtb_robot(name, model):
    """Build a Robotics Toolbox DHRobot from the DH table of ``name``, or None without one."""
    try:
        import roboticstoolbox as rtb
    except ImportError:
        return None
    path = share_directory() / 'config' / f'{name}.dh.yaml'
    if not path.exists():
        return None
    with open(path) as f:
        doc = yaml.safe_load(f)
    if doc.get('convention', 'standard') != 'standard' or doc.get('base') or doc.get('tool'):
        raise NotImplementedError(f'{path}: only plain standard DH tables are converted')
    links = []
    for row in doc['joints']:
        if row.get('type', 'revolute') != 'revolute':
            raise NotImplementedError(f'{path}: only revolute rows are converted')
        links.append(rtb.RevoluteDH(d=row['d'], a=row['a'], alpha=row['alpha'],
                                    offset=row.get('theta', 0.0),
                                    qlim=[row['lower'], row['upper']]))
    robot = rtb.DHRobot(links, name=name)
    q, T = random_targets(model, 20, seed=1)
    gap = max(np.abs(robot.fkine(qi).A - Ti).max() for qi, Ti in zip(q, T))
    if gap > FK_AGREEMENT:
        raise RuntimeError(f'{name}: rtb DHRobot and robot_dynamics fk differ by {gap:.3g}')
    return robot


def trac_ik_solver(model, urdf, targets, seed):
    """
    Return ``solve(i) -> q or None`` running TRAC-IK on target i, or None without pytracik.

    The URDF loses its ``<safety_controller>`` tags (pytracik 0.0.3 takes their soft limits
    as the joint limits, 0); the targets are converted to position and quaternion up front.
    """
    try:
        import pytracik
    except ImportError:
        return None
    urdf = re.sub(r'<safety_controller[^>]*/>', '', urdf)
    solver = pytracik.TRAC_IK(model.base_link, model.tip_link, urdf, BUDGET, TRACIK_EPS,
                              pytracik.SolveType.Speed)
    if pytracik.get_num_joints(solver) != model.dof:
        raise RuntimeError(f'TRAC-IK chain {model.base_link} -> {model.tip_link} has '
                           f'{pytracik.get_num_joints(solver)} joints, ours {model.dof}')
    quat = matrix_to_quaternion(targets[:, :3, :3])       # (x, y, z, w)
    args = [(*p, *qt) for p, qt in zip(targets[:, :3, 3].tolist(), quat.tolist())]

    def solve(i):
        r = pytracik.ik(solver, seed, *args[i])
        return r[1:] if r[0] >= 0 else None
    return solve


def _row(robot, solver, ok, times):
    return {'robot': robot, 'solver': solver, 'poses': len(ok),
            'success': f'{100 * ok.mean():.2f}%', 'success_rate': float(ok.mean()),
            'median_ms': float(np.median(times) * 1e3),
            'p99_ms': float(np.percentile(times, 99) * 1e3)}


def _with_tracik_ratios(rows):
    """Add ``median_vs_tracik`` and ``p99_vs_tracik`` to the rows of arms TRAC-IK ran on."""
    peer = {r['robot']: r for r in rows if r['solver'] == 'trac-ik'}
    for r in rows:
        ref = peer.get(r['robot'])
        r['median_vs_tracik'] = r['median_ms'] / ref['median_ms'] if ref else None
        r['p99_vs_tracik'] = r['p99_ms'] / ref['p99_ms'] if ref else None
    return rows


def run(n_poses=10000, seed=0, robots=tuple(ARMS), verbose=False, quick=False):
    """
    Benchmark our closed-form and numeric IK against TRAC-IK and rtb on random reachable poses.

    Parameters
    ----------
    n_poses : int, optional
        Targets per robot.
    seed : int, optional
        Seed of the random joint positions.
    robots : sequence of str, optional
        Names in :data:`ARMS`.
    verbose : bool, optional
        Print the table when done.
    quick : bool, optional
        A smoke run: at most ``QUICK_POSES`` targets per robot.

    Returns
    -------
    list of dict
        One row per robot and solver: ``robot``, ``solver``, ``poses``, ``success`` (text),
        ``success_rate`` (0..1), ``median_ms``, ``p99_ms``, ``median_vs_tracik``,
        ``p99_vs_tracik``.

    """
    if quick:
        n_poses = min(n_poses, QUICK_POSES)
    rows = []
    for name in robots:
        model, urdf = load_arm(name)
        _, targets = random_targets(model, n_poses, seed)
        middle = ik.default_seed(model)
        model.ik(targets[0], method='numeric')          # compile / load the numba cache
        if ik.closed_form(model) is not None:
            ok, times = time_solver(model, targets, lambda i: model.ik(
                targets[i], method='analytic', tol_position=TOL, tol_orientation=TOL).q)
            rows.append(_row(name, 'ours closed form', ok, times))
        ok, times = time_solver(model, targets, lambda i: model.ik(
            targets[i], method='numeric', timeout=BUDGET, tol_position=TOL,
            tol_orientation=TOL).q)
        rows.append(_row(name, 'ours numeric', ok, times))
        trac = trac_ik_solver(model, urdf, targets, middle)
        if trac is not None:
            trac(0)
            ok, times = time_solver(model, targets, trac)
            rows.append(_row(name, 'trac-ik', ok, times))
        robot = rtb_robot(name, model) if isinstance(ARMS[name], str) else None
        if robot is not None:
            robot.ik_LM(targets[0], tol=RTB_TOL)
            ok, times = time_solver(model, targets,
                                    lambda i: robot.ik_LM(targets[i], tol=RTB_TOL).q)
            rows.append(_row(name, 'rtb ik_LM', ok, times))
    rows = _with_tracik_ratios(rows)
    if verbose:
        print(format_table(rows, n_poses))
    return rows


def format_table(rows, n_poses=None):
    """Format the rows as a text table, with each solver's time over TRAC-IK's."""
    head = f'IK on {n_poses} random reachable poses per robot' if n_poses else 'IK'

    def ratio(x):
        return '-' if x is None else f'{x:.2f}'
    lines = [f'{head} (success: fk within {TOL:g} m / {TOL:g} rad, in limits, '
             f'within {BUDGET * 1e3:g} ms; x trac-ik: time over that of TRAC-IK)',
             f'{"robot":10s} {"solver":16s} {"success":>9s} {"median ms":>10s} {"p99 ms":>9s} '
             f'{"median x trac-ik":>17s} {"p99 x trac-ik":>14s}']
    for r in rows:
        lines.append(f'{r["robot"]:10s} {r["solver"]:16s} {100 * r["success_rate"]:8.2f}% '
                     f'{r["median_ms"]:10.3f} {r["p99_ms"]:9.3f} '
                     f'{ratio(r["median_vs_tracik"]):>17s} {ratio(r["p99_vs_tracik"]):>14s}')
    return '\n'.join(lines)


def main(argv=None):
    """Command line: ``bench_ik.py [--poses N] [--seed S] [--robots NAME ...]``."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--poses', type=int, default=10000, help='random targets per robot')
    parser.add_argument('--seed', type=int, default=0, help='seed of the random targets')
    parser.add_argument('--robots', nargs='+', default=list(ARMS), choices=list(ARMS),
                        help='arms')
    args = parser.parse_args(argv)
    run(args.poses, args.seed, args.robots, verbose=True)


if __name__ == '__main__':
    main()
