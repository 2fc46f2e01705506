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
One declaration per node parameter: name, default, unit and range in one place.

Each node lists its parameters as :class:`Spec` tuples and calls :func:`declare`, which
declares them with descriptors (description with the unit, read-only for structural ones,
ranges that rclpy enforces on start-up overrides and on every later change) and returns their
values. An out-of-range or mistyped value from a YAML file or ``-p name:=value`` stops start-up
with a message naming the parameter, the type it takes and the value.

:func:`check` is the same judgement made before anything starts (``robot-dynamics bringup``
checks every file and ``-p`` against the declarations of :mod:`~robot_dynamics.ros.tools.graph`):
rcl merges the parameter files and ``-p`` overrides of a node before rclpy sees them, and
where two of them give one parameter values of different types (a file's ``0.05``, a ``-p``
``abc``) it keeps the first one without a word.
"""

import array
import types
from typing import Any, NamedTuple, Optional, Tuple

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import InvalidParameterTypeException
from rclpy.parameter import Parameter

from ...errors import closest, InputError, listed, quoted

#: Pass as ``default`` for an array parameter whose default is empty (rclpy needs a type).
STRING_ARRAY = Parameter.Type.STRING_ARRAY
DOUBLE_ARRAY = Parameter.Type.DOUBLE_ARRAY


class Spec(NamedTuple):
    """A node parameter: ``bounds`` is ``(low, high)``, inclusive, for numbers."""

    name: str
    default: Any
    description: str
    read_only: bool = True
    bounds: Optional[Tuple[float, float]] = None

    def line(self):
        """Return the parameter in one line: name, default, range, writable, description."""
        default = '[]' if self.default in (STRING_ARRAY, DOUBLE_ARRAY) else repr(self.default)
        bounds = '' if self.bounds is None else f' in [{self.bounds[0]:g}, {self.bounds[1]:g}]'
        writable = '' if self.read_only else ' (settable at run time)'
        return f'{self.name} = {default}{bounds}{writable}: {self.description}'


def descriptor(spec):
    """Return the ``ParameterDescriptor`` of ``spec``."""
    desc = ParameterDescriptor(description=spec.description, read_only=spec.read_only)
    if spec.bounds is not None:
        low, high = spec.bounds
        if isinstance(spec.default, int) and not isinstance(spec.default, bool):
            desc.integer_range = [IntegerRange(from_value=int(low), to_value=int(high), step=0)]
        else:
            desc.floating_point_range = [FloatingPointRange(from_value=float(low),
                                                            to_value=float(high), step=0.0)]
    return desc


def declare(node, specs):
    """
    Declare ``specs`` on ``node`` and return their values as a namespace.

    Array parameters declared with an empty default (``STRING_ARRAY``, ``DOUBLE_ARRAY``) read as
    an empty list when not set. Attribute names are the parameter names with dots replaced by
    underscores. A value of another type (from a parameter file or ``-p``) raises
    ``InputError`` naming the parameter, the value and the type it takes.
    """
    values = {}
    for spec in specs:
        try:
            param = node.declare_parameter(spec.name, spec.default, descriptor(spec))
        except InvalidParameterTypeException as exc:
            # rclpy's message names the parameter, the value and both types (then the name
            # again); ours adds how to write a value of the declared type
            raise InputError(f'{str(exc).removesuffix(f": {spec.name}")}; {spec.name} takes '
                             f'{expected(spec)}') from None
        value = param.value
        if value is None and spec.default in (STRING_ARRAY, DOUBLE_ARRAY):
            value = []
        if isinstance(value, (tuple, array.array)):
            value = list(value)
        values[spec.name.replace('.', '_')] = value
    return types.SimpleNamespace(**values)


#: The parameters rclpy declares on every node itself.
ROS_PARAMETERS = (
    Spec('use_sim_time', False, 'Take the node clock from /clock (rclpy).'),
    Spec('start_type_description_service', True, 'Serve ~/get_type_description (rclpy).'),
)

#: How the values of each type are named in messages: one, several, an example.
_TYPES = {bool: ('a bool', 'bools', 'true'), int: ('an integer', 'integers', '3'),
          float: ('a double', 'doubles', '0.5'), str: ('a string', 'strings', "'text'")}


def _kind(spec):
    """Return ``(element type, is an array)`` of the values ``spec`` takes."""
    if spec.default is STRING_ARRAY or spec.default is DOUBLE_ARRAY:
        return (str if spec.default is STRING_ARRAY else float), True
    if isinstance(spec.default, (list, tuple)):
        return type(spec.default[0]), True
    return type(spec.default), False


def expected(spec):
    """Return what ``spec`` takes in words, with an example: ``'a double (e.g. 0.5; ...)'``."""
    element, is_array = _kind(spec)
    one, several, example = _TYPES[element]
    if is_array:
        return f'a list of {several} (e.g. [{example}, {example}])'
    if element is float:
        return f'{one} (e.g. {example}; a whole number such as 5 is an integer: write 5.0)'
    return f'{one} (e.g. {example})'


def _type_of(value):
    """Return ``(element type or None for a mixed list, is an array)`` of a YAML value."""
    if isinstance(value, list):
        kinds = {type(v) for v in value}
        return (kinds.pop() if len(kinds) == 1 else None), True
    return type(value), False


def check(spec, value):
    """
    Raise ``InputError`` unless the node would take ``value`` (as YAML reads it) for ``spec``.

    The type must be the declared one, as rclpy requires (an integer is no double, a bool no
    integer; a list holds one type, an empty list is any list); a number must lie within the
    declared bounds.
    """
    element, is_array = _kind(spec)
    got, got_array = _type_of(value)
    if got_array != is_array or (got is not element and not (got_array and value == [])):
        if got_array:
            shown = repr(value) + (' (of mixed types)' if got is None else '')
        else:
            shown = f'{value!r} ({_TYPES[got][0]})' if got in _TYPES else repr(value)
        raise InputError(f'parameter {spec.name!r} takes {expected(spec)}, got {shown}')
    if spec.bounds is not None and not is_array and element in (int, float):
        low, high = spec.bounds
        if not low <= value <= high:     # NaN too
            raise InputError(f'parameter {spec.name!r} takes values in [{low:g}, {high:g}], '
                             f'got {value!r}')


def joint_of(name, patterns):
    """
    Return ``(pattern, joint)`` if ``name`` is one of ``patterns`` (with ``{joint}``) for a joint.

    ``'gains.shoulder.kp'`` is ``('gains.{joint}.kp', 'shoulder')``; else None.
    """
    parts = name.split('.')
    for pattern in patterns:
        words = pattern.split('.')
        if '{joint}' in words and len(words) == len(parts) and \
                all(w in (p, '{joint}') for w, p in zip(words, parts)):
            return pattern, parts[words.index('{joint}')]
    return None


def unknown_parameter(name, declared, patterns, joints):
    """
    Return what is wrong with the undeclared parameter ``name``, with the closest names.

    A per-joint parameter (``patterns``, with ``{joint}``) of a joint that is not among
    ``joints`` names the closest joints, of one among them the gain the law lacks; any other name
    the closest of ``declared``.
    """
    per_joint = joint_of(name, patterns)
    if per_joint is not None:
        pattern, joint = per_joint
        if joint in joints:
            # the joint is known: only a law's gain is declared for some settings and not others
            return (f'parameter {quoted(name)} is not declared: the control law in use has no '
                    f'{quoted(pattern.rsplit(".", 1)[-1])} gain ({pattern} is declared for the '
                    'laws that have one)')
        near = closest(joint, joints)
        hint = f'closest: {listed(near)}' if near else f'joints: {listed(joints, 20)}'
        return (f'parameter {quoted(name)}: no joint {quoted(joint)} in the model ({hint}; '
                f'{pattern} takes a joint of the model)')
    near = closest(name, declared)
    hint = f'; closest: {listed(near)}' if near else ''
    return f'no parameter {quoted(name)} is declared{hint}'


def refusal(name, value, specs, patterns, joints, structural=()):
    """
    Return why a node refuses to set ``name`` to ``value`` at run time ('' if it would not).

    ``specs`` ``{name: Spec}`` are the node's declared parameters; an unknown name gets the
    closest names (:func:`unknown_parameter`); a read-only or ``structural`` one (``use_sim_time``:
    declared by rclpy, but fixed while the node runs) says so; a value of another type names the
    type it takes (:func:`check`), as does one outside the declared range.
    """
    spec = specs.get(name)
    if spec is None:
        return unknown_parameter(name, list(specs), patterns, joints)
    if spec.read_only or name in structural:
        return (f'parameter {quoted(name)} is read-only while the node runs (restart the node '
                'to change it)')
    if value is None:
        return f'parameter {quoted(name)} cannot be unset; it takes {expected(spec)}'
    if isinstance(value, (tuple, array.array)):
        value = list(value)
    try:
        check(spec, value)
    except InputError as exc:
        return str(exc)
    return ''


#: The command parameters shared by the controller and the simulator (and so set once, in the
#: ``/**`` section of a parameter file, for both).
COMMAND_PARAMETERS = (
    Spec('command_interface', 'effort',
         'What the commands are: effort [N m or N], position [rad or m] or velocity [rad/s or '
         'm/s], one value per joint in the order of the joints parameter.'),
    Spec('command_topic', '',
         'Topic of the std_msgs/Float64MultiArray commands; empty: '
         "<command_interface>_controller/commands in the node's namespace, the name of "
         "ros2_control's forward_command_controller for that interface (in the root: "
         '/effort_controller/commands).'),
)


def command_topic(values):
    """Return the command topic of declared COMMAND_PARAMETERS ``values``."""
    return values.command_topic or f'{values.command_interface}_controller/commands'
