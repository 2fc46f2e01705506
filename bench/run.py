#!/usr/bin/env python3
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
Run every ``bench/bench_*.py`` module's ``run()`` and print one table per module.

Usage: ``python bench/run.py [--quick] [--only NAME ...] [--json FILE]`` (``make bench``).

Rows with ``ours_us`` and other ``<peer>_us`` columns get ratio columns ``ours/<peer>``
(below 1: robot_dynamics is faster). Rows of any other shape are printed with the columns they
have, so modules with their own measures (IK success rates, ...) fit in too; a module whose rows
carry a ``table`` key gets one table per title.
"""

import argparse
import importlib
import inspect
import json
from pathlib import Path
import sys
import time
import traceback

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from common import environment  # noqa: E402

UNITS = {'single': 'us per call, one state', 'batch': 'us per state, batch of 10,000'}


def discover():
    """Return the benchmark module names (``bench_<topic>``), sorted."""
    return sorted(p.stem for p in BENCH.glob('bench_*.py'))


def selected(names, only):
    """Keep the modules named in ``only`` (``kinematics`` or ``bench_kinematics``)."""
    if not only:
        return names
    wanted = {o if o.startswith('bench_') else f'bench_{o}' for o in only}
    unknown = wanted - set(names)
    if unknown:
        raise SystemExit(f'unknown benchmark(s) {sorted(unknown)}; available: {names}')
    return [n for n in names if n in wanted]


def call_run(module, quick):
    """Call ``module.run``, passing ``quick`` if it takes it."""
    params = inspect.signature(module.run).parameters
    if 'quick' in params:
        return module.run(quick=quick)
    return module.run()


def with_ratios(rows):
    """Return the column order and rows with ``ours/<peer>`` ratio columns added."""
    columns = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    peers = [c for c in columns if c.endswith('_us') and c != 'ours_us']
    if 'ours_us' not in columns or not peers:
        return columns, rows
    out = []
    for row in rows:
        row = dict(row)
        for peer in peers:
            ours, other = row.get('ours_us'), row.get(peer)
            ok = isinstance(ours, (int, float)) and isinstance(other, (int, float)) and other > 0
            row[f'ours/{peer[:-3]}'] = ours / other if ok else None
        out.append(row)
    return columns + [f'ours/{p[:-3]}' for p in peers], out


def fmt(value, column):
    """Format one cell."""
    if value is None:
        return '-'
    if isinstance(value, bool):
        return 'yes' if value else 'no'
    if isinstance(value, float):
        if column.startswith('ours/'):
            return f'{value:.3g}' if abs(value) < 0.1 else f'{value:.2f}'
        if abs(value) >= 100:
            return f'{value:.0f}'
        if abs(value) >= 10:
            return f'{value:.1f}'
        return f'{value:.3g}' if abs(value) < 1 else f'{value:.2f}'
    return str(value)


def table(rows):
    """Format rows as plain text: the columns present, plus the ratio columns."""
    columns, rows = with_ratios(rows)
    cells = [[fmt(row.get(c), c) for c in columns] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    numeric = [all(isinstance(row.get(c), (int, float)) or row.get(c) is None for row in rows)
               for c in columns]

    def line(values):
        return '  '.join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric)).rstrip()

    out = [line(columns), line(['-' * w for w in widths])]
    out.extend(line(r) for r in cells)
    return '\n'.join(out)


def titled(rows):
    """Return the text of each table: rows with a ``table`` key are grouped under that title."""
    groups = {}
    for row in rows:
        groups.setdefault(row.get('table'), []).append(
            {k: v for k, v in row.items() if k != 'table'})
    return [table(group) if title is None else f'-- {title} --\n{table(group)}'
            for title, group in groups.items()]


def main(argv=None):
    """Run the benchmarks and print the tables; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='fewer repetitions (a smoke run)')
    parser.add_argument('--only', action='append', metavar='NAME',
                        help='run only this module, one of '
                             f'{", ".join(n[len("bench_"):] for n in discover())} (or with the '
                             'bench_ prefix); repeatable')
    parser.add_argument('--json', metavar='FILE', help='also write all rows as JSON')
    args = parser.parse_args(argv)

    names = selected(discover(), args.only)
    env = environment()
    print('robot_dynamics benchmarks' + (' (quick)' if args.quick else ''))
    for key, value in env.items():
        print(f'  {key}: {value}')
    print('  single: ' + UNITS['single'] + '; batch: ' + UNITS['batch'])
    print('  ours/<peer> < 1: robot_dynamics is faster')
    results, failed = {}, []
    for name in names:
        start = time.perf_counter()
        try:
            module = importlib.import_module(name)
            rows = list(call_run(module, args.quick))
        except Exception:  # noqa: B902 - report and go on with the other modules
            failed.append(name)
            print(f'\n== {name}: FAILED ==')
            traceback.print_exc()
            continue
        results[name] = rows
        print(f'\n== {name} ({time.perf_counter() - start:.1f} s) ==')
        print('\n\n'.join(titled(rows)) if rows else '(no rows)')
    if args.json:
        Path(args.json).write_text(json.dumps({'environment': env, 'results': results},
                                              indent=2, default=float))
    if failed:
        print(f'\nfailed: {failed}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
