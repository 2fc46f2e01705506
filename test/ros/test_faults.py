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
The graph under load: floods of bad messages during a motion, IK clients in parallel.

A simulator or a controller killed, and a new one started, run on the test's clock in
test/core/test_graph_faults.py (the same loop and watchdog as the nodes); a simulation's first
state delivered late to a controller on simulated time, through the node's own callback, in
test/core/test_graph_inputs.py.
"""

import json
import textwrap
import time

from closed_loop import PACED, quintic, SUCCEEDED
import numpy as np
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from robot_dynamics_interfaces.msg import SimulatorStatus
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = pytest.mark.ros

COMMANDS = '/effort_controller/commands'
#: Bad messages of each kind in a flood, sent at 1 kHz: three times as many commands as the
#: simulator must count rejected (all of them came in runs beside another suite).
FLOOD = 3000
#: The flood's publisher: matches the lockstep simulator's transient-local reader.
FLOOD_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.TRANSIENT_LOCAL)


def _bad_trajectories(model):
    names = list(model.joint_names)
    point = JointTrajectoryPoint(positions=[0.1] * model.dof)
    point.time_from_start.sec = 1
    nan = JointTrajectoryPoint(positions=[float('nan')] * model.dof)
    nan.time_from_start.sec = 1
    short = JointTrajectoryPoint(positions=[0.1])
    short.time_from_start.sec = 1
    return [JointTrajectory(joint_names=['elbow'] + names[1:], points=[point]),
            JointTrajectory(joint_names=names, points=[nan]),
            JointTrajectory(joint_names=names, points=[short]),
            JointTrajectory(joint_names=names, points=[])]


def test_floods_of_malformed_messages(loop, probe):
    # in lockstep, so that the flood, which takes a core, starves no deadline of the loop: the
    # lockstep simulator takes commands from transient-local publishers (as the controller's);
    # paced to the wall clock, so that the motion lasts at least as long as the flood
    arm = loop('planar_2r', simulator=PACED)
    model = arm.model
    statuses = probe.collect(SimulatorStatus, '/simulator/status')
    # not the controller's QoS: its history keeps 1,000 commands to resend, which would hand
    # a starved simulator a backlog of the flood to reject
    commands = probe.node.create_publisher(Float64MultiArray, COMMANDS, FLOOD_QOS)
    trajectories = probe.node.create_publisher(JointTrajectory, '/controller/joint_trajectory',
                                               100)
    probe.wait_for(lambda: trajectories.get_subscription_count() > 0, what='the controller')
    q0 = arm.position()
    goal, path = quintic(model, q0, q0 + [0.4, 0.3], FLOOD / 1000 + 1.0)
    handle = arm.send(goal, goal_time=2.0)
    bad_commands = [[float('nan'), 0.0], [1.0], [1.0, 2.0, 3.0], [float('inf'), 1.0]]
    bad_trajectories = _bad_trajectories(model)
    # FLOOD of each at up to 1 kHz per topic, the loop's own rate, during the motion (as fast
    # as Python publishes, or at 2 kHz in the whole suite, the flood takes more CPU than the
    # 2-core machine has)
    start = time.monotonic()
    for k in range(FLOOD):
        commands.publish(Float64MultiArray(data=bad_commands[k % 4]))
        trajectories.publish(bad_trajectories[k % 4])
        time.sleep(max(0.0, start + k * 1e-3 - time.monotonic()))
    # the motion in between is served: the goal succeeds, on its path
    result = arm.result(handle)
    assert result.status == SUCCEEDED, result.result.error_string
    np.testing.assert_allclose(arm.position(), path.end, atol=1e-3)
    probe.wait_for(lambda: statuses and statuses[-1][0].rejected_commands > 1000,
                   what='the rejected commands counted')
    for proc in arm.procs:
        assert proc.poll() is None, arm.processes.output(proc)
    # logs throttled: a few lines, not one per message
    simulator_log = arm.processes.output(arm.simulator)
    controller_log = arm.processes.output(arm.controller)
    assert 0 < simulator_log.count('rejected command') < 100
    assert 0 < controller_log.count('trajectory rejected') < 100


CLIENT = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from robot_dynamics import RobotModel
    from robot_dynamics.ros.wire.compat import spin_until_complete
    from robot_dynamics.ros.wire.conversions import matrix_to_pose
    from robot_dynamics.ros.wire.qos import SERVICE_CLIENT
    from robot_dynamics_interfaces.srv import SolveIK

    seed, calls = int(sys.argv[1]), int(sys.argv[2])
    model = RobotModel.load('scara')
    rng = np.random.default_rng(seed)
    rclpy.init()
    node = Node(f'ik_client_{seed}')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    client = node.create_client(SolveIK, '/compute_ik', qos_profile=SERVICE_CLIENT)
    client.wait_for_service(timeout_sec=120.0)
    lo, hi = model.lower * 0.9, model.upper * 0.9
    latency, wrong, failed, lost = [], 0, 0, 0
    for _ in range(calls):
        target = model.fk(rng.uniform(lo, hi))
        request = SolveIK.Request()
        request.pose_stamped.pose = matrix_to_pose(target)
        start = time.perf_counter()
        future = client.call_async(request)
        # not rclpy.spin_until_future_complete: on Jazzy, it costs more CPU at each call
        spin_until_complete(executor, future, 60.0)
        latency.append(time.perf_counter() - start)
        if not future.done():
            lost += 1
            client.remove_pending_request(future)
            continue
        response = future.result()
        if not response.success:
            failed += 1
            continue
        reached = model.fk(np.array(response.solution.position))
        if np.abs(reached[:3, 3] - target[:3, 3]).max() > 1e-6:
            wrong += 1             # a reply to someone else's request
    print(json.dumps({'calls': calls, 'failed': failed, 'wrong': wrong, 'lost': lost,
                      'latency_ms': [x * 1e3 for x in latency]}))
""")


def test_four_ik_clients_in_parallel_each_get_their_own_replies(processes, tmp_path):
    processes.start('model', ['model_node', '--ros-args', '-r', '__node:=model',
                              '-p', 'robot:=scara'])
    processes.start('kinematics', ['kinematics_node', '--ros-args', '-r', '__node:=kinematics',
                                   '-r', '~/solve_ik:=/compute_ik'])
    script = tmp_path / 'client.py'
    script.write_text(CLIENT)
    clients = [processes.start(f'client_{k}', ['python', str(script), str(k), '1000'])
               for k in range(4)]
    results = []
    for proc in clients:
        assert proc.wait(600) == 0, processes.output(proc)
        results.append(json.loads(processes.output(proc).strip().splitlines()[-1]))
    latency = np.concatenate([r['latency_ms'] for r in results])
    assert sum(r['calls'] for r in results) == 4000 and latency.size == 4000
    # every reply came (none lost in the clients' queues), each to its own request
    assert sum(r['lost'] for r in results) == 0
    assert sum(r['failed'] for r in results) == 0
    assert sum(r['wrong'] for r in results) == 0
    print(f'4 x 1000 /compute_ik calls in parallel: latency median {np.median(latency):.2f} ms, '
          f'p99 {np.percentile(latency, 99):.2f} ms, max {latency.max():.0f} ms')
