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
Per-call cost of the control laws on one state: what a 1 kHz controller loop pays per cycle.

Robots: the SCARA and the iiwa14. Each law of ``control.Law`` tracks a reference near a bent
configuration; the time is one ``compute(t, q, qd, reference)`` call. There is no peer for
these laws in Pinocchio or Robotics Toolbox: the inverse dynamics inside them is benchmarked
against the peers in ``bench_dynamics.py``.
"""

from common import best_us, timing_row
import numpy as np

from robot_dynamics import control, RobotModel
from robot_dynamics.trajectory import TaskPoint, TrajectoryPoint

GROUP = 'control'
ROBOTS = ('scara', 'iiwa14')
KP, KD = 400.0, 40.0


def _law(model, law, q):
    """Return the controller and a reference for it near ``q``."""
    if law is control.Law.OPERATIONAL_SPACE:
        return (control.make_law(law, model, stiffness=[1000.0] * 3 + [100.0] * 3),
                TaskPoint(model.fk(q), np.zeros(6), np.zeros(6)))
    if law is control.Law.RESOLVED_ACCELERATION:
        return (control.make_law(law, model, kp=KP, kd=KD),
                TaskPoint(model.fk(q), np.zeros(6), np.zeros(6)))
    gains = {'kp': KP, 'kd': KD} if law is not control.Law.PID else {'kp': KP, 'ki': 1.0, 'kd': KD}
    return control.make_law(law, model, **gains), TrajectoryPoint.at_rest(q + 0.01)


def run(quick=False):
    """Return one timing row per (robot, law): microseconds per single-state call."""
    rows = []
    for name in ROBOTS:
        model = RobotModel.load(name)
        lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
        hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
        q = lo + 0.6 * (hi - lo)
        qd = np.full(model.dof, 0.1)
        for law in control.Law:
            c, ref = _law(model, law, q)
            c.compute(0.0, q, qd, ref)          # compile or load the kernels first
            us = best_us(lambda: c.compute(0.0, q, qd, ref), budget_s=0.5 if quick else 2.0)
            rows.append(timing_row(GROUP, name, law.value, 'single', us))
    return rows
