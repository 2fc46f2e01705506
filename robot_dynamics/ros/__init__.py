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
The ROS 2 side of robot_dynamics: thin adapters between messages and the library.

Every module here may import rclpy and message packages; nothing outside this sub-package does,
so the library works without ROS. Three parts:

- :mod:`~robot_dynamics.ros.nodes`: one module per node (``model_node``, ``kinematics_node``,
  ``simulator_node``, ``controller_node``), each the adapter of a library object, and what they
  share: parameters, the robot description, running a node, throttled logs;
- :mod:`~robot_dynamics.ros.wire`: what crosses the middleware: CDR read and written raw
  (``cdr``), message <-> numpy conversions, QoS profiles, the Fast DDS profiles and the
  middleware's start, the rclpy compatibility layer, on-demand subscriptions;
- :mod:`~robot_dynamics.ros.tools`: what users run around the nodes: the node set that launch
  files and ``robot-dynamics bringup`` start (``graph``), bringup, the demo, ``send``, the MCAP
  recorder and the message definitions it stores.
"""
