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
The controller's decisions for a real arm (``bringup --hardware``), on the test's clock.

The refusals of the hardware checks are the controller node's own methods
(:meth:`ControllerNode._check_effort_limits`, :meth:`ControllerNode.joint_state_callback`)
over what they read of their node: a model from an edited URDF, a graph's controller that took
no state yet. The position interface's safe command after a stall of the states and on a stop
is the node's loop on planar_2r (``test/graph_harness.py``, real time, the shipped
``state_timeout``), the stop through the node's :meth:`ControllerNode.send_final_command`, in
the hardware's joint order (joint2, joint1: planar_2r's reversed). Truth: the joint named
missing, the joint whose limit was removed, the last measured position.

Through the processes (test/ros/test_hardware.py): a hardware bringup end to end with the
velocity interface and the final command of its stop over the wire, and the warning when
nothing subscribes to the commands (the middleware's subscription count).
"""

import threading
from types import SimpleNamespace

from graph_harness import LoopGraph
import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from robot_dynamics import RobotModel
from robot_dynamics.controller import Mode
from robot_dynamics.events import Kind
from robot_dynamics.follower import Goal
from robot_dynamics.model import chain_options
from robot_dynamics.plant import Interface
from robot_dynamics.ros.nodes.controller_node import ControllerNode
from robot_dynamics.ros.nodes.runner import StartupError
from robot_dynamics.ros.nodes.throttle import Throttle
from robot_dynamics.ros.wire.cdr import JointStateReader
from robot_dynamics.ros.wire.conversions import JointMap, time_msg
from robot_dynamics.trajectory import point_to_point
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

#: The hardware's joint order: planar_2r's (joint1, joint2) reversed.
HARDWARE_JOINTS = ['joint2', 'joint1']


class _Node:
    """
    What the controller node's own methods read of their node, over a graph's controller.

    Its command publisher keeps the serialized commands (:attr:`sent`), its log the lines
    (:attr:`lines`); the events of a final command go to the graph's.
    """

    def __init__(self, arm, joints, hardware=True):
        self.model, self.controller, self.cycling = arm.model, arm.controller, arm.cycling
        self.reader = JointStateReader(arm.model, 'joint_states')
        self.joints = JointMap(arm.model, joints)
        self.params = SimpleNamespace(hardware=hardware)
        self.sim_time = False
        self.throttle = Throttle(arm.clock)
        self.command_publisher = self
        self.context = SimpleNamespace(ok=lambda: True)
        self._lock = threading.Lock()
        self._final_sent = False
        self.report = arm.report
        self.sent, self.lines = [], []
        self._clock = arm.clock

    def get_logger(self):
        return self

    def info(self, line):
        self.lines.append(line)

    error = warning = info

    def publish(self, data):
        self.sent.append(deserialize_message(data, Float64MultiArray).data.tolist())

    def wait_for_all_acked(self, timeout):
        return True

    def _now(self):
        return self._clock()


def test_refuses_joint_states_that_do_not_cover_the_model():
    # the controller alone: the hardware's first state comes before any usable one
    arm = LoopGraph('planar_2r', lockstep=False)
    arm.kill_simulator()
    node = _Node(arm, arm.model.joint_names)
    msg = JointState(name=['joint1', 'gripper'], position=[0.1, 0.0], velocity=[0.0, 0.0])
    msg.header.stamp = time_msg(arm.clock.system_ns())
    # raised in the callback: the node logs it as fatal and exits with status 1 (its runner)
    with pytest.raises(StartupError) as refused:
        ControllerNode.joint_state_callback(node, serialize_message(msg), None)
    output = str(refused.value)
    assert 'do not fit the model' in output and "missing ['joint2']" in output, output
    assert not arm.cycles and arm.controller.time is None


def test_refuses_an_effort_interface_without_effort_limits():
    urdf = RobotModel.load('planar_2r').to_urdf()
    # joint2's effort limit removed: URDF's effort="0" reads as "no limit"
    head, tail = urdf.split('name="joint2"', 1)
    tail = tail.replace('effort="100.0"', 'effort="0"', 1)
    # as the controller builds its model from the description, with the default chain
    model = RobotModel.from_urdf(head + 'name="joint2"' + tail, **chain_options({}.get))
    assert np.isfinite(model.effort_limit[0]) and np.isinf(model.effort_limit[1])
    with pytest.raises(StartupError) as refused:
        ControllerNode._check_effort_limits(SimpleNamespace(model=model,
                                                            interface=Interface.EFFORT))
    output = str(refused.value)
    assert "no effort limit for joints ['joint2']" in output, output
    # the other interfaces send no effort: nothing to limit
    ControllerNode._check_effort_limits(SimpleNamespace(model=model,
                                                        interface=Interface.POSITION))


def test_a_stall_and_the_stop_send_the_safe_command():
    # real time, as on an arm: its joint states stop (the process is stopped), then the
    # controller is. The position interface: its safe command, the last measured position, is
    # in the hardware's joint order
    arm = LoopGraph('planar_2r', lockstep=False, simulator={'command_interface': 'position'},
                    controller={'command_interface': 'position'})
    assert list(arm.model.joint_names) == HARDWARE_JOINTS[::-1]
    node = _Node(arm, HARDWARE_JOINTS)
    q0 = arm.hold_at_rest()
    times = np.linspace(0.0, 4.0, 21)
    sample = point_to_point(q0, q0 + [0.6, -0.6], 4.0, 'quintic').sample(times)
    arm.submit(Goal('goal', None, times, sample.q, sample.qd, sample.qdd, arm.tolerances))
    arm.run_until(lambda: np.abs(arm.states[-1].qd).max() > 0.1, 4.0, 'the arm moving')

    def safe(command, q):
        # as the node sends it, against the state's position in the hardware's order
        return np.allclose(node.joints.model_to_names(command), q[::-1], rtol=0, atol=1e-3)
    last = arm.states[-1].q
    count = len(arm.cycles)
    arm.stall_simulator()             # no joint state comes any more
    arm.run_until(lambda: any(safe(c.command, last) for c in arm.cycles[count:]), 1.0,
                  'the safe command after the stall')
    assert [e for e in arm.said('safe mode') if e.kind is Kind.SAFE_MODE], arm.events
    # it is repeated while the states stay stale: a driver that missed one gets the next
    count = len(arm.cycles)
    arm.run_until(lambda: sum(safe(c.command, last) for c in arm.cycles[count:]) >= 3, 1.0,
                  'the safe command again')
    assert all(c.mode is Mode.SAFE and safe(c.command, last) for c in arm.cycles[count:])
    arm.resume_simulator()
    arm.run_until(lambda: arm.mode() is Mode.HOLD, 1.0, 'holding again')
    ControllerNode.send_final_command(node)
    # the last command the drives got: the safe command, for the arm where it was last seen
    assert any('stopping: sent the safe command' in line for line in node.lines), node.lines
    [final] = node.sent
    np.testing.assert_allclose(final, arm.states[-1].q[::-1], rtol=0, atol=1e-3)
