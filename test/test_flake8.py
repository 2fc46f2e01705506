# Copyright 2017 Open Source Robotics Foundation, Inc.
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

from pathlib import Path
import subprocess
import sys

import pytest

REPO = Path(__file__).resolve().parents[1]
# Build and install output (pip's in-tree build, a colcon workspace at the repository root) is
# not ours to lint. Folders starting with '.' or '_' (.venv) are skipped by ament_flake8 itself.
EXCLUDES = [str(REPO / name) for name in ('build', 'install', 'log')]


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    # In a fresh interpreter: flake8 forks worker processes, and a fork of this process, which
    # has run DDS threads in the ROS tests, crashed in the child and left the pool waiting.
    # ament_flake8 looks for AMENT_IGNORE markers below the working directory.
    result = subprocess.run(
        [sys.executable, '-c', 'import sys; from ament_flake8.main import main; '
         'sys.exit(main(argv=sys.argv[1:]))', '.', '--exclude', *EXCLUDES],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, \
        'Found code style errors / warnings:\n' + result.stdout + result.stderr
