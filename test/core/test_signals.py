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
Recorded signals made ready for identification (robot_dynamics.signals).

Against closed forms: sums of sines sampled at 1 kHz with timestamp jitter give back their
derivatives with no lag (zero phase) to the accuracy the module states, noise is removed above
the cut-off, and the output is decimated to ten samples per cut-off period.
"""

import numpy as np
import pytest
from robot_dynamics import InputError, ShapeError
from robot_dynamics.signals import (DEFAULT_CUTOFF, filtered, lowpass, stretches,
                                    TRIM_PERIODS, uniform)

RATE = 1000.0
# per joint: amplitudes [rad], frequencies [Hz], phases [rad]: below the cut-off
A = np.array([[0.5, 0.2], [0.3, 0.4]])
F = np.array([[0.3, 1.7], [0.5, 2.9]])
PHI = np.array([[0.1, 1.2], [-0.7, 0.4]])


def signal(t):
    """Return positions, velocities and accelerations (K, 2) of the test signal at ``t``."""
    w = 2.0 * np.pi * F
    phase = w[None] * t[:, None, None] + PHI[None]
    return (np.sum(A * np.sin(phase), -1), np.sum(A * w * np.cos(phase), -1),
            np.sum(-A * w ** 2 * np.sin(phase), -1))


def test_derivatives_without_lag_from_jittered_samples(rng):
    t = np.arange(0.0, 20.0, 1.0 / RATE) + rng.uniform(-1e-4, 1e-4, 20000)
    q, _, _ = signal(t)
    tau = 3.0 * q + 1.0                     # filtered the same way as the positions
    out = filtered(t, q, tau)
    exact_q, exact_qd, exact_qdd = signal(out.t)
    # positions to the linear interpolation over the jitter (h^2 / 8 q'' = 2.4e-5 rad) and the
    # filter's gain at 2.9 Hz (1 - 5e-5 on 0.4 rad); velocities and accelerations also to the
    # central differences' (2 pi f / rate)^2 / 6 and / 3 there (5.5e-5 and 1.1e-4)
    np.testing.assert_allclose(out.q, exact_q, rtol=0, atol=1e-4)
    np.testing.assert_allclose(out.qd, exact_qd, rtol=0, atol=3e-4 * np.abs(exact_qd).max())
    np.testing.assert_allclose(out.qdd, exact_qdd, rtol=0, atol=5e-4 * np.abs(exact_qdd).max())
    np.testing.assert_allclose(out.tau, 3.0 * exact_q + 1.0, rtol=0, atol=3e-4)
    # trimmed by TRIM_PERIODS cut-off periods at each end, ten samples per cut-off period
    assert out.t[0] == pytest.approx(t[0] + TRIM_PERIODS / DEFAULT_CUTOFF, abs=2e-3)
    assert out.rate == pytest.approx(10.0 * DEFAULT_CUTOFF, rel=1e-3)
    first, last = out.split(0.2)
    assert len(last.t) == pytest.approx(0.2 * len(out.t), abs=1)
    assert {len(x) for x in last} == {len(last.t)}
    assert first.t[-1] < last.t[0]


def test_gaps_a_recorder_left_are_not_interpolated_over(rng):
    # messages lost in bursts (a starved recorder): 190 ms, 40 ms and 3 ms of a 1 kHz recording
    t = np.arange(0.0, 20.0, 1.0 / RATE) + rng.uniform(-1e-4, 1e-4, 20000)
    lost = np.zeros(t.size, bool)
    lost[5000:5190] = lost[12000:12040] = lost[15000:15003] = True
    t = t[~lost]
    q, _, _ = signal(t)
    parts = stretches(t)
    assert [(p.start, p.stop) for p in parts] == [(0, 5000), (5000, 11810), (11810, t.size)]
    out = filtered(t, q, 3.0 * q + 1.0)
    exact_q, exact_qd, exact_qdd = signal(out.t)
    # as without gaps (above): the 3 ms gap is interpolated over, the long ones cut the
    # recording, and each stretch loses its filter's edges
    np.testing.assert_allclose(out.q, exact_q, rtol=0, atol=1e-4)
    np.testing.assert_allclose(out.qd, exact_qd, rtol=0, atol=3e-4 * np.abs(exact_qd).max())
    np.testing.assert_allclose(out.qdd, exact_qdd, rtol=0, atol=5e-4 * np.abs(exact_qdd).max())
    edge = TRIM_PERIODS / DEFAULT_CUTOFF
    for gap in (5.0, 12.0):
        assert not np.any((out.t > gap - edge + 2e-3) & (out.t < gap + 0.04 + edge - 2e-3))
    assert out.rate == pytest.approx(10.0 * DEFAULT_CUTOFF, rel=1e-3)
    # interpolated across, the 190 ms gap gives accelerations far off
    grid, q_uniform = uniform(t, q)
    inside = (grid > 5.02) & (grid < 5.17)
    _, _, qdd_there = signal(grid[inside])
    assert np.abs(np.gradient(np.gradient(q_uniform[inside], grid[1] - grid[0], axis=0),
                              grid[1] - grid[0], axis=0) - qdd_there).max() > 0.5


def test_lowpass_removes_what_lies_above_the_cut_off(rng):
    t = np.arange(0.0, 10.0, 1.0 / RATE)
    slow = np.sin(2.0 * np.pi * 1.0 * t)
    fast = 0.5 * np.sin(2.0 * np.pi * 100.0 * t)
    noise = 0.1 * rng.normal(size=t.size)
    out = lowpass(slow + fast + noise, RATE, 10.0)
    inner = slice(1000, -1000)
    # 100 Hz, a decade above a 4th-order cut-off run twice: attenuated 1e-8; white noise by the
    # square root of the passed band, sqrt(10 / 500)
    assert np.abs(out - slow)[inner].std() < 0.1 * np.sqrt(10.0 / 500.0) * 1.3
    np.testing.assert_allclose(out[inner], slow[inner], atol=0.06)
    # zero phase: the 1 Hz wave comes out where it went in
    lag = np.argmax(np.correlate(out[inner], slow[inner], 'full')) - (t[inner].size - 1)
    assert lag == 0


def test_bad_signals_are_named():
    t = np.arange(0.0, 1.0, 1e-3)
    q = np.zeros((t.size, 2))
    with pytest.raises(ShapeError, match='times: expected a 1-D sequence of at least 2 times'):
        uniform(t[:1], q[:1])
    back = t.copy()
    back[10] = back[9]
    with pytest.raises(InputError, match=r'times\[10\] = 0.009\d* s is not after times\[9\]'):
        uniform(back, q)
    with pytest.raises(InputError, match='cutoff: expected a frequency between 0 and half'):
        filtered(t, q, q, cutoff=600.0)
    with pytest.raises(InputError, match='too short to filter at 10 Hz'):
        filtered(t[:500], q[:500], q[:500])
    # long enough, but not between its gaps
    gapped = np.concatenate([t[:600], t[600:] + 0.5, t + 2.0])
    with pytest.raises(InputError, match=r'0.999 s of samples between gaps \(2\): too short'):
        filtered(gapped, np.zeros((gapped.size, 2)), np.zeros((gapped.size, 2)))
    with pytest.raises(ShapeError, match=r'q and tau: expected shape \(1000, n\)'):
        filtered(t, q[:999], q[:999])
