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
Single-state calls for loops: a model's compiled kernels with everything prepared once.

A call of the checked API (``model.inverse_dynamics(q, qd, qdd)``, ...) checks and converts
its inputs, reshapes one state to a batch of one, resolves options and hands a dozen arrays to
the compiled kernel: for one state of an arm, several times the arithmetic. A loop that calls
the same model every period (a controller, a simulator step, an estimator) needs none of it
after the first call. :class:`PreparedModel` does that part once, as Pinocchio's
``model.createData()`` does: the model's constants are packed into one read-only array, gravity
and the link of fk and the Jacobian are fixed, and each method is one compiled call on one
state (the same per-state kernels as the checked API, so the same numbers) that writes into
``out`` when given. Per call, only the sizes are checked (in the compiled code); the inputs must
be what the kernels take, float64 arrays of shape (n,), C-contiguous and writeable
(``np.ascontiguousarray(x, dtype=float)``): anything else makes numba compile another
specialization once (seconds) or fail to, and values are not checked for finiteness (nan in,
nan out).

Batches ``(N, n)``, tip wrenches, other links or gravity per call are the checked API's.

``generated=True`` makes inverse dynamics, gravity, mass matrix and Coriolis matrix the code
generated for this robot (:mod:`robot_dynamics.generated`: the same numbers to rounding, fewer
operations), and forward dynamics ``M qdd = tau - h(q, qd)`` of the generated ``M`` and ``h``
(the equations of motion as the lectures write them, solved by Cholesky) instead of the
articulated-body algorithm; built at the first use of a model (seconds, minutes for 7 joints)
and cached. When it cannot be built, a ``RuntimeWarning`` says why and the recursion serves.
:meth:`PreparedModel.rk4_step` is the simulator's step on either.
"""

import warnings

import numpy as np

from . import integrators
from ._jit import njit
from .dynamics import (aba_state, aba_work, COULOMB_VELOCITY_SCALE, crba_state, crba_work,
                       friction_torque,
                       rnea_state, rnea_work, singular_joint_error)
from .errors import as_array, ShapeError
from .kinematics import chain, compose, pose_jacobian_state


# Where the parts of a PreparedModel's constants start, for n joints: ``_N`` and ``_BODY`` hold
# the number of joints and the prepared link's body (as floats); ``_offsets`` gives the others.
_N, _BODY, _HEAD = 0, 1, 2


@njit
def _offsets(n):
    """Return the starts of basis, axis, prismatic, mass, com, inertia, tip, -g, f_ext, ..."""
    basis = _HEAD
    axis = basis + 64 * n
    prismatic = axis + 3 * n
    mass = prismatic + n
    com = mass + n
    inertia = com + 3 * n
    tip = inertia + 9 * n
    a0 = tip + 3
    fext = a0 + 3
    damping = fext + 6
    coulomb = damping + n
    link = coulomb + n
    return basis, axis, prismatic, mass, com, inertia, tip, a0, fext, damping, coulomb, link


@njit
def _bodies(consts):
    """
    Return the views of :meth:`PreparedModel._pack`'s array that describe the chain's bodies.

    ``local_basis`` (n, 4, 16), ``joint_axis`` (n, 3), prismatic (n,: 1 or 0), ``mass`` (n,),
    ``com`` (n, 3), ``inertia`` (n, 3, 3).
    """
    n = int(consts[_N])
    b, a, p, m, c, i, t, _, _, _, _, _ = _offsets(n)
    return (consts[b:a].reshape((n, 4, 16)), consts[a:p].reshape((n, 3)), consts[p:m],
            consts[m:c], consts[c:i].reshape((n, 3)), consts[i:t].reshape((n, 3, 3)))


@njit
def _dynamics(consts):
    """Return :func:`_bodies`, the tip origin (3,), ``-g`` (3,) and a zero tip wrench (6,)."""
    _, _, _, _, _, _, t, g, f, _, _, _ = _offsets(int(consts[_N]))
    return _bodies(consts) + (consts[t:g], consts[g:f], consts[f:f + 6])


@njit
def _friction(consts):
    """Return the viscous damping and Coulomb friction (n,) of :meth:`PreparedModel._pack`."""
    n = int(consts[_N])
    _, _, _, _, _, _, _, _, _, d, c, end = _offsets(n)
    return consts[d:c], consts[c:end]


@njit
def _kinematics(consts):
    """Return ``local_basis``, ``joint_axis``, prismatic, the link's body and ``T_body_link``."""
    n = int(consts[_N])
    b, a, p, m, _, _, _, _, _, _, _, link = _offsets(n)
    return (consts[b:a].reshape((n, 4, 16)), consts[a:p].reshape((n, 3)), consts[p:m],
            int(consts[_BODY]), consts[link:link + 16].reshape((4, 4)))


@njit
def _inverse_dynamics(consts, q, qd, qdd, friction, out):
    basis, axis, prismatic, mass, com, inertia, tip, a0, fext = _dynamics(consts)
    n = mass.shape[0]
    if not (q.shape[0] == qd.shape[0] == qdd.shape[0] == out.shape[0] == n):
        return False
    rnea_state(basis, axis, prismatic, mass, com, inertia, tip, q, qd, qdd, a0, fext,
               rnea_work(n), out)
    if friction:
        _add_friction(consts, qd, out)
    return True


@njit
def _add_friction(consts, qd, out):
    damping, coulomb = _friction(consts)
    for j in range(out.shape[0]):
        out[j] += friction_torque(damping[j], coulomb[j], qd[j], COULOMB_VELOCITY_SCALE)


@njit
def _gravity_torques(consts, q, out):
    basis, axis, prismatic, mass, com, inertia, tip, a0, fext = _dynamics(consts)
    n = mass.shape[0]
    if not (q.shape[0] == out.shape[0] == n):
        return False
    zero = np.zeros(n)
    rnea_state(basis, axis, prismatic, mass, com, inertia, tip, q, zero, zero, a0, fext,
               rnea_work(n), out)
    return True


@njit
def _forward_dynamics(consts, q, qd, tau, friction, out):
    """Return -2 (a size is wrong), -1 (done) or the joint of a singular pivot."""
    basis, axis, prismatic, mass, com, inertia, tip, a0, fext = _dynamics(consts)
    n = mass.shape[0]
    if not (q.shape[0] == qd.shape[0] == tau.shape[0] == out.shape[0] == n):
        return -2
    if friction:
        damping, coulomb = _friction(consts)
        applied = np.empty(n)
        for j in range(n):
            applied[j] = tau[j] - friction_torque(damping[j], coulomb[j], qd[j],
                                                  COULOMB_VELOCITY_SCALE)
    else:
        applied = tau
    return aba_state(basis, axis, prismatic, mass, com, inertia, tip, q, qd, applied, a0, fext,
                     aba_work(n), out)


@njit
def _mass_matrix(consts, q, out):
    basis, axis, prismatic, mass, com, inertia = _bodies(consts)
    n = mass.shape[0]
    if not (q.shape[0] == out.shape[0] == out.shape[1] == n):
        return False
    crba_state(basis, axis, prismatic, mass, com, inertia, q, crba_work(n), out)
    return True


@njit
def _fk(consts, q, out):
    basis, _, _, body, T_body_link = _kinematics(consts)
    if not (q.shape[0] == basis.shape[0] and out.shape[0] == out.shape[1] == 4):
        return False
    if body == 0:
        out[:] = T_body_link
        return True
    T = np.empty((body, 4, 4))
    chain(basis, q[:body], T)            # the bodies up to the link's
    compose(T[body - 1], T_body_link, out)
    return True


@njit
def _jacobian(consts, q, out):
    basis, axis, prismatic, body, T_body_link = _kinematics(consts)
    n = basis.shape[0]
    if not (q.shape[0] == out.shape[1] == n and out.shape[0] == 6):
        return False
    if body == 0:
        out[:] = 0.0
        return True
    pose_jacobian_state(basis, axis, prismatic, body, T_body_link, q, np.empty((n, 4, 4)),
                        np.empty((4, 4)), out, np.empty((n, 6)))
    return True


class PreparedModel:
    """
    A model ready for single-state calls in a loop: validated once, one compiled call each.

    ``PreparedModel(model, link=None, gravity=None)`` (or ``model.prepare(...)``): ``link``
    (default the tip) is the link of :meth:`fk` and :meth:`jacobian`, ``gravity`` (3,) [m/s^2]
    in the base frame (default ``model.gravity``) that of the dynamics; both are checked here.
    Every method takes one state as float64 arrays of shape (n,), C-contiguous and writeable
    (see the module), returns what the model's method of the same name returns for it, from
    the same compiled per-state kernels, and writes it into ``out`` when given (an array of the
    result's shape, C-contiguous float64). A wrong size raises ``ShapeError``; nothing else is
    checked per call. Holds no state between calls: one instance may serve several threads.
    """

    def __init__(self, model, link=None, gravity=None, generated=False):
        self.model = model
        self.link = model.tip_link if link is None else link
        body, T_body_link = model.link_body(self.link)
        g = model.gravity if gravity is None else as_array(gravity, (3,), 'gravity').reshape(3)
        self.gravity = g.copy()
        self._consts = self._pack(model, body, T_body_link, g)
        self._n = model.dof
        self._zero = np.zeros(model.dof)      # qdd of h = C qd + g, read only
        self.generated = self._generated(model, g) if generated else None
        # the RK4 kernel of the recursion takes the model's gravity
        self._compiled_step = self.generated is None and np.array_equal(g, model.gravity)
        self._warm_up()

    @staticmethod
    def _generated(model, gravity):
        """Return the model's generated kernels, or None with a warning (the recursion serves)."""
        from . import generated
        try:
            return generated.kernels(model, gravity)
        except Exception as exc:  # noqa: B902 - sympy's or numba's error: the recursion serves
            warnings.warn(f'{model.name}: no generated code ({type(exc).__name__}: {exc}); '
                          'using the recursion', RuntimeWarning, stacklevel=3)
            return None

    @staticmethod
    def _pack(model, body, T_body_link, gravity):
        """Return the array of constants that :func:`_offsets` lays out (float64, writeable)."""
        # one writeable float64 array: numba's dispatch takes longer for every further array,
        # and for a read-only or a bool one
        parts = ([model.dof, body], model.derived.local_basis, model.joint_axis,
                 model.is_prismatic, model.mass, model.com, model.inertia,
                 model.derived.tip_origin, -gravity, np.zeros(6), model.damping, model.friction,
                 T_body_link)
        return np.concatenate([np.asarray(p, dtype=float).ravel() for p in parts])

    def _warm_up(self):
        """Compile (first install) or load every kernel for the argument types of a loop."""
        zero = np.zeros(self._n)
        for friction in (False, True):
            self.inverse_dynamics(zero, zero, zero, friction=friction)
            self.forward_dynamics(zero, zero, zero, friction=friction)
        self.gravity_torques(zero)
        self.mass_matrix(zero)
        self.coriolis_matrix(zero, zero)
        self.fk(zero)
        self.jacobian(zero)

    def _size_error(self, **arrays):
        """Return the ShapeError for the first of ``arrays`` (name: (array, shape)) that is off."""
        for name, (x, shape) in arrays.items():
            if np.shape(x) != shape:
                return ShapeError(f'{name}: expected shape {shape}, got {np.shape(x)}')
        return ShapeError(f'expected shapes {({k: v[1] for k, v in arrays.items()})}')

    def inverse_dynamics(self, q, qd, qdd, out=None, *, friction=False):
        """Joint torques (n,) [N m or N] by RNEA (``model.inverse_dynamics``, no tip wrench)."""
        n = self._n
        if out is None:
            out = np.empty(n)
        if self.generated is not None:
            if not self.generated.inverse_dynamics(q, qd, qdd, out):
                raise self._size_error(q=(q, (n,)), qd=(qd, (n,)), qdd=(qdd, (n,)),
                                       out=(out, (n,)))
            if friction:
                _add_friction(self._consts, qd, out)
            return out
        if not _inverse_dynamics(self._consts, q, qd, qdd, friction, out):
            raise self._size_error(q=(q, (n,)), qd=(qd, (n,)), qdd=(qdd, (n,)), out=(out, (n,)))
        return out

    def gravity_torques(self, q, out=None):
        """Torques (n,) holding the arm still against gravity (``model.gravity_torques``)."""
        n = self._n
        if out is None:
            out = np.empty(n)
        kernel = self.generated.gravity_torques if self.generated is not None else None
        if not (kernel(q, out) if kernel else _gravity_torques(self._consts, q, out)):
            raise self._size_error(q=(q, (n,)), out=(out, (n,)))
        return out

    def forward_dynamics(self, q, qd, tau, out=None, *, friction=False):
        """
        Joint accelerations (n,) by the articulated-body algorithm (``model.forward_dynamics``).

        With generated code: ``M qdd = tau - h``, ``h`` the inverse dynamics at ``qdd = 0``
        (with friction if ``friction``). Raises ``SingularMassMatrixError`` as the model's
        method does.
        """
        n = self._n
        if out is None:
            out = np.empty(n)
        if self.generated is not None:
            # here alone: scipy.linalg would cost every process of the stack ~0.2 s to import
            from scipy.linalg import cho_factor, cho_solve
            M = self.mass_matrix(q)
            rhs = tau - self.inverse_dynamics(q, qd, self._zero, friction=friction)
            try:
                out[:] = cho_solve(cho_factor(M), rhs)
            except np.linalg.LinAlgError:
                raise singular_joint_error(self.model, int(np.argmin(np.diag(M)))) from None
            return out
        status = _forward_dynamics(self._consts, q, qd, tau, friction, out)
        if status == -2:
            raise self._size_error(q=(q, (n,)), qd=(qd, (n,)), tau=(tau, (n,)), out=(out, (n,)))
        if status >= 0:
            raise singular_joint_error(self.model, status)
        return out

    def rk4_step(self, q, qd, tau, dt, *, friction=False):
        """
        One RK4 step of one state (:func:`~robot_dynamics.integrators.rk4_step_compiled`).

        The compiled step of the recursion; with generated code or another gravity, the same
        four stages through :meth:`forward_dynamics`. Returns ``(q, qd)`` at ``t + dt`` [s];
        raises as :func:`~robot_dynamics.integrators.rk4_step_compiled` does.
        """
        if self._compiled_step:
            return integrators.rk4_step_compiled(self.model, q, qd, tau, dt, friction=friction)
        q_next, qd_next = integrators.rk4_step(self, q, qd, tau, dt, friction=friction)
        if not (np.isfinite(q_next).all() and np.isfinite(qd_next).all()):
            raise integrators.diverged(q, qd)
        return q_next, qd_next

    def mass_matrix(self, q, out=None):
        """Joint-space mass matrix (n, n) by the composite-rigid-body algorithm."""
        n = self._n
        if out is None:
            out = np.empty((n, n))
        kernel = self.generated.mass_matrix if self.generated is not None else None
        if not (kernel(q, out) if kernel else _mass_matrix(self._consts, q, out)):
            raise self._size_error(q=(q, (n,)), out=(out, (n, n)))
        return out

    def coriolis_matrix(self, q, qd, out=None):
        """
        Coriolis matrix (n, n) in the Christoffel form (``model.coriolis_matrix``).

        Generated code only: without it, the model's checked method (no faster than it).
        """
        n = self._n
        if out is None:
            out = np.empty((n, n))
        if self.generated is None:
            out[:] = self.model.coriolis_matrix(q, qd)
        elif not self.generated.coriolis_matrix(q, qd, out):
            raise self._size_error(q=(q, (n,)), qd=(qd, (n,)), out=(out, (n, n)))
        return out

    def fk(self, q, out=None):
        """Pose (4, 4) of the prepared link in the base frame (``model.fk``)."""
        if out is None:
            out = np.empty((4, 4))
        if not _fk(self._consts, q, out):
            raise self._size_error(q=(q, (self._n,)), out=(out, (4, 4)))
        return out

    def jacobian(self, q, out=None):
        """Geometric Jacobian (6, n) of the prepared link, base frame (``model.jacobian``)."""
        n = self._n
        if out is None:
            out = np.empty((6, n))
        if not _jacobian(self._consts, q, out):
            raise self._size_error(q=(q, (n,)), out=(out, (6, n)))
        return out
