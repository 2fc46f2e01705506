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
Generated code across processes: the second process loads what the first compiled, and uses it.

Within one process the kernels of a fresh build always work; only a new process reads numba's
cache, so each step runs in a subprocess of its own (the work tree's package, a cache folder of
the test's own) that prints what it found as JSON.
"""

import json
import os
from pathlib import Path
import subprocess
import sys

REPO = Path(__file__).resolve().parents[2]
ROBOT = 'planar_3r'      # a small arm compiles in seconds; the cache is the same for any
TIMEOUT = 600            # s: only against a hang; compiling on a busy host takes its time

# Prepares the robot with generated code (a fallback to the recursion is an error here), checks
# every generated kernel against the checked API's recursion on random states, and prints
# whether the code was generated, numba's cache hits and misses and the kernels' module.
CHILD = """
import json, sys, warnings
import numpy as np
from robot_dynamics import generated, RobotModel
warnings.simplefilter('error', RuntimeWarning)
model = RobotModel.load(sys.argv[1])
fast = model.prepare(generated=True)
k, n, err = fast.generated, model.dof, 0.0
rng = np.random.default_rng(int(sys.argv[2]))
for _ in range(5):
    q, qd, x = rng.uniform(-np.pi, np.pi, n), rng.normal(size=n), rng.normal(size=n)
    for ours, truth in ((fast.inverse_dynamics(q, qd, x), model.inverse_dynamics(q, qd, x)),
                        (fast.forward_dynamics(q, qd, x), model.forward_dynamics(q, qd, x)),
                        (fast.gravity_torques(q), model.gravity_torques(q)),
                        (fast.mass_matrix(q), model.mass_matrix(q)),
                        (fast.coriolis_matrix(q, qd), model.coriolis_matrix(q, qd))):
        err = max(err, np.abs(ours - truth).max() / max(1.0, np.abs(truth).max()))
stats = [getattr(k, name).stats for name in generated.KERNELS]
print(json.dumps({'generation_time': k.generation_time, 'stem': k.path.stem,
                  'modules': sorted({getattr(k, name).py_func.__module__
                                     for name in generated.KERNELS}),
                  'hits': sum(sum(s.cache_hits.values()) for s in stats),
                  'misses': sum(sum(s.cache_misses.values()) for s in stats), 'err': err}))
"""


def run_child(cache, seed):
    """Run :data:`CHILD` in a new process with ``cache`` as the cache folder; return its JSON."""
    env = dict(os.environ, ROBOT_DYNAMICS_CACHE=str(cache), ROBOT_DYNAMICS_GENERATED='0',
               PYTHONPATH=os.pathsep.join(filter(None, (str(REPO), os.environ.get('PYTHONPATH')))))
    done = subprocess.run([sys.executable, '-c', CHILD, ROBOT, str(seed)], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_a_new_process_loads_the_cached_kernels_and_uses_them(tmp_path):
    first = run_child(tmp_path, 1)
    assert first['generation_time'] > 0 and first['misses'] > 0      # generated and compiled
    assert first['err'] < 1e-12, first
    second = run_child(tmp_path, 2)
    # nothing generated or compiled: numba loaded every kernel from its cache
    assert second['generation_time'] == 0 and second['misses'] == 0, second
    assert second['hits'] >= 4, second
    assert second['stem'] == first['stem'] and second['modules'] == [first['stem']]
    assert second['err'] < 1e-12, second
