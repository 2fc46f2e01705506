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
Recorded joint signals made ready for identification: resampled, filtered, differentiated.

Joint states arrive at the rate of their publisher, with jitter, and carry noisy positions and
torques; identification needs velocities and accelerations without lag. :func:`filtered` follows
the practice of Gautier's inverse-dynamics identification (Gautier and Poignet, "Extended
Kalman filtering and weighted least squares dynamic identification of robot", Control
Engineering Practice 9(12), 2001, §3; Swevers et al. 1997, §4):

1. cut the recording at every gap longer than ``MAX_GAP_INTERVALS`` median sampling intervals
   (messages a recorder lost): each stretch between gaps goes through the steps below on its
   own, since interpolating across a long gap would invent the motion and its torques there;
   then resample each stretch onto a uniform grid at the median interval (linear
   interpolation over the shorter gaps and the jitter);
2. low-pass the positions and the torques with the same zero-phase Butterworth filter
   (``scipy.signal.butter`` of order ``FILTER_ORDER``, run forwards and backwards by
   ``filtfilt``: no lag, and the torques keep their timing relative to the motion); the default
   cut-off ``DEFAULT_CUTOFF`` lies above the excitation's harmonics and the closed loop's
   bandwidth (a few Hz; the torques, products of the motion, reach a few times the highest
   harmonic) and below the noise of differentiated encoder positions;
3. differentiate the filtered positions twice by central differences (second order; below the
   cut-off the relative error of the velocities is below ``(2 pi cutoff / rate)^2 / 6``, 7e-4
   at 10 Hz and 1 kHz, and that of the accelerations twice that);
4. drop ``TRIM_PERIODS / cutoff`` seconds at both ends (the filter's edge transients) and keep
   every k-th sample, down to about ``OUTPUT_RATE_FACTOR * cutoff`` samples per second (the
   signals hold nothing above the cut-off, so this loses nothing, and the regressor is ten
   times smaller).
"""

from typing import NamedTuple

import numpy as np

from .errors import InputError, ShapeError
from .trajectory import increasing_times

#: Default cut-off frequency [Hz] of the low-pass filter.
DEFAULT_CUTOFF = 10.0
#: Order of the Butterworth filter (run twice by filtfilt: twice the roll-off, no phase).
FILTER_ORDER = 4
#: Seconds dropped at each end, in periods of the cut-off frequency.
TRIM_PERIODS = 5.0
#: The samples kept per second, in multiples of the cut-off frequency.
OUTPUT_RATE_FACTOR = 10.0
#: A gap between samples longer than this many median intervals splits the recording.
MAX_GAP_INTERVALS = 5.0


class Signals(NamedTuple):
    """Uniformly sampled joint signals: ``t`` (K,) [s]; ``q, qd, qdd, tau`` (K, n)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray

    @property
    def rate(self):
        """Return the samples per second [Hz] (of the stretches between gaps)."""
        return 1.0 / float(np.median(np.diff(self.t))) if len(self.t) > 1 else 0.0

    def select(self, index):
        """Return the samples at ``index`` (a slice, or a boolean mask of length K)."""
        return Signals(*(x[index] for x in self))

    def split(self, fraction):
        """Return ``(first, last)``: the samples before and after ``1 - fraction`` of the time."""
        k = int(round(len(self.t) * (1.0 - fraction)))
        return self.select(slice(None, k)), self.select(slice(k, None))


def uniform(t, *signals):
    """
    Resample ``signals`` (K, ...) taken at times ``t`` (K,) onto a uniform grid.

    The grid starts at ``t[0]`` with the median interval of ``t``; values in between are
    linearly interpolated. Returns ``(grid, *resampled)``. Raises ``InputError`` (or
    ``ShapeError``) for fewer than two samples or times that are not increasing.
    """
    t = increasing_times(t, 'times', least=2)
    dt = float(np.median(np.diff(t)))
    grid = t[0] + dt * np.arange(int(np.floor((t[-1] - t[0]) / dt + 1e-9)) + 1)
    out = []
    for x in signals:
        x = np.asarray(x, dtype=float)
        flat = x.reshape(len(t), -1)
        out.append(np.stack([np.interp(grid, t, column) for column in flat.T], axis=-1)
                   .reshape((len(grid),) + x.shape[1:]))
    return (grid, *out)


def lowpass(x, rate, cutoff=DEFAULT_CUTOFF, order=FILTER_ORDER):
    """
    Low-pass ``x`` (K, ...) sampled at ``rate`` [Hz] along axis 0, zero-phase.

    A Butterworth filter of ``order`` with the cut-off ``cutoff`` [Hz], run forwards and
    backwards (``scipy.signal.sosfiltfilt``): the response has no delay and its gain is the
    square of the filter's (-6 dB at the cut-off).
    """
    if not (np.isfinite(cutoff) and 0.0 < cutoff < 0.5 * rate):
        raise InputError(f'cutoff: expected a frequency between 0 and half the sampling rate '
                         f'({0.5 * rate:g} Hz), got {cutoff}')
    # here, not at the top: scipy.signal (with scipy.stats) and scipy.optimize take half a
    # second of CPU to import, and every robot-dynamics command, its parser built from the
    # defaults of this module, excitation and identify, would pay it
    from scipy.signal import butter, sosfiltfilt
    sos = butter(order, cutoff, fs=rate, output='sos')
    return sosfiltfilt(sos, np.asarray(x, dtype=float), axis=0)


def stretches(t, max_gap=MAX_GAP_INTERVALS):
    """
    Return the slices of the sample times ``t`` (K,) [s] between gaps of more than ``max_gap``.

    ``max_gap`` is in median sampling intervals. Raises as :func:`uniform` for bad times.
    """
    t = increasing_times(t, 'times', least=2)
    step = np.diff(t)
    cuts = np.flatnonzero(step > max_gap * np.median(step)) + 1
    edges = [0, *cuts.tolist(), len(t)]
    return [slice(a, b) for a, b in zip(edges[:-1], edges[1:])]


def filtered(t, q, tau, *, cutoff=DEFAULT_CUTOFF):
    """
    Return :class:`Signals` for identification from recorded positions and torques.

    Parameters
    ----------
    t : array_like, shape (K,)
        Sample times [s], increasing (jitter and gaps allowed).
    q : array_like, shape (K, n)
        Measured joint positions [rad or m].
    tau : array_like, shape (K, n)
        Measured joint torques [N m or N].
    cutoff : float
        Cut-off frequency [Hz] of the low-pass filter, below half the sampling rate.

    Returns
    -------
    Signals
        Filtered positions and torques, velocities and accelerations from the filtered
        positions, each stretch between gaps on a uniform grid, trimmed and decimated (see the
        module docstring); stretches too short to filter are left out.

    """
    parts = stretches(t)
    t, q, tau = (np.asarray(x, dtype=float) for x in (t, q, tau))
    if q.ndim != 2 or q.shape[0] != t.size or tau.shape != q.shape:
        raise ShapeError(f'q and tau: expected shape ({t.size}, n) for {t.size} times, got '
                         f'{q.shape} and {tau.shape}')
    kept = [x for x in (_filtered_stretch(t[part], q[part], tau[part], cutoff) for part in parts)
            if x is not None]
    if not kept:
        longest = max(t[part.stop - 1] - t[part.start] for part in parts)
        gaps = f' between gaps ({len(parts) - 1})' if len(parts) > 1 else ''
        raise InputError(f'{longest:.3g} s of samples{gaps}: too short to filter at '
                         f'{cutoff:g} Hz (at least {2.0 * TRIM_PERIODS / cutoff:.3g} s)')
    return Signals(*(np.concatenate(x) for x in zip(*kept)))


def _filtered_stretch(t, q, tau, cutoff):
    """:func:`filtered` for samples without a long gap; None if too short to filter."""
    if t.size < 2:
        return None
    grid, q, tau = uniform(t, q, tau)
    dt = grid[1] - grid[0]
    rate = 1.0 / dt
    trim = int(np.ceil(TRIM_PERIODS / cutoff * rate))
    if len(grid) <= 2 * trim + 2:
        return None
    q, tau = lowpass(q, rate, cutoff), lowpass(tau, rate, cutoff)
    qd = np.gradient(q, dt, axis=0)
    qdd = np.gradient(qd, dt, axis=0)
    every = max(1, int(rate / (OUTPUT_RATE_FACTOR * cutoff)))
    keep = slice(trim, len(grid) - trim, every)
    return Signals(grid[keep], q[keep], qd[keep], qdd[keep], tau[keep])
