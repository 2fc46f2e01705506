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

"""Forward kinematics and the Jacobian of the RRP SCARA of Becker and Klink's textbook."""

import numpy as np
from robot_dynamics import kinematics, RobotModel

model = RobotModel.load('scara')
q = np.array([0.3, -0.8, 0.1])          # shoulder [rad], elbow [rad], quill [m]
T = model.fk(q)                          # pose of the tool in the base frame
J = model.jacobian(q)                    # rows vx vy vz wx wy wz, base frame

np.set_printoptions(precision=4, suppress=True)
print('tool position [m]:', T[:3, 3])
print('Jacobian (position rows; the quill column is -1 on z: the quill moves down):')
print(J[:3])
r1, r2 = 0.325, 0.275                    # link lengths of config/scara.dh.yaml [m]
print(f'det J = {float(kinematics.jacobian_determinant(model, q)):.6f}, '
      f'-r1 r2 sin(q2) = {-r1 * r2 * np.sin(q[1]):.6f}')
