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
Compile the library's kernels into numba's on-disk cache, once, after an install.

numba compiles a kernel on its first call in a new install (about a minute for all of them on
a quiet 2-core machine, several on a busy one) and loads it from its cache afterwards (well
under a second). ``make setup`` runs ``python -m robot_dynamics.precompile`` after installing
the package; after ``pip install`` run it yourself, or the first node, demo or test to start
pays for it. It runs what a node runs before its first cycle, on every bundled robot: the
model's kernels for one state and a batch (:meth:`RobotModel.warm_up`, IK included) and the
controller's cycle and safe command with each control law and the task-space law
(:meth:`Controller.warm_up`).
"""

import sys
import time

from .control import default_law, LAWS
from .controller import Controller
from .limits import middle
from .model import RobotModel
from .task_space import configured_task_law


def precompile(robots=None, out=sys.stdout):
    """
    Run every kernel a node runs on each of ``robots`` (default: all bundled); return seconds.

    Prints one line before it starts and one when done, so that a long first compilation is
    never silent.
    """
    robots = RobotModel.available() if robots is None else list(robots)
    print(f"compiling the library's kernels (numba, cached on disk): {', '.join(robots)}; "
          'about a minute after an install, seconds once cached', file=out, flush=True)
    start = time.perf_counter()
    for name in robots:
        model = RobotModel.load(name)
        q_home = middle(model.lower, model.upper)
        model.warm_up()
        task_law = configured_task_law(model, lambda name, default: default)
        for law in LAWS:
            Controller(model, default_law(law, model, q_home),
                       task_law=task_law).warm_up()
    took = time.perf_counter() - start
    print(f"the library's kernels are compiled ({took:.1f} s)", file=out, flush=True)
    return took


def main():
    """Entry point of ``python -m robot_dynamics.precompile``."""
    precompile()
    return 0


if __name__ == '__main__':
    sys.exit(main())
