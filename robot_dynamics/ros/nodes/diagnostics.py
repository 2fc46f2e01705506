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
A node's status on ``/diagnostics``, once a second, as diagnostic_updater publishes it.

One ``diagnostic_msgs/DiagnosticStatus`` per node in a ``DiagnosticArray``: named with the
node's full name (``/left/controller``), its level, message and key-value figures from the
library (:mod:`robot_dynamics.diagnostics`), ``hardware_id`` the robot's name. The period runs
on the steady clock: a node on simulated time whose clock stopped with its simulator still says
so. ``/diagnostics`` is absolute, as diagnostic_updater's, so that one aggregator or
rqt_robot_monitor sees every arm's nodes, told apart by their names.
"""

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType

from .parameters import Spec
from ... import diagnostics

TOPIC = '/diagnostics'
#: Period of the statuses [s] (diagnostic_updater's default).
PERIOD = 1.0


def _threshold_specs(thresholds, descriptions):
    """Return a ``Spec`` ``diagnostics.<field>`` per field of a thresholds NamedTuple."""
    return tuple(Spec(f'diagnostics.{name}', float(default), descriptions[name],
                      bounds=(0.0, 1e6))
                 for name, default in thresholds()._asdict().items())


#: The WARN thresholds of each node's status, as parameters (defaults: the library's).
CONTROLLER_PARAMETERS = _threshold_specs(diagnostics.ControllerThresholds, {
    'min_rate_ratio': 'WARN on /diagnostics when the control rate is below this fraction of '
                      'rate_hz.',
    'max_missed_ratio': 'WARN on /diagnostics when more than this fraction of the cycles of a '
                        'period were missed.',
    'max_latency': 'WARN on /diagnostics when the 99th percentile of the latency (a joint '
                   "state's stamp to its command, wall time) exceeds this [s]."})
SIMULATOR_PARAMETERS = _threshold_specs(diagnostics.SimulatorThresholds, {
    'max_late_ratio': 'WARN on /diagnostics when more than this fraction of the steps of a '
                      'period were late.',
    'min_real_time_factor': 'WARN on /diagnostics when, in real time, simulated time ran '
                            'slower than this fraction of wall time over a period.'})
KINEMATICS_PARAMETERS = _threshold_specs(diagnostics.KinematicsThresholds, {
    'max_ik_failure_ratio': 'WARN on /diagnostics when more than this fraction of the IK calls '
                            'of a period found no solution.'})


def thresholds(params, kind):
    """Return the thresholds NamedTuple ``kind`` from a node's declared parameter values."""
    return kind(*(getattr(params, f'diagnostics_{name}') for name in kind._fields))


def message(name, status, hardware_id, stamp):
    """Return the ``DiagnosticArray`` of one :class:`~robot_dynamics.diagnostics.Status`."""
    array = DiagnosticArray()
    array.header.stamp = stamp
    array.status = [DiagnosticStatus(
        level=bytes([int(status.level)]), name=name, message=status.message,
        hardware_id=hardware_id,
        values=[KeyValue(key=key, value=value) for key, value in status.values])]
    return array


class Diagnostics:
    """
    Publish the status of ``node`` on ``/diagnostics`` every :data:`PERIOD` s.

    ``figures()`` returns the node's cumulative figures now; ``judge(now, before)`` the status
    of the period between two of them (a function of :mod:`robot_dynamics.diagnostics`);
    ``hardware_id()`` names the robot ('' until it is known).
    """

    def __init__(self, node, figures, judge, hardware_id):
        self._node = node
        self._figures = figures
        self._judge = judge
        self._hardware_id = hardware_id
        self._before = figures()
        self._publisher = node.create_publisher(DiagnosticArray, TOPIC, 10)
        self._timer = node.create_timer(PERIOD, self.publish,
                                        clock=Clock(clock_type=ClockType.STEADY_TIME))

    def publish(self):
        """Publish the status of the period since the last one."""
        node, now = self._node, self._figures()
        status, self._before = self._judge(now, self._before), now
        self._publisher.publish(message(node.get_fully_qualified_name(), status,
                                        self._hardware_id(), node.get_clock().now().to_msg()))
