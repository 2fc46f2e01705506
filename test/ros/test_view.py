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
``robot-dynamics view`` in a real browser: headless Chromium (Debian's) driven by Playwright.

One graph for the module: ``bringup --robot scara --lockstep --view PORT --record FILE`` with the
simulator paced to the wall clock (deterministic, and at 1 kHz like an arm). The page is read
as a user sees it: its requests, the canvas' pixels (the links' colours, which
``robot_dynamics.scene.body_colour`` gives), the panel's text. With
``ROBOT_DYNAMICS_SCREENSHOTS`` set (``make screenshots``), the README's screenshots are written
into that folder.
"""

from collections import deque
import colorsys
import io
import os
from pathlib import Path
import re
import shutil
import signal
import sys
import threading
import time
from urllib.parse import urlparse
from urllib.request import urlopen

from control_msgs.action import FollowJointTrajectory
from isolation import CHROMIUM_ARGS, free_port
import numpy as np
import pytest
from robot_dynamics import recorded_motion, recordings, RobotModel
from robot_dynamics.ros.tools.definitions import TOPICS
from robot_dynamics.ros.wire.compat import ActionClient
from robot_dynamics.ros.wire.qos import DESCRIPTION_QOS
from robot_dynamics.scene import body_colour
from robot_dynamics.task_space import DEFAULT_STIFFNESS
from robot_dynamics_interfaces.msg import ControllerState
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectoryPoint

pytestmark = pytest.mark.ros

#: Where the README's screenshots are written: only when asked (`make screenshots` sets it to
#: docs/), so that a test run leaves the work tree as it was.
SCREENSHOTS = os.environ.get('ROBOT_DYNAMICS_SCREENSHOTS')
ROBOT = 'scara'
#: The page's canvas [px].
VIEWPORT = {'width': 800, 'height': 520}
#: Longest wait for the page [s]: the harness's limit for anything to happen (conftest.TIMEOUT).
FRAME_TIMEOUT = 120.0
#: How long a page left open may take to reach a restarted view before it is reloaded, as a
#: user would [s]. Alone it takes a second or two; it has taken no less than FRAME_TIMEOUT when
#: it never got there.
RECONNECT_TIMEOUT = 30.0
#: Pixels of a link's colour that make it "drawn".
MIN_PIXELS = 150
#: The bottom-left corner [px] where viser draws the axes' widget.
AXES_WIDGET = 100
# every element holding no canvas hidden (the panel, notifications), and shown again
HIDE_OVERLAYS = """() => document.querySelectorAll('body *').forEach(e => {
    if (e.tagName !== 'CANVAS' && !e.querySelector('canvas')) {
        e.dataset.viewTest = e.style.visibility; e.style.visibility = 'hidden'; } })"""
SHOW_OVERLAYS = """() => document.querySelectorAll('[data-view-test]').forEach(e => {
    e.style.visibility = e.dataset.viewTest; delete e.dataset.viewTest; })"""


def _chromium():
    found = shutil.which('chromium') or shutil.which('chromium-browser')
    if found is None:
        pytest.fail('Chromium is not installed: `make setup` installs it (apt-get install -y '
                    'chromium); the view tests drive the system Chromium through Playwright')
    return found


@pytest.fixture(scope='module')
def browser():
    from playwright.sync_api import sync_playwright
    executable = _chromium()
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=executable, headless=True,
                                     args=list(CHROMIUM_ARGS))
        yield chromium
        chromium.close()


class Page:
    """A page of the view and every request it made."""

    def __init__(self, browser, url):
        self.page = browser.new_page(viewport=VIEWPORT)
        # software WebGL on a host shared with the graph: a frame may take seconds
        self.page.set_default_timeout(FRAME_TIMEOUT * 1000)
        self.requests = []
        self.page.on('request', lambda request: self.requests.append(request.url))
        # the newest lines of the page's console, for a failure's message (viser logs its
        # connection attempts there)
        self.console = deque(maxlen=30)
        self.page.on('console', lambda message: self.console.append(message.text))
        self.page.goto(url)
        self.wait_text('joint positions')

    def text(self):
        return self.page.inner_text('body')

    def shows(self, pattern, timeout=FRAME_TIMEOUT):
        """Return the match of ``pattern`` in the page's text once there; None at ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(pattern, self.text())
            if found:
                return found
            time.sleep(0.2)
        return None

    def wait_text(self, pattern, timeout=FRAME_TIMEOUT):
        found = self.shows(pattern, timeout)
        if found:
            return found
        console = '\n'.join(self.console)
        pytest.fail(f'the page never showed {pattern!r}; it shows:\n{self.text()[:2000]}\n'
                    f'the newest lines of its console:\n{console}')

    def sliders(self):
        """Return the values of the joint sliders' number boxes (after the push's three)."""
        boxes = self.page.locator('input.mantine-NumberInput-input').all()
        return [float(box.input_value()) for box in boxes[3:]]

    def positions(self):
        """Return the joint positions the page shows, by name."""
        line = self.wait_text(r'joint positions[^:]*: ([^\n]*)').group(1)
        return {k: float(v) for k, v in re.findall(r'(\w+) = (-?[\d.]+)', line)}

    def pixels(self, path=None):
        """
        Return the 3D scene as RGB (H, W, 3) floats 0..1 (and save the page to ``path``).

        The scene alone: the panel and notifications hidden meanwhile, and the corner with the
        axes' widget (red, green, blue) blanked.
        """
        from PIL import Image
        if path is not None:
            Path(path).write_bytes(self.page.screenshot())
        self.page.evaluate(HIDE_OVERLAYS)
        try:
            png = self.page.screenshot()
        finally:
            self.page.evaluate(SHOW_OVERLAYS)
        image = np.asarray(Image.open(io.BytesIO(png)).convert('RGB'), dtype=float) / 255
        image[-AXES_WIDGET:, :AXES_WIDGET] = 1.0
        return image


def _screenshot(name):
    """Return where the README's screenshot ``name`` goes, or None when none is asked for."""
    if SCREENSHOTS is None:
        return None
    Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
    return Path(SCREENSHOTS) / name


def colour_mask(image, rgba):
    """Return where ``image`` has the hue of ``rgba`` (saturated pixels, any shading)."""
    hue = colorsys.rgb_to_hsv(*rgba[:3])[0]
    mx, mn = image.max(axis=-1), image.min(axis=-1)
    sat = np.where(mx > 0, (mx - mn) / np.maximum(mx, 1e-9), 0)
    r, g, b = np.moveaxis(image, -1, 0)
    d = np.maximum(mx - mn, 1e-9)
    h = np.where(mx == r, ((g - b) / d) % 6, np.where(mx == g, (b - r) / d + 2, (r - g) / d + 4))
    h = h / 6
    close = np.abs((h - hue + 0.5) % 1.0 - 0.5) < 0.04
    return close & (sat > 0.45) & (mx > 0.2)


@pytest.fixture(scope='module')
def graph(module_processes, module_probe, tmp_path_factory):
    """Bring up the scara with the view (and record); return a namespace of handles."""
    port = free_port()
    recording = tmp_path_factory.mktemp('view') / 'view.mcap'
    proc = module_processes.start('bringup', [
        'robot-dynamics', 'bringup', '--robot', ROBOT, '--lockstep', '-p',
        'simulator.realtime:=true', '--view', str(port), '--record', str(recording)])
    # the address once the view serves it: a page opened then finds it there
    url = f'http://127.0.0.1:{port}'
    module_probe.wait_for(lambda: f'view: {url} (the arm in a browser)'
                          in module_processes.output(proc), what="the view's address")
    assert urlopen(url, timeout=30).status == 200
    states = module_probe.collect(JointState, '/joint_states')
    action = ActionClient(module_probe.node, FollowJointTrajectory,
                          '/controller/follow_joint_trajectory')
    module_probe.wait_for(action.server_is_ready, what='the action server')
    module_probe.wait_for(lambda: len(states) > 0, what='joint states')
    module_probe.wait_for(lambda: '[view]: drawing' in module_processes.output(proc),
                          what='the view drawing the arm')

    class Graph:
        pass

    g = Graph()
    g.url, g.proc, g.states = url, proc, states
    g.action, g.recording = action, recording
    g.model = RobotModel.load(ROBOT)
    g.probe, g.processes = module_probe, module_processes
    return g


def _q(model, msg):
    return np.array(msg.position)[model.indices_in(msg.name)]


def _at_rest(g):
    msg = g.states[-1][0]
    return np.all(np.abs(np.array(msg.velocity)) < 1e-3)


def _move(g, q, duration=1.5):
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(g.model.joint_names)
    point = JointTrajectoryPoint(positions=[float(v) for v in q])
    point.time_from_start.sec = int(duration)
    point.time_from_start.nanosec = int(duration % 1 * 1e9)
    goal.trajectory.points = [point]
    future = g.action.send_goal_async(goal)
    g.probe.wait_for(future.done, what='the goal accepted')
    result = future.result().get_result_async()
    g.probe.wait_for(result.done, what='the goal result')
    g.probe.wait_for(lambda: _at_rest(g), what='the arm at rest')


@pytest.fixture(scope='module')
def page(browser, graph):
    p = Page(browser, graph.url)
    p.wait_text(r'controller: \*?\*?hold|controller: hold')
    _move(graph, [0.6, -1.2, 0.12])
    time.sleep(1.0)
    # software WebGL's notice (a browser with a GPU has none) out of the README's picture,
    # whenever it comes
    p.page.add_style_tag(content='.mantine-Notification-root { display: none; }')
    p.pixels(_screenshot('view_live.png'))
    yield p
    if not p.page.is_closed():
        p.page.close()


def test_page_loads_offline_and_draws_every_link(page):
    hosts = {urlparse(u).hostname for u in page.requests if urlparse(u).scheme in ('http',
                                                                                   'https', 'ws',
                                                                                   'wss')}
    assert hosts == {'127.0.0.1'}, f'requests left 127.0.0.1: {page.requests}'
    image = page.pixels()
    for body in (1, 2, 3):          # the upper arm, the forearm, the quill: orange, blue, green
        assert colour_mask(image, body_colour(body)).sum() > MIN_PIXELS, f'body {body}'


def test_page_holds_the_newest_joint_states(graph, page):
    graph.probe.wait_for(lambda: _at_rest(graph), what='the arm at rest')
    time.sleep(0.5)
    newest = _q(graph.model, graph.states[-1][0])
    shown = page.positions()
    assert np.max(np.abs([shown[n] - v for n, v in zip(graph.model.joint_names, newest)])) < 1e-3


def test_a_joint_goal_moves_the_drawn_arm(graph, page):
    before = colour_mask(page.pixels(), body_colour(2))
    q = _q(graph.model, graph.states[-1][0])
    _move(graph, q + np.array([-1.0, 0.0, 0.0]))
    time.sleep(1.0)
    after = colour_mask(page.pixels(), body_colour(2))
    moved = np.linalg.norm(np.mean(np.argwhere(after), axis=0)
                           - np.mean(np.argwhere(before), axis=0))
    assert moved > 20, f'the forearm moved {moved:.0f} px on the page'
    shown = page.positions()
    newest = _q(graph.model, graph.states[-1][0])
    assert abs(shown['shoulder'] - newest[0]) < 1e-3


def test_dragging_the_tip_handle_moves_the_simulated_tip_there(graph, page):
    # from where the tip can go 0.1 m either way along x; the handle's x arrow (drei's
    # PivotControls draw it in #ff2060) grabbed at its middle and pulled along itself on the
    # screen, so that only the tip's x changes
    _move(graph, [0.0, -1.6, 0.12])
    time.sleep(1.0)
    image = page.pixels()
    arrow = np.argwhere(colour_mask(image, (1.0, 0x20 / 255, 0x60 / 255, 1.0)))
    assert len(arrow) > 20, 'the tip handle is not drawn'
    centre = arrow.mean(axis=0)
    along = np.linalg.svd(arrow - centre, full_matrices=False)[2][0]
    tip_before = graph.model.fk(_q(graph.model, graph.states[-1][0]))[:3, 3]
    (y0, x0), (y1, x1) = centre, centre + 25 * along
    mouse = page.page.mouse
    mouse.move(x0, y0)
    mouse.down()
    for s in np.linspace(0, 1, 12)[1:]:
        mouse.move(x0 + s * (x1 - x0), y0 + s * (y1 - y0))
        time.sleep(0.03)
    mouse.up()
    sent = graph.probe.wait_for(
        lambda: re.findall(r'tip target \((\S+), (\S+), (\S+)\) m',
                           graph.processes.output(graph.proc)), what='the tip target sent')
    target = np.array([float(v) for v in sent[-1]])
    assert abs(target[0] - tip_before[0]) > 0.005
    np.testing.assert_allclose(target[1:], tip_before[1:], atol=1e-3)
    # the controller's compliant law takes /controller/target_pose: it holds the tip at the
    # target up to what the joints' Coulomb friction holds against its stiffness, |J^T+| f_c / K
    # per axis (2-4 mm on the SCARA), and friction creeps it closer slowly
    q = _q(graph.model, graph.states[-1][0])
    stiffness = np.array(DEFAULT_STIFFNESS[:3])
    reach = np.abs(np.linalg.pinv(graph.model.jacobian(q)[:3].T)) @ graph.model.friction \
        / stiffness + 1e-4

    def at_target():
        if not _at_rest(graph):
            return False
        error = graph.model.fk(_q(graph.model, graph.states[-1][0]))[:3, 3] - target
        return np.all(np.abs(error) <= reach)

    graph.probe.wait_for(at_target, what=f'the tip at the dragged target {target} (+-{reach} m)')
    # the panel gives the tip's tracking error (the joint reference is empty in task space)

    def panel_error():
        found = re.search(r'tracking error \(tip\): (\S+) m', page.text())
        return found is not None and float(found.group(1)) <= np.linalg.norm(reach)

    graph.probe.wait_for(panel_error, what="the panel's tip tracking error at the target")
    assert 'task space' in page.text() and 'nan' not in page.text()


def test_replay_shows_the_recorded_configuration(browser, graph, page):
    from playwright.sync_api import expect
    page.page.close()       # the live page done with: software WebGL renders one page at a time
    port = free_port()
    proc = graph.processes.start('replay', [sys.executable, '-m', 'robot_dynamics.cli', 'view',
                                            str(graph.recording), '--port', str(port)])
    try:
        graph.probe.wait_for(lambda: 'view: http' in graph.processes.output(proc),
                             what='the replay serving')
        p = Page(browser, f'http://127.0.0.1:{port}')
        # Play off, as a user clicks it: by its label (viser's own settings hold checkboxes too),
        # once the panel is built (a fresh-clone run beside another clicked while it grew, and
        # the box had moved out of the viewport after the scroll)
        p.wait_text(r'joint positions at t = \d')
        play = p.page.get_by_role('checkbox', name='Play')
        play.scroll_into_view_if_needed()
        expect(play).to_be_in_viewport(timeout=FRAME_TIMEOUT * 1000)
        play.click(force=True)          # Mantine draws its box over the input
        # the box shows the server's value: unchecked once the click went there and back
        expect(play).not_to_be_checked(timeout=FRAME_TIMEOUT * 1000)
        # and the server says it paused: a time it sent while playing came before, and would
        # overwrite a time typed later (a run beside another suite: 0.7 typed, 4.53 shown)
        p.wait_text(r's, paused')
        wanted = [TOPICS.controller_state, TOPICS.robot_description]
        recorded = recordings.read(graph.recording, wanted)
        track, _ = recorded_motion.tracking(recorded, TOPICS, graph.model)
        names = list(track.names)
        shown_q = []
        for t in (0.03 * track.t[-1], 0.6 * track.t[-1]):
            # the time as typed into the box (rounded: 14.54996 is typed, and shown, as 14.55)
            t = round(t, 4)
            k = max(int(np.searchsorted(track.t, t, side='right')) - 1, 0)
            # the Time slider's number box (viser labels it apart from the input)
            box = p.page.locator('input.mantine-NumberInput-input').last
            box.fill(f'{t:.4f}')
            box.press('Enter')
            p.wait_text(rf'joint positions at t = {track.t[k]:.3f} s')
            shown = p.positions()
            assert max(abs(shown[n] - track.q[k, names.index(n)]) for n in names) < 1e-3
            shown_q.append([shown[n] for n in names])
        # two times, two configurations: the timeline moved the arm
        assert np.max(np.abs(np.diff(shown_q, axis=0))) > 0.1
        p.pixels(_screenshot('view_replay.png'))
        p.page.close()
    finally:
        graph.processes.stop(proc)


def test_the_page_follows_a_new_robot_a_silent_node_and_a_restarted_view(browser, processes,
                                                                         module_probe):
    # a graph the test plays itself, in a namespace of its own beside the module's: a robot
    # description, joint states and a controller in safe mode, at 20 Hz, and no simulator
    ns, port = '/events', free_port()
    node = module_probe.node
    description = node.create_publisher(String, f'{ns}/robot_description', DESCRIPTION_QOS)
    publishers = {'state': node.create_publisher(JointState, f'{ns}/joint_states', 10),
                  'controller': node.create_publisher(ControllerState,
                                                      f'{ns}/controller/state', 10)}
    scara, planar = RobotModel.load('scara'), RobotModel.load('planar_2r')
    now = {'state': JointState(name=list(scara.joint_names), position=[0.1, -0.2, 0.05]),
           'controller': ControllerState(mode='safe', control_law='computed_torque')}
    stop = threading.Event()

    def publish():
        while not stop.wait(0.05):
            for key, msg in list(now.items()):
                if msg is not None:
                    publishers[key].publish(msg)

    def serve():
        view = processes.start('view', ['robot-dynamics', 'view', '--port', str(port),
                                        '--namespace', ns])
        module_probe.wait_for(lambda: 'view: http' in processes.output(view), what='the view')
        return view

    thread = threading.Thread(target=publish, daemon=True)
    thread.start()
    p = None
    try:
        description.publish(String(data=scara.to_urdf()))
        view = serve()
        p = Page(browser, f'http://127.0.0.1:{port}')
        p.wait_text(r'shoulder = 0\.10000, elbow = -0\.20000')
        # a controller in safe mode and a simulator that never spoke, said as such
        p.wait_text(r'controller: safe \(SAFE MODE\)')
        p.wait_text(r'simulator: silent \(dead or not started\)')
        # the sliders show where the arm is, and follow it
        np.testing.assert_allclose(p.sliders(), [0.1, -0.2, 0.05], atol=0.006)
        now['state'] = JointState(name=list(scara.joint_names), position=[0.4, -0.7, 0.2])
        module_probe.wait_for(lambda: np.allclose(p.sliders(), [0.4, -0.7, 0.2], atol=0.006),
                              what='the sliders where the arm is')
        # the controller dies: its panel says so within a second or two
        now['controller'] = None
        p.wait_text(r'controller: silent')
        # another robot's description: redrawn, with its joints
        description.publish(String(data=planar.to_urdf()))
        now['state'] = JointState(name=list(planar.joint_names), position=[0.3, 0.4])
        p.wait_text(r'joint1 = 0\.30000, joint2 = 0\.40000')
        assert set(p.positions()) == {'joint1', 'joint2'}
        assert "drawing 'planar_2r'" in processes.output(view)
        # the view restarts: the page left open reconnects and draws again
        assert processes.stop(view, signal.SIGINT) == 0
        assert 'Traceback' not in processes.output(view)
        assert 'never retrieved' not in processes.output(view)
        now['state'] = JointState(name=list(planar.joint_names), position=[0.7, 0.4])
        p.console.clear()
        view = serve()
        moved = r'joint1 = 0\.70000, joint2 = 0\.40000'
        if p.shows(moved, RECONNECT_TIMEOUT) is None:
            # beside another suite viser's client has (a) tried for the whole wait, each try
            # closed by the page (1006) before its handshake was answered: viser's page tries
            # again every second while it has the focus, each try closing the one before, so a
            # view slower than that to answer is not reached (2 of 4 runs), or (b) closed its own
            # new connection (a retry overtaking its "Connected!"). Either way its console ends
            # in a close after its last "Connected!", if any, and a user reloads the page (the
            # README says so)
            lines = list(p.console)
            connected = max((k for k, line in enumerate(lines) if line.startswith('Connected!')),
                            default=-1)
            assert any(line.startswith('Disconnected!') for line in lines[connected + 1:]), \
                '\n'.join(lines)
            p.page.reload()
            p.wait_text(moved)
    finally:
        stop.set()
        thread.join()
        if p is not None:
            p.page.close()
