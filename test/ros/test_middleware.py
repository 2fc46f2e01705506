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


"""The package's Fast DDS profile: chosen for the installed Fast DDS, and read by it."""

from importlib.metadata import version
import subprocess
import sys

import pytest
from robot_dynamics.ros import middleware

PUBLISH = ('import rclpy; from robot_dynamics.ros import middleware; from std_msgs.msg import '
           'String; print(middleware.use_profile()); rclpy.init(); '
           "node = rclpy.create_node('profile_test'); node.create_publisher(String, 't', 10); "
           'node.destroy_node(); rclpy.shutdown()')


@pytest.mark.parametrize('distro, variable, name', [
    ('jazzy', 'FASTRTPS_DEFAULT_PROFILES_FILE', 'writers_v2.xml'),
    ('humble', 'FASTRTPS_DEFAULT_PROFILES_FILE', 'writers_v2.xml'),
    ('kilted', 'FASTDDS_DEFAULT_PROFILES_FILE', 'writers_v3.xml'),
    ('rolling', 'FASTDDS_DEFAULT_PROFILES_FILE', 'writers_v3.xml'),
])
def test_a_sourced_distribution_gets_the_profile_of_its_fast_dds(distro, variable, name):
    environ = {'ROS_DISTRO': distro}
    path = middleware.use_profile(environ)
    assert path.name == name and path.is_file()
    assert environ == {'ROS_DISTRO': distro, variable: str(path)}


@pytest.mark.parametrize('given', [{'FASTDDS_DEFAULT_PROFILES_FILE': '/mine.xml'},
                                   {'FASTRTPS_DEFAULT_PROFILES_FILE': '/mine.xml'},
                                   {'RMW_IMPLEMENTATION': 'rmw_cyclonedds_cpp'}])
def test_a_profile_or_middleware_of_your_own_is_left_alone(given):
    environ = dict(given, ROS_DISTRO='kilted')
    assert middleware.use_profile(environ) is None
    assert environ == dict(given, ROS_DISTRO='kilted')


def test_without_ros_distro_the_version_comes_from_rclpy():
    # these environments install ROS 2 from wheels, which set no ROS_DISTRO
    expected = 2 if int(version('rclpy').split('.')[0]) <= 7 else 3
    assert middleware.fast_dds_major({}) == expected
    assert middleware.use_profile({}).name == f'writers_v{expected}.xml'


def _publish(env):
    done = subprocess.run([sys.executable, '-c', PUBLISH], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def test_the_installed_fast_dds_reads_the_profile_without_error(ros_env):
    env = {k: v for k, v in ros_env.items() if 'PROFILES_FILE' not in k and k != 'ROS_DISTRO'}
    major = middleware.fast_dds_major({})
    done = _publish(env)
    assert done.stdout.splitlines()[0] == str(middleware.PROFILES / f'writers_v{major}.xml')
    # (Fast DDS 2 logs to stdout, 3 to stderr)
    output = done.stdout + done.stderr
    assert 'XMLPARSER' not in output and 'Error' not in output, output
    # the other version's file in its place: refused by name, so this Fast DDS reads the file
    other = middleware.PROFILES / f'writers_v{5 - major}.xml'
    done = _publish(dict(env, **{middleware.PROFILE_VARIABLES[major]: str(other)}))
    output = done.stdout + done.stderr
    assert "Invalid element found into 'writerTimesType'" in output, output
