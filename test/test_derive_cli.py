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

"""``robot-dynamics derive``: the equations as text and LaTeX, and the operation counts."""

from robot_dynamics import cli


def derive(capsys, *options):
    assert cli.main(['derive', *options]) == 0
    return capsys.readouterr().out.splitlines()


def test_derive_prints_becker_and_klinks_equations_with_symbols(capsys):
    lines = derive(capsys, '--robot', 'rp_arm', '--symbolic-parameters')
    assert 'd11 = c_1x**2*m_1 + c_2x**2*m_2 + 2*c_2x*m_2*q2 + m_2*q2**2' in lines
    assert 'd22 = m_2' in lines
    assert 'g2 = g*m_2*sin(q1)' in lines
    assert '  c_1x = 0.5' in lines and '  g = 9.81' in lines


def test_derive_latex_with_the_models_numbers(capsys):
    lines = derive(capsys, '--robot', 'planar_2r', '--latex')
    assert r'd_{22} = 2' in lines
    assert r'd_{11} = 4 \cos{\left(q_{2} \right)} + 11' in lines
    assert any(line.startswith(r'\tau_{1} = d_{11} \ddot q_{1}') for line in lines)


def test_derive_count_prints_table_8_1_and_the_generated_counts(capsys):
    lines = derive(capsys, '--robot', 'planar_2r', '--count')
    table = {line[:42].strip(): line[42:].split()[:2] for line in lines if line.startswith('  ')}
    # n = 2: 27/2 8 + 165/2 4 + 10 = 448; 40/3 8 + 58 4 - 128/3 = 296
    assert table['Lagrange (4x4)'] == ['448', '296']
    assert table['modified Newton-Euler'] == ['153', '152']
    mul, add = (int(v) for v in table['generated for planar_2r'])
    assert 0 < mul < 153 and 0 < add < 152
