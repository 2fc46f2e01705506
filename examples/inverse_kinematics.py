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

"""Every closed-form inverse-kinematics solution of the PUMA 560, and the numeric solver."""

import numpy as np
from robot_dynamics import RobotModel

model = RobotModel.load('puma560')
q_true = np.array([0.4, 0.6, -1.2, 0.3, 0.8, -0.5])    # [rad]
target = model.fk(q_true)                               # tool pose in the base frame

solutions = model.ik_all(target)                       # Pieper: wrist centre, then the wrist
print(f'{len(solutions)} closed-form solutions within the joint limits:')
for q in solutions:
    error = np.abs(model.fk(q) - target).max()
    print(f'  q = {np.round(q, 4)} rad, fk error {error:.1e}')

result = model.ik(target, seed=np.zeros(6), method='numeric')
print(f'numeric: success={result.success}, position error {result.position_error:.1e} m, '
      f'orientation error {result.orientation_error:.1e} rad, {result.iterations} iterations')
