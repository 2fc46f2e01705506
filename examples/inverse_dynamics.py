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

"""Mass matrix and joint torques of the planar 2R arm of Hayes, Introduction to Robotics, §5.4."""

import numpy as np
from robot_dynamics import RobotModel

model = RobotModel.load('planar_2r')     # l = 2, 2 m; lCG = 1, 1 m; m = 2, 1 kg; Izz = 3, 1
q = np.array([np.pi / 6, np.pi / 3])     # [rad]
qd = np.array([1.0, 2.0])                # [rad/s]
qdd = np.array([0.5, -1.0])              # [rad/s^2]

np.set_printoptions(precision=6, suppress=True)
print('mass matrix M(q) [kg m^2]:')
print(model.mass_matrix(q))
print('Coriolis and centrifugal C(q, qd) qd [N m]:', model.coriolis_matrix(q, qd) @ qd)
print('gravity torques g(q) [N m]:', model.gravity_torques(q))
print('inverse dynamics tau [N m]:', model.inverse_dynamics(q, qd, qdd))
print('forward dynamics at tau = 0 [rad/s^2]:', model.forward_dynamics(q, qd, np.zeros(2)))
