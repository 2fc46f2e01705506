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
What a page of the view may do, checked in-process on a real viser server (no browser, no DDS).

The websocket is opened with websockets' own client, as a page or another program would: the
handshake's Origin, frames that are no viser message, a value viser cannot take; the push, the
sliders and the tip handle through the view's handlers, with what reaches the callbacks counted.
"""

import asyncio
import datetime
import queue
import socket
from types import SimpleNamespace

import msgspec
import numpy as np
import pytest
from robot_dynamics import InputError, RobotModel
from robot_dynamics.scene import reach
from robot_dynamics.viewer import (ArmView, MAX_PUSH, origin_allowed, push_force, slider_positions,
                                   stamp_text)
from view_page import CAMERA, PROTOCOL
from websockets.exceptions import ConnectionClosed, InvalidStatus
import websockets.sync.client

#: Longest wait [s] for the server's answer: a bound for a failing test, not a measurement.
ANSWER = 30.0


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture
def view():
    """Serve the planar 2R, interactive; put its notices and callbacks' calls in queues."""
    v = ArmView('127.0.0.1', _free_port())
    v.notices, v.pushes, v.goals, v.targets = (queue.Queue() for _ in range(4))
    v.on_notice = lambda key, line: v.notices.put((key, line))
    v.on_push, v.on_joint_goal, v.on_target = v.pushes.put, v.goals.put, v.targets.put
    v.set_robot(RobotModel.load('planar_2r').to_urdf())
    yield v
    v.close()


def _connect(v, **headers):
    return websockets.sync.client.connect(v.url.replace('http', 'ws'), subprotocols=PROTOCOL,
                                          open_timeout=ANSWER, **headers)


def _until_closed(connection):
    with pytest.raises(ConnectionClosed):
        while True:
            connection.recv(timeout=ANSWER)


@pytest.mark.parametrize('origin, host, served, allowed', [
    (None, '127.0.0.1:8080', '127.0.0.1', True),                 # no browser
    ('http://127.0.0.1:8080', '127.0.0.1:8080', '127.0.0.1', True),
    ('http://localhost:9000', 'localhost:9000', '127.0.0.1', True),    # an SSH tunnel's port
    ('http://[::1]:8080', '[::1]:8080', '::1', True),
    ('http://10.1.2.3:8080', '10.1.2.3:8080', '0.0.0.0', True),
    ('http://evil.example.com', '127.0.0.1:8080', '127.0.0.1', False),
    ('http://evil.example.com:8080', 'evil.example.com:8080', '0.0.0.0', False),   # rebinding
    ('https://127.0.0.1:8080', '127.0.0.1:8080', '127.0.0.1', False),
    ('http://127.0.0.1:8081', '127.0.0.1:8080', '127.0.0.1', False),
    ('null', '127.0.0.1:8080', '127.0.0.1', False),              # a sandboxed or file page
    ('http://127.0.0.1:x', '127.0.0.1:x', '127.0.0.1', False),
    ('http://127.0.0.1:8080', None, '127.0.0.1', False)])
def test_origin_allowed_only_for_the_views_own_page(origin, host, served, allowed):
    assert origin_allowed(origin, host, served) is allowed


def test_a_websocket_from_another_page_gets_403_and_one_line(view):
    # was accepted: a page of evil.example.com open in the browser moved the arm
    with pytest.raises(InvalidStatus) as info:
        _connect(view, origin='http://evil.example.com')
    assert info.value.response.status_code == 403
    key, line = view.notices.get(timeout=ANSWER)
    assert key == 'origin' and "'http://evil.example.com'" in line and '403' in line
    with _connect(view, origin=view.url):         # the view's own page
        pass
    with _connect(view):                          # no Origin: not a browser
        pass
    assert view.notices.empty()


@pytest.mark.parametrize('frame', ['text, not bytes', b'\xc1 not msgpack',
                                   msgspec.msgpack.encode({'type': 'NoSuchMessage'})])
def test_a_frame_that_is_no_message_closes_its_connection_in_one_line(view, frame):
    with _connect(view, origin=view.url) as page:
        page.send(frame)
        _until_closed(page)
    key, line = view.notices.get(timeout=ANSWER)
    assert key == 'frame' and 'refused' in line and '\n' not in line
    with _connect(view, origin=view.url):         # the view serves on
        pass


def test_a_slider_value_viser_cannot_take_is_one_line(view):
    update = {'type': 'GuiUpdateMessage', 'uuid': view._sliders[0]._impl.uuid,
              'updates': {'value': 'abc'}}
    with _connect(view, origin=view.url) as page:
        page.send(msgspec.msgpack.encode(update))
        key, line = view.notices.get(timeout=ANSWER)
    assert key == 'message' and "could not convert string to float: 'abc'" in line
    assert view.goals.empty()


@pytest.mark.parametrize('values, words', [
    ([np.nan, 0.0], ['joint1 = nan']), ([0.0, np.inf], ['joint2 = inf']),
    ([9.0, 0.0], ['joint1 = 9', 'within']), (['abc', 0.0], ['not numbers', 'abc'])])
def test_slider_values_outside_the_sliders_are_refused(view, values, words):
    model = view.model
    with pytest.raises(InputError) as info:
        slider_positions(values, model.lower, model.upper, model.joint_names)
    assert all(w in str(info.value) for w in words), str(info.value)


def test_a_nan_slider_sends_no_goal_and_the_sliders_show_the_arm(view):
    # was sent on as a goal (duration inf: a traceback in the view's log)
    view.show([0.1, 0.2])
    view._sliders[0]._impl.value = np.nan       # as viser sets it from a page's message
    view._slider_moved(SimpleNamespace(client=object()))
    assert view.goals.empty() and view.notices.get_nowait()[0] == 'slider'
    assert [s.value for s in view._sliders] == pytest.approx([0.1, 0.2], abs=1e-2)
    view._slider_moved(SimpleNamespace(client=object()))
    assert view.goals.get_nowait() == pytest.approx([0.1, 0.2], abs=1e-2)


def test_a_push_is_bounded_and_released_when_its_page_goes(view):
    # was published as it came: 1e9 N, and 30 N held on after the page had gone
    assert MAX_PUSH == 1000.0
    assert np.array_equal(push_force([600.0, 0.0, 800.0]), [600.0, 0.0, 800.0])   # 1000 N
    with pytest.raises(InputError, match='1e[+]09 N is above the bound, 1000 N'):
        push_force([1e9, 0.0, 0.0])
    with pytest.raises(InputError, match='non-finite'):
        push_force([np.nan, 0.0, 0.0])
    view._push._impl.value = (1e9, 0.0, 0.0)
    asyncio.run(view._pushed(SimpleNamespace(client_id=3)))
    assert view.pushes.empty() and view.notices.get_nowait()[0] == 'push'
    view._push._impl.value = (30.0, 0.0, 0.0)
    asyncio.run(view._pushed(SimpleNamespace(client_id=3)))
    assert np.array_equal(view.pushes.get_nowait(), [30.0, 0.0, 0.0])
    asyncio.run(view._client_gone(SimpleNamespace(client_id=4)))      # another page
    assert view.pushes.empty()
    asyncio.run(view._client_gone(SimpleNamespace(client_id=3)))      # the pushing page
    assert np.array_equal(view.pushes.get_nowait(), np.zeros(3))
    assert view.notices.get_nowait()[0] == 'released'


def test_a_tip_target_beyond_the_reach_is_refused(view):
    view._target_released((10 * reach(view.model), 0.0, 0.0), np.zeros(2))
    view._target_released((np.nan, 0.0, 0.0), np.zeros(2))
    assert view.targets.empty()
    assert [view.notices.get_nowait()[0] for _ in range(2)] == ['target'] * 2
    view._target_released((1.0, 0.0, 0.5), np.zeros(2))
    assert view.targets.get_nowait()[:3, 3] == pytest.approx([1.0, 0.0, 0.5])


def test_a_page_counts_once_it_sends_its_camera(view):
    # as a browser's page does when it first renders (demo --wait-for-view waits for it)
    pages = queue.Queue()
    view.on_page = lambda: pages.put('open')
    with _connect(view, origin=view.url) as page:
        page.send(msgspec.msgpack.encode(CAMERA))
        assert pages.get(timeout=ANSWER) == 'open'


def test_stamps_read_as_simulated_time_or_the_wall_clock():
    assert stamp_text(12.3456) == 'at t = 12.346 s'
    # 2026-12-07 14:03:22.125 local time, from its Unix time
    wall = datetime.datetime(2026, 12, 7, 14, 3, 22, 125000).timestamp()
    assert stamp_text(wall) == 'at 14:03:22.125 (wall clock)'


def test_without_a_joint_reference_the_ghost_hides_and_the_tip_reference_shows(view):
    view.show_reference(None)
    assert all(not h.visible for h in view._ghost.handles if h is not None)
    view.show_tip_reference([1.0, 0.0, 0.5])
    np.testing.assert_array_equal(view._tip_reference.points, [[1.0, 0.0, 0.5]])
    view.show_reference([0.1, 0.2])
    assert all(h.visible for h in view._ghost.handles if h is not None)
    view.show_tip_reference(None)
    assert view._tip_reference is None
