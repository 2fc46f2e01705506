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
The controller node: :class:`robot_dynamics.controller.Controller` behind ROS topics.

The node converts messages and parameters; every decision (modes, goals, the control law, the
safety policy, missed cycles) is the library's, on the time of the joint states:

- State: ``joint_states`` (sensor_msgs/JointState), joints matched by name (extra joints are
  ignored; a state missing a joint or with a non-finite value is logged and not used: it counts
  as no state). Its stamp is the controller's clock for everything (a zero stamp: the node's,
  on wall time; on simulated time a zero stamp is a simulation's first state, t = 0).
- Goals: ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory, fire and forget: a newer one
  preempts, so of a burst faster than the node reads, the newest is taken) and the
  ``~/follow_joint_trajectory`` action (control_msgs/FollowJointTrajectory; multi-DOF parts
  are refused), with the semantics of ros2_controllers' joint_trajectory_controller. ROS 2
  cannot attach a result to a rejected goal, so a malformed goal is accepted and aborted at
  once with control_msgs' error code (INVALID_JOINTS, INVALID_GOAL, OLD_HEADER_TIMESTAMP) and
  a message; the motion under way is not touched. Each goal event (accepted, preempted,
  succeeded, aborted, canceled) is logged once, with its reason.
- Commands: ``std_msgs/Float64MultiArray`` on ``command_topic`` (default
  ``<command_interface>_controller/commands``, in the node's namespace), one value per joint in
  the order of ``joints``: what ros2_control's forward_command_controller takes.
- ``~/state`` (ControllerState: reference, feedback, error, effort, saturation, mode, cycles)
  and ``~/controller_state`` (control_msgs/JointTrajectoryControllerState, as
  joint_trajectory_controller publishes it: reference, feedback, error and the command as
  ``output``), both at ``state_publish_rate_hz`` of the states' clock (in task space the joint
  reference and error are empty: the reference is the tip's).
- Task space (effort interface): the ``~/follow_cartesian_trajectory`` action
  (cartesian_control_msgs/FollowCartesianTrajectory, the joint action's semantics; a posture
  is refused with INVALID_POSTURE) and ``~/target_pose`` (geometry_msgs/PoseStamped: the tip
  moves there within ``cartesian.max_linear_velocity`` and ``cartesian.max_angular_velocity``,
  then holds); the library's operational-space law
  (:func:`~robot_dynamics.task_space.configured_task_law`: ``cartesian.*`` and ``nullspace.*``,
  changeable at run time) holds the tip compliantly after them, until a joint goal. A
  malformed goal (NaN, a non-unit quaternion, times not increasing, another frame, out of
  reach, beyond the joint limits) is aborted at once with a message, and nothing moves.
  ``~/cartesian_state`` (CartesianState: the tip's reference, actual pose and twist, error,
  condition number, controlled axes) at ``cartesian.state_publish_rate_hz``.
- ``/diagnostics`` (:mod:`~robot_dynamics.ros.nodes.diagnostics`) once a second: control rate,
  missed cycles, latency, saturation, mode; ERROR in safe mode, WARN over ``diagnostics.*``.

The loop is the library's :class:`~robot_dynamics.controller.Cycling`, the node its port. Each
cycle runs when a joint state arrives (``trigger: state``, default) and answers it with
exactly one command; ``trigger: timer`` runs at ``rate_hz`` on the newest state, the reference
sampled at the timer's time. Joint states are read by a thread that waits on that subscription
alone (:class:`~robot_dynamics.ros.wire.on_demand.SubscriptionThread`), which also runs the
watchdog; parameters in the executor. Goals (both actions, trajectories and target poses on
topics) are read and checked in a process of its own (:mod:`~robot_dynamics.ros.nodes.goals`:
rclpy builds their Python objects with the interpreter's lock held), then judged against the
arm outside the cycle's lock (:meth:`~robot_dynamics.controller.Controller.judge`) and taken
under it. The watchdog
runs on the wall clock and asks the controller what to send while no state comes: the safe
command once the newest state is older than ``state_timeout`` on the states' clock (on
simulated time, also after ``wall_state_timeout`` of wall time in which the node ran: a
stall of the host stops the simulated clock and the node alike, and is no fault). A cycle that
fails sends the safe command and the node goes on; when the node stops (SIGINT, SIGTERM, an
error that ends it), its last command is the safe command. The loop's messages travel raw
(serialized CDR read and written by :mod:`~robot_dynamics.ros.wire.cdr`): no rclpy message object
per cycle.
"""

import sys
import threading
import time

from cartesian_control_msgs.action import FollowCartesianTrajectory
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState
import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.time import Time
from robot_dynamics_interfaces.msg import CartesianState, ControllerState, ParameterEstimate
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from .description import (chain_options, CHAIN_PARAMETERS, ModelSubscription, REMINDER_PERIOD,
                          silent)
from .diagnostics import CONTROLLER_PARAMETERS, Diagnostics, thresholds
from .goals import CARTESIAN, goal_name, GoalProcess, TARGET, with_defaults
from .parameters import (COMMAND_PARAMETERS, command_topic, declare, DOUBLE_ARRAY, joint_of,
                         refusal, ROS_PARAMETERS, Spec, STRING_ARRAY, unknown_parameter)
from .publishers import publisher_gid, publisher_node
from .runner import run_node, StartupError
from .throttle import Throttle
from ..wire import compat
from ..wire.cdr import JointStateReader, write_float64_array
from ..wire.conversions import cartesian_point, JointMap, time_msg, trajectory_point
from ..wire.on_demand import OnDemand, SubscriptionThread
from ..wire.qos import LOCKSTEP_ALL, LOCKSTEP_NEWEST, LOCKSTEP_WRITER, NEWEST_ONLY, RECORDED
from ...control import configured_law, DEFAULT_ADAPTATION_GAIN, Law, LAWS
from ...controller import (configured_controller, configured_cycling,
                           DEFAULT_FEEDBACK_RATE_HZ, DEFAULT_MAX_ANGULAR_VELOCITY,
                           DEFAULT_MAX_LINEAR_VELOCITY, DEFAULT_RATE_HZ, DEFAULT_STATE_RATE_HZ,
                           DEFAULT_STATE_TIMEOUT, DEFAULT_TIP_RATE_HZ, DEFAULT_VELOCITY_FEEDBACK,
                           DEFAULT_WALL_STATE_TIMEOUT, Kind, Mode, SafeMode, Trigger)
from ...diagnostics import controller_status, ControllerFigures, ControllerThresholds
from ...errors import choice, InputError
from ...follower import DEFAULT_STOP_TIME, Outcome, Tolerances
from ...plant import Interface
from ...stamps import ns_to_s, s_to_ns
from ...task_space import (configured_task_law, DAMPING_RATIO,
                           DEFAULT_NULL_STIFFNESS, DEFAULT_STIFFNESS, mask_axes, tip_state)


#: The JointTrajectoryPoint argument of :func:`trajectory_point` that a command interface's
#: commands are
_OUTPUT = {Interface.EFFORT: 'effort', Interface.POSITION: 'q', Interface.VELOCITY: 'qd'}


_Result = FollowJointTrajectory.Result
_ERROR_CODES = {
    Outcome.SUCCEEDED: _Result.SUCCESSFUL,
    Outcome.INVALID: _Result.INVALID_GOAL,
    Outcome.OLD_START_TIME: _Result.OLD_HEADER_TIMESTAMP,
    Outcome.PATH_TOLERANCE_VIOLATED: _Result.PATH_TOLERANCE_VIOLATED,
    Outcome.GOAL_TOLERANCE_VIOLATED: _Result.GOAL_TOLERANCE_VIOLATED,
    Outcome.PREEMPTED: _Result.INVALID_GOAL,
    Outcome.CANCELED: _Result.SUCCESSFUL,
    Outcome.STOPPED: _Result.PATH_TOLERANCE_VIOLATED,
}
#: Ends that a client asked for: logged as information, the others as warnings.
_EXPECTED = (Outcome.SUCCEEDED, Outcome.CANCELED)
#: Ends of a goal that never ran (a flood of them is logged throttled).
_REJECTED = (Outcome.INVALID, Outcome.OLD_START_TIME)

#: The task-space law's parameters (effort interface), changeable at run time: see
#: :func:`robot_dynamics.task_space.configured_task_law`.
TASK_PARAMETERS = (
    Spec('cartesian.stiffness', list(DEFAULT_STIFFNESS),
         'Tip stiffness after Cartesian goals and targets: x, y, z [N/m], then rx, ry, rz '
         '[N m/rad], base axes (> 0 on the controlled axes).', False),
    Spec('cartesian.damping_ratio', DAMPING_RATIO,
         "Damping ratio of the tip's modes (1: critical).", False, (0.0, 100.0)),
    Spec('cartesian.controlled_axes', STRING_ARRAY,
         'Controlled axes, of x y z rx ry rz; empty: those the arm can move (a planar 2R its '
         "plane's two, a SCARA x y z, six joints or more all six).", False),
    Spec('cartesian.max_linear_velocity', DEFAULT_MAX_LINEAR_VELOCITY,
         'Peak tip speed of the motion to a target pose (~/target_pose) [m/s].', False,
         (1e-6, 100.0)),
    Spec('cartesian.max_angular_velocity', DEFAULT_MAX_ANGULAR_VELOCITY,
         'Peak tip angular speed of the motion to a target pose [rad/s].', False,
         (1e-6, 1000.0)),
    Spec('cartesian.state_publish_rate_hz', DEFAULT_TIP_RATE_HZ,
         "Rate of ~/cartesian_state [Hz, on the states' clock]; 0: none.", True,
         (0.0, 10000.0)),
    Spec('nullspace.stiffness', DEFAULT_NULL_STIFFNESS,
         'Stiffness of the null-space posture, every joint [N m/rad or N/m].', False,
         (0.0, 1e6)),
    Spec('nullspace.damping_ratio', DAMPING_RATIO,
         'Damping ratio of the null-space posture.', False, (0.0, 100.0)),
    Spec('nullspace.posture', DOUBLE_ARRAY,
         'Null-space posture: joint positions in the order of joints [rad or m]; empty: where '
         'the Cartesian motion started.', False),
)

PARAMETERS = (
    Spec('joints', STRING_ARRAY,
         "Joint order of the commands; empty: the model's order."),
    Spec('control_law', 'computed_torque',
         f'Control law of the effort interface: {", ".join(LAWS)}.'),
    Spec('trigger', 'state', 'What starts a control cycle: state (each joint state) or timer '
                             '(at rate_hz).'),
    Spec('rate_hz', DEFAULT_RATE_HZ, 'Control rate [Hz]: of the timer, or the expected joint '
                                     'state rate (for counting missed cycles).',
         bounds=(1.0, 10000.0)),
    Spec('state_timeout', DEFAULT_STATE_TIMEOUT, 'Safe mode when the newest joint state is older '
                                                 "than this [s, on the states' clock].",
         bounds=(0.001, 10.0)),
    Spec('wall_state_timeout', DEFAULT_WALL_STATE_TIMEOUT,
         'On simulated time (use_sim_time), safe mode also when no joint state arrives for this '
         'long on the wall clock [s]: a simulator that died stops the simulated clock with its '
         'states. Time in which this process did not run (a stalled host) does not count.',
         bounds=(0.01, 3600.0)),
    Spec('safe_mode', 'zero_effort',
         'What the effort interface sends when it cannot control (stale states, a failed cycle, '
         'stopping): zero_effort, or gravity_compensation at the last measured position. '
         'Velocity commands are then zero, position commands the last measured position.'),
    Spec('natural_frequency', 20.0, 'Closed-loop natural frequency [rad/s] that sets the default '
                                    'gains (see control.default_law).',
         bounds=(0.01, 1e4)),
    Spec('damping_ratio', 1.0, 'Closed-loop damping ratio of the default gains.',
         bounds=(0.0, 100.0)),
    Spec('friction_compensation', True, "Feed the model's friction forward (computed torque, "
                                        'at the reference velocity; the task-space law, at the '
                                        "reference twist's joint velocity; the adaptive law "
                                        'learns it).'),
    Spec('adaptation_gain', DEFAULT_ADAPTATION_GAIN,
         'Adaptive law: how fast the estimate of the base parameters moves [1/(N m rad), scaled '
         "by each parameter's bounds]; its estimate is on ~/parameter_estimate.",
         bounds=(0.0, 1e6)),
    Spec('velocity_feedback', DEFAULT_VELOCITY_FEEDBACK,
         'Velocity interface: command = reference velocity + this gain times the position '
         'error [1/s] (0: the reference velocity alone, open loop).', bounds=(0.0, 1e4)),
    Spec('stop_time', DEFAULT_STOP_TIME,
         'Time to bring a motion to rest after a cancel or an abort [s].', bounds=(0.001, 60.0)),
    Spec('state_publish_rate_hz', DEFAULT_STATE_RATE_HZ,
         "Rate of ~/state and ~/controller_state [Hz, on the states' clock]; 0: none.",
         bounds=(0.0, 10000.0)),
    Spec('action_monitor_rate_hz', DEFAULT_FEEDBACK_RATE_HZ,
         "Rate of the action feedback [Hz, on the states' clock].", bounds=(0.1, 1000.0)),
    Spec('hardware', False, 'Checks for a real arm: effort limits for every joint of an effort '
                            'interface, joint_states that cover the model within '
                            'startup_timeout (else the node exits with status 1), and a '
                            'warning when nothing subscribes to the commands.'),
    Spec('startup_timeout', 10.0, 'Time for the hardware checks [s].', bounds=(0.1, 3600.0)),
    Spec('constraints.goal_time', 0.0, 'Default time after the last point for the goal '
                                       'tolerances to hold [s]; 0: no limit.', read_only=False,
         bounds=(0.0, 3600.0)),
    Spec('constraints.stopped_velocity_tolerance', 0.01,
         'Default goal velocity tolerance: how still the arm must be at the end [rad/s or m/s].',
         read_only=False, bounds=(0.0, 1e3)),
) + COMMAND_PARAMETERS + CHAIN_PARAMETERS + TASK_PARAMETERS + CONTROLLER_PARAMETERS


_GAIN_UNITS = ('computed torque: 1/s^2, 1/s, 1/s^2; the other laws: N m/rad, N m s/rad, '
               'N m/(rad s), or N/m, N s/m, N/(m s) for a prismatic joint')
#: The parameters declared for each joint once the joints are known (``{joint}``: its name),
#: with the names of ros2_controllers' joint_trajectory_controller: the law's gains (its
#: default from ``natural_frequency``) and the default position tolerances of goals.
JOINT_PARAMETERS = tuple(
    Spec(f'gains.{{joint}}.{gain}', 0.0, f'{what} gain of the joint [kp, kd, ki: {_GAIN_UNITS}].',
         False) for gain, what in (('kp', 'Proportional'), ('kd', 'Derivative'),
                                   ('ki', 'Integral'))) \
    + tuple(Spec(f'constraints.{{joint}}.{name}', 0.0, f'Default {what} position tolerance of '
                 'the joint [rad or m]; 0: not checked.', False, (0.0, 1e6))
            for name, what in (('trajectory', 'path'), ('goal', 'goal')))
_JOINT_PATTERNS = tuple(spec.name for spec in JOINT_PARAMETERS)
#: Parameters rclpy declares writable that the controller cannot change under way.
STRUCTURAL = ('use_sim_time',)
#: How often [s] and how many times the watchdog asks the graph for the nodes of two publishers
#: of joint states that it did not know yet.
NAMING_PERIOD, NAMING_TRIES = 0.5, 20
#: Shortest time [s] between two log lines of the safe mode (see ``_report``).
FLAP_PERIOD = 10.0
#: Longest wait [s] for reliable subscribers to acknowledge the final command.
FINAL_ACK_TIMEOUT = 1.0


class ControllerNode(Node):
    """Track goals with a control law; publish commands and the controller state."""

    def __init__(self, **kwargs):
        super().__init__('controller', **kwargs)
        self.throttle = Throttle()
        self._quiet_return = False      # the safe mode that the next hold ends was not logged
        self.params = p = declare(self, PARAMETERS)
        # what the node declares, by name (per-joint parameters added once the joints are known)
        self._specs = {spec.name: spec for spec in PARAMETERS + ROS_PARAMETERS}
        self.law_name = choice(p.control_law, Law, 'control_law', allowed=LAWS)
        self.interface = choice(p.command_interface, Interface, 'command_interface')
        choice(p.trigger, Trigger, 'trigger')       # refused now, not when a model comes
        choice(p.safe_mode, SafeMode, 'safe_mode')      # refused now, not when a model comes
        self.controller = None
        self.command_publisher = None
        self._lock = threading.Lock()     # the cycle (its own thread) against the callbacks
        self.state_thread = self.goals = None
        self._final_sent = False
        self.sim_time = self.get_parameter('use_sim_time').value     # read-only
        # for /diagnostics: this period's latencies [s] (wall time only), the safe mode's reason
        self._latencies, self._safe_reason = [], ''
        limits = thresholds(p, ControllerThresholds)
        self.diagnostics = Diagnostics(
            self, self._figures, lambda now, before: controller_status(
                now, before, self._take_latencies(), p.rate_hz,
                self.model.joint_names if self.controller is not None else (), limits),
            lambda: self.model.name if self.controller is not None else '')
        self.description = ModelSubscription(self, 'robot_description',
                                             chain_options(self.params), self.on_model)

    def on_model(self, model):
        """Build the law and the controller, warm them up, then open the topics and the action."""
        p = self.params
        self.model = model
        self.joints = JointMap(model, p.joints or model.joint_names)
        # the loop's messages raw: read and written straight from and into arrays
        self.reader = JointStateReader(model, 'joint_states')
        law = self._declare_gains(model)
        self._declare_tolerances(model)
        self._check_joint_overrides(model)
        try:
            task_law = self._task_law({}) if self.interface is Interface.EFFORT else None
        except InputError as exc:
            raise StartupError(str(exc)) from None
        self.controller = configured_controller(
            model, law, lambda name, default: self.get_parameter(name).value,
            interface=self.interface, task_law=task_law)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        start = time.perf_counter()
        self.controller.warm_up()
        self.get_logger().info(f'warmed up in {time.perf_counter() - start:.2f} s')
        self._unnamed_sources = None      # two publishers of states to name once discovered
        if not compat.PUBLISHER_GID:
            self.get_logger().warning(
                'neither rclpy nor rcl gives the publisher of a message here: a second publisher '
                'of joint_states cannot be told apart from the first')
        # on simulated time, the lockstep simulator's QoS: no state and no answer is lost, and
        # a recorder that matches late still receives the newest LOCKSTEP_DEPTH states
        recorded = LOCKSTEP_WRITER if self.sim_time else RECORDED
        self.command_publisher = self.create_publisher(
            Float64MultiArray, command_topic(p), LOCKSTEP_WRITER if self.sim_time else 10)
        self.state_publisher = self.create_publisher(ControllerState, '~/state', recorded)
        self.trajectory_state_publisher = self.create_publisher(
            JointTrajectoryControllerState, '~/controller_state', recorded)
        self.cartesian_publisher = self.create_publisher(CartesianState, '~/cartesian_state',
                                                         recorded)
        self.estimate_publisher = (self.create_publisher(ParameterEstimate,
                                                         '~/parameter_estimate', recorded)
                                   if self.law_name is Law.ADAPTIVE else None)
        # on simulated time a deep queue where each message names its publisher, so that
        # another publisher's states do not push the followed one's out (the controller cycles
        # on each source's newest); one deep where it does not (Jazzy) and in real time, where
        # there is nothing to sort and the 1 kHz callback takes one message per state
        deep = self.sim_time and compat.PUBLISHER_GID
        self._states_qos = LOCKSTEP_ALL if deep else LOCKSTEP_NEWEST if self.sim_time \
            else NEWEST_ONLY
        self._joint_states = joint_states = self._subscribe_states()
        self.cycling = configured_cycling(self.controller, self,
                                          lambda name, _: self.get_parameter(name).value,
                                          sim_time=self.sim_time)
        if self.cycling.trigger is Trigger.TIMER:
            self.create_timer(1.0 / p.rate_hz, self.timer_callback)
        if p.hardware:
            self._check_effort_limits()
            self._startup_timer = self.create_timer(p.startup_timeout, self.startup_callback)
        self.get_logger().info(
            f'{self.law_name.value} control of {self.joints.names} ({self.interface.value} '
            f'commands on {self.command_publisher.topic_name}), cycles on each '
            f'{self.cycling.trigger.value}, '
            f'{"simulated" if self.sim_time else "wall"} time; waiting for joint_states')
        self.throttle('waiting for states', REMINDER_PERIOD)     # the first reminder a period on
        self.state_thread = SubscriptionThread(self, joint_states, self.joint_state_callback,
                                               self._lock, 'controller_states',
                                               periodic=self.watch,
                                               period=self.cycling.watch.period,
                                               with_info=True,
                                               newest_of=(lambda data, info: publisher_gid(info))
                                               if deep else None)
        self.goals = GoalProcess(self, self.description.urdf, chain_options(p), self._checked)

    # ---- configuration --------------------------------------------------------------------------

    def _declare_gains(self, model):
        """Declare ``gains.<joint>.kp/kd/ki`` (defaults from the model) and build the law."""
        def parameter(name, default):
            if name.startswith('gains.'):
                joint, gain = name[len('gains.'):].rsplit('.', 1)
                return self._declare_joint(f'gains.{{joint}}.{gain}', joint, default)
            return self.law_name.value if name == 'control_law' else getattr(self.params, name)
        return configured_law(model, parameter)

    def _declare_tolerances(self, model):
        for j in model.joint_names:
            for name in ('trajectory', 'goal'):
                self._declare_joint(f'constraints.{{joint}}.{name}', j)

    def _declare_joint(self, pattern, joint, default=None):
        """Declare the JOINT_PARAMETERS entry ``pattern`` for ``joint``; return its value."""
        spec = next(s for s in JOINT_PARAMETERS if s.name == pattern)
        spec = spec._replace(name=pattern.format(joint=joint),
                             default=spec.default if default is None else default)
        self._specs[spec.name] = spec
        return next(iter(vars(declare(self, [spec])).values()))

    def _check_joint_overrides(self, model):
        """Refuse per-joint parameters given (files, ``-p``) for joints the model does not have."""
        # rclpy keeps the overrides of this node (its files and -p) there, and offers no getter
        unknown = [unknown_parameter(name, list(self._specs), _JOINT_PATTERNS, model.joint_names)
                   for name in self._parameter_overrides
                   if name not in self._specs and joint_of(name, _JOINT_PATTERNS) is not None]
        if unknown:
            raise StartupError('; '.join(unknown))

    def set_parameters_atomically(self, parameter_list):
        """
        Set parameters at run time (the parameter services come here): refuse what cannot be.

        An unknown name (with the closest names: joints for a per-joint one), a read-only or
        structural one (``use_sim_time``), a value of another type or out of range: refused with
        a reason that names the parameter and what it takes. Gains then go to
        :meth:`_on_set_parameters`.
        """
        joints = self.model.joint_names if self.controller is not None else ()
        for param in parameter_list:
            reason = refusal(param.name, param.value, self._specs, _JOINT_PATTERNS, joints,
                             STRUCTURAL)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
        return super().set_parameters_atomically(parameter_list)

    def _task_law(self, changes):
        """Return the task law of the parameters, ``changes`` ({name: value}) over them."""
        def parameter(name, default):
            value = changes.get(name, getattr(self.params, name.replace('.', '_')))
            if value is None:       # an array parameter set to nothing
                return default
            if name == 'nullspace.posture' and len(value) == self.model.dof:
                return self.joints.names_to_model(value).tolist()
            return list(value) if isinstance(value, (tuple, list)) or hasattr(value, 'tolist') \
                else value
        return configured_task_law(self.model, parameter)

    def _on_set_parameters(self, parameters):
        """Validate gain changes and apply them (a PID keeps its integral)."""
        changes = {}
        task = {param.name: param.value for param in parameters
                if param.name.split('.')[0] in ('cartesian', 'nullspace')}
        for param in parameters:
            parts = param.name.split('.')
            if len(parts) == 3 and parts[0] == 'gains':
                changes.setdefault(parts[2], {})[parts[1]] = param.value
        if task and self.controller.task_law is not None:
            try:
                law = self._task_law(task)
            except InputError as exc:
                return SetParametersResult(successful=False, reason=str(exc))
            for name, value in task.items():
                setattr(self.params, name.replace('.', '_'), value)
            with self._lock:
                self.controller.set_task_law(law)
                self.controller.max_linear_velocity = task.get(
                    'cartesian.max_linear_velocity', self.controller.max_linear_velocity)
                self.controller.max_angular_velocity = task.get(
                    'cartesian.max_angular_velocity', self.controller.max_angular_velocity)
            self.get_logger().info(f'task-space parameters changed: {task}')
        if changes:
            try:
                with self._lock:
                    self.controller.set_law(self.controller.law.with_gains(**changes))
            except (InputError, TypeError) as exc:
                return SetParametersResult(successful=False, reason=str(exc))
            self.get_logger().info(f'gains changed: {changes}')
        return SetParametersResult(successful=True)

    def _sources_named(self, sources):
        """
        Return ``'followed: node /a, the other: node /b'`` for two publishers' GIDs (hex).

        A publisher whose node the graph does not know yet (its first message can come before
        discovery tells its node's name) is named again by the watchdog once it is known.
        """
        names = [self._publisher_node(gid) for gid in sources]
        if None in names:
            self._unnamed_sources = (sources, NAMING_TRIES)
        return (f'followed: {names[0] or "a node not discovered yet"}, the other: '
                f'{names[1] or "a node not discovered yet"}')

    def _publisher_node(self, gid):
        """Return ``'node /name'`` of the joint states' publisher ``gid`` (hex), or None."""
        return publisher_node(self, self._joint_states.topic_name, gid)

    def _check_effort_limits(self):
        unlimited = [j for j, limit in zip(self.model.joint_names, self.model.effort_limit)
                     if not np.isfinite(limit)]
        if self.interface is Interface.EFFORT and unlimited:
            raise StartupError(f'no effort limit for joints {unlimited}: an effort controller on '
                               "a real arm needs every joint's <limit effort=...> in the URDF")

    def startup_callback(self):
        """Hardware checks after ``startup_timeout``: joint states came, commands are heard."""
        self.destroy_timer(self._startup_timer)
        if self.controller.time is None:
            raise StartupError(f'no usable joint_states within {self.params.startup_timeout:g} s '
                               f'(expected joints {list(self.model.joint_names)})')
        topic = self.command_publisher.topic_name
        if self.command_publisher.get_subscription_count() == 0:
            self.get_logger().warning(f'nothing subscribes to {topic}: the commands go nowhere '
                                      '(is the forward_command_controller active?)')

    # ---- the cycle ------------------------------------------------------------------------------

    def _now(self):
        return ns_to_s(self.get_clock().now().nanoseconds)

    def joint_state_callback(self, data, info):
        """
        Take a joint state (CDR); in ``state`` trigger mode, send the command answering it.

        Its source is the publisher's GID (``info``; see
        :data:`~robot_dynamics.ros.wire.compat.PUBLISHER_GID`).
        """
        source = publisher_gid(info)
        try:
            stamp_ns, q, qd = self.reader.state(data)
        except InputError as exc:
            if self.params.hardware and self.controller.time is None:
                raise StartupError(f"the hardware's joint states do not fit the model: {exc}")
            if self.throttle('joint state', 2.0):
                self.get_logger().error(f'unusable joint state (not used: it counts as no '
                                        f'state): {exc}')
            return
        # the controller's clock, in s, from here on (a zero stamp: the node's on wall time; on
        # simulated time a simulation's first state, which a restarted controller receives
        # late, in the simulator's history: read as stamped now, it was fresh and held)
        t = ns_to_s(stamp_ns) if stamp_ns or self.sim_time else self._now()
        # simulated time: /clock tells how old a state is on arrival (0 before the first)
        now = (self._now() or None) if self.sim_time else None
        self.cycling.state(t, q, qd, source, now)

    def timer_callback(self):
        """``timer`` trigger mode: a cycle on the newest state at the timer's time."""
        with self._lock:
            self.cycling.tick(self._now())

    def watch(self):
        """Ask the controller what to send while no state comes; pass on cancel requests."""
        if self._unnamed_sources is not None and self.throttle('name sources', NAMING_PERIOD):
            sources, tries = self._unnamed_sources
            names = [self._publisher_node(gid) for gid in sources]
            self._unnamed_sources = None if None not in names or tries <= 1 else \
                (sources, tries - 1)
            if None not in names:
                self.get_logger().error(
                    f'two publishers of joint_states: followed: {names[0]}, the other: '
                    f'{names[1]} ({self.controller.ignored_states} states ignored so far)')
        if self.controller.time is None:
            if self.throttle('waiting for states', REMINDER_PERIOD):
                self._remind_states()
            return
        self.cycling.look(self._now())
        for handle in self.controller.goals:
            if handle is not None and handle.is_cancel_requested:
                self.report(self.controller.cancel(handle))

    def _subscribe_states(self):
        return self.create_subscription(JointState, 'joint_states', lambda msg: None,
                                        self._states_qos, callback_group=OnDemand(), raw=True)

    def _remind_states(self):
        """Say that no joint state came yet, and what is seen (as ModelSubscription does)."""
        topic = self._joint_states.topic_name
        count = self._joint_states.get_publisher_count()
        if count == 0:
            seen = "no node publishes them (is the simulator or the arm's driver running?)"
        else:
            # the lockstep states are transient-local, as the description, and the same Fast
            # DDS report applies (ModelSubscription): a restarted controller waited here once
            self._joint_states = self._subscribe_states()
            self.state_thread.resubscribe(self._joint_states)
            seen = silent(count)
        self.get_logger().warning(f'still waiting for joint states on {topic}: {seen}')

    # ---- the port of the cycle (robot_dynamics.controller.Cycling) ----------------------------

    def send_command(self, cycle):
        """Publish a cycle's command; note its latency, and its saturation (throttled)."""
        self.command_publisher.publish(
            write_float64_array(self.joints.model_to_names(cycle.command)))
        if cycle.mode is not Mode.SAFE and not self.sim_time:
            self._latencies.append(time.time() - cycle.t)
        if cycle.saturated.any() and self.throttle('saturation', 1.0):
            self.get_logger().warning(
                'saturating at the effort limits: '
                f'{[self.model.joint_names[j] for j in np.flatnonzero(cycle.saturated)]}')

    def _figures(self):
        """Return the controller's figures for /diagnostics now."""
        c = self.controller
        if c is None:
            return ControllerFigures(None, 0, 0, (), Mode.WAITING.value)
        return ControllerFigures(c.time, c.cycles, c.missed_cycles,
                                 tuple(c.saturated_cycles.tolist()), c.mode.value,
                                 self._safe_reason if c.mode is Mode.SAFE else '',
                                 c.source_changes)

    def _take_latencies(self):
        """Return the period's latencies and start the next period's (None: simulated time)."""
        latencies, self._latencies = self._latencies, []
        return None if self.sim_time else latencies

    def report(self, events):
        """Log each event once; give ended action goals their results."""
        log = self.get_logger()
        # one call site per severity: rclpy refuses a call site that changes severity
        for event in events:
            if event.kind in (Kind.SAFE_MODE, Kind.FAULT):
                self._safe_reason = event.message     # /diagnostics says it while it lasts
            if event.kind is Kind.GOAL_ENDED:
                self._goal_ended(event)
            elif event.kind is Kind.GOAL_ACCEPTED:
                log.info(f'{_goal_name(event.tag)}{event.message}')
            elif event.kind is Kind.SAFE_MODE:
                # a host that starves the states flips the safe mode on and off: its line at
                # most once a FLAP_PERIOD, with the count of the others, and the line of the
                # states' return only after a safe mode that was logged
                held = self.throttle.held(Kind.SAFE_MODE, FLAP_PERIOD)
                self._quiet_return = held is None
                if held is not None:
                    log.error(event.message + (
                        f' ({held} more since the last such line, each ended when the states '
                        'came back)' if held else ''))
            elif event.kind is Kind.HOLDING:
                if not self._quiet_return:
                    log.info(event.message)
                self._quiet_return = False
            elif event.kind in (Kind.SECOND_SOURCE, Kind.SOURCE_REFUSED, Kind.SOURCE_CHANGED):
                log.error(f'{event.message}; {self._sources_named(event.tag)}')
            elif event.kind in (Kind.STALE_STATES, Kind.STATES_JUMPED):
                log.warning(event.message)
            elif self.throttle(event.kind, 1.0):
                log.error(f'{event.message} (this kind of error is logged once a second)')

    def _goal_ended(self, event):
        handle, outcome = event.tag, event.outcome
        line = f'{_goal_name(handle)}{outcome.value}: {event.message}'
        if outcome in _EXPECTED:
            self.get_logger().info(line)
        elif outcome not in _REJECTED:
            self.get_logger().warning(line)
        elif handle is not None:
            self.throttle.warn(self.get_logger(), 'goal refused', line)
        else:
            self.throttle.warn(self.get_logger(), 'trajectory rejected',
                               f'trajectory rejected: {event.message}')
        if handle is None:
            return
        state = 'succeed' if outcome is Outcome.SUCCEEDED else \
            'canceled' if outcome is Outcome.CANCELED and handle.is_cancel_requested else 'abort'
        # either action's Result: the same codes
        handle.end(state, _ERROR_CODES[outcome], event.message)
        self.goals.forget(handle.goal_id)

    # ---- goals ----------------------------------------------------------------------------------

    def _checked(self, kind, handle, goal):
        """
        Take what the goal process passed (its thread): judge it against the arm, then submit.

        Its tag and the defaults of what it left out, then, off the cycle's lock, judged from
        the newest state (:meth:`Controller.judge`), and taken under it.
        """
        if kind == CARTESIAN:
            tolerances = goal.tolerances
            goal = goal._replace(tag=handle, tolerances=tolerances._replace(
                goal_time=tolerances.goal_time
                or self.get_parameter('constraints.goal_time').value))
        elif kind != TARGET:
            goal = goal._replace(tag=handle, tolerances=with_defaults(
                goal.tolerances, self._default_tolerances()))
        try:
            with self._lock:
                q = self.controller.q
            goal = self.controller.judge(goal, q)
            with self._lock:
                self.report(self.controller.take(goal, judged=True))
        except InputError as exc:
            self._refuse(kind, handle, exc)

    def _refuse(self, kind, handle, exc):
        """Refuse what the controller cannot take (logged at most once a second)."""
        log = self.get_logger()
        if handle is not None:
            self.throttle.warn(log, 'goal refused', f'{_goal_name(handle)}invalid: {exc}')
            handle.end('abort', _Result.INVALID_GOAL, str(exc))
            self.goals.forget(handle.goal_id)
        elif kind == TARGET:
            self.throttle.warn(log, 'target rejected', f'target pose rejected: {exc}')
        else:
            self.throttle.warn(log, 'trajectory rejected', f'trajectory rejected: {exc}')

    def _default_tolerances(self):
        return Tolerances.from_constraints(self.model.joint_names,
                                           lambda name, _: self.get_parameter(name).value)

    # ---- messages out ---------------------------------------------------------------------------

    def publish_feedback(self, cycle, goal):
        """Publish the action feedback of the running ``goal`` (its tag: its handle)."""
        handle = goal.tag
        if handle.kind == CARTESIAN:
            feedback = FollowCartesianTrajectory.Feedback()
            feedback.header.stamp = self.get_clock().now().to_msg()
            feedback.desired, feedback.actual, feedback.error, _ = self._tip_points(cycle)
            handle.publish_feedback(feedback)
            return
        # in the order of ControllerState (the joints parameter's)
        feedback = FollowJointTrajectory.Feedback(joint_names=self.joints.names)
        feedback.header.stamp = self.get_clock().now().to_msg()
        to_names = self.joints.model_to_names
        reference, q, qd = cycle.reference, cycle.q, cycle.qd
        feedback.desired = trajectory_point(to_names(reference.q), to_names(reference.qd),
                                            to_names(reference.qdd))
        feedback.actual = trajectory_point(to_names(q), to_names(qd))
        feedback.error = trajectory_point(to_names(reference.q - q), to_names(reference.qd - qd))
        if hasattr(feedback, 'index'):      # control_msgs 6 (Kilted) numbers the point in use
            feedback.index = goal.point_index(cycle.t)
        handle.publish_feedback(feedback)

    def _tip_points(self, cycle):
        """Return the tip's reference, actual and error points of a cycle, and its J's cond."""
        c = self.controller
        mask = c.task_law.mask if c.task_law is not None else self.model.task_mask
        pose, twist, cond = tip_state(self.model, cycle.q, cycle.qd, mask)
        ref = cycle.tip_reference(self.model)
        error = np.eye(4)
        error[:3, 3] = ref.pose[:3, 3] - pose[:3, 3]
        error[:3, :3] = ref.pose[:3, :3] @ pose[:3, :3].T
        return (cartesian_point(*ref), cartesian_point(pose, twist),
                cartesian_point(error, ref.twist - twist), cond)

    def publish_tip(self, cycle):
        """Publish the tip's state of the cycle (CartesianState), if anybody listens."""
        if not self.cartesian_publisher.get_subscription_count():
            return      # the tip's FK and Jacobian are not worked out in the cycle for nobody
        c = self.controller
        msg = CartesianState(controlled_frame=self.model.tip_link,
                             near_singularity=c.near_singularity,
                             controlled_axes=mask_axes(c.task_law.mask) if c.task_law else [])
        msg.reference, msg.actual, msg.error, msg.condition_number = self._tip_points(cycle)
        msg.header.stamp = time_msg(s_to_ns(c.time))
        msg.header.frame_id = self.model.base_link
        self.cartesian_publisher.publish(msg)

    def publish_state(self, cycle):
        """Publish the controller's state of the cycle (and joint_trajectory_controller's)."""
        c, to_names = self.controller, self.joints.model_to_names
        reference, q, qd = cycle.joint_reference, cycle.q, cycle.qd
        msg = ControllerState(joint_names=self.joints.names, control_law=self.law_name.value,
                              mode=cycle.mode.value, cycles=c.cycles,
                              missed_cycles=c.missed_cycles)
        # the newest state's time (the cycle's, but for a timer's cycle), as nanoseconds
        state_ns = s_to_ns(c.time)
        msg.state_stamp = time_msg(state_ns)
        msg.feedback = trajectory_point(to_names(q), to_names(qd))
        if reference is not None:      # (none in task space)
            msg.reference = trajectory_point(to_names(reference.q), to_names(reference.qd),
                                             to_names(reference.qdd))
            msg.error = trajectory_point(to_names(reference.q - q),
                                         to_names(reference.qd - qd))
        msg.effort = to_names(cycle.command).tolist()
        msg.effort_requested = to_names(cycle.requested).tolist()
        msg.saturated = to_names(cycle.saturated).tolist()
        now = self.get_clock().now()
        if self.sim_time:
            # the node's simulated clock comes from /clock, slower than the states: a command
            # is computed at its state's time at the earliest
            now = max(now, Time(nanoseconds=state_ns, clock_type=now.clock_type))
        msg.header.stamp = now.to_msg()
        self.state_publisher.publish(msg)
        # joint_trajectory_controller's state, of the same cycle; its output is the command, in
        # the field of the command interface
        self.trajectory_state_publisher.publish(JointTrajectoryControllerState(
            header=msg.header, joint_names=msg.joint_names, reference=msg.reference,
            feedback=msg.feedback, error=msg.error, speed_scaling_factor=1.0,
            output=trajectory_point(**{_OUTPUT[self.interface]: msg.effort})))
        if self.estimate_publisher is not None:
            law = c.law
            estimate = ParameterEstimate(names=list(law.parameter_names),
                                         estimate=law.state.estimate.tolist(),
                                         nominal=law.nominal.tolist(), lower=law.lower.tolist(),
                                         upper=law.upper.tolist())
            estimate.header.stamp = msg.state_stamp
            self.estimate_publisher.publish(estimate)

    # ---- the end --------------------------------------------------------------------------------

    def send_final_command(self):
        """Publish the safe command once, before the publisher goes: the drives keep the last."""
        if self.controller is None or self.command_publisher is None or self._final_sent:
            return
        self._final_sent = True
        with self._lock:
            cycle = self.controller.final_command()
            if cycle.command is not None and self.context.ok():
                self.command_publisher.publish(
                    write_float64_array(self.joints.model_to_names(cycle.command)))
                # the process may end right after: let reliable subscribers have it first
                self.command_publisher.wait_for_all_acked(Duration(seconds=FINAL_ACK_TIMEOUT))
                self.get_logger().info(f'stopping: sent the safe command '
                                       f'{self.joints.model_to_names(cycle.command).tolist()}')
            self.report(cycle.events)

    def destroy_node(self):
        """Stop the cycle's thread, send the final command, stop the goal process, tear down."""
        if self.state_thread is not None:
            self.state_thread.stop()
        self.send_final_command()
        # after the final command, whose ends of goals it sends; twice when rclpy's context
        # shutdown destroys the node before its owner does
        if self.goals is not None:
            self.goals.stop()
        return super().destroy_node()


def _goal_name(handle):
    """Return how the log names a goal (:func:`~robot_dynamics.ros.nodes.goals.goal_name`)."""
    return goal_name(handle.goal_id if handle is not None else b'')


def main(args=None):
    """Run the controller node."""
    return run_node(ControllerNode, 'controller', args)


if __name__ == '__main__':
    sys.exit(main())
