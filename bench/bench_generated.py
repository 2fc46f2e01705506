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
Code generated per robot (``model.prepare(generated=True)``) against Pinocchio and the recursion.

Per call on one state, microseconds of this process's CPU time: ``ours_us`` the generated
kernel through the prepared model (writing into ``out``), ``recursion_us`` the prepared model's
recursion (``model.prepare()``), ``pinocchio_us`` Pinocchio's ``rnea``, ``crba``,
``computeGeneralizedGravity``, ``computeCoriolisMatrix``. Before timing, the three must agree.
The first run generates and compiles the code (its times in the ``build`` table; later runs
load it from the cache). Then the operation counts of the inverse dynamics beside Turney, Mudge
and Lee's (1981) Table 8.1 for the same n.
"""

import time

from bench_dynamics import PinFunctions
from common import best_us, check_close, Fixture, timing_row
import numpy as np
from robot_dynamics import generated

GROUP = 'generated'
ROBOTS = ('puma560', 'iiwa14')


def bench_robot(name, quick=False):
    """Return the timing rows and the build row of one robot."""
    options = {'repeat': 1 if quick else 7, 'clock': time.process_time}
    fx = Fixture(name)
    model, pf, pin = fx.model, PinFunctions(fx), fx.pin
    start = time.perf_counter()
    fast = model.prepare(generated=True)
    build = time.perf_counter() - start
    if fast.generated is None:
        raise RuntimeError(f'{name}: no generated code')
    plain = model.prepare()
    q, qd, qdd = fx.q, fx.qd, fx.qdd
    n = model.dof
    vector, matrix = np.empty(n), np.empty((n, n))

    def in_order(x):
        return np.asarray(x)[np.ix_(pf.idx, pf.idx)]

    cases = (
        ('inverse_dynamics', lambda: fast.inverse_dynamics(q, qd, qdd, vector),
         lambda: plain.inverse_dynamics(q, qd, qdd, vector), pf.rnea, pf.in_our_order),
        ('mass_matrix', lambda: fast.mass_matrix(q, matrix),
         lambda: plain.mass_matrix(q, matrix), pf.crba, pf.in_our_order),
        ('gravity_torques', lambda: fast.gravity_torques(q, vector),
         lambda: plain.gravity_torques(q, vector),
         lambda: pin.computeGeneralizedGravity(pf.model, pf.data, pf.Q[0]), pf.in_our_order),
        ('coriolis_matrix', lambda: fast.coriolis_matrix(q, qd, matrix),
         lambda: model.coriolis_matrix(q, qd), pf.coriolis, in_order),
    )
    rows = []
    for operation, ours, recursion, pinocchio, layout in cases:
        check_close(f'{name} {operation}: generated vs recursion', ours().copy(),
                    recursion().copy(), tol=1e-10)
        check_close(f'{name} {operation}: generated vs pinocchio', ours().copy(),
                    layout(pinocchio()), tol=1e-8)
        row = timing_row(GROUP, name, operation, 'single', best_us(ours, **options),
                         best_us(pinocchio, **options))
        del row['rtb_us']
        row['recursion_us'] = best_us(recursion, **options)
        rows.append(row)
    k = fast.generated
    rows.append({'table': 'build (first use: generate + compile; later: load)', 'robot': name,
                 'n': n, 'generate_s': k.generation_time, 'compile_or_load_s': k.compile_time,
                 'prepare_s': build})
    return rows


def operation_rows(name):
    """Return the operation-count rows of one robot (Table 8.1's form, plus ours)."""
    fx = Fixture(name)
    n = fx.model.dof
    _, ops = generated.generate_source(fx.model)
    title = 'operations per inverse dynamics (Turney, Mudge and Lee 1981, Table 8.1)'
    rows = [{'table': title, 'robot': name, 'n': n, 'approach': approach, 'mul': int(mul),
             'add': int(add)} for approach, (mul, add) in generated.table_8_1(n).items()]
    general = generated.general_counts(n)
    rows.append({'table': title, 'robot': name, 'n': n, 'approach': 'general recursion',
                 'mul': general['mul'], 'add': general['add']})
    own = ops['inverse_dynamics']
    rows.append({'table': title, 'robot': name, 'n': n, 'approach': 'generated',
                 'mul': own['mul'], 'add': own['add']})
    return rows


def run(quick=False):
    """Return the rows of this benchmark (see common.py for the row format)."""
    rows = [row for name in ROBOTS for row in bench_robot(name, quick=quick)]
    return rows + [row for name in ROBOTS for row in operation_rows(name)]
