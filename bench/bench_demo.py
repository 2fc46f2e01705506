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
The main job as users run it: ``robot-dynamics demo`` in real time and in lockstep.

Each run is the command line itself (``robot-dynamics demo --robot NAME --report FILE``), on a
``ROS_DOMAIN_ID`` of its own (the lock files of ``test/ros/isolation.py``), its figures taken
from its JSON report:

- ``demo, real time``: the pick-and-place with its recorder: ``rate_hz`` and ``missed_pct`` of
  the control cycles, state-to-command ``latency_ms`` and ``latency_p99_ms``, ``rms`` tracking
  error; and what each process spends per control cycle during the motion (CPU time from
  ``/proc`` between the demo's "executing" line and the end of the goal, over the cycles):
  ``simulator_us``, ``controller_us``, and ``demo_us``, the demo's own process (recorder,
  client, bringup). Targets: rate >= 990 Hz, latency p99 <= 1.5 ms (scara, planar_2r, quiet
  machine). The SCARA's run again with the live view open (``--view``, a headless Chromium page
  on it; ``view``: open or closed): the loop's figures side by side. ``goal``: reached, or why
  not (a host starved by the page's WebGL in software ends a real-time goal in safe mode).
- ``demo, lockstep``: ``--lockstep``, ``RUNS`` runs: ``wall_s`` of the motion, its
  ``real_time_factor``, ``rms`` and whether every run gave the same (``same_numbers``), and
  ``missed`` cycles (0 expected).
- ``demo --cartesian, lockstep``: the lines as one Cartesian goal, followed by the controller's
  task-space law: ``wall_s``, ``real_time_factor`` (beside the joint goal's above: what the
  task-space cycle costs the loop), and the tip's largest and rms distance from the lines
  (``line_max_mm``, ``line_rms_mm``).
- ``bringup --lockstep``: the arm holding, simulated over wall time from ``/simulator/status``
  over ``HOLD_SECONDS`` (the median of the status messages' real-time factors).
"""

import contextlib
import json
import math
from pathlib import Path
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from common import REPO  # noqa: F401 - sets the import path of test/ros
from isolation import CHROMIUM_ARGS, environment, free_port, lock_domain, Processes
import numpy as np
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from robot_dynamics_interfaces.msg import SimulatorStatus

ROBOTS = ('scara', 'planar_2r')
RUNS = 2
HOLD_SECONDS = 10.0
BIN = Path(sys.executable).parent
#: The node processes of a demo, by their console script.
NODES = {'simulator': 'simulator_node', 'controller': 'controller_node'}
_CLOCK_TICKS = 100.0


def _cpu_seconds(pid):
    """Return the CPU time (user + system) of ``pid`` [s], or None once it is gone."""
    try:
        fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def _children(pid):
    """Return ``{name: pid}`` of the demo's node processes (by their console script)."""
    found = {}
    for entry in Path('/proc').iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / 'stat').read_text().rsplit(')', 1)[1].split()[1])
            cmdline = (entry / 'cmdline').read_bytes().decode(errors='replace')
        except OSError:
            continue
        if ppid == pid:
            for name, script in NODES.items():
                if script in cmdline:
                    found[name] = int(entry.name)
    return found


@contextlib.contextmanager
def _browser():
    """Yield a function opening a URL in headless Chromium (None: no Chromium or Playwright)."""
    executable = shutil.which('chromium') or shutil.which('chromium-browser')
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        executable = None
    if executable is None:
        yield None
        return
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True,
                                    args=list(CHROMIUM_ARGS))
        try:
            yield lambda url: browser.new_page().goto(url)
        finally:
            browser.close()


def _demo(env, robot, tmp, lockstep=False, open_page=None, cartesian=False):
    """
    Run one demo; return its report and the CPU seconds of each process over the motion.

    A real-time demo that the host starved into the controller's safe mode is a figure too
    (its report says so); any other failure raises.

    ``open_page``: a function that opens a URL in a browser; the demo then serves the live view
    (``--view``) and a browser page shows it from before the motion (a page with WebGL in
    software: the heaviest viewer this machine has).
    """
    report = Path(tmp) / (f'{robot}{"_lockstep" if lockstep else ""}'
                          f'{"_cartesian" if cartesian else ""}.json')
    report.unlink(missing_ok=True)
    log = open(Path(tmp) / f'{report.stem}.log', 'w+')
    port = free_port() if open_page else None
    proc = subprocess.Popen([str(BIN / 'robot-dynamics'), 'demo', '--robot', robot, '--report',
                             str(report), '--lockstep' if lockstep else '--real-time']
                            + (['--view', str(port)] if port else [])
                            + (['--cartesian'] if cartesian else []),
                            env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    start = end = None
    try:
        while proc.poll() is None:
            text = Path(log.name).read_text()
            if port and 'view: http' in text:
                open_page(f'http://127.0.0.1:{port}')
                port = None
            if start is None and 'demo: executing' in text:
                pids = {'demo': proc.pid, **_children(proc.pid)}
                start = {name: _cpu_seconds(pid) for name, pid in pids.items()}
            elif start is not None:
                now = {name: _cpu_seconds(pid) for name, pid in pids.items()}
                if any(value is None for value in now.values()) or 'stopping:' in text:
                    break       # the nodes stop: the motion is over
                end = now
            time.sleep(0.1)
        proc.wait(300)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(60)
        log.close()
    if proc.returncode != 0 and (lockstep or not report.exists()):
        raise RuntimeError(f'demo {robot} failed:\n{Path(log.name).read_text()[-3000:]}')
    data = json.loads(report.read_text())
    spent = {name: end[name] - start[name] for name in start} if start and end else {}
    return data, spent


def demo_rows(env, tmp):
    """Return the real-time demo rows, and the SCARA's again with the live view open."""
    rows = []
    with _browser() as open_page:
        runs = [(robot, None) for robot in ROBOTS]
        if open_page is not None:
            runs.append((ROBOTS[0], open_page))
        for robot, page in runs:
            rows.append(_demo_row(env, tmp, robot, page))
    return rows


def _demo_row(env, tmp, robot, open_page):
    report, spent = _demo(env, robot, tmp, open_page=open_page)
    cycles = max(report['control_cycles'] or 0, 1)
    row = {'table': 'demo, real time (recorder included)', 'robot': robot,
           'view': 'open' if open_page else 'closed',
           'goal': 'reached' if report['succeeded'] else report['result']['error_string'],
           'rate_hz': report['control_rate_hz'],
           'missed_pct': 100.0 * (report['missed_cycles'] or 0) / cycles,
           'latency_ms': report['control_latency_ms']['p50'],
           'latency_p99_ms': report['control_latency_ms']['p99'],
           'rms': report['rms_tracking_error']}
    # the CPU window is the motion's, the cycles those of the report's window
    motion_cycles = report['motion_duration_s'] * (report['control_rate_hz'] or math.nan)
    for name in ('simulator', 'controller', 'demo'):
        row[f'{name}_us'] = spent[name] / motion_cycles * 1e6 if name in spent else None
    return row


def lockstep_rows(env, tmp, runs):
    """Return the lockstep demo rows: wall time, real-time factor, the same numbers."""
    rows = []
    for robot in ROBOTS:
        reports = [_demo(env, robot, tmp, lockstep=True)[0] for _ in range(runs)]
        figures = {(r['rms_tracking_error'], r['max_tracking_error'], r['missed_cycles'])
                   for r in reports}
        rows.append({'table': 'demo, lockstep (simulated time)', 'robot': robot,
                     'wall_s': float(np.median([r['wall_time_s'] for r in reports])),
                     'real_time_factor': float(np.median([r['real_time_factor']
                                                          for r in reports])),
                     'rms': reports[0]['rms_tracking_error'],
                     'missed': reports[0]['missed_cycles'],
                     'same_numbers': len(figures) == 1})
    return rows


def cartesian_rows(env, tmp):
    """Return the ``--cartesian`` lockstep rows: the loop's pace, the tip's line distance."""
    rows = []
    for robot in ROBOTS:
        report = _demo(env, robot, tmp, lockstep=True, cartesian=True)[0]
        deviation = report['line_deviation_m']
        rows.append({'table': 'demo --cartesian, lockstep (simulated time)', 'robot': robot,
                     'wall_s': report['wall_time_s'],
                     'real_time_factor': report['real_time_factor'],
                     'line_max_mm': 1e3 * deviation['max'], 'line_rms_mm': 1e3 * deviation['rms'],
                     'missed': report['missed_cycles']})
    return rows


def hold_rows(env, domain, tmp):
    """Return the ``bringup --lockstep`` row: the real-time factor of a held arm."""
    rows = []
    context = Context()
    rclpy.init(context=context, domain_id=domain)
    node = Node('bench_lockstep', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    statuses = []
    node.create_subscription(SimulatorStatus, '/simulator/status',
                             lambda msg: statuses.append(msg), 100)
    try:
        with Processes(env, tmp) as processes:
            for robot in ROBOTS:
                statuses.clear()
                proc = processes.start('bringup', [str(BIN / 'robot-dynamics'), 'bringup',
                                                   '--robot', robot, '--processes',
                                                   '--lockstep'])
                deadline = time.monotonic() + 240.0
                while not statuses and time.monotonic() < deadline:
                    executor.spin_once(timeout_sec=0.1)
                statuses.clear()
                end = time.monotonic() + HOLD_SECONDS
                while time.monotonic() < end:
                    executor.spin_once(timeout_sec=0.1)
                processes.stop(proc)
                factors = [s.real_time_factor for s in statuses]
                rows.append({'table': 'bringup --lockstep, holding', 'robot': robot,
                             'real_time_factor': float(np.median(factors)) if factors
                             else None,
                             'unanswered': statuses[-1].unanswered_states if statuses
                             else None})
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    return rows


def run(quick=False):
    """Return the rows of every table (``quick``: the lockstep demo once)."""
    domain, handle = lock_domain()
    try:
        with tempfile.TemporaryDirectory(prefix='bench_demo_') as tmp:
            env = environment(domain, tmp)
            return (demo_rows(env, tmp) + lockstep_rows(env, tmp, 1 if quick else RUNS)
                    + cartesian_rows(env, tmp) + hold_rows(env, domain, tmp))
    finally:
        handle.close()


if __name__ == '__main__':
    from run import table
    print(table(run('--quick' in sys.argv)))
