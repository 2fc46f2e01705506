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
Drive a real arm: the node set of mode 'hardware' (no simulator).

The node set is ``robot_dynamics.ros.tools.graph``'s.

    ros2 launch robot_dynamics hardware.launch.py params_file:=my_arm.yaml

States come from the hardware's ``/joint_states``. ``--show-args`` lists the arguments. The
nodes, their parameter files and remappings come from the graph declaration, which
``robot-dynamics bringup --hardware`` starts too (``robot_dynamics.ros.tools.launch_description``
turns it into launch actions).
"""

from robot_dynamics.ros.tools.launch_description import generate


def generate_launch_description():
    """Return the launch arguments and the node set of a real arm."""
    return generate('hardware')
