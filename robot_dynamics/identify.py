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
The identification pipeline: recorded joint states in, an identified model and a report out.

The steps of ``robot-dynamics identify``, of ``examples/identify_payload.py`` and of the tests,
in one place: read the joint states (:func:`from_recording`: ``/joint_states`` and
``/robot_description`` of an MCAP file), check that the motion can identify the arm
(:func:`robot_dynamics.identification.check_motion`), filter and differentiate each stretch
between gaps (:func:`robot_dynamics.signals.filtered`), leave out the samples at rest, keep the
last ``held_out`` fraction of the others apart, fit the rest
(:func:`robot_dynamics.identification.identify`: weighted least squares,
then the physically consistent model), and predict the held-out torques with the nominal and the
identified model (:func:`from_samples`). :meth:`Identified.report` is the JSON report,
:func:`from_recording` also gives the URDF text with the identified parameters.
"""

from typing import NamedTuple, Optional

import numpy as np

from . import identification, signals
from .errors import InputError

#: Default last fraction of the samples in motion kept for the held-out prediction error.
DEFAULT_HELD_OUT = 0.2
#: Labels of :attr:`Identified.predictions` and :attr:`Identified.rms`.
NOMINAL, IDENTIFIED = 'recorded model', 'identified model'
#: Least fraction of the excitation a recording must cover for ``robot-dynamics identify``
#: (``--partial`` takes less); below :data:`FULL_COVERAGE` it warns.
MIN_COVERAGE = 0.9
#: A fraction of the excitation taken as all of it: without a goal in the recording, the motion
#: is measured from where the arm leaves its first position to where it reaches its last.
FULL_COVERAGE = 0.99
#: How far [rad or m] a joint moves from the arm's first (to its last) position where its
#: motion begins (ends): well above an encoder's noise, well below an excitation's amplitude.
MOTION_THRESHOLD = 1e-3


class Coverage(NamedTuple):
    """
    How much of the excitation the recorded joint states cover.

    ``covered`` and ``expected`` [s] (None: not known), ``reference``: what the excitation was
    taken from ('' if nothing: not checked), ``why``: what cut it short, or why it could not
    be checked ('' if nothing); ``failed``: the recording shows the goal ended before its
    length (aborted, canceled), whether its length is known or not.
    """

    covered: Optional[float]
    expected: Optional[float]
    reference: str
    why: str
    failed: bool = False

    @property
    def fraction(self):
        """Return the fraction covered, at most 1 (None: not known)."""
        if self.covered is None or not self.expected:
            return None
        return min(1.0, self.covered / self.expected)

    @property
    def full(self):
        """Return True when the recording covers the excitation (False: short or unknown)."""
        return self.fraction is not None and self.fraction >= FULL_COVERAGE

    def short(self, minimum):
        """Return True below the fraction ``minimum``, or for an unknown part of a failed goal."""
        fraction = self.fraction
        return self.failed if fraction is None else fraction < minimum

    def describe(self):
        """Return the coverage in words, one line."""
        if not self.reference:
            return f'coverage of the excitation not checked: {self.why}'
        amount = (f'{self.covered:.1f} s of the {self.expected:.1f} s excitation '
                  f'({100 * self.fraction:.0f} %)' if self.fraction is not None else
                  f'{self.covered:.1f} s of an excitation of unknown length')
        return f'the recording covers {amount} ({self.reference})' + \
            (f': {self.why}' if self.why else '')

    def report(self):
        """Return the JSON-ready values of the report's ``excitation_coverage``."""
        return {'covered_s': self.covered, 'expected_s': self.expected,
                'fraction': self.fraction, 'reference': self.reference or None,
                'why': self.why or None}


class Identified(NamedTuple):
    """
    What :func:`from_samples` found.

    ``model``: the nominal model (the kinematics, and the reference of the comparison);
    ``result``: the :class:`~robot_dynamics.identification.Identification` (``result.model`` is
    the identified model); ``base``: the base parameters fitted; ``signals``: the prepared
    samples in which the arm moves, ``train`` and ``test`` the fitted and the held-out part;
    ``samples`` and ``duration`` [s]: the raw joint states; ``stretches`` and ``gaps`` [s]: the
    parts between gaps and the time lost in the gaps; ``at_rest``: the filtered samples left out,
    every joint slower than :data:`~robot_dynamics.identification.MIN_VELOCITY`;
    ``predictions``: the held-out torques (K, n) predicted by each model
    (:data:`NOMINAL`, :data:`IDENTIFIED`), ``rms``: their rms error per joint (n,) [N m or N].
    """

    model: object
    result: identification.Identification
    base: identification.BaseParameters
    signals: signals.Signals
    train: signals.Signals
    test: signals.Signals
    samples: int
    duration: float
    stretches: int
    gaps: float
    cutoff: float
    held_out: float
    at_rest: int
    predictions: dict
    rms: dict
    coverage: Optional[Coverage] = None

    @property
    def identified(self):
        """Return the identified, physically consistent model."""
        return self.result.model

    def report(self):
        """Return the report as JSON-ready values (the keys of ``robot-dynamics identify``)."""
        model, identified, estimate = self.model, self.identified, self.result.estimate
        rms = self.rms
        return {
            'robot': model.name, 'joint_names': list(model.joint_names),
            'base_link': model.base_link, 'tip_link': model.tip_link,
            'samples': {'joint_states': self.samples, 'duration_s': self.duration,
                        'cutoff_hz': self.cutoff, 'rate_hz': float(self.signals.rate),
                        'stretches': self.stretches, 'gaps_s': self.gaps,
                        'at_rest': self.at_rest, 'identification': int(self.train.t.size),
                        'held_out': int(self.test.t.size), 'held_out_fraction': self.held_out},
            'base_parameters': estimate.as_dict(),
            'condition_number': estimate.condition_number,
            'consistent_model': {
                'base_parameters': self.result.consistency.base_values.tolist(),
                'max_deviation_std': float(np.nanmax(self.result.consistency.deviation)),
                'mass': identified.mass.tolist(), 'com': identified.com.tolist(),
                'inertia': identified.inertia.tolist(), 'damping': identified.damping.tolist(),
                'friction': identified.friction.tolist()},
            'recorded_model': {'mass': model.mass.tolist(), 'damping': model.damping.tolist(),
                               'friction': model.friction.tolist()},
            'held_out_rms_torque_error': {
                'recorded_model': rms[NOMINAL].tolist(),
                'identified_model': rms[IDENTIFIED].tolist(),
                'recorded_model_overall': float(np.sqrt(np.mean(rms[NOMINAL] ** 2))),
                'identified_model_overall': float(np.sqrt(np.mean(rms[IDENTIFIED] ** 2)))},
            'excitation_coverage': self.coverage and self.coverage.report(),
        }


def from_samples(model, t, q, tau, *, cutoff=signals.DEFAULT_CUTOFF,
                 held_out=DEFAULT_HELD_OUT):
    """
    Identify ``model``'s parameters from joint states: ``t`` (K,) [s], ``q``, ``tau`` (K, n).

    Positions [rad or m] and measured joint torques [N m or N] in model order; ``cutoff`` [Hz]
    of the low-pass filter; the samples at rest are left out, and the last ``held_out`` fraction
    (in (0, 1)) of the others is predicted, not fitted. Raises ``InputError`` naming why samples
    cannot serve. Returns :class:`Identified`.
    """
    if not 0.0 < held_out < 1.0:
        raise InputError(f'held_out: expected a fraction in (0, 1), got {held_out!r}')
    t = np.asarray(t, dtype=float)
    identification.check_motion(model, t, q)
    prepared = signals.filtered(t, q, tau, cutoff=cutoff)
    # the samples in which the arm moves: at rest the measured torque is anything within static
    # friction, or nothing at all where brakes hold the arm (a recording's idle start and end)
    moving = np.abs(prepared.qd).max(axis=1) >= identification.MIN_VELOCITY
    count = int(moving.sum())
    if count < 2:
        raise InputError(f'the arm moves faster than {identification.MIN_VELOCITY} rad/s (or '
                         f'm/s) in {count} of {moving.size} filtered samples: '
                         'nothing to identify from')
    at_rest = moving.size - count
    prepared = prepared.select(moving)
    parts = signals.stretches(t)
    lost = sum(t[part.start] - t[part.start - 1] for part in parts[1:])
    train, test = prepared.split(held_out)
    base = identification.base_parameters(model)
    result = identification.identify(model, train.q, train.qd, train.qdd, train.tau, base=base)
    predictions = {label: candidate.inverse_dynamics(test.q, test.qd, test.qdd, friction=True)
                   for label, candidate in ((NOMINAL, model), (IDENTIFIED, result.model))}
    rms = {label: np.sqrt(np.mean((x - test.tau) ** 2, axis=0))
           for label, x in predictions.items()}
    return Identified(model, result, base, prepared, train, test, int(t.size),
                      float(t[-1] - t[0]), len(parts), float(lost), cutoff, held_out, at_rest,
                      predictions, rms)


def coverage(recording, topics, names, t, q, excitation=None, label='the excitation'):
    """
    Return the :class:`Coverage` of the excitation by joint states ``t`` (K,) [s], ``q`` (K, n).

    The excitation is the recording's longest goal of the joints ``names`` (``q``'s): of
    ``topics.joint_trajectory`` (its points give its length), or of the action
    ``topics.joint_action`` (its status gives its start and end; one that succeeded lasted its
    length, one that failed or did not end in the recording has no known length).
    ``excitation``, the :class:`~robot_dynamics.trajectory.TrajectoryPoints` sent (``label``
    names it), gives the length instead. The joint states cover it from its start to the
    earliest of its length, the end its status shows and the last joint state. Without a goal,
    the excitation's points (from its first to its last) are compared with the arm's motion:
    from where a joint first leaves its first position by :data:`MOTION_THRESHOLD` to where the
    last one reaches its last position (a lead-in in motion counts). Raises ``InputError`` when
    ``excitation`` lacks a joint of ``names``.
    """
    from .recordings import action_goals, trajectory_goals
    if excitation is not None and not set(names) <= set(excitation.joint_names):
        raise InputError(f'{label} names the joints {list(excitation.joint_names)}, not all the '
                         f"recorded arm's {list(names)}")
    goals = [(goal.start, goal.t[-1] - goal.start, None, '', topics.joint_trajectory)
             for goal in trajectory_goals(recording, topics, names)[0]]
    goals += [(goal.start, goal.end - goal.start if goal.outcome == 'succeeded' else None,
               goal.end, goal.outcome, topics.joint_action)
              for goal in action_goals(recording, topics.joint_action)]
    if not goals:
        if excitation is None:
            return Coverage(None, None, '', f'no goal on {topics.joint_trajectory} or '
                                            f'{topics.joint_action} in the recording')
        expected = float(excitation.time_from_start[-1] - excitation.time_from_start[0])
        left, reached = (np.flatnonzero(np.abs(q - q[k]).max(axis=1) > MOTION_THRESHOLD)
                         for k in (0, -1))
        covered = max(0.0, float(t[reached[-1]] - t[left[0]])) \
            if left.size and reached.size else 0.0
        found = Coverage(covered, expected, f'{label}, taken to start when the arm first moves: '
                                            'no goal in the recording', '')
        return found if found.full else found._replace(
            why=f'the arm moves for {covered:.1f} s only')
    start, length, end, outcome, source = max(
        goals, key=lambda g: g[1] if g[1] is not None else (g[2] or t[-1]) - g[0])
    expected = float(excitation.time_from_start[-1]) if excitation is not None else length
    goal_end = min(end or np.inf, start + (expected or np.inf))
    covered = max(0.0, min(goal_end, t[-1]) - max(start, t[0]))
    why = [f'the joint states begin {t[0] - start:.1f} s after its start'] if t[0] > start else []
    failed = end is not None and end < start + (expected or np.inf) and outcome != 'succeeded'
    if failed:
        why.append(f'the goal was {outcome} {end - start:.1f} s after its start')
    if t[-1] < goal_end:
        why.append(f'the joint states end {t[-1] - start:.1f} s after its start'
                   + (', before the goal ended' if end is None else ''))
    reference = f'the goal of {source} at {start - t[0]:.1f} s' + (
        f', {label} for its length' if excitation is not None else '')
    return Coverage(covered, expected, reference, '; '.join(why), failed)


def from_recording(path, topics, *, base_link=None, tip_link=None,
                   cutoff=signals.DEFAULT_CUTOFF, held_out=DEFAULT_HELD_OUT, excitation=None,
                   note=None):
    """
    Identify the recorded arm from an MCAP recording: return ``(Identified, URDF text, damage)``.

    ``topics`` (:class:`~robot_dynamics.recordings.Topics`) names the joint states (position and
    effort, the measured joint torque; joints matched by name) and the robot description;
    ``base_link`` and ``tip_link`` select the chain (None: the URDF's rule). The URDF text is
    the recorded description with the identified ``<inertial>`` and ``<dynamics>`` (``note`` as
    its comment); ``damage`` says what a damaged file lost (None: the file is whole).
    ``Identified.coverage`` says how much of the excitation the joint states cover
    (:func:`coverage`; ``excitation``, the trajectory file sent, gives its length). Raises
    ``InputError`` naming why the recording cannot serve.
    """
    from . import recordings
    from .trajectory import TrajectoryPoints
    from .urdf import set_dynamic_parameters
    sent = None if excitation is None else TrajectoryPoints.from_yaml(str(excitation))
    recording = recordings.read(path, topics=[
        topics.joint_states, topics.robot_description, topics.joint_trajectory,
        topics.joint_action + recordings.ACTION_STATUS])
    try:
        model, why = recordings.robot_model(recording, topics, base_link, tip_link)
        if model is None:
            raise InputError(f'{path}: {why}')
        samples = recordings.joint_samples(recording, topics, model.joint_names)
        found = from_samples(model, samples.t, samples.position, samples.effort, cutoff=cutoff,
                             held_out=held_out)
        found = found._replace(coverage=coverage(
            recording, topics, model.joint_names, samples.t, samples.position, sent,
            str(excitation)))
    except InputError as exc:
        # what was read of a damaged file may be too little: say both in the one line
        raise InputError(f'{exc} (of a damaged file: {recording.problem})' if recording.problem
                         else str(exc)) from None
    text = set_dynamic_parameters(recordings.robot_description(recording, topics),
                                  found.identified, note=note)
    return found, text, recording.problem or None
