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


"""The kinematics node: /compute_ik and /compute_fk against the library, and malformed requests."""

from geometry_msgs.msg import PoseStamped
import numpy as np
import pytest
from robot_dynamics import RobotModel
from robot_dynamics.ik import default_mask
from robot_dynamics.ros.wire.conversions import matrix_to_pose, pose_to_matrix
from robot_dynamics.spatial import pose_error
from robot_dynamics_interfaces.srv import SolveFK, SolveIK
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray


pytestmark = pytest.mark.ros

ROBOTS = ('planar_2r', 'scara', 'puma560')


@pytest.fixture(scope='module', params=ROBOTS)
def robot(request, module_processes, module_probe):
    """Run model and kinematics nodes for one robot; return ``(model, ik client, fk client)``."""
    name = request.param
    procs = [module_processes.start(f'model_{name}', ['model_node', '--ros-args', '-r',
                                                      '__node:=model', '-p', f'robot:={name}']),
             module_processes.start(f'kinematics_{name}', [
                 'kinematics_node', '--ros-args', '-r', '__node:=kinematics',
                 '-r', '~/solve_ik:=/compute_ik', '-r', '~/solve_fk:=/compute_fk',
                 '-p', 'publish_rate_hz:=50.0'])]
    ik = module_probe.client(SolveIK, '/compute_ik')
    fk = module_probe.client(SolveFK, '/compute_fk')
    yield RobotModel.load(name), ik, fk
    for proc in procs:
        assert module_processes.stop(proc) == 0, module_processes.output(proc)


def _state(model, q):
    return JointState(name=list(model.joint_names), position=[float(v) for v in q])


def _ik_request(T, model=None, seed=None):
    request = SolveIK.Request()
    request.pose_stamped = PoseStamped(pose=matrix_to_pose(T))
    if seed is not None:
        request.robot_state = _state(model, seed)
    return request


def _reachable(model, rng, count):
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    return rng.uniform(0.9 * lo + 0.1 * hi, 0.1 * lo + 0.9 * hi, (count, model.dof))


def test_ik_solutions_reach_the_target(robot, probe, rng):
    model, ik, _ = robot
    for q_true in _reachable(model, rng, 10):
        T = model.fk(q_true)
        response = probe.call(ik, _ik_request(T))
        assert response.success, response.message
        assert response.error_code == SolveIK.Response.SUCCESS
        assert list(response.solution.name) == list(model.joint_names)
        q = np.array(response.solution.position)
        dp, dr = np.split(pose_error(model.fk(q), T), 2)
        mask = model.task_mask
        assert np.linalg.norm(dp * mask[:3]) < 1e-6 and np.linalg.norm(dr * mask[3:]) < 1e-6
        assert response.position_error < 1e-6 and response.orientation_error < 1e-6
        assert not response.closest.name
        assert np.all(q >= model.lower - 1e-12) and np.all(q <= model.upper + 1e-12)
        # every closed-form branch reaches the target too
        assert len(response.branches) >= 1
        for branch in response.branches:
            dp, dr = np.split(pose_error(model.fk(np.array(branch.position)), T), 2)
            assert np.linalg.norm(dp * mask[:3]) < 1e-6 and np.linalg.norm(dr * mask[3:]) < 1e-6


def test_ik_picks_the_branch_nearest_the_seed(robot, probe, rng):
    model, ik, _ = robot
    q_true = _reachable(model, rng, 1)[0]
    response = probe.call(ik, _ik_request(model.fk(q_true), model, seed=q_true))
    assert response.success
    np.testing.assert_allclose(response.solution.position, q_true, atol=1e-6)


def test_unreachable_target_fails_with_an_empty_solution_and_the_closest(robot, probe):
    model, ik, _ = robot
    T = np.eye(4)
    T[:3, 3] = [10.0, 10.0, 10.0]
    response = probe.call(ik, _ik_request(T))
    assert not response.success
    assert response.error_code == SolveIK.Response.NO_IK_SOLUTION
    # nothing that looks like a solution: a client that forgets success has no joints to send
    assert not response.solution.name and not response.solution.position
    assert 'no solution' in response.message and 'closest' in response.message
    assert list(response.closest.name) == list(model.joint_names)
    q = np.array(response.closest.position)
    # the reported residual is the distance of the closest configuration's tip from the target,
    # on the position rows IK matches (a planar arm's off-plane row too)
    dp = pose_error(model.fk(q), T)[:3] * default_mask(model)[:3]
    assert response.position_error == pytest.approx(np.linalg.norm(dp), rel=1e-9)
    assert response.position_error > 5.0
    assert f'{response.position_error:.3g} m' in response.message


def test_fk_matches_the_library_for_every_link(robot, probe, rng):
    model, _, fk = robot
    q = _reachable(model, rng, 1)[0]
    request = SolveFK.Request(fk_link_names=model.link_names, robot_state=_state(model, q))
    request.header.frame_id = model.base_link
    response = probe.call(fk, request)
    assert response.success, response.message
    assert list(response.fk_link_names) == model.link_names
    for link, pose in zip(model.link_names, response.pose_stamped):
        assert pose.header.frame_id == model.base_link
        np.testing.assert_allclose(pose_to_matrix(pose.pose), model.fk(q, link), atol=1e-12)


def test_fk_joints_in_any_order_with_extra_joints(robot, probe, rng):
    model, _, fk = robot
    q = _reachable(model, rng, 1)[0]
    names = ['gripper'] + list(model.joint_names)[::-1]
    state = JointState(name=names, position=[0.5] + [float(v) for v in q[::-1]])
    response = probe.call(fk, SolveFK.Request(robot_state=state))
    assert response.success and response.fk_link_names == [model.tip_link]
    np.testing.assert_allclose(pose_to_matrix(response.pose_stamped[0].pose), model.fk(q),
                               atol=1e-12)


def _malformed_ik(model):
    T = model.fk(np.clip(np.zeros(model.dof), model.lower, model.upper))
    wrong_frame = _ik_request(T)
    wrong_frame.pose_stamped.header.frame_id = 'world'
    nan = _ik_request(T)
    nan.pose_stamped.pose.position.x = float('nan')
    non_unit = _ik_request(T)
    non_unit.pose_stamped.pose.orientation.w += 0.1
    bad_link = _ik_request(T)
    bad_link.ik_link_name = 'no_such_link'
    unknown_joint = _ik_request(T)
    unknown_joint.robot_state = JointState(name=['no_such_joint'], position=[0.0])
    missing_joint = _ik_request(T)
    missing_joint.robot_state = JointState(name=list(model.joint_names[:-1]),
                                           position=[0.0] * (model.dof - 1))
    bad_mask = _ik_request(T)
    bad_mask.mask = [1.0, 1.0]
    return [
        (wrong_frame, SolveIK.Response.FRAME_TRANSFORM_FAILURE, ['world', model.base_link]),
        (nan, SolveIK.Response.INVALID_GOAL, ['non-finite']),
        (non_unit, SolveIK.Response.INVALID_GOAL, ['quaternion', 'norm']),
        (bad_link, SolveIK.Response.INVALID_LINK_NAME, ['no_such_link']),
        (unknown_joint, SolveIK.Response.INVALID_ROBOT_STATE, ['missing', model.joint_names[0]]),
        (missing_joint, SolveIK.Response.INVALID_ROBOT_STATE,
         ['missing', model.joint_names[-1]]),
        (bad_mask, SolveIK.Response.INVALID_GOAL, ['mask', '6']),
    ]


def test_malformed_requests_get_a_message_and_the_next_is_served(robot, probe, rng):
    model, ik, fk = robot
    q_true = _reachable(model, rng, 1)[0]
    for request, code, words in _malformed_ik(model):
        response = probe.call(ik, request)
        assert not response.success
        assert response.error_code == code, response.message
        assert all(w in response.message for w in words), response.message
        assert not response.solution.name and not response.closest.name
        good = probe.call(ik, _ik_request(model.fk(q_true)))
        assert good.success, good.message
    bad_fk = SolveFK.Request(fk_link_names=['no_such_link'], robot_state=_state(model, q_true))
    response = probe.call(fk, bad_fk)
    assert not response.success and 'no_such_link' in response.message
    assert response.error_code == SolveFK.Response.INVALID_LINK_NAME
    response = probe.call(fk, SolveFK.Request())
    assert not response.success and response.error_code == SolveFK.Response.INVALID_ROBOT_STATE


def test_markers_and_tip_pose_follow_joint_states(robot, probe, rng):
    model, _, _ = robot
    q = _reachable(model, rng, 1)[0]
    publisher = probe.node.create_publisher(JointState, '/joint_states', 10)
    tips = probe.collect(PoseStamped, '/kinematics/tip_pose')
    markers = probe.collect(MarkerArray, '/kinematics/markers')

    def published():
        publisher.publish(_state(model, q))
        return [m for m, _ in tips if np.allclose(pose_to_matrix(m.pose), model.fk(q),
                                                  atol=1e-12)]
    probe.wait_for(published, what='the tip pose of the published joint state')
    probe.wait_for(lambda: markers, what='markers')
    array = markers[-1][0]
    strip = next(m for m in array.markers if m.ns == 'links')
    # the line strip runs from the base through every joint to the tip
    assert len(strip.points) == model.dof + 2
    end = strip.points[-1]
    tip = model.fk(q)[:3, 3]
    np.testing.assert_allclose([end.x, end.y, end.z], tip, atol=1e-12)
    assert len([m for m in array.markers if m.ns == 'joints']) == model.dof
