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
The controller's goal interface, in a process of its own.

rclpy builds a message's Python objects in C with the interpreter's lock held: a goal of
100,000 points held the controller's 1 kHz cycle, in the same process, for up to 20 ms at a
time over more than a second. So the controller node serves its two actions
(``~/follow_joint_trajectory``, ``~/follow_cartesian_trajectory``) and its goal topics
(``~/joint_trajectory``, ``~/target_pose``) from a child process, a node named
``<controller>_goals`` beside it (:class:`GoalProcess` starts it). There each goal is read and
checked with what needs no state of the arm (names, sizes, finite values, increasing times,
each point's limits; in time linear in its size; a trajectory of more than
MAX_TRAJECTORY_POINTS is taken without building its points, :mod:`~..wire.capped`), a refused
one is answered at once, and only
what passes reaches the controller, as arrays over a pipe: ``(kind, goal id, goal)``, a
:class:`~robot_dynamics.follower.Goal` or :class:`~robot_dynamics.cartesian_follower.CartesianGoal`
(tag None, NaN tolerances and a ``goal_time`` of 0 where the controller's defaults apply), the
pose (4, 4) of a :data:`TARGET`, nothing for a :data:`CANCEL`. The controller
judges it against the arm (the spline from the reference in force, the reach) and sends back
how each goal ended, the feedback to publish, and :data:`TAKEN` once it has dealt with a
target: streamed targets cross one at a time, the newest of those that came meanwhile next
(:class:`Outbox`), so that a flood of them never fills the pipe ahead of a goal or a cancel. The
child ends when the pipe closes: when the controller node stops, or its process dies; its own
end (a crash, a kill) ends the controller node, its exit status or signal in the one fatal line
(``NodeFailure``), and the controller's safe command goes out as at any stop. An answer waits up
to ANSWER_WAIT for its client to be discovered; a goal accepted whose client could not be told
so is ended, not run (its client would not know that the arm moves). The child runs in a
process group of its own, so that a signal to the controller's group (a supervisor's SIGKILL)
ends it by its pipe, with a goodbye to the graph: a participant that vanishes unannounced makes
every other one expire it later, and Fast DDS can deadlock doing so (eProsima/Fast-DDS#6502).
It runs the package the controller runs, whatever the working directory (:func:`spawn`).
"""

from functools import partial
from multiprocessing.connection import Connection
import os
from pathlib import Path
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings

from cartesian_control_msgs.action import FollowCartesianTrajectory
from control_msgs.action import FollowJointTrajectory
from geometry_msgs.msg import PoseStamped
import numpy as np
import rclpy
from rclpy.action import CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message, serialize_message
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectory

from . import GOAL_NODE_SUFFIX
from .runner import answer_where, bound_the_exit, NodeFailure, spin_until, teardown
from .throttle import Throttle
from ..wire import middleware
from ..wire.capped import CappedActionServer, CappedPoints
from ..wire.conversions import (cartesian_arrays, check_frame, JointNameError,
                                MAX_TRAJECTORY_POINTS, pose_to_matrix, to_seconds,
                                trajectory_arrays)
from ..wire.qos import NEWEST_GOAL
from ...cartesian_follower import CartesianGoal, CartesianTolerances, check_goal
from ...errors import InputError, unknown_name
from ...follower import check_points, Goal, Tolerances
from ...model import RobotModel

#: What the goal process passes on: an action goal of either action, a trajectory or a target
#: pose from a topic, a cancel request.
JOINT, CARTESIAN, TRAJECTORY, TARGET, CANCEL = 'joint', 'cartesian', 'trajectory', 'target', \
    'cancel'
#: The controller's word that it has dealt with a target it was passed (sent back).
TAKEN = 'taken'
#: The goal process's start (``python -c``): the package from the directory of the controller's
#: (``argv[1]``: its ``__init__.py``), before anything can import it from elsewhere, and
#: nothing from the working directory (``python -m`` puts it first: from a checkout's root the
#: child ran the source tree beside an installed controller, and compiled its kernels there).
START = """
import importlib.util, sys
if sys.path[0] == '':
    del sys.path[0]
spec = importlib.util.spec_from_file_location('robot_dynamics', sys.argv[1])
sys.modules[spec.name] = package = importlib.util.module_from_spec(spec)
spec.loader.exec_module(package)
from robot_dynamics.ros.nodes.goals import main
sys.exit(main(int(sys.argv[2])))
"""
#: Longest wait [s] for the child to end once its pipe closed (past it, the node stops without
#: it; the child, just started or held in its own teardown, ends by itself).
STOP_BOUND = 5.0
#: Longest time [s] the child spends sending the results of goals ended before its pipe closed.
DRAIN_BOUND = 1.0
#: Longest wait [s] of an answer (to a goal, a cancel, a result request) for the client's reader
#: to be discovered (:func:`~..wire.middleware.wait_for_clients`): a client silent that long is
#: gone (a participant's lease in the package's profile). Fast DDS's 100 ms lost goal responses on
#: a busy host; the child has no control cycle for the wait to hold.
ANSWER_WAIT = 5.0
#: The start of rclpy's RuntimeWarning for an answer that was not delivered (it goes on then).
ANSWER_LOST = 'failed to send response'
_RESULTS = {JOINT: FollowJointTrajectory.Result, CARTESIAN: FollowCartesianTrajectory.Result}
_FEEDBACK = {JOINT: FollowJointTrajectory.Feedback, CARTESIAN: FollowCartesianTrajectory.Feedback}


def spawn(fd):
    """Start the goal process on the pipe ``fd`` (:data:`START`); return its ``Popen``."""
    package = Path(__file__).parents[2] / '__init__.py'
    return subprocess.Popen([sys.executable, '-c', START, str(package), str(fd)],
                            pass_fds=(fd,), start_new_session=True)


def how_it_ended(status):
    """Return how a process ended, in words, from its exit status (``Popen.returncode``)."""
    if status is None:
        return 'its pipe closed, the process still running'
    if status >= 0:
        return f'exit status {status}'
    try:
        return f'killed by {signal.Signals(-status).name}'
    except ValueError:                  # a real-time signal has no name of its own
        return f'killed by signal {-status}'


def goal_name(goal_id):
    """Return how the log names a goal: its id's first bytes, or 'trajectory' for a topic's."""
    return f'goal {goal_id.hex()[:8]} ' if goal_id else 'trajectory '


def joint_goal(msg, model, tolerances=None, count=None):
    """
    Return the Goal of a JointTrajectory message, its points checked; raise if malformed.

    ``tolerances``: a FollowJointTrajectory request's (:func:`given_tolerances`), or None (all
    the defaults). ``count``: the number of points it was taken with, if capped.
    """
    times, positions, velocities, accelerations = trajectory_arrays(msg, model, count)
    if tolerances is None:
        nan = np.full(model.dof, np.nan)
        tolerances = Tolerances(nan, nan, nan, nan, 0.0)
    start = to_seconds(msg.header.stamp) or None      # zero: at the newest state
    goal = Goal(None, start, times, positions, velocities, accelerations, tolerances)
    check_points(model, goal)
    return goal


def check_single_dof(request, multi_dof_points):
    """
    Raise ``JointNameError`` if a FollowJointTrajectory request has anything for multi-DOF joints.

    The controller's joints are all single-DOF (revolute, prismatic): a multi-DOF trajectory
    (``multi_dof_points``: its number of points, as taken) or component tolerance cannot be
    followed, and is refused rather than left out.
    """
    names = sorted({*request.multi_dof_trajectory.joint_names,
                    *(t.joint_name for t in request.component_path_tolerance),
                    *(t.joint_name for t in request.component_goal_tolerance)})
    if names or multi_dof_points:
        raise JointNameError(
            f'multi-DOF joints {names} ({multi_dof_points} multi_dof_trajectory points): the '
            "controller's joints are single-DOF; give them in trajectory and their tolerances "
            'in path_tolerance and goal_tolerance')


def given_tolerances(request, model):
    """
    Return a FollowJointTrajectory request's tolerances: its own where given, NaN elsewhere.

    A value > 0 is a tolerance, -1 none (inf), 0 the default (NaN here); ``goal_time`` 0: the
    default. Raises ``JointNameError`` for a joint the model does not have.
    """
    values = {name: np.full(model.dof, np.nan) for name in
              ('path_position', 'path_velocity', 'goal_position', 'goal_velocity')}
    for part, tolerances in (('path', request.path_tolerance), ('goal', request.goal_tolerance)):
        for tol in tolerances:
            if tol.name not in model.joint_names:
                raise JointNameError(str(unknown_name('joint in a tolerance', tol.name,
                                                      model.joint_names)))
            j = model.joint_names.index(tol.name)
            for field, value in (('position', tol.position), ('velocity', tol.velocity)):
                if value == -1.0:
                    values[f'{part}_{field}'][j] = np.inf
                elif value > 0.0:
                    values[f'{part}_{field}'][j] = value
                elif value != 0.0 or not np.isfinite(value):
                    raise InputError(f'tolerance of {tol.name!r}: {value} (expected > 0, '
                                     '0 for the default or -1 for none)')
    return Tolerances(goal_time=to_seconds(request.goal_time_tolerance), **values)


def with_defaults(tolerances, default):
    """Return ``tolerances`` with ``default``'s values where they hold NaN (goal_time: 0)."""
    return tolerances._replace(
        goal_time=tolerances.goal_time or default.goal_time,
        **{name: np.where(np.isnan(getattr(tolerances, name)), getattr(default, name),
                          getattr(tolerances, name))
           for name in ('path_position', 'path_velocity', 'goal_position', 'goal_velocity')})


def cartesian_goal(request, model, count=None):
    """
    Return the CartesianGoal of a FollowCartesianTrajectory request, checked; raise if malformed.

    Its tolerances are the request's (> 0; -1: none; 0: unchecked), its ``goal_time`` 0 where
    the request leaves it to the default. Reach and joint limits are checked by the controller,
    from the reference in force. ``count``: the number of points it was taken with, if capped.
    """
    msg = request.trajectory
    times, positions, quaternions, twists, accelerations = cartesian_arrays(msg, model, count)
    goal = CartesianGoal(None, to_seconds(msg.header.stamp) or None, times, positions,
                         quaternions, twists, accelerations, _cartesian_tolerances(request))
    check_goal(goal)
    return goal


def _cartesian_tolerances(request):
    limits = {}
    for name, given in (('path_tolerance', request.path_tolerance),
                        ('goal_tolerance', request.goal_tolerance)):
        part = given.acceleration_error
        if any(getattr(getattr(part, side), a) != 0.0
               for side in ('linear', 'angular') for a in 'xyz'):
            raise InputError(f'{name}.acceleration_error: not checked by this controller (the '
                             "tip's acceleration is not measured); leave it 0")
        for field, values in (
                ('position', [given.position_error.x, given.position_error.y,
                              given.position_error.z]),
                ('orientation', [given.orientation_error.x, given.orientation_error.y,
                                 given.orientation_error.z]),
                ('twist', [getattr(getattr(given.twist_error, side), a)
                           for side in ('linear', 'angular') for a in 'xyz'])):
            values = np.array(values)
            if np.any((values < 0.0) & (values != -1.0)) or not np.isfinite(values).all():
                raise InputError(f'{name}.{field}_error = {values.tolist()}: expected > 0, 0 '
                                 'for the default (not checked) or -1 for none')
            limits[f'{name.split("_")[0]}_{field}'] = np.where(values > 0.0, values, np.inf)
    return CartesianTolerances(goal_time=to_seconds(request.goal_time_tolerance), **limits)


class RemoteGoal:
    """
    An action goal of the goal process, as the controller tags it.

    ``goal_id`` (bytes), ``kind``; :attr:`is_cancel_requested` once its client asked;
    :meth:`publish_feedback` and :meth:`end` send to the goal process without waiting.
    """

    def __init__(self, goals, kind, goal_id):
        self._goals, self.kind, self.goal_id = goals, kind, goal_id
        self.is_cancel_requested = False

    def publish_feedback(self, feedback):
        """Publish ``feedback`` (the action's Feedback message) on the goal."""
        self._goals.send(('feedback', self.goal_id, serialize_message(feedback)))

    def end(self, state, code, message):
        """End the goal: ``state`` 'succeed', 'canceled' or 'abort', the result's code, message."""
        self._goals.send(('end', self.goal_id, state, code, message))


class GoalProcess:
    """
    Start and stop the goal process of ``node`` (the controller node) for ``model``.

    ``urdf``, ``options``: the description and chain options the model was built from (the
    child builds its own). ``on_checked(kind, handle, goal)`` is called from a thread of this
    class for each goal and topic message that passed (``handle``: the :class:`RemoteGoal` of
    an action goal, else None); what it raises, and a goal process that ends while the node
    runs (``NodeFailure``, with how it ended), is raised again in the node's executor.
    :meth:`send` queues a message for the child (never blocks the caller: the cycle sends from
    its thread); a :data:`TAKEN` follows each target taken.
    """

    def __init__(self, node, urdf, options, on_checked):
        self._node, self._on_checked = node, on_checked
        self._socket, theirs = socket.socketpair()
        # a connection on a copy: shutting the socket down ends the receiver's wait (closing
        # the connection under it would not)
        self._conn = Connection(os.dup(self._socket.fileno()))
        self._goals = {}                        # goal id -> RemoteGoal, while it runs
        self._outbox = queue.SimpleQueue()
        self._stopping = threading.Event()
        self._error = None
        self._raise = node.create_guard_condition(self._raise_error)
        fd = theirs.detach()
        name = node.get_name()
        self.process = spawn(fd)
        os.close(fd)
        self._conn.send({
            'urdf': urdf, 'options': options, 'node': f'{name}{GOAL_NODE_SUFFIX}',
            'namespace': node.get_namespace(), 'logger': node.get_logger().name,
            'domain_id': node.context.get_domain_id(),
            'use_sim_time': node.get_parameter('use_sim_time').value,
            # the arm's own clock (a namespaced arm's is remapped)
            'clock': node.resolve_topic_name('/clock'),
            'names': {what: node.resolve_topic_name(f'~/{what}') for what in (
                'follow_joint_trajectory', 'follow_cartesian_trajectory', 'joint_trajectory',
                'target_pose')}})
        self._sender = threading.Thread(target=self._send_all, name='goals_out', daemon=True)
        self._receiver = threading.Thread(target=self._receive_all, name='goals_in',
                                          daemon=True)
        self._sender.start()
        self._receiver.start()

    def send(self, message):
        self._outbox.put(message)

    def _send_all(self):
        while True:
            message = self._outbox.get()
            if message is None:
                return
            try:
                self._conn.send(message)
            except OSError:
                return          # the child is gone: the receiver says so

    def _receive_all(self):
        try:
            while True:
                kind, goal_id, goal = self._conn.recv()
                handle = None
                if kind in (JOINT, CARTESIAN):
                    handle = self._goals[goal_id] = RemoteGoal(self, kind, goal_id)
                elif kind == CANCEL:
                    handle = self._goals.get(goal_id)
                    if handle is not None:
                        handle.is_cancel_requested = True
                    continue
                self._on_checked(kind, handle, goal)
                if kind == TARGET:
                    self.send((TAKEN, b''))
        except (EOFError, OSError):
            if self._stopping.is_set():
                return
            # its pipe closes as it exits: its status is there at once
            try:
                status = self.process.wait(STOP_BOUND)
            except subprocess.TimeoutExpired:
                status = None
            self._error = NodeFailure(f'the goal process ended: {how_it_ended(status)}; no '
                                      'goal can come, the controller stops')
            self._raise.trigger()
        except Exception as exc:  # noqa: B902 - raised again where the node fails
            self._error = exc
            self._raise.trigger()

    def forget(self, goal_id):
        """Drop a goal that ended from the ones a cancel can reach."""
        self._goals.pop(goal_id, None)

    def _raise_error(self):
        raise self._error

    def stop(self):
        """Send what is queued, close the pipe and wait for the child, at most STOP_BOUND."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._outbox.put(None)
        self._sender.join(STOP_BOUND)
        self._socket.shutdown(socket.SHUT_RDWR)
        try:
            self.process.wait(STOP_BOUND)
        except subprocess.TimeoutExpired:
            pass
        self._receiver.join(STOP_BOUND)
        self._conn.close()
        self._socket.close()
        self._node.destroy_guard_condition(self._raise)


class Outbox:
    """
    What the goal process sends the controller over ``conn``: streamed targets coalesced.

    A target goes when no target is in flight (sent, and no :data:`TAKEN` back for it yet);
    else it waits, in place of the one that waited before it (the newest wins). Anything else
    goes at once, after the target that waited, if any: the order of what is sent is the order
    it came in, less the targets a newer one replaced before they could go. So a flood of
    targets leaves at most two ahead of a goal or a cancel. Thread-safe (the executor's thread
    sends, the pipe's reader calls :meth:`taken`).
    """

    def __init__(self, conn):
        self._conn = conn
        self._lock = threading.Lock()
        self._in_flight = 0
        self._waiting = None            # the newest target that came while one was in flight

    def send(self, kind, goal_id=b'', goal=None):
        """Send ``(kind, goal_id, goal)``, or hold it back if it is a target (see above)."""
        with self._lock:
            if kind == TARGET and self._in_flight:
                self._waiting = goal
                return
            self._send_waiting()
            self._in_flight += kind == TARGET
            self._conn.send((kind, goal_id, goal))

    def taken(self):
        """Take the controller's :data:`TAKEN`: the target that waited goes, if any."""
        with self._lock:
            self._in_flight -= 1
            if not self._in_flight:
                self._send_waiting()

    def _send_waiting(self):
        if self._waiting is not None:
            self._in_flight += 1
            self._conn.send((TARGET, b'', self._waiting))
            self._waiting = None


class GoalNode(Node):
    """The child's node: the controller's actions and goal topics, checked, passed on."""

    def __init__(self, conn, config):
        super().__init__(config['node'], namespace=config['namespace'],
                         cli_args=['--ros-args', '-r', f'/clock:={config["clock"]}'],
                         parameter_overrides=[Parameter('use_sim_time',
                                                        value=config['use_sim_time'])])
        self.outbox = Outbox(conn)
        self.model = RobotModel.from_urdf(config['urdf'], **config['options'])
        self.log = rclpy.logging.get_logger(config['logger'])
        self.throttle = Throttle()
        self._running = {}              # goal id -> (kind, goal handle, Future of its end)
        self._answer_lost = False       # since the newest goal request was taken
        names = config['names']
        group = ReentrantCallbackGroup()
        # rclpy would build every point's Python objects before a check could refuse them
        self._servers = {kind: CappedActionServer(
            self, action, names[name], execute, goal_callback=self._goal,
            handle_accepted_callback=partial(self._accepted, kind), cancel_callback=self._cancel,
            callback_group=group, limit=MAX_TRAJECTORY_POINTS)
            for kind, action, name, execute in (
                (JOINT, FollowJointTrajectory, 'follow_joint_trajectory', self._execute_joint),
                (CARTESIAN, FollowCartesianTrajectory, 'follow_cartesian_trajectory',
                 self._execute_cartesian))}
        self._trajectories = CappedPoints(JointTrajectory, MAX_TRAJECTORY_POINTS)
        self.create_subscription(self._trajectories.type, names['joint_trajectory'],
                                 self._trajectory, NEWEST_GOAL)
        self.create_subscription(PoseStamped, names['target_pose'], self._target, NEWEST_GOAL)

    def _goal(self, request):
        # rclpy sends the answer between this and _accepted, in the executor's thread, with
        # nothing else run in between (both are plain functions)
        self._answer_lost = False
        return GoalResponse.ACCEPT

    def _accepted(self, kind, handle):
        handle.execute(partial(self._not_run, kind) if self._answer_lost else None)

    def _not_run(self, kind, handle):
        """End a goal whose client was not told that it was accepted (rclpy would run it)."""
        message = (f'not run: its client was not told that it was accepted (its reader not '
                   f'discovered within {ANSWER_WAIT:g} s)')
        self.throttle.warn(self.log, 'goal not run', f'{goal_name(bytes(handle.goal_id.uuid))}'
                                                     f'{message}')
        handle.abort()
        return _RESULTS[kind](error_code=_RESULTS[kind].INVALID_GOAL, error_string=message)

    def answer_lost(self, message):
        """Take rclpy's warning ``message`` that an answer (goal, cancel, result) was dropped."""
        self._answer_lost = True
        self.throttle.warn(self.log, 'answer lost', f'a client was not answered: {message}')

    def _trajectory(self, msg):
        try:
            goal = joint_goal(msg, self.model, count=self._trajectories.count(msg))
        except InputError as exc:
            self.throttle.warn(self.log, 'trajectory rejected', f'trajectory rejected: {exc}')
            return
        self.outbox.send(TRAJECTORY, goal=goal)

    def _target(self, msg):
        try:
            check_frame(msg.header.frame_id, self.model)
            pose = pose_to_matrix(msg.pose)
        except InputError as exc:
            self.throttle.warn(self.log, 'target rejected', f'target pose rejected: {exc}')
            return
        self.outbox.send(TARGET, goal=pose)

    async def _execute_joint(self, handle):
        def check(request):
            capped = self._servers[JOINT].capped
            check_single_dof(request, capped.count(request.multi_dof_trajectory))
            return joint_goal(request.trajectory, self.model,
                              given_tolerances(request, self.model),
                              capped.count(request.trajectory))
        return await self._execute(handle, JOINT, check)

    async def _execute_cartesian(self, handle):
        def check(request):
            return cartesian_goal(request, self.model,
                                  self._servers[CARTESIAN].capped.count(request.trajectory))
        return await self._execute(handle, CARTESIAN, check)

    async def _execute(self, handle, kind, check):
        """Check a goal; refuse it at once, or pass it on and wait for how it ended."""
        result = _RESULTS[kind]
        goal_id = bytes(handle.goal_id.uuid)
        try:
            goal = check(handle.request)
        except InputError as exc:
            code = getattr(result, getattr(exc, 'error_code', 'INVALID_GOAL'))
            self.throttle.warn(self.log, 'goal refused', f'{goal_name(goal_id)}invalid: {exc}')
            handle.abort()
            return result(error_code=code, error_string=str(exc))
        ended = Future()
        self._running[goal_id] = (kind, handle, ended)
        self.outbox.send(kind, goal_id, goal)
        state, code, message = await ended
        del self._running[goal_id]
        getattr(handle, state)()
        return result(error_code=code, error_string=message)

    def _cancel(self, handle):
        self.outbox.send(CANCEL, bytes(handle.goal_id.uuid))
        return CancelResponse.ACCEPT

    def ending(self):
        """Return whether a goal has ended whose result has not gone out yet."""
        return any(ended.done() for _, _, ended in list(self._running.values()))

    def take(self, message):
        """Act on the controller's message (the pipe's thread): TAKEN, a goal's end, feedback."""
        what, goal_id, *rest = message
        if what == TAKEN:
            self.outbox.taken()
            return
        running = self._running.get(goal_id)
        if running is None:
            return
        kind, handle, ended = running
        if what == 'feedback':
            handle.publish_feedback(deserialize_message(rest[0], _FEEDBACK[kind]))
        elif not ended.done():
            ended.set_result(tuple(rest))
            # resumes the waiting execute callback; from this thread nothing else wakes it
            if self.executor is not None:
                self.executor.wake()


def main(fd):
    """Serve the goal interface over the pipe ``fd`` until it closes; return the exit status."""
    # the controller stops it (its pipe closes): Ctrl-C in a terminal reaches the whole group
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    answer_where()
    conn = Connection(fd)
    try:
        config = conn.recv()
    except EOFError:
        return 0            # the controller ended before it sent the set-up
    middleware.init(domain_id=config['domain_id'], answer_wait=ANSWER_WAIT)
    node = None
    shown = warnings.showwarning

    def show(message, category, *args, **kwargs):
        if node is not None and str(message).startswith(ANSWER_LOST):
            node.answer_lost(message)
        else:
            shown(message, category, *args, **kwargs)
    # each one, and told to the node (rclpy goes on as if it had been delivered)
    warnings.filterwarnings('always', message=ANSWER_LOST, category=RuntimeWarning)
    warnings.showwarning = show
    try:
        node = GoalNode(conn, config)
        executor = SingleThreadedExecutor()
        executor.add_node(node)

        def receive():
            try:
                while True:
                    node.take(conn.recv())
            except (EOFError, OSError):
                # its own group: nothing but its pipe ends it, so nothing may hold it after
                bound_the_exit()
                stop.set()
                executor.wake()
        threading.Thread(target=receive, name='goals_in', daemon=True).start()
        spin_until(executor, stop)
        # the ends sent before the pipe closed (the controller's last command ends its goals):
        # their results go out
        deadline = time.monotonic() + DRAIN_BOUND
        while node.ending() and executor.context.ok() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
    finally:
        teardown(node)
    return 0
