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

from typing import NamedTuple

import numpy as np

from . import identification, signals
from .errors import InputError

#: Default last fraction of the samples in motion kept for the held-out prediction error.
DEFAULT_HELD_OUT = 0.2
#: Labels of :attr:`Identified.predictions` and :attr:`Identified.rms`.
NOMINAL, IDENTIFIED = 'recorded model', 'identified model'


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


def from_recording(path, topics, *, base_link=None, tip_link=None,
                   cutoff=signals.DEFAULT_CUTOFF, held_out=DEFAULT_HELD_OUT, note=None):
    """
    Identify the recorded arm from an MCAP recording: return ``(Identified, URDF text, damage)``.

    ``topics`` (:class:`~robot_dynamics.recordings.Topics`) names the joint states (position and
    effort, the measured joint torque; joints matched by name) and the robot description;
    ``base_link`` and ``tip_link`` select the chain (None: the URDF's rule). The URDF text is
    the recorded description with the identified ``<inertial>`` and ``<dynamics>`` (``note`` as
    its comment); ``damage`` says what a damaged file lost (None: the file is whole). Raises
    ``InputError`` naming why the recording cannot serve.
    """
    from . import recordings
    from .urdf import set_dynamic_parameters
    recording = recordings.read(path, topics=[topics.joint_states, topics.robot_description])
    try:
        model, why = recordings.robot_model(recording, topics, base_link, tip_link)
        if model is None:
            raise InputError(f'{path}: {why}')
        samples = recordings.joint_samples(recording, topics, model.joint_names)
        found = from_samples(model, samples.t, samples.position, samples.effort, cutoff=cutoff,
                             held_out=held_out)
    except InputError as exc:
        # what was read of a damaged file may be too little: say both in the one line
        raise InputError(f'{exc} (of a damaged file: {recording.problem})' if recording.problem
                         else str(exc)) from None
    text = set_dynamic_parameters(recordings.robot_description(recording, topics),
                                  found.identified, note=note)
    return found, text, recording.problem or None
