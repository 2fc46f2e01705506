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
The ROS 2 nodes of robot_dynamics: thin adapters between messages and the library.

Every module here may import rclpy and message packages; nothing outside this sub-package does,
so the library works without ROS. One module per node (``model_node``, ``kinematics_node``,
``simulator_node``, ``controller_node``), the message <-> numpy conversions in
:mod:`~robot_dynamics.ros.conversions`, the node set that launch files and
``robot-dynamics bringup`` start in :mod:`~robot_dynamics.ros.graph`, the MCAP recorder in
:mod:`~robot_dynamics.ros.recording` (with the message definitions it stores,
:mod:`~robot_dynamics.ros.definitions`, which reads files only).
"""
