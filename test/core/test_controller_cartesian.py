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
Cartesian goals and targets in the Controller library object, on the RK4 plant, explicit time.

Truth: the straight line between the goal's poses (the tip's distance from it), the goal's
last pose, the events each goal must produce (accepted, preempted, canceled, invalid, stopped)
and a tip at rest after a cancel.
"""

import numpy as np
import pytest
from robot_dynamics import RobotModel
from robot_dynamics.cartesian_follower import CartesianGoal, CartesianTolerances
from robot_dynamics.control import ComputedTorque
from robot_dynamics.controller import Controller, Kind, Mode
from robot_dynamics.errors import InputError
from robot_dynamics.follower import Goal, Outcome, Tolerances
from robot_dynamics.plant import Plant
from robot_dynamics.task_space import OperationalSpace
from scipy.spatial.transform import Rotation

DT = 1e-3
Q_START = {'iiwa14': [0.2, 0.6, -0.3, -1.4, 0.4, 0.9, 0.1], 'scara': [0.5, 1.2, 0.1],
           'planar_2r': [0.4, 1.1]}
MOVE = {'iiwa14': [0.15, -0.1, -0.1], 'scara': [-0.1, -0.05, -0.05],
        'planar_2r': [0.2, 0.0, 0.2]}


class Rig:
    """A Controller with a task law on the RK4 plant, stepped in lockstep at 1 kHz."""

    def __init__(self, name):
        self.model = model = RobotModel.load(name)
        self.q0 = np.array(Q_START[name])
        law = ComputedTorque(model, 400.0, 40.0)
        task = OperationalSpace(model, [2000.0] * 3 + [200.0] * 3, null_stiffness=10.0)
        self.controller = Controller(model, law, task_law=task)
        self.plant = Plant(model, DT, friction=False, q0=self.q0)
        self.events = []
        self.tips = []
        self.run(0.05)

    def run(self, seconds):
        for _ in range(int(round(seconds / DT))):
            cycle = self.controller.update(self.plant.t, self.plant.q, self.plant.qd)
            self.events += cycle.events
            self.plant.step(cycle.command)
            self.tips.append(self.model.fk(self.plant.q))

    def ended(self, tag):
        return [e.outcome for e in self.events if e.tag is tag and e.kind is Kind.GOAL_ENDED]

    def line_goal(self, tag, move, duration=1.5, rotate=None):
        T0 = self.model.fk(self.plant.q)
        T1 = T0.copy()
        T1[:3, 3] += move
        if rotate is not None:
            T1[:3, :3] = Rotation.from_rotvec(rotate).as_matrix() @ T0[:3, :3]
        quats = Rotation.from_matrix(np.stack((T0[:3, :3], T1[:3, :3]))).as_quat()
        goal = CartesianGoal(tag, None, [0.0, duration], [T0[:3, 3], T1[:3, 3]], quats)
        return goal, T0, T1


@pytest.mark.parametrize('name', ['iiwa14', 'scara', 'planar_2r'])
def test_a_cartesian_goal_follows_the_line_and_then_holds(name):
    rig = Rig(name)
    tag = object()
    rotate = [0.1, -0.2, 0.15] if name == 'iiwa14' else None
    goal, T0, T1 = rig.line_goal(tag, MOVE[name], rotate=rotate)
    events = rig.controller.submit_cartesian(goal)
    assert [e.kind for e in events] == [Kind.GOAL_ACCEPTED]
    start = len(rig.tips)
    rig.run(2.0)
    assert rig.ended(tag) == [Outcome.SUCCEEDED]
    tips = np.array(rig.tips[start:])[:, :3, 3]
    d = T1[:3, 3] - T0[:3, 3]
    rel = tips - T0[:3, 3]
    off = rel - np.outer(rel @ d / (d @ d), d)
    assert np.linalg.norm(off, axis=1).max() < 1e-3
    final = rig.tips[-1]
    assert np.linalg.norm(final[:3, 3] - T1[:3, 3]) < 1e-3
    if rotate is not None:
        err = Rotation.from_matrix(final[:3, :3] @ T1[:3, :3].T).magnitude()
        assert err < 0.01
    # after it, a compliant hold at the last pose
    assert rig.controller.followed is rig.controller.cartesian
    assert rig.controller.mode is Mode.HOLD
    rig.run(0.3)
    assert np.linalg.norm(rig.tips[-1][:3, 3] - T1[:3, 3]) < 1e-3


def test_goals_of_either_kind_preempt_each_other():
    rig = Rig('iiwa14')
    n = rig.model.dof
    joint_tag, cart_tag, back_tag = object(), object(), object()
    target = rig.q0 + 0.2
    rig.controller.submit(Goal(joint_tag, None, np.array([2.0]), target[None, :], None, None,
                               Tolerances.unchecked(n)))
    rig.run(0.5)
    goal, _, T1 = rig.line_goal(cart_tag, [0.0, 0.1, 0.05])
    events = rig.controller.submit_cartesian(goal)
    assert {(e.kind, e.outcome) for e in events if e.tag is joint_tag} == \
        {(Kind.GOAL_ENDED, Outcome.PREEMPTED)}
    rig.run(1.0)
    assert rig.controller.followed is rig.controller.cartesian
    events = rig.controller.submit(Goal(back_tag, None, np.array([2.0]), rig.q0[None, :], None,
                                        None, Tolerances.unchecked(n)))
    assert rig.ended(cart_tag) == [] and \
        [e.outcome for e in events if e.tag is cart_tag] == [Outcome.PREEMPTED]
    rig.events += events
    rig.run(2.5)
    assert rig.controller.followed is rig.controller.follower
    assert rig.ended(back_tag) == [Outcome.SUCCEEDED]
    assert np.abs(rig.plant.q - rig.q0).max() < 1e-3


def test_the_followers_hand_over_the_reference_in_one_protocol():
    # mid-motion, the Cartesian follower takes over the joint reference's tip motion: pose,
    # twist and acceleration equal to the finite differences of the tip along the joint
    # reference (truth independent of the Jacobians that the hand-over uses)
    rig = Rig('iiwa14')
    model, joints, tip = rig.model, rig.controller.follower, rig.controller.cartesian
    tag = object()
    joints.submit(Goal(tag, None, np.array([2.0]), (rig.q0 + 0.3)[None, :], None, None,
                       Tolerances.unchecked(model.dof)), 0.0)
    joints.update(0.0, rig.q0, np.zeros(model.dof))
    t, h = 0.7, 1e-4
    point = joints.handover(t, None)
    tip.take_over(point, t)
    ours = tip.motion.sample(t)
    poses = [model.fk(joints.trajectory.sample(t + k * h).q) for k in (-1, 0, 1)]
    np.testing.assert_allclose(ours.pose, poses[1], atol=1e-12)
    np.testing.assert_allclose(ours.twist[:3], (poses[2][:3, 3] - poses[0][:3, 3]) / (2 * h),
                               atol=1e-6)
    rotation = Rotation.from_matrix(poses[2][:3, :3] @ poses[0][:3, :3].T).as_rotvec()
    np.testing.assert_allclose(ours.twist[3:], rotation / (2 * h), atol=1e-6)
    # then to rest within the stop time, where the twist held for half of it would take it
    rest = tip.motion.sample(t + tip.stop_time)
    np.testing.assert_allclose(rest.twist, 0.0, atol=1e-12)
    np.testing.assert_allclose(rest.pose[:3, 3], ours.pose[:3, 3] + 0.5 * tip.stop_time
                               * ours.twist[:3], atol=1e-12)
    # dropping a follower's goals ends them and leaves its reference where it runs
    before = joints.trajectory.sample(1.0)
    assert [(e.tag, e.outcome) for e in joints.drop(Outcome.PREEMPTED, 'gone')] == \
        [(tag, Outcome.PREEMPTED)]
    assert joints.goals() == [] and joints.active is None
    np.testing.assert_array_equal(joints.trajectory.sample(1.0).q, before.q)
    # and back: the joint follower takes over at the arm, at rest
    q = rig.q0 + 0.1
    joints.take_over(tip.handover(t, q), t)
    back = joints.trajectory.sample(t + 0.5)
    np.testing.assert_array_equal(back.q, q)
    assert not back.qd.any()


def _outcome(rig, tolerances, push=None, until=1.5):
    """
    Run a 1 s SCARA line with ``tolerances``, a push [N] along x from 0.5 s to ``until`` [s].

    Returns the goal's outcomes and messages, once the arm has settled again (1 s).
    """
    tag = object()
    goal, _, _ = rig.line_goal(tag, MOVE['scara'], duration=1.0)
    rig.controller.submit_cartesian(goal._replace(tolerances=tolerances))
    rig.run(0.5)
    if push is not None:
        rig.plant.set_wrench([push, 0.0, 0.0, 0.0, 0.0, 0.0])
    rig.run(until - 0.5)
    rig.plant.set_wrench(np.zeros(6))
    rig.run(1.0)
    messages = [e.message for e in rig.events if e.tag is tag and e.kind is Kind.GOAL_ENDED]
    return rig.ended(tag), messages


def test_a_cartesian_goals_tolerances_on_position_and_twist():
    rig = Rig('scara')                  # stiffness 2000 N/m: a 20 N push moves the tip 1 cm
    inf3 = np.full(3, np.inf)
    # its controlled axes are x, y, z: not its orientation, nor the angular twist
    loose = CartesianTolerances(np.full(3, 5e-3), inf3, np.full(3, 1e-3), inf3, 1.0,
                                path_twist=np.r_[np.full(3, 0.05), inf3],
                                goal_twist=np.r_[np.full(3, 1e-3), inf3])
    # followed within 5 mm and 0.05 m/s, and at rest within 1 mm and 1 mm/s at the end
    assert _outcome(rig, loose) == ([Outcome.SUCCEEDED], ['goal reached'])
    # pushed while it moves: the position leaves 5 mm; with position unchecked, the twist
    # the push gives (F / sqrt(K m) for its first instants) leaves 0.05 m/s first
    outcome, message = _outcome(rig, loose, push=20.0)
    assert outcome == [Outcome.PATH_TOLERANCE_VIOLATED]
    assert message[0].startswith('path tolerance violated: ') and 'x error' in message[0]
    outcome, message = _outcome(rig, loose._replace(path_position=inf3), push=20.0)
    assert outcome == [Outcome.PATH_TOLERANCE_VIOLATED]
    assert 'twist vx error' in message[0] and 'position' not in message[0]
    # with the path unchecked, pushed past the last point and goal_time (1 s)
    unchecked = CartesianTolerances.unchecked()
    outcome, message = _outcome(rig, unchecked._replace(goal_position=loose.goal_position,
                                                        goal_time=1.0), push=20.0, until=2.6)
    assert outcome == [Outcome.GOAL_TOLERANCE_VIOLATED]
    assert '1 s after the last point: position x error' in message[0]


def test_cancel_brings_the_tip_to_rest_and_holds():
    rig = Rig('iiwa14')
    tag = object()
    goal, _, _ = rig.line_goal(tag, [0.0, 0.2, 0.0], duration=2.0)
    rig.controller.submit_cartesian(goal)
    rig.run(0.8)
    rig.events += rig.controller.cancel(tag)
    assert rig.ended(tag) == [Outcome.CANCELED]
    rig.run(0.6)
    tips = np.array(rig.tips[-100:])[:, :3, 3]
    assert np.abs(tips - tips[-1]).max() < 1e-4          # at rest after stop_time
    assert rig.controller.followed is rig.controller.cartesian


def test_refused_goals_change_nothing_and_stale_states_stop_the_goal():
    rig = Rig('planar_2r')
    tag = object()
    goal, T0, _ = rig.line_goal(tag, [3.0, 0.0, 3.0])       # beyond the 4 m reach
    events = rig.controller.submit_cartesian(goal)
    assert [e.outcome for e in events] == [Outcome.INVALID]
    assert 'beyond the reach of the arm' in events[0].message
    assert rig.controller.followed is rig.controller.follower
    with pytest.raises(InputError, match='beyond the reach of the arm'):
        far = T0.copy()
        far[:3, 3] *= 2.0
        rig.controller.set_target(far)
    assert rig.controller.followed is rig.controller.follower
    # a target within reach, then the states stop: the goal-less task hold ends, joint hold
    near = T0.copy()
    near[:3, 3] *= 0.9
    rig.controller.set_target(near)
    # 0.34 m at the default 0.25 m/s: 2.6 s
    rig.run(3.0)
    assert np.linalg.norm(rig.tips[-1][:3, 3] - near[:3, 3]) < 1e-3
    moving = object()
    goal, _, _ = rig.line_goal(moving, [-0.2, 0.0, -0.2])
    rig.controller.submit_cartesian(goal)
    rig.run(0.3)
    cycle = rig.controller.no_state(1.0)
    assert cycle.mode is Mode.SAFE
    assert [e.outcome for e in cycle.events if e.tag is moving] == [Outcome.STOPPED]
    assert rig.controller.followed is rig.controller.follower


def test_every_kind_of_goal_is_judged_off_the_cycle_then_taken():
    # the node's goal thread: judge (the costly part, nothing changes), then take under the lock
    rig = Rig('planar_2r')
    c = rig.controller
    joint, cart = object(), object()
    T0 = rig.model.fk(rig.plant.q)
    far = T0.copy()
    far[:3, 3] *= 2.0
    with pytest.raises(InputError, match='beyond the reach of the arm'):
        c.judge(far)
    goal, _, _ = rig.line_goal(cart, [0.2, 0.0, 0.2])
    assert c.judge(goal) is goal and c.followed is c.follower and c.goals == []
    events = c.take(goal, judged=True)
    assert [e.kind for e in events if e.tag is cart] == [Kind.GOAL_ACCEPTED]
    rig.events += events
    rig.run(1.7)
    assert rig.ended(cart) == [Outcome.SUCCEEDED]
    # a joint goal judged: its trajectory built from the reference in force, taken as built
    q1 = rig.plant.q + 0.1
    judged = c.judge(Goal(joint, None, np.array([1.0]), q1[None, :], None, None,
                          Tolerances.unchecked(rig.model.dof)))
    assert judged.joined is not None and judged.joined.error is None
    rig.events += c.take(judged)
    rig.run(1.5)
    assert rig.ended(joint) == [Outcome.SUCCEEDED] and c.followed is c.follower
    np.testing.assert_allclose(rig.plant.q, q1, atol=1e-3)
    # and a target pose taken unjudged is checked by take itself
    with pytest.raises(InputError, match='beyond the reach of the arm'):
        c.take(far)


def test_the_stretched_arm_says_once_that_it_is_near_a_singularity():
    model = RobotModel.load('planar_2r')
    task = OperationalSpace(model, [2000.0] * 3 + [200.0] * 3, null_stiffness=10.0)
    controller = Controller(model, ComputedTorque(model, 400.0, 40.0), task_law=task)
    bent, stretched = np.array([0.4, 1.1]), np.array([0.4, 1e-3])
    zero = np.zeros(2)
    controller.update(0.0, bent, zero)
    controller.set_target(model.fk(bent))
    kinds = []
    for k, q in enumerate([bent, stretched, stretched, bent]):
        # a second apart: a state 1.1 rad from the last within a cycle would be a jump
        cycle = controller.update(1.0 * (k + 1), q, zero)
        kinds.append([e.message for e in cycle.events if e.kind is Kind.NEAR_SINGULARITY])
        assert np.all(np.abs(cycle.command) <= model.effort_limit)
    assert kinds[0] == [] and kinds[2] == []
    assert kinds[1][0].startswith('near a singularity') and 'condition number' in kinds[1][0]
    assert kinds[3][0].startswith('away from the singularity')
