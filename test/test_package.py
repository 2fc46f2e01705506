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

"""Packaging checks: package.xml, the installed ament index entry, the console script."""

import importlib.metadata
import os
from pathlib import Path
import subprocess
import sys
import xml.etree.ElementTree as ET

from ament_index_python.packages import get_package_share_directory
import pytest

PACKAGE = 'robot_dynamics'
REPO = Path(__file__).resolve().parents[1]

EXEC_DEPENDS = {
    'rclpy', 'sensor_msgs', 'trajectory_msgs', 'std_msgs', 'geometry_msgs',
    'visualization_msgs', 'python3-numpy', 'python3-scipy', 'python3-yaml', 'urdfdom_py',
    'launch', 'launch_ros', 'ament_index_python', 'mcap-ros2-support',
}
TEST_DEPENDS = {
    'python3-pytest', 'ament_copyright', 'ament_flake8', 'ament_pep257', 'ament_xmllint',
}
# The folders that setup.py installs to share/robot_dynamics/<folder>, with their patterns.
SHARE_GLOBS = {'launch': '*.launch.py', 'config': '*.yaml', 'urdf': '*.urdf'}


@pytest.fixture(scope='module')
def manifest():
    return ET.parse(REPO / 'package.xml').getroot()


def _tags(root, *tags):
    return {el.text.strip() for tag in tags for el in root.findall(tag)}


def test_package_xml_header(manifest):
    assert manifest.tag == 'package'
    assert manifest.get('format') == '3'
    assert manifest.findtext('name') == PACKAGE
    assert manifest.findtext('export/build_type') == 'ament_python'
    assert manifest.findtext('license') == 'Apache-2.0'


def test_package_xml_exec_depends(manifest):
    declared = _tags(manifest, 'depend', 'exec_depend')
    assert EXEC_DEPENDS <= declared, f'missing exec_depend: {sorted(EXEC_DEPENDS - declared)}'


def test_package_xml_test_depends(manifest):
    declared = _tags(manifest, 'depend', 'test_depend')
    assert TEST_DEPENDS <= declared, f'missing test_depend: {sorted(TEST_DEPENDS - declared)}'


def test_installed_version_matches_package_xml(manifest):
    assert importlib.metadata.version(PACKAGE) == manifest.findtext('version')


def test_share_directory_holds_package_files(monkeypatch):
    # `make` sets AMENT_PREFIX_PATH to the venv; set it here too, so that this test also runs
    # from a plain `.venv/bin/python -m pytest`.
    prefixes = [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    if sys.prefix not in prefixes:
        monkeypatch.setenv('AMENT_PREFIX_PATH', os.pathsep.join([sys.prefix, *prefixes]))
    share = Path(get_package_share_directory(PACKAGE))
    assert (share / 'package.xml').read_text() == (REPO / 'package.xml').read_text(), \
        f'share/{PACKAGE}/package.xml is out of date: run make setup'
    for folder, pattern in SHARE_GLOBS.items():
        in_repo = sorted(p.name for p in (REPO / folder).glob(pattern))
        installed = sorted(p.name for p in (share / folder).glob(pattern))
        assert installed == in_repo, f'share/{PACKAGE}/{folder} is out of date: run make setup'


def test_console_script_installed():
    script = Path(sys.executable).parent / 'robot-dynamics'
    assert script.is_file(), f'{script} is missing: run make setup'
    assert os.access(script, os.X_OK)


def test_import_does_not_load_rclpy():
    code = 'import sys, robot_dynamics; sys.exit(int("rclpy" in sys.modules))'
    result = subprocess.run(
        [sys.executable, '-c', code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr or 'import robot_dynamics imported rclpy'
