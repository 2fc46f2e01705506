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
Closed-form equations of motion of a model's chain (sympy), as a lecture writes them.

Lagrange's formulation (Spong, Hutchinson and Vidyasagar 2020, §6.3-6.5), everything in the base
frame. Body i has its origin at ``p_i``, rotation ``R_i``, origin velocity ``Jv_i qd`` and angular
velocity ``Jw_i qd`` (column j: ``z_j x (p_i - o_j)`` and ``z_j`` for a revolute joint j <= i,
``z_j`` and 0 for a prismatic one), mass ``m_i``, first moment ``h_i = R_i m_i c_i`` and inertia
about its origin ``I_i = R_i (I_ci + m_i (c_i^T c_i E - c_i c_i^T)) R_i^T`` (``c_i``, ``I_ci``: COM
and inertia about the COM in the body frame). Then::

    D(q)   = sum_i [Jv_i; Jw_i]^T [[m_i E, -[h_i]x], [[h_i]x, I_i]] [Jv_i; Jw_i]
    c_ijk  = 1/2 (dD_kj/dq_i + dD_ki/dq_j - dD_ij/dq_k)       (Christoffel symbols)
    C_kj   = sum_i c_ijk qd_i                                 (so dD/dt - 2 C is skew)
    P(q)   = -sum_i g0 . (m_i p_i + h_i),   g_k = dP/dq_k     (g0: gravity, base frame)
    tau    = D(q) qdd + C(q, qd) qd + g(q) = Y(q, qd, qdd) theta

``Y`` is the regressor in the library's 10 parameters per body (:func:`regressor`).

A :class:`Chain` holds the model with sympy entries: its numbers made exact (0.4318 is
2159/5000, 6e-17 in a rotation is 0), or, with ``symbolic_parameters``, a symbol for every
inertial parameter and joint offset that is not zero in the model (a zero stays a structural
zero): ``m_1``, COM ``c_1x``, inertia about the COM ``I_1xx`` (body-frame axes), the offset
``l_1x`` of joint 2 in body 1, gravity's magnitude ``g``. For the planar 2R arm this gives
Spong's ``d11 = m1 lc1^2 + m2 (l1^2 + lc2^2 + 2 l1 lc2 cos q2) + I1 + I2`` with ``lc1 = c_1x``,
``l1 = l_1x`` and ``I1`` the inertia about the joint axis.
"""

import dataclasses
import itertools

import numpy as np
import sympy as sp

from . import dh
from .errors import InputError
from .generated import exact, skew
from .model import RobotModel

_AXES = 'xyz'
#: Up to this many joints :func:`derive` simplifies by default: sympy's trigsimp of a 6-joint
#: arm's expanded D runs for many minutes.
SIMPLIFY_MAX_DOF = 3
# Where the inertia tensor's entries go in its symbols' names, and in the library's parameters.
_INERTIA_INDEX = (('xx', 0, 0), ('xy', 0, 1), ('yy', 1, 1), ('xz', 0, 2), ('yz', 1, 2),
                  ('zz', 2, 2))


def _exact_matrix(a):
    return sp.Matrix(np.vectorize(exact, otypes=[object])(np.asarray(a, dtype=float)))


def rotation(axis, angle):
    """Rotation (3, 3) by ``angle`` about the unit ``axis``: ``c E + s [a]x + (1 - c) a a^T``."""
    c, s = sp.cos(angle), sp.sin(angle)
    return c * sp.eye(3) + s * skew(axis) + (1 - c) * axis * axis.T


@dataclasses.dataclass(frozen=True)
class Chain:
    """
    A model's chain with sympy entries, what the derivations here take (see the module).

    ``placement[i]`` (4, 4) is joint i's frame in body i-1 at q = 0, ``axis[i]`` (3, 1) its
    unit axis, ``mass[i]``, ``first_moment[i]`` (3, 1, ``m c``) and ``inertia[i]`` (3, 3, about
    the body origin) body i's, in its own frame; ``gravity`` (3, 1) in the base frame.
    ``values`` maps each parameter symbol to the model's number [SI], ``parameters`` lists the
    symbols in a fixed order; both are empty when the chain holds the model's numbers.
    """

    q: tuple
    qd: tuple
    qdd: tuple
    placement: tuple
    axis: tuple
    prismatic: tuple
    mass: tuple
    first_moment: tuple
    inertia: tuple
    gravity: sp.Matrix
    values: dict
    parameters: tuple

    @property
    def dof(self):
        """Return the number of joints n."""
        return len(self.q)

    def numeric(self, exprs):
        """Return ``exprs`` with the model's numbers for the parameter symbols."""
        return sp.Matrix(exprs).xreplace({s: exact(v) for s, v in self.values.items()})


def _joint_symbols(n):
    q = sp.symbols(f'q1:{n + 1}', real=True)
    qd = sp.symbols(f'qd1:{n + 1}', real=True)
    qdd = sp.symbols(f'qdd1:{n + 1}', real=True)
    return q, qd, qdd


def chain(model, symbolic_parameters=False, barycentric=False):
    """
    Return the :class:`Chain` of ``model``.

    ``symbolic_parameters``: a symbol for every non-zero mass, COM coordinate, inertia about the
    COM, joint offset and for gravity's magnitude (the module's names). ``barycentric``: the
    library's 10 parameters per body as symbols (``m_1, mx_1, my_1, mz_1, Ixx_1, Ixy_1, Iyy_1,
    Ixz_1, Iyz_1, Izz_1``: mass, first moment, inertia about the body origin; in the order of
    ``model.inertial_parameters()``), zeros included, the rest numbers: what :func:`regressor`
    differentiates by.
    """
    if symbolic_parameters and barycentric:
        raise InputError('symbolic_parameters and barycentric are two parametrizations: '
                         'give one')
    n = model.dof
    values, parameters = {}, []

    def parameter(name, value, keep_zero=False):
        if not symbolic_parameters and not barycentric or (value == 0 and not keep_zero):
            return exact(value)
        symbol = sp.Symbol(name, real=True)
        values[symbol] = float(value)
        parameters.append(symbol)
        return symbol

    placement, axis, mass, first, inertia = [], [], [], [], []
    for i in range(n):
        T = _exact_matrix(model.joint_placement[i])
        if symbolic_parameters:
            for k in range(3):
                T[k, 3] = parameter(f'l_{i}{_AXES[k]}', model.joint_placement[i][k, 3])
        placement.append(T)
        axis.append(_exact_matrix(model.joint_axis[i]).reshape(3, 1))
        if barycentric:
            pi = model.inertial_parameters()[10 * i:10 * i + 10]
            names = ('m', 'mx', 'my', 'mz') + tuple('I' + s for s, _, _ in _INERTIA_INDEX)
            m, hx, hy, hz, *rest = (parameter(f'{name}_{i + 1}', v, keep_zero=True)
                                    for name, v in zip(names, pi))
            h = sp.Matrix([hx, hy, hz])
            Io = sp.zeros(3, 3)
            for (_, a, b), v in zip(_INERTIA_INDEX, rest):
                Io[a, b] = Io[b, a] = v
        else:
            m = parameter(f'm_{i + 1}', model.mass[i])
            c = sp.Matrix([parameter(f'c_{i + 1}{_AXES[k]}', model.com[i][k]) for k in range(3)])
            Ic = sp.zeros(3, 3)
            for s, a, b in _INERTIA_INDEX:
                Ic[a, b] = Ic[b, a] = parameter(f'I_{i + 1}{s}', model.inertia[i][a, b])
            h = m * c
            Io = Ic + m * ((c.T * c)[0, 0] * sp.eye(3) - c * c.T)   # parallel axis
        mass.append(m)
        first.append(h)
        inertia.append(Io)
    g0 = np.asarray(model.gravity, dtype=float)
    magnitude = float(np.linalg.norm(g0))
    if symbolic_parameters and magnitude > 0:
        gravity = parameter('g', magnitude) * _exact_matrix(g0 / magnitude)
    else:
        gravity = _exact_matrix(g0)
    q, qd, qdd = _joint_symbols(n)
    return Chain(q=q, qd=qd, qdd=qdd, placement=tuple(placement), axis=tuple(axis),
                 prismatic=tuple(bool(p) for p in model.is_prismatic), mass=tuple(mass),
                 first_moment=tuple(first), inertia=tuple(inertia),
                 gravity=gravity.reshape(3, 1), values=values, parameters=tuple(parameters))


def dh_chain(source, convention=None):
    """
    Return the :class:`Chain` of a DH table (a YAML path or rows, as ``from_dh``) with symbols.

    The lecture's symbols: ``a_i`` and ``d_i`` for the non-zero link lengths and offsets, the
    twists and angle offsets exact numbers (pi/2 stays pi/2), and per link ``m_i``, the COM
    ``c_ix`` and the inertia about the COM ``I_ixx`` in DH frame i (where the table gives them),
    ``g``. The COM of link i is ``a_i + c_ix`` from joint i along the link (frame i is at its far
    end).
    """
    model = RobotModel.from_dh(source, convention=convention)      # validates the table
    doc, _ = dh.read_table(source)
    convention = dh.Convention(convention or doc.get('convention', 'standard'))
    symbols = {}

    def symbol(name, value):
        value = float(value)
        if value == 0:
            return sp.Integer(0)
        s = sp.Symbol(name, real=True)
        symbols[s] = value
        return s

    def angle(value):
        return sp.nsimplify(float(value), [sp.pi], tolerance=1e-12)

    def Rz(t):
        T = sp.eye(4)
        T[:3, :3] = rotation(sp.Matrix([0, 0, 1]), t)
        return T

    def Rx(t):
        T = sp.eye(4)
        T[:3, :3] = rotation(sp.Matrix([1, 0, 0]), t)
        return T

    def translate(x, y, z):
        T = sp.eye(4)
        T[:3, 3] = sp.Matrix([x, y, z])
        return T

    ch = chain(model)
    placement, mass, first, inertia = [], [], [], []
    # the previous DH frame in the previous body (dh.model_fields' T_prev)
    previous = _exact_matrix(dh.pose(doc.get('base'), 'base'))
    for i, row in enumerate(doc['joints']):
        k = i + 1
        a, d = symbol(f'a_{k}', row['a']), symbol(f'd_{k}', row['d'])
        alpha, theta = angle(row['alpha']), angle(row['theta'])
        if convention is dh.Convention.STANDARD:
            placement.append(previous * Rz(theta) * translate(0, 0, d))
            link = translate(a, 0, 0) * Rx(alpha)
        else:
            placement.append(previous * Rx(alpha) * translate(a, 0, 0) * Rz(theta)
                             * translate(0, 0, d))
            link = sp.eye(4)
        previous = link
        m = symbol(f'm_{k}', row.get('mass', 0.0))
        c = sp.Matrix([symbol(f'c_{k}{_AXES[j]}', v)
                       for j, v in enumerate(row.get('com', (0, 0, 0)))])
        Ic = sp.zeros(3, 3)
        numbers = dh.inertia_tensor(row.get('inertia'), f'row {k}')
        for name, r, q in _INERTIA_INDEX:
            Ic[r, q] = Ic[q, r] = symbol(f'I_{k}{name}', numbers[r, q])
        # COM and inertia in the body (joint) frame, the inertia about its origin
        R, t = link[:3, :3], link[:3, 3]
        c_body = R * c + t
        mass.append(m)
        first.append(m * c_body)
        inertia.append(R * Ic * R.T
                       + m * ((c_body.T * c_body)[0, 0] * sp.eye(3) - c_body * c_body.T))
    g0 = np.asarray(model.gravity, dtype=float)
    magnitude = float(np.linalg.norm(g0))
    gravity = (symbol('g', magnitude) * _exact_matrix(g0 / magnitude) if magnitude > 0
               else _exact_matrix(g0))
    return dataclasses.replace(ch, placement=tuple(placement), mass=tuple(mass),
                               first_moment=tuple(first), inertia=tuple(inertia),
                               gravity=gravity.reshape(3, 1), values=symbols,
                               parameters=tuple(symbols))


def simplified(expr):
    """Return ``expr`` expanded and with its trigonometric sums combined (sympy trigsimp)."""
    return sp.trigsimp(sp.expand(expr))


def _unchanged(expr):
    return expr


def _map(matrix, f):
    return matrix.applyfunc(f)


def _tell(progress, message):
    if progress is not None:
        progress(message)


def body_kinematics(ch, simplify=True):
    """
    Return, per body, its pose ``T_i`` (4, 4), joint axis ``z_i`` and joint origin ``o_i``.

    All in the base frame: ``T_i = T_{i-1} placement_i motion_i(q_i)``.
    """
    T = sp.eye(4)
    out = []
    for i in range(ch.dof):
        T = T * ch.placement[i]
        z, o = T[:3, :3] * ch.axis[i], T[:3, 3]
        if ch.prismatic[i]:
            motion = sp.eye(4)
            motion[:3, 3] = ch.axis[i] * ch.q[i]
        else:
            motion = sp.eye(4)
            motion[:3, :3] = rotation(ch.axis[i], ch.q[i])
        T = T * motion
        if simplify:
            T = _map(T, simplified)
        out.append((T, z, o))
    return out


def jacobians(ch, kinematics):
    """Return per body ``(Jv_i, Jw_i)`` (3, n) of its origin's velocity and angular velocity."""
    n = ch.dof
    out = []
    for i, (T, _, _) in enumerate(kinematics):
        Jv, Jw = sp.zeros(3, n), sp.zeros(3, n)
        for j in range(i + 1):
            _, z, o = kinematics[j]
            if ch.prismatic[j]:
                Jv[:, j] = z
            else:
                Jv[:, j] = z.cross(T[:3, 3] - o)
                Jw[:, j] = z
        out.append((Jv, Jw))
    return out


def mass_matrix(ch, simplify=True, kinematics=None):
    """Return ``D(q)`` (n, n), symmetric, by the sum over the bodies of the module."""
    kinematics = kinematics or body_kinematics(ch, simplify)
    D = sp.zeros(ch.dof)
    for i, ((T, _, _), (Jv, Jw)) in enumerate(zip(kinematics, jacobians(ch, kinematics))):
        R = T[:3, :3]
        h = skew(R * ch.first_moment[i])
        Io = R * ch.inertia[i] * R.T
        D += (ch.mass[i] * Jv.T * Jv - Jv.T * h * Jw + Jw.T * h * Jv + Jw.T * Io * Jw)
    if simplify:
        for a, b in itertools.combinations_with_replacement(range(ch.dof), 2):
            D[a, b] = D[b, a] = simplified(D[a, b])
    return D


def _derivative(expr, x, memo):
    """
    Return ``d expr / dx``, each subexpression's once (``memo``: expression -> derivative).

    An unsimplified D shares its bodies' rotations and Jacobians between entries; sympy's
    ``diff`` differentiates them again in each, asking every node for its free symbols and
    assumptions (for the PUMA 560: 15 s, against 1 s here).
    """
    if expr in memo:
        return memo[expr]
    if expr.is_Atom:
        d = sp.S.One if expr == x else sp.S.Zero
    elif expr.is_Add:
        d = sp.Add(*(_derivative(a, x, memo) for a in expr.args))
    elif expr.is_Mul:
        args = expr.args
        d = sp.Add(*(sp.Mul(*args[:i], da, *args[i + 1:]) for i, a in enumerate(args)
                     if (da := _derivative(a, x, memo)) != 0))
    elif expr.is_Pow and expr.exp.is_Number:
        d = expr.exp * expr.base ** (expr.exp - 1) * _derivative(expr.base, x, memo)
    elif isinstance(expr, sp.sin):
        d = sp.cos(expr.args[0]) * _derivative(expr.args[0], x, memo)
    elif isinstance(expr, sp.cos):
        d = -sp.sin(expr.args[0]) * _derivative(expr.args[0], x, memo)
    else:
        d = expr.diff(x)
    memo[expr] = d
    return d


def christoffel_symbols(ch, D, simplify=True, progress=None):
    """
    Return ``c[i][j][k] = 1/2 (dD_kj/dq_i + dD_ki/dq_j - dD_ij/dq_k)`` (0-based indices).

    Each ``dD_ab/dq_k`` is taken once, of ``D`` as it is (a simplified one is not expanded
    again), and ``c_ijk = c_jik`` is built once: ``n^2 (n + 1) / 2`` derivatives and symbols.
    ``progress(message)`` is told each joint's derivatives as they start.
    """
    n = ch.dof
    dD = {}
    for k, q in enumerate(ch.q):
        _tell(progress, f'the Christoffel symbols: dD/dq{k + 1} ({k + 1} of {n})')
        memo = {}
        for a, b in itertools.combinations_with_replacement(range(n), 2):
            dD[a, b, k] = dD[b, a, k] = _derivative(D[a, b], q, memo)
    f = simplified if simplify else _unchanged
    c = [[[None] * n for _ in range(n)] for _ in range(n)]
    for i, j in itertools.combinations_with_replacement(range(n), 2):
        for k in range(n):
            c[i][j][k] = c[j][i][k] = f((dD[k, j, i] + dD[k, i, j] - dD[i, j, k]) / 2)
    return c


def coriolis_matrix(ch, christoffel, simplify=True):
    """Return ``C`` (n, n), ``C_kj = sum_i c_ijk qd_i`` (the library's default form)."""
    n = ch.dof
    f = sp.factor_terms if simplify else _unchanged
    return sp.Matrix(n, n, lambda k, j: f(sum(christoffel[i][j][k] * ch.qd[i]
                                              for i in range(n))))


def potential_energy(ch, kinematics):
    """Return ``P(q) = -sum_i g0 . (m_i p_i + R_i m_i c_i)`` [J]."""
    return -sum((ch.gravity.T * (ch.mass[i] * T[:3, 3] + T[:3, :3] * ch.first_moment[i]))[0, 0]
                for i, (T, _, _) in enumerate(kinematics))


def gravity_torques(ch, kinematics=None, simplify=True):
    """Return ``g(q) = dP/dq`` (n, 1)."""
    kinematics = kinematics or body_kinematics(ch, simplify)
    P = potential_energy(ch, kinematics)
    f = simplified if simplify else _unchanged
    return sp.Matrix([f(P.diff(q)) for q in ch.q])


@dataclasses.dataclass(frozen=True)
class Equations:
    """``D`` (n, n), ``christoffel`` (c[i][j][k]), ``C`` (n, n), ``g`` (n, 1), ``tau`` (n, 1)."""

    chain: Chain
    D: sp.Matrix
    christoffel: list
    C: sp.Matrix
    g: sp.Matrix
    tau: sp.Matrix


def derive(model_or_chain, symbolic_parameters=False, simplify=None, progress=None):
    """
    Return the :class:`Equations` of a model (or of a :class:`Chain`).

    ``tau = D qdd + C qd + g`` is left as that sum (each part simplified when ``simplify``).
    ``simplify`` (sympy's trigonometric simplification) defaults to up to
    :data:`SIMPLIFY_MAX_DOF` joints: the same values, but for the PUMA 560 it takes more than
    5 min on ``D`` alone, where its ``D``, Christoffel symbols, ``C`` and ``g`` unsimplified
    take about 15 s. ``progress(message)`` (e.g. ``print``) is told each step as it starts.
    """
    ch = (model_or_chain if isinstance(model_or_chain, Chain)
          else chain(model_or_chain, symbolic_parameters))
    if simplify is None:
        simplify = ch.dof <= SIMPLIFY_MAX_DOF
    _tell(progress, f'kinematics of {ch.dof} bodies' + (', simplified' if simplify else ''))
    kin = body_kinematics(ch, simplify)
    _tell(progress, 'the mass matrix D')
    D = mass_matrix(ch, simplify, kin)
    c = christoffel_symbols(ch, D, simplify, progress)
    _tell(progress, 'C and g')
    C = coriolis_matrix(ch, c, simplify)
    g = gravity_torques(ch, kin, simplify)
    qd, qdd = sp.Matrix(ch.qd), sp.Matrix(ch.qdd)
    return Equations(chain=ch, D=D, christoffel=c, C=C, g=g, tau=D * qdd + C * qd + g)


def regressor(model, simplify=True):
    """
    Return ``(Y, theta)``: ``tau = Y(q, qd, qdd) theta`` (n, 10 n) in the 10 n symbols ``theta``.

    ``theta`` are the library's parameters (:func:`chain` with ``barycentric``), in which the
    dynamics is linear; ``Y`` substitutes nothing, so it holds for any values of them.
    """
    eq = derive(chain(model, barycentric=True), simplify=False)
    theta = eq.chain.parameters
    tau = sp.Matrix([sp.expand(t) for t in eq.tau])
    Y = tau.jacobian(theta)
    if simplify:
        Y = _map(Y, simplified)
    return Y, sp.Matrix(theta)


def lambdified(ch, exprs):
    """
    Return ``f(q, qd, qdd)`` evaluating ``exprs`` with numpy at one state, the model's numbers in.

    For checks and printing; the compiled kernels are :mod:`robot_dynamics.generated`'s.
    """
    f = sp.lambdify((ch.q, ch.qd, ch.qdd), ch.numeric(exprs), 'numpy')

    def evaluate(q, qd=None, qdd=None):
        zero = np.zeros(ch.dof)
        return np.array(f(q, zero if qd is None else qd, zero if qdd is None else qdd),
                        dtype=float)
    return evaluate
