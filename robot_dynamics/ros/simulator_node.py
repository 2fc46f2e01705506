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
- State: ``joint_states`` (position, velocity, effort applied over the next step, stamped) every
  ``1 / publish_rate_hz``; ``~/status`` (SimulatorStatus: limit contacts, late steps, rejected
  commands, real-time factor) at ``status_rate_hz`` and whenever a contact changes.
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
possible, stamps are simulated time and ``/clock`` is published, for tests and batch runs (other
nodes then run with ``use_sim_time``).
"""

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

from .compat import RCLError
from .conversions import joint_values, time_msg
from .description import chain_options, CHAIN_PARAMETERS, ModelSubscription
from .on_demand import OnDemand, take_newest
from .parameters import (COMMAND_PARAMETERS, command_topic, declare, DOUBLE_ARRAY,
                         NEWEST_ONLY, Spec, STRING_ARRAY)
from .runner import run_node
from .throttle import Throttle
from ..errors import InputError, RobotDynamicsError
from ..plant import Interface, Plant

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
    Spec('friction', True, "Apply the URDF's joint damping and friction."),
) + COMMAND_PARAMETERS + CHAIN_PARAMETERS

#: Longest wait of ~/reset for the stepping thread [s].
RESET_TIMEOUT = 5.0
#: A step this late [s] says that the process stalled (logged, at most every STALL_LOG_PERIOD s).
STALL = 0.05
STALL_LOG_PERIOD = 5.0
#: Steps whose start lateness is kept for the jitter percentile of ~/status.
JITTER_WINDOW = 4096


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
        self.joints = p.joints or list(model.joint_names)
        self.to_model = model.joint_indices(self.joints)
        self.plant = Plant(model, 1.0 / p.rate_hz, interface=p.command_interface,
                           friction=p.friction, q0=self._in_model_order(p.initial_positions),
                           qd0=self._in_model_order(p.initial_velocities))
        self.initial = (self.plant.q.copy(), self.plant.qd.copy())
        model.warm_up()
        self._command = None          # (command in model order, monotonic time received)
        self._timed_out = True
        self._reset_requested = None   # an Event while a ~/reset call waits
        self.late_steps = 0
        self.rejected_commands = 0
        self.steps = 0
        self._lateness = np.zeros(JITTER_WINDOW)
        self._status_mark = (time.monotonic(), 0.0)
        # one message, refilled for every publication (rclpy converts it when publishing)
        self._state_msg = JointState(name=self.joints)
        self.state_publisher = self.create_publisher(JointState, 'joint_states', 10)
        self.status_publisher = self.create_publisher(SimulatorStatus, '~/status', 10)
        self.clock_publisher = (None if p.realtime else
                                self.create_publisher(Clock, '/clock', 10))
        # read by the stepping thread at each step: a command costs no pass of the executor
        self.commands = self.create_subscription(Float64MultiArray, command_topic(p),
                                                 lambda msg: None, NEWEST_ONLY,
                                                 callback_group=OnDemand())
        self.create_service(Trigger, '~/reset', self.reset_callback)
        self._thread = threading.Thread(target=self._run, name='simulator_steps', daemon=True)
        self._thread.start()
        self.get_logger().info(
            f'simulating {model.name!r} ({p.command_interface} commands on {command_topic(p)}, '
            f'joints {self.joints}) at {p.rate_hz:g} Hz, '
            f'{"real time" if p.realtime else "as fast as possible, publishing /clock"}')

    def _in_model_order(self, values):
        if not values:
            return None
        arr = joint_values(values, self.joints, 'initial values')
        out = np.empty(len(self.joints))
        out[self.to_model] = arr
        return out

    # ---- inputs ---------------------------------------------------------------------------------

    def take_command(self, msg):
        """Accept a command of one finite value per joint; reject anything else, and keep on."""
        try:
            values = joint_values(msg.data, self.joints, 'command')
        except InputError as exc:
            self.rejected_commands += 1
            if self.throttle('command', 1.0):
                self.get_logger().warning(f'rejected command ({self.rejected_commands} so far): '
                                          f'{exc}; keeping the last good one')
            return
        command = np.empty(len(values))
        command[self.to_model] = values
        self._command = (command, time.monotonic())

    def reset_callback(self, request, response):
        """Have the stepping thread restore the initial state; reply with its stamp."""
        done = threading.Event()
        self._reset_requested = done
        response.success = done.wait(RESET_TIMEOUT)
        if response.success:
            response.message = (f'initial state restored; its joint_states stamp is '
                                f'{done.stamp.sec}.{done.stamp.nanosec:09d} s')
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
        stamp_ns = None             # simulated time (not realtime)
        while not self._stop.is_set() and self.context.ok():
            now = time.monotonic()
            if p.realtime:
                due = start + due_steps * dt
                if now < due:
                    if self._stop.wait(due - now):
                        break
                    now = time.monotonic()
                lateness = now - due
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
            msg = take_newest(self.commands)
            if msg is not None:
                self.take_command(msg)
            command = self._current_command(now)
            if reset or self.steps % publish_every == 0:
                stamp = self._publish_state(command, stamp_ns)
            if reset is not None:
                reset.stamp = stamp
                reset.set()
            contacts = (plant.at_lower, plant.at_upper)     # a step replaces these arrays
            try:
                plant.step(command)
            except RobotDynamicsError as exc:
                self.get_logger().fatal(f'the simulation failed at t = {plant.t:.6f} s: {exc}; '
                                        'call ~/reset to start again')
                self._wait_for_reset()
                continue
            self.steps += 1
            if self.steps % status_every == 0 or not (
                    np.array_equal(contacts[0], plant.at_lower)
                    and np.array_equal(contacts[1], plant.at_upper)):
                self._publish_status()

    def _wait_for_reset(self):
        while not (self._reset_requested or self._stop.wait(0.01)):
            pass

    def _stamp(self, stamp_ns):
        if self.clock_publisher is None:
            return time_msg(stamp_ns)
        stamp = time_msg(int(round(self.plant.t * 1e9)))
        self.clock_publisher.publish(Clock(clock=stamp))
        return stamp

    def _publish_state(self, command, stamp_ns):
        plant, msg = self.plant, self._state_msg
        msg.header.stamp = self._stamp(stamp_ns)
        msg.position = plant.q[self.to_model].tolist()
        msg.velocity = plant.qd[self.to_model].tolist()
        if command is None:
            applied = np.zeros(plant.model.dof)        # braked
        elif plant.interface is Interface.EFFORT:
            applied = np.clip(command, -plant.model.effort_limit, plant.model.effort_limit)
        else:
            applied = plant.effort
        msg.effort = applied[self.to_model].tolist()
        self.state_publisher.publish(msg)
        return msg.header.stamp

    def _publish_status(self):
        """Publish ~/status: contacts, counters, real-time factor since the last status."""
        plant = self.plant
        now = time.monotonic()
        wall0, sim0 = self._status_mark
        self._status_mark = (now, plant.t)
        msg = SimulatorStatus(joint_names=self.joints)
        msg.header.stamp = self.get_clock().now().to_msg() if self.clock_publisher is None \
            else time_msg(int(round(plant.t * 1e9)))
        msg.at_lower_limit = plant.at_lower[self.to_model].tolist()
        msg.at_upper_limit = plant.at_upper[self.to_model].tolist()
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
