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
Deprecated: the former name of :mod:`robot_dynamics.closed_loop`, kept so that old imports work.

Importing it warns and gives that very module (its names, its functions), so that
``simulation`` and ``simulator`` (the simulated arm) are no longer told apart by one letter.
"""

import sys
import warnings

from . import closed_loop

warnings.warn('robot_dynamics.simulation is now robot_dynamics.closed_loop; import that',
              DeprecationWarning, stacklevel=2)
sys.modules[__name__] = closed_loop
