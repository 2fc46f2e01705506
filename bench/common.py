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
Shared benchmark machinery: timing, a per-robot fixture with seeded states, the peers.

Every ``bench/bench_<topic>.py`` module defines ``run(quick=False)`` returning a list of row
dicts; ``bench/run.py`` prints them. Timing rows use the keys
``{group, robot, operation, mode, ours_us, pinocchio_us, rtb_us}``: ``mode`` is ``'single'``
(microseconds per call on one state) or ``'batch'`` (microseconds per state for
:data:`N_BATCH` states); a peer that cannot do an operation gets ``None``. Modules with other
measures (IK success rates, ...) return rows with their own keys.
"""

from functools import cached_property
import os
from pathlib import Path
import platform
import sys
import timeit

import numpy as np

REPO = Path(__file__).resolve().parents[1]
N_BATCH = 10_000
SEED = 2026

try:  # the installed package (make bench); else the source tree next to this folder
    import robot_dynamics  # noqa: F401
except ImportError:  # pragma: no cover - depends on how the bench is started
    sys.path.insert(0, str(REPO))
# test/ros/isolation.py: the pool of ROS domains that the ROS tests use too
sys.path.insert(0, str(REPO / 'test' / 'ros'))

from robot_dynamics import RobotModel  # noqa: E402


def cpu_model():
    """Return the CPU model name (from /proc/cpuinfo on Linux) and the number of CPUs."""
    name = platform.processor() or platform.machine()
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.lower().startswith('model name'):
                    name = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    return f'{name} ({os.cpu_count()} CPUs)'


def environment():
    """Versions and machine of this run, as ``{label: text}``."""
    env = {'python': platform.python_version(), 'numpy': np.__version__, 'cpu': cpu_model()}
    for label, module in (('pinocchio', 'pinocchio'), ('roboticstoolbox', 'roboticstoolbox'),
                          ('numba', 'numba')):
        try:
            env[label] = __import__(module).__version__
        except ImportError:
            env[label] = 'not installed'
    return env


def best_us(fn, per_call=1, repeat=5, budget_s=2.0, min_time_s=0.05, clock=timeit.default_timer):
    """
    Time ``fn()`` and return the best microseconds per unit (call or state).

    Like ``timeit``: the number of calls per repetition is raised until one repetition takes at
    least ``min_time_s``; the best of ``repeat`` repetitions is kept (fewer if they would exceed
    ``budget_s`` in total). ``per_call`` divides the time of one call (e.g. the number of states
    of a batch call). ``clock``: wall time by default; ``time.process_time`` counts only the
    time this process ran (single-threaded code on a shared machine).
    """
    timer = timeit.Timer(fn, timer=clock)
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= min_time_s or number >= 1 << 20:
            break
        number *= 2 if elapsed <= 0 else max(2, int(1.2 * min_time_s / elapsed))
    best = elapsed
    repeat = max(0, min(repeat - 1, int(budget_s / max(elapsed, 1e-9))))
    for _ in range(repeat):
        best = min(best, timer.timeit(number))
    return best / number / per_call * 1e6


def timing_row(group, robot, operation, mode, ours_us, pinocchio_us=None, rtb_us=None):
    """Return one timing row (see the module docstring)."""
    return {'group': group, 'robot': robot, 'operation': operation, 'mode': mode,
            'ours_us': ours_us, 'pinocchio_us': pinocchio_us, 'rtb_us': rtb_us}


class Fixture:
    """
    A bundled robot loaded once, with seeded states and the same robot in the peer libraries.

    ``q`` is one state (n,), ``Q`` a batch (N, n) inside the joint limits (``[-pi, pi]`` for
    continuous joints); ``qd``, ``qdd``, ``tau`` and their batches ``Qd``, ``Qdd``, ``Tau`` are
    normal draws for dynamics benchmarks. The Pinocchio model is built from ``model.to_urdf()``.
    """

    def __init__(self, name, n_batch=N_BATCH, seed=SEED):
        self.name = name
        self.model = RobotModel.load(name)
        n = self.model.dof
        rng = np.random.default_rng(seed)
        lo = np.where(np.isfinite(self.model.lower), self.model.lower, -np.pi)
        hi = np.where(np.isfinite(self.model.upper), self.model.upper, np.pi)
        self.Q = rng.uniform(lo, hi, (n_batch, n))
        self.Qd = rng.normal(size=(n_batch, n))
        self.Qdd = rng.normal(size=(n_batch, n))
        self.Tau = rng.normal(size=(n_batch, n))
        self.q, self.qd, self.qdd, self.tau = self.Q[0], self.Qd[0], self.Qdd[0], self.Tau[0]

    # ---- Pinocchio ------------------------------------------------------------------------------

    @cached_property
    def pin(self):
        """Return the ``pinocchio`` module."""
        import pinocchio
        return pinocchio

    @cached_property
    def pin_model(self):
        """Return the Pinocchio model of the same robot (from ``model.to_urdf()``)."""
        return self.pin.buildModelFromXML(self.model.to_urdf())

    @cached_property
    def pin_data(self):
        """Return Pinocchio data for :attr:`pin_model`."""
        return self.pin_model.createData()

    def pin_frame(self, link=None):
        """Return the Pinocchio frame id of ``link`` (default: the tip)."""
        link = self.model.tip_link if link is None else link
        return self.pin_model.getFrameId(link, self.pin.BODY)

    @cached_property
    def pin_idx_v(self):
        """Return Pinocchio's velocity index of each of our joints (n,), e.g. ``J[:, idx]``."""
        return np.array([self.pin_model.joints[self.pin_model.getJointId(name)].idx_v
                         for name in self.model.joint_names])

    def pin_q(self, q):
        """Convert states (..., n) to Pinocchio configurations (..., nq); continuous: cos, sin."""
        q = np.asarray(q, dtype=float)
        out = np.empty(q.shape[:-1] + (self.pin_model.nq,))
        for i, name in enumerate(self.model.joint_names):
            joint = self.pin_model.joints[self.pin_model.getJointId(name)]
            if joint.nq == 2:
                out[..., joint.idx_q] = np.cos(q[..., i])
                out[..., joint.idx_q + 1] = np.sin(q[..., i])
            else:
                out[..., joint.idx_q] = q[..., i]
        return out

    def pin_v(self, v):
        """Reorder joint-space vectors (..., n) to Pinocchio's velocity layout (..., nv)."""
        v = np.asarray(v, dtype=float)
        out = np.empty(v.shape[:-1] + (self.pin_model.nv,))
        out[..., self.pin_idx_v] = v
        return out


def check_close(label, ours, reference, tol=1e-9):
    """Raise ``AssertionError`` if two results differ: timing disagreeing code is meaningless."""
    err = float(np.max(np.abs(np.asarray(ours) - np.asarray(reference))))
    if not err <= tol:
        raise AssertionError(f'{label}: results differ by {err:.3g} (tolerance {tol:g})')
    return err
