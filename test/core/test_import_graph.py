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
The modules of ``robot_dynamics`` (``ros/`` included) import one another without a circle.

Read from the source with ``ast``, nothing imported: every ``import`` and ``from ... import``
at any depth counts, a function's lazy import as much as one at the top, since it only defers
the circle to a call. ``from package import name`` is an edge to ``package.name`` when that is
a module, else to ``package``; the parent packages a Python import runs on the way are not
edges (every module would then reach ``robot_dynamics/__init__.py``). Which modules may import
ROS at all is checked by ``test/test_package.py``.
"""

import ast
from pathlib import Path

PACKAGE = 'robot_dynamics'
ROOT = Path(__file__).resolve().parents[2] / PACKAGE


def _module_names():
    """Return ``{dotted module name: (path, is a package)}`` of every file of the package."""
    modules = {}
    for path in sorted(ROOT.rglob('*.py')):
        parts = (PACKAGE,) + path.relative_to(ROOT).with_suffix('').parts
        package = parts[-1] == '__init__'
        modules['.'.join(parts[:-1] if package else parts)] = (path, package)
    return modules


def _known(name, modules):
    """Return the longest prefix of dotted ``name`` that is a module of the package, or None."""
    parts = name.split('.')
    while parts and '.'.join(parts) not in modules:
        parts.pop()
    return '.'.join(parts) or None


def import_graph():
    """Return ``{module: {imported module: first line}}`` among the package's modules."""
    modules = _module_names()
    graph = {}
    for name, (path, package) in modules.items():
        here = name if package else name.rpartition('.')[0]
        edges = graph[name] = {}
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [_known(alias.name, modules) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = here.rsplit('.', node.level - 1)[0] if node.level else ''
                source = '.'.join(filter(None, [base, node.module]))
                targets = [f'{source}.{alias.name}' if f'{source}.{alias.name}' in modules
                           else _known(source, modules) for alias in node.names]
            else:
                continue
            for target in targets:
                if target is not None:
                    edges.setdefault(target, node.lineno)
    return graph


def cycles(graph):
    """Return one shortest cycle (a list of modules, first repeated last) per circle of modules."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def connect(node):       # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while node not in component:
                component.add(stack.pop())
            on_stack.difference_update(component)
            components.append(component)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    found = []
    for component in components:
        start = min(component)
        if len(component) == 1 and start not in graph.get(start, ()):
            continue
        came_from, frontier = {}, [start]
        while start not in came_from:       # breadth first, back to the start
            reached = []
            for node in frontier:
                for target in sorted(graph[node]):
                    if target in component and target not in came_from:
                        came_from[target] = node
                        reached.append(target)
            frontier = reached
        path = [start]
        while len(path) == 1 or path[-1] != start:
            path.append(came_from[path[-1]])
        found.append(path[::-1])
    return found


def _described(cycle, graph):
    """Return ``a:line -> b:line -> a``, each module with the line that imports the next."""
    return ' -> '.join([f'{a}:{graph[a][b]}' for a, b in zip(cycle, cycle[1:])] + [cycle[-1]])


def test_the_scan_sees_lazy_relative_and_package_imports():
    graph = import_graph()
    # a function's import, and 'from . import module' as an edge to the module
    assert 'robot_dynamics.ros.tools.bringup' in graph['robot_dynamics.cli']
    assert 'robot_dynamics.ros.tools.definitions' in graph['robot_dynamics.cli']
    assert 'robot_dynamics.ik.numeric' in graph['robot_dynamics.ik']
    assert 'robot_dynamics.kinematics' in graph['robot_dynamics.ik.chain']
    assert cycles({'a': {'b': 1}, 'b': {'c': 1}, 'c': {'a': 1, 'd': 1}, 'd': {}}) == [
        ['a', 'b', 'c', 'a']]
    assert cycles({'a': {'a': 1}}) == [['a', 'a']]


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 50
    found = cycles(graph)
    assert not found, 'import cycles:\n' + '\n'.join(_described(c, graph) for c in found)
