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
``robot-dynamics send``: a trajectory file to the controller's action, and its result.

Installs from PyPI have no ``ros2 action send_goal``; this sends the points of a
:class:`~robot_dynamics.trajectory.TrajectoryPoints` (a ``FollowJointTrajectory`` goal) or of a
:class:`~robot_dynamics.cartesian_trajectory.CartesianPoints` (a
``FollowCartesianTrajectory`` goal), read from YAML (:func:`load`), as a goal that starts at
once (header stamp zero), and waits for the result as long as the goal shows progress (see
:class:`Patience`: a goal on simulated time may run slower than the wall clock). Ctrl-C (SIGINT)
or SIGTERM asks the controller to cancel the goal (it brings the arm to rest) and exits: it
waits for the answer at most CANCEL_WAIT, and not at all where the server is gone. A server that
goes away while the goal runs (the controller stopped, or killed: discovery drops a process
that no longer announces itself within the profile's lease, see
:mod:`~robot_dynamics.ros.wire.middleware`) ends ``send`` with exit status 1 once it has been gone
for SERVER_GONE.
"""

from pathlib import Path
import sys
import threading
import time

from cartesian_control_msgs.action import FollowCartesianTrajectory
from cartesian_control_msgs.msg import CartesianTrajectoryPoint
from control_msgs.action import FollowJointTrajectory
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from trajectory_msgs.msg import JointTrajectory

from ..nodes.runner import spin_until
from ..wire import middleware
from ..wire.compat import ActionClient
from ..wire.conversions import duration_msg, trajectory_point
from ...cartesian_trajectory import CartesianPoints, is_cartesian
from ...errors import InputError
from ...trajectory import trajectory_document, TrajectoryPoints

#: Wall time [s] allowed for the result after the goal's nominal end and after its newest
#: feedback, whichever is later.
RESULT_MARGIN = 60.0
#: Time [s] the action server must have been unreachable before ``send`` says it is gone (one
#: look can fall between an endpoint's loss and its return on a busy host).
SERVER_GONE = 0.5
#: Longest wait [s] for the controller's answer to a cancel on Ctrl-C.
CANCEL_WAIT = 1.0
#: Exit statuses: the goal succeeded; it failed, was rejected or no server answered; stopped.
SUCCEEDED, FAILED, INTERRUPTED = 0, 1, 130
#: Error codes of the results, by value, for messages: control_msgs' FollowJointTrajectory's,
#: which cartesian_control_msgs' FollowCartesianTrajectory has too, with INVALID_POSTURE.
ERROR_CODES = {getattr(FollowCartesianTrajectory.Result, name): name for name in (
    'SUCCESSFUL', 'INVALID_GOAL', 'INVALID_JOINTS', 'OLD_HEADER_TIMESTAMP',
    'PATH_TOLERANCE_VIOLATED', 'GOAL_TOLERANCE_VIOLATED', 'INVALID_POSTURE')}


#: The controller's actions, by the kind of points they take (relative: in the arm's namespace).
ACTIONS = {TrajectoryPoints: 'controller/follow_joint_trajectory',
           CartesianPoints: 'controller/follow_cartesian_trajectory'}


def load(path):
    """Return the TrajectoryPoints or CartesianPoints (points with a ``pose``) of a YAML file."""
    try:
        text = Path(path).read_text()
    except OSError:
        raise InputError(f'trajectory file not found: {str(path)!r}') from None
    kind = CartesianPoints if is_cartesian(trajectory_document(text)) else TrajectoryPoints
    return kind.from_yaml(text)


def goal_message(points):
    """Return the action goal of TrajectoryPoints or CartesianPoints (it starts at once)."""
    if isinstance(points, CartesianPoints):
        return cartesian_goal_message(points)
    msg = JointTrajectory(joint_names=list(points.joint_names))
    for k, t in enumerate(points.time_from_start):
        msg.points.append(trajectory_point(
            points.positions[k],
            None if points.velocities is None else points.velocities[k],
            None if points.accelerations is None else points.accelerations[k],
            time_from_start=float(t)))
    return FollowJointTrajectory.Goal(trajectory=msg)


def cartesian_goal_message(points):
    """Return the ``FollowCartesianTrajectory`` goal of :class:`CartesianPoints`."""
    goal = FollowCartesianTrajectory.Goal()
    goal.trajectory.header.frame_id = points.frame_id
    goal.trajectory.controlled_frame = points.controlled_frame
    for k, t in enumerate(points.time_from_start):
        point = CartesianTrajectoryPoint(time_from_start=duration_msg(float(t)))
        p, o = point.pose.position, point.pose.orientation
        p.x, p.y, p.z = (float(v) for v in points.positions[k])
        o.x, o.y, o.z, o.w = (float(v) for v in points.quaternions[k])
        for field, rows in (('twist', points.twists), ('acceleration', points.accelerations)):
            if rows is not None:
                part = getattr(point, field)
                part.linear.x, part.linear.y, part.linear.z = (float(v) for v in rows[k, :3])
                part.angular.x, part.angular.y, part.angular.z = (float(v) for v in rows[k, 3:])
        goal.trajectory.points.append(point)
    return goal


class Patience:
    """
    How long ``send`` waits for a goal's result, on the monotonic clock [s].

    Until ``margin`` after the goal's nominal end (``sent`` + ``duration``) or after its newest
    feedback, whichever is later: the controller publishes feedback while the goal runs, so a
    goal on simulated time that runs slower than the wall clock (lockstep on a busy host) is
    waited for, and a controller that stopped answering is given up ``margin`` after its last
    word.
    """

    def __init__(self, sent, duration, margin=RESULT_MARGIN):
        self.margin = margin
        self.deadline = sent + duration + margin

    def feedback(self, now):
        """Note feedback that arrived at ``now``."""
        self.deadline = max(self.deadline, now + self.margin)

    def heard(self, _feedback):
        """Note feedback arriving now: an action client's ``feedback_callback``."""
        self.feedback(time.monotonic())

    def __call__(self):
        """Return the deadline now."""
        return self.deadline


def wait_for(future, deadline, stop=None, server_gone=lambda: False):
    """
    Wait for an rclpy future (spun elsewhere) until ``deadline``; return whether it ended.

    ``deadline``: a monotonic time [s], or a function that returns it (read at each look).
    Also stops waiting when ``stop`` (a threading.Event, or None) is set or ``server_gone()`` is
    true.
    """
    while not future.done():
        limit = deadline() if callable(deadline) else deadline
        if (stop is not None and stop.is_set()) or time.monotonic() > limit or server_gone():
            return False
        time.sleep(0.01)
    return True


class _Absence:
    """``gone()``: whether ``client``'s server has been unreachable for ``SERVER_GONE`` [s]."""

    def __init__(self, client):
        self.client = client
        self.since = None

    def __call__(self):
        if self.client.server_is_ready():
            self.since = None
            return False
        now = time.monotonic()
        self.since = self.since if self.since is not None else now
        return now - self.since >= SERVER_GONE


def run(points, action=None, *, server_timeout=30.0, out=sys.stdout):
    """
    Send ``points`` to the action ``action`` and wait for the result; return the exit status.

    ``points`` TrajectoryPoints or CartesianPoints; ``action`` None: the controller's action
    that takes them (:data:`ACTIONS`).

    0 when the goal succeeded; 1 when no server answered within ``server_timeout`` [s], the goal
    was rejected, the server went away or the goal ended otherwise (the controller's error
    string is printed); 130 when interrupted (a cancel is sent first).
    """
    with middleware.tool_node('send_trajectory') as (node, stop):
        executor = SingleThreadedExecutor(context=node.context)
        executor.add_node(node)
        done = threading.Event()

        def spin():
            try:
                spin_until(executor, done)
            except ExternalShutdownException:
                pass

        thread = threading.Thread(target=spin, daemon=True)
        thread.start()
        cartesian = isinstance(points, CartesianPoints)
        action = action or ACTIONS[type(points)]
        client = ActionClient(
            node, FollowCartesianTrajectory if cartesian else FollowJointTrajectory, action)
        duration = float(points.time_from_start[-1])
        try:
            deadline = time.monotonic() + server_timeout
            while not client.server_is_ready():
                if stop.is_set():
                    return INTERRUPTED
                if time.monotonic() > deadline:
                    print(f'send: no action server {action} answered within {server_timeout:g} s '
                          '(is the controller running? ROS_DOMAIN_ID and discovery as its?)',
                          file=sys.stderr)
                    return FAILED
                time.sleep(0.05)
            what = f'the tip {points.controlled_frame}'.strip() if cartesian else \
                list(points.joint_names)
            print(f'send: {len(points.time_from_start)} points over {duration:.3g} s of '
                  f'{what} to {action}', file=out, flush=True)
            gone = _Absence(client)
            lost = f'the action server {action} is gone (the controller stopped or died)'
            patience = Patience(time.monotonic(), duration)
            sending = client.send_goal_async(goal_message(points),
                                             feedback_callback=patience.heard)
            # interrupted while the goal is on its way: its answer is still waited for (at most
            # CANCEL_WAIT), so that a goal the server accepted is canceled, not left running
            answered = wait_for(sending, time.monotonic() + server_timeout, stop, gone) or (
                stop.is_set() and wait_for(sending, time.monotonic() + CANCEL_WAIT, None, gone))
            if not answered:
                if stop.is_set():
                    print('send: interrupted; the goal was not answered', file=sys.stderr)
                    return INTERRUPTED
                return _failed(f'{lost}; the goal was not answered' if gone() else
                               'no answer to the goal')
            handle = sending.result()
            if not handle.accepted:
                return INTERRUPTED if stop.is_set() else _failed(f'{action} rejected the goal')
            result = handle.get_result_async()
            if not wait_for(result, patience, stop, gone):
                if not stop.is_set() and gone():
                    return _failed(f'{lost}; the goal has no result')
                canceling = handle.cancel_goal_async()
                wait_for(canceling, time.monotonic() + CANCEL_WAIT, None, gone)
                if stop.is_set():
                    print('send: interrupted; ' + ('goal canceled' if canceling.done() else
                                                   'cancel requested, no answer'),
                          file=sys.stderr)
                    return INTERRUPTED
                return _failed(f'no result and no feedback for {RESULT_MARGIN:g} s after the '
                               "goal's end; goal canceled")
            answer = result.result().result
            code = int(answer.error_code)
            if code == FollowJointTrajectory.Result.SUCCESSFUL:
                detail = f': {answer.error_string}' if answer.error_string else ''
                print(f'send: succeeded{detail}', file=out)
                return SUCCEEDED
            return _failed(f'{ERROR_CODES.get(code, code)}: {answer.error_string}')
        finally:
            done.set()
            thread.join()
            client.destroy()


def _failed(message):
    print(f'send: failed: {message}', file=sys.stderr)
    return FAILED
