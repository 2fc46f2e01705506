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
Start a simulated arm: the node set of mode 'sim' in ``robot_dynamics.ros.tools.graph``.

    ros2 launch robot_dynamics sim.launch.py robot:=scara

``ros2 launch robot_dynamics sim.launch.py --show-args`` lists the arguments. The nodes, their
parameter files and remappings come from the graph declaration, which ``robot-dynamics
bringup`` starts too (``robot_dynamics.ros.tools.launch_description`` turns it into launch
actions).
"""

from robot_dynamics.ros.tools.launch_description import generate


def generate_launch_description():
    """Return the launch arguments and the node set of a simulated arm."""
    return generate('sim')
