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
Test helpers: the README's shell commands and Python blocks, taken from README.md as written.

Commands run as a user of a pip install runs them: in a folder of their own, with the venv
activated (``VIRTUAL_ENV`` set, its ``bin`` first on ``PATH``), on the test's domain. No ROS
import here: the core tier reads the README's blocks too.
"""

from pathlib import Path
import re
import shlex
import sys
import time

README = Path(__file__).resolve().parents[1] / 'README.md'
#: What ``robot-dynamics bringup`` prints once every node runs.
RUNNING = 'running; Ctrl-C stops every node'
#: Generous limit for a command to start or end [s] (a loaded host, the first compilation).
TIMEOUT = 240.0


def readme_commands(marker):
    """
    Return the commands of the README's one bash block holding ``marker``, one per line.

    Continuation lines are joined; a here-document stays one command, its lines kept.
    """
    blocks = re.findall(r'```bash\n(.*?)```', README.read_text(), re.S)
    found = [block for block in blocks if marker in block]
    assert len(found) == 1, f'the README should hold one bash block with {marker!r}'
    text = re.sub(r'\\\n\s*', '', found[0])
    commands, heredoc = [], None
    for line in text.splitlines():
        if heredoc is not None:
            commands[-1] += '\n' + line
            heredoc = None if line.strip() == heredoc else heredoc
        elif line.strip():
            commands.append(' '.join(line.split()))
            start = re.search(r"<<\s*'?(\w+)'?", line)
            heredoc = start.group(1) if start else None
    return commands


def readme_python(*markers):
    """Return the README's one Python block holding each of ``markers``."""
    blocks = re.findall(r'```python\n(.*?)```', README.read_text(), re.S)
    found = [block for block in blocks if all(marker in block for marker in markers)]
    assert len(found) == 1, f'the README should hold one Python block with {markers}'
    return found[0]


def amended(command, options):
    """Return ``command`` with ``options`` added before its comment, if it has one."""
    line, hash_, comment = command.partition(' #')
    return f'{line} {options}{hash_}{comment}'


def shell(folder, command):
    """Return ``bash -c`` of ``command`` in ``folder``, the venv activated as a user has it."""
    venv = shlex.quote(sys.prefix)
    return ['bash', '-c', f'cd {shlex.quote(str(folder))} && export VIRTUAL_ENV={venv} '
                          f'PATH={venv}/bin:"$PATH" && exec {command}']


def started(processes, folder, command, said=RUNNING):
    """Start ``command`` (one that runs until stopped); return it once it printed ``said``."""
    proc = processes.start(command.split()[0], shell(folder, command))
    deadline = time.monotonic() + TIMEOUT
    while said not in processes.output(proc):
        assert proc.poll() is None and time.monotonic() < deadline, \
            f'{command}: {processes.output(proc)}'
        time.sleep(0.1)
    return proc


def finished(processes, folder, command):
    """Run ``command`` to its end; return its output (it must succeed)."""
    proc = processes.start(command.split()[0], shell(folder, command))
    status = proc.wait(TIMEOUT)
    output = processes.output(proc)
    assert status == 0, f'{command}: exit status {status}\n{output}'
    return output
