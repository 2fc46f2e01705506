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

Through the processes the topics of the interfaces that no other closed loop uses: velocity
to a goal, position through a stall and a stop (the effort interface is every other loop's).
The others' goals and safe commands on the test's clock: test/core/test_graph_interfaces.py.
"""

import os
import signal

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
    assert processes.stop(bringup) == 0, processes.output(bringup)
    assert processes.stop(arm) == 0, processes.output(arm)


def test_a_stall_and_the_stop_send_the_safe_command(processes, probe):
    # real time, as on an arm: its joint states stop (the process is stopped), then bringup is.
    # The position interface: its safe command, the last measured position, is in the
    # hardware's joint order
    interface = 'position'
    model = RobotModel.load('planar_2r')
    topic = f'/{interface}_controller/commands'
    states = probe.collect(JointState, '/joint_states')
    commands = probe.collect(Float64MultiArray, topic)
    controller = probe.collect(ControllerState, '/controller/state')
    arm = _hardware(processes, interface)
    bringup = _hardware_bringup(processes, '--robot', 'planar_2r',
                                '-p', f'controller.command_interface:={interface}',
                                '-p', 'controller.joints:=[joint2, joint1]')
    action = ActionClient(probe.node, FollowJointTrajectory, ACTION)
    probe.wait_for(action.server_is_ready, what='the controller')
    probe.wait_for(lambda: controller and controller[-1][0].mode == 'hold',
                   what='the controller holding')
    probe.wait_for(lambda: states, what='joint states')

    def position():
        last = states[-1][0]
        return np.array(last.position)[model.indices_in(last.name)]

    def moving():
        # real time on a shared machine: a stall at the start may end a goal in safe mode
        # (tested on its own); then the arm is sent again from where it is
        q0 = position()
        trajectory, _ = quintic(model, q0, q0 + [0.6, -0.6], 4.0)
        sent = action.send_goal_async(FollowJointTrajectory.Goal(trajectory=trajectory))
        handle = probe.wait_for(lambda: sent.done() and sent.result(), what='the goal response')
        result = handle.get_result_async()
        probe.wait_for(lambda: result.done() or np.abs(states[-1][0].velocity).max() > 0.1,
                       what='the arm moving, or its goal ended')
        return not result.done()
    probe.wait_for(moving, what='a goal that moves the arm')

    def safe(command):      # in the controller's joint order: joint2, joint1
        return np.allclose(command.data, states[-1][0].position, rtol=0, atol=1e-3)
    os.kill(arm.pid, signal.SIGSTOP)             # no joint state comes any more
    try:
        count = len(commands)
        probe.wait_for(lambda: any(safe(m) for m, _ in commands[count:]),
                       what='the safe command after the stall')
        probe.wait_for(lambda: 'safe mode' in processes.output(bringup), what='the log line')
        # it is repeated while the states stay stale: a driver that missed one gets the next
        count = len(commands)
        probe.wait_for(lambda: sum(safe(m) for m, _ in commands[count:]) >= 3,
                       what='the safe command again')
    finally:
        os.kill(arm.pid, signal.SIGCONT)
    probe.wait_for(lambda: controller[-1][0].mode == 'hold', what='holding again')
    assert processes.stop(bringup) == 0, processes.output(bringup)
    # the last command the drives got: the safe command, for the arm where it was last seen
    assert 'stopping: sent the safe command' in processes.output(bringup)
    probe.wait_for(lambda: safe(commands[-1][0]), what='the final command')
    assert processes.stop(arm) == 0


def test_refuses_joint_states_that_do_not_cover_the_model(processes, probe):
    publisher = probe.node.create_publisher(JointState, '/joint_states', 10)
    bringup = _hardware_bringup(processes, '--robot', 'planar_2r',
                                '-p', 'controller.startup_timeout:=5.0')

    def refused():
        publisher.publish(JointState(name=['joint1', 'gripper'], position=[0.1, 0.0],
                                     velocity=[0.0, 0.0]))
        return bringup.poll() is not None
    probe.wait_for(refused, what='bringup to give up')
    assert bringup.returncode == 1
    output = processes.output(bringup)
    assert 'do not fit the model' in output and "missing ['joint2']" in output, output


def test_refuses_an_effort_interface_without_effort_limits(processes, tmp_path):
    urdf = RobotModel.load('planar_2r').to_urdf()
    # joint2's effort limit removed: URDF's effort="0" reads as "no limit"
    head, tail = urdf.split('name="joint2"', 1)
    tail = tail.replace('effort="100.0"', 'effort="0"', 1)
    (tmp_path / 'arm.urdf').write_text(head + 'name="joint2"' + tail)
    params = tmp_path / 'arm.yaml'
    params.write_text(f'model:\n  ros__parameters:\n    urdf_file: {tmp_path / "arm.urdf"}\n')
    bringup = _hardware_bringup(processes, '--params-file', str(params))
    assert bringup.wait(180) == 1
    output = processes.output(bringup)
    assert "no effort limit for joints ['joint2']" in output, output


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
