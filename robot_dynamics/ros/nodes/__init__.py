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
The four nodes and what they share.

Model, kinematics, simulator and controller node (and its goal process); parameters, the robot
description, running a node, throttled logs.
"""

#: The name of the controller's goal process's node is the controller's with this after it
#: (:mod:`~robot_dynamics.ros.nodes.goals`).
GOAL_NODE_SUFFIX = '_goals'
