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
Two arms in one domain, each in its namespace, and their statuses on ``/diagnostics``.

``bringup --namespace left`` (scara, one process) and ``--namespace right`` (planar_2r, one
process per node), both in lockstep paced to the wall clock: deterministic figures (no latency,
no missed cycle) whatever the host does, and one recorder of both namespaces. The tests run in
order on the one graph of the module: names, parameters, IK, the recording, a goal to one arm,
the statuses, a saturating goal, a stopped simulator and, last, a killed one. The safe mode of a
controller whose simulator died: test/core/test_graph_faults.py.
"""

import os
from pathlib import Path
import signal

from closed_loop import quintic, SUCCEEDED
from control_msgs.action import FollowJointTrajectory
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import PoseStamped
import numpy as np
import pytest
import rcl_interfaces.msg
from rcl_interfaces.srv import GetParameters
from rclpy.parameter import Parameter
from robot_dynamics import recordings, RobotModel
from robot_dynamics.controller import DEFAULT_WALL_STATE_TIMEOUT
from robot_dynamics.ros.tools import definitions
from robot_dynamics.ros.wire.compat import ActionClient
from robot_dynamics.ros.wire.conversions import matrix_to_pose
from robot_dynamics.spatial import pose_error
from robot_dynamics_interfaces.msg import ControllerState
from robot_dynamics_interfaces.srv import SolveIK
from sensor_msgs.msg import JointState

pytestmark = pytest.mark.ros

ARMS = {'left': 'scara', 'right': 'planar_2r'}
NODES = ('model', 'kinematics', 'simulator', 'controller')
#: Largest motion [rad or m] of a holding arm while the other one moves.
HOLD = 1e-3
#: The requests the IK test sent to each arm's /compute_ik (what its diagnostics count).
IK_REQUESTS = {}
OK, WARN, ERROR = (ord(level) for level in (DiagnosticStatus.OK, DiagnosticStatus.WARN,
                                            DiagnosticStatus.ERROR))


def _bringup(processes, namespace, *extra):
    proc = processes.start(f'bringup_{namespace}', [
        'robot-dynamics', 'bringup', '--robot', ARMS[namespace], '--namespace', namespace,
        '--lockstep', '-p', 'simulator.realtime:=true', *extra])
    return proc


@pytest.fixture(scope='module')
def arms(module_processes, module_probe, tmp_path_factory):
    """Return ``{namespace: bringup process, 'recorder': (process, its file)}`` once all run."""
    procs = {'left': _bringup(module_processes, 'left'),
             'right': _bringup(module_processes, 'right', '--processes')}
    for namespace, proc in procs.items():
        module_probe.wait_for(
            lambda: 'running; Ctrl-C' in module_processes.output(proc) or proc.poll() is not None,
            timeout=240.0, what=f'the {namespace} arm')
        assert proc.poll() is None, module_processes.output(proc)
    path = tmp_path_factory.mktemp('recording') / 'cell.mcap'
    procs['recorder'] = (module_processes.start('recorder', [
        'recorder_node', '--ros-args', '-p', f'path:={path}', '-p',
        'namespaces:=[/left, /right]']), path)
    return procs


def _level(status):
    return ord(status.level) if isinstance(status.level, bytes) else status.level


def _statuses(collected, name, since=0):
    """Return the statuses named ``name`` among the collected DiagnosticArrays from ``since``."""
    return [status for array, _ in list(collected)[since:] for status in array.status
            if status.name == name]


def _values(status):
    """Return a DiagnosticStatus's values as a dict."""
    return {v.key: v.value for v in status.values}


def _child(parent, executable):
    """Return the pid of the process ``parent`` started for ``executable``."""
    for entry in Path('/proc').iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / 'stat').read_text().rsplit(')', 1)[1].split()
                command = (entry / 'cmdline').read_bytes().split(b'\0')
            except OSError:
                continue
            if int(stat[1]) == parent and any(part.endswith(executable.encode())
                                              for part in command):
                return int(entry.name)
    raise AssertionError(f'no {executable} process of {parent}')


def _listed(probe, names_and_types, wanted):
    """Return the names ``names_and_types()`` lists once ``wanted`` are among them."""
    found = set()

    def complete():
        found.clear()
        found.update(name for name, _ in names_and_types())
        return wanted <= found

    probe.wait_for(complete, what=', '.join(sorted(wanted)))
    return found


def test_every_name_is_the_arms_own(arms, probe):
    node = probe.node
    wanted = {(name, f'/{namespace}') for namespace in ARMS for name in NODES}
    probe.wait_for(lambda: wanted <= set(node.get_node_names_and_namespaces()),
                   what="both arms' nodes")
    assert not {name for name, namespace in node.get_node_names_and_namespaces()
                if namespace == '/'} & set(NODES)

    def endpoints(topic):
        return tuple([(e.node_namespace, e.node_name) for e in infos(topic)]
                     for infos in (node.get_publishers_info_by_topic,
                                   node.get_subscriptions_info_by_topic))

    # a node's endpoints are discovered after the node itself, and the cell's recorder (in the
    # root) subscribes to a topic once it sees its publisher: waited for, then compared whole
    commands = {namespace: f'/{namespace}/effort_controller/commands' for namespace in ARMS}
    recorder = ('/', 'recorder')
    probe.wait_for(lambda: all(all(endpoints(topic)) and recorder in endpoints(topic)[1]
                               for topic in commands.values()),
                   what="the command topics' publishers and subscribers")
    for namespace, topic in commands.items():
        # commands where a namespaced ros2_control forward_command_controller listens
        publishers, subscribers = endpoints(topic)
        assert publishers == [(f'/{namespace}', 'controller')]
        assert sorted(subscribers) == [recorder, (f'/{namespace}', 'simulator')]
    absolute = ('/joint_states', '/effort_controller/commands', '/robot_description', '/clock')
    topics = _listed(probe, node.get_topic_names_and_types,
                     {f'/{arm}{name}' for arm in ARMS for name in absolute})
    assert not set(absolute) & topics
    services = _listed(probe, node.get_service_names_and_types,
                       {'/left/compute_ik', '/left/compute_fk', '/right/compute_ik'})
    assert '/compute_ik' not in services


def test_the_namespaced_nodes_take_their_parameter_files(arms, probe):
    # the robot's file (its controller: and simulator: sections), the simulated mode's safe
    # command and --lockstep's clock: what the same bringup in the root gives
    for node, name, expected in (('/left/controller', 'control_law', 'computed_torque'),
                                 ('/left/controller', 'safe_mode', 'gravity_compensation'),
                                 ('/left/controller', 'use_sim_time', True),
                                 ('/right/simulator', 'initial_positions', [0.4, 0.8]),
                                 ('/right/simulator', 'lockstep', True),
                                 ('/right/kinematics', 'publish_rate_hz', 10.0)):
        client = probe.client(GetParameters, f'{node}/get_parameters')
        try:
            (value,) = probe.call(client, GetParameters.Request(names=[name])).values
        finally:
            probe.destroy(client)
        got = Parameter.from_parameter_msg(
            rcl_interfaces.msg.Parameter(name=name, value=value)).value
        assert (list(got) if isinstance(expected, list) else got) == expected, (node, name)


def test_ik_answers_come_from_the_arms_own_robot(arms, probe):
    for namespace, robot in ARMS.items():
        model = RobotModel.load(robot)
        q_true = 0.7 * model.lower + 0.3 * model.upper
        target = model.fk(q_true)
        client = probe.client(SolveIK, f'/{namespace}/compute_ik')
        try:
            response = probe.call(client, SolveIK.Request(
                pose_stamped=PoseStamped(pose=matrix_to_pose(target))))
        finally:
            probe.destroy(client)
        IK_REQUESTS[namespace] = probe.requests[client.srv_name]
        assert response.success, response.message
        assert list(response.solution.name) == list(model.joint_names)
        error = pose_error(model.fk(np.array(response.solution.position)), target)
        assert np.linalg.norm(error * model.task_mask) < 1e-6


def test_one_recorder_records_both_arms(arms, module_processes, probe):
    recorder, path = arms['recorder']
    # on a loaded host the recorder's own start can outlast the tests before this one: its
    # subscriptions first, then more than 1,000 states of each arm after them
    wanted = [f'recording /{namespace}/{topic}' for namespace in ARMS for topic in (
        'joint_states', 'controller/state', 'effort_controller/commands')]
    probe.wait_for(lambda: all(w in module_processes.output(recorder) for w in wanted),
                   what="the recorder's subscriptions")
    states = {namespace: probe.collect(JointState, f'/{namespace}/joint_states')
              for namespace in ARMS}
    probe.wait_for(lambda: all(len(c) > 1000 for c in states.values()),
                   what='1,000 joint states of each arm')
    assert module_processes.stop(recorder) == 0, module_processes.output(recorder)
    recording = recordings.read(path)
    assert not recording.problem
    for namespace, robot in ARMS.items():
        topics = definitions.topics(f'/{namespace}')
        states = recording.tables[topics.joint_states].messages
        assert len(states) > 1000
        assert list(states[-1].name) == list(RobotModel.load(robot).joint_names)
        assert recording.tables[topics.controller_state].messages
        assert f'/{namespace}/effort_controller/commands' in recording.tables
    assert not [topic for topic in recording.tables if not topic.startswith(('/left/',
                                                                             '/right/'))]


def _send(probe, namespace, trajectory):
    # the client lives as long as the probe: destroyed under its spinning executor, it can fail
    # that executor's next wait (Jazzy: 'action client pointer is invalid')
    action = ActionClient(probe.node, FollowJointTrajectory,
                          f'/{namespace}/controller/follow_joint_trajectory')
    probe.wait_for(action.server_is_ready, what=f'the {namespace} action')
    sent = action.send_goal_async(FollowJointTrajectory.Goal(trajectory=trajectory))
    handle = probe.wait_for(lambda: sent.done() and sent.result(), what='the goal response')
    assert handle.accepted
    return handle


def test_a_goal_moves_only_its_arm(arms, probe):
    left = probe.collect(JointState, '/left/joint_states')
    right = probe.collect(JointState, '/right/joint_states')
    probe.wait_for(lambda: left and right, what="both arms' joint states")
    model = RobotModel.load('planar_2r')
    q0 = np.array(right[-1][0].position)
    q1 = q0 + np.array([0.3, -0.2])
    trajectory, _ = quintic(model, q0, q1, 1.0)
    held = np.array(left[-1][0].position)
    start = len(left)
    handle = _send(probe, 'right', trajectory)
    result = handle.get_result_async()
    probe.wait_for(result.done, what='the result')
    assert result.result().status == SUCCEEDED, result.result().result.error_string
    assert np.abs(np.array(right[-1][0].position) - q1).max() < 0.01
    # the other arm went on (its states kept coming) and stayed where it was held
    moved = np.array([m.position for m, _ in list(left)[start:]])
    assert len(moved) > 100
    assert np.abs(moved - held).max() < HOLD


def test_diagnostics_of_both_arms_with_their_full_names_and_figures(arms, probe):
    collected = probe.collect(DiagnosticArray, '/diagnostics')
    names = {f'/{namespace}/{node}' for namespace in ARMS for node in
             ('controller', 'simulator', 'kinematics')}
    probe.wait_for(lambda: names <= {s.name for a, _ in list(collected) for s in a.status},
                   timeout=30.0, what='every status')
    # a status covers the second before it: one after a stall of the host (a recorder that
    # joins takes both arms' recent history) says so, and the next is OK again

    def both_ok():
        newest = {ns: _statuses(collected, f'/{ns}/controller')[-1] for ns in ARMS}
        return newest if all(_level(s) == OK for s in newest.values()) else None
    controllers = probe.wait_for(both_ok, timeout=30.0, what='both controllers OK')
    for namespace, robot in ARMS.items():
        model = RobotModel.load(robot)
        controller = controllers[namespace]
        assert controller.hardware_id == model.name
        assert _level(controller) == OK, controller.message
        assert controller.message.startswith('hold at ')
        values = _values(controller)
        assert values['mode'] == 'hold' and values['safe mode'] == 'false'
        assert values['expected rate [Hz]'] == '1000'
        # lockstep: the states' clock runs with the cycles, none missed, latency not wall time
        assert abs(float(values['control rate [Hz]']) - 1000.0) < 5.0
        assert values['missed cycles in the period'].startswith('0 of ')
        assert values['latency p99 [ms]'] == 'n/a (simulated time)'
        assert {f'saturated {joint} [cycles]' for joint in model.joint_names} <= set(values)
        simulator = _values(_statuses(collected, f'/{namespace}/simulator')[-1])
        assert {'late steps', 'stalls', 'unanswered lockstep states', 'real-time factor',
                'steps'} <= set(simulator)
        assert simulator['lockstep'] == 'true' and int(simulator['steps']) > 1000
        kinematics = _statuses(collected, f'/{namespace}/kinematics')[-1]
        assert _level(kinematics) == OK
        # the IK test's calls, which succeeded: one, or as many as the probe sent (it asks again
        # while no reply came, and beside another suite a reply came after the second request)
        assert 1 <= int(_values(kinematics)['IK calls']) <= IK_REQUESTS[namespace]


def test_a_saturating_goal_warns(arms, probe):
    collected = probe.collect(DiagnosticArray, '/diagnostics')
    states = probe.collect(JointState, '/left/joint_states')
    probe.wait_for(lambda: states, what="the left arm's states")
    model = RobotModel.load('scara')
    q0 = np.array(states[-1][0].position)
    # 0.2 rad of shoulder in 0.1 s: within the velocity limit, 1.8 times the effort limit
    trajectory, _ = quintic(model, q0, q0 + np.array([0.2, 0.0, 0.0]), 0.1)
    _send(probe, 'left', trajectory)
    warned = probe.wait_for(lambda: [s for s in _statuses(collected, '/left/controller')
                                     if _level(s) == WARN], timeout=30.0, what='a WARN')[0]
    assert warned.message.startswith('saturating at the effort limits: shoulder'), warned.message
    values = _values(warned)
    assert int(values['saturated shoulder [cycles]']) > 0
    assert values['saturated quill [cycles]'] == '0'


def test_a_stopped_simulator_is_an_error_of_its_controller_until_it_returns(arms, probe):
    collected = probe.collect(DiagnosticArray, '/diagnostics')
    # the left arm holding first: the test before moved it (its goal may still run)
    probe.wait_for(lambda: any(_values(s)['mode'] == 'hold'
                               for s in _statuses(collected, '/left/controller')),
                   what='the left arm holding')
    start = len(collected)
    simulator = _child(arms['right'].pid, 'simulator_node')
    os.kill(simulator, signal.SIGSTOP)
    try:
        error = probe.wait_for(lambda: [s for s in _statuses(collected, '/right/controller')
                                        if _level(s) == ERROR], timeout=30.0,
                               what='ERROR')[0]
        during = len(collected)
    finally:
        os.kill(simulator, signal.SIGCONT)
    assert error.message.startswith(
        f'safe mode: no joint state for {DEFAULT_WALL_STATE_TIMEOUT:g} s of wall time'), \
        error.message
    assert _values(error)['safe mode'] == 'true'
    probe.wait_for(lambda: [s for s in _statuses(collected, '/right/controller', during)
                            if _level(s) == OK], timeout=30.0, what='OK again')
    # the other arm's controller was not touched: it held on, never in safe mode
    left = _statuses(collected, '/left/controller', start)
    assert left and all(_level(s) != ERROR for s in left)
    assert all(_values(s)['mode'] == 'hold' and _values(s)['safe mode'] == 'false'
               for s in left)


def test_a_killed_simulator_ends_only_its_arms_bringup(arms, probe, module_processes):
    # the safe mode a dead simulator puts its controller in (lockstep: noticed on the wall
    # clock) is the controller's: test/core/test_graph_faults.py; here, its arm's bringup stops
    # the rest of the arm, and the other arm goes on holding
    left = probe.collect(ControllerState, '/left/controller/state')
    probe.wait_for(lambda: left, what="the left controller's state")
    bringup = arms['right']
    os.kill(_child(bringup.pid, 'simulator_node'), signal.SIGKILL)
    assert bringup.wait(60.0) == 1
    assert "node 'simulator' exited" in module_processes.output(bringup)
    count = len(left)
    probe.wait_for(lambda: len(left) > count + 10, what='the left controller going on')
    assert all(m.mode == 'hold' for m, _ in list(left)[count:])
