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
Point the CMake files of PyPI's ros-* wheels at this interpreter's include folders.

Why: the wheels are built on a manylinux host whose Python lives in /opt/python/cp311-cp311,
and their exported CMake targets (``share/*/cmake/*.cmake``) keep that host's Python and numpy
include folders. Building an interface package against them then fails with ``Imported target
"..._rosidl_generator_py" includes non-existent path``. This rewrites those paths to the venv's
own ``sysconfig`` include folder and ``numpy.get_include()``. It is a packaging bug of the
wheels, fixed here in one place; run it again after installing any further ros-* wheel (the
Makefile does). Idempotent.

Usage: python tools/fix_wheel_cmake_paths.py PREFIX
"""

from pathlib import Path
import re
import sys
import sysconfig

import numpy

# /opt/python/cp311-cp311/include/python3.11 and .../site-packages/numpy/_core/include
_BUILD_HOST = re.compile(r'/opt/python/[^/;"\s]+/(?:include/python[0-9.]+'
                         r'|lib/python[0-9.]+/site-packages/numpy/(?:_core|core)/include)')


def _replacement(match):
    return numpy.get_include() if 'numpy' in match.group(0) else sysconfig.get_paths()['include']


def main(argv):
    """Rewrite the build host's include paths under ``PREFIX/share``; print what changed."""
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    changed = 0
    for path in sorted(Path(argv[1], 'share').glob('*/cmake/*.cmake')):
        text = path.read_text()
        fixed = _BUILD_HOST.sub(_replacement, text)
        if fixed != text:
            path.write_text(fixed)
            changed += 1
    print(f'fix_wheel_cmake_paths: {changed} CMake file(s) updated under {argv[1]}/share')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
