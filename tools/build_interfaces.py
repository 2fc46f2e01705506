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
Build the interface packages with CMake into a venv prefix (the pip set-up's, ``make setup``).

Upstream's packages that the controller speaks (``stand_ins/``: control_msgs,
cartesian_control_msgs) are built where no other prefix of the ament index provides them: a
sourced ROS 2 distribution's are used as they are. Then the project's own,
robot_dynamics_interfaces. Installed into PREFIX, nothing is needed at run time.

Usage: python tools/build_interfaces.py PREFIX DISTRO
"""

import os
from pathlib import Path
import subprocess
import sys

REPO = Path(__file__).resolve().parents[1]
#: Upstream's interface packages the project carries stand-ins of, in build order
STAND_INS = ('control_msgs', 'cartesian_control_msgs')
OWN = 'robot_dynamics_interfaces'


def provides(prefix, package):
    """Return whether the install prefix ``prefix`` has ``package`` in its ament index."""
    return (Path(prefix) / 'share' / 'ament_index' / 'resource_index' / 'packages'
            / package).is_file()


def stand_ins_to_build(prefix, prefixes):
    """
    Return the stand-ins to build into ``prefix``: those no other of ``prefixes`` provides.

    ``prefixes``: the ament index's (AMENT_PREFIX_PATH); ``prefix``'s own earlier build of a
    stand-in is built again.
    """
    others = [p for p in prefixes if Path(p).resolve() != Path(prefix).resolve()]
    return [package for package in STAND_INS
            if not any(provides(other, package) for other in others)]


def build(source, prefix, distro):
    """Configure, build and install the CMake package in ``source`` into ``prefix``."""
    build_dir = Path(prefix) / 'build' / Path(source).name
    for command in (
            ['cmake', '-S', str(source), '-B', str(build_dir), f'-DCMAKE_PREFIX_PATH={prefix}',
             f'-DCMAKE_INSTALL_PREFIX={prefix}', f'-DPython3_EXECUTABLE={sys.executable}',
             '-DBUILD_TESTING=OFF', f'-DROS_DISTRO={distro}'],
            ['cmake', '--build', str(build_dir), '-j2'],
            ['cmake', '--install', str(build_dir)]):
        subprocess.run(command, check=True)


def main(argv):
    """Build the stand-ins that are needed, then the project's interfaces; return the status."""
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    prefix, distro = argv[1], argv[2]
    prefixes = [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    chosen = stand_ins_to_build(prefix, prefixes)
    for package in STAND_INS:
        print(f'build_interfaces: {package}: '
              f'{"the stand-in" if package in chosen else "provided, not built"}', flush=True)
    try:
        for package in chosen:
            build(REPO / 'stand_ins' / package, prefix, distro)
        build(REPO / OWN, prefix, distro)
    except subprocess.CalledProcessError as exc:
        print(f'build_interfaces: {" ".join(exc.cmd)}: exit status {exc.returncode}',
              file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
