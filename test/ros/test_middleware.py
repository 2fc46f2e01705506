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
from xml.etree import ElementTree

import pytest
from robot_dynamics.ros.wire import middleware

PUBLISH = ('import rclpy; from robot_dynamics.ros.wire import middleware; '
           'from std_msgs.msg import String; from std_srvs.srv import Trigger; '
           'print(middleware.use_profile()); print(middleware.wait_for_clients(2.5)); '
           "rclpy.init(); node = rclpy.create_node('profile_test'); "
           "node.create_publisher(String, 't', 10); node.create_service(Trigger, 's', None); "
           'node.destroy_node(); rclpy.shutdown()')
NS = {'dds': 'http://www.eprosima.com'}


@pytest.mark.parametrize('distro, variable, name', [
    ('jazzy', 'FASTRTPS_DEFAULT_PROFILES_FILE', 'loopback_v2.xml'),
    ('humble', 'FASTRTPS_DEFAULT_PROFILES_FILE', 'loopback_v2.xml'),
    ('kilted', 'FASTDDS_DEFAULT_PROFILES_FILE', 'loopback_v3.xml'),
    ('rolling', 'FASTDDS_DEFAULT_PROFILES_FILE', 'loopback_v3.xml'),
])
def test_a_sourced_distribution_gets_the_profile_of_its_fast_dds(distro, variable, name):
    environ = {'ROS_DISTRO': distro}
    path = middleware.use_profile(environ)
    assert path.name == name and path.is_file()
    assert environ == {'ROS_DISTRO': distro, variable: str(path),
                       'ROS_AUTOMATIC_DISCOVERY_RANGE': 'SYSTEM_DEFAULT'}


@pytest.mark.parametrize('given, profile, scope', [
    (None, 'loopback', 'SYSTEM_DEFAULT'),
    ('LOCALHOST', 'loopback', 'SYSTEM_DEFAULT'),   # rmw_fastrtps would add a 0.0.0.0 socket
    ('SYSTEM_DEFAULT', 'loopback', 'SYSTEM_DEFAULT'),
    ('OFF', 'loopback', 'OFF'),
    ('SUBNET', 'writers', 'SUBNET'),               # the opt-in to a graph across machines
])
def test_loopback_unless_the_discovery_range_is_subnet(given, profile, scope):
    environ = {'ROS_DISTRO': 'kilted'}
    if given is not None:
        environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = given
    assert middleware.use_profile(environ).name == f'{profile}_v3.xml'
    assert environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] == scope


@pytest.mark.parametrize('major', [2, 3])
def test_the_loopback_profile_confines_every_participant_to_127_0_0_1(major):
    # what Fast DDS is told (that it binds nothing else: test_loopback.py, read from /proc)
    ns = NS
    profiles = ElementTree.parse(middleware.PROFILES / f'loopback_v{major}.xml').getroot()
    participant = profiles.find('dds:profiles/dds:participant', ns)
    assert participant.get('is_default_profile') == 'true'
    rtps = participant.find('dds:rtps', ns)
    assert rtps.findtext('dds:useBuiltinTransports', namespaces=ns) == 'false'
    used = [t.text for t in rtps.findall('dds:userTransports/dds:transport_id', ns)]
    kinds = {}
    for descriptor in profiles.findall('dds:profiles/dds:transport_descriptors/'
                                       'dds:transport_descriptor', ns):
        allowed = [a.text for a in descriptor.findall('dds:interfaceWhiteList/dds:address', ns)]
        kinds[descriptor.findtext('dds:transport_id', namespaces=ns)] = (
            descriptor.findtext('dds:type', namespaces=ns), allowed)
    assert sorted(kinds[t] for t in used) == [('SHM', []), ('UDPv4', ['127.0.0.1'])]


@pytest.mark.parametrize('given', [{'FASTDDS_DEFAULT_PROFILES_FILE': '/mine.xml'},
                                   {'FASTRTPS_DEFAULT_PROFILES_FILE': '/mine.xml'},
                                   {'RMW_IMPLEMENTATION': 'rmw_cyclonedds_cpp'}])
def test_a_profile_or_middleware_of_your_own_is_left_alone(given):
    environ = dict(given, ROS_DISTRO='kilted', ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    assert middleware.use_profile(environ) is None
    assert environ == dict(given, ROS_DISTRO='kilted', ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')


@pytest.mark.parametrize('major, profile', [(2, 'loopback'), (3, 'loopback'), (2, 'writers'),
                                            (3, 'writers')])
def test_a_process_that_waits_for_clients_gets_its_profile_and_a_service_writer(major, profile):
    variable = middleware.PROFILE_VARIABLES[major]
    ours = middleware.PROFILES / f'{profile}_v{major}.xml'
    environ = {variable: str(ours)}
    path = middleware.wait_for_clients(2.5, environ)
    assert environ == {variable: str(path)} and path.parent != middleware.PROFILES
    given, made = (ElementTree.parse(p).getroot().find('dds:profiles', NS) for p in (ours, path))
    service, = [w for w in made.findall('dds:data_writer', NS)
                if w.get('profile_name') == 'service']
    made.remove(service)
    # the profile in force, unchanged, and the services' writer: its settings, and the wait
    assert ElementTree.tostring(made) == ElementTree.tostring(given)
    default = given.find('dds:data_writer', NS)
    assert default.get('is_default_profile') == 'true'
    assert service.get('is_default_profile') is None
    wait = service.find('dds:qos/dds:reliability/dds:max_blocking_time', NS)
    assert (wait.findtext('dds:sec', namespaces=NS), wait.findtext('dds:nanosec', namespaces=NS)) \
        == ('2', '500000000')
    assert ElementTree.tostring(service.find('dds:times', NS)) == ElementTree.tostring(
        default.find('dds:times', NS))


@pytest.mark.parametrize('edited', [False, True])
def test_waiting_for_clients_takes_a_copy_of_the_package_profile_and_leaves_yours(
        tmp_path, edited):
    # a checkout's copy (what its tests name) is the package's; an edited one is yours
    ours = (middleware.PROFILES / 'loopback_v3.xml').read_text()
    copy = tmp_path / 'loopback_v3.xml'
    copy.write_text(ours.replace('<sec>5</sec>', '<sec>6</sec>') if edited else ours)
    environ = {'FASTDDS_DEFAULT_PROFILES_FILE': str(copy)}
    made = middleware.wait_for_clients(2.5, environ)
    if edited:
        assert made is None and environ == {'FASTDDS_DEFAULT_PROFILES_FILE': str(copy)}
    else:
        assert environ == {'FASTDDS_DEFAULT_PROFILES_FILE': str(made)} and made.is_file()


@pytest.mark.parametrize('given', [{}, {'FASTDDS_DEFAULT_PROFILES_FILE': '/mine.xml'},
                                   {'FASTRTPS_DEFAULT_PROFILES_FILE': '/nowhere/loopback_v2.xml'}])
def test_waiting_for_clients_leaves_a_profile_of_your_own_alone(given):
    environ = dict(given)
    assert middleware.wait_for_clients(2.5, environ) is None
    assert environ == given


def test_without_ros_distro_the_version_comes_from_rclpy():
    # these environments install ROS 2 from wheels, which set no ROS_DISTRO
    expected = 2 if int(version('rclpy').split('.')[0]) <= 7 else 3
    assert middleware.fast_dds_major({}) == expected
    assert middleware.use_profile({}).name == f'loopback_v{expected}.xml'


def _publish(env):
    done = subprocess.run([sys.executable, '-c', PUBLISH], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.ros
@pytest.mark.parametrize('profile', ['loopback', 'writers'])
def test_the_installed_fast_dds_reads_the_profiles_without_error(ros_env, profile):
    env = {k: v for k, v in ros_env.items() if 'PROFILES_FILE' not in k and k != 'ROS_DISTRO'}
    major = middleware.fast_dds_major({})
    path = middleware.PROFILES / f'{profile}_v{major}.xml'
    if profile == 'loopback':
        done = _publish(env)      # chosen by the package, and with the services' writer
        chosen, waiting = done.stdout.splitlines()[:2]
        assert chosen == str(path) and waiting.endswith('.xml') and waiting != chosen
    else:                         # named by hand: SUBNET would leave this machine's loopback
        done = _publish(dict(env, **{middleware.PROFILE_VARIABLES[major]: str(path)}))
    # (Fast DDS 2 logs to stdout, 3 to stderr)
    output = done.stdout + done.stderr
    assert 'XMLPARSER' not in output and 'Error' not in output, output
    # the other version's file in its place: refused by name, so this Fast DDS reads the file
    other = middleware.PROFILES / f'{profile}_v{5 - major}.xml'
    done = _publish(dict(env, **{middleware.PROFILE_VARIABLES[major]: str(other)}))
    output = done.stdout + done.stderr
    assert "Invalid element found into 'writerTimesType'" in output, output
