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

"""``python -m robot_dynamics.precompile``: what make setup runs to fill numba's cache."""

import importlib
import io

from robot_dynamics import dynamics, integrators, prepared
from robot_dynamics.precompile import precompile

# the module, which the package's closed_form function hides
CLOSED_FORM = importlib.import_module('robot_dynamics.ik.closed_form')


def test_precompile_says_what_it_does_and_compiles_a_nodes_kernels():
    out = io.StringIO()
    took = precompile(['planar_2r'], out=out)
    first, last = out.getvalue().splitlines()
    assert first.startswith("compiling the library's kernels") and 'planar_2r' in first
    assert last == f"the library's kernels are compiled ({took:.1f} s)"
    # what the simulator, the controller and the kinematics node run before their first cycle
    for kernel in (prepared._inverse_dynamics, prepared._forward_dynamics,
                   prepared._gravity_torques, integrators._rk4_kernel, dynamics._rnea_kernel,
                   CLOSED_FORM._planar_candidates):
        assert kernel.signatures, kernel
