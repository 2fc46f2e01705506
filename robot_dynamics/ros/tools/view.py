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
``robot-dynamics view``: the running graph in the browser (a :class:`~.viewer.ArmView`).

A node of its own process, ``view``, that reads at its own rate (:data:`RATE_HZ`): the newest
``/joint_states``, controller state and simulator status are taken when it draws (never queued
behind the control loop), so the loop's figures do not change with the view open. It draws the
arm of ``/robot_description`` (a new description redraws), the controller's reference as a
ghost arm, the tip's path, the waypoints of goals sent on ``/controller/joint_trajectory`` or
from the page, and a panel: the controller's mode, tracking error, rate, missed cycles, the
simulator's real-time factor and limit contacts (or that a node is silent).

What the page does goes to the graph: the tip handle to ``/controller/target_pose``
(PoseStamped, base frame) when the controller subscribes to it, else IK through
``/compute_ik`` and a joint goal; a joint slider to a joint goal (the controller's
``follow_joint_trajectory`` action, at up to half the joints' velocity limits); the push tool
to ``/simulator/external_wrench`` (at the tip); the buttons cancel every goal and reset the
simulator. What the page sends is checked by the :class:`~.viewer.ArmView` first (the page's
Origin, the push's bound, the sliders' values; a push released when its page goes), and what it
refuses is one throttled warning here.
"""

import argparse
import sys
import threading
import time

from action_msgs.srv import CancelGoal
from control_msgs.action import FollowJointTrajectory
from geometry_msgs.msg import PoseStamped, WrenchStamped
import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from robot_dynamics_interfaces.msg import CartesianState, ControllerState, SimulatorStatus
from robot_dynamics_interfaces.srv import SolveIK
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..nodes.runner import answer_where, bound_the_exit, teardown
from ..nodes.throttle import Throttle
from ..wire import middleware
from ..wire.compat import ActionClient
from ..wire.conversions import duration_msg, pose_stamped, xyz
from ..wire.on_demand import OnDemand, take_next
from ..wire.qos import DESCRIPTION_QOS, NEWEST_ONLY, SERVICE_CLIENT
from ...errors import InputError, ModelError, RobotDynamicsError
from ...viewer import ArmView

#: The view's drawing rate [Hz].
RATE_HZ = 30.0
#: A stream silent for this long is shown as such [s].
SILENT = 1.0
#: Joint goals from the page move at most at this fraction of the velocity limits.
GOAL_SPEED = 0.5
#: Shortest joint goal from the page [s].
MIN_GOAL_TIME = 1.0
TARGET_TOPIC = 'controller/target_pose'
#: The line the view's process prints each time a page connects (``demo --wait-for-view``).
PAGE_OPEN = 'view: a page is open'


def tracking_error_line(control, tip):
    """Return the panel's tracking error: the joints', else the tip's (task space), else none."""
    if len(control.error.positions):
        return f'tracking error (max |e|): {np.max(np.abs(control.error.positions)):.2e}'
    if tip is None:
        return 'tracking error: no reference'
    rotation = tip.error.pose.orientation
    angle = 2.0 * np.arctan2(np.linalg.norm(xyz(rotation)), abs(rotation.w))
    return (f'tracking error (tip): {np.linalg.norm(xyz(tip.error.pose.position)):.2e} m, '
            f'{angle:.2e} rad')


class ViewNode(Node):
    """The ROS 2 side of the view: subscriptions read at :data:`RATE_HZ`, page actions sent."""

    def __init__(self, view, namespace=''):
        # the names are relative: in ``namespace`` (``graph.namespace``), the arm's
        super().__init__('view', namespace=namespace or None)
        self.view = view
        newest = OnDemand()
        self._states = self.create_subscription(JointState, 'joint_states', lambda m: None,
                                                NEWEST_ONLY, callback_group=newest)
        self._controller = self.create_subscription(
            ControllerState, 'controller/state', lambda m: None, NEWEST_ONLY,
            callback_group=newest)
        self._cartesian = self.create_subscription(
            CartesianState, 'controller/cartesian_state', lambda m: None, NEWEST_ONLY,
            callback_group=newest)
        self._status = self.create_subscription(SimulatorStatus, 'simulator/status',
                                                lambda m: None, NEWEST_ONLY,
                                                callback_group=newest)
        self.create_subscription(String, 'robot_description', self.description_callback,
                                 DESCRIPTION_QOS)
        self.create_subscription(JointTrajectory, 'controller/joint_trajectory',
                                 self.trajectory_callback, 10)
        self._target = self.create_publisher(PoseStamped, TARGET_TOPIC, 10)
        self._wrench = self.create_publisher(WrenchStamped, 'simulator/external_wrench', 10)
        self._ik = self.create_client(SolveIK, 'compute_ik', qos_profile=SERVICE_CLIENT)
        self._reset = self.create_client(Trigger, 'simulator/reset', qos_profile=SERVICE_CLIENT)
        self._cancel = self.create_client(
            CancelGoal, 'controller/follow_joint_trajectory/_action/cancel_goal',
            qos_profile=SERVICE_CLIENT)
        self._action = ActionClient(self, FollowJointTrajectory,
                                    'controller/follow_joint_trajectory')
        self._seen = {'state': None, 'controller': None, 'status': None, 'cartesian': None}
        self._last = {'controller': None, 'status': None, 'cartesian': None}
        self._rate_sample = self._rate_value = None   # (stamp, cycles) and the control rate
        view.on_target, view.on_joint_goal = self.send_target, self.send_joint_goal
        view.on_push, view.on_cancel, view.on_reset = self.send_push, self.cancel, self.reset
        throttle = Throttle()
        view.on_notice = lambda key, line: throttle.warn(self.get_logger(), key, line)
        self.create_timer(1.0 / RATE_HZ, self.draw_callback)   # seconds

    # ---- from the graph -------------------------------------------------------------------------

    def description_callback(self, msg):
        try:
            model = self.view.set_robot(msg.data)
        except (RobotDynamicsError, ValueError) as exc:
            self.get_logger().error(f'robot description not drawn: {exc}')
            self.view.set_status([f'robot description not usable: {exc}'])
            return
        self.get_logger().info(f'drawing {model.name!r} ({model.dof} joints)')

    def trajectory_callback(self, msg):
        self._show_goal(msg)

    def _show_goal(self, trajectory):
        model = self.view.model
        if model is None:
            return
        try:
            index = model.joint_indices(list(trajectory.joint_names))
        except (RobotDynamicsError, ValueError):
            return
        q = np.array(self.view.q if self.view.q is not None else np.zeros(model.dof))
        points = []
        for p in trajectory.points:
            q = q.copy()
            q[index] = p.positions
            points.append(q)
        self.view.show_waypoints(np.array(points).reshape(-1, model.dof))

    def draw_callback(self):
        model = self.view.model
        now = time.monotonic()
        state = take_next(self._states)
        if state is not None and model is not None:
            q = self._positions(model, state)
            if q is not None:
                self.view.show(q, state.header.stamp.sec + 1e-9 * state.header.stamp.nanosec)
                self._seen['state'] = now
        for key, sub in (('controller', self._controller), ('status', self._status),
                         ('cartesian', self._cartesian)):
            msg = take_next(sub)
            if msg is not None:
                self._last[key], self._seen[key] = msg, now
        control = self._last['controller']
        if control is not None and model is not None:
            if len(control.reference.positions):
                q = self._positions(model, control, control.reference.positions)
                if q is not None:
                    self.view.show_reference(q)
                    self.view.show_tip_reference(None)
            else:
                # task space: the reference is the tip's, no joint ghost
                tip = self._tip_state(now)
                self.view.show_reference(None)
                self.view.show_tip_reference(
                    None if tip is None else xyz(tip.reference.pose.position))
        if model is not None:
            self.view.set_status(self._panel(now))

    def _tip_state(self, now):
        """Return the newest CartesianState if it is current, else None."""
        seen = self._seen['cartesian']
        return self._last['cartesian'] if seen is not None and now - seen <= SILENT else None

    def _positions(self, model, msg, values=None):
        """Return the model's joints from ``msg`` (``name`` or ``joint_names``), or None."""
        names = list(getattr(msg, 'name', None) or msg.joint_names)
        values = msg.position if values is None else values
        try:
            index = model.indices_in(names)
        except InputError:
            return None     # not this arm's joints: the drawing stays
        if len(values) != len(names):
            return None
        q = np.asarray(values, dtype=float)[index]
        return q if np.all(np.isfinite(q)) else None

    def _panel(self, now):
        def silent(key):
            return self._seen[key] is None or now - self._seen[key] > SILENT

        lines = ['joint states: **none**' if silent('state') else '']
        c, s = self._last['controller'], self._last['status']
        if c is None or silent('controller'):
            lines.append('controller: **silent**')
        else:
            tip = None if len(c.reference.positions) else self._tip_state(now)
            space = ' (task space)' if tip is not None else ''
            lines.append(f'controller: **{c.mode}**{space}'
                         f'{" (SAFE MODE)" if c.mode == "safe" else ""}, {c.control_law}')
            lines.append(tracking_error_line(c, tip))
            lines.append(f'cycles {c.cycles}, missed {c.missed_cycles}')
            rate = self._rate(c)
            if rate is not None:
                lines.append(f'control rate: {rate:.0f} Hz')
        if s is None or silent('status'):
            lines.append('simulator: **silent** (dead or not started)')
        else:
            contacts = [f'{n} {side}' for n, lo, hi in zip(s.joint_names, s.at_lower_limit,
                                                           s.at_upper_limit)
                        for side, on in (('lower', lo), ('upper', hi)) if on]
            lines.append(f'simulator: real-time factor {s.real_time_factor:.2f}, '
                         f'late steps {s.late_steps}')
            lines.append('limit contacts: ' + (', '.join(contacts) if contacts else 'none'))
        return [line for line in lines if line]

    def _rate(self, c):
        """Return the control rate [Hz] over the last panel updates, from the cycle counts."""
        t = c.header.stamp.sec + 1e-9 * c.header.stamp.nanosec
        previous = self._rate_sample
        self._rate_sample = (t, c.cycles) if previous is None or t - previous[0] > 1.0 \
            else previous
        if previous is None or t <= previous[0] or c.cycles < previous[1]:
            return self._rate_value      # a restarted controller: wait
        self._rate_value = (c.cycles - previous[1]) / (t - previous[0])
        return self._rate_value

    # ---- to the graph ---------------------------------------------------------------------------

    def send_target(self, T):
        """Send the tip pose ``T`` (4, 4, base frame): target_pose, else IK and a joint goal."""
        model = self.view.model
        msg = pose_stamped(T, model.base_link, self.get_clock().now().to_msg())
        x, y, z = T[:3, 3]
        self.get_logger().info(f'tip target ({x:.5f}, {y:.5f}, {z:.5f}) m from the page')
        if self._target.get_subscription_count() > 0:
            self._target.publish(msg)
            return
        request = SolveIK.Request()
        request.pose_stamped = msg
        request.ik_link_name = model.tip_link
        request.position_only = True       # the handle moves the tip; an arm of fewer than six
        # joints cannot keep its orientation everywhere
        if self.view.q is not None:
            request.robot_state.name = list(model.joint_names)
            request.robot_state.position = [float(v) for v in self.view.q]
        if not self._ik.service_is_ready():
            self.get_logger().warning('tip target not sent: no /controller/target_pose '
                                      'subscriber and no /compute_ik service')
            return
        future = self._ik.call_async(request)
        future.add_done_callback(self._ik_done)

    def _ik_done(self, future):
        response = future.result()
        if response is None or not response.success:
            msg = 'no answer' if response is None else response.message
            self.get_logger().warning(f'tip target not reachable: {msg}')
            return
        model = self.view.model
        q = self._positions(model, response.solution)
        if q is not None:
            self.send_joint_goal(q)

    def send_joint_goal(self, q):
        """Send a joint goal to ``q`` (n,) through the action, at GOAL_SPEED of the limits."""
        model = self.view.model
        start = self.view.q if self.view.q is not None else q
        speed = GOAL_SPEED * model.velocity_limit
        duration = max(MIN_GOAL_TIME, float(np.max(np.abs(q - start) / speed)))
        trajectory = JointTrajectory()
        trajectory.joint_names = list(model.joint_names)
        point = JointTrajectoryPoint()
        point.positions = [float(v) for v in q]
        point.time_from_start = duration_msg(duration)
        trajectory.points = [point]
        goal = FollowJointTrajectory.Goal()
        goal.trajectory = trajectory
        if not self._action.server_is_ready():
            self.get_logger().warning('joint goal not sent: no follow_joint_trajectory server')
            return
        self._action.send_goal_async(goal)
        self._show_goal(trajectory)

    def send_push(self, force):
        """Apply ``force`` (3,) [N, base axes] at the tip; zero removes the push."""
        msg = WrenchStamped()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = map(float, force)
        self._wrench.publish(msg)

    def cancel(self):
        """Cancel every goal of the controller (a zero goal id and stamp: all)."""
        if self._cancel.service_is_ready():
            self._cancel.call_async(CancelGoal.Request())

    def reset(self):
        """Reset the simulator."""
        if self._reset.service_is_ready():
            self._reset.call_async(Trigger.Request())


def run(host='127.0.0.1', port=8080, out=sys.stdout, args=None, stop=None, namespace=''):
    """
    Serve the view of the arm in ``namespace`` until SIGINT/SIGTERM (or ``stop``); return 0.

    Called in a process's main thread, it is that process's view: SIGUSR1 prints every thread's
    stack, and the process ends within ``TEARDOWN_BOUND`` of the stop (status 1 past it).
    """
    import signal
    view = ArmView(host, port, title='robot_dynamics: live')
    stop = stop or threading.Event()
    own_process = threading.current_thread() is threading.main_thread()
    if own_process:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda signum, frame: stop.set())
        answer_where()
    view.on_page = lambda: print(PAGE_OPEN, file=out, flush=True)
    print(f'view: {view.url}', file=out, flush=True)
    middleware.init(args=args)
    node = None
    try:
        node = ViewNode(view, namespace)
        # one thread: every callback has ended when the loop does (a pool's could still be
        # running as the node goes, and end in rclpy's "cannot use Destroyable")
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        while not stop.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
    finally:
        teardown(node)
        if own_process:
            # the web server's threads are joined as the interpreter exits: a process that was
            # told to stop once did not end in 20 s (a busy host, a page still connected)
            bound_the_exit()
        view.close()
    return 0


def main(argv=None):
    """Entry point of ``python -m robot_dynamics.ros.tools.view`` (bringup and demo use it)."""
    parser = argparse.ArgumentParser(prog='robot-dynamics view')
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, default=8080)
    parser.add_argument('--namespace', default='')
    args = parser.parse_args(argv)
    try:
        return run(args.host, args.port, namespace=args.namespace)
    except (RobotDynamicsError, ModelError) as exc:
        print(f'robot-dynamics view: error: {exc}', file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
