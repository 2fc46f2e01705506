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
Test helper, not a launch implementation: stand-ins for ``launch`` and ``launch_ros``.

Neither package is installable without a ROS 2 distribution, so the launch files are tested by
running them against these stand-ins: :func:`run_launch_file` puts them into ``sys.modules``
under the real module names (for the launch file and
``robot_dynamics.ros.tools.launch_description``, which it imports), loads a ``*.launch.py``
file as ``ros2 launch`` does, calls its
``generate_launch_description()`` and plays the description the way launch does for the few
actions used here: the command line's arguments are set first, then in order a declared
argument without a value takes its default (and is checked against its choices), and an
``OpaqueFunction`` is called with the context and the actions it returns are played in turn.
Every stand-in records what it was constructed with. The constructors take the real keyword
names (launch and launch_ros of ROS 2 Humble and later) and no others, so that a misspelt
keyword fails here too. What the real packages do beyond that (processes, substitutions,
launch_ros's parameter files) is not imitated.
"""

import importlib.util
import sys
import types

#: The package module behind the launch files, which imports launch and launch_ros.
ADAPTER = 'robot_dynamics.ros.tools.launch_description'


class LaunchContext:
    """Stand-in for ``launch.LaunchContext``: only the launch configurations."""

    def __init__(self):
        self.launch_configurations = {}


class LaunchDescription:
    """Stand-in for ``launch.LaunchDescription``."""

    def __init__(self, initial_entities=None):
        self.entities = list(initial_entities or [])


class DeclareLaunchArgument:
    """Stand-in for ``launch.actions.DeclareLaunchArgument``."""

    def __init__(self, name, *, default_value=None, description=None, choices=None):
        self.name = name
        self.default_value = default_value
        self.description = description
        self.choices = choices


class OpaqueFunction:
    """Stand-in for ``launch.actions.OpaqueFunction``: ``function(context, *args, **kwargs)``."""

    def __init__(self, *, function, args=None, kwargs=None):
        self.function = function
        self.args = list(args or [])
        self.kwargs = dict(kwargs or {})


class LaunchConfiguration:
    """Stand-in for ``launch.substitutions.LaunchConfiguration``."""

    def __init__(self, variable_name, *, default=None):
        self.variable_name = variable_name
        self.default = default

    def perform(self, context):
        """Return the configuration's text (launch raises when it is not set either)."""
        value = context.launch_configurations.get(self.variable_name, self.default)
        if value is None:
            raise LookupError(f'launch configuration {self.variable_name!r} is not set')
        return value


class Node:
    """Stand-in for ``launch_ros.actions.Node``: records its keywords in ``options``."""

    def __init__(self, *, executable, package=None, name=None, namespace=None, exec_name=None,
                 parameters=None, remappings=None, ros_arguments=None, arguments=None,
                 output='log'):
        self.options = {key: value for key, value in locals().items()
                        if key not in ('self', '__class__')}


def _modules():
    contents = {
        'launch': {'LaunchDescription': LaunchDescription, 'LaunchContext': LaunchContext},
        'launch.actions': {'DeclareLaunchArgument': DeclareLaunchArgument,
                           'OpaqueFunction': OpaqueFunction},
        'launch.substitutions': {'LaunchConfiguration': LaunchConfiguration},
        'launch_ros': {},
        'launch_ros.actions': {'Node': Node},
    }
    modules = {}
    for name, attributes in contents.items():
        module = types.ModuleType(name, f'Test stand-in for {name}.')
        module.__dict__.update(attributes)
        modules[name] = module
    modules['launch'].actions = modules['launch.actions']
    modules['launch'].substitutions = modules['launch.substitutions']
    modules['launch_ros'].actions = modules['launch_ros.actions']
    return modules


def run_launch_file(path, arguments, monkeypatch):
    """
    Play the launch file ``path`` with command-line ``arguments`` (``{name: text}``).

    The stand-ins stay in ``sys.modules`` only for the test (``monkeypatch``). Return
    ``(declared, nodes)``: the :class:`DeclareLaunchArgument` stand-ins in order and the
    :class:`Node` stand-ins that would be started.
    """
    for name, module in _modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    # imported anew against these stand-ins, and forgotten after the test
    monkeypatch.delitem(sys.modules, ADAPTER, raising=False)
    spec = importlib.util.spec_from_file_location('launch_file_under_test', path)
    launch_file = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch_file)
    description = launch_file.generate_launch_description()
    assert isinstance(description, LaunchDescription)

    context = LaunchContext()
    context.launch_configurations.update(arguments)   # ros2 launch sets them all first
    declared, nodes = [], []
    pending = list(description.entities)
    while pending:
        action = pending.pop(0)
        if isinstance(action, DeclareLaunchArgument):
            declared.append(action)
            configurations = context.launch_configurations
            if action.name not in configurations:
                if action.default_value is None:
                    raise LookupError(f'launch argument {action.name!r} has no value')
                configurations[action.name] = action.default_value
            if action.choices is not None and configurations[action.name] not in action.choices:
                raise ValueError(f'launch argument {action.name!r}: not one of {action.choices}')
        elif isinstance(action, OpaqueFunction):
            pending[:0] = action.function(context, *action.args, **action.kwargs) or []
        elif isinstance(action, Node):
            nodes.append(action)
        else:
            raise TypeError(f'the stand-ins do not play {type(action).__name__}')
    return declared, nodes
