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
PNG plots of a run: tracking, effort and its limits, the tip path, measured vs predicted torque.

The functions take numpy arrays and joint names (no ROS types, no recording format), so that
``robot-dynamics plot`` (from a recording), the ROS demo (from what it planned and measured) and
``robot-dynamics simulate`` draw the same figures. Matplotlib (the ``plots`` extra) is imported
only when a figure is drawn, on its Agg canvas (no pyplot, no global state);
:func:`require_matplotlib` raises :class:`PlotDependencyError` when it is missing.
"""

import numpy as np

from .errors import as_array, InputError, RobotDynamicsError, ShapeError

#: Resolution of the written PNGs [dots per inch].
DPI = 100


class PlotDependencyError(RobotDynamicsError, ImportError):
    """Matplotlib, needed for the PNG plots, is not installed."""


def require_matplotlib():
    """Import matplotlib's Agg canvas and Figure, or raise :class:`PlotDependencyError`."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotDependencyError(
            'plots need matplotlib, which is not installed: pip install matplotlib (or the '
            "'plots' extra, pip install 'robot_dynamics[plots]')") from None
    return FigureCanvasAgg, Figure


def figure(figsize):
    """Return a matplotlib Figure on the Agg canvas (no pyplot, no global state)."""
    FigureCanvasAgg, Figure = require_matplotlib()
    fig = Figure(figsize=figsize, layout='constrained')
    FigureCanvasAgg(fig)
    return fig


def _series(x, width, name, rows=None):
    """Return ``x`` as floats of shape (K,) (``width`` None) or (K, width); K = ``rows`` if set."""
    shape = () if width is None else (width,)
    arr = as_array(x, shape, name, finite=False)
    if arr.ndim != len(shape) + 1 or (rows is not None and arr.shape[0] != rows):
        want = ', '.join(['K' if rows is None else str(rows)] + [str(s) for s in shape])
        raise ShapeError(f'{name}: expected shape ({want}), got {arr.shape}')
    return arr


def _units(units, names, default):
    if units is None:
        return [default] * len(names)
    if len(units) != len(names):
        raise InputError(f'units: expected one per joint ({len(names)}), got {len(units)}')
    return list(units)


def plot_tracking(path, t, names, q, q_ref=None, error=None, units=None, waypoints=None,
                  title=''):
    """
    Write a PNG with one row per joint: position (actual, reference, waypoints) and error.

    Parameters
    ----------
    path : str or path-like
        Output file (``.png``).
    t : array_like, shape (K,)
        Time [s] of the samples.
    names : sequence of str, length n
        Joint names.
    q : array_like, shape (K, n)
        Measured positions [rad or m].
    q_ref : array_like, shape (K, n), optional
        Reference positions at the same times; without it, only positions are drawn.
    error : array_like, shape (K, n), optional
        Tracking error [rad or m]; default ``q_ref - q`` when ``q_ref`` is given.
    units : sequence of str, optional
        Unit of each joint's position (``'rad'`` or ``'m'``); default ``'rad or m'``.
    waypoints : tuple (t_w (M,), q_w (M, n)), optional
        Goal points (e.g. a trajectory's points) drawn as markers.
    title : str
        Figure title.

    """
    t = _series(t, None, 't')
    names = list(names)
    q = _series(q, len(names), 'q', len(t))
    if q_ref is not None:
        q_ref = _series(q_ref, len(names), 'q_ref', len(t))
        error = q_ref - q if error is None else _series(error, len(names), 'error', len(t))
    if waypoints is not None:
        t_w = _series(waypoints[0], None, 'waypoints times')
        waypoints = (t_w, _series(waypoints[1], len(names), 'waypoints positions', len(t_w)))
    units = _units(units, names, 'rad or m')
    columns = 1 if error is None else 2
    fig = figure((4.0 + 4.0 * columns, 2.2 * len(names) + 1.0))
    axes = fig.subplots(len(names), columns, sharex=True, squeeze=False)
    for j, (name, unit) in enumerate(zip(names, units)):
        ax = axes[j, 0]
        ax.plot(t, q[:, j], color='C0', lw=1.2, label='actual')
        if q_ref is not None:
            ax.plot(t, q_ref[:, j], '--', color='C1', lw=1.2, label='reference')
        if waypoints is not None:
            ax.plot(waypoints[0], waypoints[1][:, j], 'o', color='C3', ms=4,
                    label='goal points')
        ax.set_ylabel(f'{name}\nposition [{unit}]')
        if error is not None:
            axes[j, 1].plot(t, error[:, j], color='C2', lw=1.0)
            axes[j, 1].set_ylabel(f'{name}\nerror q_ref - q [{unit}]')
            axes[j, 1].axhline(0.0, color='k', lw=0.5)
    axes[0, 0].legend(loc='best', fontsize='small')
    axes[0, 0].set_title('position: actual and reference' if q_ref is not None else
                         'position')
    if error is not None:
        axes[0, 1].set_title('tracking error')
    for ax in axes[-1]:
        ax.set_xlabel('time [s]')
    for ax in axes.flat:
        ax.grid(True, lw=0.3)
    fig.suptitle(title or 'joint tracking')
    fig.savefig(path, dpi=DPI)


def plot_effort(path, t, names, effort, limits=None, units=None, title=''):
    """
    Write a PNG with one row per joint: effort, and its limits as dotted lines.

    Parameters
    ----------
    path : str or path-like
        Output file (``.png``).
    t : array_like, shape (K,)
        Time [s].
    names : sequence of str, length n
        Joint names.
    effort : array_like, shape (K, n)
        Effort [N m or N].
    limits : array_like, shape (n,), optional
        Effort limits [N m or N], drawn at +-limit; NaN or inf: none for that joint.
    units : sequence of str, optional
        Unit of each joint's effort (``'N m'`` or ``'N'``); default ``'N m or N'``.
    title : str
        Figure title.

    """
    t = _series(t, None, 't')
    names = list(names)
    effort = _series(effort, len(names), 'effort', len(t))
    limits = (np.full(len(names), np.nan) if limits is None
              else as_array(limits, (len(names),), 'limits', finite=False))
    units = _units(units, names, 'N m or N')
    fig = figure((8.0, 2.0 * len(names) + 1.0))
    axes = fig.subplots(len(names), 1, sharex=True, squeeze=False)[:, 0]
    for j, (ax, name, unit) in enumerate(zip(axes, names, units)):
        ax.plot(t, effort[:, j], color='C0', lw=1.0, label='effort')
        if np.isfinite(limits[j]):
            for sign in (-1.0, 1.0):
                ax.axhline(sign * limits[j], color='C3', ls=':', lw=1.2,
                           label='limit' if sign > 0 else None)
        ax.set_ylabel(f'{name}\n[{unit}]')
        ax.grid(True, lw=0.3)
    handles = [h for ax in axes for h in ax.get_legend_handles_labels()[0]]
    labels = [lab for ax in axes for lab in ax.get_legend_handles_labels()[1]]
    unique = dict(zip(labels, handles))
    axes[0].legend(unique.values(), unique.keys(), loc='best', fontsize='small')
    axes[-1].set_xlabel('time [s]')
    fig.suptitle(title or 'joint effort and limits')
    fig.savefig(path, dpi=DPI)


def plot_torques(path, t, names, measured, predicted, units=None, title=''):
    """
    Write a PNG with one row per joint: measured torque and the torques models predict.

    Parameters
    ----------
    path : str or path-like
        Output file (``.png``).
    t : array_like, shape (K,)
        Time [s].
    names : sequence of str, length n
        Joint names.
    measured : array_like, shape (K, n)
        Measured torque [N m or N].
    predicted : mapping of str to array_like, shape (K, n)
        Each model's prediction, by label (e.g. ``{'recorded model': ..., 'identified': ...}``);
        the rms error is added to its label per joint.
    units : sequence of str, optional
        Unit of each joint's torque; default ``'N m or N'``.
    title : str
        Figure title.

    """
    t = _series(t, None, 't')
    names = list(names)
    measured = _series(measured, len(names), 'measured', len(t))
    predicted = {label: _series(x, len(names), label, len(t)) for label, x in predicted.items()}
    units = _units(units, names, 'N m or N')
    fig = figure((9.0, 2.0 * len(names) + 1.0))
    axes = fig.subplots(len(names), 1, sharex=True, squeeze=False)[:, 0]
    for j, (ax, name, unit) in enumerate(zip(axes, names, units)):
        ax.plot(t, measured[:, j], color='k', lw=1.2, label='measured')
        for k, (label, x) in enumerate(predicted.items()):
            error = float(np.sqrt(np.mean((x[:, j] - measured[:, j]) ** 2)))
            ax.plot(t, x[:, j], color=f'C{k}', lw=1.0, ls='--',
                    label=f'{label} (rms error {error:.3g})')
        ax.set_ylabel(f'{name}\n[{unit}]')
        ax.grid(True, lw=0.3)
        ax.legend(loc='best', fontsize='small')
    axes[-1].set_xlabel('time [s]')
    fig.suptitle(title or 'measured and predicted joint torques')
    fig.savefig(path, dpi=DPI)


def plot_tip_path(path, p, planned=None, waypoints=None, title=''):
    """
    Write a PNG of the tip path in the base frame: two views, x-y (top) and x-z (side).

    Parameters
    ----------
    path : str or path-like
        Output file (``.png``).
    p : array_like, shape (K, 3)
        Tip positions [m], base frame.
    planned : array_like, shape (L, 3), optional
        The planned (reference) path [m], drawn dashed.
    waypoints : array_like, shape (M, 3), optional
        Planned Cartesian goal points [m], drawn as markers.
    title : str
        Figure title.

    """
    p = _series(p, 3, 'p')
    if planned is not None:
        planned = _series(planned, 3, 'planned')
    if waypoints is not None:
        waypoints = _series(waypoints, 3, 'waypoints')
    fig = figure((11.0, 5.5))
    axes = fig.subplots(1, 2)
    for ax, (i, k), view in zip(axes, ((0, 1), (0, 2)), ('top view (x-y)', 'side view (x-z)')):
        if planned is not None:
            ax.plot(planned[:, i], planned[:, k], '--', color='C1', lw=1.5, label='planned',
                    zorder=3)
        ax.plot(p[:, i], p[:, k], color='C0', lw=1.2, label='actual')
        if p.shape[0]:
            ax.plot(p[0, i], p[0, k], 's', color='C0', ms=6, label='start')
        if waypoints is not None:
            ax.plot(waypoints[:, i], waypoints[:, k], 'o', color='C3', ms=5,
                    label='goal points')
        ax.set_xlabel(f'{"xyz"[i]} [m]')
        ax.set_ylabel(f'{"xyz"[k]} [m]')
        ax.set_title(view)
        ax.set_aspect('equal', adjustable='datalim')
        ax.grid(True, lw=0.3)
    axes[0].legend(loc='best', fontsize='small')
    fig.suptitle(title or 'tip path, base frame')
    fig.savefig(path, dpi=DPI)
