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
A hard bound on each test (a pytest plugin; test/conftest.py takes its hooks).

A test still running after ``hung_test_timeout`` (pytest.ini) has hung: faulthandler, whose
thread needs no GIL, prints every thread's stack and ends the process. That ends a test held
for good in C (a middleware's deadlock), which an exception could not. Under xdist it fails
this test alone (a worker "crashed" while running it) and another worker runs the rest; the
processes the test started end with it (ros/isolation.py).
"""

import faulthandler
import os

import pytest

#: Where the stacks go: the process's stderr, a copy taken before any test's capture.
STDERR = pytest.StashKey[int]()


def pytest_addoption(parser):
    """Declare ``hung_test_timeout``."""
    parser.addini('hung_test_timeout', 'a test still running after this long [s] has hung: '
                  "every thread's stack is printed and its process ends", default='600')


def pytest_configure(config):
    """Keep a copy of stderr for the stacks (a test's own stderr is captured)."""
    config.stash[STDERR] = os.dup(2)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item):
    """Run the test (setup, call, teardown) under the bound."""
    faulthandler.dump_traceback_later(float(item.config.getini('hung_test_timeout')),
                                      exit=True, file=item.config.stash[STDERR])
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
