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
The robot description on ``/robot_description``, and the model every node builds from it.

The model node publishes the URDF text once, transient-local and reliable with depth 1 (as
robot_state_publisher does), so that nodes started later still receive it. The other nodes
build their :class:`~robot_dynamics.RobotModel` from that topic with the same chain parameters
(``base_link``, ``tip_link``, locked joints), which the parameter files give to every node at
once (the ``/**`` section), so that all of them work on the same chain of the same robot.
"""

from rclpy.clock import Clock, ClockType
from std_msgs.msg import String

from .parameters import DOUBLE_ARRAY, Spec, STRING_ARRAY
from .runner import freeze_heap
from .throttle import Throttle
from ..wire.qos import DESCRIPTION_QOS
from ...errors import RobotDynamicsError, shortened
from ...model import chain_options as model_chain_options, RobotModel

#: Longest report of a refused description [characters].
MESSAGE_LIMIT = 400
#: Most distinct refused descriptions remembered (each is reported once).
REPORTED_LIMIT = 1000
#: How often [s of wall time] a node still waiting for the description says so, and what it sees.
REMINDER_PERIOD = 10.0

#: The parameters that select the chain, shared by every node.
CHAIN_PARAMETERS = (
    Spec('base_link', '', 'Root link of the chain; empty: the root of the URDF.'),
    Spec('tip_link', '', 'Link that FK, Jacobians, IK and the task-space laws refer to; empty: '
                         'chosen by the documented rule of RobotModel.from_urdf.'),
    Spec('locked_joint_names', STRING_ARRAY,
         'Moving joints off the chain (e.g. gripper fingers) locked at locked_joint_positions; '
         'joints off the chain that are not listed are locked at 0 clipped to their limits.'),
    Spec('locked_joint_positions', DOUBLE_ARRAY,
         'Positions [rad or m] of locked_joint_names, one per name.'),
)


def chain_options(values):
    """Return the ``RobotModel.from_urdf`` keywords of the declared chain parameters."""
    return model_chain_options(lambda name, _: getattr(values, name))


def silent(count):
    """Return the words for ``count`` publishers of a topic from which nothing came."""
    return (f'{count} publisher{"s" if count > 1 else ""} of it, and nothing came '
            '(subscribed again)')


class ModelSubscription:
    """
    Subscribe to the robot description and call ``on_model(model)`` once it builds.

    A description that does not build (not XML, beyond the size limit, non-finite or inverted
    limits, a moving link without inertia, ...) is refused with one error line naming the
    problem, whatever the parser raised, and the node keeps waiting; a later description that
    differs from the one in use is ignored with one warning (a running simulator or controller
    does not swap its model under way: restart the node to change robots). Each distinct
    description is reported once, and at most one line a second is logged. A node still waiting
    says so every :data:`REMINDER_PERIOD`, with what it sees; when a node publishes the topic and
    nothing came, it subscribes again. :attr:`urdf` is the description the model was built from.
    """

    def __init__(self, node, topic, options, on_model):
        self._node = node
        self._options = options
        self._on_model = on_model
        self.urdf = None
        self.model = None
        self._reported = set()      # hashes of the descriptions reported
        self._refused = False
        self._throttle = Throttle()
        node.get_logger().info(f'waiting for the robot description on {topic}')
        self._topic = topic
        self._subscription = self._subscribe()
        # on the wall clock: a node on simulated time may wait before any /clock comes
        self._reminder = node.create_timer(REMINDER_PERIOD, self._remind,
                                           clock=Clock(clock_type=ClockType.STEADY_TIME))

    def _subscribe(self):
        return self._node.create_subscription(String, self._topic, self._callback,
                                              DESCRIPTION_QOS)

    def _remind(self):
        topic = self._subscription.topic_name
        count = self._subscription.get_publisher_count()
        if count == 0:
            seen = 'no node publishes it (is the model node running? bringup starts it)'
        elif self._refused:
            seen = 'what came was refused (above)'
        else:
            # Fast DDS can leave a late-joining reader without a transient-local writer's history
            # for good (eProsima/Fast-DDS#3822; seen here in a controller restarted next to a
            # running graph): a new reader is matched afresh, and the writer sends it again
            self._node.destroy_subscription(self._subscription)
            self._subscription = self._subscribe()
            seen = silent(count)
        self._node.get_logger().warning(f'still waiting for the robot description on {topic}: '
                                        f'{seen}')

    def _callback(self, msg):
        if self.urdf is not None:
            if msg.data != self.urdf and self._first_time(msg.data):
                self._node.get_logger().warning(
                    'a different robot description arrived; keeping the model in use (restart '
                    'this node to change robots)')
            return
        try:
            model = RobotModel.from_urdf(msg.data, **self._options)
        except Exception as exc:  # noqa: B902 - whatever a parser raises: one line, no traceback
            self._refused = True
            if self._first_time(msg.data):
                what = str(exc) if isinstance(exc, RobotDynamicsError) else \
                    f'{type(exc).__name__}: {exc}'
                self._node.get_logger().error(f'refused the robot description '
                                              f'({len(msg.data)} characters): '
                                              f'{shortened(what, MESSAGE_LIMIT)}; waiting for a '
                                              'usable one')
            return
        self.urdf = msg.data
        self.model = model
        self._node.destroy_timer(self._reminder)
        # the set-up below loads the library's kernels from numba's cache, or compiles them
        # (minutes) on a new install that skipped `python -m robot_dynamics.precompile`
        self._node.get_logger().info(
            f'model {model!r} from the robot description; loading the compiled kernels (the '
            'first start of an install compiles them: a minute or more)')
        self._on_model(model)
        # the node is set up (and its kernels compiled): the heap it runs on stays
        freeze_heap()

    def _first_time(self, text):
        """Return whether ``text`` is a description not reported yet (and a line is due)."""
        key = hash(text)
        if key in self._reported or not self._throttle('description', 1.0):
            return False
        if len(self._reported) < REPORTED_LIMIT:
            self._reported.add(key)
        return True
