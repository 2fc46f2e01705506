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
The simulator node: the plant of :mod:`robot_dynamics.plant` behind ROS topics.

- Commands: ``std_msgs/Float64MultiArray`` on ``command_topic`` (default
  ``/<command_interface>_controller/commands``), one value per joint in the order of the
  ``joints`` parameter: what ros2_control's forward_command_controller takes; efforts, or
  positions and velocities for an ideal follower (:mod:`robot_dynamics.plant`). Each step takes
  the newest command (read on demand, not through rclpy's executor). A command of
  the wrong length or with a non-finite value is rejected (logged, throttled) and the last good
  command stays in force. With no valid command for ``command_timeout`` seconds the effort is
  zero (said once, and once more when commands return).
- State: ``joint_states`` (position, velocity, and the effort applied over the step that ended
  there, as drives report it; stamped) every ``1 / publish_rate_hz``; ``~/status``
  (SimulatorStatus: limit contacts, late steps, rejected commands, unanswered states, real-time
  factor) at ``status_rate_hz`` and whenever a contact changes.
- ``~/reset`` (std_srvs/Trigger) puts the arm back to ``initial_positions`` and
  ``initial_velocities`` at the next step, publishes that state at once, and replies with its
  stamp (the clock runs on: stamps never go back).

Stepping runs in its own thread. With ``realtime`` (default), step k starts at ``t0 + k dt`` on
the monotonic clock: a late step is counted and run at once (the steps after it catch up), never
dropped, so simulated time stays locked to wall time; one that starts more than ``STALL`` late
(the process did not run) is also logged. The state of step k is the arm at
``t0 + k dt``, and that is its stamp (the ROS time at the start plus ``k dt``) however late the
step ran: stamps are exactly periods apart, a late state shows as an older one, and a gap in
the stamps a subscriber receives is a state it did not get. Without it the steps run as fast as
possible.

With ``lockstep``, after publishing a state the simulator waits for the command that answers
it (the controller answers every state with exactly one command) before it steps: the same
goals give the same joint states, bit for bit, however busy the host is. Before the first
command the arm is braked (``brake_until_command``) and simulated time does not start until a
controller answers the first state. States and commands then travel reliable and transient
local (:data:`~robot_dynamics.ros.qos.LOCKSTEP_WRITER`), so that a controller that
starts later still gets the first state and its answer is not lost to discovery; a command
published before this simulator's first state (kept for late subscribers by a controller that
ran before) is not an answer and is ignored, and a rejected command does not stand in for one.
A command that does not come within ``lockstep_timeout`` of wall time (time in which the
simulator ran: a stall of the host where it did not run is no wait, see
:mod:`~robot_dynamics.ros.awake`) is counted (``unanswered_states``) and the step runs with
the last command; the simulator then steps without waiting until commands come again (a
controller that died). With ``realtime`` as well, steps are paced to the wall clock and wait
when the controller is late: the real-time factor falls below 1, and nothing counts as late.

Whenever simulated time may leave wall time (no ``realtime``, or ``lockstep``), stamps are
simulated time from 0 and ``/clock`` is published at ``clock_rate_hz`` (the other nodes run
with ``use_sim_time``; the states carry their own exact time).
"""

import math
import sys
import threading
import time

import numpy as np
from rclpy.node import Node
from robot_dynamics_interfaces.msg import SimulatorStatus
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from .awake import AwakeTime
from .cdr import JointStateWriter, read_float64_array
from .compat import RCLError
from .conversions import joint_values, JointMap, time_msg
from .description import chain_options, CHAIN_PARAMETERS, ModelSubscription
from .on_demand import OnDemand, take_next, Waiter
from .parameters import (COMMAND_PARAMETERS, command_topic, declare, DOUBLE_ARRAY, Spec,
                         STRING_ARRAY)
from .qos import LOCKSTEP_ALL, LOCKSTEP_WRITER, NEWEST_ONLY
from .runner import run_node
from .throttle import Throttle
from ..errors import InputError, RobotDynamicsError
from ..model import RobotModel
from ..plant import Plant
from ..simulation import with_payload
from ..trajectory import NS_PER_S as _NS

PARAMETERS = (
    Spec('joints', STRING_ARRAY,
         'Joint order of commands, initial_positions and initial_velocities; empty: the '
         "model's order."),
    Spec('rate_hz', 1000.0, 'Integration steps per second (RK4) [Hz].', bounds=(1.0, 100000.0)),
    Spec('publish_rate_hz', 0.0, 'Rate of joint_states [Hz]; 0: every step.',
         bounds=(0.0, 100000.0)),
    Spec('status_rate_hz', 10.0, 'Rate of ~/status [Hz of simulated time], also sent when a '
                                 'joint touches or leaves a limit.', bounds=(0.1, 1000.0)),
    Spec('initial_positions', DOUBLE_ARRAY,
         'Initial joint positions [rad or m] in joints order; empty: the middle of the limits.'),
    Spec('initial_velocities', DOUBLE_ARRAY,
         'Initial joint velocities [rad/s or m/s] in joints order; empty: zero.'),
    Spec('command_timeout', 0.1,
         'Zero effort (or hold, for position and velocity) after this long without a valid '
         'command [s, wall clock]; 0: never.', read_only=False, bounds=(0.0, 3600.0)),
    Spec('brake_until_command', True,
         'Hold the arm at its initial state until the first valid command, as brakes would, '
         'so that it does not fall before a controller takes over.'),
    Spec('realtime', True, 'Pace steps on the wall clock; false: as fast as possible, with '
                           '/clock.'),
    Spec('clock_rate_hz', 100.0, 'Rate of /clock when it is published [Hz of simulated time]; '
                                 'each node on simulated time takes every /clock message in its '
                                 'executor.', bounds=(1.0, 100000.0)),
    Spec('lockstep', False, 'Wait for the command that answers each published state before '
                            'stepping (deterministic; simulated time, with /clock).'),
    Spec('lockstep_timeout', 1.0, 'Lockstep: wall time to wait for a command before stepping '
                                  'with the last one (counted as an unanswered state; time in '
                                  'which this process did not run does not count) [s].',
         bounds=(0.001, 3600.0)),
    Spec('friction', True, "Apply the URDF's joint damping and friction."),
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
) + COMMAND_PARAMETERS + CHAIN_PARAMETERS

#: Longest wait of ~/reset for the stepping thread [s].
RESET_TIMEOUT = 5.0
#: A step this late [s] says that the process stalled (logged, at most every STALL_LOG_PERIOD s).
STALL = 0.05
STALL_LOG_PERIOD = 5.0
#: Steps whose start lateness is kept for the jitter percentile of ~/status.
JITTER_WINDOW = 4096
#: Lockstep: longest single wait [s] for a command, between looks at the stop flag.
WAIT_SLICE = 0.1


class SimulatorNode(Node):
    """Integrate the arm under the received commands and publish its joint states."""

    def __init__(self, **kwargs):
        super().__init__('simulator', **kwargs)
        self.throttle = Throttle()
        self.params = declare(self, PARAMETERS)
        self.plant = None
        self._thread = None
        self._stop = threading.Event()
        self.description = ModelSubscription(self, 'robot_description',
                                             chain_options(self.params), self.on_model)

    def on_model(self, model):
        """Build the plant, then the topics, the service and the stepping thread."""
        p = self.params
        self.joints = JointMap(model, p.joints or model.joint_names)
        model = self._plant_model(model)
        self.plant = Plant(model, 1.0 / p.rate_hz, interface=p.command_interface,
                           friction=p.friction, q0=self._initial(p.initial_positions),
                           qd0=self._initial(p.initial_velocities))
        self.initial = (self.plant.q.copy(), self.plant.qd.copy())
        model.warm_up()
        self._command = None          # (command in model order, monotonic time received)
        self._timed_out = True
        self._reset_requested = None   # an Event while a ~/reset call waits
        self.late_steps = 0
        self.rejected_commands = 0
        self.unanswered_states = 0
        self.steps = 0
        # simulated time [ns]: whole steps, so that stamps are exact
        self._step_ns = round(_NS / p.rate_hz)
        self._simulated_ns = 0
        self._clock_every_ns = round(_NS / p.clock_rate_hz)
        self._next_clock_ns = 0
        self._lateness = np.zeros(JITTER_WINDOW)
        self._status_mark = (time.monotonic(), 0.0)
        # the loop's messages raw: states written and commands read straight from arrays
        self._writer = JointStateWriter(self.joints.names)
        simulated = p.lockstep or not p.realtime
        self.state_publisher = self.create_publisher(JointState, 'joint_states',
                                                     LOCKSTEP_WRITER if simulated else 10)
        self.status_publisher = self.create_publisher(SimulatorStatus, '~/status', 10)
        self.clock_publisher = self.create_publisher(Clock, '/clock', 10) if simulated else None
        # read by the stepping thread at each step: a command costs no pass of the executor
        self.commands = self.create_subscription(
            Float64MultiArray, command_topic(p), lambda msg: None,
            LOCKSTEP_ALL if p.lockstep else NEWEST_ONLY, callback_group=OnDemand(), raw=True)
        self._waiter = Waiter(self, self.commands) if p.lockstep else None
        self._waited = AwakeTime(WAIT_SLICE)     # lockstep: how long this state waited
        self._answering = False       # lockstep: a controller answers the states
        self._first_state_ns = None   # lockstep: system time of the first state published
        self.create_service(Trigger, '~/reset', self.reset_callback)
        self._thread = threading.Thread(target=self._run, name='simulator_steps', daemon=True)
        self._thread.start()
        self.get_logger().info(
            f'simulating {model.name!r} ({p.command_interface} commands on {command_topic(p)}, '
            f'joints {self.joints.names}) at {p.rate_hz:g} Hz, '
            f'{"real time" if p.realtime else "as fast as possible"}'
            f'{", in lockstep with the controller" if p.lockstep else ""}'
            f'{", publishing /clock" if self.clock_publisher else ""}')

    def _plant_model(self, described):
        """Return the simulated arm: the described one, or plant_urdf_file's, with the payload."""
        p = self.params
        plant = described
        if p.plant_urdf_file:
            plant = RobotModel.from_urdf(p.plant_urdf_file, **chain_options(p))
            if list(plant.joint_names) != list(described.joint_names):
                raise InputError(f'plant_urdf_file {p.plant_urdf_file!r}: its chain has the '
                                 f'joints {list(plant.joint_names)}, the robot description '
                                 f'{list(described.joint_names)}')
        if p.payload_mass > 0.0:
            plant = with_payload(plant, p.payload_mass, p.payload_com or (0.0, 0.0, 0.0),
                                 p.payload_inertia or None)
        if plant is not described:
            self.get_logger().info(
                'simulating an arm that differs from the robot description: '
                + ', '.join(filter(None, (
                    f'{p.plant_urdf_file}' if p.plant_urdf_file else '',
                    f'a payload of {p.payload_mass:g} kg at the tip' if p.payload_mass else ''))))
        return plant

    def _initial(self, values):
        """Return initial values given in the ``joints`` order, in model order (or None)."""
        if not values:
            return None
        return self.joints.names_to_model(joint_values(values, self.joints.names,
                                                       'initial values'))

    # ---- inputs ---------------------------------------------------------------------------------

    def take_command(self, data):
        """
        Accept a command (CDR) of one finite value per joint; reject anything else, and keep on.

        Returns whether it was accepted.
        """
        try:
            values = joint_values(read_float64_array(data), self.joints.names, 'command')
        except InputError as exc:
            self.rejected_commands += 1
            if self.throttle('command', 1.0):
                self.get_logger().warning(f'rejected command ({self.rejected_commands} so far): '
                                          f'{exc}; keeping the last good one')
            return False
        self._command = (self.joints.names_to_model(values), time.monotonic())
        self._answering = True
        return True

    def reset_callback(self, request, response):
        """Have the stepping thread restore the initial state; reply with its stamp."""
        done = threading.Event()
        self._reset_requested = done
        response.success = done.wait(RESET_TIMEOUT)
        if response.success:
            sec, nanosec = divmod(done.stamp, _NS)
            response.message = (f'initial state restored; its joint_states stamp is '
                                f'{sec}.{nanosec:09d} s')
        else:
            response.message = f'the stepping thread did not answer within {RESET_TIMEOUT} s'
        return response

    def _current_command(self, now):
        """
        Return the command in force.

        The last good one, the idle one after the timeout, or ``None`` (brakes on) before the
        first one with ``brake_until_command``.
        """
        held = self._command
        if held is None and self.params.brake_until_command:
            return None
        timeout = self.get_parameter('command_timeout').value
        timed_out = held is None or (timeout > 0.0 and now - held[1] > timeout)
        if timed_out != self._timed_out:
            self._timed_out = timed_out
            if timed_out:
                self.get_logger().warning(f'no valid command for {timeout:g} s: '
                                          f'{self.plant.interface.value} commands stop')
            else:
                self.get_logger().info('commands arrive: applying them')
        return self.plant.idle_command() if timed_out else held[0]

    # ---- stepping -------------------------------------------------------------------------------

    def _run(self):
        try:
            self._steps()
        except RCLError:
            if self.context.ok():
                raise
            # the context was shut down (SIGINT) while a step was publishing: a normal stop

    def _steps(self):
        p, plant = self.params, self.plant
        publish_every = 1 if p.publish_rate_hz == 0.0 else max(1, round(p.rate_hz /
                                                                        p.publish_rate_hz))
        status_every = max(1, round(p.rate_hz / p.status_rate_hz))
        dt = plant.dt
        start = time.monotonic()
        start_ns = self.get_clock().now().nanoseconds
        due_steps = 0               # steps due since start (real time)
        stamp_ns = None             # the wall clock's stamp of the step (real time)
        while not self._stop.is_set() and self.context.ok():
            now = time.monotonic()
            if p.realtime:
                due = start + due_steps * dt
                if now < due:
                    if self._stop.wait(due - now):
                        break
                    now = time.monotonic()
                lateness = now - due
                if p.lockstep:
                    # waiting for the controller is the point: simulated time falls behind
                    start += max(0.0, lateness)
                    lateness = 0.0
                stamp_ns = start_ns + round(due_steps * 1e9 / p.rate_hz)
                if lateness > dt:
                    self.late_steps += 1
                    if lateness > STALL and self.throttle('stall', STALL_LOG_PERIOD):
                        self.get_logger().warning(
                            f'step {due_steps} started {lateness * 1e3:.0f} ms late: this '
                            'process did not run (a loaded host); the steps due since run at '
                            'once, so joint states come in a burst')
                self._lateness[self.steps % JITTER_WINDOW] = lateness
                due_steps += 1
            reset = self._reset_requested
            if reset is not None:
                self._reset_requested = None
                plant.reset(*self.initial)
            published = reset is not None or self.steps % publish_every == 0
            if p.lockstep and self._first_state_ns is None:
                # before the first state goes out: an answer to it is never older than this
                self._first_state_ns = time.time_ns()
            if published:
                stamp = self._publish_state(stamp_ns)
            if reset is not None:
                reset.stamp = stamp
                reset.set()
            if p.lockstep:
                self._lockstep_command(published)
            else:
                msg = take_next(self.commands)
                if msg is not None:
                    self.take_command(msg)
            command = self._current_command(now)
            contacts = (plant.at_lower, plant.at_upper)     # a step replaces these arrays
            try:
                plant.step(command)
            except RobotDynamicsError as exc:
                self.get_logger().fatal(f'the simulation failed at t = {plant.t:.6f} s: {exc}; '
                                        'call ~/reset to start again')
                self._wait_for_reset()
                continue
            self.steps += 1
            self._simulated_ns += self._step_ns
            if self.steps % status_every == 0 or not (
                    np.array_equal(contacts[0], plant.at_lower)
                    and np.array_equal(contacts[1], plant.at_upper)):
                self._publish_status()

    def _lockstep_command(self, published):
        """
        Take the command that answers the state just published, waiting for it.

        Before any command (the arm braked), wait as long as it takes: a controller may start
        later. Otherwise wait up to ``lockstep_timeout``; then count the state as unanswered and
        wait no more until commands come again.
        """
        first = self._command is None and self.params.brake_until_command
        if not (published and (first or self._answering)):
            self._take_answer(0.0)
            return
        timeout = math.inf if first else self.params.lockstep_timeout
        self._waited.restart()
        while not self._stop.is_set():
            # what came while this process did not run is taken before the time-out counts
            if self._take_answer(min(timeout - self._waited.elapsed, WAIT_SLICE)):
                return
            if self._waited.look() >= timeout:
                self.unanswered_states += 1
                self._answering = False
                if self.throttle('unanswered', STALL_LOG_PERIOD):
                    self.get_logger().warning(
                        f'lockstep: no command answered the state of t = '
                        f'{self._simulated_ns / _NS:.3f} s within '
                        f'{self.params.lockstep_timeout:g} s ({self.unanswered_states} so far): '
                        'stepping with the last command, and without waiting until commands '
                        'come again')
                return

    def _take_answer(self, timeout):
        """Take the commands that came, waiting up to ``timeout`` [s]; return whether one did."""
        taken = self._waiter.wait(timeout, with_info=True)
        answered = False
        while taken is not None:
            msg, info = taken
            # one published before this simulator's first state was kept for late subscribers
            # by a controller that ran before: it answers nothing here
            if info['source_timestamp'] >= self._first_state_ns:
                answered = self.take_command(msg) or answered
            taken = take_next(self.commands, with_info=True)
        return answered

    def _wait_for_reset(self):
        while not (self._reset_requested or self._stop.wait(0.01)):
            pass

    def _stamp(self, stamp_ns):
        """Return the stamp [ns] of the state now: wall time, or simulated time (and /clock)."""
        if self.clock_publisher is None:
            return stamp_ns
        if self._simulated_ns >= self._next_clock_ns:
            self.clock_publisher.publish(Clock(clock=time_msg(self._simulated_ns)))
            self._next_clock_ns = self._simulated_ns + self._clock_every_ns
        return self._simulated_ns

    def _publish_state(self, stamp_ns):
        """Publish the arm's joint state; return its stamp [ns]."""
        plant, to_names = self.plant, self.joints.model_to_names
        stamp_ns = self._stamp(stamp_ns)
        # what drives report as effort: the effort of the step that brought the arm here
        self.state_publisher.publish(self._writer.write(
            stamp_ns, to_names(plant.q), to_names(plant.qd), to_names(plant.effort)))
        return stamp_ns

    def _publish_status(self):
        """Publish ~/status: contacts, counters, real-time factor since the last status."""
        plant = self.plant
        now = time.monotonic()
        wall0, sim0 = self._status_mark
        self._status_mark = (now, plant.t)
        msg = SimulatorStatus(joint_names=self.joints.names, lockstep=self.params.lockstep,
                              unanswered_states=self.unanswered_states)
        msg.header.stamp = self.get_clock().now().to_msg() if self.clock_publisher is None \
            else time_msg(self._simulated_ns)
        msg.at_lower_limit = self.joints.model_to_names(plant.at_lower).tolist()
        msg.at_upper_limit = self.joints.model_to_names(plant.at_upper).tolist()
        msg.command_timed_out = bool(self._timed_out)
        msg.command_interface = plant.interface.value
        msg.steps = self.steps
        msg.late_steps = self.late_steps
        msg.rejected_commands = self.rejected_commands
        msg.simulated_time = plant.t
        msg.real_time_factor = (plant.t - sim0) / (now - wall0) if now > wall0 else 0.0
        # steps as fast as possible are never late (and their window stays zero)
        window = self._lateness[:min(self.steps, JITTER_WINDOW)] if self.params.realtime else ()
        msg.step_lateness_p99 = float(np.percentile(window, 99)) if len(window) else 0.0
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
