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
The CDR reader and writer against rclpy's own serialization, field by field, both ways.

Truth is ``rclpy.serialization`` (the middleware's typesupport): rclpy's bytes must read back
to the message's fields with ours, and our bytes must deserialize with rclpy to the message we
meant, on random messages: names in any order, joints beyond the model's, empty fields and
frames, long and non-ASCII (UTF-8) names, nan and inf, the extremes of a stamp. The joint
reader must give the model's joints picked out of the message by name (by hand, here), and name
each way a message cannot serve. No DDS traffic: nothing is published.
"""

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from robot_dynamics import RobotModel
from robot_dynamics.errors import InputError, ShapeError
from robot_dynamics.ros.wire import cdr
from robot_dynamics.ros.wire.conversions import to_nanoseconds
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

N_RANDOM = 300
#: Characters of random names: ASCII, Latin-1, CJK, an emoji (4 bytes in UTF-8).
ALPHABET = list('abcdefghijklmnopqrstuvwxyz_0123456789') + ['ä', 'ß', 'é', '关', '节', '🦾']
SPECIALS = (0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1.7976931348623157e308)


def random_name(rng, long=False):
    size = int(rng.integers(300, 2000)) if long else int(rng.integers(0, 12))
    return ''.join(rng.choice(ALPHABET, size))


def random_values(rng, n):
    values = rng.normal(scale=10.0 ** rng.integers(-3, 4), size=n)
    special = rng.uniform(size=n) < 0.1
    values[special] = rng.choice(SPECIALS, int(special.sum()))
    return values


def random_joint_state(rng):
    """Return a random JointState: any names (maybe none), each field full or empty."""
    m = int(rng.integers(0, 25))
    msg = JointState(name=[random_name(rng, long=rng.uniform() < 0.05) for _ in range(m)])
    msg.header.frame_id = random_name(rng, long=rng.uniform() < 0.05) if rng.uniform() < 0.5 \
        else ''
    msg.header.stamp.sec = int(rng.choice([0, -2 ** 31, 2 ** 31 - 1,
                                           int(rng.integers(-2 ** 31, 2 ** 31))]))
    msg.header.stamp.nanosec = int(rng.choice([0, 999_999_999, int(rng.integers(0, 10 ** 9))]))
    for field in cdr.FIELDS:
        # a field is full or empty; now and then a count unlike the names' (rclpy allows it)
        size = m if rng.uniform() < 0.7 else int(rng.choice([0, rng.integers(0, 25)]))
        setattr(msg, field, random_values(rng, size).tolist())
    return msg


def assert_fields(fields, msg):
    """Assert that ``read_joint_state``'s fields equal the message's (nan equal to nan)."""
    assert fields.stamp_ns == to_nanoseconds(msg.header.stamp)
    assert fields.frame_id == msg.header.frame_id
    assert fields.name == list(msg.name)
    for field in cdr.FIELDS:
        ours = getattr(fields, field)
        assert ours.dtype == np.float64
        np.testing.assert_array_equal(ours, np.array(getattr(msg, field), dtype=float))


def test_rclpy_bytes_read_field_by_field():
    rng = np.random.default_rng(1)
    for _ in range(N_RANDOM):
        msg = random_joint_state(rng)
        assert_fields(cdr.read_joint_state(serialize_message(msg)), msg)


def test_written_bytes_deserialize_with_rclpy():
    rng = np.random.default_rng(2)
    for _ in range(N_RANDOM):
        msg = random_joint_state(rng)
        m = len(msg.name)
        # the writer writes a full field or an empty one (the position always full)
        msg.position = random_values(rng, m).tolist()
        for field in ('velocity', 'effort'):
            setattr(msg, field, random_values(rng, m if rng.uniform() < 0.7 else 0).tolist())
        writer = cdr.JointStateWriter(msg.name, msg.header.frame_id)
        data = writer.write(to_nanoseconds(msg.header.stamp), msg.position,
                            msg.velocity or None, msg.effort or None)
        back = deserialize_message(data, JointState)
        assert_fields(cdr.read_joint_state(serialize_message(back)), msg)
        assert_fields(cdr.read_joint_state(data), msg)
        # rclpy's message ends where ours does (its buffer may have bytes beyond)
        theirs = serialize_message(msg)
        assert len(theirs) >= len(data)
        assert_fields(cdr.read_joint_state(theirs[:len(data)]), msg)
        with pytest.raises(InputError, match='malformed'):
            cdr.read_joint_state(theirs[:len(data) - 1])
        # the writer's buffer is reused: a second message with other values is right as well
        again = writer.write(0, np.zeros(m))
        assert deserialize_message(again, JointState).position.tolist() == [0.0] * m


def test_writer_rejects_wrong_sizes_and_stamps():
    writer = cdr.JointStateWriter(['a', 'b'])
    with pytest.raises(ShapeError, match=r'position: expected 2 values \(one per name\), got '
                                         r'shape \(1,\)'):
        writer.write(0, [1.0])
    with pytest.raises(ShapeError, match='velocity: .* or none, got shape \\(3,\\)'):
        writer.write(0, [1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ShapeError, match='effort: .*got shape \\(2, 2\\)'):
        writer.write(0, [1.0, 2.0], None, np.ones((2, 2)))
    with pytest.raises(InputError, match='int32 seconds'):
        writer.write(2 ** 31 * 10 ** 9, [1.0, 2.0])
    stamp = -2 ** 31 * 10 ** 9 + 1     # the earliest: sec -2^31, nanosec 1
    back = deserialize_message(writer.write(stamp, [1.0, 2.0]), JointState)
    assert (back.header.stamp.sec, back.header.stamp.nanosec) == (-2 ** 31, 1)


def utf8_model():
    """Return a 3-joint model whose joint names are not ASCII."""
    return RobotModel.from_dh([
        {'name': name, 'type': kind, 'a': 0.3, 'alpha': 0.0, 'd': 0.0, 'theta': 0.0,
         'mass': 1.0} for name, kind in (('schulter_ä', 'revolute'), ('关节_2', 'revolute'),
                                         ('hand🦾', 'prismatic'))])


MODELS = (RobotModel.load('puma560'), RobotModel.load('planar_2r'), utf8_model())


def model_joint_state(rng, model, extra):
    """Return a JointState of ``model``'s joints in random order with ``extra`` other joints."""
    names = list(model.joint_names) + [f'extra_{k}{random_name(rng)}' for k in range(extra)]
    rng.shuffle(names)
    m = len(names)
    msg = JointState(name=names, position=rng.normal(size=m).tolist(),
                     velocity=rng.normal(size=m).tolist())
    msg.effort = random_values(rng, m).tolist() if rng.uniform() < 0.7 else []
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(rng.integers(0, 2 ** 31)), 7
    return msg


def by_name(msg, field, model):
    """Return the message's ``field`` values of the model's joints, in model order."""
    names = list(msg.name)
    return np.array([getattr(msg, field)[names.index(joint)] for joint in model.joint_names])


@pytest.mark.parametrize('model', MODELS, ids=lambda m: m.name)
def test_reader_picks_the_joints_by_name(model):
    rng = np.random.default_rng(3)
    reader = cdr.JointStateReader(model)
    for k in range(N_RANDOM):
        # runs of one name order (the cache) and new orders, with extra joints or none
        if k % 5 == 0:
            extra = int(rng.integers(0, 4))
            template = model_joint_state(rng, model, extra)
        msg = JointState(name=template.name, position=rng.normal(size=len(template.name)).tolist(),
                         velocity=rng.normal(size=len(template.name)).tolist(),
                         effort=template.effort)
        msg.header.stamp.sec, msg.header.stamp.nanosec = k, 1000 * k
        data = serialize_message(msg)
        q, qd = by_name(msg, 'position', model), by_name(msg, 'velocity', model)
        stamp, q_ours, qd_ours = reader.state(data)
        assert stamp == k * 10 ** 9 + 1000 * k
        np.testing.assert_array_equal(q_ours, q)
        np.testing.assert_array_equal(qd_ours, qd)
        _, q_only = reader.positions(data)
        np.testing.assert_array_equal(q_only, q)
        sample = reader.read(data)
        np.testing.assert_array_equal(sample.position, q)
        np.testing.assert_array_equal(sample.velocity, qd)
        if msg.effort:
            np.testing.assert_array_equal(sample.effort, by_name(msg, 'effort', model))
        else:
            assert sample.effort is None


def test_reader_without_velocities_or_efforts():
    model = MODELS[0]
    reader = cdr.JointStateReader(model)
    msg = JointState(name=list(model.joint_names), position=[0.5] * model.dof)
    sample = reader.read(serialize_message(msg))
    np.testing.assert_array_equal(sample.position, [0.5] * model.dof)
    assert sample.velocity is None and sample.effort is None


def error_of(fn, *args):
    with pytest.raises(InputError) as info:
        fn(*args)
    return str(info.value)


@pytest.mark.parametrize('model', MODELS, ids=lambda m: m.name)
def test_reader_errors_name_the_problem(model):
    """Every way a JointState cannot serve: an InputError naming the problem and the joint."""
    rng = np.random.default_rng(4)
    names = list(model.joint_names)
    n = len(names)
    nan_at = int(rng.integers(0, n))
    bad = {
        'missing joint': JointState(name=names[1:], position=[0.0] * (n - 1),
                                    velocity=[0.0] * (n - 1)),
        'repeated joint': JointState(name=names + names[:1], position=[0.0] * (n + 1),
                                     velocity=[0.0] * (n + 1)),
        'no names': JointState(),
        'no velocities': JointState(name=names, position=[0.0] * n),
        'fewer positions': JointState(name=names, position=[0.0] * (n - 1),
                                      velocity=[0.0] * n),
        'more velocities': JointState(name=names, position=[0.0] * n, velocity=[0.0] * (n + 1)),
        'nan position': JointState(name=names, position=[0.0] * n, velocity=[0.0] * n),
        'inf velocity': JointState(name=names, position=[0.0] * n, velocity=[0.0] * n),
    }
    bad['nan position'].position[nan_at] = float('nan')
    bad['inf velocity'].velocity[n - 1] = float('-inf')
    expected = {
        'missing joint': f'missing [{names[0]!r}], repeated []',
        'repeated joint': f'missing [], repeated [{names[0]!r}]',
        # a refusal quotes at most five names of a list
        'no names': (f'missing {names}, repeated []' if n <= 5 else
                     f'missing {names[:5]} and {n - 5} more, repeated []'),
        'no velocities': 'joint_states: no velocities (the message has positions only)',
        'fewer positions': f'joint_states positions: expected {n} values (one per name), got '
                           f'{n - 1}',
        'more velocities': f'joint_states velocities: expected {n} values (one per name), got '
                           f'{n + 1}',
        'nan position': f'joint_states positions: joint {names[nan_at]!r} is nan: values must '
                        'be finite',
        'inf velocity': f'joint_states velocities: joint {names[-1]!r} is -inf: values must be '
                        'finite',
    }
    reader = cdr.JointStateReader(model)
    good = serialize_message(JointState(name=names, position=[0.0] * n, velocity=[0.0] * n))
    for case, msg in bad.items():
        ours = error_of(reader.state, serialize_message(msg))
        assert ours.startswith('joint_states') and expected[case] in ours, (case, ours)
        # a good message after a bad one reads right (no stale name map)
        np.testing.assert_array_equal(reader.state(good)[1], np.zeros(n))
    # joints the model does not have are not read: a nan there is no error
    extra = JointState(name=names + ['gripper'], position=[0.0] * n + [float('nan')],
                       velocity=[0.0] * (n + 1), effort=[float('nan')] * (n + 1))
    sample = reader.read(serialize_message(extra))
    np.testing.assert_array_equal(sample.position, np.zeros(n))
    assert np.isnan(sample.effort).all()       # efforts pass as they are


def test_malformed_messages_raise():
    """Cut short anywhere, or not little-endian CDR: an InputError, never a read past the end."""
    model = MODELS[0]
    reader = cdr.JointStateReader(model)
    msg = model_joint_state(np.random.default_rng(5), model, 2)
    msg.header.frame_id = 'base'
    data = serialize_message(msg)
    writer = cdr.JointStateWriter(msg.name, 'base')
    end = len(writer.write(0, msg.position, msg.velocity, msg.effort or None))
    for size in range(end):
        for fn in (reader.state, cdr.read_joint_state):
            assert 'malformed message' in error_of(fn, data[:size])
    big_endian = bytes((0, 0, 0, 0)) + data[4:]
    assert 'little-endian' in error_of(reader.state, big_endian)
    # a length or count that claims more than there is: frame_id's, the names'
    for at in (12, 24):
        huge = bytearray(data)
        huge[at:at + 4] = (0xff, 0xff, 0xff, 0xff)
        assert 'malformed' in error_of(reader.state, bytes(huge))
    assert 'expected the bytes' in error_of(reader.state, 'not bytes')


def test_names_longer_than_the_cache():
    """A name section larger than the reader keeps is matched on every message, still right."""
    rng = np.random.default_rng(6)
    model = MODELS[1]
    reader = cdr.JointStateReader(model)
    extras = ['x' * 3000, 'y' * 3000]
    for _ in range(20):
        names = list(model.joint_names) + extras
        rng.shuffle(names)
        msg = JointState(name=names, position=rng.normal(size=4).tolist(),
                         velocity=rng.normal(size=4).tolist())
        np.testing.assert_array_equal(reader.state(serialize_message(msg))[1],
                                      by_name(msg, 'position', model))


def random_float64_array(rng):
    msg = Float64MultiArray(data=random_values(rng, int(rng.integers(0, 30))).tolist())
    for _ in range(int(rng.choice([0, 0, 1, 3]))):
        msg.layout.dim.append(MultiArrayDimension(
            label=random_name(rng), size=int(rng.integers(0, 2 ** 32)),
            stride=int(rng.integers(0, 2 ** 32))))
    msg.layout.data_offset = int(rng.integers(0, 2 ** 32)) if msg.layout.dim else 0
    return msg


def test_float64_array_both_ways():
    rng = np.random.default_rng(7)
    for _ in range(N_RANDOM):
        msg = random_float64_array(rng)
        values = cdr.read_float64_array(serialize_message(msg))
        assert values.dtype == np.float64
        np.testing.assert_array_equal(values, np.array(msg.data, dtype=float))
        back = deserialize_message(cdr.write_float64_array(values), Float64MultiArray)
        np.testing.assert_array_equal(np.array(back.data), values)
        assert back.layout.dim == [] and back.layout.data_offset == 0


def test_float64_array_malformed():
    data = serialize_message(Float64MultiArray(data=[1.0, 2.0, 3.0]))
    for size in range(len(data)):
        assert 'malformed' in error_of(cdr.read_float64_array, data[:size])
    assert 'little-endian' in error_of(cdr.read_float64_array, bytes(4) + data[4:])
    assert 'expected the bytes' in error_of(cdr.read_float64_array, 'not bytes')
