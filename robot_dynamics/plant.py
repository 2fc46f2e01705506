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
A simulated arm: the joint state of a model advanced by fixed steps under a command.

The plant behind the simulator node, usable without ROS. Each step holds the command for ``dt``
(zero-order hold, as a digital controller drives an arm). Command interfaces, as ros2_control's
forward_command_controller offers them:

- ``'effort'``: torques [N m or N], clipped to the effort limits (actuator saturation), drive
  the forward dynamics (RK4 in one compiled call,
  :func:`robot_dynamics.integrators.rk4_step_compiled`; with ``ROBOT_DYNAMICS_GENERATED=1``,
  the model's generated code: :meth:`robot_dynamics.prepared.PreparedModel.rk4_step`), with the
  URDF's damping and friction unless ``friction=False``;
- ``'position'``: an ideal position follower: the joints move to the commanded positions, at
  most ``velocity_limit * dt`` per step;
- ``'velocity'``: an ideal velocity follower: the commanded velocities, clipped to the velocity
  limits, are integrated.

Joint limits are hard stops in every interface: a joint that would pass a limit stops on it,
with no velocity into the stop (an inelastic contact), and ``at_lower`` / ``at_upper`` report
it. An effort step that ends non-finite or with a joint faster than :data:`RUNAWAY_SPEED` (the
integration ran away) raises and leaves the state as it was. Units: rad, rad/s (revolute) or m,
m/s (prismatic); times in s.

**External wrench** (:meth:`Plant.set_wrench`): the wrench ``w = [f; n]`` that the environment
applies to the arm (a push: +10 N along x pushes the frame's origin towards +x), force [N] and
torque [N m] in the base frame's axes, at the origin of a named frame (default the tip). It acts
on the joints as ``tau_ext = J(q)^T w`` (``J`` the frame's geometric Jacobian, base axes, at its
origin), evaluated at the start of each step and held over it, as the command is:

    M(q) qdd + C(q, qd) qd + g(q) + friction = tau + J(q)^T w

Mind the sign: the library's ``f_ext`` (:func:`robot_dynamics.dynamics.forward_dynamics`) is the
wrench that the tip exerts *on* the environment, ``f_ext = -w``. The drives of the ideal
followers (position, velocity) hold the motion against it: their reported effort is the inverse
dynamics less ``tau_ext``.
"""

import enum

import numpy as np

from .errors import as_array, as_joint_array, choice, InputError
from .limits import middle

#: A joint speed [rad/s or m/s] that no arm reaches (95,000 rpm, 10 km/s): an effort step that
#: ends faster ran away (a push or a command far beyond the arm's, a stiff model), and its state
#: would mean nothing.
RUNAWAY_SPEED = 1e4


class Interface(enum.Enum):
    """What a command means: joint efforts, positions or velocities."""

    EFFORT = 'effort'
    POSITION = 'position'
    VELOCITY = 'velocity'


class Plant:
    """
    The state ``(t, q, qd)`` of a simulated arm and the step that advances it.

    Parameters
    ----------
    model : RobotModel
        The simulated robot.
    dt : float
        Step [s], > 0.
    interface : str
        ``'effort'``, ``'position'`` or ``'velocity'`` (see the module docstring).
    friction : bool
        Apply the model's damping and friction (effort interface).
    q0, qd0 : array_like, shape (n,), optional
        Initial joint positions and velocities; default the middle of the limits
        (:func:`robot_dynamics.limits.middle`) and zero. Positions outside the limits are an
        error.

    Attributes
    ----------
    t : float
        Simulated time since construction [s] (:meth:`reset` does not rewind it).
    q, qd : numpy.ndarray, shape (n,)
        Joint positions and velocities at ``t``.
    effort : numpy.ndarray, shape (n,)
        Effort applied over the last step: the clipped command (effort interface) or the
        inverse-dynamics effort of the followed motion (position and velocity interfaces).
    at_lower, at_upper : numpy.ndarray of bool, shape (n,)
        Joints resting on their lower or upper stop after the last step.
    wrench : numpy.ndarray, shape (6,)
        The external wrench ``[fx, fy, fz, nx, ny, nz]`` [N, N m] the environment applies, base
        axes (see the module docstring); zero: none.
    wrench_frame : str
        The link at whose origin it acts.

    """

    def __init__(self, model, dt, *, interface='effort', friction=True, q0=None, qd0=None):
        dt = float(dt)
        if not (np.isfinite(dt) and dt > 0.0):
            raise InputError(f'dt: expected a positive number of seconds, got {dt!r}')
        self.model = model
        self._prepared = model.prepare()
        self.dt = dt
        self.interface = choice(interface, Interface, 'interface')
        self.friction = bool(friction)
        n = model.dof
        self.t = 0.0
        self.effort = np.zeros(n)
        self.wrench = np.zeros(6)
        self.wrench_frame = model.tip_link
        self.reset(q0, qd0)

    def reset(self, q0=None, qd0=None):
        """Put the arm at ``q0``, ``qd0`` (defaults as at construction); the clock runs on."""
        model = self.model
        q = middle(model.lower, model.upper) if q0 is None else as_joint_array(q0, model.dof, 'q0')
        qd = np.zeros(model.dof) if qd0 is None else as_joint_array(qd0, model.dof, 'qd0')
        if q.shape != (model.dof,) or qd.shape != (model.dof,):
            raise InputError(f'q0 and qd0: expected one state of {model.dof} joints, got shapes '
                             f'{q.shape} and {qd.shape}')
        outside = (q < model.lower) | (q > model.upper)
        if outside.any():
            j = int(np.flatnonzero(outside)[0])
            raise InputError(f'q0: joint {model.joint_names[j]!r} starts at {q[j]}, outside its '
                             f'limits [{model.lower[j]}, {model.upper[j]}]')
        self.q, self.qd = q.copy(), qd.copy()
        self.effort = np.zeros(model.dof)
        self.at_lower = q <= model.lower
        self.at_upper = q >= model.upper

    def set_wrench(self, wrench, frame=''):
        """
        Apply the external ``wrench`` (6,) [N, N m] at link ``frame``'s origin from the next step.

        Base axes, the wrench on the arm (see the module docstring); ``frame`` empty: the tip. It
        holds until replaced; a zero wrench removes it. Raises ``InputError`` for a non-finite
        value, a wrong shape or an unknown frame (the wrench in force stays).
        """
        wrench = as_array(wrench, (6,), 'wrench').reshape(6)
        frame = frame or self.model.tip_link
        if frame not in self.model.frames:
            known = list(self.model.frames)
            more = ', ...' if len(known) > 20 else ''
            raise InputError(f'wrench frame {str(frame)[:64]!r}: not a link of the model '
                             f'(known: {", ".join(known[:20])}{more})')
        self.wrench, self.wrench_frame = wrench.copy(), frame

    def external_torque(self, q=None):
        """Return ``tau_ext = J(q)^T w`` (n,) [N m or N] of the external wrench (default: now)."""
        if not self.wrench.any():
            return np.zeros(self.model.dof)
        q = self.q if q is None else q
        return self.model.jacobian(q, self.wrench_frame).T @ self.wrench

    def idle_command(self):
        """Return the command that drives nothing: zero effort, the current position, or rest."""
        if self.interface is Interface.POSITION:
            return self.q.copy()
        return np.zeros(self.model.dof)

    def step(self, command):
        """
        Advance by ``dt`` under ``command`` (n,) in model order, held over the step.

        ``None`` holds the arm where it is, as engaged brakes do (time passes, nothing moves).
        Raises ``InputError`` for a command of the wrong shape or with non-finite values, and
        when the step runs away (see the module docstring); the state is left as it was then.
        """
        model, dt = self.model, self.dt
        if command is None:
            self.qd = np.zeros(model.dof)
            self.effort = np.zeros(model.dof)
            self.t += dt
            return
        command = as_joint_array(command, model.dof, 'command').reshape(model.dof)
        q, qd = self.q, self.qd
        tau_ext = self.external_torque()
        if self.interface is Interface.EFFORT:
            effort = np.clip(command, -model.effort_limit, model.effort_limit)
            q_next, qd_next = self._prepared.rk4_step(q, qd, effort + tau_ext, dt,
                                                      friction=self.friction)
            away = ~(np.abs(qd_next) <= RUNAWAY_SPEED) | ~np.isfinite(q_next)    # NaN too
            if away.any():
                j = int(np.flatnonzero(away)[0])
                unit = 'm/s' if model.is_prismatic[j] else 'rad/s'
                raise InputError(f'the step ran away: joint {model.joint_names[j]!r} would move '
                                 f'at {qd_next[j]:.3g} {unit}, beyond {RUNAWAY_SPEED:g} {unit} '
                                 f'(from q = {q.tolist()}, qd = {qd.tolist()} under the effort '
                                 f'{effort.tolist()} and the external {tau_ext.tolist()})')
        else:
            vmax = model.velocity_limit
            if self.interface is Interface.POSITION:
                target = np.clip(command, model.lower, model.upper)
                q_next = q + np.clip(target - q, -vmax * dt, vmax * dt)
            else:
                q_next = q + np.clip(command, -vmax, vmax) * dt
            qd_next = (q_next - q) / dt
        q_next, qd_next, self.at_lower, self.at_upper = hard_stops(model, q_next, qd_next)
        if self.interface is not Interface.EFFORT:
            effort = model.inverse_dynamics(q, qd, (qd_next - qd) / dt,
                                            friction=self.friction) - tau_ext
        self.q, self.qd, self.effort = q_next, qd_next, effort
        self.t += dt


def hard_stops(model, q, qd):
    """
    Stop joints at their limits: ``(q, qd, at_lower, at_upper)``.

    Positions beyond a limit are put on it and the velocity into the stop is removed (an
    inelastic contact); velocities away from the stop are kept, so a joint leaves it as soon as
    it is driven away.
    """
    at_lower = q <= model.lower
    at_upper = q >= model.upper
    q = np.clip(q, model.lower, model.upper)
    qd = np.where(at_lower, np.maximum(qd, 0.0), np.where(at_upper, np.minimum(qd, 0.0), qd))
    return q, qd, at_lower, at_upper
