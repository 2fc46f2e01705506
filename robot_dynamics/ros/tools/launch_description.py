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
The launch description of a node set, behind ``launch/<mode>.launch.py``.

Only the launch files import this module: launch and launch_ros come with a ROS 2 distribution
(not from PyPI), and ``robot-dynamics bringup`` starts the same declaration without them. It
adds nothing to the declaration of :mod:`~robot_dynamics.ros.tools.graph`: one launch argument per
``graph.launch_arguments(mode)``, and, once their values are known (an ``OpaqueFunction``), one
``launch_ros`` ``Node`` per entry of ``graph.launch_nodes(mode, values)`` and of
``graph.launch_viewers(mode, values)`` (robot_state_publisher, RViz).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from . import graph


def generate(mode):
    """Return the ``LaunchDescription`` of the node set of ``mode`` (``graph.MODES``)."""
    arguments = graph.launch_arguments(mode)

    def nodes(context):
        values = {argument.name: LaunchConfiguration(argument.name).perform(context)
                  for argument in arguments}
        started = graph.launch_nodes(mode, values) + graph.launch_viewers(mode, values)
        return [Node(output='screen', **options) for options in started]

    return LaunchDescription(
        [DeclareLaunchArgument(argument.name, default_value=argument.default,
                               description=argument.description) for argument in arguments]
        + [OpaqueFunction(function=nodes)])
