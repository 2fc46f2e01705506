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

"""The suite's bound on a test (hung.py): a test held for good in C fails alone."""

import os
from pathlib import Path
import subprocess
import sys

HERE = Path(__file__).resolve().parent

#: Tests of a run under the bound: the first waits for good in C (a lock taken twice, as a
#: middleware's deadlock holds a thread), the second must still run.
HANGING = """
import threading


def test_held_in_c():
    lock = threading.Lock()
    lock.acquire()
    lock.acquire()


def test_after_it():
    assert True
"""


def test_a_test_held_in_c_fails_alone_with_its_stack(tmp_path):
    (tmp_path / 'test_hanging.py').write_text(HANGING)
    # one worker, a bound of 1 s instead of the suite's 600: the run's own subject
    proc = subprocess.run(
        [sys.executable, '-m', 'pytest', '-n', '1', '-p', 'hung', '-p', 'no:cacheprovider',
         '-o', 'hung_test_timeout=1', '--rootdir', str(tmp_path), str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, 'PYTHONPATH': str(HERE)})
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert 'Timeout (0:00:01)!' in output and 'in test_held_in_c' in output, output
    assert "crashed while running 'test_hanging.py::test_held_in_c'" in output, output
    assert '1 failed, 1 passed' in output, output
