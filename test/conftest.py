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
Shared fixtures: seeded random numbers, the bundled robots and random URDF chains.

``randomchain`` (next to this file) holds the generator itself so that test modules and
benchmarks can import it; the fixtures here only wrap it.
"""

from importlib import metadata
import os
from pathlib import Path
import sys

# One BLAS thread per process, set before numpy loads OpenBLAS (the workers and every process a
# test starts inherit it): the suite runs a worker per core, and OpenBLAS's threads of a large
# least squares (identification) then only wait on each other, on a busy host many times over.
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

import numpy as np  # noqa: E402
import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

# pytest takes hooks from a conftest's names; hung.py is a plugin of its own for test_hung
from hung import (  # noqa: E402, F401, I100, I202
    pytest_addoption, pytest_configure, pytest_runtest_protocol)
from randomchain import PinChain, random_chain, random_q, random_urdf  # noqa: E402

from robot_dynamics import RobotModel  # noqa: E402
from type_hashes import installed_distribution  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
URDF_DIR = REPO / 'urdf'
CONFIG_DIR = REPO / 'config'
BUNDLED = ('iiwa14', 'planar_2r', 'planar_3r', 'puma560', 'rp_arm', 'scara')
SEED = 20260


def pytest_report_header(config):
    """Name the ROS 2 distribution and the rclpy, rcl and RMW wheels the run uses."""
    distro = installed_distribution()
    versions = []
    for name in ('rclpy', 'rcl', 'rmw-fastrtps-cpp'):
        try:
            versions.append(f'{name} {metadata.version("ros-" + name)}')
        except metadata.PackageNotFoundError:
            versions.append(f'{name} not installed')
    return f'ROS 2 {distro or "(distribution unknown)"}: {", ".join(versions)}'


def pytest_collection_modifyitems(items):
    """Label the middleware tier's tests (marked ``ros``) in their reports."""
    for item in items:
        if item.get_closest_marker('ros') is not None:
            item.user_properties.append(('tier', 'middleware'))


def pytest_terminal_summary(terminalreporter):
    """
    Print the middleware tier's count and its share of the tests' time.

    The tier: the tests marked ``ros`` (rclpy, DDS, processes); the rest run in one process on
    explicit times or the test's own clock. Time is the sum of every test's setup, call and
    teardown over the workers.
    """
    total, tier, tests, everything = 0.0, 0.0, set(), set()
    for reports in terminalreporter.stats.values():
        for report in reports:
            if not hasattr(report, 'duration') or not hasattr(report, 'user_properties'):
                continue
            total += report.duration
            everything.add(report.nodeid)
            if ('tier', 'middleware') in report.user_properties:
                tier += report.duration
                tests.add(report.nodeid)
    if total > 0.0:
        terminalreporter.write_line(
            f'middleware tier (marked ros): {len(tests)} of {len(everything)} tests, '
            f'{tier:.0f} s of the {total:.0f} s the tests took ({100.0 * tier / total:.0f} %)')


@pytest.fixture
def rng():
    """Return a freshly seeded ``numpy.random.Generator`` (the same numbers in every test)."""
    return np.random.default_rng(SEED)


@pytest.fixture(scope='session')
def bundled():
    """Return every bundled robot, loaded once: ``{name: RobotModel}``."""
    return {name: RobotModel.load(name) for name in RobotModel.available()}


@pytest.fixture(scope='session')
def planar_2r(bundled):
    """Return the bundled planar 2R arm (Hayes' worked example, vertical x-z plane)."""
    return bundled['planar_2r']


@pytest.fixture(scope='session')
def scara(bundled):
    """Return the bundled RRP SCARA."""
    return bundled['scara']


@pytest.fixture(params=BUNDLED)
def bundled_model(request, bundled):
    """Return each bundled robot in turn (parametrized by name)."""
    return bundled[request.param]


@pytest.fixture
def make_random_urdf():
    """Return :func:`randomchain.random_urdf` (``(rng, n_joints, ...) -> URDF text``)."""
    return random_urdf


@pytest.fixture
def make_random_chain():
    """Return :func:`randomchain.random_chain` (URDF text plus the generated layout)."""
    return random_chain


@pytest.fixture
def make_random_q():
    """Return :func:`randomchain.random_q` (``(rng, model, shape=()) -> q``)."""
    return random_q


@pytest.fixture
def pin_chain():
    """Return :class:`randomchain.PinChain` (``(xml, joint_names)``: Pinocchio by link name)."""
    return PinChain
