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
Bundled robots: the URDF files in ``urdf/`` and the DH tables ``config/*.dh.yaml``.

The files are ROS 2 package data (``share/robot_dynamics``). They are found in the source tree
when running from a checkout, else through the ament index (``AMENT_PREFIX_PATH``), else in the
Python prefix where ``pip install`` puts data files.
"""

import os
from pathlib import Path
import sys

from .errors import InputError

PACKAGE = 'robot_dynamics'


def share_directory():
    """Return the folder holding ``urdf/`` and ``config/`` of this package."""
    source = Path(__file__).resolve().parent.parent
    if (source / 'package.xml').is_file() and (source / 'urdf').is_dir():
        return source
    if os.environ.get('AMENT_PREFIX_PATH'):
        try:
            from ament_index_python.packages import (get_package_share_directory,
                                                     PackageNotFoundError)
            try:
                return Path(get_package_share_directory(PACKAGE))
            except PackageNotFoundError:
                pass
        except ImportError:
            pass
    prefix = Path(sys.prefix) / 'share' / PACKAGE
    if prefix.is_dir():
        return prefix
    raise FileNotFoundError(f'cannot find the {PACKAGE} data folder (urdf/, config/): not in '
                            f'the source tree, the ament index, nor {prefix}')


def _files():
    share = share_directory()
    found = {p.stem: p for p in sorted((share / 'config').glob('*.dh.yaml'))}
    found = {name.removesuffix('.dh'): p for name, p in found.items()}
    found.update({p.stem: p for p in sorted((share / 'urdf').glob('*.urdf'))})
    return found


def available():
    """Names of the bundled robots, sorted."""
    return sorted(_files())


def path(name):
    """Path of the file that defines robot ``name`` (URDF preferred over a DH table)."""
    files = _files()
    if name not in files:
        raise InputError(f'unknown robot {name!r}; available: {sorted(files)}')
    return files[name]


def load(name):
    """Load the bundled robot ``name`` as a RobotModel."""
    from .model import RobotModel
    p = path(name)
    if p.suffix == '.urdf':
        return RobotModel.from_urdf(str(p))
    return RobotModel.from_dh(str(p))


def from_source(*, robot='', urdf_file='', dh_file='', robot_description='', base_link=None,
                tip_link=None, locked_joints=None):
    """
    Build a model from exactly one source and return ``(model, urdf)``.

    Sources: ``robot`` (a bundled name), ``urdf_file``, ``dh_file`` (a DH table in YAML) or
    ``robot_description`` (URDF XML text). ``urdf`` is the URDF text that describes the model to
    others (a ``/robot_description`` topic): the file's own text for URDF sources, so that
    viewers keep meshes and every other part of the robot, else ``model.to_urdf()``. The chain
    options (``base_link``, ``tip_link``, ``locked_joints``) apply to URDF sources; the same
    options applied to ``urdf`` rebuild the same model. Raises ``InputError`` unless exactly one
    source is given, ``ModelError`` for a bad description.
    """
    from .model import RobotModel
    given = {k: v for k, v in (('robot', robot), ('urdf_file', urdf_file), ('dh_file', dh_file),
                               ('robot_description', robot_description)) if v}
    if len(given) != 1:
        raise InputError('give exactly one of robot, urdf_file, dh_file, robot_description; got '
                         f'{sorted(given) or "none"}')
    chain = {'base_link': base_link or None, 'tip_link': tip_link or None,
             'locked_joints': dict(locked_joints) if locked_joints else None}
    if robot:
        source = path(robot)
        if source.suffix != '.urdf':
            dh_file = str(source)
        else:
            urdf_file = str(source)
    if dh_file:
        if any(chain.values()):
            raise InputError(f'base_link, tip_link and locked_joints apply to URDF sources, not '
                             f'to the DH table {dh_file!r}')
        model = RobotModel.from_dh(dh_file)
        return model, model.to_urdf()
    if urdf_file:
        if not Path(urdf_file).is_file():
            raise InputError(f'urdf_file {urdf_file!r} does not exist')
        robot_description = Path(urdf_file).read_text()
    return RobotModel.from_urdf(robot_description, **chain), robot_description
