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
The files for users of a ROS 2 distribution: RViz view, Foxglove layout, ros2_control example.

RViz, Foxglove, xacro and the controller manager do not run here: the files are parsed (YAML,
JSON, XML) and what they name is checked against what the graph offers (topics, QoS, frames,
message fields) and against each other (the ros2_control example's joints and interfaces,
the controllers' parameter file, robot_dynamics' hardware template).
"""

import json
from pathlib import Path
import re
import xml.etree.ElementTree as ET

import numpy as np
from rclpy.qos import DurabilityPolicy
from robot_dynamics import RobotModel
from robot_dynamics.ros.tools.definitions import MARKERS, RECORDED_TOPICS, TOPICS
from robot_dynamics.ros.wire.qos import DESCRIPTION_QOS
from robot_dynamics_interfaces.msg import ControllerState
from trajectory_msgs.msg import JointTrajectoryPoint
import yaml

REPO = Path(__file__).resolve().parents[1]
HARDWARE = REPO / 'config' / 'hardware'
#: What the kinematics node publishes for viewers, in the base link's frame.
VIEWER_TOPICS = {MARKERS, TOPICS.tip_pose}


def test_bundled_robots_share_the_fixed_frame():
    assert {RobotModel.load(name).base_link for name in RobotModel.available()} == {'base_link'}


def test_rviz_view_shows_the_model_the_markers_and_the_tip_pose():
    view = yaml.safe_load((REPO / 'rviz' / 'robot_dynamics.rviz').read_text())
    manager = view['Visualization Manager']
    assert manager['Global Options']['Fixed Frame'] == 'base_link'
    displays = {d['Class'].split('/')[-1]: d for d in manager['Displays']}
    model = displays['RobotModel']
    assert model['Description Source'] == 'Topic'
    assert model['Description Topic']['Value'] == TOPICS.robot_description
    # a late RViz gets the description only with the publisher's durability
    assert DESCRIPTION_QOS.durability == DurabilityPolicy.TRANSIENT_LOCAL
    assert model['Description Topic']['Durability Policy'] == 'Transient Local'
    assert displays['MarkerArray']['Topic']['Value'] == MARKERS
    assert set(displays['MarkerArray']['Namespaces']) == {'links', 'joints', 'tip_frame'}
    assert displays['Pose']['Topic']['Value'] == TOPICS.tip_pose
    assert all(d['Class'].startswith('rviz_default_plugins/') for d in manager['Displays'])


def _field(msg, path):
    """Follow a message path ``.a.b[0]`` in a message instance; return the value it reaches."""
    for name, index in re.findall(r'\.(\w+)(?:\[(\d+)\])?', path):
        msg = getattr(msg, name)
        if index:
            msg = msg[int(index)]
    return msg


def _panels(node):
    if isinstance(node, str):
        return [node]
    return _panels(node['first']) + _panels(node['second'])


def test_foxglove_layout_shows_recorded_topics_and_real_fields():
    layout = json.loads((REPO / 'foxglove' / 'robot_dynamics.json').read_text())
    configs = layout['configById']
    assert sorted(_panels(layout['layout'])) == sorted(configs)
    paths = [p['value'] for c in configs.values() for p in c.get('paths', [])]
    paths += [c['topicPath'] for c in configs.values() if 'topicPath' in c]
    topics = set(configs['3D!arm']['topics'])
    topics.add(configs['3D!arm']['layers']['robot']['topic'])
    assert configs['3D!arm']['followTf'] == 'base_link'
    assert topics == VIEWER_TOPICS | {TOPICS.robot_description}
    for path in paths:
        topic = next(t for t in RECORDED_TOPICS if path == t or
                     path.startswith(t + '.'))
        topics.add(topic)
        if topic == TOPICS.controller_state:
            six = [float(k) for k in range(6)]
            point = JointTrajectoryPoint(positions=six)
            state = ControllerState(joint_names=list('abcdef'), mode='hold', effort=six,
                                    reference=point, feedback=point, error=point)
            assert isinstance(_field(state, path[len(topic):]), (float, str)), path
    # everything the layout shows is in a recording with the default topics
    assert topics <= set(RECORDED_TOPICS)
    assert {'/simulator/status', TOPICS.controller_state} <= topics
    assert len(paths) >= 20


def _expanded_xacro(path):
    """
    Expand the example's one xacro construct, as xacro does: include a URDF's links and joints.

    ``$(find robot_dynamics)`` is this repository (the package's share folder once installed).
    """
    text = path.read_text()
    root = ET.fromstring(text)
    xacro = '{http://www.ros.org/wiki/xacro}'
    (include,) = root.findall(f'{xacro}include')
    target = include.get('filename').replace('$(find robot_dynamics)', str(REPO))
    included = ET.parse(target).getroot()
    position = list(root).index(include)
    root.remove(include)
    for k, child in enumerate(included):
        root.insert(position + k, child)
    return root, Path(target)


def test_ros2_control_example_goes_with_the_controllers_and_the_template():
    robot, included = _expanded_xacro(HARDWARE / 'puma560.ros2_control.xacro')
    assert included == REPO / 'urdf' / 'puma560.urdf'
    model = RobotModel.from_urdf(ET.tostring(robot, encoding='unicode'))
    bundled = RobotModel.load('puma560')
    assert model.joint_names == bundled.joint_names
    np.testing.assert_array_equal(model.mass, bundled.mass)
    (control,) = robot.findall('ros2_control')
    assert control.findtext('hardware/plugin') == 'mock_components/GenericSystem'
    joints = [j.get('name') for j in control.findall('joint')]
    assert joints == list(model.joint_names)
    controllers = yaml.safe_load((HARDWARE / 'ros2_controllers.yaml').read_text())
    manager = controllers['controller_manager']['ros__parameters']
    forward = {name: body['ros__parameters'] for name, body in controllers.items()
               if manager.get(name, {}).get('type') ==
               'forward_command_controller/ForwardCommandController'}
    assert set(forward) == {'effort_controller', 'position_controller', 'velocity_controller'}
    for name, parameters in forward.items():
        # the topic robot_dynamics commands: /<interface>_controller/commands
        assert name == f'{parameters["interface_name"]}_controller'
        assert parameters['joints'] == joints
        for joint in control.findall('joint'):
            offered = {c.get('name') for c in joint.findall('command_interface')}
            assert parameters['interface_name'] in offered, (name, joint.get('name'))
    for joint in control.findall('joint'):
        # what the joint_state_broadcaster publishes: position, velocity, effort
        assert {s.get('name') for s in joint.findall('state_interface')} == \
            {'position', 'velocity', 'effort'}
    # the mock starts where the simulator of config/puma560.yaml starts the arm
    start = [float(j.find("state_interface[@name='position']/param").text)
             for j in control.findall('joint')]
    simulator = yaml.safe_load((REPO / 'config' / 'puma560.yaml').read_text())['simulator']
    assert start == simulator['ros__parameters']['initial_positions']
    assert np.all((model.lower <= start) & (np.array(start) <= model.upper))
    # robot_dynamics' template commands the same joints in the same order, on the same chain
    template = yaml.safe_load((HARDWARE / 'robot_dynamics.yaml').read_text())
    assert template['controller']['ros__parameters']['joints'] == joints
    chain = template['/**']['ros__parameters']
    assert (chain['base_link'], chain['tip_link']) == (model.base_link, model.tip_link)
