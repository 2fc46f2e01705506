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
The simulator node: :class:`robot_dynamics.simulator.Simulator` behind ROS topics.

Every decision (pacing, commands and their source, the time-out, the brakes, lockstep's wait,
reset, status, the external wrench) is the :class:`~robot_dynamics.simulator.Simulator`'s; the
node reads parameters, moves messages, keeps the clocks and runs the stepping thread.

- Commands: ``std_msgs/Float64MultiArray`` on ``command_topic`` (default
  ``<command_interface>_controller/commands`` in its namespace), one value per joint in the
  order of the ``joints`` parameter: what ros2_control's forward_command_controller takes;
  efforts, or positions and velocities for an ideal follower (:mod:`robot_dynamics.plant`).
  Each step takes the newest command (read on demand, not through rclpy's executor). A command
  of the wrong length or with a non-finite value is rejected (logged, throttled) and the last good
  command stays in force. With no valid command for ``command_timeout`` seconds the brakes hold
  the arm as a drive's watchdog engages them (``brake_on_timeout``; off: the effort is zero and
  the arm falls), said once, and once more when commands return. **One source**: the simulator
  follows the publisher (its GID) that sent the first good command; good commands from another are
  ignored and counted (``ignored_commands``), and the first from each is logged as an error
  naming both publishers; once the followed one has been silent for two seconds
  (:data:`~robot_dynamics.sources.DEFAULT_SOURCE_TIMEOUT`: a controller that died, not one a
  loaded host held up), the next publisher is followed (a restarted controller), logged as an
  error.
- ``~/external_wrench`` (``geometry_msgs/WrenchStamped``; ``/simulator/external_wrench``): the
  wrench the environment applies to the arm, force [N] and torque [N m] in the base frame's
  axes at the origin of the link ``header.frame_id`` (empty: the tip); the newest holds until
  replaced, a zero wrench removes it, applied from the next step; a force above
  ``max_external_force``, a torque above ``max_external_torque``, NaN or an unknown frame is
  refused (logged, throttled) and the one in force stays.
- State: ``joint_states`` (position, velocity, and the effort applied over the step that ended
  there, as drives report it; stamped) every ``1 / publish_rate_hz``; ``~/status``
  (SimulatorStatus: limit contacts, late steps, rejected and ignored commands, unanswered
  states, real-time factor, the external wrench) at ``status_rate_hz`` and whenever a contact
  changes.
- ``~/reset`` (std_srvs/Trigger) puts the arm back to ``initial_positions`` and
  ``initial_velocities`` at the next step, removes the external wrench, publishes that state at
  once, and replies with its stamp (the clock runs on: stamps never go back).
- A step that fails (its state non-finite or running away) is not taken: the brakes hold the
  arm at its last good state, at rest, until ``~/reset`` (logged as an error).
- ``/diagnostics`` (:mod:`~robot_dynamics.ros.nodes.diagnostics`) once a second: steps, late
  steps, stalls, unanswered states, real-time factor; WARN over ``diagnostics.*``; ERROR with
  its reason after a failed step.

Stepping runs in its own thread, paced on the monotonic clock with ``realtime`` (see
:mod:`robot_dynamics.simulator`: late steps counted and run, never dropped; a stall logged;
stamps on the steps' grid, the ROS time at the start plus ``k dt``), as fast as possible
without it.

With ``lockstep``, after publishing a state the simulator waits for the command that answers
it (the controller answers every state with exactly one command) before it steps: the same
goals give the same joint states, bit for bit, however busy the host is. States and commands
then travel reliable and transient local
(:data:`~robot_dynamics.ros.wire.qos.LOCKSTEP_WRITER`), so that a controller that starts later
still gets the first state and its answer is not lost to discovery. The wait is measured on the
time in which this process ran (:mod:`~robot_dynamics.awake`). The stepping thread runs the
library's loop (:class:`~robot_dynamics.simulator.Stepping`); the node is its port.

Whenever simulated time may leave wall time (no ``realtime``, or ``lockstep``), stamps are
simulated time from 0 and ``/clock`` is published at ``clock_rate_hz`` (the other nodes run
with ``use_sim_time``; the states carry their own exact time).
"""

import sys
import threading
import time

from geometry_msgs.msg import WrenchStamped
import numpy as np
from rclpy.node import Node
from robot_dynamics_interfaces.msg import SimulatorStatus
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from .description import chain_options, CHAIN_PARAMETERS, ModelSubscription
from .diagnostics import Diagnostics, SIMULATOR_PARAMETERS, thresholds
from .parameters import (COMMAND_PARAMETERS, command_topic, declare, DOUBLE_ARRAY, Spec,
                         STRING_ARRAY)
from .publishers import publisher_gid, publisher_node
from .runner import run_node
from .throttle import Throttle
from ..wire.cdr import JointStateWriter, read_float64_array
from ..wire.compat import RCLError
from ..wire.conversions import joint_values, JointMap, time_msg
from ..wire.on_demand import OnDemand, take_next, Waiter
from ..wire.qos import LOCKSTEP_ALL, LOCKSTEP_WRITER, NEWEST_ONLY
from ...diagnostics import simulator_status, SimulatorFigures, SimulatorThresholds
from ...errors import InputError
from ...events import Kind
from ...simulator import (configured_plant, configured_simulator, DEFAULT_COMMAND_TIMEOUT,
                          DEFAULT_LOCKSTEP_TIMEOUT, DEFAULT_MAX_EXTERNAL_FORCE,
                          DEFAULT_MAX_EXTERNAL_TORQUE,
                          DEFAULT_RATE_HZ, DEFAULT_STATUS_RATE_HZ, Stepping)
from ...stamps import ns_to_s, s_to_ns, split

PARAMETERS = (
    Spec('joints', STRING_ARRAY,
         'Joint order of commands, initial_positions and initial_velocities; empty: the '
         "model's order."),
    Spec('rate_hz', DEFAULT_RATE_HZ, 'Integration steps per second (RK4) [Hz].',
         bounds=(1.0, 100000.0)),
    Spec('publish_rate_hz', 0.0, 'Rate of joint_states [Hz]; 0: every step.',
         bounds=(0.0, 100000.0)),
    Spec('status_rate_hz', DEFAULT_STATUS_RATE_HZ,
         'Rate of ~/status [Hz of simulated time], also sent when a joint touches or leaves a '
         'limit.', bounds=(0.1, 1000.0)),
    Spec('initial_positions', DOUBLE_ARRAY,
         'Initial joint positions [rad or m] in joints order; empty: the middle of the limits.'),
    Spec('initial_velocities', DOUBLE_ARRAY,
         'Initial joint velocities [rad/s or m/s] in joints order; empty: zero.'),
    Spec('command_timeout', DEFAULT_COMMAND_TIMEOUT,
         'The brakes (brake_on_timeout) or the idle command (zero effort; hold, for position '
         'and velocity) after this long without a valid command [s, wall clock]; 0: never.',
         read_only=False, bounds=(0.0, 3600.0)),
    Spec('brake_until_command', True,
         'Hold the arm at its initial state until the first valid command, as brakes would, '
         'so that it does not fall before a controller takes over.'),
    Spec('brake_on_timeout', True,
         'After command_timeout without a valid command, hold the arm as brakes would (a '
         "drive's watchdog) until commands return; false: the idle command (zero effort: the "
         'arm falls while its controller is starved or dead).'),
    Spec('realtime', True, 'Pace steps on the wall clock; false: as fast as possible, with '
                           '/clock.'),
    Spec('clock_rate_hz', 100.0, 'Rate of /clock when it is published [Hz of simulated time]; '
                                 'each node on simulated time takes every /clock message in its '
                                 'executor.', bounds=(1.0, 100000.0)),
    Spec('lockstep', False, 'Wait for the command that answers each published state before '
                            'stepping (deterministic; simulated time, with /clock).'),
    Spec('lockstep_timeout', DEFAULT_LOCKSTEP_TIMEOUT,
         'Lockstep: wall time to wait for a command before stepping with the last one (counted '
         'as an unanswered state; time in which this process did not run does not count) [s].',
         bounds=(0.001, 3600.0)),
    Spec('friction', True, "Apply the URDF's joint damping and friction."),
    Spec('max_external_force', DEFAULT_MAX_EXTERNAL_FORCE,
         'Largest force accepted on ~/external_wrench [N]; a larger one is refused (logged).',
         bounds=(0.0, 1e6)),
    Spec('max_external_torque', DEFAULT_MAX_EXTERNAL_TORQUE,
         'Largest torque accepted on ~/external_wrench [N m]; a larger one is refused '
         '(logged).', bounds=(0.0, 1e6)),
    Spec('plant_urdf_file', '', 'URDF of the simulated arm when it is not the robot description '
                                'the other nodes use (the same joints): the real arm against '
                                'what the controller believes; empty: the robot description.'),
    Spec('payload_mass', 0.0, 'A payload at the tip of the simulated arm that the robot '
                              'description does not know [kg].', bounds=(0.0, 1e6)),
    Spec('payload_com', DOUBLE_ARRAY, "The payload's centre of mass in the tip frame [m, x y z]; "
                                      'empty: the tip origin.'),
    Spec('payload_inertia', DOUBLE_ARRAY, "The payload's inertia about its centre of mass, tip "
                                          'axes [kg m^2, ixx ixy ixz iyy iyz izz]; empty: a '
                                          'point mass.'),
) + COMMAND_PARAMETERS + CHAIN_PARAMETERS + SIMULATOR_PARAMETERS

#: Longest wait of ~/reset for the stepping thread [s].
RESET_TIMEOUT = 5.0
#: Least time between two log lines of one kind about the loop or bad input [s].
LOG_PERIOD = 5.0
#: How each event of the Simulator is logged: the level and the throttle period [s] (None: each).
_LOGGED = {Kind.STALL: ('warning', LOG_PERIOD), Kind.COMMAND_REJECTED: ('warning', 1.0),
           Kind.SECOND_SOURCE: ('error', None), Kind.SOURCE_REFUSED: ('error', None),
           Kind.SOURCE_CHANGED: ('error', None),
           Kind.COMMANDS_TIMED_OUT: ('warning', None), Kind.COMMANDS_BACK: ('info', None),
           Kind.UNANSWERED: ('warning', LOG_PERIOD),
           Kind.FAILED: ('error', None)}
#: Events that the end of the commands' publisher explains: logged as information then.
_ORDERLY_END = (Kind.COMMANDS_TIMED_OUT, Kind.UNANSWERED)


class SimulatorNode(Node):
    """Integrate the arm under the received commands and publish its joint states."""

    def __init__(self, **kwargs):
        super().__init__('simulator', **kwargs)
        self.throttle = Throttle()
        self.failed_publishes = 0         # joint states the middleware refused to send
        self.params = declare(self, PARAMETERS)
        self.sim = None
        self._thread = None
        self._stop = threading.Event()
        limits = thresholds(self.params, SimulatorThresholds)
        self.diagnostics = Diagnostics(
            self, self._figures, lambda now, before: simulator_status(now, before, limits),
            lambda: self.sim.plant.model.name if self.sim is not None else '')
        self.description = ModelSubscription(self, 'robot_description',
                                             chain_options(self.params), self.on_model)
        self.add_post_set_parameters_callback(self._parameters_set)

    def _parameters_set(self, parameters):
        """Take a new ``command_timeout`` (the one parameter settable at run time)."""
        for param in parameters:
            if param.name == 'command_timeout':
                self.params.command_timeout = param.value
                if self.sim is not None:
                    self.sim.command_timeout = param.value

    @property
    def plant(self):
        """Return the simulated :class:`~robot_dynamics.plant.Plant` (None before a model)."""
        return None if self.sim is None else self.sim.plant

    def on_model(self, model):
        """Build the simulator, then the topics, the service and the stepping thread."""
        p = self.params
        self.joints = JointMap(model, p.joints or model.joint_names)
        plant = configured_plant(model, lambda name, _: getattr(p, name), chain_options(p))
        if plant is not model:
            self.get_logger().info(
                'simulating an arm that differs from the robot description: '
                + ', '.join(filter(None, (
                    f'{p.plant_urdf_file}' if p.plant_urdf_file else '',
                    f'a payload of {p.payload_mass:g} kg at the tip' if p.payload_mass else ''))))
        model = plant
        simulated = p.lockstep or not p.realtime
        self.sim = configured_simulator(
            model, lambda name, default: getattr(p, name),
            q0=self._initial(p.initial_positions), qd0=self._initial(p.initial_velocities))
        model.warm_up()
        self._reset_requested = None   # an Event while a ~/reset call waits
        self._wrench = None            # the newest WrenchStamped, for the stepping thread
        self._clock_every_ns = s_to_ns(1.0 / p.clock_rate_hz)
        self._next_clock_ns = 0
        # the loop's messages raw: states written and commands read straight from arrays
        self._writer = JointStateWriter(self.joints.names)
        self.state_publisher = self.create_publisher(JointState, 'joint_states',
                                                     LOCKSTEP_WRITER if simulated else 10)
        self.status_publisher = self.create_publisher(SimulatorStatus, '~/status', 10)
        self.clock_publisher = self.create_publisher(Clock, '/clock', 10) if simulated else None
        # read by the stepping thread at each step: a command costs no pass of the executor
        self.commands_subscription = self.create_subscription(
            Float64MultiArray, command_topic(p), lambda msg: None,
            LOCKSTEP_ALL if p.lockstep else NEWEST_ONLY, callback_group=OnDemand(), raw=True)
        self._waiter = Waiter(self, self.commands_subscription) if p.lockstep else None
        self.create_subscription(WrenchStamped, '~/external_wrench', self.wrench_callback, 10)
        self.create_service(Trigger, '~/reset', self.reset_callback)
        self._thread = threading.Thread(target=self._run, name='simulator_steps', daemon=True)
        self._thread.start()
        self.get_logger().info(
            f'simulating {model.name!r} ({p.command_interface} commands on '
            f'{self.commands_subscription.topic_name}, '
            f'joints {self.joints.names}) at {p.rate_hz:g} Hz, '
            f'{"real time" if p.realtime else "as fast as possible"}'
            f'{", in lockstep with the controller" if p.lockstep else ""}'
            f'{", publishing /clock" if self.clock_publisher else ""}')

    def _initial(self, values):
        """Return initial values given in the ``joints`` order, in model order (or None)."""
        if not values:
            return None
        return self.joints.names_to_model(joint_values(values, self.joints.names,
                                                       'initial values'))

    # ---- the port of the stepping loop (robot_dynamics.simulator.Stepping) ---------------------

    def sleep(self, seconds):
        return self._stop.wait(seconds)

    def stopping(self):
        return self._stop.is_set()

    def reset_requested(self):
        self._reset, self._reset_requested = self._reset_requested, None
        return self._reset is not None

    def reset_done(self, stamp_ns):
        self._reset.stamp = stamp_ns
        self._reset.set()

    def commands(self, timeout):
        """Return the commands that came (up to ``timeout`` [s]), in model order, with sources."""
        if self._waiter is None:
            taken = take_next(self.commands_subscription, with_info=True)
            return [] if taken is None else [self._command(*taken)]
        taken = self._waiter.wait(timeout, with_info=True)
        received = []
        while taken is not None:
            received.append(self._command(*taken))
            taken = take_next(self.commands_subscription, with_info=True)
        return received

    def _command(self, data, info):
        """
        Return a command (CDR) as ``(values, source, sent_ns)``.

        ``info`` is the middleware's message info: the publisher's GID names the source, its
        source timestamp says when it was sent.
        """
        values = np.asarray(read_float64_array(data), dtype=float)
        if values.shape == (len(self.joints.names),):
            values = self.joints.names_to_model(values)
        return values, publisher_gid(info), info.get('source_timestamp')

    def before_step(self):
        self._take_wrench()

    def wrench_callback(self, msg):
        """Keep the newest external wrench for the stepping thread (checked there)."""
        self._wrench = msg

    def reset_callback(self, request, response):
        """Have the stepping thread restore the initial state; reply with its stamp."""
        done = threading.Event()
        self._reset_requested = done
        response.success = done.wait(RESET_TIMEOUT)
        if response.success:
            sec, nanosec = split(done.stamp)
            response.message = (f'initial state restored; its joint_states stamp is '
                                f'{sec}.{nanosec:09d} s')
        else:
            response.message = f'the stepping thread did not answer within {RESET_TIMEOUT} s'
        return response

    # ---- stepping -------------------------------------------------------------------------------

    def _run(self):
        stepping = Stepping(self.sim, self)
        try:
            while not self._stop.is_set() and self.context.ok() and stepping.once():
                pass
        except RCLError:
            if self.context.ok():
                raise
            # the context was shut down (SIGINT) while a step was publishing: a normal stop

    def _take_wrench(self):
        msg, self._wrench = self._wrench, None
        if msg is None:
            return
        f, n = msg.wrench.force, msg.wrench.torque
        try:
            self.sim.set_wrench([f.x, f.y, f.z, n.x, n.y, n.z], msg.header.frame_id)
        except InputError as exc:
            if self.throttle('wrench', 1.0):
                self.get_logger().warning(f'refused external wrench: {exc}; the one in force '
                                          'stays')

    def _figures(self):
        """Return the simulator's figures for /diagnostics now."""
        if self.sim is None:
            p = self.params
            return SimulatorFigures(time.monotonic(), 0.0, 0, 0, 0, 0, False, p.realtime,
                                    p.lockstep)
        return self.sim.figures(time.monotonic())

    def report(self, events):
        """Log the simulator's events (throttled where they may repeat)."""
        for event in events:
            level, period = _LOGGED[event.kind]
            if period is not None and not self.throttle(event.kind, period):
                continue
            message = event.message
            if event.kind in _ORDERLY_END and \
                    self.commands_subscription.get_publisher_count() == 0:
                # the controller left the graph (a bringup that stops): the end of its
                # commands is no fault
                level, message = 'info', f'{message} (the command publisher left the graph)'
            if event.tag is not None:
                message += ' (' + '; '.join(f'{gid}: {self._publisher_name(gid)}'
                                            for gid in event.tag) + ')'
            # one call site per severity: rclpy refuses a call site that changes severity
            log = self.get_logger()
            if level == 'fatal':
                log.fatal(message)
            elif level == 'error':
                log.error(message)
            elif level == 'warning':
                log.warning(message)
            else:
                log.info(message)

    def _publisher_name(self, gid):
        """Return the node that owns the command publisher of GID ``gid`` (hex), in words."""
        name = publisher_node(self, self.commands_subscription.topic_name, gid)
        return f'publisher of {name}' if name else 'a publisher not (or no longer) in the graph'

    def publish_state(self, stamp_ns):
        """Publish the arm's joint state stamped ``stamp_ns`` (and /clock on simulated time)."""
        plant, to_names = self.sim.plant, self.joints.model_to_names
        if self.clock_publisher is not None and stamp_ns >= self._next_clock_ns:
            self.clock_publisher.publish(Clock(clock=time_msg(stamp_ns)))
            self._next_clock_ns = stamp_ns + self._clock_every_ns
        # what drives report as effort: the effort of the step that brought the arm here
        data = self._writer.write(stamp_ns, to_names(plant.q), to_names(plant.qd),
                                  to_names(plant.effort))
        try:
            self.state_publisher.publish(data)
        except RCLError as exc:
            if not self.context.ok():
                raise
            # the middleware can refuse a write (Fast DDS did, under load, while a reliable
            # reader that vanished unannounced, a controller killed, was still matched): that
            # state is lost to every reader, and the arm steps on
            self.failed_publishes += 1
            if self.throttle('state not published', 1.0):
                self.get_logger().error(
                    f'joint state of t = {ns_to_s(stamp_ns):.3f} s not published '
                    f'({self.failed_publishes} so far; a reader that no longer acknowledges, '
                    f'as a process killed, until the middleware drops it): {exc}')

    def publish_status(self):
        """Publish ~/status: the simulator's figures."""
        status = self.sim.status(time.monotonic())
        names = self.joints.model_to_names
        msg = SimulatorStatus(joint_names=self.joints.names, lockstep=status.lockstep,
                              unanswered_states=status.unanswered_states)
        msg.header.stamp = time_msg(status.stamp_ns)
        msg.at_lower_limit = names(status.at_lower).tolist()
        msg.at_upper_limit = names(status.at_upper).tolist()
        msg.command_timed_out = status.command_timed_out
        msg.command_interface = status.interface
        msg.steps = status.steps
        msg.late_steps = status.late_steps
        msg.rejected_commands = status.rejected_commands
        msg.ignored_commands = status.ignored_commands
        msg.simulated_time = status.simulated_time
        msg.real_time_factor = status.real_time_factor
        msg.step_lateness_p99 = status.step_lateness_p99
        w = msg.external_wrench
        (w.force.x, w.force.y, w.force.z,
         w.torque.x, w.torque.y, w.torque.z) = status.wrench.tolist()
        msg.external_wrench_frame = status.wrench_frame
        self.status_publisher.publish(msg)

    def destroy_node(self):
        """Stop the stepping thread before the node goes."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        return super().destroy_node()


def main(args=None):
    """Run the simulator node."""
    return run_node(SimulatorNode, 'simulator', args)


if __name__ == '__main__':
    sys.exit(main())
