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
The README's bash blocks of the graph, run line by line as written (``test/readme.py``).

Each line a user runs in a terminal of its own: a bringup, a view or a recorder runs until
Ctrl-C (here: started, checked, then SIGINT, which must end it cleanly); a demo, a ``send`` or
a ``plot`` runs to its end and must succeed. What a line needs that the README assumes (a graph
already running for ``view`` and the recorder, a bag for ``plot``) is started or copied first.
Blocks that assume the same graph share it: the tip block's SCARA also serves the recorder's
and the view's lines, and the two-arms block's arms the recorder's line of a cell (each
graph a core while it runs). Lines for a ROS 2 distribution (``ros2 launch``) are not run here:
``test_launch`` checks the launch files. The view's default port is taken by one test at a
time on this machine.
"""

from pathlib import Path
import re
import shutil
import signal
import tempfile
import time
import urllib.request

from isolation import try_lock
from mcap.reader import make_reader
import msgspec
import pytest
from readme import amended, finished, readme_commands, started, TIMEOUT
from robot_dynamics import recordings
from view_page import CAMERA, PROTOCOL
import websockets.sync.client

pytestmark = pytest.mark.ros

#: What a demo line of a block is run with: a motion of 2 s instead of the default 8 s. A block
#: shows the demo beside another arm or with its view; the demo's own numbers at its default
#: are test_demo's, and each second of a 1 kHz graph over DDS costs these tests a core.
SHORT_DEMO = '--duration 2'
#: The right arm of the two-arms block, whose goal and the demo beside it must not end in a host
#: stall: lockstep paced to the wall clock (unpaced, an idle graph takes a core meanwhile).
PACED = '--lockstep -p simulator.realtime:=true'

#: The view's default address, which the README's commands use.
VIEW = 'http://127.0.0.1:8080'
CONTROLLER_STATE = '/controller/state'


def _stop(processes, proc):
    """Ctrl-C ``proc`` as a user does; it must end cleanly, with no traceback."""
    status = processes.stop(proc, signal.SIGINT, timeout=60.0)
    output = processes.output(proc)
    assert status == 0 and 'Traceback' not in output, output
    return output


def _topics(path):
    """Return the topics of an MCAP file's channels that carry messages."""
    with open(path, 'rb') as f:
        summary = make_reader(f).get_summary()
    return {summary.channels[c].topic for c, n in summary.statistics.channel_message_counts.items()
            if n}


@pytest.fixture
def view_port():
    """Hold the view's default port for this test (another run on the machine waits)."""
    lock = Path(tempfile.gettempdir()) / 'robot_dynamics_view_8080.lock'
    deadline = time.monotonic() + 2 * TIMEOUT
    while (handle := try_lock(lock)) is None:
        assert time.monotonic() < deadline, 'port 8080: held by another test run'
        time.sleep(0.5)
    with handle:
        yield VIEW


def _serves(url):
    """Return the page at ``url`` (it must answer)."""
    with urllib.request.urlopen(url, timeout=30.0) as response:
        assert response.status == 200
        return response.read()


def test_the_bringup_block_runs_as_written(processes, probe, tmp_path):
    activate, *bringups = readme_commands('robot-dynamics bringup --robot scara --lockstep')
    # the first line is the venv's activation, which every line here runs with
    assert activate.startswith('source .venv/bin/activate') and len(bringups) == 5
    for command in bringups:
        if '--record' in command:
            proc = _recording(processes, probe, tmp_path, command,
                              ('/joint_states', CONTROLLER_STATE))
        else:
            proc = started(processes, tmp_path, command)
        output = _stop(processes, proc)
        # stopping is no fault (in real time a host stall may be one before it, as on an arm)
        assert 'control of' in output, output
        assert '[ERROR]' not in output[output.index('stopping: sent the safe command'):], output
    # the recording of the third, readable and with the arm's topics
    assert {'/joint_states', CONTROLLER_STATE} <= _topics(tmp_path / 'run.mcap')
    assert recordings.read(tmp_path / 'run.mcap').tables['/joint_states'].messages


def test_the_two_arms_block_and_the_recording_of_both_run_as_written(processes, probe, tmp_path):
    commands = readme_commands('right_goal.yaml --namespace right')
    right, goal, send, demo, left, launch = commands
    assert launch.startswith('ros2 launch')       # needs a distribution: test_launch
    # The right arm on the demo's clock (lockstep paced to the wall clock): in real time a
    # host stall ends the goal, as on an arm (test_faults); whether one comes is the host's.
    arm = started(processes, tmp_path, amended(right, PACED))
    finished(processes, tmp_path, goal)
    assert 'succeeded' in finished(processes, tmp_path, send)
    output = finished(processes, tmp_path, amended(demo, SHORT_DEMO))
    assert 'scara: pick-and-place succeeded' in output and '/left/' in output, output
    left_arm = started(processes, tmp_path, left)
    # the recorder block's cell: these two arms in their namespaces, one recording
    *_, record_cell, plot_left = readme_commands('recorder_node --ros-args -p path:=cell.mcap')
    _recorded(processes, probe, tmp_path, record_cell,
              ('/left/joint_states', '/right/joint_states'))
    _stop(processes, left_arm)
    output = _stop(processes, arm)
    assert 'goal' in output and '/right/' in output, output
    assert {'/left/joint_states', '/right/joint_states'} <= _topics(tmp_path / 'cell.mcap')
    finished(processes, tmp_path, plot_left)
    assert (tmp_path / 'plots_left' / 'tracking.png').stat().st_size > 10000


def test_the_view_block_runs_as_written(processes, tmp_path, view_port):
    # (its third line, the view alone of a graph already running: on the tip block's graph)
    bringup, demo, _, replay = readme_commands('robot-dynamics view demo/demo.mcap')
    arm = started(processes, tmp_path, bringup, said=f'view: {view_port}')
    assert b'<html' in _serves(view_port).lower()
    _stop(processes, arm)
    # the demo with its view, its motion once a page is open (a program's, as a browser's
    # page connects: it sends its camera); its recording where make demo puts one, for the
    # replay
    proc = started(processes, tmp_path, amended(demo, SHORT_DEMO),
                   said='once a page of the view is open')
    assert 'demo: executing' not in processes.output(proc)
    with websockets.sync.client.connect(view_port.replace('http', 'ws'), open_timeout=60.0,
                                        subprotocols=PROTOCOL) as page:
        page.send(msgspec.msgpack.encode(CAMERA))
        assert proc.wait(TIMEOUT) == 0, processes.output(proc)
    output = processes.output(proc)
    assert f'view: {view_port}' in output and 'pick-and-place succeeded' in output, output
    assert output.index('once a page of the view is open') < output.index('demo: executing')
    [recording] = set(re.findall(r'recording to (\S+\.mcap)', output))
    (tmp_path / 'demo').mkdir()
    shutil.copy(recording, tmp_path / 'demo' / 'demo.mcap')
    _stop(processes, started(processes, tmp_path, replay, said=f'view: {view_port}'))


def _recording(processes, probe, folder, command, topics):
    """Start a recording ``command``; return it once it has recorded ``topics``."""
    proc = started(processes, folder, command, said=f'recording {topics[0]}')
    for topic in topics:
        said = f'{topic}: first message recorded'
        probe.wait_for(lambda: said in processes.output(proc), what=f'{topic} recorded')
    return proc


def _recorded(processes, probe, folder, command, topics):
    """Run a recorder until it has recorded ``topics``; stop it."""
    _stop(processes, _recording(processes, probe, folder, command, topics))


def test_the_tip_block_with_the_recorder_and_the_view_on_its_graph(processes, probe, tmp_path,
                                                                   view_port):
    bringup, goal, send, push = readme_commands('robot-dynamics send tip_goal.yaml')
    record, record_some, plot, plot_bag, *_ = readme_commands(
        'recorder_node --ros-args -p path:=cell.mcap')
    view = readme_commands('robot-dynamics view demo/demo.mcap')[2]
    # the graph the recorder's and the view's lines assume running is this block's
    assert bringup.startswith('robot-dynamics bringup --robot scara #')
    arm = started(processes, tmp_path, bringup)
    everything = ('/joint_states', CONTROLLER_STATE, '/robot_description')
    _recorded(processes, probe, tmp_path, record, everything)
    _recorded(processes, probe, tmp_path, record_some, everything[:2])
    alone = started(processes, tmp_path, view, said=f'view: {view_port}')
    _serves(view_port)
    _stop(processes, alone)
    finished(processes, tmp_path, goal)
    assert 'send: succeeded' in finished(processes, tmp_path, send)
    output = finished(processes, tmp_path, push)
    assert 'push: force [10.0, 0.0, 0.0] N' in output and 'push: released' in output, output
    output = _stop(processes, arm)
    assert 'goal' in output, output
    assert set(everything) <= _topics(tmp_path / 'run.mcap')
    assert _topics(tmp_path / 'states.mcap') == set(everything[:2])
    finished(processes, tmp_path, plot)
    assert (tmp_path / 'plots' / 'tracking.png').stat().st_size > 10000
    # a bag of an arm: here the recording above
    shutil.copy(tmp_path / 'run.mcap', tmp_path / 'bag_0.mcap')
    finished(processes, tmp_path, plot_bag)
