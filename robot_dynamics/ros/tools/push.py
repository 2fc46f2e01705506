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
``robot-dynamics push``: an external wrench on the simulated arm for a while, then none.

The pip-install counterpart of ``ros2 topic pub /simulator/external_wrench
geometry_msgs/msg/WrenchStamped ...``: it publishes the wrench on the simulator's
``~/external_wrench`` once the simulator subscribes, holds it for ``duration`` seconds of the
wall clock, then publishes a zero wrench and waits until the simulator has it, so that the push
never outlives the command: also on Ctrl-C (SIGINT) or SIGTERM, which end the push early. The
simulator takes the newest wrench until replaced (see
:mod:`robot_dynamics.ros.nodes.simulator_node`) and refuses one above its bounds
(``max_external_force``, ``max_external_torque``; its log says so).
"""

import sys
import time

from geometry_msgs.msg import WrenchStamped
import rclpy

from ..wire import middleware

#: Default wrench topic: the simulator's.
TOPIC = 'simulator/external_wrench'
#: Longest wait [s] for the simulator to acknowledge the zero wrench that ends a push.
RELEASE_WAIT = 5.0
#: Exit statuses: the push was applied and released; no simulator subscribed; interrupted.
PUSHED, FAILED, INTERRUPTED = 0, 1, 130


def wrench_message(force, torque, frame=''):
    """Return the ``WrenchStamped`` of ``force`` [N] and ``torque`` [N m] (3,) at ``frame``."""
    msg = WrenchStamped()
    msg.header.frame_id = frame
    msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = map(float, force)
    msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z = map(float, torque)
    return msg


def run(force, torque=(0.0, 0.0, 0.0), *, frame='', duration=1.0, topic=TOPIC,
        server_timeout=30.0, out=sys.stdout):
    """
    Push the arm for ``duration`` [s]; return the exit status (:data:`PUSHED`, ...).

    ``force`` [N] and ``torque`` [N m] (3,) in the base axes at the origin of the link
    ``frame`` (empty: the tip).
    """
    with middleware.tool_node('push') as (node, stop):
        # as the simulator subscribes: reliable, the newest ten
        publisher = node.create_publisher(WrenchStamped, topic, 10)
        deadline = time.monotonic() + server_timeout
        while publisher.get_subscription_count() == 0:
            if stop.wait(0.05):
                return INTERRUPTED
            if time.monotonic() > deadline:
                print(f'push: nothing subscribes to {publisher.topic_name} within '
                      f'{server_timeout:g} s (is the simulator running? ROS_DOMAIN_ID and '
                      'discovery as its?)', file=sys.stderr)
                return FAILED
        publisher.publish(wrench_message(force, torque, frame))
        print(f'push: force {list(force)} N, torque {list(torque)} N m at '
              f'{frame or "the tip"} for {duration:g} s on {publisher.topic_name}',
              file=out, flush=True)
        interrupted = middleware.stopped(stop, duration)
        publisher.publish(wrench_message((0.0,) * 3, (0.0,) * 3, frame))
        released = publisher.wait_for_all_acked(rclpy.duration.Duration(seconds=RELEASE_WAIT))
        print('push: released' if released else
              f'push: released, not acknowledged within {RELEASE_WAIT:g} s', file=out)
        return INTERRUPTED if interrupted else PUSHED
