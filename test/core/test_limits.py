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

"""Tests of robot_dynamics.limits: the middle of a range, nearest turns, projection."""

import math

import numpy as np
import pytest

from robot_dynamics import closed_loop, ik, RobotModel
from robot_dynamics.limits import middle, nearest_turn, project

INF = np.inf
TWO_PI = 2.0 * math.pi


def one_sided(lower, upper):
    """Return the planar 2R with joint limits ``lower``, ``upper`` (2,)."""
    model = RobotModel.load('planar_2r')
    return model.replace(lower=np.array(lower, dtype=float), upper=np.array(upper, dtype=float))


def test_middle_of_every_kind_of_range():
    lower = np.array([-1.0, 0.5, -INF, -INF, -2.0])
    upper = np.array([3.0, INF, -0.5, INF, -1.0])
    np.testing.assert_array_equal(middle(lower, upper), [1.0, 0.5, -0.5, 0.0, -1.5])


@pytest.mark.parametrize('lower, upper', [([0.5, -INF], [INF, -0.2]),
                                          ([-INF, 0.1], [-0.3, INF])])
def test_home_configuration_is_inside_one_sided_limits(lower, upper):
    """Simulation's home was 0 for a one-sided range, outside ``[0.5, inf)``: now the middle."""
    model = one_sided(lower, upper)
    home = closed_loop.home_configuration(model)
    assert np.all(home >= model.lower) and np.all(home <= model.upper)
    np.testing.assert_array_equal(home, ik.default_seed(model))


@pytest.mark.parametrize('x, near, lower, upper, expected', [
    (0.1, 0.0, -INF, INF, 0.1),
    (0.1, 6.0, -INF, INF, 0.1 + TWO_PI),
    (0.1, 6.0, -1.0, 5.0, 0.1),                 # 0.1 + 2 pi is outside
    (3.0, -3.0, -4.0, 4.0, 3.0 - TWO_PI),
    (0.1, -20.0, 0.0, INF, 0.1),                # one-sided: the nearest copy that fits
    (-0.1, 0.0, 0.0, INF, -0.1 + TWO_PI),
    (2.0, 0.0, -1.0, 1.0, np.nan),              # no copy fits
])
def test_nearest_turn(x, near, lower, upper, expected):
    y = nearest_turn(x, near, lower, upper)
    if np.isnan(expected):
        assert np.isnan(y)
    else:
        assert y == pytest.approx(expected, abs=1e-12)
        assert lower <= y <= upper
        assert round((y - x) / TWO_PI) * TWO_PI == pytest.approx(y - x, abs=1e-12)


def test_project_wraps_revolute_and_clamps_the_rest():
    lower = np.array([-1.0, -1.0, -1.0, 0.0, -INF])
    upper = np.array([1.0, 1.0, 1.0, INF, INF])
    wrap = np.array([True, True, False, False, False])
    q = np.array([0.5 + TWO_PI, 2.0, 2.0, -0.3, 7.0])
    project(q, lower, upper, wrap)
    # 2 pi back into range; 2.0 has no copy inside: nearest limit on the circle is 1.0
    np.testing.assert_allclose(q, [0.5, 1.0, 1.0, 0.0, 7.0], atol=1e-12)
    q = np.array([-2.5, 0.0, 0.0, 0.0, 0.0])
    project(q, lower, upper, wrap)
    assert q[0] == -1.0        # -2.5 is 1.5 below -1 and 2.78 above +1 on the circle
