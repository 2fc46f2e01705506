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
Messages of the 1 kHz loop per message: rclpy's objects against the CDR of ``ros.cdr``.

What a node does with one message, in this process (no transport), in microseconds of its CPU
time (``time.process_time``, as ``bench_prepared``): for a
``sensor_msgs/JointState`` of all the model's joints (names, positions, velocities, efforts),

- ``read JointState``: rclpy ``deserialize_message`` and the positions and velocities in model
  order, checked (``RobotModel.indices_in``, ``conversions.joint_values``), against
  :meth:`~robot_dynamics.ros.wire.cdr.JointStateReader.state` on the same bytes;
- ``write JointState``: refilling a JointState from arrays (``tolist``, as the simulator does)
  and ``serialize_message`` against :meth:`~robot_dynamics.ros.wire.cdr.JointStateWriter.write`;

and for the command, a ``std_msgs/Float64MultiArray`` of one value per joint,

- ``read Float64MultiArray``: ``deserialize_message`` against
  :func:`~robot_dynamics.ros.wire.cdr.read_float64_array`, each followed by the simulator's check
  (``conversions.joint_values``: one finite value per joint);
- ``write Float64MultiArray``: a message from ``tolist`` and ``serialize_message`` against
  :func:`~robot_dynamics.ros.wire.cdr.write_float64_array`.

rclpy's (de)serialization is what a typed subscription's take and a typed publish do besides
the transport. Robots: ``planar_2r`` (2 joints), ``puma560`` (6) and a 20-joint chain. Before
timing, both sides must agree on the values.
"""

import time

from common import best_us, check_close, timing_row
import numpy as np
from rclpy.serialization import deserialize_message, serialize_message
from robot_dynamics import RobotModel
from robot_dynamics.ros.wire.cdr import (JointStateReader, JointStateWriter, read_float64_array,
                                         write_float64_array)
from robot_dynamics.ros.wire.conversions import joint_values
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

GROUP = 'messages'
STAMP_NS = 1_767_225_600_123_456_789


def chain(n):
    """Return a planar arm of ``n`` revolute joints (DH rows): a long JointState."""
    return RobotModel.from_dh([{'name': f'joint_{k + 1}', 'type': 'revolute', 'a': 0.1,
                                'alpha': 0.0, 'd': 0.0, 'theta': 0.0, 'mass': 1.0}
                               for k in range(n)])


def bench_model(label, model, quick):
    """Return the four timing rows of one model."""
    options = {'repeat': 1 if quick else 7, 'clock': time.process_time}
    n, names = model.dof, list(model.joint_names)
    q, qd, tau = np.random.default_rng(0).normal(size=(3, n))
    msg = JointState(name=names, position=q.tolist(), velocity=qd.tolist(), effort=tau.tolist())
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(STAMP_NS, 1_000_000_000)
    state = serialize_message(msg)
    command = serialize_message(Float64MultiArray(data=tau.tolist()))
    reader, writer = JointStateReader(model), JointStateWriter(names)
    out = JointState(name=names)

    def by_name(msg):
        idx = model.indices_in(msg.name)
        return (joint_values(msg.position, msg.name, 'positions')[idx],
                joint_values(msg.velocity, msg.name, 'velocities')[idx])

    def rclpy_read():
        received = deserialize_message(state, JointState)
        return received.header.stamp, by_name(received)

    def rclpy_write():
        out.header.stamp.sec, out.header.stamp.nanosec = divmod(STAMP_NS, 1_000_000_000)
        out.position, out.velocity, out.effort = q.tolist(), qd.tolist(), tau.tolist()
        return serialize_message(out)

    def rclpy_command():
        return joint_values(deserialize_message(command, Float64MultiArray).data, names, 'c')

    def our_command():
        return joint_values(read_float64_array(command), names, 'c')

    check_close('read JointState', np.concatenate(rclpy_read()[1]),
                np.concatenate(reader.state(state)[1:]), tol=0.0)
    check_close('write JointState', np.concatenate(
        by_name(deserialize_message(writer.write(STAMP_NS, q, qd, tau), JointState))),
        np.concatenate((q, qd)), tol=0.0)
    check_close('read Float64MultiArray', rclpy_command(), our_command(), tol=0.0)
    check_close('write Float64MultiArray', deserialize_message(
        write_float64_array(tau), Float64MultiArray).data, tau, tol=0.0)
    cases = (('read JointState', lambda: reader.state(state), rclpy_read),
             ('write JointState', lambda: writer.write(STAMP_NS, q, qd, tau), rclpy_write),
             ('read Float64MultiArray', our_command, rclpy_command),
             ('write Float64MultiArray', lambda: write_float64_array(tau),
              lambda: serialize_message(Float64MultiArray(data=tau.tolist()))))
    rows = []
    for operation, ours, theirs in cases:
        row = timing_row(GROUP, f'{label} ({n} joints)', operation, 'single',
                         best_us(ours, **options))
        del row['pinocchio_us'], row['rtb_us']
        row['rclpy_us'] = best_us(theirs, **options)
        row['bytes'] = len(state if 'JointState' in operation else command)
        rows.append(row)
    return rows


def run(quick=False):
    """Return the rows of this benchmark (see common.py for the row format)."""
    rows = []
    for label, model in (('planar_2r', RobotModel.load('planar_2r')),
                         ('puma560', RobotModel.load('puma560')), ('chain', chain(20))):
        rows.extend(bench_model(label, model, quick))
    return rows
