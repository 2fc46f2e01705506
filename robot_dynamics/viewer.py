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
The arm in a browser: a 3D view served by viser (its web client ships in its wheel, offline).

:class:`ArmView` draws what it is told, with no ROS: the arm of a URDF at ``q`` (its visuals,
:mod:`robot_dynamics.scene`), the reference as a ghost arm, the tip's recent path, a goal's
waypoints and a status panel; it reports what the user does (a drag of the tip handle, a joint
slider, a push, the buttons) to callbacks. ``robot-dynamics view`` joins it to the ROS 2 graph
(:mod:`robot_dynamics.ros.tools.view`), and :mod:`robot_dynamics.replay` to a recording.
Coordinates: the model's base frame, z up, metres.

What a page may do is checked here, before any callback: the page's websocket opens only for
the view's own page (:func:`origin_allowed`; any other Origin gets HTTP 403, so another web page
open in the browser cannot drive the arm; a handshake without Origin, which browsers always
send, is a program on a machine that reaches the port, and is let in as the port lets it in);
a joint goal must be finite and within the sliders' range, a tip target within the arm's
reach, a push at most :data:`MAX_PUSH` [N]; a push is released when the page holding it goes.
A refused value, a frame that is no viser message and a message viser cannot take are each
one line to ``on_notice``, and the connection (or the view) goes on.
"""

import collections
import contextlib
import datetime
import http
import ipaddress
import logging
import socket
import threading
import time
from urllib.parse import urlsplit

import numpy as np

from .errors import as_array, InputError, quoted, shortened
from .model import RobotModel
from .scene import camera_framing, reach, Scene
from .simulator import DEFAULT_MAX_EXTERNAL_FORCE
from .spatial import matrix_to_quaternion

#: Tip positions kept for the path (at the view's rate, 30 Hz: about 10 s).
PATH_LENGTH = 300
#: Opacity of the ghost arm (the controller's reference).
GHOST_OPACITY = 0.3
#: Vertical field of view of the camera [rad].
FOV = np.deg2rad(50.0)
#: Intensity of the hemisphere light that stands in for an environment map.
HEMISPHERE = 4.0
#: The joint sliders show where the arm is, except for this long [s] after one was moved on
#: the page (the goal it sent is under way; a slider that jumped under the hand would fight it).
SLIDERS_LEFT_ALONE = 2.0
#: Largest push [N] (its magnitude) a page may apply: the simulator's default bound.
MAX_PUSH = DEFAULT_MAX_EXTERNAL_FORCE
#: Longest text [characters] of a refused value or error quoted in a log line.
QUOTED = 80

_log = logging.getLogger(__name__)
# websockets' server is swapped for one that checks handshakes while one ArmView starts
_SERVE_LOCK = threading.Lock()
#: Stamps from this on [s] are wall-clock (Unix) time: a simulation would have run 31 years.
WALL_CLOCK_STAMPS = 1e9


def origin_allowed(origin, host, served_host):
    """
    Return whether a websocket handshake with headers ``Origin: origin``, ``Host: host`` opens.

    The view's own page has the origin ``http://`` + the Host it was loaded from, and its
    socket goes to that same Host: any other Origin (scheme, host or port) is another page. The
    Host must name this machine: an address, ``localhost``, ``served_host`` or the machine's
    name (a foreign name that resolves here is DNS rebinding). No Origin (None): not a browser.
    """
    if origin is None:
        return True
    page, target = urlsplit(origin), urlsplit(f'//{host}')
    try:
        same = (page.scheme == 'http' and bool(host) and page.hostname == target.hostname
                and (page.port or 80) == (target.port or 80) and not page.path)
    except ValueError:          # a port that is not a number
        return False
    if not same:
        return False
    name = target.hostname
    with contextlib.suppress(ValueError):
        ipaddress.ip_address(name)
        return True
    return name in {'localhost', served_host.lower(), socket.gethostname().lower()}


def push_force(value, bound=MAX_PUSH):
    """Return the push ``value`` (3,) [N] as floats; ``InputError`` beyond ``bound`` [N]."""
    force = as_array(value, (3,), 'push').reshape(3)
    size = float(np.linalg.norm(force))
    if size > bound:
        raise InputError(f'push: its {size:.4g} N is above the bound, {bound:g} N')
    return force


def slider_positions(values, lower, upper, names):
    """Return joint positions ``values`` (n,) within [lower, upper]; else ``InputError``."""
    try:
        q = np.array(values, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f'joint goal: not numbers: {quoted(values, QUOTED)}') from None
    bad = ~((q >= lower) & (q <= upper))      # nan too
    if np.any(bad):
        i = int(np.argmax(bad))
        raise InputError(f"joint goal: {names[i]} = {q[i]:g} is not within the slider's "
                         f'[{lower[i]:g}, {upper[i]:g}]')
    return q


def _error_text(exc):
    return f'{type(exc).__name__}: {quoted(exc, QUOTED)}'


@contextlib.contextmanager
def _handshakes_checked(check):
    """
    Make the websocket server that viser starts meanwhile ask ``check`` at each handshake.

    viser (1.1) has no hook into its handshake: it starts websockets' ``serve`` with its own
    ``process_request`` (the page's files) as a ``ViserServer`` is made. ``check(connection,
    request)`` returns a response (a refusal) or None (viser's then answers). Yields a list
    that holds True once the check is in place.
    """
    import websockets.asyncio.server as server
    serve, installed = server.serve, []

    def checked(*args, process_request=None, **kwargs):
        def first_check(connection, request):
            refusal = check(connection, request)
            if refusal is not None or process_request is None:
                return refusal
            return process_request(connection, request)

        installed.append(True)
        return serve(*args, process_request=first_check, **kwargs)

    with _SERVE_LOCK:
        server.serve = checked
        try:
            yield installed
        finally:
            server.serve = serve


def check_port(host, port):
    """Raise ``InputError`` naming the port when ``host:port`` cannot be listened on."""
    with socket.socket(socket.AF_INET6 if ':' in host else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise InputError(f'cannot serve the view on {host}:{port}: {exc.strerror} (another '
                             'view or program has the port? choose another with --port)') \
                from None


def _wxyz(T):
    x, y, z, w = matrix_to_quaternion(T[..., :3, :3]).T
    return np.stack([w, x, y, z], axis=-1)


def _mesh(visual):
    """Return a trimesh for ``visual`` (primitives along z, centred; meshes scaled), or None."""
    import trimesh
    kind, size = visual.shape, visual.size
    if kind == 'box':
        return trimesh.creation.box(extents=size)
    if kind == 'sphere':
        return trimesh.creation.icosphere(radius=size[0], subdivisions=2)
    if kind == 'cylinder':
        return trimesh.creation.cylinder(radius=size[0], height=size[1], sections=32)
    if kind == 'capsule':
        return trimesh.creation.capsule(height=size[1], radius=size[0], count=(16, 16))
    if visual.mesh is None:
        return None
    try:
        mesh = trimesh.load(visual.mesh, force='mesh')
    except Exception:  # noqa: B902 - trimesh's loaders raise many types for a bad file
        return None
    mesh.apply_scale(np.asarray(size))
    return mesh


def stamp_text(stamp):
    """Return how the page gives a stamp [s]: simulated time as t, wall-clock time of day."""
    if stamp >= WALL_CLOCK_STAMPS:
        clock = datetime.datetime.fromtimestamp(stamp).strftime('%H:%M:%S.%f')[:-3]
        return f'at {clock} (wall clock)'
    return f'at t = {stamp:.3f} s'


class _Arm:
    """The viser meshes of one arm (actual or ghost) under ``prefix``."""

    def __init__(self, server, scene, prefix, opacity=None):
        self.scene, self.handles = scene, []
        for k, visual in enumerate(scene.visuals):
            mesh = _mesh(visual)
            if mesh is None:       # an unreadable mesh file: its link's segment stands in
                self.handles.append(None)
                continue
            colour = tuple(int(round(255 * c)) for c in visual.rgba[:3])
            self.handles.append(server.scene.add_mesh_simple(
                f'{prefix}/{k}', np.asarray(mesh.vertices, dtype=np.float32),
                np.asarray(mesh.faces, dtype=np.uint32), color=colour, opacity=opacity,
                flat_shading=False))

    def show(self, q):
        poses = self.scene.poses(q)
        wxyz = _wxyz(poses)
        for handle, T, quat in zip(self.handles, poses, wxyz):
            if handle is not None:
                handle.position, handle.wxyz = T[:3, 3], quat

    def remove(self):
        for handle in self.handles:
            if handle is not None:
                handle.remove()

    def set_visible(self, visible):
        for handle in self.handles:
            if handle is not None:
                handle.visible = visible


class ArmView:
    """
    A viser server showing one arm; every method may be called from any thread.

    Parameters
    ----------
    host, port : str, int
        Where the page is served (``http://host:port``); a port that is taken is an
        ``InputError`` (viser would quietly take the next one).
    title : str
        The panel's heading.
    interactive : bool
        Show the tip handle, joint sliders, push tool and buttons (False for a replay).

    Callbacks (set as attributes, each called from viser's threads): ``on_target(T)`` the tip
    handle released at pose T (4, 4, base frame); ``on_joint_goal(q)`` a slider moved;
    ``on_push(force)`` the push tool [N] (zero when released, or when the page holding it
    goes); ``on_cancel()``, ``on_reset()``; ``on_notice(key, line)`` a line for the log (a
    refusal, a released push; a burst of one ``key`` is for the caller to throttle), else a
    warning of this module's logger; ``on_page()`` a page connected.

    """

    def __init__(self, host='127.0.0.1', port=8080, title='robot_dynamics', interactive=True):
        import viser
        check_port(host, port)
        self.host = host
        self.on_notice = None
        with _handshakes_checked(self._handshake) as checked:
            self.server = viser.ViserServer(host=host, port=port, verbose=False)
        if self.server.get_port() != port or not checked:
            self.server.stop()
            raise InputError(f'cannot serve the view on {host}:{port}: ' + (
                'the port was taken meanwhile; choose another with --port' if checked else
                f'viser {viser.__version__} starts its websocket server in a way the view '
                'cannot check the Origin of'))
        # a frame that is no viser message ends its connection with a traceback from
        # websockets, a message viser's handlers cannot take with one from asyncio: one line
        logging.getLogger('websockets.server').addFilter(self._connection_failed)
        # (loop.set_exception_handler only stores the handler: safe from this thread)
        self.server.get_event_loop().set_exception_handler(self._loop_exception)
        self.server.on_client_connect(self._client_came)
        self.server.on_client_disconnect(self._client_gone)
        self.url = f'http://{host}:{port}'
        self.interactive = interactive
        self.on_target = self.on_joint_goal = self.on_push = None
        self.on_cancel = self.on_reset = self.on_page = None
        self._pusher = None         # the client id of the page holding a push
        self._lock = threading.RLock()
        self._model = self._arm = self._ghost = None
        self._path = collections.deque(maxlen=PATH_LENGTH)
        self._path_handle = self._waypoints = self._handle = self._grid = None
        self._tip_reference = None
        self._sliders, self._gui_robot = [], []
        self._slid = -np.inf        # when a slider was last moved on the page (monotonic, s)
        self.q = None
        server = self.server
        server.scene.set_up_direction('+z')
        # lights a browser without a GPU draws too: an environment map and shadows cost seconds
        # a frame in software WebGL, a hemisphere and the default lights milliseconds
        server.scene.configure_environment_map(None)
        server.scene.configure_default_lights(cast_shadow=False)
        server.scene.add_light_hemisphere('/light', sky_color=(255, 255, 255),
                                          ground_color=(150, 150, 150), intensity=HEMISPHERE)
        server.gui.add_markdown(f'**{title}**')
        self._status = server.gui.add_markdown('waiting for the robot description')
        self._positions = server.gui.add_markdown('')
        if interactive:
            cancel = server.gui.add_button('Cancel goal')
            reset = server.gui.add_button('Reset simulator')
            cancel.on_click(lambda _: self.on_cancel and self.on_cancel())
            reset.on_click(lambda _: self.on_reset and self.on_reset())
            self._push = server.gui.add_vector3('Push [N] (base axes)', (0.0, 0.0, 0.0),
                                                min=(-MAX_PUSH,) * 3, max=(MAX_PUSH,) * 3,
                                                step=1.0)
            push = server.gui.add_button('Push while held')
            # in the server's event loop, in the order the page sent them: a hold handled after
            # the release would push again
            push.on_hold(self._pushed)
            push.on_click(self._released)

    @property
    def model(self):
        """Return the :class:`RobotModel` drawn (None before :meth:`set_robot`)."""
        return self._model

    def set_robot(self, urdf, model=None):
        """Draw the arm of URDF text ``urdf`` (replacing any other); return its model."""
        model = RobotModel.from_urdf(urdf) if model is None else model
        scene = Scene.from_urdf(urdf, model)
        with self._lock:
            for part in (self._arm, self._ghost):
                if part is not None:
                    part.remove()
            others = [self._handle, self._path_handle, self._waypoints, self._grid,
                      self._tip_reference]
            for handle in self._sliders + self._gui_robot + others:
                if handle is not None:
                    handle.remove()
            self._model, self._path, self.q = model, collections.deque(maxlen=PATH_LENGTH), None
            size = 2.5 * reach(model)
            self._grid = self.server.scene.add_grid('/grid', width=size, height=size,
                                                    cell_size=size / 20)
            self._arm = _Arm(self.server, scene, '/arm')
            self._ghost = _Arm(self.server, scene, '/reference', opacity=GHOST_OPACITY)
            self._path_handle = self._waypoints = self._handle = self._tip_reference = None
            q0 = np.clip(np.zeros(model.dof), model.lower, model.upper)
            self._arm.show(q0)
            self._ghost.show(q0)
            position, target = camera_framing(model, q0, FOV)
            self.server.initial_camera.position = tuple(position)
            self.server.initial_camera.look_at = tuple(target)
            self.server.initial_camera.up = (0.0, 0.0, 1.0)
            self.server.initial_camera.fov = FOV
            for client in self.server.get_clients().values():
                client.camera.fov = FOV
                client.camera.position, client.camera.look_at = position, target
            self._sliders, self._gui_robot = [], []
            if self.interactive:
                self._add_controls(model, q0)
        return model

    def _add_controls(self, model, q0):
        scale = 0.15 * reach(model)
        T = model.fk(q0)
        self._handle = self.server.scene.add_transform_controls(
            '/tip_handle', scale=scale, disable_rotations=True, disable_sliders=True,
            depth_test=False, position=T[:3, 3])     # arrows along the base axes
        dragging = []
        self._handle.on_drag_start(lambda _: dragging.append(True))

        def released(_):
            dragging.clear()
            self._target_released(self._handle.position, q0)

        self._handle.on_drag_end(released)
        self._dragging = dragging
        folder = self.server.gui.add_folder('Joint goals')
        self._gui_robot.append(folder)
        with folder:
            for i, name in enumerate(model.joint_names):
                lo, hi = model.lower[i], model.upper[i]
                lo, hi = (lo, hi) if np.isfinite(lo) and np.isfinite(hi) else (-np.pi, np.pi)
                unit = 'm' if model.is_prismatic[i] else 'rad'
                slider = self.server.gui.add_slider(f'{name} [{unit}]', float(lo), float(hi),
                                                    step=(hi - lo) / 1000, initial_value=q0[i])
                slider.on_update(self._slider_moved)
                self._sliders.append(slider)

    def _target_released(self, position, q0):
        """Send the tip handle's ``position`` (3,) [m] as a target, when within the reach."""
        if self.on_target is None:
            return
        position = np.array(position, dtype=float)
        distance, bound = float(np.linalg.norm(position)), reach(self._model)
        if not distance <= bound:       # nan too
            self._notice('target', f'tip target {quoted(position.tolist(), QUOTED)} from the '
                         f"page refused: {distance:.4g} m from the base, beyond the arm's "
                         f'reach, {bound:.4g} m')
            return
        pose = np.eye(4)
        pose[:3, 3] = position
        pose[:3, :3] = self._model.fk(self.q if self.q is not None else q0)[:3, :3]
        self.on_target(pose)

    def _slider_moved(self, event):
        if event.client is None or self.on_joint_goal is None:    # set by the program
            return
        sliders = self._sliders
        try:
            q = slider_positions([s.value for s in sliders], [s.min for s in sliders],
                                 [s.max for s in sliders], self._model.joint_names)
        except InputError as exc:
            self._notice('slider', f'{exc} (from the page): refused')
            with self._lock:
                if self.q is not None:
                    self._set_sliders(self.q)
            return
        self._slid = time.monotonic()
        self.on_joint_goal(q)

    def _set_sliders(self, q):
        """Show ``q`` on the sliders (set here, they send no goal)."""
        for slider, value in zip(self._sliders, q):
            value = float(np.clip(value, slider.min, slider.max))
            if not abs(slider.value - value) <= 0.5 * slider.step:     # a nan shown too
                slider.value = value

    async def _pushed(self, event):
        if self.on_push is None:
            return
        try:
            force = push_force(self._push.value)
        except InputError as exc:
            self._notice('push', f'{exc} (from the page): refused')
            return
        self._pusher = event.client_id
        self.on_push(force)

    async def _released(self, event):
        self._pusher = None
        if self.on_push is not None:
            self.on_push(np.zeros(3))

    async def _client_came(self, client):
        if self.on_page is not None:
            self.on_page()

    async def _client_gone(self, client):
        if client.client_id != self._pusher:
            return
        self._pusher = None
        self._notice('released', 'the page holding the push closed: the push is released')
        if self.on_push is not None:
            self.on_push(np.zeros(3))

    def _handshake(self, connection, request):
        """Answer HTTP 403 to a websocket handshake from a page not the view's; else None."""
        headers = request.headers
        origin = headers.get('Origin')
        if headers.get('Upgrade', '').lower() != 'websocket' or origin_allowed(
                origin, headers.get('Host'), self.host):
            return None
        self._notice('origin', f'websocket from Origin {quoted(origin, QUOTED)} refused (HTTP '
                     f"403): not the view's page, http://{shortened(headers.get('Host'), QUOTED)}")
        return connection.respond(http.HTTPStatus.FORBIDDEN,
                                  "Forbidden: not the view's page (its Origin)\n")

    def _connection_failed(self, record):
        """Filter websockets' log: its traceback of a failed connection becomes one line."""
        if record.exc_info is None or record.getMessage() != 'connection handler failed':
            return True
        self._notice('frame', 'a websocket message that is no message of the view was refused, '
                     f'and its connection closed: {_error_text(record.exc_info[1])}')
        return False

    def _loop_exception(self, loop, context):
        """Say in one line what a handler raised for a message (the default for the rest)."""
        exc = context.get('exception')
        if exc is None:
            loop.default_exception_handler(context)
            return
        self._notice('message', f'a message from the page was refused: {_error_text(exc)}')

    def _notice(self, key, line):
        if self.on_notice is not None:
            self.on_notice(key, line)
        else:
            _log.warning(line)

    def show(self, q, stamp=None):
        """Draw the arm at ``q`` (n,) [rad or m]; ``stamp`` [s] is printed with the values."""
        with self._lock:
            if self._model is None:
                return
            q = np.asarray(q, dtype=float)
            moved = self.q is None or not np.array_equal(q, self.q)
            self.q = q
            text = ', '.join(f'{n} = {v:.5f}' for n, v in zip(self._model.joint_names, q))
            when = '' if stamp is None else f' {stamp_text(stamp)}'
            self._positions.content = f'joint positions{when}: {text}'
            if not moved:       # nothing to redraw (the page renders what changes)
                return
            if time.monotonic() - self._slid > SLIDERS_LEFT_ALONE:
                self._set_sliders(q)       # the sliders show where the arm is
            self._arm.show(q)
            tip = self._model.fk(q)
            self._path.append(tip[:3, 3])
            if self._handle is not None and not self._dragging:
                self._handle.position = tip[:3, 3]
            if len(self._path) > 1:
                points = np.array(self._path)
                segments = np.stack([points[:-1], points[1:]], axis=1)
                if self._path_handle is not None:
                    self._path_handle.points = segments
                else:
                    self._path_handle = self.server.scene.add_line_segments(
                        '/tip_path', segments, colors=(40, 40, 40),
                        thickness=0.004 * reach(self._model))

    def show_reference(self, q):
        """Draw the ghost arm at the reference ``q`` (n,); None: hide it (no joint reference)."""
        with self._lock:
            if self._model is not None:
                if q is not None:
                    self._ghost.show(np.asarray(q, dtype=float))
                self._ghost.set_visible(q is not None)

    def show_tip_reference(self, position):
        """Mark the tip's reference ``position`` (3,) [m, base frame]; None: no mark."""
        with self._lock:
            if self._model is None:
                return
            if position is None:
                if self._tip_reference is not None:
                    self._tip_reference.remove()
                    self._tip_reference = None
                return
            points = np.asarray(position, dtype=np.float32).reshape(1, 3)
            if self._tip_reference is None:
                self._tip_reference = self.server.scene.add_point_cloud(
                    '/tip_reference', points, colors=(30, 160, 60),
                    point_size=0.04 * reach(self._model), point_shape='circle')
            else:
                self._tip_reference.points = points

    def show_waypoints(self, qs):
        """Mark the tip at each of the goal's points ``qs`` (k, n); empty: none."""
        with self._lock:
            if self._model is None:
                return
            if self._waypoints is not None:
                self._waypoints.remove()
                self._waypoints = None
            qs = np.asarray(qs, dtype=float).reshape(-1, self._model.dof)
            if len(qs):
                points = self._model.fk(qs)[:, :3, 3].astype(np.float32)
                self._waypoints = self.server.scene.add_point_cloud(
                    '/waypoints', points, colors=(220, 30, 30),
                    point_size=0.03 * reach(self._model), point_shape='circle')

    def set_status(self, lines):
        """Show ``lines`` (a list of text lines) in the panel."""
        self._status.content = '  \n'.join(lines)

    def close(self):
        """Stop serving."""
        logging.getLogger('websockets.server').removeFilter(self._connection_failed)
        self.server.stop()
