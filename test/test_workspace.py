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
The workspace paths documented for users of a ROS 2 distribution find both packages.

This repository is the package robot_dynamics, and robot_dynamics_interfaces sits inside it;
colcon and rosdep stop looking inside a folder that is a package, so the interfaces' folder is
given as a path of its own:

    rosdep install --from-paths src src/robot_dynamics/robot_dynamics_interfaces --ignore-src -y
    colcon build --base-paths src src/robot_dynamics/robot_dynamics_interfaces

The workspace here is ``src/robot_dynamics`` linked to this repository.
"""

import os
from pathlib import Path
import shutil
import subprocess
import sys

from catkin_pkg.packages import find_packages
import pytest

REPO = Path(__file__).resolve().parents[1]
BASE_PATHS = ['src', 'src/robot_dynamics/robot_dynamics_interfaces']
#: ``colcon list`` rows in dependency order: name, path, type.
EXPECTED = [
    ['robot_dynamics_interfaces', 'src/robot_dynamics/robot_dynamics_interfaces',
     '(ros.ament_cmake)'],
    ['robot_dynamics', 'src/robot_dynamics', '(ros.ament_python)'],
]


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / 'src').mkdir()
    (tmp_path / 'src' / 'robot_dynamics').symlink_to(REPO, target_is_directory=True)
    return tmp_path


def _colcon_list(workspace, *base_paths):
    """Return the rows of ``colcon list --topological-order`` over ``base_paths``."""
    colcon = Path(sys.executable).parent / 'colcon'
    colcon = str(colcon) if colcon.is_file() else shutil.which('colcon')
    assert colcon, 'colcon is missing: run make setup (the test extra installs it)'
    env = dict(os.environ, COLCON_HOME=str(workspace / 'colcon_home'))   # no user defaults
    result = subprocess.run(
        [colcon, '--log-base', str(workspace / 'log'), 'list', '--topological-order',
         '--base-paths', *base_paths],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return [line.split('\t') for line in result.stdout.splitlines()]


def test_colcon_finds_both_packages_in_dependency_order(workspace):
    assert _colcon_list(workspace, *BASE_PATHS) == EXPECTED


def test_colcon_does_not_look_inside_a_package(workspace):
    # why the interfaces' folder is documented as a base path of its own
    assert _colcon_list(workspace, 'src') == EXPECTED[1:]


def test_rosdep_paths_find_both_packages(workspace):
    # rosdep --from-paths crawls each path with catkin_pkg's find_packages
    found = {package.name for path in BASE_PATHS
             for package in find_packages(str(workspace / path)).values()}
    assert found == {'robot_dynamics', 'robot_dynamics_interfaces'}
    assert {p.name for p in find_packages(str(workspace / 'src')).values()} == {'robot_dynamics'}
