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
The controller node: the library's joint control laws over ROS topics.

- State: ``joint_states`` (sensor_msgs/JointState), joints matched by name (extra joints are
  ignored; a missing one is logged and the cycle skipped, so the state goes stale).
- Goals: ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory, fire and forget) and the
  ``~/follow_joint_trajectory`` action (robot_dynamics_interfaces, shaped like control_msgs'),
  followed by :class:`robot_dynamics.follower.TrajectoryFollower` with the semantics of
  ros2_controllers' joint_trajectory_controller. ROS 2 cannot attach a result to a rejected
  goal, so a malformed goal is accepted and aborted at once with control_msgs' error code
  (INVALID_JOINTS, INVALID_GOAL, OLD_HEADER_TIMESTAMP) and a message; the motion under way is not
  touched. A newer goal preempts the running one (aborted, error string "preempted").
- Commands: ``std_msgs/Float64MultiArray`` on ``command_topic`` (default
  ``/<command_interface>_controller/commands``), one value per joint in the order of ``joints``:
  what ros2_control's forward_command_controller takes. ``effort`` (default) runs
  the control law (``computed_torque``, ``pd_gravity``, ``pd``, ``pid``) clipped to the URDF's
  effort limits; ``position`` sends the followed reference itself, ``velocity`` its velocity
  plus ``velocity_feedback`` times the position error (so that integration errors do not
  accumulate).
- ``~/controller_state`` (ControllerState) at ``state_publish_rate_hz``.

Each cycle runs when a joint state arrives (``trigger: state``, default), at the time of the
state's stamp (the reference is compared with the arm where it was measured): the command
answers the newest state at once, without the up to one period of extra delay and the beat
between two clocks that a timer would add; ``trigger: timer`` runs at ``rate_hz`` on the latest
state instead. Joint states are read by a thread that waits on that subscription alone
(:class:`~robot_dynamics.ros.on_demand.SubscriptionThread`), not by rclpy's executor, whose
pass per message cost several times the cycle itself; goals, parameters and the watchdog run in
the executor and share one lock with the cycle. A watchdog enters the safe mode (``safe_mode``:
zero effort, or damping with gravity compensation) when the newest state is older than
``state_timeout``, ending any goal, and the controller holds its position again when states
return.
"""

import enum
import sys
import threading
import time

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.task import Future
from robot_dynamics_interfaces.action import FollowJointTrajectory
from robot_dynamics_interfaces.msg import ControllerState
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from .conversions import (JointNameError, JointOrder, to_nanoseconds, to_seconds,
                          trajectory_arrays, trajectory_point)
from .description import chain_options, CHAIN_PARAMETERS, ModelSubscription
from .on_demand import OnDemand, SubscriptionThread
from .parameters import (COMMAND_PARAMETERS, command_topic, declare, descriptor, NEWEST_ONLY,
                         Spec, STRING_ARRAY)
from .runner import run_node, StartupError
from .throttle import Throttle
from ..control import Law
from ..errors import choice, InputError, RobotDynamicsError
from ..follower import Goal, Outcome, Tolerances, TrajectoryFollower
from ..limits import middle
from ..plant import Interface
from ..simulation import CONTROLLERS, default_controller
from ..trajectory import TrajectoryPoint


class Trigger(enum.Enum):
    """What starts a control cycle."""

    STATE = 'state'
    TIMER = 'timer'


class SafeMode(enum.Enum):
    """The effort sent while the joint states are stale."""

    ZERO_EFFORT = 'zero_effort'
    DAMPING = 'damping'


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

PARAMETERS = (
    Spec('joints', STRING_ARRAY,
         "Joint order of the commands; empty: the model's order."),
    Spec('control_law', 'computed_torque',
         f'Control law of the effort interface: {", ".join(CONTROLLERS)}.'),
    Spec('trigger', 'state', 'What starts a control cycle: state (each joint state) or timer '
                             '(at rate_hz).'),
    Spec('rate_hz', 1000.0, 'Control rate [Hz]: of the timer, or the expected joint state rate '
                            '(for counting missed cycles).', bounds=(1.0, 10000.0)),
    Spec('state_timeout', 0.05, 'Safe mode when the newest joint state is older than this [s].',
         bounds=(0.001, 10.0)),
    Spec('safe_mode', 'zero_effort', 'Effort in safe mode: zero_effort, or damping '
                                     '(-safe_damping qd + gravity compensation, from the last '
                                     'state).'),
    Spec('safe_damping', 1.0, 'Damping of the safe mode [N m s/rad or N s/m].',
         bounds=(0.0, 1e6)),
    Spec('natural_frequency', 20.0, 'Closed-loop natural frequency [rad/s] that sets the default '
                                    'gains (see simulation.default_controller).',
         bounds=(0.01, 1e4)),
    Spec('damping_ratio', 1.0, 'Closed-loop damping ratio of the default gains.',
         bounds=(0.0, 100.0)),
    Spec('friction_compensation', True, "Feed the model's friction forward (computed torque, "
                                        'at the reference velocity).'),
    Spec('velocity_feedback', 10.0,
         'Velocity interface: command = reference velocity + this gain times the position '
         'error [1/s] (0: the reference velocity alone, open loop).', bounds=(0.0, 1e4)),
    Spec('stop_time', 0.25, 'Time to bring a motion to rest after a cancel or an abort [s].',
         bounds=(0.001, 60.0)),
    Spec('state_publish_rate_hz', 100.0, 'Rate of ~/controller_state [Hz]; 0: none.',
         bounds=(0.0, 10000.0)),
    Spec('action_monitor_rate_hz', 20.0, 'Rate of the action feedback [Hz].',
         bounds=(0.1, 1000.0)),
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
) + COMMAND_PARAMETERS + CHAIN_PARAMETERS

#: Per-joint default tolerances, declared once the joints are known: ``constraints.<joint>.<name>``
#: (the names of joint_trajectory_controller).
TOLERANCE_NAMES = ('trajectory', 'goal')


class ControllerNode(Node):
    """Track goals with a control law; publish commands and the controller state."""

    def __init__(self, **kwargs):
        super().__init__('controller', **kwargs)
        self.throttle = Throttle()
        self.params = p = declare(self, PARAMETERS)
        self.law_name = choice(p.control_law, Law, 'control_law', allowed=CONTROLLERS)
        self.interface = choice(p.command_interface, Interface, 'command_interface')
        self.trigger = choice(p.trigger, Trigger, 'trigger')
        self.safe_mode = choice(p.safe_mode, SafeMode, 'safe_mode')
        self.model = None
        self.mode = ControllerState.MODE_WAITING
        self._lock = threading.Lock()     # the cycle (its own thread) against the callbacks
        self.state_thread = None
        self.description = ModelSubscription(self, 'robot_description',
                                             chain_options(self.params), self.on_model)

    def on_model(self, model):
        """Build the law and the follower, warm them up, then open the topics and the action."""
        p = self.params
        self.joints = p.joints or list(model.joint_names)
        self.to_model = model.joint_indices(self.joints)
        self.order = JointOrder(model, 'joint_states')
        self.follower = TrajectoryFollower(model, stop_time=p.stop_time)
        self.law = self._declare_gains(model)
        self._declare_tolerances(model)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.model = model
        self._warm_up()
        self.state = None                  # (q, qd, stamp ns, monotonic receipt time)
        self.cycles = self.missed_cycles = 0
        self._last_stamp = None
        self._last_state_publish = self._last_feedback = -np.inf
        self._results = {}                 # goal id (bytes) -> Future of its result
        self.command_publisher = self.create_publisher(Float64MultiArray, command_topic(p), 10)
        self.state_publisher = self.create_publisher(ControllerState, '~/controller_state', 10)
        joint_states = self.create_subscription(JointState, 'joint_states', lambda msg: None,
                                                NEWEST_ONLY, callback_group=OnDemand())
        self.create_subscription(JointTrajectory, '~/joint_trajectory',
                                 self.trajectory_callback, 10)
        self.action_server = ActionServer(
            self, FollowJointTrajectory, '~/follow_joint_trajectory', self.execute_callback,
            goal_callback=lambda request: GoalResponse.ACCEPT,
            cancel_callback=lambda goal_handle: CancelResponse.ACCEPT,
            callback_group=ReentrantCallbackGroup())
        if self.trigger is Trigger.TIMER:
            self._next_tick = time.monotonic()
            self.create_timer(1.0 / p.rate_hz, self.timer_callback)
        self.create_timer(p.state_timeout / 4.0, self.watchdog_callback)
        if p.hardware:
            self._check_effort_limits()
            self._startup_timer = self.create_timer(p.startup_timeout, self.startup_callback)
        self.get_logger().info(
            f'{self.law_name.value} control of {self.joints} ({self.interface.value} commands on '
            f'{command_topic(p)}), cycles on each {self.trigger.value}; waiting for joint_states')
        self.state_thread = SubscriptionThread(self, joint_states, self.joint_state_callback,
                                               self._lock, 'controller_states')

    # ---- configuration --------------------------------------------------------------------------

    def _declare_gains(self, model):
        """Declare ``gains.<joint>.kp/kd/ki`` (defaults from the model) and build the law."""
        p = self.params
        default = default_controller(self.law_name.value, model, middle(model.lower, model.upper),
                                     natural_frequency=p.natural_frequency,
                                     damping_ratio=p.damping_ratio,
                                     friction=p.friction_compensation)
        gains = {}
        for name in default.gain_names:
            values = getattr(default, name)
            unit = 'computed torque: 1/s^2, 1/s' if self.law_name is Law.COMPUTED_TORQUE \
                else 'N m/rad, N m s/rad, N m/(rad s) (N/m... for prismatic joints)'
            gains[name] = {j: self.declare_parameter(
                f'gains.{j}.{name}', float(values[i]), descriptor(Spec(
                    f'gains.{j}.{name}', 0.0, f'{name} of joint {j} [{unit}]', False))).value
                for i, j in enumerate(model.joint_names)}
        return default.with_gains(**gains)

    def _declare_tolerances(self, model):
        for j in model.joint_names:
            for name in TOLERANCE_NAMES:
                what = 'path' if name == 'trajectory' else 'goal'
                self.declare_parameter(f'constraints.{j}.{name}', 0.0, descriptor(Spec(
                    f'constraints.{j}.{name}', 0.0, f'Default {what} position tolerance of '
                    f'joint {j} [rad or m]; 0: not checked.', False, (0.0, 1e6))))

    def _on_set_parameters(self, parameters):
        """Validate gain changes and apply them (a PID keeps its integral)."""
        changes = {}
        for param in parameters:
            parts = param.name.split('.')
            if len(parts) == 3 and parts[0] == 'gains':
                changes.setdefault(parts[2], {})[parts[1]] = param.value
        if changes:
            try:
                with self._lock:
                    self.law = self.law.with_gains(**changes)
            except (InputError, TypeError) as exc:
                return SetParametersResult(successful=False, reason=str(exc))
            self.get_logger().info(f'gains changed: {changes}')
        return SetParametersResult(successful=True)

    def _default_tolerances(self):
        model = self.model
        path = np.array([self._tolerance(j, 'trajectory') for j in model.joint_names])
        goal = np.array([self._tolerance(j, 'goal') for j in model.joint_names])
        stopped = self.get_parameter('constraints.stopped_velocity_tolerance').value
        return Tolerances(path, np.full(model.dof, np.inf), goal,
                          np.full(model.dof, stopped if stopped > 0.0 else np.inf),
                          self.get_parameter('constraints.goal_time').value)

    def _tolerance(self, joint, name):
        value = self.get_parameter(f'constraints.{joint}.{name}').value
        return value if value > 0.0 else np.inf

    def _warm_up(self):
        """Compile and load every kernel of the cycle before the first one runs."""
        start = time.perf_counter()
        self.model.warm_up()
        q = middle(self.model.lower, self.model.upper)
        self.follower.hold(q, 0.0)
        reference, _ = self.follower.update(0.0, q, np.zeros_like(q))
        self.law.compute(0.0, q, np.zeros_like(q), reference)
        if self.law_name is Law.PID:
            self.law.reset()
        self.get_logger().info(f'warmed up in {time.perf_counter() - start:.2f} s')

    def _check_effort_limits(self):
        unlimited = [j for j, limit in zip(self.model.joint_names, self.model.effort_limit)
                     if not np.isfinite(limit)]
        if self.interface is Interface.EFFORT and unlimited:
            raise StartupError(f'no effort limit for joints {unlimited}: an effort controller on '
                               "a real arm needs every joint's <limit effort=...> in the URDF")

    def startup_callback(self):
        """Hardware checks after ``startup_timeout``: joint states came, commands are heard."""
        self.destroy_timer(self._startup_timer)
        if self.state is None:
            raise StartupError(f'no usable joint_states within {self.params.startup_timeout:g} s '
                               f'(expected joints {list(self.model.joint_names)})')
        topic = self.command_publisher.topic_name
        if self.command_publisher.get_subscription_count() == 0:
            self.get_logger().warning(f'nothing subscribes to {topic}: the commands go nowhere '
                                      '(is the forward_command_controller active?)')

    # ---- the cycle ------------------------------------------------------------------------------

    def _now(self):
        return self.get_clock().now().nanoseconds * 1e-9

    def joint_state_callback(self, msg):
        """Keep the newest state; in ``state`` trigger mode, run a control cycle for it."""
        try:
            q, qd = self.order.state(msg)
        except InputError as exc:
            if self.params.hardware and self.state is None:
                raise StartupError(f"the hardware's joint states do not fit the model: {exc}")
            if self.throttle('joint state', 2.0):
                self.get_logger().error(f'unusable joint state: {exc}')
            return
        stamp = to_nanoseconds(msg.header.stamp)
        if self._last_stamp is not None and self.trigger is Trigger.STATE:
            gap = (stamp - self._last_stamp) * 1e-9 * self.params.rate_hz
            if gap > 1.5:
                self.missed_cycles += int(round(gap)) - 1
        self._last_stamp = stamp
        self.state = (q, qd, msg.header.stamp, time.monotonic())
        if self.mode in (ControllerState.MODE_WAITING, ControllerState.MODE_SAFE):
            self._resume(q)
        if self.trigger is Trigger.STATE:
            self._cycle()

    def timer_callback(self):
        """``timer`` trigger mode: a cycle on the newest state, if it is fresh."""
        with self._lock:
            self._timer_cycle()

    def _timer_cycle(self):
        period = 1.0 / self.params.rate_hz
        late = time.monotonic() - self._next_tick
        if late > period:
            self.missed_cycles += int(late // period)
            self._next_tick += period * int(late // period)
        self._next_tick += period
        if self.state is not None and self.mode not in (ControllerState.MODE_WAITING,
                                                        ControllerState.MODE_SAFE):
            self._cycle()

    def _resume(self, q):
        was_safe = self.mode == ControllerState.MODE_SAFE
        self.follower.hold(q, self._now())
        if self.law_name is Law.PID:
            self.law.reset()
        self.mode = ControllerState.MODE_HOLD
        self.get_logger().info('joint states are back: holding position' if was_safe
                               else f'first joint state: holding {np.round(q, 4).tolist()}')

    def _cycle(self):
        q, qd, state_stamp, _ = self.state
        # the time the state was measured: the reference is compared with the arm at that time,
        # so the delay of the state's delivery does not show as tracking error
        now = to_seconds(state_stamp) or self._now()
        self._check_cancels(now)
        reference, events = self.follower.update(now, q, qd)
        try:
            if self.interface is Interface.EFFORT:
                if self.law_name is Law.PID and self.law.state.time is not None \
                        and now < self.law.state.time:
                    self.law.restart()      # the clock went back (simulated time restarted)
                command = self.law.compute(now, q, qd, reference)
                values, requested, saturated = command.tau, command.tau_requested, \
                    command.saturated
            else:
                values = reference.q if self.interface is Interface.POSITION else \
                    reference.qd + self.params.velocity_feedback * (reference.q - q)
                requested, saturated = values, np.zeros(len(values), dtype=bool)
        except RobotDynamicsError as exc:
            if self.throttle('law', 1.0):
                self.get_logger().error(f'control law failed, no command sent: {exc}')
            return
        self.command_publisher.publish(Float64MultiArray(data=values[self.to_model].tolist()))
        self.cycles += 1
        self.mode = (ControllerState.MODE_TRAJECTORY if self.follower.active is not None
                     else ControllerState.MODE_HOLD)
        if saturated.any() and self.throttle('saturation', 1.0):
            self.get_logger().warning(
                'saturating at the effort limits: '
                f'{[self.model.joint_names[j] for j in np.flatnonzero(saturated)]}')
        self._finish(events)
        self._publish_feedback(now, reference, q, qd)
        if self.params.state_publish_rate_hz > 0.0 and \
                now - self._last_state_publish >= 1.0 / self.params.state_publish_rate_hz:
            self._last_state_publish = now
            self._publish_state(state_stamp, reference, q, qd, values, requested, saturated)

    def watchdog_callback(self):
        """Enter the safe mode when the newest joint state is too old; act in it."""
        with self._lock:
            self._watch()

    def _watch(self):
        if self.state is None or self.mode == ControllerState.MODE_WAITING:
            return
        q, qd, state_stamp, received = self.state
        if time.monotonic() - received <= self.params.state_timeout:
            return
        if self.mode != ControllerState.MODE_SAFE:
            self.mode = ControllerState.MODE_SAFE
            self.get_logger().error(
                f'no joint state for {self.params.state_timeout:g} s: safe mode '
                f'({self.safe_mode.value}) until they return')
            self._finish(self.follower.stop(self._now(), 'joint states stopped: safe mode'))
        if self.interface is not Interface.EFFORT:
            tau = None      # position and velocity followers keep their last command
        elif self.safe_mode is SafeMode.DAMPING:
            tau = np.clip(self.model.gravity_torques(q) - self.params.safe_damping * qd,
                          -self.model.effort_limit, self.model.effort_limit)
        else:
            tau = np.zeros(self.model.dof)
        if tau is not None:
            self.command_publisher.publish(Float64MultiArray(data=tau[self.to_model].tolist()))
        if self.params.state_publish_rate_hz > 0.0:
            at_rest = TrajectoryPoint.at_rest(q)
            none = np.zeros(self.model.dof, dtype=bool)
            effort = np.zeros(self.model.dof) if tau is None else tau
            self._publish_state(state_stamp, at_rest, q, qd, effort, effort, none)

    # ---- goals ----------------------------------------------------------------------------------

    def _goal(self, msg, tolerances, tag):
        """Return the follower Goal of a JointTrajectory message (raise on a malformed one)."""
        times, positions, velocities, accelerations = trajectory_arrays(msg, self.model)
        start = to_seconds(msg.header.stamp) or self._now()
        return Goal(tag, start, times, positions, velocities, accelerations, tolerances)

    def trajectory_callback(self, msg):
        """Take a fire-and-forget trajectory; a malformed one is logged and dropped."""
        with self._lock:
            self._take_trajectory(msg)

    def _take_trajectory(self, msg):
        if self.mode in (ControllerState.MODE_WAITING, ControllerState.MODE_SAFE):
            self.get_logger().warning(f'trajectory ignored: the controller is {self.mode}')
            return
        try:
            goal = self._goal(msg, self._default_tolerances(), None)
        except InputError as exc:
            if self.throttle('trajectory', 1.0):
                self.get_logger().error(f'trajectory rejected: {exc}')
            return
        self._finish(self.follower.submit(goal, self._now()))

    async def execute_callback(self, goal_handle):
        """Run one action goal to its end; its result comes from the control cycles."""
        with self._lock:
            future = self._submit(goal_handle)
        return await future

    def _submit(self, goal_handle):
        """Hand a goal to the follower; return the Future of its result (done if malformed)."""
        future = Future()
        request = goal_handle.request
        try:
            if self.mode in (ControllerState.MODE_WAITING, ControllerState.MODE_SAFE):
                raise InputError(f'the controller is {self.mode}: no fresh joint states')
            goal = self._goal(request.trajectory, self._goal_tolerances(request), goal_handle)
        except InputError as exc:
            code = (_Result.INVALID_JOINTS if isinstance(exc, JointNameError)
                    else _Result.INVALID_GOAL)
            future.set_result(self._abort(goal_handle, code, str(exc)))
            return future
        self._results[bytes(goal_handle.goal_id.uuid)] = future
        self._finish(self.follower.submit(goal, self._now()))
        return future

    def _goal_tolerances(self, request):
        """Return the goal's tolerances: its own where given (> 0; -1: none), else defaults."""
        default = self._default_tolerances()
        path_position, goal_position = default.path_position.copy(), default.goal_position.copy()
        path_velocity, goal_velocity = default.path_velocity.copy(), default.goal_velocity.copy()
        for given, position, velocity in ((request.path_tolerance, path_position, path_velocity),
                                          (request.goal_tolerance, goal_position, goal_velocity)):
            for tol in given:
                if tol.name not in self.model.joint_names:
                    raise JointNameError(f'tolerance for unknown joint {tol.name!r}; joints: '
                                         f'{list(self.model.joint_names)}')
                j = self.model.joint_names.index(tol.name)
                for array, value in ((position, tol.position), (velocity, tol.velocity)):
                    if value == -1.0:
                        array[j] = np.inf
                    elif value > 0.0:
                        array[j] = value
                    elif value != 0.0 or not np.isfinite(value):
                        raise InputError(f'tolerance of {tol.name!r}: {value} (expected > 0, '
                                         '0 for the default or -1 for none)')
        goal_time = to_seconds(request.goal_time_tolerance) or default.goal_time
        return Tolerances(path_position, path_velocity, goal_position, goal_velocity, goal_time)

    def _abort(self, goal_handle, code, message):
        self.get_logger().warning(f'goal aborted: {message}')
        goal_handle.abort()
        return _Result(error_code=code, error_string=message)

    def _finish(self, events):
        """Give ended goals their results (actions) or a log line (topic goals)."""
        for event in events:
            handle = event.tag
            if handle is None:
                # one call site per severity: rclpy refuses a call site that changes severity
                line = f'trajectory {event.outcome.value}: {event.message}'
                if event.outcome is Outcome.SUCCEEDED:
                    self.get_logger().info(line)
                else:
                    self.get_logger().warning(line)
                continue
            result = _Result(error_code=_ERROR_CODES[event.outcome], error_string=event.message)
            if event.outcome is Outcome.SUCCEEDED:
                handle.succeed()
            elif event.outcome is Outcome.CANCELED and handle.is_cancel_requested:
                handle.canceled()
            else:
                self.get_logger().warning(f'goal {event.outcome.value}: {event.message}')
                handle.abort()
            future = self._results.pop(bytes(handle.goal_id.uuid), None)
            if future is not None:
                future.set_result(result)
                # the executor resumes the waiting execute_callback when it wakes up; from the
                # cycle's thread, nothing else would wake it
                if self.executor is not None:
                    self.executor.wake()

    def _check_cancels(self, now):
        """Cancel the goals whose clients asked for it (running ones stop smoothly)."""
        for goal in (self.follower.pending, self.follower.active):
            if goal is not None and goal.tag is not None and goal.tag.is_cancel_requested:
                self._finish(self.follower.cancel(goal.tag, now))

    def _publish_feedback(self, now, reference, q, qd):
        handle = self.follower.active.tag if self.follower.active is not None else None
        if handle is None or now - self._last_feedback < 1.0 / self.params.action_monitor_rate_hz:
            return
        self._last_feedback = now
        feedback = FollowJointTrajectory.Feedback(joint_names=list(self.model.joint_names))
        feedback.header.stamp = self.get_clock().now().to_msg()
        feedback.desired = trajectory_point(reference.q, reference.qd, reference.qdd)
        feedback.actual = trajectory_point(q, qd)
        feedback.error = trajectory_point(reference.q - q, reference.qd - qd)
        handle.publish_feedback(feedback)

    def _publish_state(self, state_stamp, reference, q, qd, values, requested, saturated):
        order = self.to_model
        msg = ControllerState(joint_names=self.joints, control_law=self.law_name.value,
                              mode=self.mode, cycles=self.cycles,
                              missed_cycles=self.missed_cycles)
        msg.state_stamp = state_stamp
        msg.reference = trajectory_point(reference.q[order], reference.qd[order],
                                         reference.qdd[order])
        msg.feedback = trajectory_point(q[order], qd[order])
        msg.error = trajectory_point((reference.q - q)[order], (reference.qd - qd)[order])
        msg.effort = values[order].tolist()
        msg.effort_requested = requested[order].tolist()
        msg.saturated = saturated[order].tolist()
        msg.header.stamp = self.get_clock().now().to_msg()
        self.state_publisher.publish(msg)

    def destroy_node(self):
        """Stop the cycle's thread, tear the action server down, then the node."""
        if self.state_thread is not None:
            self.state_thread.stop()
        # twice when rclpy's context shutdown destroys the node before its owner does
        if getattr(self, 'action_server', None) is not None:
            self.action_server.destroy()
            self.action_server = None
        return super().destroy_node()


def main(args=None):
    """Run the controller node."""
    return run_node(ControllerNode, 'controller', args)


if __name__ == '__main__':
    sys.exit(main())
