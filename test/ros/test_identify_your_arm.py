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
The arm's own dynamics with the command line, over ROS: identify a payload the model lacks.

The simulator carries a payload at the tip that the robot description lacks ("the real arm"
against what the controller believes). A user's workflow, end to end on one bringup: excite,
record (``bringup --record``), send, identify; the identified URDF's torques are the payload
plant's and it predicts held-out torques ten times better than the recorded description. On the
graph's default clock, lockstep paced to the wall clock: the numbers do not depend on the
machine's load, and the loop asks a busy host for no more than real time (unpaced, it took both
cores, and a controller that the host then did not run for a second lost its goal). What the
identified model and the adaptive law do for the tracking, in the nodes' loops in one process:
test/core/test_graph_identification.py.
"""

import json
import signal

import numpy as np
import pytest
from robot_dynamics import RobotModel
from robot_dynamics.closed_loop import with_payload
from robot_dynamics_interfaces.msg import ControllerState

pytestmark = pytest.mark.ros

#: The payload at the tip of the planar 2R [kg] (its tip origin), unknown to the description.
PAYLOAD_KG = 1.5
TIMEOUT = 600.0
RUNNING = 'running; Ctrl-C stops every node'


def _finished(processes, proc, timeout=TIMEOUT):
    """Wait for ``proc`` to exit; return its output, failing the test on a non-zero status."""
    status = proc.wait(timeout)
    output = processes.output(proc)
    assert status == 0, output
    return output


def _bringup(processes, probe, *extra):
    """Start ``bringup`` of the planar 2R with the payload; wait until it holds."""
    states = probe.collect(ControllerState, '/controller/state')
    proc = processes.start('bringup', [
        'robot-dynamics', 'bringup', '--robot', 'planar_2r', '--processes',
        '-p', f'simulator.payload_mass:={PAYLOAD_KG}', *extra])
    probe.wait_for(lambda: RUNNING in processes.output(proc) or proc.poll() is not None,
                   timeout=TIMEOUT, what='bringup')
    assert proc.poll() is None, processes.output(proc)
    probe.wait_for(lambda: states and states[-1][0].mode == 'hold', what='the arm held')
    return proc


def _stop(processes, proc):
    assert processes.stop(proc, signal.SIGINT, timeout=60.0) == 0, processes.output(proc)


def test_identify_a_payload_from_a_recording_of_the_graph(processes, probe, tmp_path):
    model = RobotModel.load('planar_2r')
    excitation, recording = tmp_path / 'excitation.yaml', tmp_path / 'run.mcap'
    identified, report = tmp_path / 'identified.urdf', tmp_path / 'identified.json'
    _finished(processes, processes.start('excite', [
        'robot-dynamics', 'excite', '--robot', 'planar_2r', '--duration', '10', '--out',
        str(excitation)]))
    bringup = _bringup(processes, probe, '--record', str(recording))
    _finished(processes, processes.start('send', ['robot-dynamics', 'send', str(excitation)]))
    _stop(processes, bringup)
    output = _finished(processes, processes.start('identify', [
        'robot-dynamics', 'identify', str(recording), '--out', str(identified), '--report',
        str(report)]))
    figures = json.loads(report.read_text())['held_out_rms_torque_error']
    recorded, found = figures['recorded_model_overall'], figures['identified_model_overall']
    print(f'held-out rms torque error [N m]: recorded model {recorded:.3g}, '
          f'identified {found:.3g}')
    assert recorded >= 10.0 * found, output
    # the payload found again, as far as the dynamics tell it (the base parameters): the
    # identified model's torques are those of the arm with its payload
    arm, plant = RobotModel.from_urdf(str(identified)), with_payload(model, PAYLOAD_KG)
    rng = np.random.default_rng(7)
    q, qd, qdd = (rng.uniform(-2.0, 2.0, (200, model.dof)) for _ in range(3))
    truth = plant.inverse_dynamics(q, qd, qdd)
    assert np.abs(arm.inverse_dynamics(q, qd, qdd) - truth).max() < 0.02 * np.abs(truth).max()
