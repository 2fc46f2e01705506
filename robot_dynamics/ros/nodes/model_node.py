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
The model node: validates a robot description and publishes it on ``/robot_description``.

Parameters give exactly one source: ``robot`` (a bundled robot), ``urdf_file``, ``dh_file`` or
``robot_description`` (URDF text), plus the chain parameters shared with the other nodes. The
description is built into a model before anything is published, so a bad one stops the node at
start-up with a message naming the problem and exit status 1, never a half-working node.
"""

import sys

from rclpy.node import Node
from std_msgs.msg import String

from .description import chain_options, CHAIN_PARAMETERS
from .parameters import declare, Spec
from .runner import run_node
from ..wire.qos import DESCRIPTION_QOS
from ...model import from_source

PARAMETERS = (
    Spec('robot', '', 'Bundled robot name (robot-dynamics info lists them).'),
    Spec('urdf_file', '', 'Path of a URDF file.'),
    Spec('dh_file', '', 'Path of a DH table (YAML, see RobotModel.from_dh).'),
    Spec('robot_description', '', 'URDF XML text.'),
) + CHAIN_PARAMETERS


class ModelNode(Node):
    """Publish the validated robot description, transient-local, on ``/robot_description``."""

    def __init__(self, **kwargs):
        super().__init__('model', **kwargs)
        p = declare(self, PARAMETERS)
        self.model, urdf = from_source(robot=p.robot, urdf_file=p.urdf_file, dh_file=p.dh_file,
                                       robot_description=p.robot_description,
                                       **chain_options(p))
        self.publisher = self.create_publisher(String, 'robot_description', DESCRIPTION_QOS)
        self.publisher.publish(String(data=urdf))
        self.get_logger().info(
            f'publishing {self.model!r}: joints {list(self.model.joint_names)}, '
            f'{len(urdf)} characters of URDF on {self.publisher.topic_name}')


def main(args=None):
    """Run the model node; exit status 1 when the description is bad."""
    return run_node(ModelNode, 'model', args)


if __name__ == '__main__':
    sys.exit(main())
