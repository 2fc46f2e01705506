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

"""The view's panel from the controller's messages (no middleware): the tracking error line."""

import math

from robot_dynamics.ros.tools.view import tracking_error_line
from robot_dynamics_interfaces.msg import CartesianState, ControllerState


def test_joint_space_gives_the_largest_joint_error():
    control = ControllerState()
    control.error.positions = [0.001, -0.003]
    assert tracking_error_line(control, None) == 'tracking error (max |e|): 3.00e-03'


def test_task_space_gives_the_tips_distance_and_angle():
    # an empty joint reference (the tip's is in force): 5 mm off, turned 0.1 rad about z
    tip = CartesianState()
    p, o = tip.error.pose.position, tip.error.pose.orientation
    p.x, p.y = 0.003, 0.004
    o.z, o.w = math.sin(0.05), math.cos(0.05)
    assert tracking_error_line(ControllerState(), tip) == \
        'tracking error (tip): 5.00e-03 m, 1.00e-01 rad'


def test_no_reference_is_said_not_drawn_as_nan():
    assert tracking_error_line(ControllerState(), None) == 'tracking error: no reference'
