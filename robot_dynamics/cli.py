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
The ``robot-dynamics`` command line.

Subcommands:

- ``simulate``: a closed loop in the library (no ROS): RK4 plant, a control law at its own rate,
  optional model error and torque noise; prints a summary, writes the JSON report (``--report``)
  and PNG plots (``--plot``, ``--compare-plot``; matplotlib needed).
- ``demo``: the main job: a pick-and-place through the ROS 2 graph
  (``robot_dynamics.ros.tools.demo``), with the JSON report (``--report``) and the plots
  (``--out``).
- ``info``: for each bundled robot (or ``--robot``), its joints and limits, and the tip pose and
  Jacobian at a bent configuration inside the limits; ``--report`` writes them as JSON.
- ``bringup``: the ROS 2 node set of ``launch/sim.launch.py`` without ``ros2 launch``; runs
  until SIGINT or SIGTERM (exit status 0), exit status 1 when a node fails.
- ``plot``: a ROS 2 recording (MCAP, from the recorder node or ``ros2 bag record -s mcap``) as
  a CSV file per topic and the PNG plots of the demo (matplotlib needed, unless ``--csv-only``).
- ``excite``: an excitation trajectory for identification (:mod:`robot_dynamics.excitation`) as
  a ``trajectory_msgs/JointTrajectory`` in YAML.
- ``send``: a trajectory file to the controller's ``follow_joint_trajectory`` action; waits for
  the result (exit status 0 when the goal succeeded).
- ``identify``: the arm's dynamic parameters from a recording of ``/joint_states`` with effort
  and ``/robot_description`` (:mod:`robot_dynamics.identification`), written into that
  description; a JSON report and PNG plots of measured against predicted torque.
- ``derive``: a robot's equations of motion in closed form (:mod:`robot_dynamics.symbolic`),
  with numbers or symbols; ``--count`` the operations of its generated code
  (:mod:`robot_dynamics.generated`) beside Turney, Mudge and Lee's Table 8.1.

Exit status: 0 on success, 1 if a simulation diverged or a file could not be written, 2 for
bad arguments (argparse's convention).
"""

import argparse
import dataclasses
import itertools
import json
import math
import sys

from .errors import InputError, RobotDynamicsError

PROG = 'robot-dynamics'
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


def _robots():
    from .model import RobotModel
    return RobotModel.available()


def _number(accept, expected):
    """Return an argparse type: a finite float for which ``accept(value)`` holds."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'expected a number, got {text!r}') from None
        if not (math.isfinite(value) and accept(value)):
            raise argparse.ArgumentTypeError(f'expected {expected}, got {text!r}')
        return value
    return parse


def _numbers(text):
    """Parse comma-separated finite numbers."""
    try:
        values = [float(v) for v in text.split(',')]
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected numbers separated by commas, got {text!r}') \
            from None
    if not all(math.isfinite(v) for v in values):
        raise argparse.ArgumentTypeError(f'expected finite numbers, got {text!r}')
    return values


_positive_float = _number(lambda v: v > 0.0, 'a positive number')
_non_negative_float = _number(lambda v: v >= 0.0, 'a number >= 0')
_fraction = _number(lambda v: v > -1.0, 'a fraction > -1 (e.g. 0.2 or -0.2)')


def _vector3(text):
    """Parse three comma-separated finite numbers."""
    values = _numbers(text)
    if len(values) != 3:
        raise argparse.ArgumentTypeError(f'expected three numbers x,y,z, got {text!r}')
    return values


def _simulate_parser(sub, robots):
    """Add the ``simulate`` command to the subparsers ``sub``."""
    from . import closed_loop as sim
    p = sub.add_parser(
        'simulate', help='closed-loop simulation in the library (no ROS)',
        description='Track a smooth reference (a quintic through a few waypoints, then a hold) '
                    'with a control law on an RK4-integrated plant; print a summary and write '
                    'the JSON report.')
    p.add_argument('--robot', required=True, choices=robots, metavar='NAME',
                   help=f'bundled robot: {", ".join(robots)}')
    p.add_argument('--controller', choices=sim.LAWS,
                   help="control law (required without --goal; with it, default the robot's "
                        'configured law)')
    p.add_argument('--duration', type=_positive_float, metavar='S',
                   help=f'simulated time in seconds (default {sim.DEFAULT_DURATION:g}; with '
                        "--goal, until 1 s after the goal's end and goal time)")
    p.add_argument('--goal', metavar='FILE.yaml',
                   help="a trajectory file (send's format): run the ROS graph's loop in lockstep "
                        "in one process, as bringup with the robot's parameter file configures "
                        'it, the goal sent at the first state')
    p.add_argument('--csv', metavar='FILE.csv',
                   help='with --goal: write the joint states (time, then position, velocity and '
                        'effort per joint), one row per step')
    p.add_argument('--report', metavar='FILE', help='write the JSON report to FILE')
    p.add_argument('--plant-rate', type=_positive_float, default=sim.DEFAULT_PLANT_RATE,
                   metavar='HZ', help='RK4 steps per second (default %(default)g)')
    p.add_argument('--control-rate', type=_positive_float, default=sim.DEFAULT_CONTROL_RATE,
                   metavar='HZ', help='controller updates per second, zero-order hold in '
                                      'between; must divide the plant rate (default %(default)g)')
    p.add_argument('--model-error', type=_fraction, default=0.0, metavar='FRACTION',
                   help="scale the controller model's masses and inertias by 1 + FRACTION "
                        '(e.g. 0.2; default 0)')
    p.add_argument('--torque-noise', type=_non_negative_float, default=0.0, metavar='STD',
                   help='standard deviation of Gaussian noise on the applied torques, N m or N '
                        '(default 0)')
    p.add_argument('--seed', type=int, default=sim.DEFAULT_SEED, metavar='N',
                   help='seed of the noise (default %(default)s)')
    p.add_argument('--natural-frequency', type=_positive_float,
                   default=sim.DEFAULT_NATURAL_FREQUENCY, metavar='RAD_S',
                   help='closed-loop natural frequency that sets the gains (default %(default)g)')
    p.add_argument('--damping-ratio', type=_non_negative_float,
                   default=sim.DEFAULT_DAMPING_RATIO, metavar='ZETA',
                   help='closed-loop damping ratio (default %(default)g)')
    p.add_argument('--no-friction', dest='friction', action='store_false',
                   help='simulate a frictionless plant (and no friction feed-forward)')
    p.add_argument('--plot', metavar='FILE.png',
                   help='write reference vs actual, error and torque per joint (matplotlib)')
    p.add_argument('--compare-plot', metavar='FILE.png',
                   help=f'also run {", ".join(sim.LAWS)} with the same settings and '
                        'write one figure comparing them (matplotlib)')
    p.set_defaults(handler=simulate_command)


def _demo_parser(sub, robots):
    """Add the ``demo`` command to the subparsers ``sub``."""
    from . import pick_and_place
    p = sub.add_parser(
        'demo', help='the main job: a pick-and-place on the simulated arm through ROS 2',
        description='Bring up the ROS 2 graph (model, kinematics, simulator, controller) for a '
                    "bundled robot, plan a pick-and-place in the robot's workspace through "
                    '/compute_ik within its velocity and effort limits, execute it through the '
                    "controller's follow_joint_trajectory action, print a summary, write the "
                    'JSON report and the plots, and stop every node.')
    p.add_argument('--robot', default='scara', choices=robots, metavar='NAME',
                   help=f'bundled robot: {", ".join(robots)} (default %(default)s)')
    p.add_argument('--report', metavar='FILE', help='write the JSON report to FILE')
    p.add_argument('--out', metavar='DIR', help='write the PNG plots to DIR')
    p.add_argument('--duration', type=_positive_float, default=pick_and_place.DEFAULT_DURATION,
                   metavar='S', help='nominal duration of the motion in seconds; each part is '
                                     "slowed down as far as the robot's limits need (default "
                                     '%(default)g)')
    _clock_options(p)
    p.add_argument('--cartesian', action='store_true',
                   help='after the joint move to above pick, send the straight tip lines as one '
                        "goal of poses to the controller's follow_cartesian_trajectory action "
                        "(its task-space law) instead of /compute_ik's joint points; reports the "
                        "tip's largest and rms distance from the lines")
    _namespace_argument(p)
    _view_option(p)
    p.add_argument('--wait-for-view', action='store_true',
                   help='with --view: start the motion once a page of the view is open')
    p.set_defaults(handler=demo_command)


def _namespace_argument(p):
    """Add ``--namespace`` to the parser ``p`` of a command that talks to an arm's graph."""
    p.add_argument('--namespace', default='', metavar='NS',
                   help="the arm's namespace: its nodes, topics, services and actions under /NS "
                        '(e.g. left: /left/joint_states, /left/compute_ik); default: the root')


def _view_parser(sub, robots):
    """Add the ``view`` command to the subparsers ``sub``."""
    p = sub.add_parser(
        'view', help='the arm in a browser: the running graph live, or a recording replayed',
        description='Serve a 3D view of the arm at http://HOST:PORT (viser; works offline). '
                    'Without a file: the running ROS 2 graph (the arm of /robot_description '
                    'moving with /joint_states, the reference as a ghost, the tip path, a '
                    'status panel) that you can steer: drag the tip handle, move the joint '
                    'sliders, push the arm, cancel the goal, reset the simulator. With a '
                    'recording (bringup --record, demo): its replay with play, pause, speed and '
                    'a timeline. Ctrl-C stops it.')
    p.add_argument('recording', nargs='?', metavar='FILE.mcap', help='replay this recording')
    p.add_argument('--port', type=int, default=8080, help='port to serve on (default %(default)s)')
    p.add_argument('--host', default='127.0.0.1',
                   help='address to serve on (default %(default)s, this machine only; see the '
                        'README: Security)')
    _namespace_argument(p)
    p.set_defaults(handler=view_command)


def _view_option(p):
    """Add ``--view [PORT]`` to the parser of a command that starts the graph."""
    p.add_argument('--view', nargs='?', type=int, const=8080, metavar='PORT',
                   help='also serve the live view of the arm at http://127.0.0.1:PORT (default '
                        '8080) in a process of its own')


def _info_parser(sub, robots):
    """Add the ``info`` command to the subparsers ``sub``."""
    p = sub.add_parser(
        'info', help='joints, limits, tip pose and Jacobian of the bundled robots',
        description='Print each bundled robot (or --robot NAME): joints with types and limits, '
                    'and the tip pose and Jacobian at a bent configuration inside the limits.')
    p.add_argument('--robot', choices=robots, metavar='NAME',
                   help=f'only this robot: {", ".join(robots)}')
    p.add_argument('--report', metavar='FILE', help='write the JSON report to FILE')
    p.set_defaults(handler=info_command)


def _clock_options(p):
    """
    Add the simulated arm's clock options (``graph.CLOCKS``) to the parser ``p``.

    ``clock`` None: the graph's default (``graph.DEFAULT_CLOCK``), decided where the graph is
    built (this parser needs no ROS).
    """
    clock = p.add_mutually_exclusive_group()
    clock.add_argument('--lockstep', dest='clock', action='store_const', const='lockstep',
                       help='simulated time as fast as the processes allow (the default keeps '
                            'it to the wall clock); in both the '
                            'simulator waits for the command that answers each joint state: the '
                            'same numbers every run, whatever else the host does')
    clock.add_argument('--real-time', dest='clock', action='store_const', const='real-time',
                       help='the simulator on the wall clock, as an arm: the control latency '
                            'and missed states measured as on one; a busy host can starve the '
                            'simulator, and the controller then stops the goal in its safe mode')
    p.set_defaults(clock=None)


def _bringup_parser(sub, robots):
    """Add the ``bringup`` command to the subparsers ``sub``."""
    from . import closed_loop as sim
    p = sub.add_parser(
        'bringup', help='start the ROS 2 nodes (model, kinematics, simulator, controller)',
        description='Start the ROS 2 node set of launch/sim.launch.py with the same parameter '
                    'files and remappings, for installs without ros2 launch. Prints the nodes '
                    'with their topics and services once they serve; SIGINT (Ctrl-C) or SIGTERM '
                    'stops them, exit status 0. The graph stays on loopback unless '
                    'ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET (see the README: Security).')
    p.add_argument('--robot', choices=robots, metavar='NAME',
                   help=f'bundled robot, parameters from config/NAME.yaml: {", ".join(robots)}')
    p.add_argument('--params-file', action='append', default=[], metavar='FILE',
                   help="a ROS 2 parameter file, after the robot's (repeatable)")
    p.add_argument('-p', '--param', action='append', default=[], metavar='NODE.NAME:=VALUE',
                   type=_node_parameter,
                   help='set one parameter of one node, after the files, e.g. '
                        'simulator.realtime:=false (repeatable)')
    p.add_argument('--control-law', choices=sim.LAWS,
                   help="the controller's law (default: the parameter file's, else "
                        'computed_torque)')
    p.add_argument('--processes', action='store_true',
                   help='one process per node instead of one process for all')
    p.add_argument('--record', metavar='FILE.mcap',
                   help='record joint states, commands, goals (topic), controller state and the '
                        'robot description to an MCAP file (ros2 bag and Foxglove replay it; '
                        '`robot-dynamics plot` draws it)')
    p.add_argument('--hardware', action='store_true',
                   help='a real arm: no simulator; states from its /joint_states, commands to '
                        'its forward_command_controller; the controller checks joint names, '
                        'effort limits and that its commands are heard (README: real arms)')
    _clock_options(p)
    _namespace_argument(p)
    _view_option(p)
    p.set_defaults(handler=bringup_command, clock=None)


def _plot_parser(sub, robots):
    """Add the ``plot`` command to the subparsers ``sub``."""
    p = sub.add_parser(
        'plot', help='CSV tables and PNG plots of a ROS 2 recording (MCAP)',
        description='Read a recording made by the recorder node (recorder_node) or by ros2 '
                    'bag record -s mcap, with ROS 2 message definitions; '
                    'write a CSV file per topic (log_time, stamp, one column per field, '
                    'per-joint columns like position.shoulder) and the plots tracking.png '
                    '(reference vs actual and error per joint), effort.png (effort with the '
                    'limits of the recorded robot description) and tip_path.png (the tip in the '
                    'workspace against the reference). No ROS installation needed.')
    p.add_argument('recording', metavar='FILE.mcap', help='the recording')
    p.add_argument('--out', required=True, metavar='DIR',
                   help='folder for the CSV and PNG files (created if missing)')
    p.add_argument('--csv-only', action='store_true',
                   help='write the CSV files only (no matplotlib needed)')
    p.add_argument('--namespace', default='', metavar='NS',
                   help='plot the arm recorded under /NS (bringup --record --namespace NS); '
                        'default: the root')
    p.set_defaults(handler=plot_command)


def _excite_parser(sub, robots):
    """Add the ``excite`` command to the subparsers ``sub``."""
    from . import excitation
    p = sub.add_parser(
        'excite', help='an excitation trajectory for identification, as JointTrajectory YAML',
        description='Optimise a periodic joint motion (finite Fourier series, Swevers et al. '
                    '1997) that conditions the base regressor of the dynamics well, within the '
                    'position, velocity, acceleration and effort limits, starting and ending at '
                    'rest at --start, and write it as a trajectory_msgs/JointTrajectory in YAML '
                    '(ros2 topic pub layout; robot-dynamics send sends it).')
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument('--robot', choices=robots, metavar='NAME',
                        help=f'bundled robot: {", ".join(robots)}')
    source.add_argument('--urdf', metavar='FILE', help='a URDF file')
    p.add_argument('--base-link', metavar='LINK', help='chain base of the URDF')
    p.add_argument('--tip-link', metavar='LINK', help='chain tip of the URDF')
    p.add_argument('--duration', type=_positive_float, default=excitation.DEFAULT_DURATION,
                   metavar='S', help='length of the motion in seconds, whole periods '
                                     '(default %(default)g)')
    p.add_argument('--period', type=_positive_float, default=excitation.DEFAULT_PERIOD,
                   metavar='S', help='period of the fundamental (default %(default)g)')
    p.add_argument('--harmonics', type=int, default=excitation.DEFAULT_HARMONICS, metavar='L',
                   help='harmonics of the Fourier series (default %(default)s)')
    p.add_argument('--start', type=_numbers, metavar='Q1,Q2,...',
                   help="where the motion starts and ends at rest, rad or m in the model's joint "
                        "order (default: a bundled robot's simulator start, else the middle of "
                        'the limits); the controller moves the arm there during the lead-in')
    p.add_argument('--lead-in', type=_non_negative_float, default=excitation.LEAD_IN,
                   metavar='S', help='time to reach the start before the motion '
                                     '(default %(default)g)')
    p.add_argument('--rate', type=_positive_float, default=excitation.POINT_RATE, metavar='HZ',
                   help='points per second (default %(default)g)')
    p.add_argument('--seed', type=int, default=0, metavar='N',
                   help='seed of the optimisation (default %(default)s)')
    p.add_argument('--out', required=True, metavar='FILE.yaml', help='the trajectory file')
    p.set_defaults(handler=excite_command)


def _send_parser(sub, robots):
    """Add the ``send`` command to the subparsers ``sub``."""
    p = sub.add_parser(
        'send', help="send a trajectory file to the controller's action and wait",
        description='Send a JointTrajectory YAML file (robot-dynamics excite writes one; a '
                    'FollowJointTrajectory goal in YAML works too) to the follow_joint_trajectory '
                    'action of the controller, or a CartesianTrajectory file (points with a pose) '
                    'to its follow_cartesian_trajectory action, and wait for the result: exit '
                    'status 0 when it succeeded, 1 with the error the controller gives '
                    'otherwise. Ctrl-C cancels the goal. Needs rclpy.')
    p.add_argument('trajectory', metavar='FILE.yaml', help='the trajectory file')
    p.add_argument('--action', default=None, metavar='NAME',
                   help="the action; a relative name is in the arm's --namespace (default "
                        'controller/follow_joint_trajectory, or '
                        'controller/follow_cartesian_trajectory for a Cartesian file)')
    _namespace_argument(p)
    p.add_argument('--timeout', type=_positive_float, default=30.0, metavar='S',
                   help='how long to wait for the action server (default %(default)g)')
    p.set_defaults(handler=send_command)


def _push_parser(sub, robots):
    """Add the ``push`` command to the subparsers ``sub``."""
    p = sub.add_parser(
        'push', help='push the simulated arm with an external wrench for a while',
        description="Publish a wrench on the simulator's external_wrench topic, hold it for "
                    '--duration seconds, then release it (a zero wrench; also on Ctrl-C). The '
                    'force and torque are in the base axes, at the origin of the link --frame '
                    '(default: the tip). Needs rclpy.')
    p.add_argument('--force', type=_vector3, default=[0.0] * 3, metavar='FX,FY,FZ',
                   help='force [N] (default 0,0,0)')
    p.add_argument('--torque', type=_vector3, default=[0.0] * 3, metavar='TX,TY,TZ',
                   help='torque [N m] (default 0,0,0)')
    p.add_argument('--frame', default='', metavar='LINK',
                   help='the link pushed (default: the tip)')
    p.add_argument('--duration', type=_positive_float, default=1.0, metavar='S',
                   help='how long the push lasts [s of the wall clock] (default %(default)g)')
    p.add_argument('--topic', default=None, metavar='NAME',
                   help="the wrench topic; a relative name is in the arm's --namespace (default "
                        'simulator/external_wrench)')
    _namespace_argument(p)
    p.add_argument('--timeout', type=_positive_float, default=30.0, metavar='S',
                   help='how long to wait for the simulator (default %(default)g)')
    p.set_defaults(handler=push_command)


def _identify_parser(sub, robots):
    """Add the ``identify`` command to the subparsers ``sub``."""
    from . import identify, signals
    p = sub.add_parser(
        'identify', help="identify the arm's dynamics from a recording (MCAP)",
        description='Read /joint_states (position and effort, the measured joint torque; '
                    'joints matched by name) and /robot_description from a recording, filter '
                    'and differentiate (zero-phase; the stretches between gaps of lost messages '
                    'apart), leave out the samples at rest (static friction or brakes hold '
                    'the arm there), estimate the base parameters by weighted least squares on '
                    'the first part of the others, fit a physically '
                    'consistent set of inertias and friction to them, and write the recorded '
                    'description with the identified <inertial> and <dynamics> of the chain. '
                    'The report holds the base parameters with standard deviations, the '
                    'condition number and the torque prediction error on the held-out rest for '
                    'the recorded and the identified model.')
    p.add_argument('recording', metavar='FILE.mcap', help='the recording')
    p.add_argument('--out', required=True, metavar='FILE.urdf',
                   help='the identified URDF (the recorded description, parameters replaced)')
    p.add_argument('--report', metavar='FILE.json', help='write the JSON report to FILE')
    p.add_argument('--plots', metavar='DIR',
                   help='write measured vs predicted torque per joint (matplotlib)')
    p.add_argument('--base-link', metavar='LINK', help='chain base (default: the URDF rule)')
    p.add_argument('--tip-link', metavar='LINK', help='chain tip (default: the URDF rule)')
    p.add_argument('--cutoff', type=_positive_float, default=signals.DEFAULT_CUTOFF,
                   metavar='HZ', help='low-pass cut-off of positions and torques '
                                      '(default %(default)g)')
    p.add_argument('--held-out', type=_number(lambda v: 0.0 < v < 1.0, 'a fraction in (0, 1)'),
                   default=identify.DEFAULT_HELD_OUT, metavar='FRACTION',
                   help='last fraction of the samples in motion kept for the prediction error '
                        '(default %(default)g)')
    p.add_argument('--excitation', metavar='FILE.yaml',
                   help='the trajectory file sent: the length of the excitation the recording '
                        'must cover, where the recording holds no goal that says it')
    p.add_argument('--partial', action='store_true',
                   help='identify a recording that covers less than '
                        f'{100 * identify.MIN_COVERAGE:g} %% of the excitation (or an unknown '
                        'part of a goal that failed), with a warning')
    p.set_defaults(handler=identify_command)


def build_parser():
    """Return the argument parser of ``robot-dynamics`` with its subcommands."""
    robots = _robots()
    parser = argparse.ArgumentParser(
        prog=PROG, description='Kinematics, dynamics and control of serial robot arms.')
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    sub.required = True
    for add in (_simulate_parser, _demo_parser, _info_parser, _bringup_parser, _plot_parser,
                _excite_parser, _send_parser, _push_parser, _identify_parser, _derive_parser,
                _view_parser):
        add(sub, robots)
    return parser


# ---- simulate -----------------------------------------------------------------------------------

def _write_json(path, data):
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(data, f, indent=2, sort_keys=False)
        f.write('\n')


def _fmt(values, precision=3):
    return '[' + ', '.join(f'{v:.{precision}g}' for v in values) + ']'


def _print_summary(rep, out):
    units = rep['units']['tracking_error']
    unit = units[0] if len(set(units)) == 1 else 'rad or m'
    print(f'simulate {rep["robot"]} with {rep["controller"]}: {rep["simulated_time"]:g} s, '
          f'plant {rep["plant_rate_hz"]:g} Hz (RK4), control {rep["control_rate_hz"]:g} Hz, '
          f'model error {rep["model_error"]:+g}, torque noise {rep["torque_noise"]:g}', file=out)
    print(f'  tracking error: rms {rep["rms_tracking_error"]:.3e} {unit}, max '
          f'{rep["max_tracking_error"]:.3e} {unit}', file=out)
    print(f'  per joint: rms {_fmt(rep["rms_tracking_error_per_joint"])}, final '
          f'{_fmt(rep["final_tracking_error"])}', file=out)
    print(f'  torque: max |tau| {rep["max_abs_torque"]:.4g}, per joint '
          f'{_fmt(rep["max_abs_torque_per_joint"], 4)} (limits {_fmt(rep["effort_limit"], 4)}),'
          f' saturated {100.0 * rep["saturated_fraction"]:.2f} % of samples', file=out)
    call = rep['controller_call_us']
    print(f'  controller call: p50 {call["p50"]:.0f} us, p99 {call["p99"]:.0f} us; '
          f'{"stable" if rep["stable"] else "DIVERGED"}', file=out)


def _plot_run(result, path):
    """Write ``simulate --plot`` (reference and actual, error, effort per joint); the figure."""
    from . import plots
    rec, plant, rep = result.record, result.plant, result.report
    return plots.plot_tracking(
        path, rec.t, plant.joint_names, rec.q, result.reference.sample(rec.t).q,
        units=rep['units']['tracking_error'], effort=rec.tau, limits=plant.effort_limit,
        effort_units=rep['units']['torque'],
        title=f'{rep["robot"]}, {rep["controller"]}: rms error {rep["rms_tracking_error"]:.3g}, '
              f'max {rep["max_tracking_error"]:.3g} (model error {rep["model_error"]:+g}, noise '
              f'{rep["torque_noise"]:g})')


def _plot_comparison(runs, path):
    """Write ``simulate --compare-plot``: error and effort of each law side by side."""
    from . import plots
    first, report = runs[0], runs[0].report
    plots.plot_comparison(
        path, first.record.t, first.plant.joint_names,
        [(r.settings.controller, r.reference.sample(r.record.t).q - r.record.q, r.record.tau)
         for r in runs], units=report['units']['tracking_error'],
        effort_units=report['units']['torque'],
        title=f'{report["robot"]}: control laws compared (model error '
              f'{report["model_error"]:+g}, control {report["control_rate_hz"]:g} Hz)')


def simulate_goal_command(args, out=sys.stdout):
    """Run ``robot-dynamics simulate --goal``: the graph's loop in one process; the status."""
    from . import closed_loop as sim
    from .model import RobotModel
    from .parameter_files import file_values, parameter_file
    from .trajectory import TrajectoryPoints
    model = RobotModel.load(args.robot)
    files = [parameter_file(args.robot)]
    controller_values = file_values(files, 'controller')
    if args.controller:
        controller_values['control_law'] = args.controller
    simulator, controller, tolerances = sim.graph_loop(model, file_values(files, 'simulator'),
                                                       controller_values)
    goal = sim.goal_from_points(model, TrajectoryPoints.from_yaml(args.goal), tolerances,
                                tag='goal')
    duration = args.duration or (goal.time_from_start[-1] + tolerances.goal_time + 1.0)
    record = sim.closed_loop(simulator, controller, duration, goals=[(0.0, goal)])
    ended = [e for _, e in record.events if e.tag == 'goal' and e.outcome is not None]
    outcome = ended[0].outcome.value if ended else 'running at the end'
    law = controller_values.get('control_law', 'computed_torque')
    print(f'simulate {args.robot} ({law}, {simulator.plant.interface.value} commands) in the '
          f"graph's lockstep loop: {record.t.size} steps of {1e3 / simulator.rate_hz:g} ms; "
          f'goal {outcome}{": " + ended[0].message if ended else ""}', file=out)
    if args.csv:
        sim.write_joint_states(args.csv, record, model.joint_names)
        print(f'  joint states written to {args.csv}', file=out)
    if args.report:
        _write_json(args.report, {'robot': args.robot, 'control_law': law,
                                  'goal': args.goal, 'outcome': outcome,
                                  'samples': int(record.t.size), 'stable': record.stable,
                                  'final_positions': record.q[-1].tolist()})
        print(f'  report written to {args.report}', file=out)
    return EXIT_OK if record.stable and ended and ended[0].outcome.value == 'succeeded' \
        else EXIT_FAILURE


def simulate_command(args, out=sys.stdout):
    """Run ``robot-dynamics simulate``; return the exit status."""
    from . import closed_loop as sim
    from .plots import require_matplotlib
    if args.goal:
        return simulate_goal_command(args, out)
    if args.csv:
        raise InputError('--csv: the joint states of a --goal run; without --goal, --report '
                         'and --plot')
    if not args.controller:
        raise InputError('--controller: required without --goal')
    settings = sim.Settings(robot=args.robot, controller=args.controller,
                            duration=args.duration or sim.DEFAULT_DURATION,
                            plant_rate=args.plant_rate,
                            control_rate=args.control_rate, model_error=args.model_error,
                            torque_noise=args.torque_noise, seed=args.seed,
                            natural_frequency=args.natural_frequency,
                            damping_ratio=args.damping_ratio, friction=args.friction)
    if args.plot or args.compare_plot:
        require_matplotlib()  # fail before simulating, not after
    result = sim.run(settings)
    report = result.report
    _print_summary(report, out)
    if args.compare_plot:
        runs = [result if law == settings.controller else
                sim.run(dataclasses.replace(settings, controller=law))
                for law in sim.LAWS]
        report['comparison'] = {r.settings.controller: {
            'rms_tracking_error': r.report['rms_tracking_error'],
            'max_tracking_error': r.report['max_tracking_error'],
            'max_abs_torque': r.report['max_abs_torque'],
            'saturated_fraction': r.report['saturated_fraction'],
            'stable': r.report['stable']} for r in runs}
        for law, numbers in report['comparison'].items():
            print(f'  compare {law:16s} rms {numbers["rms_tracking_error"]:.3e}, max '
                  f'{numbers["max_tracking_error"]:.3e}', file=out)
        _plot_comparison(runs, args.compare_plot)
        report['compare_plot'] = args.compare_plot
        print(f'  comparison plot written to {args.compare_plot}', file=out)
    if args.plot:
        _plot_run(result, args.plot)
        report['plot'] = args.plot
        print(f'  plot written to {args.plot}', file=out)
    if args.report:
        _write_json(args.report, report)
        print(f'  report written to {args.report}', file=out)
    return EXIT_OK if report['stable'] else EXIT_FAILURE


# ---- demo ---------------------------------------------------------------------------------------

def robot_info(model):
    """
    Return the demo numbers of one robot: joints, a pose q, tip pose and Jacobian at q.

    q is the first waypoint of the simulation's default reference: mid-range plus alternating
    offsets inside the limits, so that the arm is bent (mid-range is often singular).
    """
    from .closed_loop import reference_waypoints
    from .spatial import matrix_to_rpy
    q = reference_waypoints(model, 1.0)[1][1]
    T = model.fk(q)
    J = model.jacobian(q)
    return {
        'name': model.name,
        'dof': model.dof,
        'base_link': model.base_link,
        'tip_link': model.tip_link,
        'joints': [{'name': name, 'type': kind, 'lower': float(lo), 'upper': float(hi),
                    'velocity': float(v), 'effort': float(f)}
                   for name, kind, lo, hi, v, f in zip(
                       model.joint_names, model.joint_types, model.lower, model.upper,
                       model.velocity_limit, model.effort_limit)],
        'q': q.tolist(),
        'tip_pose': T.tolist(),
        'tip_position': T[:3, 3].tolist(),
        'tip_rpy': matrix_to_rpy(T[:3, :3]).tolist(),
        'jacobian': J.tolist(),
        'task_mask': model.task_mask.tolist(),
        'manipulability': float(model.manipulability(q)),
    }


def _row(values):
    return ' '.join(f'{v + 0.0:+9.4f}' for v in values)


def _print_info(info, out):
    print(f'{info["name"]}: {info["dof"]} joints, {info["base_link"]} -> {info["tip_link"]}',
          file=out)
    for j in info['joints']:
        unit, speed, force = (('m', 'm/s', 'N') if j['type'] == 'prismatic'
                              else ('rad', 'rad/s', 'N m'))
        print(f'  {j["name"]:<14s} {j["type"]:<10s} [{j["lower"]:+.4g}, {j["upper"]:+.4g}] '
              f'{unit}, velocity {j["velocity"]:.4g} {speed}, effort {j["effort"]:.4g} {force}',
              file=out)
    print(f'  q = {_row(info["q"])}', file=out)
    print(f'  tip position = {_row(info["tip_position"])} m, rpy = {_row(info["tip_rpy"])} rad',
          file=out)
    print('  tip pose (base frame):', file=out)
    for row in info['tip_pose']:
        print(f'    {_row(row)}', file=out)
    print('  Jacobian (rows vx vy vz wx wy wz, base frame, at the tip):', file=out)
    for row in info['jacobian']:
        print(f'    {_row(row)}', file=out)
    print(f'  manipulability {info["manipulability"]:.4g}', file=out)


def info_command(args, out=sys.stdout):
    """Run ``robot-dynamics info``; return the exit status."""
    from .model import RobotModel
    names = [args.robot] if args.robot else RobotModel.available()
    report = {'robots': {}}
    for name in names:
        info = robot_info(RobotModel.load(name))
        report['robots'][name] = info
        _print_info(info, out)
    if args.report:
        _write_json(args.report, report)
        print(f'report written to {args.report}', file=out)
    return EXIT_OK


# ---- bringup ------------------------------------------------------------------------------------

def demo_command(args, out=sys.stdout):
    """Run ``robot-dynamics demo`` (the ROS 2 pick-and-place); return the exit status."""
    from .ros.tools import demo
    return demo.run(args.robot, report_path=args.report, out_dir=args.out,
                    duration=args.duration, clock=args.clock, namespace=args.namespace,
                    out=out, view=args.view, cartesian=args.cartesian,
                    wait_for_view=args.wait_for_view)


def _node_parameter(text):
    """Parse ``NODE.NAME:=VALUE`` into ``(node, name, value text)``."""
    target, sep, value = text.partition(':=')
    node, dot, name = target.partition('.')
    if not (sep and dot and node and name):
        raise argparse.ArgumentTypeError(f'expected NODE.NAME:=VALUE, got {text!r}')
    return node, name, value


def bringup_command(args, out=sys.stdout):
    """Run ``robot-dynamics bringup``; return the exit status."""
    from .ros.tools import bringup, graph
    mode = 'hardware' if args.hardware else 'sim'
    namespace = graph.namespace(args.namespace)
    files = graph.parameter_files(args.robot, args.params_file)
    specs = graph.nodes(mode)
    if args.clock is not None and args.hardware:
        raise InputError(f'--{args.clock} is for the simulator: a real arm keeps its own time')
    overrides = graph.overrides(mode, {'control_law': args.control_law})
    if args.clock is not None:
        overrides.setdefault('simulator', []).extend(graph.clock(args.clock)['simulator'])
    for node, name, value in args.param:
        overrides.setdefault(node, []).append((name, value))
    graph.check_parameters(mode, files, overrides)
    overrides = graph.complete_overrides(mode, files, overrides)
    graph.check_joint_parameters(mode, files, overrides)
    if args.record:
        from .ros.tools.recorder import check_new
        check_new(args.record)
    return bringup.run(specs, files, overrides, processes=args.processes, out=out,
                       title=f'{PROG} bringup {args.robot or ""}'.rstrip(), record=args.record,
                       namespace=namespace, view=args.view)


def view_command(args, out=sys.stdout):
    """Run ``robot-dynamics view``: live (ROS 2) or the replay of a recording."""
    from .ros.tools.definitions import namespace, topics
    if args.recording:
        from . import replay
        return replay.run(args.recording, topics(namespace(args.namespace)), args.host,
                          args.port, out=out)
    from .ros.tools import view
    return view.run(args.host, args.port, out=out, namespace=namespace(args.namespace))


# ---- plot ---------------------------------------------------------------------------------------

def plot_command(args, out=sys.stdout):
    """Run ``robot-dynamics plot``; return the exit status."""
    from .recorded_motion import export
    from .ros.tools.definitions import namespace, topics
    written, notes = export(args.recording, args.out, topics(namespace(args.namespace)),
                            plot=not args.csv_only)
    for path in written:
        print(f'wrote {path}', file=out)
    for note in notes:
        print(f'note: {note}', file=out)
    return EXIT_OK


# ---- excite, send, identify ---------------------------------------------------------------------

def _simulator_start(robot):
    """Return the simulator's initial positions of a bundled robot's parameter file, or None."""
    import yaml
    from .robots import share_directory
    path = share_directory() / 'config' / f'{robot}.yaml'
    if not path.is_file():
        return None
    doc = yaml.safe_load(path.read_text()) or {}
    values = doc.get('simulator', {}).get('ros__parameters', {}).get('initial_positions')
    return list(values) if values else None


def excite_command(args, out=sys.stdout):
    """Run ``robot-dynamics excite``; return the exit status."""
    import numpy as np
    from . import excitation
    from .model import from_source
    from .trajectory import check_limits, TrajectoryPoints
    model, _ = from_source(robot=args.robot or '', urdf_file=args.urdf or '',
                           base_link=args.base_link, tip_link=args.tip_link)
    start = args.start if args.start is not None else (
        _simulator_start(args.robot) if args.robot else None)
    motion = excitation.optimise(model, start=start, duration=args.duration, period=args.period,
                                 harmonics=args.harmonics, seed=args.seed)
    times, q, qd, qdd = motion.points(args.rate, args.lead_in)
    points = TrajectoryPoints(model.joint_names, times, q, qd, qdd)
    trajectory = points.trajectory()
    check_limits(model, trajectory)
    sample = trajectory.sample(np.linspace(times[0], times[-1], 20001))
    tau = model.inverse_dynamics(sample.q, sample.qd, sample.qdd, friction=True)
    with open(args.out, 'w', encoding='utf-8') as f:
        f.write(points.to_yaml())
    print(f'excite {model.name}: {motion.periods} x {motion.period:g} s, '
          f'{motion.a.shape[0]} harmonics, from {_fmt(motion.start, 4)} at rest (reached after '
          f'{args.lead_in:g} s); base regressor condition number {motion.condition_number:.3g}',
          file=out)
    print(f'  peak |velocity| / limit {_fmt(np.abs(sample.qd).max(0) / model.velocity_limit)}, '
          f'peak |torque| / limit {_fmt(np.abs(tau).max(0) / model.effort_limit)}', file=out)
    print(f'  {len(times)} points written to {args.out}', file=out)
    return EXIT_OK


def send_command(args, out=sys.stdout):
    """Run ``robot-dynamics send``; return the exit status."""
    from .ros.tools import graph, send
    points = send.load(args.trajectory)
    action = graph.resolve(args.action or send.ACTIONS[type(points)],
                           graph.namespace(args.namespace))
    return send.run(points, action, server_timeout=args.timeout, out=out)


def push_command(args, out=sys.stdout):
    """Run ``robot-dynamics push``; return the exit status."""
    from .ros.tools import graph, push
    topic = graph.resolve(args.topic or push.TOPIC, graph.namespace(args.namespace))
    return push.run(args.force, args.torque, frame=args.frame, duration=args.duration,
                    topic=topic, server_timeout=args.timeout, out=out)


def _check_coverage(coverage, partial):
    """
    Say on stderr how much of the excitation a recording covers, where not all of it.

    Raises ``InputError`` with the numbers below :data:`~robot_dynamics.identify.MIN_COVERAGE`,
    or for an unknown part of a goal that failed, unless ``partial``.
    """
    from .identify import MIN_COVERAGE
    if coverage.full:
        return
    hint = '' if coverage.expected else ' (--excitation FILE, the trajectory sent, measures it)'
    if not coverage.reference:
        print(f'{PROG} identify: note: {coverage.describe()}{hint}', file=sys.stderr)
    elif not partial and coverage.short(MIN_COVERAGE):
        raise InputError(f'{coverage.describe()}; at least {100 * MIN_COVERAGE:g} % is needed: '
                         'record the excitation again, or pass --partial to identify from what '
                         f'was recorded{hint}')
    else:
        print(f'{PROG} identify: warning: {coverage.describe()}{hint}', file=sys.stderr)


def identify_command(args, out=sys.stdout):
    """Run ``robot-dynamics identify`` (:func:`robot_dynamics.identify.from_recording`)."""
    from . import identify
    from .plots import plot_torques, require_matplotlib
    from .ros.tools.definitions import TOPICS
    if args.plots:
        require_matplotlib()
    found, text, damage = identify.from_recording(
        args.recording, TOPICS, base_link=args.base_link, tip_link=args.tip_link,
        cutoff=args.cutoff, held_out=args.held_out, excitation=args.excitation,
        note=f'inertial and dynamics identified by {PROG} identify from {args.recording}')
    _check_coverage(found.coverage, args.partial)
    model, estimate = found.model, found.result.estimate
    report = {'recording': str(args.recording), **found.report(), 'out': str(args.out)}
    written = []
    if args.plots:
        from pathlib import Path
        folder = Path(args.plots)
        folder.mkdir(parents=True, exist_ok=True)
        units = ['N' if p else 'N m' for p in model.is_prismatic]
        plot_torques(folder / 'torque_held_out.png', found.test.t - found.signals.t[0],
                     model.joint_names, found.test.tau, found.predictions, units,
                     f'{model.name}: measured and predicted torque on the held-out '
                     f'{100 * args.held_out:g} % of {args.recording}')
        written.append(str(folder / 'torque_held_out.png'))
        report['plots'] = written
    with open(args.out, 'w', encoding='utf-8') as f:
        f.write(text)
    if damage:
        print(f'note: {damage}', file=out)
    gaps = found.stretches - 1
    print(f'identify {model.name} from {args.recording}: {found.samples} joint states over '
          f'{found.duration:.1f} s'
          + (f' ({gaps} gaps of {found.gaps:.3g} s in all, between which the '
             f'{found.stretches} stretches are filtered apart)' if gaps else '')
          + f', filtered at {args.cutoff:g} Hz'
          + (f', {found.at_rest} samples at rest left out' if found.at_rest else '') + '; '
          f'{found.base.count} base parameters, condition number '
          f'{estimate.condition_number:.3g}', file=out)
    for name, value, std in zip(estimate.base.base_names, estimate.values, estimate.std):
        print(f'  {value:+.6g} +- {std:.2g}  {name}', file=out)
    print(f'  held-out rms torque error per joint: recorded model '
          f'{_fmt(found.rms[identify.NOMINAL])}, identified '
          f'{_fmt(found.rms[identify.IDENTIFIED])}', file=out)
    print(f'  consistent model: within {report["consistent_model"]["max_deviation_std"]:.2g} '
          'standard deviations of the estimate', file=out)
    print(f'  identified URDF written to {args.out}', file=out)
    for path in written:
        print(f'  plot written to {path}', file=out)
    if args.report:
        _write_json(args.report, report)
        print(f'  report written to {args.report}', file=out)
    return EXIT_OK


# ---- derive -------------------------------------------------------------------------------------

def _derive_parser(sub, robots):
    p = sub.add_parser(
        'derive', help='closed-form M, Christoffel symbols, C, g of a robot; operation counts',
        description='Print the equations of motion of a bundled robot in closed form '
                    '(Lagrange: D(q), the Christoffel symbols, C(q, qd), g(q), tau), with the '
                    "model's numbers or symbols for its parameters; --count compares the "
                    'operations of the code generated for it with Turney, Mudge and Lee '
                    '(1981) Table 8.1.')
    p.add_argument('--robot', required=True, choices=robots, metavar='NAME',
                   help=f'bundled robot: {", ".join(robots)}')
    p.add_argument('--symbolic-parameters', action='store_true',
                   help='symbols for the masses, COMs, inertias, joint offsets and g (every '
                        'one that is not zero in the model) instead of numbers')
    p.add_argument('--latex', action='store_true', help='print LaTeX instead of plain text')
    p.add_argument('--count', action='store_true',
                   help='only the operation counts of the generated inverse dynamics beside '
                        'Table 8.1 and the general recursion')
    p.set_defaults(handler=derive_command)


def _print_equations(eq, simplify, latex, out):
    import sympy as sp
    from . import symbolic
    ch = eq.chain

    def show(expr):
        # numbers as decimals (the model's 0.4318, not 2159/5000); a symbol's 1/2 stays exact
        if not ch.values:
            expr = expr.xreplace({r: sp.Float(r, 6) for r in expr.atoms(sp.Rational)
                                  if not r.is_Integer})
        return sp.latex(expr, symbol_names=dots) if latex else sp.sstr(expr)
    dots = {**{v: rf'\dot q_{{{i + 1}}}' for i, v in enumerate(ch.qd)},
            **{v: rf'\ddot q_{{{i + 1}}}' for i, v in enumerate(ch.qdd)}}
    n = ch.dof
    if ch.values:
        print('parameters:', file=out)
        for symbol in ch.parameters:
            print(f'  {show(symbol)} = {ch.values[symbol]:.6g}', file=out)
    if not simplify:
        print(f'(not simplified, and D and g only: {n} joints > {symbolic.SIMPLIFY_MAX_DOF}; '
              'C and tau, megabytes of text, in seconds: robot_dynamics.symbolic.derive; '
              'as code: --count, model.prepare(generated=True))', file=out)

    def name(symbol, *indices):
        joined = ''.join(str(i + 1) for i in indices)
        return f'{symbol}_{{{joined}}}' if latex else f'{symbol}{joined}'
    tau, qd, qdd = (r'\tau', r'\dot q', r'\ddot q') if latex else ('tau', 'qd', 'qdd')
    for i in range(n):
        for j in range(i, n):
            print(f'{name("d", i, j)} = {show(eq.D[i, j])}', file=out)
    for k in range(n):
        print(f'{name("g", k)} = {show(eq.g[k])}', file=out)
    if eq.C is None:
        return
    for i, j, k in itertools.product(range(n), repeat=3):
        if j >= i and eq.christoffel[i][j][k] != 0:
            print(f'{name("c", i, j, k)} = {show(eq.christoffel[i][j][k])}'
                  + (f' = {name("c", j, i, k)}' if j > i else ''), file=out)
    for k, j in itertools.product(range(n), repeat=2):
        if eq.C[k, j] != 0:
            print(f'{name("C", k, j)} = {show(eq.C[k, j])}', file=out)
    for k in range(n):
        print(f'{name(tau, k)} = ' + ' + '.join(
            [f'{name("d", k, j)} {name(qdd, j)}' for j in range(n)]
            + [f'{name("C", k, j)} {name(qd, j)}' for j in range(n) if eq.C[k, j] != 0]
            + [name('g', k)]), file=out)


def derive_command(args, out=None):
    """Run ``robot-dynamics derive``; return the exit status."""
    out = out or sys.stdout
    import time
    from . import generated, robots, symbolic
    from .model import RobotModel
    model = RobotModel.load(args.robot)
    n = model.dof
    types = ''.join('P' if p else 'R' for p in model.is_prismatic)
    print(f'{args.robot}: {n} joints ({types}), gravity {model.gravity.tolist()} m/s^2', file=out)
    if args.count:
        start = time.perf_counter()
        _, operations = generated.generate_source(model)
        took = time.perf_counter() - start
        print(f'operations per inverse dynamics, n = {n} (Turney, Mudge and Lee 1981, Table '
              f'8.1):', file=out)
        general = generated.general_counts(n)
        own = operations['inverse_dynamics']
        rows = [('approach', 'mul', 'add', '')]
        rows += [(approach, f'{mul:.0f}', f'{add:.0f}', '')
                 for approach, (mul, add) in generated.table_8_1(n).items()]
        rows.append(('general recursion (Craig RNEA, no folding)', general['mul'],
                     general['add'], ''))
        rows.append((f'generated for {args.robot}', own['mul'], own['add'],
                     f'   (and {own["fn"]} sin/cos)'))
        rows += [(f'  generated {name}', operations[name]['mul'], operations[name]['add'], '')
                 for name in ('mass_matrix', 'gravity_torques', 'coriolis_matrix')]
        width = max(len(row[0]) for row in rows)
        for label, mul, add, note in rows:
            print(f'  {label:<{width}} {mul:>8} {add:>8}{note}', file=out)
        print(f'generated in {took:.1f} s', file=out)
        return EXIT_OK
    simplify = n <= symbolic.SIMPLIFY_MAX_DOF
    table = robots.share_directory() / 'config' / f'{args.robot}.dh.yaml'
    if args.symbolic_parameters and table.is_file():
        # the DH table's own lengths a_i, d_i, rather than the joint offsets of its URDF
        print(f'from the DH table {table.name}', file=out)
        ch = symbolic.dh_chain(str(table))
    else:
        ch = symbolic.chain(model, symbolic_parameters=args.symbolic_parameters)
    if simplify:
        eq = symbolic.derive(ch)
    else:
        # the Christoffel symbols of an expanded D are megabytes of text: D and g only
        kinematics = symbolic.body_kinematics(ch, simplify=False)
        eq = symbolic.Equations(
            chain=ch, D=symbolic.mass_matrix(ch, False, kinematics), christoffel=None, C=None,
            g=symbolic.gravity_torques(ch, kinematics, simplify=False), tau=None)
    _print_equations(eq, simplify, args.latex, out)
    return EXIT_OK


def main(argv=None):
    """Entry point of the ``robot-dynamics`` console script; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except RobotDynamicsError as exc:
        print(f'{PROG} {args.command}: error: {exc}', file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, ValueError) else EXIT_FAILURE
    except OSError as exc:
        # "nofile.mcap: No such file or directory", not "[Errno 2] No such file ..."
        what = f'{exc.filename}: {exc.strerror}' if exc.filename and exc.strerror else exc
        print(f'{PROG} {args.command}: error: {what}', file=sys.stderr)
        return EXIT_FAILURE


if __name__ == '__main__':
    sys.exit(main())
