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

"""The scripts in examples/ run and print the numbers they promise."""

from pathlib import Path
import re
import subprocess
import sys

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / 'examples'


def run(name):
    proc = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True,
                          text=True, timeout=300, cwd=EXAMPLES.parent)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def numbers(text):
    return [float(x) for x in re.findall(r'[-+]?\d+\.\d+(?:e[-+]?\d+)?', text)]


def test_every_example_is_tested():
    assert sorted(p.name for p in EXAMPLES.glob('*.py')) == sorted(
        ['computed_torque.py', 'forward_kinematics.py', 'identify_payload.py',
         'inverse_dynamics.py', 'inverse_kinematics.py'])


def test_forward_kinematics_prints_the_closed_form_determinant():
    out = run('forward_kinematics.py')
    det, closed_form = numbers(out.split('det J =')[1])
    assert det == pytest.approx(closed_form, abs=1e-6) and det != 0.0


def test_inverse_dynamics_prints_the_seed_vector():
    out = run('inverse_dynamics.py')
    assert re.search(r'\[\[13\.\s+3\.\]\s+\[ ?3\.\s+2\.\]\]', out)      # Hayes §5.4
    tau = numbers(out.split('inverse dynamics tau [N m]:')[1].splitlines()[0])
    assert tau == pytest.approx([23.6264303840, 1.2320508076], abs=1e-6)   # seed vectors B3


def test_inverse_kinematics_solutions_reproduce_the_target():
    out = run('inverse_kinematics.py')
    errors = [float(e) for e in re.findall(r'fk error ([0-9.e+-]+)', out)]
    assert errors and max(errors) < 1e-9
    assert 'numeric: success=True' in out


def test_computed_torque_tracks_to_a_hundredth_of_a_milliradian():
    out = run('computed_torque.py')
    rms = float(re.search(r'RMS tracking error ([0-9.e+-]+) rad', out).group(1))
    assert 0.0 < rms < 1e-5


def test_identify_payload_recovers_the_payload_and_tracks_with_it():
    out = run('identify_payload.py')

    def row(prefix):
        line = next(line for line in out.splitlines() if line.startswith(prefix))
        return np.array(numbers(line.split(':', 1)[1]))

    nominal = row('gravity torque at the start, nominal model')
    payload = row('gravity torque at the start, with the payload model')
    identified = row('gravity torque at the start, identified model')
    # the payload adds 15 N m at the shoulder and 9 N m at the elbow; identified within 1 %
    assert payload[1] - nominal[1] > 10.0
    np.testing.assert_allclose(identified[1:3], payload[1:3], rtol=0.01)
    held_nominal = row('held-out rms torque error, nominal model')
    held_identified = row('held-out rms torque error, identified model')
    assert np.all(held_identified[:3] < 0.1 * held_nominal[:3])
    tracking = {label: numbers(line.split('rms tracking error')[1])[0]
                for label in ('nominal', 'identified', 'exact')
                for line in out.splitlines() if f'with the {label} model' in line}
    assert tracking['identified'] < 0.01 * tracking['nominal']
    assert tracking['identified'] < 3.0 * tracking['exact']
