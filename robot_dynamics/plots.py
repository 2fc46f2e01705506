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
``robot-dynamics simulate`` draw the same figures, in one style: the reference is a wide light
band under the measured line, the error is ``q_ref - q``, each joint has its own units (rad or
m, N m or N), an effort axis is scaled to the effort with the limits marked where they are in
view and the peak share of the limit written on it, and the tip path is drawn in the planes it
moves in (:func:`tip_views`) at equal scales. Matplotlib (the ``plots`` extra) is imported only
when a figure is drawn, on its Agg canvas (no pyplot, no global state);
:func:`require_matplotlib` raises :class:`PlotDependencyError` when it is missing. Each function
returns the figure it wrote.
"""

from typing import NamedTuple

import numpy as np

from .errors import as_array, InputError, RobotDynamicsError, ShapeError

#: Resolution of the written PNGs [dots per inch].
DPI = 100
#: The tracking error, as every figure names it.
ERROR_LABEL = 'error q_ref - q'
#: Reference: a wide light band; measured: a thin dark line over it.
REFERENCE_STYLE = {'color': 'C1', 'lw': 4.0, 'alpha': 0.45, 'solid_capstyle': 'butt'}
ACTUAL_STYLE = {'color': 'C0', 'lw': 1.2}
#: An effort axis shows its limits when they are within this factor of the peak effort.
LIMIT_IN_VIEW = 2.0
#: A tip path also gets its second view when its spread along the axis its main view leaves out
#: exceeds this share of its largest spread along an axis.
OUT_OF_PLANE = 0.05
AXES = 'xyz'


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


def _limits(limits, names):
    return (np.full(len(names), np.nan) if limits is None
            else as_array(limits, (len(names),), 'limits', finite=False))


def units_label(names, units):
    """Return the units of joints drawn on one axis: ``'rad'``, or ``'rad; m for quill'``."""
    units = list(units)
    main = max(set(units), key=lambda unit: (units.count(unit), unit in ('rad', 'N m')))
    return '; '.join([main] + [f'{u} for {n}' for n, u in zip(names, units) if u != main])


def draw_reference_and_actual(ax, t, reference, actual, label=''):
    """Draw a reference (a wide light band) and the measured values (a thin line over it)."""
    if reference is not None:
        ax.plot(t, reference, label=f'{label}reference', **REFERENCE_STYLE)
    ax.plot(t, actual, label=f'{label}actual', **ACTUAL_STYLE)


def draw_effort(ax, t, effort, limit, unit):
    """
    Draw one joint's effort, the axis scaled to it, and its limit.

    The limits are drawn as dotted lines when they lie within ``LIMIT_IN_VIEW`` times the peak
    effort (the axis then reaches them); a corner note gives the peak as a share of the limit
    either way, so that 5 N m against 80 N m reads as what it is, not as a flat line.
    """
    ax.plot(t, effort, color='C0', lw=1.0, label='effort')
    finite = effort[np.isfinite(effort)]
    peak = float(np.abs(finite).max()) if finite.size else 0.0
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (-1.0, 1.0)
    if np.isfinite(limit) and limit > 0.0:
        if limit <= LIMIT_IN_VIEW * peak:
            for sign in (-1.0, 1.0):
                ax.axhline(sign * limit, color='C3', ls=':', lw=1.2,
                           label='limit' if sign > 0 else None)
            low, high = min(low, -limit if low < 0.0 else low), max(high, limit)
        ax.text(0.01, 0.97, f'peak {peak:.3g} {unit} = {100.0 * peak / limit:.2g} % of the '
                f'limit {limit:.3g} {unit}', transform=ax.transAxes, va='top', fontsize='small')
    # a constant effort (holding still) stays a flat line, not magnified rounding; room above
    # for the note
    span = max(high - low, 0.1 * max(abs(high), abs(low)), 1e-9)
    ax.set_ylim(low - 0.08 * span, high + 0.25 * span)


def plot_tracking(path, t, names, q, q_ref=None, error=None, units=None, waypoints=None,
                  title='', effort=None, limits=None, effort_units=None):
    """
    Write a PNG with one row per joint: position (reference and actual), error, and effort.

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
    effort : array_like, shape (K, n), optional
        Commanded effort [N m or N]: a third column, as :func:`draw_effort` draws it.
    limits : array_like, shape (n,), optional
        Effort limits [N m or N] of that column; NaN or inf: none for that joint.
    effort_units : sequence of str, optional
        Unit of each joint's effort (``'N m'`` or ``'N'``); default ``'N m or N'``.

    Returns
    -------
    matplotlib.figure.Figure

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
    if effort is not None:
        effort = _series(effort, len(names), 'effort', len(t))
    limits = _limits(limits, names)
    units = _units(units, names, 'rad or m')
    effort_units = _units(effort_units, names, 'N m or N')
    columns = [c for c, data in (('position', q), ('error', error), ('effort', effort))
               if data is not None]
    fig = figure((4.0 + 4.0 * len(columns), 2.2 * len(names) + 1.0))
    axes = fig.subplots(len(names), len(columns), sharex=True, squeeze=False)
    column = {c: axes[:, k] for k, c in enumerate(columns)}
    for j, (name, unit) in enumerate(zip(names, units)):
        ax = column['position'][j]
        draw_reference_and_actual(ax, t, None if q_ref is None else q_ref[:, j], q[:, j])
        if waypoints is not None:
            ax.plot(waypoints[0], waypoints[1][:, j], 'o', color='C3', ms=4,
                    label='goal points')
        ax.set_ylabel(f'{name}\nposition [{unit}]')
        if error is not None:
            ax = column['error'][j]
            ax.plot(t, error[:, j], color='C2', lw=1.0)
            ax.axhline(0.0, color='k', lw=0.5)
            ax.set_ylabel(f'{name}\n{ERROR_LABEL} [{unit}]')
        if effort is not None:
            ax = column['effort'][j]
            draw_effort(ax, t, effort[:, j], limits[j], effort_units[j])
            ax.set_ylabel(f'{name}\neffort [{effort_units[j]}]')
    column['position'][0].legend(loc='best', fontsize='small')
    column['position'][0].set_title('position: reference and actual' if q_ref is not None
                                    else 'position')
    if error is not None:
        column['error'][0].set_title('tracking error')
    if effort is not None:
        column['effort'][0].set_title('commanded effort (limits dotted when in view)')
    for ax in axes[-1]:
        ax.set_xlabel('time [s]')
    for ax in axes.flat:
        ax.grid(True, lw=0.3)
    fig.suptitle(title or 'joint tracking')
    fig.savefig(path, dpi=DPI)
    return fig


def plot_effort(path, t, names, effort, limits=None, units=None, title=''):
    """
    Write a PNG with one row per joint: effort on an axis scaled to it, and its limit.

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
        Effort limits [N m or N] (see :func:`draw_effort`); NaN or inf: none for that joint.
    units : sequence of str, optional
        Unit of each joint's effort (``'N m'`` or ``'N'``); default ``'N m or N'``.
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure

    """
    t = _series(t, None, 't')
    names = list(names)
    effort = _series(effort, len(names), 'effort', len(t))
    limits = _limits(limits, names)
    units = _units(units, names, 'N m or N')
    fig = figure((8.0, 2.0 * len(names) + 1.0))
    axes = fig.subplots(len(names), 1, sharex=True, squeeze=False)[:, 0]
    for j, (ax, name, unit) in enumerate(zip(axes, names, units)):
        draw_effort(ax, t, effort[:, j], limits[j], unit)
        ax.set_ylabel(f'{name}\n[{unit}]')
        ax.grid(True, lw=0.3)
    handles = [h for ax in axes for h in ax.get_legend_handles_labels()[0]]
    labels = [lab for ax in axes for lab in ax.get_legend_handles_labels()[1]]
    unique = dict(zip(labels, handles))
    axes[0].legend(unique.values(), unique.keys(), loc='upper right', fontsize='small')
    axes[-1].set_xlabel('time [s]')
    fig.suptitle(title or 'joint effort and limits')
    fig.savefig(path, dpi=DPI)
    return fig


class View(NamedTuple):
    """
    A plane to draw the tip path in.

    ``axes`` (2, 3) are the base-frame directions of its horizontal and vertical axis,
    ``labels`` their axis labels, ``name`` the view's title.
    """

    axes: np.ndarray
    labels: tuple
    name: str


def _coordinate_view(normal):
    """Return the coordinate plane whose normal is base axis ``normal`` (0, 1 or 2) as a View."""
    i, k = [a for a in range(3) if a != normal]
    name = {2: 'top view', 1: 'side view', 0: 'front view'}[normal]
    return View(np.eye(3)[[i, k]], (f'{AXES[i]} [m]', f'{AXES[k]} [m]'),
                f'{name} ({AXES[i]}-{AXES[k]})')


def tip_views(points):
    """
    Return the :class:`View` s that show a tip path (K, 3) [m]: the planes it moves in.

    The base frame's coordinate planes only, whose axes a reader knows at once, ranked by how
    much of the path's spread along the base axes they hold: the best is the main view (x-y is
    the top view, x-z the side view, y-z the front view), and a path that also moves along the
    axis that view leaves out (a spread above ``OUT_OF_PLANE`` of the largest) gets the second
    best as well. A planar arm moving in the vertical x-z plane gets one view, x-z; a SCARA's
    pick-and-place the top view and the side or front view of its lifts.
    """
    p = np.asarray(points, dtype=float).reshape(-1, 3)
    p = p[np.all(np.isfinite(p), axis=1)]
    if len(p) < 2:
        return [_coordinate_view(2)]
    axis_spread = p.std(axis=0)
    left_out = np.argsort(axis_spread)           # the normal of the best plane first
    views = [_coordinate_view(left_out[0])]
    if axis_spread[left_out[0]] > OUT_OF_PLANE * axis_spread.max():
        views.append(_coordinate_view(left_out[1]))
    return views


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
    Write a PNG of the tip path in the base frame, in the planes it moves in (:func:`tip_views`).

    Equal scales on both axes of a view; the start (square) and the end (triangle) of the path
    are marked.

    Parameters
    ----------
    path : str or path-like
        Output file (``.png``).
    p : array_like, shape (K, 3)
        Tip positions [m], base frame.
    planned : array_like, shape (L, 3), optional
        The planned (reference) path [m], drawn as a wide light band.
    waypoints : array_like, shape (M, 3), optional
        Planned Cartesian goal points [m], drawn as markers.
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure

    """
    p = _series(p, 3, 'p')
    if planned is not None:
        planned = _series(planned, 3, 'planned')
    if waypoints is not None:
        waypoints = _series(waypoints, 3, 'waypoints')
    views = tip_views(p if planned is None else np.vstack((p, planned)))
    fig = figure((5.5 * len(views) + 0.5, 5.5))
    axes = fig.subplots(1, len(views), squeeze=False)[0]
    for ax, view in zip(axes, views):
        if planned is not None:
            ax.plot(*view.axes @ planned.T, label='planned', **REFERENCE_STYLE)
        ax.plot(*view.axes @ p.T, label='actual', **ACTUAL_STYLE)
        if waypoints is not None:
            ax.plot(*view.axes @ waypoints.T, 'o', color='C3', ms=4, label='goal points')
        if p.shape[0]:
            ax.plot(*view.axes @ p[0], 's', color='k', ms=7, label='start', zorder=5)
            ax.plot(*view.axes @ p[-1], '^', color='k', ms=8, label='end', zorder=5)
        ax.set_xlabel(view.labels[0])
        ax.set_ylabel(view.labels[1])
        ax.set_title(view.name)
        ax.set_aspect('equal', adjustable='datalim')
        ax.grid(True, lw=0.3)
    axes[0].legend(loc='best', fontsize='small')
    fig.suptitle(title or 'tip path, base frame')
    fig.savefig(path, dpi=DPI)
    return fig


def plot_comparison(path, t, names, runs, units=None, effort_units=None, title=''):
    """
    Write a PNG comparing runs side by side (one column each): error and effort per joint.

    Parameters
    ----------
    path : str or path-like
        Output file (``.png``).
    t : array_like, shape (K,)
        Time [s], shared by the runs.
    names : sequence of str, length n
        Joint names.
    runs : sequence of (str, array_like (K, n), array_like (K, n))
        Each run's label, tracking error ``q_ref - q`` [rad or m] and effort [N m or N].
    units, effort_units : sequence of str, optional
        Each joint's unit of position and of effort.
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure

    Rows share their y axis, so that the error magnitudes compare at a glance.

    """
    t = _series(t, None, 't')
    names = list(names)
    units = _units(units, names, 'rad or m')
    effort_units = _units(effort_units, names, 'N m or N')
    fig = figure((5.0 * len(runs), 7.0))
    axes = fig.subplots(2, len(runs), sharex=True, sharey='row', squeeze=False)
    for col, (label, error, effort) in enumerate(runs):
        error = _series(error, len(names), f'{label} error', len(t))
        effort = _series(effort, len(names), f'{label} effort', len(t))
        for j, name in enumerate(names):
            axes[0, col].plot(t, error[:, j], color=f'C{j}', lw=1.0, label=name)
            axes[1, col].plot(t, effort[:, j], color=f'C{j}', lw=1.0, label=name)
        axes[0, col].set_title(f'{label}\nrms {np.sqrt(np.mean(error ** 2)):.3g}, max '
                               f'{np.abs(error).max():.3g}')
        axes[1, col].set_xlabel('time [s]')
        for ax in axes[:, col]:
            ax.grid(True, lw=0.3)
    axes[0, 0].set_ylabel(f'{ERROR_LABEL} [{units_label(names, units)}]')
    axes[1, 0].set_ylabel(f'effort [{units_label(names, effort_units)}]')
    axes[0, 0].legend(loc='best', fontsize='small')
    fig.suptitle(title or 'runs compared')
    fig.savefig(path, dpi=DPI)
    return fig
