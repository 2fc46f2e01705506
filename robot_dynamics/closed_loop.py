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
Closed-loop simulation in the library: the ROS graph's loop in one process, with a report.

:func:`closed_loop` is the one loop: a :class:`~robot_dynamics.controller.Controller` (what the
controller node runs) answers each state of a :class:`~robot_dynamics.simulator.Simulator`
(what the simulator node runs) on the time grid of the graph in lockstep, so a goal gives here
the joint states that ``bringup --lockstep`` and ``send`` give. :func:`graph_loop` builds the
pair from the nodes' parameters (``robot-dynamics simulate --goal``);
:func:`track_reference` runs a control law alone along any reference (task space too) in the
same loop. :func:`run` is what ``robot-dynamics simulate`` does without a goal file: it builds
the reference (a quintic through a few waypoints around a home pose, then a hold) and the
controller (on a model whose masses and inertias may be scaled to simulate model error), runs
the loop with the reference as the goal and returns its report (``rms_tracking_error``,
``max_tracking_error``, ``max_abs_torque``, ``saturated_fraction`` and the settings). The
figures of ``robot-dynamics simulate --plot`` are those of :mod:`robot_dynamics.plots`.
"""

import dataclasses
import time
from typing import NamedTuple

import numpy as np

from . import control, time_scaling, trajectory
from .control import DEFAULT_DAMPING_RATIO, default_law, DEFAULT_NATURAL_FREQUENCY, LAWS
from .controller import configured_controller, Controller, Cycle
from .errors import as_array, choice, InputError
from .follower import check_points, Goal, Tolerances
from .limits import middle
from .model import chain_options
# with_payload: a simulated arm's payload, the library loop's users take it from here too
from .simulator import (configured_plant, configured_simulator, Simulator,  # noqa: F401
                        with_payload)
from .spatial import pose_error
from .task_space import configured_task_law

DEFAULT_DURATION = 4.0            # s
DEFAULT_PLANT_RATE = 1000.0       # Hz, RK4
DEFAULT_CONTROL_RATE = 1000.0     # Hz, zero-order hold
DEFAULT_SEED = 0
#: Fraction of the duration spent holding the last waypoint (shows the steady state).
HOLD_FRACTION = 0.25
#: Waypoint offsets from home, as multiples of each joint's amplitude (sign alternates by joint).
WAYPOINT_FACTORS = (0.0, 1.0, -0.6, 0.4)
#: Joint amplitude as a fraction of the half range between the limits ...
AMPLITUDE_FRACTION = 0.3
#: ... and at most this much [rad] for a revolute joint.
MAX_REVOLUTE_AMPLITUDE = 0.5
#: Half range [rad] assumed for a joint without finite limits.
UNLIMITED_HALF_RANGE = np.pi
#: Largest fractions of the effort and velocity limits the default reference may need.
REFERENCE_EFFORT_FRACTION = 0.5
REFERENCE_VELOCITY_FRACTION = 0.8
#: Ratio between rates accepted as an integer (zero-order hold needs whole plant steps).
RATE_RATIO_TOLERANCE = 1e-9


@dataclasses.dataclass(frozen=True)
class Settings:
    """
    Everything ``robot-dynamics simulate`` needs; every field is reported.

    Attributes
    ----------
    robot : str
        Bundled robot name (``RobotModel.available()``).
    controller : str
        One of ``LAWS``.
    duration : float
        Simulated time [s].
    plant_rate : float
        RK4 steps per second [Hz].
    control_rate : float
        Controller updates per second [Hz]; ``plant_rate`` must be a whole multiple of it.
    model_error : float
        Relative error of the controller's masses and inertias (0.2: 20 % heavier), > -1.
    torque_noise : float
        Standard deviation [N m or N] of Gaussian noise added to every applied torque, held
        between controller updates.
    seed : int
        Seed of the noise generator.
    natural_frequency : float
        Closed-loop natural frequency [rad/s] that sets the gains.
    damping_ratio : float
        Closed-loop damping ratio.
    friction : bool
        Simulate the plant's joint friction (and feed it forward in computed torque).

    """

    robot: str
    controller: str
    duration: float = DEFAULT_DURATION
    plant_rate: float = DEFAULT_PLANT_RATE
    control_rate: float = DEFAULT_CONTROL_RATE
    model_error: float = 0.0
    torque_noise: float = 0.0
    seed: int = DEFAULT_SEED
    natural_frequency: float = DEFAULT_NATURAL_FREQUENCY
    damping_ratio: float = DEFAULT_DAMPING_RATIO
    friction: bool = True

    def __post_init__(self):
        choice(self.controller, control.Law, 'controller', allowed=LAWS)
        for name in ('duration', 'plant_rate', 'control_rate', 'natural_frequency'):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0.0):
                raise InputError(f'{name}: expected a positive number, got {value!r}')
        if not (np.isfinite(self.damping_ratio) and self.damping_ratio >= 0.0):
            raise InputError(f'damping_ratio: expected >= 0, got {self.damping_ratio!r}')
        if not (np.isfinite(self.model_error) and self.model_error > -1.0):
            raise InputError(f'model_error: expected a fraction > -1 (e.g. 0.2 or -0.2), got '
                             f'{self.model_error!r}')
        if not (np.isfinite(self.torque_noise) and self.torque_noise >= 0.0):
            raise InputError(f'torque_noise: expected a standard deviation >= 0, got '
                             f'{self.torque_noise!r}')
        _hold_steps(self.plant_rate, self.control_rate)


def _hold_steps(plant_rate, control_rate):
    """Plant steps per controller update, or raise if the rates do not divide."""
    ratio = plant_rate / control_rate
    steps = int(round(ratio))
    if steps < 1 or abs(ratio - steps) > RATE_RATIO_TOLERANCE * ratio:
        raise InputError(f'control_rate: the plant rate {plant_rate:g} Hz must be a whole '
                         f'multiple of the control rate {control_rate:g} Hz (zero-order hold '
                         'over whole plant steps)')
    return steps


# ---- building blocks ----------------------------------------------------------------------------

def home_configuration(model):
    """Mid-range joint positions (n,), inside the limits: :func:`robot_dynamics.limits.middle`."""
    return middle(model.lower, model.upper)


def reference_waypoints(model, duration):
    """
    Return the times (K,) and positions (K, n) of the default reference's waypoints.

    From :func:`home_configuration`, joint ``i`` visits ``home_i + (-1)^i f_j A_i`` for the
    factors ``f_j`` of ``WAYPOINT_FACTORS`` (all within the joint limits), with the amplitude
    ``A_i`` a fraction (``AMPLITUDE_FRACTION``) of its half range (at most
    ``MAX_REVOLUTE_AMPLITUDE`` for revolute joints). The waypoints are spread over
    ``(1 - HOLD_FRACTION) duration`` and the last one is held until ``duration``.
    """
    home = home_configuration(model)
    finite = np.isfinite(model.lower) & np.isfinite(model.upper)
    half = np.where(finite, 0.5 * (model.upper - model.lower), UNLIMITED_HALF_RANGE)
    amplitude = AMPLITUDE_FRACTION * half
    amplitude = np.where(model.is_prismatic, amplitude,
                         np.minimum(amplitude, MAX_REVOLUTE_AMPLITUDE))
    signs = (-1.0) ** np.arange(model.dof)
    factors = np.asarray(WAYPOINT_FACTORS)
    positions = home + factors[:, None] * (signs * amplitude)[None, :]
    times = np.linspace(0.0, (1.0 - HOLD_FRACTION) * duration, factors.size)
    return times, positions


def reference_trajectory(model, duration, *, effort_fraction=REFERENCE_EFFORT_FRACTION,
                         velocity_fraction=REFERENCE_VELOCITY_FRACTION, friction=True):
    """
    Return the default reference: quintic segments, rest to rest, through the waypoints.

    See :func:`reference_waypoints`; velocities and accelerations are zero at every waypoint, so
    the reference is C2 and starts and ends at rest. If following it would need more than
    ``effort_fraction`` of an effort limit (with friction if ``friction``) or
    ``velocity_fraction`` of a velocity limit, it is slowed down uniformly
    (:func:`~robot_dynamics.time_scaling.time_scale`) until it does not, leaving the controller
    the rest of the torque for feedback; the hold at the end is then shorter (or gone).

    Returns
    -------
    reference : JointTrajectory
        The reference.
    factor : float
        How much it was slowed down (1: not at all).

    """
    times, positions = reference_waypoints(model, duration)
    zeros = np.zeros_like(positions)
    nominal = trajectory.from_waypoints(times, positions, zeros, zeros)
    try:
        scaled, report = time_scaling.time_scale(nominal, model, margin=1.0 - effort_fraction,
                                                 velocity_margin=1.0 - velocity_fraction,
                                                 friction=friction)
    except InputError:  # gravity alone needs more than the fraction: keep the nominal timing
        return nominal, 1.0
    if report.factor > 1.0:
        return scaled, report.factor
    return nominal, 1.0


def with_model_error(model, fraction):
    """Return a copy of ``model`` with every mass and inertia scaled by ``1 + fraction``."""
    scale = 1.0 + float(fraction)
    if not scale > 0.0:
        raise InputError(f'model_error: expected a fraction > -1, got {fraction}')
    return model.replace(mass=model.mass * scale, inertia=model.inertia * scale)


# ---- the loop -----------------------------------------------------------------------------------

class Record(NamedTuple):
    """
    Time series of a closed-loop run, one row per step ``t_k = k / rate``, start and end included.

    ``q``, ``qd`` (K, n): the state at ``t_k``; ``effort`` (K, n): the effort the simulator
    reports with that state (applied over the step that ended at ``t_k``, as the graph's
    ``/joint_states``); ``tau`` (K, n): the command in force over the step from ``t_k`` (the
    controller's, clipped; None rows are zero); ``tau_applied`` (K, n): the effort applied over
    that step (with the noise, clipped to the limits); ``saturated`` (K, n): the controller's
    saturation flags (the last row: as the one before); ``control_time`` (U,): wall time [s] of
    each controller call; ``events``: ``(t, event)`` of the controller's events. ``stable`` is
    False if the simulation failed (the state stopped being finite); the arrays then end with
    the state the failed step started from.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray
    tau: np.ndarray
    tau_applied: np.ndarray
    saturated: np.ndarray
    control_time: np.ndarray
    stable: bool
    events: list


def closed_loop(simulator, controller, duration, *, goals=(), torque_noise=0.0, seed=None):
    """
    Run ``controller`` answering ``simulator``'s states in one process for ``duration`` seconds.

    The loop of the ROS graph in lockstep without its transport: at each published state (a
    :meth:`~robot_dynamics.simulator.Simulator.tick`, stamped ``k dt``) the controller's
    :meth:`~robot_dynamics.controller.Controller.update` runs at ``t = stamp_ns * 1e-9`` (the
    controller node's conversion), its command is the simulator's answer, and the simulator
    steps. So the same goal gives the same joint states as ``bringup --lockstep`` and ``send``.

    Parameters
    ----------
    simulator : Simulator
        The simulated arm (its time ``now`` is the simulated time).
    controller : Controller
        Or any object whose ``update(t, q, qd)`` returns a
        :class:`~robot_dynamics.controller.Cycle`-like answer (``command`` or None,
        ``saturated``, ``events``) and whose ``take(goal)`` takes the goals.
    duration : float
        Simulated time [s] from the simulator's present state.
    goals : sequence of (float, Goal or CartesianGoal)
        Goals handed to ``controller.take`` once the newest state's
        time reaches the given time [s] (after that state's cycle, as a goal that arrives
        between two states).
    torque_noise : float
        Standard deviation [N m or N] of Gaussian noise added to each command.
    seed : int, optional
        Seed of the noise.

    Returns
    -------
    Record

    """
    if not (np.isfinite(duration) and duration > 0.0):
        raise InputError(f'duration: expected a positive number of seconds, got {duration!r}')
    plant = simulator.plant
    n = plant.model.dof
    rng = np.random.default_rng(seed)
    pending = sorted(goals, key=lambda item: item[0])
    steps = int(round(duration * simulator.rate_hz))
    names = ('q', 'qd', 'effort', 'tau', 'tau_applied')
    rows = {name: np.zeros((steps + 1, n)) for name in names}
    t_rows = np.zeros(steps + 1)
    saturated = np.zeros((steps + 1, n), dtype=bool)
    calls, events = [], []
    command, flags = np.zeros(n), np.zeros(n, dtype=bool)
    for k in range(steps + 1):
        tick = simulator.tick(0.0)
        t = tick.stamp_ns * 1e-9
        t_rows[k] = t
        rows['q'][k], rows['qd'][k], rows['effort'][k] = plant.q, plant.qd, plant.effort
        if k == steps:
            # the state at the end: what held before it holds on
            rows['tau'][k], rows['tau_applied'][k], saturated[k] = command, plant.effort, flags
            break
        if tick.publish:
            start = time.perf_counter()
            cycle = controller.update(t, plant.q, plant.qd)
            calls.append(time.perf_counter() - start)
            events += [(t, e) for e in cycle.events]
            while pending and pending[0][0] <= t:
                events += [(t, e) for e in controller.take(pending.pop(0)[1])]
            if cycle.command is not None:
                command, flags = cycle.command, cycle.saturated
                noise = rng.normal(0.0, torque_noise, n) if torque_noise > 0.0 else 0.0
                simulator.command(command + noise, t)
        rows['tau'][k], saturated[k] = command, flags
        if simulator.step(t).failed:
            end = k + 1
            return Record(t_rows[:end], *(rows[name][:end] for name in names), saturated[:end],
                          np.array(calls), False, events)
        rows['tau_applied'][k] = plant.effort
    return Record(t_rows, *(rows[name] for name in names), saturated, np.array(calls), True,
                  events)


def track_reference(plant, law, reference, duration, *, plant_rate=DEFAULT_PLANT_RATE,
                    control_rate=DEFAULT_CONTROL_RATE, q0=None, qd0=None, torque_noise=0.0,
                    seed=None, friction=True, gravity=None):
    """
    Simulate the control ``law`` driving ``plant`` along ``reference`` for ``duration`` seconds.

    :func:`closed_loop` with the law as the controller: each cycle is
    ``law.compute(t, q, qd, reference.sample(t))``, for references a goal cannot carry (task
    space) and for a law alone. The plant (a :class:`~robot_dynamics.simulator.Simulator`,
    RK4 with hard stops, no brakes, no command time-out) steps at ``plant_rate``; the law runs
    at ``control_rate`` (a whole divisor) and its torque is held in between (zero-order hold).

    Parameters
    ----------
    plant : RobotModel
        The simulated robot.
    law : object
        ``compute(t, q, qd, point) -> Command``, e.g. a law of :mod:`robot_dynamics.control`.
    reference : object
        ``sample(t)``: a :class:`~robot_dynamics.trajectory.JointTrajectory`,
        :class:`~robot_dynamics.trajectory.CartesianLine`, ...
    duration : float
        Simulated time [s].
    plant_rate, control_rate : float
        Plant steps and law updates per second [Hz].
    q0, qd0 : array_like, shape (n,), optional
        Initial state; default the reference's start position (joint references) and rest.
    torque_noise, seed
        As :func:`closed_loop`.
    friction : bool
        Simulate the plant's joint friction.
    gravity : array_like, shape (3,), optional
        Gravity of the plant [m/s^2]; default ``plant.gravity``.

    Returns
    -------
    Record

    """
    hold = _hold_steps(plant_rate, control_rate)
    if q0 is None:
        start = reference.sample(reference.start_time)
        if not isinstance(start, trajectory.TrajectoryPoint):
            raise InputError('q0: required when the reference is not a joint trajectory')
        q0 = start.q
    if gravity is not None:
        plant = plant.replace(gravity=as_array(gravity, (3,), 'gravity').reshape(3))
    simulator = Simulator(plant, plant_rate, friction=friction, q0=q0, qd0=qd0,
                          command_timeout=0.0, brake_until_command=False, realtime=False,
                          lockstep=True, publish_every=hold)
    return closed_loop(simulator, _LawCycles(law, reference), duration,
                       torque_noise=torque_noise, seed=seed)


class _LawCycles:
    """A law following a reference, answering states as a controller does (for the loop)."""

    def __init__(self, law, reference):
        self.law, self.reference = law, reference

    def update(self, t, q, qd):
        command = self.law.compute(t, q, qd, self.reference.sample(t))
        return Cycle(t, None, command.tau, None, q, qd, command.tau_requested,
                     command.saturated, [])


def graph_loop(model, simulator_values=None, controller_values=None):
    """
    Return ``(simulator, controller, tolerances)`` as the ROS graph in lockstep builds them.

    ``simulator_values`` and ``controller_values`` are the simulator and controller nodes'
    parameters, ``{dotted name: value}`` (a bundled robot's ``config/<robot>.yaml`` as
    :func:`robot_dynamics.parameter_files.file_values` reads it; what is missing has the nodes'
    default): the simulator's rate, joints, initial state, friction, command interface, command
    time-out, brakes and simulated arm (another URDF, a payload:
    :func:`~robot_dynamics.simulator.configured_plant`); the controller's law with its natural
    frequency, damping, friction compensation, adaptation gain and per-joint gains
    (``gains.<joint>.kp/kd/ki``),
    safe mode, time-outs, velocity feedback, stop time, the task-space law (``cartesian.*``,
    ``nullspace.*``: :func:`~robot_dynamics.task_space.configured_task_law`) and goal constraints
    (``constraints.<joint>.trajectory/goal``, ``goal_time``, ``stopped_velocity_tolerance``),
    which ``tolerances`` (:class:`~robot_dynamics.follower.Tolerances`) holds for goals that
    give none. The simulator steps in lockstep on simulated time.
    """
    sim_p = dict(simulator_values or {})
    ctl_p = dict(controller_values or {})
    n = model.dof
    names = list(sim_p.get('joints') or model.joint_names)
    order = model.joint_indices(names)

    def in_model_order(values, what):
        if not values:
            return None
        values = as_array(values, (len(names),), what).reshape(-1)
        out = np.empty(n)
        out[order] = values
        return out
    simulator = configured_simulator(
        configured_plant(model, sim_p.get, chain_options(sim_p.get)), sim_p.get,
        q0=in_model_order(sim_p.get('initial_positions'), 'initial_positions'),
        qd0=in_model_order(sim_p.get('initial_velocities'), 'initial_velocities'),
        realtime=False, lockstep=True)
    interface = ctl_p.get('command_interface', sim_p.get('command_interface', 'effort'))
    controller = configured_controller(
        model, control.configured_law(model, ctl_p.get), ctl_p.get, interface=interface,
        task_law=configured_task_law(model, ctl_p.get) if interface == 'effort' else None)
    return simulator, controller, Tolerances.from_constraints(model.joint_names, ctl_p.get)


def goal_from_points(model, points, tolerances, start_time=None, tag=None):
    """
    Return the :class:`~robot_dynamics.follower.Goal` of a trajectory file's ``points``.

    ``points`` (:class:`~robot_dynamics.trajectory.TrajectoryPoints`, joints by name in any
    order, every joint of ``model``) as the controller node takes the goal ``robot-dynamics
    send`` makes of them; ``start_time`` [s] None: at the newest state, as ``send``'s goals.
    Raises ``InputError`` as the goal process refuses such a goal
    (:func:`~robot_dynamics.follower.check_points`), before anything runs or is sized by it.
    """
    index = model.joint_indices(list(points.joint_names))
    if len(points.joint_names) != model.dof:
        raise InputError(f'goal: expected the joints {list(model.joint_names)}, got '
                         f'{list(points.joint_names)}')

    def in_model_order(values):
        if values is None:
            return None
        out = np.empty_like(np.asarray(values, dtype=float))
        out[:, index] = values
        return out
    goal = Goal(tag, start_time, np.asarray(points.time_from_start, dtype=float),
                in_model_order(points.positions), in_model_order(points.velocities),
                in_model_order(points.accelerations), tolerances)
    check_points(model, goal)
    return goal


def write_joint_states(path, record, joint_names):
    """
    Write ``record``'s joint states to ``path`` as CSV, one row per step.

    Columns: ``time`` [s], then ``position.<joint>``, ``velocity.<joint>`` and
    ``effort.<joint>`` for each of ``joint_names`` (model order), in full precision (the
    columns of ``robot-dynamics plot``'s joint states).
    """
    import csv
    with open(path, 'w', newline='', encoding='utf-8') as f:
        writer = csv.writer(f)
        writer.writerow(['time'] + [f'{field}.{j}' for field in ('position', 'velocity', 'effort')
                                    for j in joint_names])
        for row in np.column_stack((record.t, record.q, record.qd, record.effort)):
            writer.writerow([repr(float(v)) for v in row])


def tracking_error(model, record, reference, mask=None):
    """
    Tracking error at every recorded sample.

    Joint references give ``q_d(t) - q`` (K, n) [rad or m]. Task references
    (:class:`~robot_dynamics.trajectory.TaskPoint` samples) give the tip error
    ``[p_d - p; rotvec(R_d R^T)]`` restricted to the rows of ``mask`` (default
    ``model.task_mask``), (K, rows) [m, rad].
    """
    point = reference.sample(record.t)
    if isinstance(point, trajectory.TrajectoryPoint):
        return point.q - record.q
    mask = model.task_mask if mask is None else np.asarray(mask, dtype=float)
    e = pose_error(model.fk(record.q), point.pose)
    return e[:, np.flatnonzero(mask)]


def _units(model):
    return ['m' if p else 'rad' for p in model.is_prismatic]


def _torque_units(model):
    return ['N' if p else 'N m' for p in model.is_prismatic]


def _percentile_us(x, p):
    return float(np.percentile(x, p) * 1e6) if x.size else 0.0


def summarise(model, record, reference, controller):
    """Return the numbers of the report (a JSON-ready dict) for a joint-space run."""
    e = tracking_error(model, record, reference)
    abs_e = np.abs(e)
    tau = np.abs(record.tau)
    return {
        'rms_tracking_error': float(np.sqrt(np.mean(e * e))),
        'max_tracking_error': float(abs_e.max()),
        'rms_tracking_error_per_joint': np.sqrt(np.mean(e * e, axis=0)).tolist(),
        'max_tracking_error_per_joint': abs_e.max(axis=0).tolist(),
        'final_tracking_error': e[-1].tolist(),
        'max_abs_torque': float(tau.max()),
        'max_abs_torque_per_joint': tau.max(axis=0).tolist(),
        'saturated_fraction': float(record.saturated.mean()),
        'saturated_fraction_per_joint': record.saturated.mean(axis=0).tolist(),
        'stable': bool(record.stable),
        'simulated_time': float(record.t[-1]),
        'samples': int(record.t.size),
        'controller_call_us': {'mean': float(record.control_time.mean() * 1e6),
                               'p50': _percentile_us(record.control_time, 50),
                               'p99': _percentile_us(record.control_time, 99)},
        'gains': controller.gains,
    }


class Run(NamedTuple):
    """A finished simulation: settings, plant, reference, controller, record and report."""

    settings: Settings
    plant: object
    reference: object
    controller: object
    record: Record
    report: dict


def run(settings):
    """
    Run the closed loop that ``robot-dynamics simulate`` describes.

    Parameters
    ----------
    settings : Settings
        Robot, controller, rates, model error, noise, seed, gains.

    Returns
    -------
    Run
        Whose ``report`` holds ``rms_tracking_error`` and ``max_tracking_error`` (rad or m, over
        all joints and samples), ``max_abs_torque`` [N m or N], ``saturated_fraction`` (of all
        joint samples), the per-joint values, stability, the controller's per-call time and the
        settings.

    """
    from .model import RobotModel
    plant = RobotModel.load(settings.robot)
    model = with_model_error(plant, settings.model_error)
    reference, slowdown = reference_trajectory(plant, settings.duration,
                                               friction=settings.friction)
    q_home = home_configuration(plant)
    controller = default_law(settings.controller, model, q_home,
                             natural_frequency=settings.natural_frequency,
                             damping_ratio=settings.damping_ratio,
                             friction=settings.friction)
    times, positions = reference_waypoints(plant, settings.duration)
    times = times * slowdown
    # the reference as the goal of the graph's controller: quintic segments between the
    # waypoints, at rest at each (from_waypoints); a goal that comes after the first state's
    # cycle starts at the next one
    start = 1.0 / settings.control_rate
    rest = np.zeros_like(positions)
    goal = Goal(None, start, times, positions, rest, rest, Tolerances.unchecked(plant.dof))
    reference = trajectory.from_waypoints(times, positions, rest, rest, start_time=start)
    simulator = Simulator(plant, settings.plant_rate, friction=settings.friction,
                          q0=positions[0], realtime=False, lockstep=True,
                          publish_every=_hold_steps(settings.plant_rate, settings.control_rate))
    wall = time.perf_counter()
    record = closed_loop(simulator, Controller(model, controller, rate_hz=settings.control_rate),
                         settings.duration, goals=[(0.0, goal)],
                         torque_noise=settings.torque_noise, seed=settings.seed)
    wall = time.perf_counter() - wall
    ref = reference.sample(np.linspace(0.0, reference.end_time, 1001))
    ref_tau = plant.inverse_dynamics(ref.q, ref.qd, ref.qdd, friction=settings.friction)
    report = {
        'robot': settings.robot,
        'controller': settings.controller,
        'joint_names': list(plant.joint_names),
        'units': {'tracking_error': _units(plant), 'torque': _torque_units(plant)},
        'duration': settings.duration,
        'plant_rate_hz': settings.plant_rate,
        'control_rate_hz': settings.control_rate,
        'integrator': 'rk4',
        'model_error': settings.model_error,
        'torque_noise': settings.torque_noise,
        'seed': settings.seed,
        'natural_frequency': settings.natural_frequency,
        'damping_ratio': settings.damping_ratio,
        'friction': settings.friction,
        'effort_limit': plant.effort_limit.tolist(),
        'reference': {
            'kind': 'quintic through waypoints, rest to rest, then hold',
            'time_from_start': times.tolist(),
            'positions': positions.tolist(),
            'time_scaling_factor': slowdown,
            'peak_velocity_ratio': (np.abs(ref.qd).max(axis=0)
                                    / plant.velocity_limit).tolist(),
            'peak_effort_ratio': (np.abs(ref_tau).max(axis=0) / plant.effort_limit).tolist(),
        },
        'wall_time_s': wall,
    }
    report.update(summarise(plant, record, reference, controller))
    return Run(settings, plant, reference, controller, record, report)
