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
The controller's types are upstream's: control_msgs' and cartesian_control_msgs'.

Truth: the type hashes of upstream's own definitions (``type_hashes.UPSTREAM``). The hashes
the graph advertises are checked in test_cartesian_goals (its controller serves both actions).
"""

import json
from pathlib import Path

from cartesian_control_msgs.action import FollowCartesianTrajectory
import control_msgs
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState
import pytest
from type_hashes import installed_distribution, stand_in_hashes, STAND_INS, UPSTREAM


@pytest.fixture(scope='module')
def prefix_share():
    """Return the share folder of the prefix control_msgs is installed in."""
    return Path(control_msgs.__file__).parents[4] / 'share'


def test_the_carried_definitions_hash_as_upstreams(prefix_share):
    distro = installed_distribution()
    carried = stand_in_hashes(distro, prefix_share)
    for name, value in UPSTREAM[distro].items():
        assert carried[name] == value, name


def test_the_installed_packages_are_the_carried_definitions(prefix_share):
    # the type descriptions the build installed (<share>/<package>/<kind>/<Type>.json), from
    # which the generated code takes the hashes it advertises
    carried = stand_in_hashes(installed_distribution(), prefix_share)
    installed = {}
    for package in ('control_msgs', 'cartesian_control_msgs'):
        for description in (prefix_share / package).glob('*/*.json'):
            for entry in json.loads(description.read_text())['type_hashes']:
                installed[entry['type_name']] = entry['hash_string']
    assert {name: installed.get(name) for name in carried} == carried
    assert (STAND_INS / 'COLCON_IGNORE').exists()   # a distribution's packages stay in use


def test_a_client_has_upstreams_fields_and_codes():
    goal = FollowJointTrajectory.Goal.get_fields_and_field_types()
    assert list(goal) == ['trajectory', 'multi_dof_trajectory', 'path_tolerance',
                          'component_path_tolerance', 'goal_tolerance',
                          'component_goal_tolerance', 'goal_time_tolerance']
    codes = ('SUCCESSFUL', 'INVALID_GOAL', 'INVALID_JOINTS', 'OLD_HEADER_TIMESTAMP',
             'PATH_TOLERANCE_VIOLATED', 'GOAL_TOLERANCE_VIOLATED')
    assert [getattr(FollowJointTrajectory.Result, c) for c in codes] == [0, -1, -2, -3, -4, -5]
    assert [getattr(FollowCartesianTrajectory.Result, c) for c in codes] == \
        [0, -1, -2, -3, -4, -5]
    assert FollowCartesianTrajectory.Result.INVALID_POSTURE == -6
    assert list(FollowCartesianTrajectory.Goal.get_fields_and_field_types()) == [
        'trajectory', 'path_tolerance', 'goal_tolerance', 'goal_time_tolerance']
    assert list(JointTrajectoryControllerState.get_fields_and_field_types())[:6] == [
        'header', 'joint_names', 'reference', 'feedback', 'error', 'output']
