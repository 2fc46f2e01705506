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
Time scaling under actuator limits: binding limits reached, never exceeded, one friction model.

The truth is the model's own inverse dynamics (checked against Pinocchio elsewhere) evaluated
densely along the scaled path, independently of the closed-form quadratic bounds of time_scale.
"""

import numpy as np
import pytest

from robot_dynamics import InputError
from robot_dynamics import time_scaling as ts
from robot_dynamics import trajectory as tr
from robot_dynamics.dynamics import friction_torques


def test_time_scaled_trajectory_replays_the_polynomial_scaling():
    traj = tr.from_waypoints([0.0, 0.4, 1.0], [[0.0, 0.1], [0.5, -0.2], [0.3, 0.4]],
                             start_time=1.0)
    u = np.linspace(0.0, traj.duration, 57)
    exact = traj.time_scaled(2.5).sample(1.0 + 2.5 * u)
    wrapped = ts.TimeScaledTrajectory(traj, 2.5)
    assert wrapped.end_time == pytest.approx(1.0 + 2.5 * traj.duration)
    got = wrapped.sample(1.0 + 2.5 * u)
    for a, b in zip(got, exact):
        np.testing.assert_allclose(a, b, atol=1e-11)
    with pytest.raises(InputError, match='t: non-finite'):
        wrapped.sample([0.0, np.nan])


def effort_ratios(model, traj, count=4001, friction=False):
    p = traj.sample(np.linspace(traj.start_time, traj.end_time, count))
    tau = model.inverse_dynamics(p.q, p.qd, p.qdd, friction=friction)
    return (np.abs(tau).max(axis=0) / model.effort_limit,
            np.abs(p.qd).max(axis=0) / model.velocity_limit)


@pytest.mark.parametrize('duration', [0.3, 5.0])   # too fast: slowed down; too slow: sped up
def test_time_scale_reaches_the_binding_effort_limit(planar_2r, duration):
    traj = tr.point_to_point([-0.5, 0.3], [1.2, -0.8], duration, 'quintic')
    scaled, report = ts.time_scale(traj, planar_2r)
    effort, velocity = effort_ratios(planar_2r, scaled)
    assert np.all(effort <= 1.0) and np.all(velocity <= 1.0)
    assert report.binding_limit == 'effort'
    j = report.binding_index
    assert report.binding_joint == planar_2r.joint_names[j]
    assert effort[j] == pytest.approx(1.0, abs=0.01)
    np.testing.assert_allclose(report.effort_ratio, effort, rtol=1e-3)
    assert scaled.duration == pytest.approx(report.factor * duration)
    assert (report.factor > 1.0) == (duration < 1.0)
    # any faster and the binding joint exceeds its limit
    faster = traj.time_scaled(0.99 * report.factor)
    assert effort_ratios(planar_2r, faster)[0][j] > 1.0


def test_time_scale_with_friction_and_velocity_limit(planar_2r, scara):
    traj = tr.point_to_point([-0.5, 0.3], [1.2, -0.8], 0.5, 'quintic')
    scaled, report = ts.time_scale(traj, planar_2r, friction=True)
    effort, _ = effort_ratios(planar_2r, scaled, friction=True)
    assert np.all(effort <= 1.0) and effort.max() == pytest.approx(1.0, abs=0.01)
    # scara: a long, light horizontal move binds on the velocity limit of the elbow
    move = tr.point_to_point([0.0, -2.0, 0.1], [0.5, 2.0, 0.1], 0.5, 'quintic')
    scaled, report = ts.time_scale(move, scara)
    effort, velocity = effort_ratios(scara, scaled)
    assert report.binding_limit == 'velocity' and report.binding_joint == 'elbow'
    assert np.all(velocity <= 1.0) and velocity[1] == pytest.approx(1.0, abs=0.01)
    assert np.all(effort <= 1.0)


def test_time_scale_rejects_paths_gravity_alone_cannot_hold(planar_2r):
    weak = planar_2r.replace(effort_limit=np.array([30.0, 100.0]))
    traj = tr.point_to_point([0.0, 0.0], [0.1, 0.0], 1.0)
    with pytest.raises(InputError, match="joint 'joint1'.*gravity alone"):
        ts.time_scale(traj, weak)


def scaled_samples(traj, report, samples=ts.TIME_SCALE_SAMPLES):
    """Return the samples time_scale uses, on the scaled path (uniform times plus the breaks)."""
    t = np.unique(np.concatenate((np.linspace(traj.start_time, traj.end_time, samples),
                                  traj.breaks)))
    return traj.time_scaled(report.factor).sample(traj.start_time
                                                  + (t - traj.start_time) * report.factor)


def test_time_scale_reports_the_dynamics_friction(planar_2r):
    """
    The report's torques are the model's inverse dynamics with its own (smooth) friction.

    Joint 2 creeps (1e-6 rad in about a second): its speed stays inside the smoothing band of the
    Coulomb term, where the dynamics' friction is about 1e-3 of a sign model's.
    """
    model = planar_2r.replace(friction=np.array([20.0, 10.0]))
    traj = tr.point_to_point([0.0, 0.0], [1.0, 1e-6], 1.0)
    scaled, report = ts.time_scale(traj, model, friction=True)
    p = scaled_samples(traj, report)
    assert np.abs(p.qd[:, 1]).max() < 1e-5
    tau = model.inverse_dynamics(p.q, p.qd, p.qdd, friction=True)
    np.testing.assert_allclose(report.effort_ratio, np.abs(tau).max(axis=0) / model.effort_limit,
                               rtol=1e-12)
    assert report.binding_joint == 'joint1'
    assert report.effort_ratio[0] == pytest.approx(1.0 - ts.TIME_SCALE_MARGIN, rel=1e-9)


def test_time_scale_bounds_with_the_coulomb_limit_of_the_dynamics(planar_2r, rng):
    """The Coulomb limit is friction_torques with smoothing 0, the smooth model's limit."""
    model = planar_2r.replace(friction=np.array([20.0, 10.0]))
    qd = rng.normal(size=(50, 2))
    qd[0] = 0.0
    np.testing.assert_array_equal(friction_torques(model, qd, smoothing=0.0),
                                  model.damping * qd + model.friction * np.sign(qd))
    np.testing.assert_allclose(friction_torques(model, qd, smoothing=1e-12),
                               friction_torques(model, qd, smoothing=0.0), rtol=1e-15)
    with pytest.raises(InputError, match='smoothing'):
        friction_torques(model, qd, smoothing=-1e-3)
    # and the scaled path keeps the smooth model's torques within the effort limits
    traj = tr.point_to_point([-0.5, 0.3], [1.2, -0.8], 0.5, 'quintic')
    scaled, report = ts.time_scale(traj, model, friction=True)
    effort, _ = effort_ratios(model, scaled, friction=True)
    assert np.all(effort <= 1.0) and effort.max() == pytest.approx(1.0, abs=0.01)
