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
``robot-dynamics bringup``: comes up, says what runs, serves, publishes, and stops cleanly.

In one process (the default, with ``--control-law`` beating the robot's file) and with
``--processes --lockstep`` (every node process on the simulator's /clock, faster than real time:
a goal tracked); SIGINT goes to the process group, as Ctrl-C in a terminal does, SIGTERM to
bringup alone, as a service manager does (once, and repeated until it ends). The node processes
of ``--processes`` are found as children of bringup in ``/proc`` (or by their command line) and
must all be gone once it exited; every socket of every one of them is bound to loopback (or a
multicast group), and a clean stop logs no error. A bad model ends bringup with exit status 1
and a message naming the problem. What needs no graph (parameters no node takes, a node's
refusal of a mistyped parameter, ``-p simulator.realtime:=false`` as ``--lockstep``) is
test_bringup_checks.py's; tracking on simulated time in one process test_graph_lockstep.py's
and test_graph_tracking.py's.
"""

import os
from pathlib import Path
import re
import signal
import subprocess
import time

from closed_loop import at_rest, quintic, SUCCEEDED
from control_msgs.action import FollowJointTrajectory
from geometry_msgs.msg import PoseStamped
from loopback import off_loopback, sockets
import numpy as np
import pytest
from robot_dynamics import RobotModel
from robot_dynamics.ros.nodes import goals
from robot_dynamics.ros.tools import graph
from robot_dynamics.ros.wire.compat import ActionClient
from robot_dynamics.ros.wire.conversions import matrix_to_pose, to_nanoseconds, to_seconds
from robot_dynamics.spatial import pose_error
from robot_dynamics_interfaces.msg import ControllerState
from robot_dynamics_interfaces.srv import SolveIK
from sensor_msgs.msg import JointState

pytestmark = pytest.mark.ros

RUNNING = 'running; Ctrl-C stops every node'
#: Time for bringup to come up: the first start of an install compiles the library's kernels.
TIMEOUT = 240.0
#: Joint states checked for one per simulator step: 4 s of simulated time.
STATES = 4000
#: Stops of the simulator's process, 0.2 s each (four times state_timeout), 0.3 s apart.
STALLS = 5
#: The program of the controller's goal process, on its command line (``python -c``).
GOALS = goals.START


def _wait_output(processes, proc, text, timeout=TIMEOUT):
    """Wait until ``proc`` printed ``text``; fail with its output if it exits or times out."""
    deadline = time.monotonic() + timeout
    while text not in processes.output(proc):
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f'bringup did not print {text!r} (exit status {proc.poll()}):\n'
                        f'{processes.output(proc)}')
        time.sleep(0.1)


def _stat(pid):
    """Return ``(state, parent pid, start time)`` of ``pid`` from /proc, or None if gone."""
    try:
        text = Path(f'/proc/{pid}/stat').read_text()
    except OSError:
        return None
    fields = text.rsplit(')', 1)[1].split()   # the command name may hold spaces
    return fields[0], int(fields[1]), int(fields[19])


def _processes(accept):
    """Return ``{pid: (start time, command line)}`` of the processes ``accept(ppid, cmdline)``."""
    found = {}
    for entry in Path('/proc').iterdir():
        if entry.name.isdigit():
            stat = _stat(entry.name)
            try:
                cmdline = [part.decode() for part in
                           (entry / 'cmdline').read_bytes().split(b'\0')]
            except OSError:
                continue
            if stat is not None and accept(stat[1], cmdline):
                found[int(entry.name)] = (stat[2], cmdline)
    return found


def _children(pid):
    return _processes(lambda ppid, _: ppid == pid)


def _still_running(children):
    """Return the pids of ``children`` that are the same processes and not zombies."""
    running = []
    for pid, (start, _) in children.items():
        stat = _stat(pid)
        if stat is not None and stat[2] == start and stat[0] != 'Z':
            running.append(pid)
    return running


def _basename(path):
    return Path(path).name


def _group_exists(pgid):
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _assert_clean_exit(processes, proc, children, code, since=0.0):
    output = processes.output(proc)
    assert code == 0, output
    assert 'Traceback' not in output, output
    # stopping is no fault: the controller stops before the simulator it watches, so no safe
    # mode stands when it stops (``since``: the wall time [s] when the stop began, against the
    # lines' own stamps: a line logged before it may reach the output after it). A real-time
    # graph on a busy host may stall, before the stop or while it stops: a fault logged as the
    # fault it is, which ends when the joint states come back
    standing = False
    for level, stamp, text in re.findall(r'\[(\w+)\] \[([\d.]+)\] \[[^]]*\]: ([^\n]*)', output):
        if float(stamp) < since:
            continue
        if level == 'ERROR':
            assert text.startswith('no joint state for'), output
            standing = True
        elif text.startswith('joint states are back'):
            standing = False
    assert not standing, output
    assert output.rstrip().endswith('robot-dynamics bringup scara: stopped'), output
    assert not _still_running(children), f'node processes left: {_still_running(children)}'
    assert not _group_exists(proc.pid)


def _start(processes, name, *extra):
    proc = processes.start(name, ['robot-dynamics', 'bringup', '--robot', 'scara', *extra])
    _wait_output(processes, proc, RUNNING)
    children = _children(proc.pid)
    if '--processes' in extra:
        # one process per node: its console script, or python -m its module
        started = sorted(spec.name for spec in graph.nodes('sim') for _, cmdline in
                         children.values() if spec.executable in map(_basename, cmdline)
                         or spec.module in cmdline)
        assert started == sorted(spec.name for spec in graph.nodes('sim')), children
        # out of bringup's process group, so that Ctrl-C reaches them through bringup only
        assert all(os.getpgid(child) != proc.pid for child in children)
    else:
        # one process, and the controller's goal process beside it
        assert [GOALS in cmdline for _, cmdline in children.values()] == [True], children
    return proc, children


@pytest.fixture(scope='module', params=['one_process', 'processes'])
def bringup(request, module_processes):
    """Return ``(process, its children)`` of a running bringup of scara."""
    # --control-law beats the control_law that scara.yaml sets in the controller's section;
    # the node processes run faster than real time (-p simulator.realtime:=false hands them the
    # same parameters: test_bringup_checks.py)
    extra = ['--processes', '--lockstep'] if request.param == 'processes' else \
        ['--control-law', 'pd_gravity']
    return _start(module_processes, f'bringup_{request.param}', *extra)


def test_prints_what_it_started(bringup, processes):
    output = processes.output(bringup[0])
    # its own first line, whole: before any node logs, in one write (not glued to a log line)
    first = output.splitlines()[0]
    assert first.startswith('robot-dynamics bringup scara: starting 4 nodes (') and \
        first.endswith(')'), output
    for spec in graph.nodes('sim'):
        assert f'/{spec.name} ({spec.executable})' in output
    lines = output.splitlines()
    assert any('serves' in line and '/compute_ik' in line and '/compute_fk' in line
               for line in lines), output
    assert any('publishes' in line and '/joint_states' in line for line in lines), output
    assert any('publishes' in line and '/robot_description' in line for line in lines), output
    # both of the controller's actions (its goal process's), each name once on a line
    assert any('actions' in line and '/controller/follow_joint_trajectory' in line
               and '/controller/follow_cartesian_trajectory' in line for line in lines), output
    for line in lines[1:]:
        names = line.split()[1:]
        if line.startswith('      ') and names:
            assert len(names) == len(set(names)), line


def test_serves_compute_ik(bringup, probe, rng):
    model = RobotModel.load('scara')
    client = probe.client(SolveIK, '/compute_ik')
    try:
        for q_true in rng.uniform(0.8 * model.lower + 0.2 * model.upper,
                                  0.2 * model.lower + 0.8 * model.upper, (5, model.dof)):
            T = model.fk(q_true)
            request = SolveIK.Request(pose_stamped=PoseStamped(pose=matrix_to_pose(T)))
            response = probe.call(client, request)
            assert response.success, response.message
            q = np.array(response.solution.position)
            assert list(response.solution.name) == list(model.joint_names)
            # the library's FK of the answer meets the target (in the arm's task space)
            error = pose_error(model.fk(q), T) * model.task_mask
            assert np.linalg.norm(error[:3]) < 1e-6 and np.linalg.norm(error[3:]) < 1e-6
    finally:
        probe.destroy(client)


def test_publishes_a_joint_state_at_every_1_ms_step(bringup, probe):
    # scara.yaml: rate_hz 1000, every step published, stamped with its time on the 1 ms grid;
    # how fast it runs on the wall clock of a busy host is the host's business (measured by
    # bench/bench_ros.py), and the real-time writer keeps 10 samples for a reader that lags
    received = probe.collect(JointState, '/joint_states')
    probe.wait_for(lambda: len(received) > STATES, what=f'{STATES} joint states')
    steps = np.diff([to_nanoseconds(msg.header.stamp) for msg, _ in received[:STATES]])
    assert np.all(steps > 0) and np.all(steps % 1_000_000 == 0), np.unique(steps)
    assert np.median(steps) == 1_000_000
    assert list(received[-1][0].name) == list(RobotModel.load('scara').joint_names)


def test_every_socket_stays_on_loopback(bringup):
    proc, children = bringup
    pids = [proc.pid, *children]
    for pid in pids:
        assert any(address.is_loopback for _, address, _ in sockets(pid)), pid
    assert off_loopback(pids) == []


@pytest.mark.parametrize('bringup', ['one_process'], indirect=True)
def test_the_control_law_given_beats_the_robots_file(bringup, probe):
    states = probe.collect(ControllerState, '/controller/state')
    probe.wait_for(lambda: states, what='/controller/state')
    assert states[-1][0].control_law == 'pd_gravity'


@pytest.mark.parametrize('bringup', ['processes'], indirect=True)
def test_faster_than_real_time_tracks_on_simulated_time(bringup, processes, probe):
    # without real time the simulator steps in lockstep with the controller, every node on its
    # clock: goals start and track as in real time
    model = RobotModel.load('scara')
    proc, _ = bringup
    states = probe.collect(JointState, '/joint_states')
    controller = probe.collect(ControllerState, '/controller/state')
    action = ActionClient(probe.node, FollowJointTrajectory, '/controller/follow_joint_trajectory')
    probe.wait_for(action.server_is_ready, what='the action server')
    probe.wait_for(lambda: controller and controller[-1][0].mode == 'hold', what='holding')
    assert 'in lockstep with the controller, publishing /clock' in processes.output(proc)
    # the controller may hear the arm before this probe's own subscription has matched it
    probe.wait_for(lambda: states, what='joint states')
    q0 = np.array(states[-1][0].position)
    msg, path = quintic(model, q0, q0 + [0.4, -0.5, 0.1], 2.0)
    sent = action.send_goal_async(FollowJointTrajectory.Goal(trajectory=msg))
    handle = probe.wait_for(lambda: sent.done() and sent.result(), what='the goal response')
    result = handle.get_result_async()
    probe.wait_for(result.done, what='the result')
    assert result.result().status == SUCCEEDED, result.result().result.error_string

    # the result can come before this probe has taken the motion's last states (simulated time
    # runs ahead of a busy probe): the controller's first hold after the motion, then a joint
    # state of that time or later
    def hold_after_motion():
        seen = [m for m, _ in controller]
        start = next((k for k, m in enumerate(seen) if m.mode == 'trajectory'), len(seen))
        return next((m for m in seen[start:] if m.mode == 'hold'), None)
    end = to_nanoseconds(probe.wait_for(hold_after_motion, what='the hold after the motion')
                         .header.stamp)
    probe.wait_for(lambda: to_nanoseconds(states[-1][0].header.stamp) >= end,
                   what='a joint state after the motion')
    moving = [m for m, _ in controller if m.mode == 'trajectory']
    error = np.array([m.error.positions for m in moving])
    assert len(moving) > 150 and np.sqrt(np.mean(error ** 2)) < 1e-3
    assert all(m.missed_cycles == 0 for m in moving)
    # simulated time from 0, not the wall clock's seconds since 1970
    assert to_seconds(states[-1][0].header.stamp) < 3600.0
    np.testing.assert_allclose(states[-1][0].position, path.end, atol=1e-3)


def test_sigint_stops_everything(bringup, processes):
    proc, children = bringup
    stopping = time.time()
    code = processes.stop(proc, signal.SIGINT, timeout=60.0)   # to the group, as Ctrl-C
    _assert_clean_exit(processes, proc, children, code, since=stopping)


def test_a_signal_repeated_until_it_ends_stops_it_cleanly(processes):
    # a supervisor on a loaded host repeats its signal: one that comes while the interpreter
    # exits (after "stopped") must not turn the clean stop into a death by signal
    proc, children = _start(processes, 'bringup_repeated')
    stopping = time.time()
    while proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(0.02)
        except subprocess.TimeoutExpired:
            pass
    _assert_clean_exit(processes, proc, children, proc.returncode, since=stopping)


def test_the_idle_simulated_arm_keeps_its_position_through_stalls_of_the_simulator(
        processes, probe):
    # real time (--real-time), as on an arm: the host stops the simulator's process for four
    # times state_timeout, again and again; each time the controller goes to its safe mode, and
    # the simulator, running again, first catches up the steps it missed with the newest command.
    # With zero effort as the safe command the quill sagged up to 3 mm per stall here and was
    # held lower each time; the simulated arm's safe command holds it against gravity
    states = probe.collect(JointState, '/joint_states')
    controller = probe.collect(ControllerState, '/controller/state')
    proc, children = _start(processes, 'bringup_stall', '--processes', '--real-time')
    (simulator,) = [pid for pid, (_, cmdline) in children.items()
                    if 'simulator_node' in map(_basename, cmdline)
                    or 'robot_dynamics.ros.nodes.simulator_node' in cmdline]
    probe.wait_for(lambda: controller and controller[-1][0].mode == 'hold', what='holding')
    probe.wait_for(lambda: at_rest(states), what='the held arm at rest')
    before = np.array(controller[-1][0].feedback.positions)
    count = len(controller)
    for _ in range(STALLS):
        os.kill(simulator, signal.SIGSTOP)
        try:
            time.sleep(0.2)
        finally:
            os.kill(simulator, signal.SIGCONT)
        time.sleep(0.3)
    probe.wait_for(lambda: controller[-1][0].mode == 'hold' and at_rest(states),
                   what='holding again, at rest')
    output = processes.output(proc)
    assert 'safe mode (gravity compensation)' in output, output
    # each safe mode (the stalls; others that the host's load adds) against where the arm was
    # just before it: the joint state the controller holds at afterwards. (A controller that the
    # host starves for the simulator's command_timeout finds the arm braked where it was.)
    episodes, last, safe = [], before, False
    for m, _ in controller[count:]:
        if m.mode == 'safe':
            safe = True
        elif m.mode == 'hold':
            if safe:
                episodes.append(np.abs(np.array(m.feedback.positions) - last).max())
            last, safe = np.array(m.feedback.positions), False
    print(f'largest change of a joint over each of {len(episodes)} safe modes: '
          f'{np.round(episodes, 6).tolist()} (rad or m)')
    assert len(episodes) >= 1 and max(episodes) < 1e-3, output
    stopping = time.time()
    os.kill(proc.pid, signal.SIGTERM)   # bringup alone: it stops its nodes itself
    code = proc.wait(60.0)
    _assert_clean_exit(processes, proc, children, code, since=stopping)


def _assert_failed_start(processes, proc, *named):
    code = proc.wait(TIMEOUT)
    output = processes.output(proc)
    assert code == 1, output
    for text in named:
        assert text in output, output
    assert 'Traceback' not in output, output
    assert not _group_exists(proc.pid), 'a node process outlived bringup'


def test_bad_robot_description_fails_naming_the_problem(processes):
    proc = processes.start('bringup_bad_xml', [
        'robot-dynamics', 'bringup', '--robot', 'scara', '--param', "model.robot:=''",
        '--param', 'model.robot_description:=<robot name="broken"><link name="a"/>'])
    _assert_failed_start(processes, proc, 'cannot start: malformed URDF')


def test_bad_urdf_path_in_processes_fails_and_stops_the_rest(processes, tmp_path):
    missing = tmp_path / 'no_such_arm.urdf'
    params = tmp_path / 'bad.yaml'
    params.write_text(f"model:\n  ros__parameters:\n    robot: ''\n    urdf_file: {missing}\n")
    proc = processes.start('bringup_bad_path', [
        'robot-dynamics', 'bringup', '--robot', 'scara', '--params-file', str(params),
        '--processes'])
    _assert_failed_start(processes, proc, f"urdf_file '{missing}' does not exist",
                         "node 'model' exited with status 1")
    assert not _processes(lambda _, cmdline: str(params) in cmdline), 'node processes left'
