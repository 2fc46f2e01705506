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
Code generated for one robot: inverse dynamics, mass matrix, gravity and Coriolis matrix.

Straight-line code, one assignment per value.

As RobCoGen and SD/FAST do, the recursions are unrolled for one model with its numbers in
(sympy): Craig's recursive Newton-Euler (Craig 2005, §6.5, the library's
:func:`~robot_dynamics.dynamics.rnea_state`) for ``tau`` and ``g``; the mass matrix column by
column as ``M e_j = RNEA(q, 0, e_j)`` without gravity (upper triangle, mirrored); the Coriolis
matrix in the Christoffel form of :mod:`robot_dynamics.symbolic` from ``dM/dq`` (forward
differentiation of the mass matrix's program). Every intermediate value is one assignment, so
common subexpressions are computed once, and everything that is zero or one for the robot
(a joint axis, a zero offset, a planar arm's out-of-plane terms) folds away; what no output
needs is dropped. The program is written as Python to a user cache folder keyed by the model's
hash and compiled with numba (cached to disk: only the first use pays). numba needs no C
compiler, and its dispatch is the cheapest call from Python: for a trivial kernel of four arrays
it measured 15x less than ctypes with ``arr.ctypes.data`` pointers, and 50x less than with
``ndpointer`` argument types.

:func:`count_operations` counts the multiplications and additions of a program: a product of
k factors is k - 1 multiplications (a factor -1 is a sign, free; ``x**k`` is k - 1), a sum of
k terms k - 1 additions (subtractions included); divisions and functions (sin, cos) apart.

This module is below the model (``RobotModel.prepare(generated=True)`` reaches it) and
:mod:`robot_dynamics.symbolic` above it (it builds models of DH tables), so the sympy helpers
both use, :func:`exact` and :func:`skew`, are here.
"""

import dataclasses
import hashlib
import importlib.util
import os
from pathlib import Path
import sys
import threading
import time

import numpy as np
import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

#: Changes with the generator, so that a new version never loads an old file (2: the module is
#: imported by name, as numba's cache needs; version 1's caches named it '<dynamic>').
GENERATOR_VERSION = 2

_IMPORTING = threading.Lock()


def exact(x):
    """Return ``x`` as an exact sympy number: an integer when within 1e-12, else its decimal."""
    r = round(float(x))
    if abs(float(x) - r) < 1e-12:
        return sp.Integer(r)
    return sp.Rational(repr(float(x)))


def skew(v):
    """Return the cross-product matrix ``[v]x`` (3, 3) of a 3-vector: ``[v]x w = v x w``."""
    return sp.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


class Program:
    """A straight-line program: assignments ``(symbol, expression)`` in order, then outputs."""

    def __init__(self):
        self.lines = []
        self._bound = {}

    def let(self, expr):
        """
        Return a symbol bound to ``expr`` (the same one for an expression bound before).

        A number, a symbol or its negation is returned as it is.
        """
        expr = sp.sympify(expr)
        if expr.is_Atom or (expr.is_Mul and len(expr.args) == 2 and expr.args[0] == -1
                            and expr.args[1].is_Atom):
            return expr
        if expr not in self._bound:
            symbol = sp.Symbol(f'x{len(self.lines)}', real=True)
            self.lines.append((symbol, expr))
            self._bound[expr] = symbol
        return self._bound[expr]

    def vector(self, exprs):
        """Return :meth:`let` of each entry of ``exprs``."""
        return [self.let(e) for e in exprs]

    def pruned(self, outputs):
        """Return the lines that ``outputs`` (expressions) need, in order."""
        needed = set().union(*(sp.sympify(e).free_symbols for e in outputs))
        kept = []
        for symbol, expr in reversed(self.lines):
            if symbol in needed:
                kept.append((symbol, expr))
                needed |= expr.free_symbols
        return kept[::-1]


def _cross(P, a, b):
    return P.vector((a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]))


def _rotate(P, R, v, transpose=False):
    if transpose:
        return P.vector(sum(R[k][r] * v[k] for k in range(3)) for r in range(3))
    return P.vector(sum(R[r][k] * v[k] for k in range(3)) for r in range(3))


def _add(P, *vectors):
    return P.vector(sum(v[k] for v in vectors) for k in range(3))


@dataclasses.dataclass(frozen=True)
class _Numbers:
    """A model's constants as sympy numbers (or, for :func:`general_counts`, symbols)."""

    rotation: list      # joint i's frame in body i-1 at q = 0: R (3x3 lists), p (3 lists)
    offset: list
    axis: list
    prismatic: list
    mass: list
    com: list
    inertia: list       # about the COM, body axes (3x3 lists)
    gravity: list


def _numbers(model, gravity):
    def rows(a):
        return [[exact(x) for x in row] for row in np.asarray(a, dtype=float)]
    n = model.dof
    return _Numbers(rotation=[rows(model.joint_placement[i][:3, :3]) for i in range(n)],
                    offset=[[exact(x) for x in model.joint_placement[i][:3, 3]] for i in range(n)],
                    axis=[[exact(x) for x in model.joint_axis[i]] for i in range(n)],
                    prismatic=[bool(p) for p in model.is_prismatic],
                    mass=[exact(m) for m in model.mass],
                    com=[[exact(x) for x in c] for c in model.com],
                    inertia=[rows(model.inertia[i]) for i in range(n)],
                    gravity=[exact(x) for x in gravity])


def _joint_transforms(P, c, q):
    """Lines for each joint's ``(R, p)``: body i's rotation and origin in body i-1."""
    out = []
    for i in range(len(q)):
        axis = sp.Matrix(c.axis[i])
        R0 = sp.Matrix(c.rotation[i])
        if c.prismatic[i]:
            R = [list(R0.row(r)) for r in range(3)]
            p = P.vector(sp.Matrix(c.offset[i]) + R0 * axis * q[i])
        else:
            cos, sin = P.let(sp.cos(q[i])), P.let(sp.sin(q[i]))
            turn = cos * sp.eye(3) + sin * skew(axis) + (1 - cos) * axis * axis.T
            R = [P.vector(R0.row(r) * turn) for r in range(3)]
            p = list(c.offset[i])
        out.append((R, p))
    return out


def _rnea(P, c, L, qd, qdd, gravity=True):
    """Lines of Craig's Newton-Euler for one state; return the joint forces (n expressions)."""
    n = len(L)
    zero = [0, 0, 0]
    a0 = [-g for g in c.gravity] if gravity else zero
    W, WD, VD = [], [], []
    for i, (R, p) in enumerate(L):
        a = c.axis[i]
        if i == 0:
            vd, x, y = _rotate(P, R, a0, True), zero, zero
        else:
            w, wd = W[-1], WD[-1]
            t = _add(P, _cross(P, wd, p), _cross(P, w, _cross(P, w, p)))
            vd = _rotate(P, R, _add(P, VD[-1], t), True)
            x, y = _rotate(P, R, w, True), _rotate(P, R, wd, True)
        t = _cross(P, x, a)
        if c.prismatic[i]:
            vd = P.vector(vd[k] + 2 * qd[i] * t[k] + qdd[i] * a[k] for k in range(3))
            w, wd = x, y
        else:
            w = P.vector(x[k] + qd[i] * a[k] for k in range(3))
            wd = P.vector(y[k] + qd[i] * t[k] + qdd[i] * a[k] for k in range(3))
        W.append(w)
        WD.append(wd)
        VD.append(vd)
    tau = [None] * n
    f, nn = zero, zero
    for i in range(n - 1, -1, -1):
        if i < n - 1:
            R, p = L[i + 1]
            f = _rotate(P, R, f)
            nn = _add(P, _rotate(P, R, nn), _cross(P, p, f))
        w, wd, com, inertia = W[i], WD[i], c.com[i], c.inertia[i]
        acc = _add(P, VD[i], _cross(P, wd, com), _cross(P, w, _cross(P, w, com)))
        F = P.vector(c.mass[i] * acc[k] for k in range(3))
        N = _add(P, _rotate(P, inertia, wd), _cross(P, w, _rotate(P, inertia, w)))
        f = _add(P, f, F)
        nn = _add(P, nn, N, _cross(P, com, F))
        moment = f if c.prismatic[i] else nn
        tau[i] = P.let(sum(moment[k] * c.axis[i][k] for k in range(3)))
    return tau


def _symbols(n):
    return (sp.symbols(f'q1:{n + 1}', real=True), sp.symbols(f'qd1:{n + 1}', real=True),
            sp.symbols(f'qdd1:{n + 1}', real=True))


def inverse_dynamics_program(c):
    """Return ``(program, tau)`` of the inverse dynamics of the constants ``c``."""
    q, qd, qdd = _symbols(len(c.mass))
    P = Program()
    return P, _rnea(P, c, _joint_transforms(P, c, q), qd, qdd)


def gravity_program(c):
    """Return ``(program, g)``: the Newton-Euler lines at rest."""
    n = len(c.mass)
    q, _, _ = _symbols(n)
    P = Program()
    return P, _rnea(P, c, _joint_transforms(P, c, q), [0] * n, [0] * n)


def mass_matrix_program(c):
    """Return ``(program, M)``: ``M[i][j]`` for i <= j from ``RNEA(q, 0, e_j)``, mirrored."""
    n = len(c.mass)
    q, _, _ = _symbols(n)
    P = Program()
    L = _joint_transforms(P, c, q)
    M = [[None] * n for _ in range(n)]
    for j in range(n):
        column = _rnea(P, c, L, [0] * n, [int(k == j) for k in range(n)], gravity=False)
        for i in range(j + 1):
            M[i][j] = M[j][i] = column[i]
    return P, M


def _derivative(expr, D):
    """Return ``d expr`` by the chain rule, ``D`` mapping symbols to their derivatives."""
    expr = sp.sympify(expr)
    return sp.Add(*(expr.diff(s) * D[s] for s in expr.free_symbols if s in D))


def _differentiate(P, lines, variable):
    """Append the lines of ``d/d variable`` of every line of ``lines``; return the derivatives."""
    D = {variable: sp.Integer(1)}
    # d cos(q)/dq = -sin(q): the sine the program has already
    known = {expr: symbol for symbol, expr in lines if expr.is_Function}
    for symbol, expr in lines:
        d = P.let(_derivative(expr, D).xreplace(known))
        if d != 0:
            D[symbol] = d
    return D


def coriolis_program(c):
    """Return ``(program, C)``: ``C_kj = sum_i c_ijk qd_i`` from the mass matrix's program."""
    n = len(c.mass)
    q, qd, _ = _symbols(n)
    P, M = mass_matrix_program(c)
    lines = list(P.lines)
    dM = []
    for qi in q:
        D = _differentiate(P, lines, qi)
        dM.append([[_derivative(M[a][b], D) for b in range(n)] for a in range(n)])
    C = [[P.let(sum(sp.Rational(1, 2) * (dM[i][k][j] + dM[j][k][i] - dM[k][i][j]) * qd[i]
                    for i in range(n))) for j in range(n)] for k in range(n)]
    return P, C


def _floats(expr):
    """Return ``expr`` with its rationals as floats (for code, and the operations it costs)."""
    return expr.xreplace({r: sp.Float(float(r), 17) for r in expr.atoms(sp.Rational)
                          if not r.is_Integer})


def count_operations(exprs):
    """
    Return ``{'mul': ..., 'add': ..., 'div': ..., 'fn': ...}`` of evaluating ``exprs`` as written.

    A product of k factors: k - 1 multiplications (coefficients 1 and -1 are not factors);
    ``x**k``: k - 1; a sum of k terms: k - 1 additions; ``x**-1``: a division; any function
    (sin, cos, ...) or other power: ``fn``.
    """
    count = {'mul': 0, 'add': 0, 'div': 0, 'fn': 0}

    def walk(e):
        if e.is_Atom:
            return
        if e.is_Add:
            count['add'] += len(e.args) - 1
        elif e.is_Mul:
            factors = [a for a in e.args if a not in (1, -1)]
            count['mul'] += max(len(factors) - 1, 0)
        elif e.is_Pow:
            k = e.exp
            if k.is_Integer and k >= 2:
                count['mul'] += int(k) - 1
                walk(e.base)
                return
            if k == -1:
                count['div'] += 1
                walk(e.base)
                return
            count['fn'] += 1
        else:
            count['fn'] += 1
        for a in e.args:
            walk(a)
    for e in exprs:
        walk(_floats(sp.sympify(e)))
    return count


def program_operations(program, outputs):
    """Return :func:`count_operations` of the lines ``outputs`` need and of ``outputs``."""
    return count_operations([e for _, e in program.pruned(outputs)] + list(outputs))


def general_counts(n):
    """
    Return the operations of the library's recursion for n joints, nothing folded.

    The same Newton-Euler as the generated inverse dynamics with a symbol for every constant
    (joint placements, axes, inertial parameters, gravity) and revolute joints: what the
    recursion computes per state for an arm of n joints, whatever its numbers.
    """
    def symbols(name, shape):
        return np.array(sp.symbols(f'{name}0:{int(np.prod(shape))}', real=True),
                        dtype=object).reshape(shape).tolist()
    c = _Numbers(rotation=symbols('R', (n, 3, 3)), offset=symbols('p', (n, 3)),
                 axis=symbols('a', (n, 3)), prismatic=[False] * n, mass=symbols('m', (n,)),
                 com=symbols('c', (n, 3)), inertia=symbols('I', (n, 3, 3)),
                 gravity=symbols('g', (3,)))
    P, tau = inverse_dynamics_program(c)
    return program_operations(P, tau)


def table_8_1(n):
    """
    Return Turney, Mudge and Lee's (1981) Table 8.1 for n links: ``{approach: (mul, add)}``.

    Lagrange with 4x4 matrices (Uicker, Lewis), the recursive Lagrange (Hollerbach), Newton-Euler
    (Luh, Walker and Paul) and the paper's modified Newton-Euler.
    """
    return {
        'Lagrange (4x4)': (27 * n ** 3 / 2 + 165 * n ** 2 / 2 + 5 * n,
                           40 * n ** 3 / 3 + 58 * n ** 2 - 64 * n / 3),
        'recursive Lagrange': (226 * n, 144 * n),
        'Newton-Euler': (108 * n - 12, 100 * n - 9),
        'modified Newton-Euler': (90 * n - 27, 88 * n - 24),
    }


# ---- source and compilation ---------------------------------------------------------------------

def _source_lines(name, args, checks, program, assignments):
    """Return the Python lines of one kernel: size checks, the program, the outputs, True."""
    printer = PythonCodePrinter({'fully_qualified_modules': True})
    out = ['@numba.njit(cache=True, nogil=True)', f'def {name}({", ".join(args)}):',
           f'    if not ({checks}):', '        return False']
    values = [sp.sympify(e) for _, e in assignments]
    lines = program.pruned(values)
    used = set().union(*(e.free_symbols for _, e in lines), *(e.free_symbols for e in values))
    for arg in ('q', 'qd', 'qdd'):
        out += [f'    {s} = {arg}[{k}]' for k, s in enumerate(sp.symbols(f'{arg}1:65', real=True))
                if s in used]
    for symbol, expr in lines:
        out.append(f'    {symbol} = {printer.doprint(_floats(expr))}')
    for (target, _), expr in zip(assignments, values):
        out.append(f'    {target} = {printer.doprint(_floats(expr))}')
    out.append('    return True')
    return out


def model_hash(model, gravity):
    """Return the hex digest that names a model's generated code (its constants and gravity)."""
    h = hashlib.sha256(f'robot_dynamics.generated {GENERATOR_VERSION}'.encode())
    for a in (model.joint_placement, model.joint_axis, model.is_prismatic.astype(float),
              model.mass, model.com, model.inertia, np.asarray(gravity, dtype=float)):
        h.update(np.ascontiguousarray(a, dtype=float).tobytes())
    return h.hexdigest()[:24]


def cache_directory():
    """Return the folder of generated code: ``$ROBOT_DYNAMICS_CACHE``, else the user cache dir."""
    root = os.environ.get('ROBOT_DYNAMICS_CACHE')
    if root:
        return Path(root)
    base = os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache'
    return Path(base) / 'robot_dynamics' / 'generated'


KERNELS = ('inverse_dynamics', 'gravity_torques', 'mass_matrix', 'coriolis_matrix')


def generate_source(model, gravity=None, kernels=KERNELS):
    """
    Return ``(source, operations)``: the module's Python text and the operations of each kernel.

    ``operations`` maps each of ``kernels`` (default all of :data:`KERNELS`) to
    :func:`count_operations` of its program.
    """
    gravity = model.gravity if gravity is None else gravity
    c = _numbers(model, gravity)
    n = model.dof
    size = {'q': f'q.shape[0] == {n}', 'qd': f'qd.shape[0] == {n}', 'qdd': f'qdd.shape[0] == {n}',
            'vec': f'out.shape[0] == {n}', 'mat': f'out.shape[0] == out.shape[1] == {n}'}

    def vector(x):
        return [(f'out[{i}]', x[i]) for i in range(n)]

    def matrix(x):
        return [(f'out[{i}, {j}]', x[i][j]) for i in range(n) for j in range(n)]

    # name: (arguments, their sizes, program, its outputs as (target, expression))
    recipes = {
        'inverse_dynamics': (('q', 'qd', 'qdd', 'out'), ('q', 'qd', 'qdd', 'vec'),
                             inverse_dynamics_program, vector),
        'gravity_torques': (('q', 'out'), ('q', 'vec'), gravity_program, vector),
        'mass_matrix': (('q', 'out'), ('q', 'mat'), mass_matrix_program, matrix),
        'coriolis_matrix': (('q', 'qd', 'out'), ('q', 'qd', 'mat'), coriolis_program, matrix),
    }
    text = ['"""Generated by robot_dynamics.generated for one robot; do not edit."""', '',
            'import math', '', 'import numba', '']
    operations = {}
    for name in kernels:
        args, checks, program, outputs = recipes[name]
        P, result = program(c)
        assignments = outputs(result)
        text += ['', *_source_lines(name, args, ' and '.join(size[k] for k in checks), P,
                                    assignments), '']
        operations[name] = program_operations(P, [e for _, e in assignments])
    return '\n'.join(text), operations


@dataclasses.dataclass(frozen=True)
class GeneratedKernels:
    """
    A model's compiled kernels and how they were made.

    ``inverse_dynamics(q, qd, qdd, out)``, ``gravity_torques(q, out)``, ``mass_matrix(q, out)``,
    ``coriolis_matrix(q, qd, out)``: float64 arrays, write ``out``, return False when a size is
    wrong. ``generation_time`` [s]: sympy's part (0 when the code was in the cache),
    ``compile_time`` [s]: numba's (compiling, or loading its cache), ``path``: the source file.
    """

    inverse_dynamics: object
    gravity_torques: object
    mass_matrix: object
    coriolis_matrix: object
    generation_time: float
    compile_time: float
    path: Path


def _module(path):
    """Return the generated module at ``path``, imported once per process as its file's stem."""
    with _IMPORTING:         # no other thread may take the module before it is executed
        module = sys.modules.get(path.stem)
        if module is not None and module.__file__ == str(path):
            return module
        # numba's cache stores the module's name and imports it by that name when it loads a
        # kernel in a later process: a module missing from sys.modules is saved as '<dynamic>',
        # which no process can import
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[spec.name]
            raise
        return module


def kernels(model, gravity=None):
    """
    Return the :class:`GeneratedKernels` of ``model`` (gravity: default ``model.gravity``).

    Built at first use: the source is generated (seconds; minutes for 7 joints, see the README)
    and written to :func:`cache_directory`, then compiled by numba, which caches the machine
    code beside it; later calls, in any process, load both.
    """
    gravity = model.gravity if gravity is None else np.asarray(gravity, dtype=float)
    folder = cache_directory()
    path = folder / f'rd_{model_hash(model, gravity)}.py'
    start = time.perf_counter()
    generation = 0.0
    if not path.is_file():
        source, _ = generate_source(model, gravity)
        folder.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f'.{os.getpid()}.tmp')
        partial.write_text(source)
        os.replace(partial, path)          # another process may be writing the same file
        generation = time.perf_counter() - start
    start = time.perf_counter()
    module = _module(path)
    n = model.dof
    zero, out = np.zeros(n), np.empty((n, n))
    module.inverse_dynamics(zero, zero, zero, out[0])
    module.gravity_torques(zero, out[0])
    module.mass_matrix(zero, out)
    module.coriolis_matrix(zero, zero, out)
    return GeneratedKernels(inverse_dynamics=module.inverse_dynamics,
                            gravity_torques=module.gravity_torques,
                            mass_matrix=module.mass_matrix,
                            coriolis_matrix=module.coriolis_matrix,
                            generation_time=generation, compile_time=time.perf_counter() - start,
                            path=path)
