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
Where the interface packages come from: a distribution's upstream packages are used as they are.

``tools/build_interfaces.py`` (``make setup``) builds the stand-ins of control_msgs and
cartesian_control_msgs only where no other prefix of the ament index provides them. Prefixes
are made here as a distribution's install has them (the ament index's package markers); on a
colcon workspace, ``stand_ins/`` is skipped (COLCON_IGNORE) and rosdep installs upstream's
(package.xml).
"""

import importlib.util
from pathlib import Path
import xml.etree.ElementTree as ElementTree

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location('build_interfaces',
                                               REPO / 'tools' / 'build_interfaces.py')
build_interfaces = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_interfaces)


def _prefix(root, *packages):
    """Return an install prefix under ``root`` whose ament index has ``packages``."""
    index = root / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    for package in packages:
        (index / package).write_text('')
    return root


@pytest.mark.parametrize('others, built', [
    ((), ['control_msgs', 'cartesian_control_msgs']),                  # the pip set-up
    ((('control_msgs', 'cartesian_control_msgs'),), []),               # a distribution has both
    ((('control_msgs',),), ['cartesian_control_msgs']),
    (((), ('cartesian_control_msgs',)), ['control_msgs']),             # an overlay has one
])
def test_stand_ins_are_built_only_where_nothing_else_provides_them(tmp_path, others, built):
    # the venv first, as the Makefile puts it, holding its own earlier build of both
    venv = _prefix(tmp_path / 'venv', 'control_msgs', 'cartesian_control_msgs',
                   'robot_dynamics_interfaces')
    prefixes = [venv] + [_prefix(tmp_path / f'other{k}', *packages)
                         for k, packages in enumerate(others)]
    assert build_interfaces.stand_ins_to_build(venv, prefixes) == built


def test_a_distribution_gets_upstreams_packages_and_skips_the_stand_ins():
    assert (REPO / 'stand_ins' / 'COLCON_IGNORE').is_file()
    depends = {element.text for element in
               ElementTree.parse(REPO / 'package.xml').getroot().iter('exec_depend')}
    assert {'control_msgs', 'cartesian_control_msgs'} <= depends
    own = ElementTree.parse(REPO / 'robot_dynamics_interfaces' / 'package.xml').getroot()
    assert 'cartesian_control_msgs' in {element.text for element in own.iter('depend')}
    for package in build_interfaces.STAND_INS:
        manifest = ElementTree.parse(REPO / 'stand_ins' / package / 'package.xml').getroot()
        assert manifest.findtext('name') == package
