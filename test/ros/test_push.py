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
``robot-dynamics push`` against the test's own subscriber.

The test subscribes where the simulator would; the command's wrenches, their order and the
release (also on Ctrl-C) are what the simulator would take. The installed console script runs
once end to end; Ctrl-C (a real SIGINT) and no subscriber run the command's handler in this
process, still over DDS. A bad force, refused by the parser: test/core/test_send_push_files.py.
"""


from geometry_msgs.msg import WrenchStamped
from interrupt import interrupted
import pytest

TIMEOUT = 60.0


def _wrenches(collected):
    return [([m.wrench.force.x, m.wrench.force.y, m.wrench.force.z],
             [m.wrench.torque.x, m.wrench.torque.y, m.wrench.torque.z], m.header.frame_id)
            for m, _ in collected]


@pytest.mark.ros
def test_push_applies_the_wrench_then_releases_it(probe, processes):
    collected = probe.collect(WrenchStamped, '/left/simulator/external_wrench')
    proc = processes.start('push', ['robot-dynamics', 'push', '--force', '0,10,0', '--torque',
                                    '0,0,0.5', '--frame', 'link2', '--duration', '0.2',
                                    '--namespace', 'left'])
    proc.wait(TIMEOUT)
    output = processes.output(proc)
    assert proc.returncode == 0, output
    assert 'push: force [0.0, 10.0, 0.0] N, torque [0.0, 0.0, 0.5] N m at link2 for 0.2 s ' \
        'on /left/simulator/external_wrench' in output and 'push: released' in output
    probe.wait_for(lambda: len(collected) == 2, what='the push and its release')
    assert _wrenches(collected) == [([0.0, 10.0, 0.0], [0.0, 0.0, 0.5], 'link2'),
                                    ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 'link2')]


@pytest.mark.ros
def test_ctrl_c_ends_the_push_early_and_releases_it(probe, here):
    collected = probe.collect(WrenchStamped, '/simulator/external_wrench')
    # interrupted once the push is applied (it says so after publishing it), not once this
    # probe has the push's message (beside another suite it did not have it in 60 s); the
    # Ctrl-C taken by another thread than the push's (interrupted's), which a push that waited
    # its 600 s in one piece heard only at their end (beside another suite, on Jazzy)
    status, output = interrupted(lambda: here('push', '--force', '20,0,0', '--duration', '600'),
                                 lambda: 'push: force' in here.out.getvalue())
    assert status == 130, output
    probe.wait_for(lambda: collected and _wrenches(collected)[-1] == (
        [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], ''), what='the release')


@pytest.mark.ros
def test_push_without_a_simulator(here):
    status, output = here('push', '--force', '1,0,0', '--topic', '/nowhere/external_wrench',
                          '--timeout', '1')
    assert status == 1
    assert 'nothing subscribes to /nowhere/external_wrench within 1 s' in output
