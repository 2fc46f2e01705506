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
``robot-dynamics demo``: a pick-and-place on the simulated arm, through the whole ROS graph.

Brings up the node set of :mod:`~robot_dynamics.ros.tools.graph` (one process per node), plans a
pick-and-place in the robot's own workspace (:mod:`robot_dynamics.pick_and_place`: a joint
move to above pick, then straight tip lines, every pose solved through ``/compute_ik`` and
seeded with the previous solution, each motion slowed down until it fits the robot's velocity
and effort limits), sends the joint trajectory (positions, velocities, accelerations) through
the controller's ``follow_joint_trajectory`` action, waits for the result, then stops every
node. It reports the plan, the tracking error, the control rate and latency, the missed cycles
and the IK calls (the JSON report) and writes the PNG plots.

With ``cartesian``, the plan (timed the same way, through the library's IK) is executed as the
joint move to above pick, then its straight lines as one ``follow_cartesian_trajectory`` goal of
poses, each reached at rest (the controller's task-space law; no IK call over ROS), and the
report gives the tip's largest and rms distance from the planned lines.
"""

import json
from pathlib import Path
import signal
import sys
import tempfile
import time

from action_msgs.msg import GoalStatus
from cartesian_control_msgs.action import FollowCartesianTrajectory
from control_msgs.action import FollowJointTrajectory
import numpy as np
from rclpy.node import Node
from robot_dynamics_interfaces.msg import ControllerState
from robot_dynamics_interfaces.srv import SolveIK
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from . import bringup, definitions, graph
from .recorder import RecorderNode
from .send import cartesian_goal_message, INTERRUPTED, Patience, RESULT_MARGIN, wait_for
from ..wire import middleware
from ..wire.compat import ActionClient
from ..wire.conversions import (joint_state, matrix_to_pose, time_msg, to_nanoseconds, to_seconds,
                                trajectory_point)
from ..wire.on_demand import OnDemand, take_next
from ..wire.qos import SERVICE_CLIENT
from ... import parameter_files, pick_and_place, plots, recorded_motion, recordings
from ...cartesian_trajectory import CartesianPoints
from ...errors import InputError
from ...model import RobotModel
from ...spatial import matrix_to_quaternion
from ...stamps import ns_to_s, s_to_ns

#: Default nominal duration of the motion [s] (before slowing down for the limits).
DEFAULT_DURATION = pick_and_place.DEFAULT_DURATION
#: Time allowed for the goal after its last point [s].
GOAL_TIME = 2.0
#: The demo's recording, in ``--out`` (or a temporary folder).
RECORDING = 'demo.mcap'
#: A /compute_ik reply is waited for this long [s] before the request is sent again, at most
#: IK_ATTEMPTS times in all (a reply takes milliseconds; a starved host can hold it longer).
IK_TIMEOUT, IK_ATTEMPTS = 3.0, 4
#: The goal starts this long after the newest joint state [s] (its delivery takes milliseconds),
#: at a multiple of START_GRID [s] on the states' clock, START_EARLY [s] before it, so that it
#: starts on the state of that time however the times round: in lockstep the controller's
#: reports then sample every run's motion at the same instants, and the numbers repeat.
START_LEAD, START_GRID, START_EARLY = 1.0, 0.1, 1e-4
#: A goal refused as started before it came (OLD_HEADER_TIMESTAMP: in lockstep on a busy host,
#: simulated time runs on while the goal travels through the middleware and the goal process)
#: is sent again starting twice as far ahead, up to MAX_LEAD [s].
MAX_LEAD = 64.0


class DemoClient(Node):
    """The demo's own node: the latest joint state, the IK calls and the action."""

    def __init__(self, **kwargs):
        super().__init__('demo', **kwargs)
        # read on demand: the plan needs one state, not a wake-up for each of 1,000 per second
        self.joint_states = self.create_subscription(JointState, 'joint_states',
                                                     lambda msg: None, 1,
                                                     callback_group=OnDemand())
        self.ik = self.create_client(SolveIK, 'compute_ik', qos_profile=SERVICE_CLIENT)
        self.action = ActionClient(self, FollowJointTrajectory,
                                   'controller/follow_joint_trajectory')
        self.cartesian = ActionClient(self, FollowCartesianTrajectory,
                                      'controller/follow_cartesian_trajectory')
        self.ik_latency = []
        self.ik_successes = 0
        self.ik_lost_replies = 0

    def newest_state(self):
        """Return the newest joint state (the plan starts from it), or None."""
        return take_next(self.joint_states)

    @staticmethod
    def wait(future, timeout, what):
        """Wait for an rclpy future (spun by another thread); return its result."""
        wait_until(future.done, timeout, what)
        return future.result()

    def start_ns(self, lead=START_LEAD):
        """Return when a goal sent now starts [ns]: ``lead`` [s] after the next state, gridded."""
        grid = s_to_ns(START_GRID)
        # the state read before was taken: wait for the next (a stalled host delays it)
        state = wait_until(self.newest_state, 60.0, 'joint states')
        return ((to_nanoseconds(state.header.stamp) + s_to_ns(lead))
                // grid * grid - s_to_ns(START_EARLY))

    def follow_from_next_start(self, action, goal_at, duration, out):
        """
        Send ``goal_at(start)`` for the next start [ns] (:meth:`start_ns`) and follow it.

        Return its result and its start. A goal that came after its start is sent again
        starting twice as far ahead (MAX_LEAD), which is said on ``out``.
        """
        lead = START_LEAD
        while True:
            start = self.start_ns(lead)
            result = self.follow(action, goal_at(start), duration)
            # the same code in both actions' results
            late = result.result.error_code == FollowJointTrajectory.Result.OLD_HEADER_TIMESTAMP
            if not late or 2 * lead > MAX_LEAD:
                return result, start
            lead *= 2
            print(f'demo: the goal came after its start (simulated time ran on while it '
                  f'travelled): sent again, starting {lead:g} s ahead', file=out, flush=True)

    def follow(self, action, goal, duration):
        """
        Send ``goal`` on ``action`` and return its result (``duration`` [s] of motion).

        Waited for as ``robot-dynamics send`` waits (:class:`~.send.Patience`): in lockstep on a
        busy host the goal runs slower than the wall clock, and its feedback shows it running.
        """
        patience = Patience(time.monotonic(), duration)
        handle = self.wait(action.send_goal_async(goal, feedback_callback=patience.heard), 30.0,
                           'the goal response')
        result = handle.get_result_async()
        if not wait_for(result, patience):
            raise TimeoutError(f'no goal result and no feedback for {RESULT_MARGIN:g} s after '
                               "the goal's end")
        return result.result()

    def solve(self, model, pose, seed):
        """Call /compute_ik for the tip ``pose`` seeded with ``seed``; return the solution."""
        request = SolveIK.Request(robot_state=joint_state(model.joint_names,
                                                          self.get_clock().now().to_msg(), seed))
        request.pose_stamped.header.frame_id = model.base_link
        request.pose_stamped.pose = matrix_to_pose(pose)
        start = time.perf_counter()
        for attempt in range(IK_ATTEMPTS):
            # a reply late on a busy host: IK is idempotent, ask again
            future = self.ik.call_async(request)
            try:
                response = self.wait(future, IK_TIMEOUT, '/compute_ik')
                break
            except TimeoutError:
                self.ik.remove_pending_request(future)
                if attempt == IK_ATTEMPTS - 1:
                    raise
                self.ik_lost_replies += 1
        self.ik_latency.append(time.perf_counter() - start)
        if not response.success:
            raise InputError(f'/compute_ik found no solution for the tip at '
                             f'{np.round(pose[:3, 3], 4).tolist()}: {response.message}')
        self.ik_successes += 1
        return np.array(response.solution.position)


def plan(client, model, q_start, duration):
    """Plan the pick-and-place through /compute_ik; return the :class:`pick_and_place.Plan`."""
    return pick_and_place.plan(model, q_start, duration,
                               solve=lambda pose, seed: client.solve(model, pose, seed))


def goal_message(model, motion, start_ns):
    """Return the FollowJointTrajectory goal of a plan, from its first point at ``start_ns``."""
    msg = JointTrajectory(joint_names=list(model.joint_names))
    msg.header.stamp = time_msg(start_ns)
    msg.points = [trajectory_point(q, qd, qdd, time_from_start=t)
                  for t, q, qd, qdd in zip(motion.times, motion.q, motion.qd, motion.qdd)]
    goal = FollowJointTrajectory.Goal(trajectory=msg)
    goal.goal_time_tolerance.sec = int(GOAL_TIME)
    return goal


def cartesian_goal(motion, start_ns):
    """Return the FollowCartesianTrajectory goal of a plan's lines, starting at ``start_ns``."""
    times, point = motion.lines()
    # from the reference (above pick): the points after it, with their twists and accelerations
    goal = cartesian_goal_message(CartesianPoints(
        times[1:], point.pose[1:, :3, 3], matrix_to_quaternion(point.pose[1:, :3, :3]),
        point.twist[1:], point.acceleration[1:]))
    goal.trajectory.header.stamp = time_msg(start_ns)
    goal.goal_time_tolerance.sec = int(GOAL_TIME)
    return goal


def line_deviation(model, motion, controller_states, since):
    """
    Return the tip's largest and rms distance [m] from the plan's lines, and the samples.

    Of the measured positions of ``controller_states`` stamped from ``since`` [s] on (the lines'
    goal and the hold at its end), by forward kinematics.
    """
    window = [m for m in controller_states if to_seconds(m.header.stamp) >= since]
    if not window:
        return {'max': None, 'rms': None, 'samples': 0}
    order = model.indices_in(window[0].joint_names)
    q = np.array([m.feedback.positions for m in window])[:, order]
    distance = pick_and_place.distance_to_lines(model.fk(q)[:, :3, 3], motion.line_corners)
    return {'max': float(distance.max()), 'rms': float(np.sqrt(np.mean(distance ** 2))),
            'samples': len(window)}


def _percentiles(values_s):
    values = np.asarray(values_s) * 1e3
    if values.size == 0:
        return {'p50': None, 'p99': None}
    return {'p50': float(np.percentile(values, 50)), 'p99': float(np.percentile(values, 99))}


def summarise(model, client, motion, result, controller_states, started, ended):
    """
    Return the JSON report of the run: the plan, tracking, control loop, IK.

    ``controller_states`` are the controller's ControllerState messages (at its
    ``state_publish_rate_hz``, 100 Hz: tracking error and latency are sampled there, the cycle
    counters count every cycle); the statistics cover those stamped between ``started`` and
    ``ended`` [s, on the graph's clock: simulated time in lockstep, where a state is answered
    before the simulation steps and the latency is zero]. What could not be measured (no state
    while the goal ran: it was refused, or the recording lacks them) is None.
    """
    window = [m for m in controller_states if started <= to_seconds(m.header.stamp) <= ended]
    # a task-space goal has no joint reference (its error is the tip's: line_deviation)
    tracking = [m for m in window
                if m.mode == ControllerState.MODE_TRAJECTORY and len(m.error.positions)]
    error = np.array([m.error.positions for m in tracking]) if tracking else np.zeros((0, 1))
    latency = [to_seconds(m.header.stamp) - to_seconds(m.state_stamp) for m in window]
    first, last = (window[0], window[-1]) if len(window) >= 2 else (None, None)
    span = to_seconds(last.header.stamp) - to_seconds(first.header.stamp) if first else 0.0
    velocity, effort = pick_and_place.limit_ratios(model, motion)
    return {
        'robot': model.name,
        'joints': list(model.joint_names),
        'units': ['m' if p else 'rad' for p in model.is_prismatic],
        'succeeded': result.status == GoalStatus.STATUS_SUCCEEDED
        and result.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL,
        'result': {'status': int(result.status), 'error_code': int(result.result.error_code),
                   'error_string': result.result.error_string},
        'segments': motion.names,
        'motion_duration_s': motion.duration,
        'plan': {'nominal_duration_s': motion.nominal_duration,
                 'segment_slowdown': motion.slowdown.tolist(),
                 'peak_velocity_ratio': velocity.tolist(),
                 'peak_effort_ratio': effort.tolist()},
        'tracking_samples': len(tracking),
        'rms_tracking_error': float(np.sqrt(np.mean(error ** 2))) if error.size else None,
        'max_tracking_error': float(np.abs(error).max()) if error.size else None,
        'control_rate_hz': (last.cycles - first.cycles) / span if span > 0.0 else None,
        'control_latency_ms': _percentiles(latency),
        'missed_cycles': int(last.missed_cycles - first.missed_cycles) if first else None,
        'control_cycles': int(last.cycles - first.cycles) if first else None,
        'ik_calls': len(client.ik_latency),
        'ik_successes': client.ik_successes,
        'ik_latency_ms': _percentiles(client.ik_latency),
        'ik_lost_replies': client.ik_lost_replies,
    }


def plot(model, motion, recording, out_dir, topics=definitions.TOPICS):
    """Write the demo's PNG plots from its recording (``topics``) and plan; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    t = np.linspace(0.0, motion.duration, 600)
    planned = model.fk(motion.trajectory().sample(t).q)[:, :3, 3]
    goal_points = model.fk(motion.q)[:, :3, 3]
    for name, (data, why), draw, changes in (
            ('tracking', recorded_motion.tracking(recording, topics, model), plots.plot_tracking,
             {}),
            ('effort', recorded_motion.effort(recording, topics, model), plots.plot_effort, {}),
            ('tip_path', recorded_motion.tip_path(recording, topics, model), plots.plot_tip_path,
             {'planned': planned, 'waypoints': goal_points,
              'title': f'{model.name}: pick-and-place tip path, base frame'})):
        if data is None:
            raise InputError(f'{recorded_motion.PLOT_FILES[name]}: {why}')
        path = out_dir / recorded_motion.PLOT_FILES[name]
        draw(path, **{**data._asdict(), **changes})
        written.append(str(path))
    return written


def _share(count, total):
    """Return ``'count of total (share %)'``, e.g. ``'63 of 8,916 (0.7 %)'``."""
    if not total:
        return f'{count:,} of 0'
    percent = 100.0 * count / total
    share = f'{percent:.1f} %' if percent >= 0.1 or count == 0 else '< 0.1 %'
    return f'{count:,} of {total:,} ({share})'


#: What the summary says when the joint states stopped in real time: the host did not run the
#: simulator in time (its process was not scheduled), not a fault of the arm or the controller.
STARVED = ("  why              the joint states stopped for longer than the controller's "
           'state_timeout: the host did not run the simulator in time (a busy machine), and the '
           'controller went to its safe mode, as it must on a real arm. Run it again on a quieter '
           'machine, or without --real-time (lockstep, simulated time paced to the wall clock), '
           'where a stall of the host slows simulated time instead.')


def _peak(ratios, joints):
    j = int(np.argmax(ratios))
    return f'{100.0 * ratios[j]:.0f} % ({joints[j]})'


def summary_lines(report):
    """Return the demo's summary as printable lines: only what was measured, in words."""
    joints, planned = report['joints'], report['plan']
    result = report['result']['error_string'] or ('goal reached' if report['succeeded'] else
                                                  f'status {report["result"]["status"]}')
    slowed = [f'{k:.2g}x' for k in planned['segment_slowdown'] if k > 1.0]
    outcome = 'succeeded' if report['succeeded'] else 'FAILED'
    lines = [f'{report["robot"]}: pick-and-place {outcome} ({result})',
             f'  plan             {len(report["segments"])} motions in '
             f'{report["motion_duration_s"]:.1f} s (nominal {planned["nominal_duration_s"]:g} s'
             + (f', slowed {", ".join(slowed)} for the limits' if slowed else '') + '); peak '
             f'velocity {_peak(planned["peak_velocity_ratio"], joints)}, effort '
             f'{_peak(planned["peak_effort_ratio"], joints)} of the limits']
    if report['rms_tracking_error'] is None:
        lines.append('  tracking error   not measured: no controller state while the goal ran')
    else:
        lines.append(f'  tracking error   rms {report["rms_tracking_error"]:.3g}, max '
                     f'{report["max_tracking_error"]:.3g} '
                     f'({plots.units_label(report["joints"], report["units"])}; '
                     f'{report["tracking_samples"]} sample'
                     f'{"s" if report["tracking_samples"] != 1 else ""})')
    latency = report['control_latency_ms']
    if report['control_cycles'] is None:
        lines.append('  control          not measured: fewer than two controller states while '
                     'the goal ran')
    else:
        rate = report['control_rate_hz']
        cycles, missed = report['control_cycles'], report['missed_cycles']
        line = (f'  control          {cycles:,} cycles'
                + (f' at {rate:.1f} Hz' if rate is not None else ''))
        missed = f'{_share(missed, cycles + missed)} joint states missed'
        if report.get('lockstep'):
            line += (f' of simulated time in lockstep (each state answered before the next '
                     f'step), {missed}; real-time factor {report["real_time_factor"]:.2f}')
        else:
            line += (f', {missed}; latency p50 {latency["p50"]:.3f} ms, p99 '
                     f'{latency["p99"]:.3f} ms')
        lines.append(line)
    deviation = report.get('line_deviation_m')
    if report.get('cartesian'):
        lines.append(f'  lines            {len(report["segments"]) - 1} straight tip lines as one '
                     'Cartesian goal (task space): ' + (
                         'not run' if deviation is None else
                         'no controller state while they ran' if not deviation['samples'] else
                         f'the tip within {deviation["max"] * 1e3:.3g} mm of them (rms '
                         f'{deviation["rms"] * 1e3:.3g} mm; {deviation["samples"]} samples)'))
        lines.append('  IK               none over ROS: the controller takes the lines as poses')
    else:
        ik = report['ik_latency_ms']
        lines.append(f'  IK               {_share(report["ik_successes"], report["ik_calls"])} '
                     'calls solved' + (f', p50 {ik["p50"]:.3f} ms, p99 {ik["p99"]:.3f} ms'
                                       if ik['p50'] is not None else ''))
    error = report['result']['error_string']
    # the goal ended when the states stopped, or was refused because they had
    if not report['succeeded'] and not report.get('lockstep') and \
            ('joint states stopped' in error or 'no fresh joint states' in error):
        lines.append(STARVED)
    return lines


def _print_summary(report, out):
    print('\n'.join(summary_lines(report)), file=out)


def run(robot, *, report_path=None, out_dir=None, duration=DEFAULT_DURATION,
        clock=None, namespace='', out=sys.stdout, view=None, cartesian=False,
        wait_for_view=False):
    """
    Run the demo on a bundled robot; return the exit status (0: the goal succeeded).

    ``clock``: one of :data:`~robot_dynamics.ros.tools.graph.CLOCKS` (None: ``DEFAULT_CLOCK``);
    in lockstep (``paced`` and ``lockstep``) the same numbers every run, whatever else the host
    does. ``namespace``:
    the arm's (``graph.namespace``), where the graph, the demo's client and its recording are.
    ``view``: a port to serve the live view on while the demo runs (``bringup.start_view``), or
    None; ``wait_for_view``: the motion starts once a page of it is open. ``cartesian``: the
    lines as one Cartesian goal (the module docstring).
    """
    if wait_for_view and not view:
        raise InputError('--wait-for-view waits for a page of the view: give --view too')
    namespace = graph.namespace(namespace)
    clock = graph.DEFAULT_CLOCK if clock is None else clock
    if out_dir is not None:
        plots.require_matplotlib()
    model = RobotModel.load(robot)
    work = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix='demo_'))
    work.mkdir(parents=True, exist_ok=True)
    recording_path = work / RECORDING
    recording_path.unlink(missing_ok=True)
    files = [parameter_files.parameter_file(robot)]
    chosen = graph.clock(clock)
    lockstep = dict(chosen['simulator'])['lockstep'] == 'true'
    overrides = graph.complete_overrides('sim', files, chosen)
    middleware.init()
    nodes = bringup.Bringup(graph.nodes('sim'), files, overrides, processes=True, out=out,
                            namespace=namespace)
    client = DemoClient(namespace=namespace or None, cli_args=[
        '--ros-args', *graph.clock_arguments(files, overrides, namespace)])
    viewer = None
    interrupted = False
    try:
        if view:
            viewer = bringup.start_view(view, out, namespace)
        print(f'demo: bringing up {robot} (model, kinematics, simulator, controller; '
              f'{clock}), recording to {recording_path}',
              file=out, flush=True)
        nodes.start()
        recorder = RecorderNode(cli_args=bringup.recorder_arguments(
            recording_path, files, overrides, namespace))
        nodes.add_node(recorder)
        nodes.add_node(client)
        if not nodes.wait_ready():
            raise RuntimeError(nodes.failure)
        state = wait_until(client.newest_state, 60.0, 'joint states')
        q_start = np.array(state.position)[model.indices_in(state.name)]
        if cartesian:
            print('demo: planning with the library (its IK times the lines within the limits)',
                  file=out, flush=True)
            motion = pick_and_place.plan(model, q_start, duration)
        else:
            print(f'demo: planning through {graph.resolve("compute_ik", namespace)}', file=out,
                  flush=True)
            motion = plan(client, model, q_start, duration)
        wait_until(client.action.server_is_ready, 60.0, 'the follow_joint_trajectory action')
        if cartesian:
            wait_until(client.cartesian.server_is_ready, 60.0,
                       'the follow_cartesian_trajectory action')
        # the report is made of the recorded controller states: none of the motion's missed
        wait_until(lambda: recorder.recording(definitions.topics(namespace).controller_state),
                   60.0, 'the recorder on the controller state')
        if wait_for_view:
            print(f'demo: the motion starts once a page of the view is open (--wait-for-view): '
                  f'open http://127.0.0.1:{view}', file=out, flush=True)
            while not viewer.page_open.wait(0.1):
                if viewer.poll() is not None:
                    raise RuntimeError(f'the view ended (exit status {viewer.poll()}) before a '
                                       'page was open')
        started = ns_to_s(client.get_clock().now().nanoseconds)
        wall = time.monotonic()
        lines_start = None        # [ns] when the Cartesian goal starts, once sent
        if cartesian:
            first = motion.first_motion()
            print(f'demo: executing the move to above pick ({len(first.times)} points over '
                  f'{first.duration:.1f} s), then {len(motion.names) - 1} straight lines as one '
                  f'Cartesian goal over {motion.duration - first.duration:.1f} s', file=out,
                  flush=True)
            result, _ = client.follow_from_next_start(
                client.action, lambda start: goal_message(model, first, start), first.duration,
                out)
            if result.status == GoalStatus.STATUS_SUCCEEDED:
                def lines_goal(start):
                    nonlocal lines_start      # the report's lines from there, also if interrupted
                    lines_start = start
                    return cartesian_goal(motion, start)
                result, _ = client.follow_from_next_start(
                    client.cartesian, lines_goal, motion.duration - first.duration, out)
        else:
            print(f'demo: executing {len(motion.times)} points over {motion.duration:.1f} s',
                  file=out, flush=True)
            result, _ = client.follow_from_next_start(
                client.action, lambda start: goal_message(model, motion, start), motion.duration,
                out)
        ended = ns_to_s(client.get_clock().now().nanoseconds)
        wall = time.monotonic() - wall
    except KeyboardInterrupt:
        # Ctrl-C: the graph stops as at the end (the controller's final safe command goes out);
        # a second Ctrl-C would only interrupt that stop
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        interrupted = True
    finally:
        nodes.stop()          # shuts the context down, joins the threads, finishes the file
        bringup.stop_view(viewer)
    if interrupted:
        print(f'demo: interrupted; the graph stopped, the recording so far is {recording_path} '
              f'(robot-dynamics plot {recording_path} --out DIR)', file=out, flush=True)
        return INTERRUPTED
    recording = recordings.read(recording_path)
    topics = definitions.topics(namespace)
    states = recordings.controller_states(recording, topics)
    states = states.messages if states else []
    report = summarise(model, client, motion, result, states, started, ended)
    report['cartesian'] = cartesian
    if cartesian:
        report['line_deviation_m'] = (None if lines_start is None else
                                      line_deviation(model, motion, states, ns_to_s(lines_start)))
    report['lockstep'] = lockstep
    report['clock'] = clock
    report['wall_time_s'] = wall
    report['real_time_factor'] = (ended - started) / wall if wall > 0.0 else None
    report['recording'] = str(recording_path)
    if out_dir is not None:
        report['plots'] = plot(model, motion, recording, out_dir, topics)
    _print_summary(report, out)
    if report_path:
        Path(report_path).write_text(json.dumps(report, indent=2))
        print(f'report written to {report_path}', file=out)
    return 0 if report['succeeded'] else 1


def wait_until(condition, timeout, what):
    """Poll ``condition()`` until true and return it; raise ``TimeoutError`` naming ``what``."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise TimeoutError(f'no answer within {timeout:g} s: {what}')
        time.sleep(0.001)
    return value
