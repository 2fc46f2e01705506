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
The gains a loop bears on an arm: refused where the closed loop swings, accepted by default.

The truth the bounds are held to is independent of :mod:`robot_dynamics.gains`: the library's
closed loop on the whole arm (coupling, friction, the effort clipped), and one inertia sampled
exactly (``scipy.linalg.expm``) with the command a period late.
"""

import numpy as np
import pytest
from robot_dynamics import control, gains, parameter_files, RobotModel, robots, trajectory
from robot_dynamics.closed_loop import graph_loop, home_configuration, track_reference
from robot_dynamics.controller import Controller, DEFAULT_RATE_HZ
from robot_dynamics.errors import InputError
from robot_dynamics.ros.nodes import parameters
from robot_dynamics.ros.nodes.controller_node import JOINT_PARAMETERS

T = 1.0 / DEFAULT_RATE_HZ


class _Late:
    """A law whose command reaches the arm a cycle late, as in real time."""

    def __init__(self, law):
        self.law, self.last = law, None

    def compute(self, t, q, qd, point):
        command = self.law.compute(t, q, qd, point)
        late, self.last = self.last or command, command
        return late


def _node_law(model, **values):
    """Return the law the controller node builds from ``gains.<joint>.<gain>`` parameters."""
    return control.configured_law(model, lambda name, default: values.get(name, default))


def _swing(model, law, late=False):
    """Return the shoulder's largest speed [rad/s] and saturated fraction after a 2 s goal."""
    home = home_configuration(model)
    goal = home + np.array([0.8, -0.6, 0.1])
    reference = trajectory.from_waypoints(np.array([0.0, 2.0]), np.stack((home, goal)),
                                          np.zeros((2, 3)), np.zeros((2, 3)))
    record = track_reference(model, _Late(law) if late else law, reference, 3.0)
    after = record.t > 2.0
    return np.abs(record.qd[after, 0]).max(), record.saturated[after, 0].mean()


@pytest.mark.parametrize('kd, kp, late, bound', [(1999.0, 3.9e6, False, 'kd'),
                                                 (200.0, 1.9e5, True, 'kp')])
def test_the_issues_gains_swing_the_scara_and_are_refused_naming_the_gain_and_bound(
        kd, kp, late, bound):
    scara = RobotModel.load('scara')
    law = _node_law(scara, **{'gains.shoulder.kd': kd, 'gains.shoulder.kp': kp})
    # the old rule kd < 2 / T, kp < 2 kd / T took them; the closed loop (lockstep, and with the
    # command a period late as in real time) swings the shoulder at the effort limit
    assert kd < 2.0 / T and kp < 2.0 * kd / T
    speed, saturated = _swing(scara, law, late)
    assert speed > 20.0 and saturated > 0.99
    with pytest.raises(InputError) as err:
        Controller(scara, law, rate_hz=DEFAULT_RATE_HZ)
    kd_max, kp_max = gains.gain_bounds(scara, law, T)
    value, limit = (kd, kd_max[0]) if bound == 'kd' else (kp, kp_max[0])
    assert str(err.value).startswith(f'gains.shoulder.{bound} = {value:g}: above {limit:.6g}, '
                                     'the largest the loop at 1000 Hz bears on this arm '
                                     '(effort limit 80 N m, inertia 0.5343 to 1.652 kg m^2)')
    # computed torque's gains are per unit inertia: kd < 1 / T with the command a period late
    assert kd_max[0] == pytest.approx(1000.0)
    # the defaults track the same goal, also a period late
    speed, saturated = _swing(scara, _node_law(scara), late=True)
    assert speed < 1.0 and saturated == 0.0


def test_a_step_that_swings_at_the_effort_limits_is_refused_with_the_largest_kp_that_rests():
    scara = RobotModel.load('scara')
    law = _node_law(scara, **{'gains.shoulder.kd': 200.0, 'gains.shoulder.kp': 6e4})
    # the linear loop is stable with these (a period late too): the effort limit is what breaks
    assert 6e4 < gains.gain_bounds(scara, law, T)[1][0]
    controller = Controller(scara, _node_law(scara), rate_hz=DEFAULT_RATE_HZ)
    with pytest.raises(InputError) as err:
        controller.set_law(law)
    assert str(err.value).startswith('gains.shoulder.kp = 60000: above 3750, the largest')
    assert 'a step of 3.03 rad under the effort limit does not come to rest in 2 s' in \
        str(err.value)
    assert controller.law.kp[0] == 400.0
    # the arm from 2.4 rad off: at 6e4 it swings stop to stop at the limits, at 3500 it rests
    home = home_configuration(scara)
    goal = home + np.array([1.2, 0.0, 0.0])
    hold = trajectory.from_waypoints(np.array([0.0, 1e-3]), np.stack((goal, goal)),
                                     np.zeros((2, 3)), np.zeros((2, 3)))
    for kp, swings in ((6e4, True), (3500.0, False)):
        record = track_reference(scara, _Late(law.with_gains(kp={'shoulder': kp})), hold, 4.0,
                                 q0=home - np.array([1.2, 0.0, 0.0]))
        last = record.t > 3.0
        error = np.abs(record.q[last, 0] - goal[0]).max()
        assert (error > 1.0 and record.saturated[last, 0].all()) if swings else error < 1e-2
    controller.set_law(law.with_gains(kp={'shoulder': 3500.0}))


@pytest.mark.parametrize('name', robots.available())
def test_every_bundled_robots_default_gains_are_accepted(name):
    model = RobotModel.load(name)
    # its parameter file, as bringup starts it (the controller checks its law's gains)
    files = [parameter_files.parameter_file(name)]
    controller = graph_loop(model, parameter_files.file_values(files, 'simulator'),
                            parameter_files.file_values(files, 'controller'))[1]
    assert controller.law.law is control.Law.COMPUTED_TORQUE
    # and every law of the catalogue at the library's defaults, at 1000, 500 and 250 Hz
    for law in control.LAWS:
        for rate in (1000.0, 500.0, 250.0):
            gains.check_gains(model, _node_law(model, control_law=law), 1.0 / rate)


def test_a_pid_with_the_old_integral_time_on_the_iiwa14_grows_where_its_first_joint_is_heaviest():
    iiwa = RobotModel.load('iiwa14')
    default = _node_law(iiwa, control_law='pid')
    # the library's default PID had ki = kp wn / 10 (PID_INTEGRAL_TIME 10)
    law = default.with_gains(ki=default.ki * control.PID_INTEGRAL_TIME / 10.0)
    with pytest.raises(InputError) as err:
        Controller(iiwa, law, rate_hz=DEFAULT_RATE_HZ)
    # the continuous loop's Routh-Hurwitz bound at the largest inertia: ki < kp kd / m
    m = gains.inertia_range(iiwa)[1, 0]
    assert str(err.value).startswith(f'gains.A1.ki = {law.ki[0]:g}: above ')
    ki_max = gains.integral_bound(iiwa, law, T)[0]
    assert ki_max == pytest.approx(law.kp[0] * law.kd[0] / m, rel=0.02) and ki_max < law.ki[0]
    # stretched out (A2 at 90 degrees), 10 mrad off: the error grows, the old rule took it
    q = np.array([0.0, np.pi / 2, 0.0, 0.0, 0.0, 0.0, 0.0])
    hold = trajectory.from_waypoints(np.array([0.0, 1.0]), np.stack((q, q)), np.zeros((2, 7)),
                                     np.zeros((2, 7)))
    record = track_reference(iiwa, law, hold, 12.0, q0=q + 0.01 * np.eye(7)[0], friction=False)
    error = np.abs(record.q[:, 0] - q[0])
    assert error[-2000:].max() > 3.0 * error[:2000].max()


def _delayed_loop_grows(kp, kd, ki, m, T, steps=20000):
    """Whether m e'' = -u, u from the state a period before held over T, grows (exact ZOH)."""
    from scipy.linalg import expm
    A = np.zeros((3, 3))
    A[0, 1], A[1, 2] = 1.0, 1.0 / m
    Phi = expm(A * T)
    x, integral, u, peak = np.array([1e-3, 0.0]), 0.0, 0.0, 0.0
    for k in range(steps):
        integral += x[0] * T
        x, u = (Phi @ np.array([x[0], x[1], -u]))[:2], kp * x[0] + kd * x[1] + ki * integral
        peak = max(peak, abs(x[0])) if k > steps // 2 else peak
    return peak > 1e-3


@pytest.mark.parametrize('law_name', ['computed_torque', 'pd', 'pid'])
def test_the_linear_bounds_are_where_the_loop_a_period_late_turns_unstable(law_name):
    arm = RobotModel.load('planar_2r')
    law = _node_law(arm, control_law=law_name)
    inertia = gains.inertia_range(arm)
    kd_max, kp_max = gains.gain_bounds(arm, law, T, inertia)
    # the per-torque laws' gains on the hardest inertia of each bound: least for kd and kp
    m = np.ones(2) if law_name == 'computed_torque' else inertia[0]
    np.testing.assert_allclose(kd_max, m / T)
    ki = law.ki if law_name == 'pid' else np.zeros(2)
    for j in range(2):
        assert not _delayed_loop_grows(0.5 * kp_max[j], law.kd[j], 0.0, m[j], T)
        assert _delayed_loop_grows(1.05 * kp_max[j], law.kd[j], 0.0, m[j], T)
        assert not _delayed_loop_grows(1.0, 0.95 * kd_max[j], 0.0, m[j], T)
        assert _delayed_loop_grows(1.0, 1.05 * kd_max[j], 0.0, m[j], T)
    if law_name == 'pid':
        # the integral is hardest on the largest inertia (about kp kd / m there)
        ki_max = gains.integral_bound(arm, law, T, inertia)
        for j in range(2):
            assert not _delayed_loop_grows(law.kp[j], law.kd[j], 0.9 * ki_max[j],
                                           inertia[1, j], T)
            assert _delayed_loop_grows(law.kp[j], law.kd[j], 1.1 * ki_max[j], inertia[1, j], T)
    assert gains.integral_bound(arm, law, T) is None or law_name == 'pid'
    assert np.all(law.kd < kd_max) and np.all(law.kp < kp_max) and np.all(ki >= 0.0)


def test_an_integral_gain_on_computed_torque_says_the_law_has_none():
    scara = RobotModel.load('scara')
    patterns = [spec.name for spec in JOINT_PARAMETERS]
    declared = [f'gains.{j}.{g}' for j in scara.joint_names for g in ('kp', 'kd')]
    reason = parameters.unknown_parameter('gains.shoulder.ki', declared, patterns,
                                          scara.joint_names)
    assert reason == ("parameter 'gains.shoulder.ki' is not declared: the control law in use has "
                      "no 'ki' gain (gains.{joint}.ki is declared for the laws that have one)")
    # a joint the model lacks still names the closest
    assert "closest: ['shoulder']" in parameters.unknown_parameter(
        'gains.sholder.ki', declared, patterns, scara.joint_names)
