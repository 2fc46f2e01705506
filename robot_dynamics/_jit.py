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
Compilation of the hot loops with numba.

The chain recursions (poses, Newton-Euler, articulated-body) walk the joints one by one, and
for one state numpy spends more time dispatching its many tiny array operations (about a
hundred per RNEA) than computing; the README's performance section has the figures. Those loops
are compiled with numba instead; compiled code is cached next to the module so only the first
import of a new install pays for compilation.
"""

import math

import numba
import numpy as np

#: Decorator compiling a function in nopython mode, cached to disk, releasing the GIL.
njit = numba.njit(cache=True, nogil=True)


def kernel_array(x):
    """
    Return ``x`` as a C-contiguous, writeable float64 array for a compiled kernel.

    numba compiles a separate specialisation for read-only or non-contiguous arrays (tens of
    seconds, e.g. for ``np.broadcast_to`` results or a model's read-only arrays), so every
    kernel argument that comes from a caller goes through here; a copy is made only if needed.
    """
    if x.dtype == np.float64 and x.flags.c_contiguous and x.flags.writeable:
        return x
    return np.require(x, dtype=float, requirements=('C', 'W'))


@njit
def _all_finite(flat):
    for x in flat:
        if not math.isfinite(x):
            return False
    return True


def all_finite(arr):
    """Return True if the float64 array ``arr`` has no nan or inf (one compiled pass)."""
    return _all_finite(arr.reshape(-1))
