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

Brings up the node set of :mod:`~robot_dynamics.ros.graph` (one process per node), plans a
pick-and-place in Cartesian space (straight tip lines between a few poses, each sampled with a
smooth time law and solved through ``/compute_ik``, every call seeded with the previous
solution), sends the joint trajectory through the controller's ``follow_joint_trajectory``
action, waits for the result, then stops every node. It reports the tracking error, the
control rate and latency, the missed cycles and the IK calls (the JSON report of api.md) and
writes the PNG plots.
"""

import json
from pathlib import Path
import sys
import tempfile
import time
from typing import NamedTuple

from action_msgs.msg import GoalStatus
import numpy as np
import rclpy
from rclpy.node import Node
from robot_dynamics_interfaces.action import FollowJointTrajectory
from robot_dynamics_interfaces.msg import ControllerState
from robot_dynamics_interfaces.srv import SolveIK
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from . import bringup, graph
from .compat import ActionClient
from .conversions import joint_state, matrix_to_pose, to_seconds, trajectory_point
from .on_demand import OnDemand, take_newest
from .recording import RecorderNode
from .. import plots, recordings
from ..errors import InputError
from ..limits import middle
from ..linalg import damped_least_squares
from ..model import RobotModel
from ..simulation import AMPLITUDE_FRACTION, MAX_REVOLUTE_AMPLITUDE
from ..trajectory import CartesianLine

#: Default duration of the motion [s] (split equally among the Cartesian segments).
DEFAULT_DURATION = 8.0
#: IK samples per Cartesian segment (after its start pose).
SAMPLES_PER_SEGMENT = 8
#: Height of the approach poses above pick and place, as a fraction of the arm's reach.
LIFT_FRACTION = 0.08
#: Damping [m or rad] of the least squares that map tip twists to joint velocities.
RATE_DAMPING = 1e-6
#: Time allowed for the goal after its last point [s].
GOAL_TIME = 2.0
#: The demo's recording, in ``--out`` (or a temporary folder).
RECORDING = 'demo.mcap'
#: A /compute_ik reply is waited for this long [s] before the request is sent again, at most
#: IK_ATTEMPTS times in all (a reply takes ~1 ms).
IK_TIMEOUT, IK_ATTEMPTS = 3.0, 4


class Plan(NamedTuple):
    """The planned motion: Cartesian lines and the joint trajectory solved along them."""

    names: list            # the segments' names ('approach pick', ...)
    lines: list            # CartesianLine per segment, absolute times from 0
    times: np.ndarray      # (K,) [s] from the start
    q: np.ndarray          # (K, n) joint positions from /compute_ik
    qd: np.ndarray         # (K, n) joint velocities mapping the tip twist


def waypoints(model, q_start):
    """
    Return the named tip poses of the pick-and-place, from the current configuration.

    Pick and place are the tip poses of two bent configurations that differ by the first
    joint only (one IK branch all the way, away from the straight-arm singularity); the approach
    poses lie ``LIFT_FRACTION`` of the arm's reach above them (base z), lowered until the
    library's own IK reaches them.
    """
    mid = middle(model.lower, model.upper)
    half = np.where(np.isfinite(model.lower) & np.isfinite(model.upper),
                    0.5 * (model.upper - model.lower), np.pi)
    amplitude = np.where(model.is_prismatic, AMPLITUDE_FRACTION * half,
                         np.minimum(AMPLITUDE_FRACTION * half, MAX_REVOLUTE_AMPLITUDE))
    pick = model.fk(mid + amplitude)
    swing = np.ones(model.dof)
    swing[0] = -1.0
    place = model.fk(mid + swing * amplitude)
    reach = np.linalg.norm(model.fk(mid)[:3, 3] - model.fk(mid, model.base_link)[:3, 3])
    poses = [('start', model.fk(q_start))]
    for name, pose, seed in (('pick', pick, mid + amplitude),
                             ('place', place, mid + swing * amplitude)):
        above = pose.copy()
        lift = LIFT_FRACTION * reach
        while True:
            above[2, 3] = pose[2, 3] + lift
            if model.ik(above, seed=seed).success or lift < 1e-3:
                break
            lift *= 0.5
        poses += [(f'above {name}', above.copy()), (name, pose), (f'above {name}', above)]
    return poses


class DemoClient(Node):
    """The demo's own node: the latest joint state, the IK calls and the action."""

    def __init__(self):
        super().__init__('demo')
        # read on demand: the plan needs one state, not a wake-up for each of 1,000 per second
        self.joint_states = self.create_subscription(JointState, '/joint_states',
                                                     lambda msg: None, 1,
                                                     callback_group=OnDemand())
        self.ik = self.create_client(SolveIK, '/compute_ik')
        self.action = ActionClient(self, FollowJointTrajectory,
                                   '/controller/follow_joint_trajectory')
        self.ik_latency = []
        self.ik_successes = 0
        self.ik_lost_replies = 0

    def newest_state(self):
        """Return the newest joint state (the plan starts from it), or None."""
        return take_newest(self.joint_states)

    @staticmethod
    def wait(future, timeout, what):
        """Wait for an rclpy future (spun by another thread); return its result."""
        wait_until(future.done, timeout, what)
        return future.result()

    def solve(self, model, pose, seed):
        """Call /compute_ik for the tip ``pose`` seeded with ``seed``; return the solution."""
        request = SolveIK.Request(robot_state=joint_state(model.joint_names,
                                                          self.get_clock().now().to_msg(), seed))
        request.pose_stamped.header.frame_id = model.base_link
        request.pose_stamped.pose = matrix_to_pose(pose)
        start = time.perf_counter()
        for attempt in range(IK_ATTEMPTS):
            # DDS can lose a service reply (ros2/rmw#372); IK is idempotent: ask again
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
    """Plan the pick-and-place through /compute_ik; return the :class:`Plan`."""
    poses = waypoints(model, q_start)
    segments = len(poses) - 1
    segment_time = duration / segments
    mask = model.task_mask.astype(bool)
    names, lines, times, q, qd = [], [], [0.0], [np.array(q_start, dtype=float)], \
        [np.zeros(model.dof)]
    for k in range(segments):
        line = CartesianLine(poses[k][1], poses[k + 1][1], segment_time,
                             start_time=k * segment_time)
        names.append(f'{poses[k][0]} -> {poses[k + 1][0]}')
        lines.append(line)
        t = line.start_time + segment_time * np.arange(1, SAMPLES_PER_SEGMENT + 1) \
            / SAMPLES_PER_SEGMENT
        target = line.sample(t)
        for j in range(t.size):
            q.append(client.solve(model, target.pose[j], q[-1]))
        J = model.jacobian(np.array(q[-t.size:]))[:, mask, :]
        rates = damped_least_squares(J, target.twist[:, mask, None], RATE_DAMPING)[..., 0]
        rates[-1] = 0.0        # every segment ends at rest (pick, place)
        qd.extend(rates)
        times.extend(t)
    return Plan(names, lines, np.array(times), np.array(q), np.array(qd))


def goal_message(model, motion):
    """Return the FollowJointTrajectory goal of a plan (starting now, from its first point)."""
    msg = JointTrajectory(joint_names=list(model.joint_names))
    msg.points = [trajectory_point(q, qd, time_from_start=t)
                  for t, q, qd in zip(motion.times, motion.q, motion.qd)]
    goal = FollowJointTrajectory.Goal(trajectory=msg)
    goal.goal_time_tolerance.sec = int(GOAL_TIME)
    return goal


def _percentiles(values_s):
    values = np.asarray(values_s) * 1e3
    if values.size == 0:
        return {'p50': None, 'p99': None}
    return {'p50': float(np.percentile(values, 50)), 'p99': float(np.percentile(values, 99))}


def summarise(model, client, motion, result, controller_states, started, ended):
    """
    Return the JSON report of the run (api.md): tracking, control loop, IK.

    ``controller_states`` are the controller's ControllerState messages (at its
    ``state_publish_rate_hz``, 100 Hz: tracking error and latency are sampled there, the cycle
    counters count every cycle); the statistics cover those stamped between ``started`` and
    ``ended`` [s].
    """
    window = [m for m in controller_states if started <= to_seconds(m.header.stamp) <= ended]
    tracking = [m for m in window if m.mode == ControllerState.MODE_TRAJECTORY]
    error = np.array([m.error.positions for m in tracking]) if tracking else np.zeros((0, 1))
    latency = [to_seconds(m.header.stamp) - to_seconds(m.state_stamp) for m in window]
    first, last = (window[0], window[-1]) if window else (None, None)
    span = to_seconds(last.header.stamp) - to_seconds(first.header.stamp) if window else 0.0
    return {
        'robot': model.name,
        'joints': list(model.joint_names),
        'succeeded': result.status == GoalStatus.STATUS_SUCCEEDED
        and result.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL,
        'result': {'status': int(result.status), 'error_code': int(result.result.error_code),
                   'error_string': result.result.error_string},
        'segments': motion.names,
        'motion_duration_s': float(motion.times[-1]),
        'rms_tracking_error': float(np.sqrt(np.mean(error ** 2))) if error.size else None,
        'max_tracking_error': float(np.abs(error).max()) if error.size else None,
        'control_rate_hz': (last.cycles - first.cycles) / span if span > 0.0 else None,
        'control_latency_ms': _percentiles(latency),
        'missed_cycles': int(last.missed_cycles - first.missed_cycles) if window else None,
        'control_cycles': int(last.cycles - first.cycles) if window else 0,
        'ik_calls': len(client.ik_latency),
        'ik_successes': client.ik_successes,
        'ik_latency_ms': _percentiles(client.ik_latency),
        'ik_lost_replies': client.ik_lost_replies,
    }


def plot(model, motion, recording, out_dir):
    """Write the demo's PNG plots from its recording and plan; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    t = np.linspace(0.0, motion.times[-1], 400)
    planned = np.concatenate([line.sample(t[(t >= line.start_time) & (t <= line.end_time)])
                              .pose[:, :3, 3] for line in motion.lines])
    goal_points = model.fk(motion.q)[:, :3, 3]
    for name, (data, why), draw, changes in (
            ('tracking', recordings.tracking(recording, model), plots.plot_tracking, {}),
            ('effort', recordings.effort(recording, model), plots.plot_effort, {}),
            ('tip_path', recordings.tip_path(recording, model), plots.plot_tip_path,
             {'planned': planned, 'waypoints': goal_points,
              'title': f'{model.name}: tip path, base frame\nplanned: straight lines between '
                       'the pick-and-place poses; points: the /compute_ik solutions'})):
        if data is None:
            raise InputError(f'{recordings.PLOT_FILES[name]}: {why}')
        path = out_dir / recordings.PLOT_FILES[name]
        draw(path, **{**data._asdict(), **changes})
        written.append(str(path))
    return written


def _fmt(value, spec):
    return 'n/a' if value is None else format(value, spec)


def _print_summary(report, out):
    latency, ik = report['control_latency_ms'], report['ik_latency_ms']
    print(f'{report["robot"]}: pick-and-place {"succeeded" if report["succeeded"] else "FAILED"}'
          f' ({report["result"]["error_string"] or "goal reached"})', file=out)
    print(f'  tracking error   rms {_fmt(report["rms_tracking_error"], ".3g")}, max '
          f'{_fmt(report["max_tracking_error"], ".3g")} (rad or m)', file=out)
    print(f'  control          {_fmt(report["control_rate_hz"], ".1f")} Hz, latency p50 '
          f'{_fmt(latency["p50"], ".3f")} ms, p99 {_fmt(latency["p99"], ".3f")} ms, '
          f'{report["missed_cycles"]} missed of {report["control_cycles"]}', file=out)
    print(f'  IK               {report["ik_successes"]}/{report["ik_calls"]} solved, p50 '
          f'{_fmt(ik["p50"], ".3f")} ms, p99 {_fmt(ik["p99"], ".3f")} ms', file=out)


def run(robot, *, report_path=None, out_dir=None, duration=DEFAULT_DURATION, out=sys.stdout):
    """Run the demo on a bundled robot; return the exit status (0: the goal succeeded)."""
    if out_dir is not None:
        plots.require_matplotlib()
    model = RobotModel.load(robot)
    work = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix='demo_'))
    work.mkdir(parents=True, exist_ok=True)
    recording_path = work / RECORDING
    recording_path.unlink(missing_ok=True)
    rclpy.init(signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    nodes = bringup.Bringup(graph.nodes('sim'), [graph.parameter_file(robot)], {},
                            processes=True, out=out)
    client = DemoClient()
    try:
        print(f'demo: bringing up {robot} (model, kinematics, simulator, controller), recording '
              f'to {recording_path}', file=out, flush=True)
        nodes.start()
        nodes.add_node(RecorderNode(cli_args=['--ros-args', '-p', f'path:={recording_path}']))
        nodes.add_node(client)
        if not nodes.wait_ready():
            raise RuntimeError(nodes.failure)
        state = wait_until(client.newest_state, 60.0, 'joint states')
        q_start = np.array(state.position)[model.indices_in(state.name)]
        print('demo: planning through /compute_ik', file=out, flush=True)
        motion = plan(client, model, q_start, duration)
        wait_until(client.action.server_is_ready, 60.0, 'the follow_joint_trajectory action')
        print(f'demo: executing {len(motion.times)} points over {motion.times[-1]:.1f} s',
              file=out, flush=True)
        started = client.get_clock().now().nanoseconds * 1e-9
        handle = client.wait(client.action.send_goal_async(goal_message(model, motion)), 30.0,
                             'the goal response')
        result = client.wait(handle.get_result_async(), motion.times[-1] + 60.0,
                             'the goal result')
        ended = client.get_clock().now().nanoseconds * 1e-9
    finally:
        nodes.stop()          # shuts the context down, joins the threads, finishes the file
    recording = recordings.read(recording_path)
    states = recording.tables.get(recordings.CONTROLLER_STATE)
    report = summarise(model, client, motion, result, states.messages if states else [],
                       started, ended)
    report['recording'] = str(recording_path)
    if out_dir is not None:
        report['plots'] = plot(model, motion, recording, out_dir)
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
