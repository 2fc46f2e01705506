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
The hardware path: bringup --hardware against the simulator standing in for a real arm.

Through the processes what needs them: the velocity interface (the one no other closed loop
uses) to a goal in the hardware's joint order, the final command of a stop (SIGINT) over the
wire, and the warning when nothing subscribes to the commands (the middleware's subscription
count). The refusals of the hardware checks and the position interface's safe command after a
stall and on a stop, on the test's clock: test/core/test_graph_hardware.py; the other
interfaces' goals and safe commands: test/core/test_graph_interfaces.py.
"""

from closed_loop import at_rest, quintic, SUCCEEDED
from control_msgs.action import FollowJointTrajectory
import numpy as np
import pytest
from robot_dynamics import RobotModel
from robot_dynamics.ros.wire.compat import ActionClient
from robot_dynamics.ros.wire.conversions import duration_msg
from robot_dynamics_interfaces.msg import ControllerState
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

pytestmark = pytest.mark.ros

ACTION = '/controller/follow_joint_trajectory'


def _hardware_bringup(processes, *args):
    return processes.start('bringup', ['robot-dynamics', 'bringup', '--hardware', '--processes',
                                       *args])


def _hardware(processes, interface, *parameters):
    """Start the "hardware": its own joint order, its own process, no parameter file of ours."""
    args = ['simulator_node', '--ros-args', '-r', '__node:=simulator',
            '-p', f'command_interface:={interface}', '-p', 'joints:=[joint2, joint1]',
            '-p', 'initial_positions:=[0.8, 0.4]']
    for parameter in parameters:
        args += ['-p', parameter]
    return processes.start('hardware', args)


def test_the_velocity_interface_end_to_end(processes, probe):
    interface = 'velocity'
    model = RobotModel.load('planar_2r')
    states = probe.collect(JointState, '/joint_states')
    controller = probe.collect(ControllerState, '/controller/state')
    # an arm simulated in lockstep, on simulated time: its motion does not depend on the host
    arm = _hardware(processes, interface, 'lockstep:=true', 'realtime:=false')
    bringup = _hardware_bringup(processes, '--robot', 'planar_2r',
                                '-p', f'controller.command_interface:={interface}',
                                '-p', 'controller.joints:=[joint2, joint1]',
                                '-p', 'controller.use_sim_time:=true')
    action = ActionClient(probe.node, FollowJointTrajectory, ACTION)
    probe.wait_for(action.server_is_ready, what='the controller')
    probe.wait_for(lambda: controller and controller[-1][0].mode == 'hold',
                   what='the controller holding')
    # the controller may hear the arm before this probe's own subscription has matched it; an
    # arm under effort sags while a loaded controller is late, and swings back to where it holds
    probe.wait_for(lambda: at_rest(states), what='the held arm at rest')

    def position():
        last = states[-1][0]
        return np.array(last.position)[model.indices_in(last.name)]
    q0 = position()
    # held where it is, in the controller's joint order (the hardware's, not the model's)
    held = next(m for m, _ in reversed(list(controller)) if m.mode == 'hold')
    assert list(held.joint_names) == ['joint2', 'joint1']
    np.testing.assert_allclose(np.array(held.reference.positions)[model.indices_in(
        held.joint_names)], q0, atol=1e-3)
    trajectory, path = quintic(model, q0, q0 + [0.5, -0.5], 2.0)
    goal = FollowJointTrajectory.Goal(trajectory=trajectory, goal_time_tolerance=duration_msg(2))
    sent = action.send_goal_async(goal)
    handle = probe.wait_for(lambda: sent.done() and sent.result(), what='the goal response')
    future = handle.get_result_async()
    probe.wait_for(future.done, what='the result')
    assert future.result().status == SUCCEEDED, future.result().result.error_string

    # the velocity follower converges to the goal through its position feedback
    tolerance = 1e-6
    probe.wait_for(lambda: np.abs(position() - path.end).max() < tolerance, timeout=10.0,
                   what=f'the arm on the goal within {tolerance:g}')
    # the last command the drives get, over the wire once the controller is stopped: the safe
    # command (zero velocity; holding, the command is the feedback on an error not yet zero)
    commands = probe.collect(Float64MultiArray, f'/{interface}_controller/commands')
    probe.wait_for(lambda: commands, what='the commands')
    assert processes.stop(bringup) == 0, processes.output(bringup)
    assert 'stopping: sent the safe command [0.0, 0.0]' in processes.output(bringup)
    probe.wait_for(lambda: not np.any(commands[-1][0].data), what='the final command')
    assert processes.stop(arm) == 0, processes.output(arm)


def test_warns_when_nothing_takes_the_commands(processes, probe):
    publisher = probe.node.create_publisher(JointState, '/joint_states', 10)
    # the start-up checks come after startup_timeout: time enough for discovery on a busy machine
    bringup = _hardware_bringup(processes, '--robot', 'planar_2r',
                                '-p', 'controller.startup_timeout:=5.0',
                                '-p', 'controller.state_timeout:=5.0')

    def warned():
        publisher.publish(JointState(name=['joint2', 'joint1'], position=[0.5, 0.1],
                                     velocity=[0.0, 0.0]))
        assert bringup.poll() is None, processes.output(bringup)
        return 'nothing subscribes to /effort_controller/commands' in processes.output(bringup)
    probe.wait_for(warned, what='the warning')
    assert bringup.poll() is None              # a warning: it goes on
    assert processes.stop(bringup) == 0
