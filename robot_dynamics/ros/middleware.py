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
rclpy started with the package's Fast DDS profile: a lost sample is sent again in ~50 ms, not 3 s.

A reliable reader that missed a sample asks for it when the writer's heartbeat tells it what was
sent, and it delivers in order, so what follows waits too. Fast DDS's periodic heartbeat comes
every 3 s by default. On a host that does not run a process for a while (a loaded machine)
Fast DDS's shared-memory transport loses a sample now and then, and nothing else repairs it
sooner where no more samples follow: in lockstep the simulator publishes one state and waits
for its answer, and that wait ended at ``lockstep_timeout`` (1 s) instead. The package's
profile (``fastdds/writers_v2.xml`` or ``_v3.xml``: the element's name differs between Fast DDS
2, up to Jazzy, and 3, from Kilted) makes every writer's heartbeat period 50 ms. It applies
unless the environment names a profile of its own, or another middleware
(``RMW_IMPLEMENTATION``).
"""

import importlib.metadata
import os
from pathlib import Path

import rclpy
from rclpy.signals import SignalHandlerOptions

#: The variables by which Fast DDS 2 and 3 find a profile (Kilted's rmw_fastrtps reads both).
PROFILE_VARIABLES = {2: 'FASTRTPS_DEFAULT_PROFILES_FILE', 3: 'FASTDDS_DEFAULT_PROFILES_FILE'}
PROFILES = Path(__file__).with_name('fastdds')
#: ROS 2 distributions with Fast DDS 2 (their rclpy: up to 7); later ones have Fast DDS 3.
FAST_DDS_2 = ('humble', 'iron', 'jazzy')


def fast_dds_major(environ=os.environ):
    """Return Fast DDS's major version of this ROS 2 (2 or 3), or None where unknown."""
    distro = environ.get('ROS_DISTRO')
    if distro:
        return 2 if distro in FAST_DDS_2 else 3
    for name in ('rclpy', 'ros-rclpy'):
        try:
            major = int(importlib.metadata.version(name).split('.')[0])
        except (importlib.metadata.PackageNotFoundError, ValueError):
            continue
        return 2 if major <= 7 else 3
    return None


def use_profile(environ=os.environ):
    """
    Name the package's Fast DDS profile in ``environ`` unless it names one; return its path.

    None (and ``environ`` untouched) where a profile or another middleware is named, or the
    Fast DDS version is unknown. Call before rclpy starts: Fast DDS reads it once.
    """
    if any(environ.get(name) for name in PROFILE_VARIABLES.values()):
        return None
    if not environ.get('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp').startswith('rmw_fastrtps'):
        return None
    major = fast_dds_major(environ)
    if major is None:
        return None
    path = PROFILES / f'writers_v{major}.xml'
    environ[PROFILE_VARIABLES[major]] = str(path)
    return path


def init(**kwargs):
    """Start rclpy (``kwargs``: rclpy.init's) with the package's profile, no signal handlers."""
    use_profile()
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO, **kwargs)
