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
Packaging checks: package.xml, the installed ament index entry, the console script.

Also the layout rule of the ROS 2 side: only ``robot_dynamics/ros/`` imports ROS packages
(rclpy, message, service and interface packages, launch, ament_index_python), so the library
works without ROS. One exception, decided here: ``ament_index_python`` may be imported inside
``try: ... except ImportError:`` (robots.py uses it to find the data folder of a colcon
install, and finds it without it otherwise). The command line reaches ``robot_dynamics.ros``
only inside the function of its ``bringup`` subcommand, never at import time.
"""

import ast
import importlib.metadata
import json
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
    'rclpy', 'robot_dynamics_interfaces', 'rcl_interfaces', 'builtin_interfaces', 'action_msgs',
    'rosgraph_msgs', 'std_srvs', 'sensor_msgs', 'trajectory_msgs', 'std_msgs', 'geometry_msgs',
    'visualization_msgs', 'diagnostic_msgs', 'python3-numpy', 'python3-scipy', 'python3-numba',
    'python3-yaml', 'python3-sympy',
    'urdfdom_py', 'launch', 'launch_ros', 'ament_index_python', 'mcap-ros2-support',
}
TEST_DEPENDS = {
    'python3-pytest', 'ament_copyright', 'ament_flake8', 'ament_pep257', 'ament_xmllint',
}
LIBRARY = REPO / PACKAGE
ROS_SUBPACKAGE = LIBRARY / 'ros'
#: Library modules outside robot_dynamics/ros.
LIBRARY_FILES = sorted(p for p in LIBRARY.rglob('*.py') if ROS_SUBPACKAGE not in p.parents)
ROS_TOP_LEVEL = {'rclpy', 'launch', 'launch_ros', 'ament_index_python'}
ROS_SUFFIXES = ('_msgs', '_srvs', '_interfaces')   # rosgraph_msgs, std_srvs, rcl_interfaces, ...
#: ROS packages that may be imported outside robot_dynamics/ros when guarded by ImportError.
GUARDED_ALLOWED = {'ament_index_python'}
# The folders that setup.py installs to share/robot_dynamics/<folder>, with their patterns.
SHARE_GLOBS = {'launch': ('*.launch.py',), 'config': ('*.yaml',),
               'config/hardware': ('*.yaml', '*.xacro'), 'config/moveit': ('*.yaml',),
               'urdf': ('*.urdf',),
               'rviz': ('*.rviz',), 'foxglove': ('*.json',)}


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
    for folder, patterns in SHARE_GLOBS.items():
        in_repo = sorted(p.name for pattern in patterns for p in (REPO / folder).glob(pattern))
        installed = sorted(p.name for pattern in patterns
                           for p in (share / folder).glob(pattern))
        assert in_repo, f'{folder}: nothing to install'
        assert installed == in_repo, f'share/{PACKAGE}/{folder} is out of date: run make setup'


def test_console_script_installed():
    script = Path(sys.executable).parent / 'robot-dynamics'
    assert script.is_file(), f'{script} is missing: run make setup'
    assert os.access(script, os.X_OK)


def _is_ros(module):
    top = module.split('.')[0]
    return top in ROS_TOP_LEVEL or top.endswith(ROS_SUFFIXES)


def _catches_import_error(handler):
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(getattr(name, 'id', None) in ('ImportError', 'ModuleNotFoundError')
               for name in names)


def _imports(path):
    """
    Return the imports of ``path`` as ``(line, module, where)`` tuples.

    ``module`` is absolute (relative imports resolved against the package); ``where`` is
    ``'guarded'`` inside a ``try`` that catches ImportError, else ``'function'`` inside a
    function, else ``'module'``.
    """
    package = '.'.join(path.relative_to(REPO).with_suffix('').parts[:-1])
    found = []

    def visit(node, where):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, where) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit('.', node.level - 1)[0] if node.level else ''
            module = '.'.join(filter(None, [base, node.module]))
            if node.module is None:   # from . import x
                found.extend((node.lineno, f'{module}.{alias.name}', where)
                             for alias in node.names)
            else:
                found.append((node.lineno, module, where))
        inner = where
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner = 'function' if where == 'module' else where
        for child in ast.iter_child_nodes(node):
            if isinstance(node, ast.Try) and child in node.body and \
                    any(_catches_import_error(h) for h in node.handlers):
                visit(child, 'guarded')
            else:
                visit(child, inner)

    visit(ast.parse(path.read_text(), str(path)), 'module')
    return found


def test_import_scan_sees_ros_imports():
    # the scanner itself: it finds the guarded import of robots.py, the lazy import of the
    # command line, and rclpy where it belongs
    assert ('ament_index_python.packages', 'guarded') in [
        (module, where) for _, module, where in _imports(LIBRARY / 'robots.py')]
    assert ('robot_dynamics.ros.tools', 'function') in [
        (module, where) for _, module, where in _imports(LIBRARY / 'cli.py')]
    assert ('rclpy', 'module') in [
        (module.split('.')[0], where) for _, module, where in
        _imports(ROS_SUBPACKAGE / 'nodes' / 'runner.py')]


def test_library_outside_ros_imports_no_ros_package():
    offending = []
    for path in LIBRARY_FILES:
        for line, module, where in _imports(path):
            name = f'{path.relative_to(REPO)}:{line}: {module} ({where})'
            if _is_ros(module) and not (where == 'guarded'
                                        and module.split('.')[0] in GUARDED_ALLOWED):
                offending.append(name)
            if module.startswith(f'{PACKAGE}.ros') and where != 'function':
                offending.append(name)
    assert not offending, 'ROS imports outside robot_dynamics/ros:\n' + '\n'.join(offending)


def test_importing_the_library_loads_no_ros_package():
    modules = ['.'.join(p.relative_to(REPO).with_suffix('').parts).removesuffix('.__init__')
               for p in LIBRARY_FILES]
    code = ('import importlib, json, sys\n'
            'for name in sys.argv[1:]:\n'
            '    importlib.import_module(name)\n'
            'print(json.dumps(sorted(sys.modules)))\n')
    result = subprocess.run([sys.executable, '-c', code, *modules], cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.splitlines()[-1])
    assert set(modules) <= set(loaded) and len(modules) > 10
    assert not [m for m in loaded if _is_ros(m) or m.startswith(f'{PACKAGE}.ros')], \
        f'importing the library loaded {[m for m in loaded if _is_ros(m)]}'


def test_ros_packages_used_are_exec_depends(manifest):
    sources = sorted(ROS_SUBPACKAGE.rglob('*.py')) + sorted((REPO / 'launch').glob('*.py'))
    used = {module.split('.')[0] for path in sources for _, module, _ in _imports(path)
            if _is_ros(module)}
    assert {'rclpy', 'launch', 'launch_ros', 'robot_dynamics_interfaces'} <= used
    declared = _tags(manifest, 'depend', 'exec_depend')
    assert used <= declared, f'imported but not exec_depend: {sorted(used - declared)}'
