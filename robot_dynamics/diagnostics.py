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
The health of the loop's components as diagnostic statuses, without ROS.

In diagnostic_updater's conventions: one status per component, a :class:`Level` (OK, WARN,
ERROR, STALE: the values of ``diagnostic_msgs/DiagnosticStatus``), a message that says why (each
finding of the worst level, joined by ``'; '``) and the figures as key-value text. A component
hands over its figures once per period, cumulative counters at the period's end (``now``) and at
its start (``before``); the status follows from their differences and the thresholds alone, so
the same figures always give the same status.

- Controller: ERROR in safe mode (with its reason) and in a period in which it took joint
  states from another publisher (:mod:`robot_dynamics.sources`), STALE while it waits for its
  model or first joint state; WARN when the control rate ``r = Δcycles / Δt`` (``t`` on the
  states' clock) is below ``min_rate_ratio`` of the expected rate, when more than
  ``max_missed_ratio`` of the period's cycles were missed, when the latency's 99th percentile
  (a state's stamp to its command, wall time only) exceeds ``max_latency``, or when a joint
  saturated.
- Simulator: ERROR after a failed step (the arm braked until a reset), with its reason; else
  STALE when it made no step in the period; WARN when it stalled (a step more than
  ``robot_dynamics.simulator.STALL`` late), when more than ``max_late_ratio`` of its steps were
  late, when states went unanswered in lockstep, when no valid command came within its
  time-out, or when in real time the real-time factor ``Δsimulated / Δwall`` fell below
  ``min_real_time_factor``.
- Kinematics: STALE without a model; WARN when more than ``max_ik_failure_ratio`` of the
  period's IK calls found no solution.
"""

import enum
from typing import NamedTuple, Tuple

import numpy as np

from .errors import InputError


class Level(enum.IntEnum):
    """Level of a status (``diagnostic_msgs/DiagnosticStatus``'s byte values)."""

    OK = 0
    WARN = 1
    ERROR = 2
    STALE = 3


class Status(NamedTuple):
    """A component's status: level, why, and its figures as ``(key, text)`` pairs."""

    level: Level
    message: str
    values: Tuple[Tuple[str, str], ...]


class ControllerThresholds(NamedTuple):
    """WARN limits of the controller's status (defaults a 1 kHz loop on a good host meets)."""

    min_rate_ratio: float = 0.8     # control rate / expected rate
    max_missed_ratio: float = 0.05  # missed cycles / cycles in the period
    max_latency: float = 0.005      # [s] 99th percentile, state stamp to command


class SimulatorThresholds(NamedTuple):
    """WARN limits of the simulator's status."""

    max_late_ratio: float = 0.05        # late steps / steps in the period
    min_real_time_factor: float = 0.9   # in real time, simulated / wall time over the period


class KinematicsThresholds(NamedTuple):
    """WARN limits of the kinematics node's status."""

    max_ik_failure_ratio: float = 0.5   # IK calls without a solution / IK calls in the period


class ControllerFigures(NamedTuple):
    """
    The controller's cumulative figures at one instant.

    ``t`` [s] is the newest state's time (the states' clock; None before the first),
    ``saturated`` the cycles in which each joint saturated (one count per joint), ``mode`` the
    controller's mode (``Mode.value``: waiting, hold, trajectory, safe), ``reason`` why it is in
    safe mode ('' otherwise), ``source_changes`` the sources of joint states taken after the
    first.
    """

    t: float
    cycles: int
    missed_cycles: int
    saturated: Tuple[int, ...]
    mode: str
    reason: str = ''
    source_changes: int = 0


class SimulatorFigures(NamedTuple):
    """
    The simulator's cumulative figures at the wall time ``wall`` [s] (monotonic).

    ``failure`` says why a step failed, the arm braked since ('' while none has).
    """

    wall: float
    simulated_time: float
    steps: int
    late_steps: int
    stalls: int
    unanswered_states: int
    timed_out: bool
    realtime: bool
    lockstep: bool
    failure: str = ''


class KinematicsFigures(NamedTuple):
    """The kinematics node's cumulative IK calls and failures, and whether it has its model."""

    ik_calls: int
    ik_failures: int
    ready: bool


def status(findings, values, fine):
    """
    Return the :class:`Status` of ``findings`` (``(Level, why)`` pairs) and ``values``.

    The level is the worst finding's; the message joins the findings of that level, or is
    ``fine`` when there are none.
    """
    if not findings:
        return Status(Level.OK, fine, tuple(values))
    worst = max(level for level, _ in findings)
    return Status(Level(worst), '; '.join(why for level, why in findings if level == worst),
                  tuple(values))


def controller_status(now, before, latencies, expected_rate, joint_names,
                      thresholds=ControllerThresholds()):
    """
    Return the controller's :class:`Status` over the period from ``before`` to ``now``.

    ``latencies`` [s] are those of the period's cycles (None: not measured, on simulated time),
    ``expected_rate`` [Hz] the joint states' (or the timer's) rate, ``joint_names`` name the
    ``saturated`` counts. See the module docstring for the levels.
    """
    if expected_rate <= 0.0:
        raise InputError(f'expected_rate: expected a positive rate in Hz, got {expected_rate!r}')
    cycles = now.cycles - before.cycles
    missed = now.missed_cycles - before.missed_cycles
    span = (now.t - before.t) if now.t is not None and before.t is not None else 0.0
    rate = cycles / span if span > 0.0 else 0.0
    saturated = np.subtract(now.saturated, before.saturated) if before.saturated else \
        np.asarray(now.saturated)
    values = [('mode', now.mode), ('control rate [Hz]', f'{rate:.1f}'),
              ('expected rate [Hz]', f'{expected_rate:g}'), ('cycles', str(now.cycles)),
              ('missed cycles in the period', f'{missed} of {cycles}'),
              ('missed cycles', str(now.missed_cycles))]
    findings = []
    if latencies is None:
        values += [('latency p50 [ms]', 'n/a (simulated time)'),
                   ('latency p99 [ms]', 'n/a (simulated time)')]
    elif len(latencies):
        p50, p99 = np.percentile(latencies, [50.0, 99.0])
        values += [('latency p50 [ms]', f'{p50 * 1e3:.3f}'),
                   ('latency p99 [ms]', f'{p99 * 1e3:.3f}')]
        if p99 > thresholds.max_latency:
            findings.append((Level.WARN, f'latency p99 {p99 * 1e3:.1f} ms, above '
                                         f'{thresholds.max_latency * 1e3:g} ms'))
    values += [(f'saturated {name} [cycles]', str(int(count)))
               for name, count in zip(joint_names, saturated)]
    values += [('safe mode', 'true' if now.mode == 'safe' else 'false'),
               ('joint state sources taken', str(now.source_changes))]
    if now.source_changes > before.source_changes:
        findings.append((Level.ERROR, 'joint states now come from another publisher: the one '
                                      'followed went silent'))
    if now.mode == 'safe':
        findings.append((Level.ERROR, f'safe mode: {now.reason or "joint states stale"}'))
    elif now.mode == 'waiting':
        findings.append((Level.STALE, 'waiting for the robot description and joint states'))
    else:
        if rate < thresholds.min_rate_ratio * expected_rate:
            findings.append((Level.WARN, f'control rate {rate:.0f} Hz, below '
                                         f'{thresholds.min_rate_ratio:.0%} of '
                                         f'{expected_rate:g} Hz'))
        if cycles and missed > thresholds.max_missed_ratio * cycles:
            findings.append((Level.WARN, f'{missed} of {cycles} cycles missed'))
        names = [name for name, count in zip(joint_names, saturated) if count > 0]
        if names:
            findings.append((Level.WARN, f'saturating at the effort limits: {", ".join(names)}'))
    return status(findings, values, f'{now.mode} at {rate:.0f} Hz')


def simulator_status(now, before, thresholds=SimulatorThresholds()):
    """Return the simulator's :class:`Status` over the period from ``before`` to ``now``."""
    steps = now.steps - before.steps
    late = now.late_steps - before.late_steps
    stalls = now.stalls - before.stalls
    unanswered = now.unanswered_states - before.unanswered_states
    wall = now.wall - before.wall
    factor = (now.simulated_time - before.simulated_time) / wall if wall > 0.0 else 0.0
    values = (('steps', str(now.steps)), ('late steps in the period', f'{late} of {steps}'),
              ('late steps', str(now.late_steps)), ('stalls in the period', str(stalls)),
              ('stalls', str(now.stalls)),
              ('unanswered lockstep states', str(now.unanswered_states)),
              ('real-time factor', f'{factor:.3f}'),
              ('simulated time [s]', f'{now.simulated_time:.3f}'),
              ('commands timed out', 'true' if now.timed_out else 'false'),
              ('realtime', 'true' if now.realtime else 'false'),
              ('lockstep', 'true' if now.lockstep else 'false'),
              ('failed step', now.failure or 'none'))
    findings = []
    if now.failure:
        findings.append((Level.ERROR, f'braked after a failed step (reset to go on): '
                                      f'{now.failure}'))
    elif steps <= 0:
        findings.append((Level.STALE, 'no step in the period'))
    if stalls:
        findings.append((Level.WARN, f'{stalls} stalls of the host'))
    if steps > 0 and late > thresholds.max_late_ratio * steps:
        findings.append((Level.WARN, f'{late} of {steps} steps late'))
    if unanswered:
        findings.append((Level.WARN, f'{unanswered} states unanswered in lockstep'))
    if now.timed_out:
        findings.append((Level.WARN, 'no valid command within the command time-out'))
    if now.realtime and steps > 0 and factor < thresholds.min_real_time_factor:
        findings.append((Level.WARN, f'real-time factor {factor:.2f}, below '
                                     f'{thresholds.min_real_time_factor:g}'))
    return status(findings, values, f'stepping at real-time factor {factor:.2f}')


def kinematics_status(now, before, thresholds=KinematicsThresholds()):
    """Return the kinematics node's :class:`Status` over the period from ``before`` to ``now``."""
    calls = now.ik_calls - before.ik_calls
    failures = now.ik_failures - before.ik_failures
    values = (('IK calls', str(now.ik_calls)), ('IK failures', str(now.ik_failures)),
              ('IK calls in the period', str(calls)), ('IK failures in the period', str(failures)))
    findings = []
    if not now.ready:
        findings.append((Level.STALE, 'waiting for the robot description'))
    elif calls and failures > thresholds.max_ik_failure_ratio * calls:
        findings.append((Level.WARN, f'{failures} of {calls} IK calls found no solution'))
    return status(findings, values, f'{calls} IK calls in the period')


__all__ = ['controller_status', 'ControllerFigures', 'ControllerThresholds', 'kinematics_status',
           'KinematicsFigures', 'KinematicsThresholds', 'Level', 'simulator_status',
           'SimulatorFigures', 'SimulatorThresholds', 'Status', 'status']
