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
Python prefix where ``pip install`` puts data files. This module finds them;
``RobotModel.load`` builds their models.
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
