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
Inverse-kinematics benchmark: robot_dynamics against Robotics Toolbox's ``ik_LM``.

For each arm (the 6-DOF PUMA 560 and the 7-DOF KUKA iiwa 14), ``n_poses`` reachable targets are
drawn as fk of joint positions uniform inside the limits (fixed seed). Every solver gets the
same targets and the same verdict: a solve succeeds when fk of the returned q is within
1e-6 m and 1e-6 rad of the target, q is inside the joint limits, and the call returned within
the 5 ms budget. Times are wall-clock per call, Python overhead included, in milliseconds.

Solvers: ``ours numeric`` (``model.ik(T, method='numeric', timeout=0.005)``, no seed: starts
at the middle of the joint ranges), ``rtb ik_LM`` (C++ Levenberg-Marquardt of Robotics Toolbox,
its defaults: random start, 30 iterations x 100 searches, Chan damping; its residual tolerance
set so that its own success implies ours), and ``ours analytic`` where the arm has a closed form.
The Robotics Toolbox robot is a ``DHRobot`` built from the same DH table (``config/``), checked
against our fk before timing.

Run ``python bench/bench_ik.py --poses 10000`` (prints the table and the ratios ours/rtb);
:func:`run` returns the rows for ``bench/run.py``.
"""

import argparse
import time

import numpy as np
from robot_dynamics import RobotModel
from robot_dynamics.robots import share_directory
from robot_dynamics.spatial import pose_error
import yaml

ROBOTS = ('puma560', 'iiwa14')
BUDGET = 0.005           # s per solve
TOL = 1e-6               # m and rad
#: rtb's tolerance is on E = e^T e / 2; E < TOL^2 / 2 implies |dp| < TOL and |dtheta| < TOL.
RTB_TOL = 0.5 * TOL ** 2
#: our fk and the rtb DHRobot built from the same table must agree to this [m, rad].
FK_AGREEMENT = 1e-9
#: targets per robot of a quick (smoke) run
QUICK_POSES = 300


def random_targets(model, n_poses, seed):
    """Return joint positions uniform in the limits (n_poses, n) and their tip poses."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(model.lower, model.upper, (n_poses, model.dof))
    return q, model.fk(q)


def verified(model, q, target):
    """Check a solution independently: fk within TOL of the target and q inside the limits."""
    e = pose_error(model.fk(q), target)
    return bool(np.linalg.norm(e[:3]) <= TOL and np.linalg.norm(e[3:]) <= TOL
                and np.all(q >= model.lower) and np.all(q <= model.upper))


def time_solver(model, targets, solve):
    """Time ``solve(T) -> q`` on every target; return (successes (N,), times [s] (N,))."""
    ok = np.zeros(len(targets), dtype=bool)
    times = np.zeros(len(targets))
    for i, target in enumerate(targets):
        t0 = time.perf_counter()
        q = solve(target)
        times[i] = time.perf_counter() - t0
        ok[i] = times[i] <= BUDGET and verified(model, q, target)
    return ok, times


def rtb_robot(name, model):
    """Build a Robotics Toolbox DHRobot from the DH table of ``name``, or None without rtb."""
    try:
        import roboticstoolbox as rtb
    except ImportError:
        return None
    path = share_directory() / 'config' / f'{name}.dh.yaml'
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


def _row(robot, solver, ok, times):
    return {'robot': robot, 'solver': solver, 'poses': len(ok),
            'success': f'{100 * ok.mean():.2f}%', 'success_rate': float(ok.mean()),
            'median_ms': float(np.median(times) * 1e3),
            'p99_ms': float(np.percentile(times, 99) * 1e3)}


def run(n_poses=10000, seed=0, robots=ROBOTS, verbose=False, quick=False):
    """
    Benchmark our numeric (and analytic) IK against rtb ``ik_LM`` on random reachable poses.

    Parameters
    ----------
    n_poses : int, optional
        Targets per robot.
    seed : int, optional
        Seed of the random joint positions.
    robots : sequence of str, optional
        Bundled robot names.
    verbose : bool, optional
        Print the table (and ratios) when done.
    quick : bool, optional
        A smoke run: at most ``QUICK_POSES`` targets per robot.

    Returns
    -------
    list of dict
        One row per robot and solver: ``robot``, ``solver``, ``poses``, ``success`` (text),
        ``success_rate`` (0..1), ``median_ms``, ``p99_ms``.

    """
    from robot_dynamics import ik

    if quick:
        n_poses = min(n_poses, QUICK_POSES)
    rows = []
    for name in robots:
        model = RobotModel.load(name)
        _, targets = random_targets(model, n_poses, seed)
        model.ik(targets[0], method='numeric')          # compile / load the numba cache
        ok, times = time_solver(model, targets, lambda T: model.ik(
            T, method='numeric', timeout=BUDGET, tol_position=TOL, tol_orientation=TOL).q)
        rows.append(_row(name, 'ours numeric', ok, times))
        robot = rtb_robot(name, model)
        if robot is not None:
            robot.ik_LM(targets[0], tol=RTB_TOL)
            ok, times = time_solver(model, targets, lambda T: robot.ik_LM(T, tol=RTB_TOL).q)
            rows.append(_row(name, 'rtb ik_LM', ok, times))
        if ik.closed_form(model) is not None:
            ok, times = time_solver(model, targets, lambda T: model.ik(
                T, method='analytic', tol_position=TOL, tol_orientation=TOL).q)
            rows.append(_row(name, 'ours analytic', ok, times))
    if verbose:
        print(format_table(rows, n_poses))
    return rows


def format_table(rows, n_poses=None):
    """Format the rows as a text table, with our numeric solver's ratios to rtb ``ik_LM``."""
    head = f'IK on {n_poses} random reachable poses per robot' if n_poses else 'IK'
    lines = [f'{head} (success: fk within {TOL:g} m / {TOL:g} rad, in limits, '
             f'within {BUDGET * 1e3:g} ms)',
             f'{"robot":10s} {"solver":14s} {"success":>9s} {"median ms":>10s} {"p99 ms":>9s}']
    for r in rows:
        lines.append(f'{r["robot"]:10s} {r["solver"]:14s} {100 * r["success_rate"]:8.2f}% '
                     f'{r["median_ms"]:10.3f} {r["p99_ms"]:9.3f}')
    for name in dict.fromkeys(r['robot'] for r in rows):
        by = {r['solver']: r for r in rows if r['robot'] == name}
        ours, rtb = by.get('ours numeric'), by.get('rtb ik_LM')
        if ours and rtb:
            lines.append(f'{name}: ours/rtb median x{ours["median_ms"] / rtb["median_ms"]:.2f}, '
                         f'p99 x{ours["p99_ms"] / rtb["p99_ms"]:.2f}, success '
                         f'{100 * (ours["success_rate"] - rtb["success_rate"]):+.2f} points')
    return '\n'.join(lines)


def main(argv=None):
    """Command line: ``bench_ik.py [--poses N] [--seed S] [--robots NAME ...]``."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--poses', type=int, default=10000, help='random targets per robot')
    parser.add_argument('--seed', type=int, default=0, help='seed of the random targets')
    parser.add_argument('--robots', nargs='+', default=list(ROBOTS), help='bundled robots')
    args = parser.parse_args(argv)
    run(args.poses, args.seed, args.robots, verbose=True)


if __name__ == '__main__':
    main()
