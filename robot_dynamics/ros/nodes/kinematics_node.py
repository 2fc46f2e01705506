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
The kinematics node: inverse and forward kinematics as services, and the arm for viewers.

- ``~/solve_ik`` (SolveIK) and ``~/solve_fk`` (SolveFK), reachable as ``compute_ik`` and
  ``compute_fk`` in the arm's namespace (``/compute_ik`` in the root) through the remappings of
  the launch files and ``robot-dynamics bringup``.
  A malformed request gets ``success = false``, an error code and a message naming the problem;
  nothing a client sends stops the node.
- ``~/tip_pose`` (PoseStamped) and ``~/markers`` (MarkerArray: links as a line strip through the
  joints, joints as cylinders along their axes, the tip frame as three arrows) at
  ``publish_rate_hz`` from the latest ``joint_states``, for RViz or Foxglove.

The model comes from ``robot_description``; IK seeds default to the latest ``joint_states``.
``/diagnostics`` (:mod:`~robot_dynamics.ros.nodes.diagnostics`): the IK calls and failures.
"""

import sys

from geometry_msgs.msg import Point, PoseStamped
import numpy as np
from rclpy.node import Node
from rclpy.serialization import serialize_message
from robot_dynamics_interfaces.srv import SolveFK, SolveIK
from sensor_msgs.msg import JointState
from visualization_msgs.msg import Marker, MarkerArray

from .description import chain_options, CHAIN_PARAMETERS, ModelSubscription
from .diagnostics import Diagnostics, KINEMATICS_PARAMETERS, thresholds
from .parameters import declare, Spec
from .runner import run_node
from .throttle import Throttle
from ..wire.cdr import JointStateReader
from ..wire.conversions import (check_frame, joint_state, joint_values, matrix_to_pose,
                                pose_stamped, pose_to_matrix, to_seconds)
from ..wire.on_demand import OnDemand, take_next
from ...diagnostics import kinematics_status, KinematicsFigures, KinematicsThresholds
from ...errors import InputError
from ...ik import closed_form, default_seed
from ...spatial import axis_angle_to_matrix

PARAMETERS = (
    Spec('publish_rate_hz', 10.0, 'Rate of ~/tip_pose and ~/markers [Hz]; 0 disables them.',
         bounds=(0.0, 1000.0)),
    Spec('marker_scale', 0.02, 'Diameter of the drawn links and joints [m].', read_only=False,
         bounds=(1e-4, 10.0)),
) + CHAIN_PARAMETERS + KINEMATICS_PARAMETERS

POSITION_ONLY = (1.0, 1.0, 1.0, 0.0, 0.0, 0.0)


class RequestError(InputError):
    """A malformed request, with the error code its response carries."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class KinematicsNode(Node):
    """Serve ``~/solve_ik`` and ``~/solve_fk``; publish the tip pose and markers."""

    def __init__(self, **kwargs):
        super().__init__('kinematics', **kwargs)
        self.throttle = Throttle()
        self.params = declare(self, PARAMETERS)
        self.model = None
        self.joint_state = None          # positions (n,) of the latest usable joint state
        self.ik_calls = self.ik_failures = 0
        limits = thresholds(self.params, KinematicsThresholds)
        self.diagnostics = Diagnostics(
            self,
            lambda: KinematicsFigures(self.ik_calls, self.ik_failures, self.model is not None),
            lambda now, before: kinematics_status(now, before, limits),
            lambda: self.model.name if self.model is not None else '')
        self.description = ModelSubscription(self, 'robot_description',
                                             chain_options(self.params), self.on_model)

    def on_model(self, model):
        """Create the services, subscriptions and publishers once the model is known."""
        self.model = model
        self.reader = JointStateReader(model, 'joint_states')
        self.seed_reader = JointStateReader(model, 'robot_state')
        self.has_closed_form = closed_form(model) is not None
        model.warm_up()
        self.joint_states = self.create_subscription(JointState, 'joint_states',
                                                     lambda msg: None, 1,
                                                     callback_group=OnDemand(), raw=True)
        self.create_service(SolveIK, '~/solve_ik', self.solve_ik_callback)
        self.create_service(SolveFK, '~/solve_fk', self.solve_fk_callback)
        if self.params.publish_rate_hz > 0.0:
            self.tip_publisher = self.create_publisher(PoseStamped, '~/tip_pose', 10)
            self.marker_publisher = self.create_publisher(MarkerArray, '~/markers', 10)
            self.create_timer(1.0 / self.params.publish_rate_hz, self.publish_callback)
        self.get_logger().info(
            f'serving IK ({"closed form" if self.has_closed_form else "numeric"}) and FK for '
            f'{model.base_link!r} -> {model.tip_link!r}')

    # ---- inputs ---------------------------------------------------------------------------------

    def latest_positions(self):
        """Return the model's joint positions of the latest joint state, or None."""
        msg = take_next(self.joint_states)
        if msg is not None:
            try:
                self.joint_state = self.reader.positions(msg)[1]
            except InputError as exc:
                if self.throttle('joint state', 5.0):
                    self.get_logger().warning(f'ignoring a joint state: {exc}')
        return self.joint_state

    def _positions(self, state, required):
        """Joint positions (n,) from a request's JointState, matched by name."""
        if not state.name:
            if required:
                raise RequestError(SolveFK.Response.INVALID_ROBOT_STATE,
                                   f'robot_state: no joints given; expected '
                                   f'{list(self.model.joint_names)}')
            latest = self.latest_positions()
            return default_seed(self.model) if latest is None else latest
        try:
            return self.seed_reader.positions(serialize_message(state))[1]
        except InputError as exc:
            raise RequestError(SolveIK.Response.INVALID_ROBOT_STATE, str(exc)) from None

    def _link(self, name):
        link = name or self.model.tip_link
        if link not in self.model.frames:
            raise RequestError(SolveIK.Response.INVALID_LINK_NAME,
                               f'unknown link {link!r}; links of the model: '
                               f'{self.model.link_names}')
        return link

    # ---- services -------------------------------------------------------------------------------

    def solve_ik_callback(self, request, response):
        """Solve IK for the request, counted for /diagnostics; never raise."""
        response = self._solve_ik(request, response)
        self.ik_calls += 1
        self.ik_failures += not response.success
        return response

    def _solve_ik(self, request, response):
        """Solve IK for the request (the reply says what was wrong)."""
        model = self.model
        try:
            target = self._ik_target(request)
            seed = self._positions(request.robot_state, required=False)
            options = self._ik_options(request)
            result = model.ik(target, seed=seed, **options)
            if self.has_closed_form:
                stamp = request.pose_stamped.header.stamp
                branch_options = {k: v for k, v in options.items() if k != 'timeout'}
                response.branches = [joint_state(model.joint_names, stamp, q)
                                     for q in model.ik_all(target, **branch_options)]
        except RequestError as exc:
            return self._failed(response, exc.code, str(exc))
        except InputError as exc:
            return self._failed(response, SolveIK.Response.INVALID_GOAL, str(exc))
        reached = joint_state(model.joint_names, self.get_clock().now().to_msg(), result.q)
        response.success = bool(result.success)
        response.position_error = float(result.position_error)
        response.orientation_error = float(result.orientation_error)
        response.message = f'{result.method}: {result.reason}'
        if result.success:
            response.solution = reached
            response.error_code = SolveIK.Response.SUCCESS
        else:
            # a configuration that looks like a solution would be sent to the arm: it goes in
            # a field of its own, named for what it is
            response.closest = reached
            response.error_code = SolveIK.Response.NO_IK_SOLUTION
            response.message += (f'; no solution (solution is empty): the closest '
                                 f'configuration found, in closest, misses the target by '
                                 f'{result.position_error:.3g} m and '
                                 f'{result.orientation_error:.3g} rad')
        return response

    def _ik_target(self, request):
        """Tip pose (4, 4) that puts ``ik_link_name`` at the requested pose."""
        model = self.model
        try:
            check_frame(request.pose_stamped.header.frame_id, model)
        except InputError as exc:
            raise RequestError(SolveIK.Response.FRAME_TRANSFORM_FAILURE, str(exc)) from None
        target = pose_to_matrix(request.pose_stamped.pose)
        link = self._link(request.ik_link_name)
        if link == model.tip_link:
            return target
        body, T_body_link = model.frames[link]
        tip_body, T_body_tip = model.frames[model.tip_link]
        if body != tip_body:
            raise RequestError(SolveIK.Response.INVALID_LINK_NAME,
                               f'ik_link_name {link!r} does not ride on the last moving body; '
                               f'IK solves for the tip {model.tip_link!r} or a link fixed to it')
        return target @ np.linalg.solve(T_body_link, T_body_tip)

    def _ik_options(self, request):
        options = {}
        if request.position_only:
            options['mask'] = POSITION_ONLY
        elif len(request.mask):
            options['mask'] = joint_values(request.mask, 'vx vy vz wx wy wz'.split(), 'mask')
        for name in ('tol_position', 'tol_orientation'):
            value = getattr(request, name)
            if value != 0.0:
                options[name] = value
        timeout = to_seconds(request.timeout)
        if timeout > 0.0:
            options['timeout'] = timeout
        return options

    def solve_fk_callback(self, request, response):
        """Compute the poses of the requested links; never raise."""
        model = self.model
        try:
            check_frame(request.header.frame_id, model)
        except InputError as exc:
            return self._failed(response, SolveFK.Response.FRAME_TRANSFORM_FAILURE, str(exc))
        try:
            links = [self._link(name) for name in request.fk_link_names] or [model.tip_link]
            q = self._positions(request.robot_state, required=True)
        except RequestError as exc:
            return self._failed(response, exc.code, str(exc))
        poses = model.link_poses(q)
        index = {name: k for k, name in enumerate(model.link_names)}
        stamp = request.header.stamp
        response.pose_stamped = [pose_stamped(poses[index[link]], model.base_link, stamp)
                                 for link in links]
        response.fk_link_names = links
        response.success = True
        response.error_code = SolveFK.Response.SUCCESS
        return response

    def _failed(self, response, code, message):
        if self.throttle('request', 1.0):
            self.get_logger().warning(f'request rejected: {message}')
        response.success = False
        response.error_code = code
        response.message = message
        return response

    # ---- visualisation --------------------------------------------------------------------------

    def publish_callback(self):
        """Publish the tip pose and the markers of the latest joint state."""
        q = self.latest_positions()
        if q is None:
            return
        model = self.model
        stamp = self.get_clock().now().to_msg()
        tip = model.fk(q)
        self.tip_publisher.publish(pose_stamped(tip, model.base_link, stamp))
        self.marker_publisher.publish(self.markers(q, tip, stamp))

    def markers(self, q, tip, stamp):
        """Return the MarkerArray of the arm at ``q``."""
        model = self.model
        scale = self.params.marker_scale
        frames = model.joint_frames(q)
        chain = Marker(ns='links', id=0, type=Marker.LINE_STRIP, action=Marker.ADD)
        chain.scale.x = scale
        chain.color.r, chain.color.g, chain.color.b, chain.color.a = 0.2, 0.4, 0.8, 1.0
        chain.points = [Point(x=float(x), y=float(y), z=float(z))
                        for x, y, z in np.vstack((np.zeros(3), frames[:, :3, 3], tip[:3, 3]))]
        items = [chain]
        z = np.array([0.0, 0.0, 1.0])
        for i, T in enumerate(frames):
            joint = Marker(ns='joints', id=i, type=Marker.CYLINDER, action=Marker.ADD)
            joint.pose = matrix_to_pose(_aligned(T, model.joint_axis[i], z))
            joint.scale.x = joint.scale.y = 2.0 * scale
            joint.scale.z = 2.5 * scale
            joint.color.r, joint.color.g, joint.color.b, joint.color.a = 0.9, 0.5, 0.1, 1.0
            items.append(joint)
        for k, axis in enumerate(np.eye(3)):
            arrow = Marker(ns='tip_frame', id=k, type=Marker.ARROW, action=Marker.ADD)
            arrow.pose = matrix_to_pose(_aligned(tip, axis, np.array([1.0, 0.0, 0.0])))
            arrow.scale.x, arrow.scale.y, arrow.scale.z = 5.0 * scale, 0.4 * scale, 0.4 * scale
            arrow.color.r, arrow.color.g, arrow.color.b = axis
            arrow.color.a = 1.0
            items.append(arrow)
        for item in items:
            item.header.frame_id = model.base_link
            item.header.stamp = stamp
        return MarkerArray(markers=items)


def _aligned(T, axis, marker_axis):
    """Pose at ``T``'s origin whose ``marker_axis`` points along ``T``'s local ``axis``."""
    a = T[:3, :3] @ axis
    c = np.cross(marker_axis, a)
    s, d = np.linalg.norm(c), float(marker_axis @ a)
    out = np.eye(4)
    out[:3, 3] = T[:3, 3]
    if s > 1e-12:
        out[:3, :3] = axis_angle_to_matrix(c / s, np.arctan2(s, d))
    elif d < 0.0:
        out[:3, :3] = axis_angle_to_matrix(np.array([0.0, 1.0, 0.0]) if abs(marker_axis[1]) < 0.9
                                           else np.array([1.0, 0.0, 0.0]), np.pi)
    return out


def main(args=None):
    """Run the kinematics node."""
    return run_node(KinematicsNode, 'kinematics', args)


if __name__ == '__main__':
    sys.exit(main())
