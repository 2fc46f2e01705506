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
What a node does while its robot description or its joint states do not come, or are unusable.

The nodes' own code over what it reads of its node, in one process: the description through
:class:`~robot_dynamics.ros.nodes.description.ModelSubscription` (every node's), the joint
states' reminder through the controller node's :meth:`ControllerNode.watch` on a graph's
controller that took no state yet (``test/graph_harness.py``, the watchdog's calls on the test's
clock). The middleware's part is a count of publishers the test gives. Truth: the words each
line must hold (the problem named, what is seen), the model of the bundled SCARA's URDF.

Through the processes (test/ros/test_adversarial.py): a kinematics node and a controller that
heard nothing subscribe again, and take the description and the state that then come.
"""

from types import SimpleNamespace

from graph_harness import LoopGraph
import pytest
from robot_dynamics import RobotModel
from robot_dynamics.model import chain_options
from robot_dynamics.robots import path as robot_path
from robot_dynamics.ros.nodes import description
from robot_dynamics.ros.nodes.controller_node import ControllerNode
from robot_dynamics.ros.nodes.description import ModelSubscription, REMINDER_PERIOD
from robot_dynamics.ros.nodes.throttle import Throttle
from robot_dynamics.ros.wire.qos import DESCRIPTION_QOS

#: The stamp of a log line as rclpy's console writes it (seconds of the system clock).
STAMP = '1800000000.123456789'
#: The chain parameters' defaults (every node's, unless the parameter files give others).
DEFAULTS = chain_options(lambda name, default: default)


@pytest.fixture(autouse=True)
def _unfrozen(monkeypatch):
    # a node freezes its heap once its model is built: the heap of the test's process is not
    # the node's to freeze
    monkeypatch.setattr(description, 'freeze_heap', lambda: None)


class _Subscription:
    """A subscription of a :class:`_Node`: its topic (remapped), callback and QoS."""

    def __init__(self, node, topic, callback, qos):
        self.node, self.topic_name, self.callback, self.qos = node, topic, callback, qos

    def get_publisher_count(self):
        return self.node.publishers


class _Node:
    """
    What the nodes' own code reads of its node: subscriptions, timers and the log.

    Its topics are remapped to ``topic``; ``publishers`` is the middleware's count of the
    topic's publishers. Log lines are kept as ``(severity, message)`` in :attr:`lines`.
    """

    def __init__(self, name, topic, publishers=0):
        self.name, self.topic, self.publishers = name, topic, publishers
        self.subscriptions, self.destroyed = [], []
        self.timers, self.destroyed_timers = [], []
        self.lines = []

    def get_logger(self):
        return self

    def info(self, line):
        self.lines.append(('INFO', line))

    def warning(self, line):
        self.lines.append(('WARN', line))

    def error(self, line):
        self.lines.append(('ERROR', line))

    def said(self, words):
        """Return the lines that hold ``words``, as rclpy's console writes them."""
        return [f'[{severity}] [{STAMP}] [{self.name}]: {line}'
                for severity, line in self.lines if words in line]

    def create_subscription(self, msg_type, topic, callback, qos, **kwargs):
        self.subscriptions.append(_Subscription(self, self.topic, callback, qos))
        return self.subscriptions[-1]

    def destroy_subscription(self, subscription):
        self.destroyed.append(subscription)

    def create_timer(self, period, callback, **kwargs):
        self.timers.append((period, callback))
        return self.timers[-1]

    def destroy_timer(self, timer):
        self.destroyed_timers.append(timer)

    def remind(self):
        """Call the reminder timer's callback, as its period has passed."""
        [(period, remind)] = self.timers
        assert period == REMINDER_PERIOD
        remind()

    def send(self, text):
        """Deliver the description ``text`` through the newest subscription."""
        self.subscriptions[-1].callback(SimpleNamespace(data=text))


def _waiting(name, topic, publishers=0):
    """Return a node waiting for its description on ``topic``, and the models it was given."""
    node, models = _Node(name, topic, publishers), []
    node.description = ModelSubscription(node, 'robot_description', DEFAULTS, models.append)
    return node, models


def test_unusable_descriptions_are_refused_and_the_node_keeps_waiting():
    urdf = robot_path('scara').read_text()
    for text, topic, words in (
            ('x' * 5_000_000, '/garbage_description',
             ['not XML', "'xxxx", '5000000 characters']),
            (urdf.replace('upper="2.5"', 'upper="nan"', 1), '/nan_description',
             ["joint 'elbow'", 'upper="nan"'])):
        node, models = _waiting('late_node', topic, publishers=1)
        node.send(text)
        # one error line naming the problem, shortened
        [line] = node.said('refused the robot description')
        assert line.startswith('[ERROR]') and all(w in line for w in words) and len(line) < 800, \
            line
        assert not models and node.description.model is None
        # still waiting, it says so, and what it sees
        node.remind()
        assert node.said(f'still waiting for the robot description on {topic}: what came was '
                         'refused'), node.lines
        assert not node.destroyed


def test_a_node_still_waiting_says_what_it_sees_and_subscribes_again_when_nothing_came():
    nobody, _ = _waiting('waiting_kinematics_nobody', '/nobody_description')
    nobody.remind()
    [line] = nobody.said('still waiting')
    assert line.startswith('[WARN]') and \
        'still waiting for the robot description on /nobody_description: no node publishes it' \
        in line, line
    assert not nobody.destroyed and len(nobody.subscriptions) == 1
    silent, models = _waiting('waiting_kinematics_silent', '/silent_description', publishers=1)
    silent.remind()
    [line] = silent.said('still waiting')
    assert line.startswith('[WARN]') and \
        'still waiting for the robot description on /silent_description: 1 publisher of it, ' \
        'and nothing came (subscribed again)' in line, line
    # the old subscription destroyed, a new one of the same QoS made (a new reader, which the
    # transient-local writer sends its history again)
    first, again = silent.subscriptions
    assert silent.destroyed == [first] and again.qos == DESCRIPTION_QOS
    # the description through the new subscription builds the model
    silent.send(robot_path('scara').read_text())
    assert silent.said("model RobotModel('scara'")
    [model] = models
    assert model.name == 'scara' and model.joint_names == \
        RobotModel.load('scara').joint_names
    # and the reminder ends
    assert silent.destroyed_timers == silent.timers


def test_a_different_description_for_a_node_with_a_model_is_ignored_with_one_warning():
    node, models = _waiting('controller', '/robot_description', publishers=1)
    urdf = robot_path('scara').read_text()
    node.send(urdf)
    [model] = models
    for _ in range(3):
        node.send('<robot name="other"/>')
    [line] = node.said('a different robot description')
    assert line.startswith('[WARN]'), line
    # the model in use stays: the node was given one model, the one of its description
    assert models == [model] and node.description.model is model
    assert node.description.urdf == urdf


class _Controller:
    """
    What the controller node's :meth:`ControllerNode.watch` reads of its node.

    A graph's controller that took no state yet, its throttle on the graph's clock; the joint
    states' subscription on ``topic`` (``publishers`` its count of publishers), the state thread
    that waits on it, the log (:attr:`lines`: ``(severity, message)``, with the clock's time).
    """

    watch = ControllerNode.watch
    _remind_states = ControllerNode._remind_states
    _subscribe_states = ControllerNode._subscribe_states

    def __init__(self, arm, topic, publishers):
        self.controller, self.cycling, self.clock = arm.controller, arm.cycling, arm.clock
        self.throttle = Throttle(arm.clock)
        self._unnamed_sources = None
        self._states_qos = 'the QoS of the joint states'
        self.publishers, self.topic = publishers, topic
        self.subscriptions, self.lines = [], []
        self._joint_states = self.create_subscription(None, 'joint_states', None,
                                                      self._states_qos)
        self.state_thread = SimpleNamespace(
            resubscribe=lambda subscription: setattr(self, 'waiting_on', subscription))
        self.waiting_on = self._joint_states

    def get_logger(self):
        return self

    def warning(self, line):
        self.lines.append((self.clock(), 'WARN', line))

    def create_subscription(self, msg_type, topic, callback, qos, **kwargs):
        self.subscriptions.append(_Subscription(self, self.topic, callback, qos))
        return self.subscriptions[-1]

    def _now(self):
        return self.clock()


def test_a_controller_without_joint_states_says_so_every_reminder_period():
    for topic, publishers, seen in (
            ('/nobody_joint_states', 0, 'no node publishes them'),
            ('/silent_joint_states', 1, '1 publisher of it, and nothing came (subscribed again)')):
        arm = LoopGraph('scara', lockstep=False)
        arm.kill_simulator()
        node = _Controller(arm, topic, publishers)
        # the watchdog's calls, every period of it, for 2.5 reminder periods (the node's set-up
        # holds the first reminder back a period; here the first call is the first reminder)
        while arm.clock() < 2.5 * REMINDER_PERIOD:
            node.watch()
            arm.clock.advance(arm.watch.period)
        assert arm.controller.time is None and not arm.cycles
        times = [t for t, _, _ in node.lines]
        assert len(times) == 3 and times[2] - times[1] == pytest.approx(REMINDER_PERIOD,
                                                                        abs=arm.watch.period)
        assert times[1] - times[0] == pytest.approx(REMINDER_PERIOD, abs=arm.watch.period)
        for _, severity, line in node.lines:
            assert severity == 'WARN' and \
                line.startswith(f'still waiting for joint states on {topic}: {seen}'), line
        # subscribed again at each reminder while a publisher is seen, and the state thread
        # waits on the newest subscription
        assert len(node.subscriptions) == 1 + (3 if publishers else 0)
        assert node.waiting_on is node.subscriptions[-1]
        assert all(s.qos == node._states_qos for s in node.subscriptions)
