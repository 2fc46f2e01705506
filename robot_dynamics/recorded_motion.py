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
The motion a recording shows, and the files of ``robot-dynamics plot``.

The joints against their reference, the efforts against their limits, the tip's path.

From a recording read by :mod:`robot_dynamics.recordings` (the topics are the graph's, passed in
as :class:`~robot_dynamics.recordings.Topics`): :func:`tracking` (from the controller's state
when present, else the joint states alone, with the goals' points), :func:`effort` (against the
limits of the recorded robot description), :func:`tip_path` (forward kinematics of the joint
states with the recorded description, else the kinematics node's tip pose), each the arguments
of its figure in :mod:`robot_dynamics.plots`, or None and a note that says why. :func:`export`
writes the CSV files of every topic and these figures.
"""

from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np

from . import plots
from .recordings import controller_states, read, robot_model, trajectory_goals, write_tables

#: The figures' file names, by figure.
PLOT_FILES = {'tracking': 'tracking.png', 'effort': 'effort.png', 'tip_path': 'tip_path.png'}


def _units(names, model, revolute, prismatic):
    if model is None:
        return [f'{revolute} or {prismatic}'] * len(names)
    kinds = dict(zip(model.joint_names, model.is_prismatic))
    return [prismatic if kinds.get(n) else revolute if n in kinds else
            f'{revolute} or {prismatic}' for n in names]


class Tracking(NamedTuple):
    """Arguments of :func:`robot_dynamics.plots.plot_tracking`."""

    t: np.ndarray
    names: list
    q: np.ndarray
    q_ref: Optional[np.ndarray]
    error: Optional[np.ndarray]
    units: list
    waypoints: Optional[tuple]
    title: str


class Effort(NamedTuple):
    """Arguments of :func:`robot_dynamics.plots.plot_effort`."""

    t: np.ndarray
    names: list
    effort: np.ndarray
    limits: np.ndarray
    units: list
    title: str


class TipPath(NamedTuple):
    """Arguments of :func:`robot_dynamics.plots.plot_tip_path`."""

    p: np.ndarray
    planned: Optional[np.ndarray]
    waypoints: Optional[np.ndarray]
    title: str


def _finite_rows(*arrays):
    """Return the rows (K,) where every given array (K,) or (K, m) is finite (None: ignored)."""
    rows = None
    for a in arrays:
        if a is not None:
            ok = np.isfinite(a) if a.ndim == 1 else np.all(np.isfinite(a), axis=1)
            rows = ok if rows is None else rows & ok
    return rows


def _skipped(count, total, topic, what='missing or non-finite joint values'):
    """Return the note on ``count`` of ``total`` messages of ``topic`` left out ('' if none)."""
    return f'skipped {count} of {total} {topic} messages ({what})' if count else ''


def _goal_points(recording, topics, names):
    """
    Return ``((t (M,), q (M, len(names))) or None, note)``: the recorded goals' points.

    Goals that do not name every joint of ``names`` are not these joints' goals; goals with a
    point of another length than their joint names, or with non-finite values (what a
    controller rejects) are skipped and counted in the note.
    """
    goals, bad = trajectory_goals(recording, topics, names)
    table = recording.tables.get(topics.joint_trajectory)
    note = _skipped(bad, len(table) if table else 0, topics.joint_trajectory,
                    'points of another length than the joint names, or non-finite values')
    if not goals:
        return None, note
    return (np.concatenate([goal.t for goal in goals]),
            np.concatenate([goal.q for goal in goals])), note


def _notes(*notes):
    return '; '.join(n for n in notes if n)


def tracking(recording, topics, model=None):
    """
    Return ``(Tracking or None, note)`` of a recording; see :func:`export`.

    Messages with missing or non-finite values are left out and counted in the note (which
    says why not, when nothing is left to draw).
    """
    state = controller_states(recording, topics)
    if state is not None and state.joints('feedback.positions'):
        names = state.joints('feedback.positions')
        t = state.time()
        q = state.joint_array('feedback.positions', names)
        q_ref = state.joint_array('reference.positions', names) \
            if set(names) <= set(state.joints('reference.positions')) else None
        error = state.joint_array('error.positions', names) \
            if q_ref is not None and set(names) <= set(state.joints('error.positions')) else None
        table, source = state, f'{state.topic}: reference and feedback'
    elif recording.tables.get(topics.joint_states) is not None:
        table = recording.tables[topics.joint_states]
        names = table.joints('position')
        t, q, q_ref, error = table.time(), table.joint_array('position', names), None, None
        source = f'{topics.joint_states} (no {topics.controller_state} recorded: no reference)'
    else:
        return None, (f'neither {topics.controller_state} nor {topics.joint_states} in the '
                      'recording')
    if not names:
        return None, f'no joint positions in {table.topic}'
    rows = _finite_rows(t, q, q_ref, error)
    skipped = _skipped(int((~rows).sum()), len(rows), table.topic)
    if not rows.any():
        return None, _notes(f'no joint positions in {table.topic}', skipped)
    t, q = t[rows], q[rows]
    q_ref, error = (None if a is None else a[rows] for a in (q_ref, error))
    t0 = t[0]
    waypoints, goals = _goal_points(recording, topics, names)
    if waypoints is not None:
        waypoints = (waypoints[0] - t0, waypoints[1])
    return Tracking(t - t0, names, q, q_ref, error, _units(names, model, 'rad', 'm'), waypoints,
                    f'joint tracking\nfrom {source}'), _notes(skipped, goals)


def effort(recording, topics, model=None):
    """Return ``(Effort or None, note)`` of a recording; see :func:`tracking`, :func:`export`."""
    state = controller_states(recording, topics)
    joints = recording.tables.get(topics.joint_states)
    if state is not None and state.joints('effort'):
        table, source = state, f'commanded effort, {state.topic}'
    elif joints is not None and joints.joints('effort'):
        table, source = joints, f'effort, {topics.joint_states}'
    else:
        return None, f'no effort in {topics.controller_state} or {topics.joint_states}'
    names = table.joints('effort')
    t, values = table.time(), table.joint_array('effort', names)
    rows = _finite_rows(t, values)
    skipped = _skipped(int((~rows).sum()), len(rows), table.topic)
    if not rows.any():
        return None, _notes(f'no finite effort in {table.topic}', skipped)
    t, values = t[rows], values[rows]
    limits = np.full(len(names), np.nan)
    if model is not None:
        known = dict(zip(model.joint_names, model.effort_limit))
        limits = np.array([known.get(n, np.nan) for n in names])
        note = 'limits from the recorded robot description'
    else:
        note = 'no limits: no robot description in the recording'
    return Effort(t - t[0], names, values, limits, _units(names, model, 'N m', 'N'),
                  f'{source}\n{note}'), skipped


def tip_path(recording, topics, model=None):
    """Return ``(TipPath or None, note)`` of a recording; see :func:`tracking`, :func:`export`."""
    state = controller_states(recording, topics)
    joints = recording.tables.get(topics.joint_states)
    if model is not None:
        wanted, names = set(model.joint_names), list(model.joint_names)
        for table, field in ((joints, 'position'), (state, 'feedback.positions')):
            if table is None or not wanted <= set(table.joints(field)):
                continue
            q = table.joint_array(field, names)
            rows = _finite_rows(q)
            skipped = _skipped(int((~rows).sum()), len(rows), table.topic)
            if not rows.any():
                continue
            p = model.fk(q[rows])[:, :3, 3]
            planned = None
            if state is not None and wanted <= set(state.joints('reference.positions')):
                reference = state.joint_array('reference.positions', names)
                reference = reference[_finite_rows(reference)]
                planned = model.fk(reference)[:, :3, 3] if len(reference) else None
            goals, goal_note = _goal_points(recording, topics, names)
            waypoints = None if goals is None else model.fk(goals[1])[:, :3, 3]
            return TipPath(p, planned, waypoints,
                           f'tip path: {model.tip_link} in the {model.base_link} frame\n'
                           f'forward kinematics of {table.topic}'), _notes(skipped, goal_note)
    pose = recording.tables.get(topics.tip_pose)
    if pose is not None and len(pose):
        p = np.stack([pose.column(f'pose.position.{axis}') for axis in 'xyz'], axis=-1)
        rows = _finite_rows(p)
        if rows.any():
            return (TipPath(p[rows], None, None, f'tip path, base frame\nfrom {topics.tip_pose}'),
                    _skipped(int((~rows).sum()), len(rows), topics.tip_pose,
                             'non-finite positions'))
    return None, (f'neither {topics.tip_pose} nor joint positions with a robot description in '
                  'the recording')


def export(path, out_dir, topics, plot=True):
    """
    Write a CSV per topic and (if ``plot``) the PNG plots of a recording into ``out_dir``.

    ``topics``: the :class:`Topics` the plots are drawn from.

    Returns ``(written, notes)``: the files written, and one line per topic skipped, plot left
    out or messages a plot left out (a rejected goal with NaN positions, arrays of another
    length than their joint names), saying why and how many. Raises
    :class:`~robot_dynamics.plots.PlotDependencyError` before reading when ``plot`` and
    matplotlib is missing.
    """
    if plot:
        plots.require_matplotlib()
    recording = read(path)
    out_dir = Path(out_dir)
    written = write_tables(recording, topics, out_dir)
    notes = [f'{topic}: skipped: {why}' for topic, why in recording.skipped.items()]
    if recording.problem:
        notes.append(recording.problem)
    if not plot:
        return written, notes
    model, note = robot_model(recording, topics)
    if note:
        notes.append(note)
    for name, (data, note), draw in (
            ('tracking', tracking(recording, topics, model), plots.plot_tracking),
            ('effort', effort(recording, topics, model), plots.plot_effort),
            ('tip_path', tip_path(recording, topics, model), plots.plot_tip_path)):
        if data is None:
            notes.append(f'{PLOT_FILES[name]}: not drawn: {note}')
            continue
        if note:
            notes.append(f'{PLOT_FILES[name]}: {note}')
        draw(out_dir / PLOT_FILES[name], **data._asdict())
        written.append(out_dir / PLOT_FILES[name])
    return written, notes
