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
Serialized ``sensor_msgs/JointState`` and ``std_msgs/Float64MultiArray``: read and write the CDR.

For the 1 kHz paths that take and publish messages raw (``create_subscription(...,
raw=True)``, ``publisher.publish(bytes)``): rclpy turns every message into Python objects and
back, a Python object per field and per joint before the conversion to arrays, where these
read the values a node needs straight into numpy arrays and write a message from them
(``bench/bench_cdr.py`` measures both).

The encoding is what ROS 2's middlewares put on the wire, plain CDR (XCDR1) little-endian (OMG
DDS-XTypes 1.3; the encapsulation identifiers of OMG DDS-RTPS 2.5, chapter 10): a 4-byte
encapsulation header ``00 01 00 00``, then the fields in declaration order, each primitive
aligned to its size counted from the end of the header; a string is its uint32 length including
the terminating NUL, its bytes (UTF-8 in ROS 2) and the NUL; a sequence is its uint32 element
count and the elements (``float64`` elements aligned to 8 only when there are any, as Fast CDR
writes them). Messages::

    sensor_msgs/JointState: std_msgs/Header header (builtin_interfaces/Time stamp {int32 sec,
        uint32 nanosec}, string frame_id), string[] name, float64[] position, float64[]
        velocity, float64[] effort
    std_msgs/Float64MultiArray: MultiArrayLayout layout (MultiArrayDimension[] dim {string
        label, uint32 size, uint32 stride}, uint32 data_offset), float64[] data

The JointState reader (:class:`JointStateReader`) is the one home of the rules for reading a
model's joints out of a JointState, for raw subscriptions and, serialized, for message objects (a
service request's state): compiled (numba: one call per message, no Python object per joint), it
reads the joints by name from messages naming their joints in any order, extra joints ignored. A
message that is cut short or whose lengths run past its end is an ``InputError`` too, never a read
outside the buffer. The Float64MultiArray is short enough for numpy and ``struct``.
"""

import collections
import struct

import numpy as np

from .conversions import non_finite_error
from ..._jit import kernel_array, njit
from ...errors import InputError, ShapeError
from ...stamps import NS_PER_S, split

#: The encapsulation header of plain CDR, little-endian (RTPS 2.5, §10.2, CDR_LE).
ENCAPSULATION = b'\x00\x01\x00\x00'
#: Where alignment is counted from: the end of the encapsulation header [bytes].
_ORIGIN = 4
_UINT32 = struct.Struct('<I')

# Kernel statuses (0: read).
_MALFORMED = 1          # a length or count runs past the end of the message
_HEADER = 2             # not little-endian plain CDR
_NAMES = 3              # a model joint missing or repeated among the names
_COUNT = 4              # a field's value count differs from the names' (detail: field, count)
_NON_FINITE = 5         # nan or inf for a model joint (detail: field, index in the message)

# Entries of the kernels' int64 ``layout`` array (_STAMP: sec * 1e9 + nanosec).
_STAMP, _FRAME, _FRAME_LEN, _COUNT_NAMES, _NAMES_START, _NAMES_END = range(6)
#: ``_VALUES + 2 f`` is field f's value count, ``_VALUES + 2 f + 1`` the offset of its values
#: (f = 0 position, 1 velocity, 2 effort).
_VALUES = 6
_CACHE_LEN, _DETAIL_FIELD, _DETAIL_INDEX = 12, 13, 14
_LAYOUT_SIZE = 15
#: Bytes of the names kept to recognise the next message's names (larger: matched every time).
_NAMES_CACHE = 4096
FIELDS = ('position', 'velocity', 'effort')
_FIELD_WORDS = ('positions', 'velocities', 'efforts')


# ---- compiled reading ---------------------------------------------------------------------------

def _aligned(offset, size):
    """Return ``offset`` rounded up to a multiple of ``size`` past the encapsulation header."""
    return offset + (-(offset - _ORIGIN)) % size


_align = njit(_aligned)


@njit
def _uint32(buf, offset):
    return (np.int64(buf[offset]) | np.int64(buf[offset + 1]) << 8
            | np.int64(buf[offset + 2]) << 16 | np.int64(buf[offset + 3]) << 24)


@njit
def _string(buf, offset):
    """
    Return ``(start, length, end)`` of the CDR string at ``offset`` (before its alignment).

    ``length`` leaves out the terminating NUL; ``start`` is -1 when the string runs past the
    end of ``buf``.
    """
    offset = _align(offset, 4)
    if offset + 4 > len(buf):
        return -1, 0, offset
    size = _uint32(buf, offset)
    start = offset + 4
    if size > len(buf) - start:
        return -1, 0, start
    end = start + size
    length = size - 1 if size > 0 and buf[end - 1] == 0 else size
    return start, length, end


@njit
def _joint_state_layout(buf, layout):
    """
    Fill ``layout`` (int64, ``_LAYOUT_SIZE``) with the stamp and where a JointState's fields are.

    ``buf``: the message (bytes or a uint8 array). Returns 0, ``_HEADER`` or ``_MALFORMED``.
    Every length and count is checked against the end of ``buf``; bytes after the last field
    are allowed (rmw's buffers may have some).
    """
    size = len(buf)
    if size < _ORIGIN + 12:
        return _MALFORMED
    if buf[0] != 0 or buf[1] != 1:
        return _HEADER
    sec = _uint32(buf, 4)
    if sec >= 1 << 31:          # int32
        sec -= 1 << 32
    layout[_STAMP] = sec * NS_PER_S + _uint32(buf, 8)      # a kernel: no join()
    start, length, offset = _string(buf, 12)
    if start < 0:
        return _MALFORMED
    layout[_FRAME], layout[_FRAME_LEN] = start, length
    offset = _align(offset, 4)
    if offset + 4 > size:
        return _MALFORMED
    count = _uint32(buf, offset)
    layout[_COUNT_NAMES] = count
    offset += 4
    layout[_NAMES_START] = offset
    if count > size - offset:          # each name takes at least its 4-byte length
        return _MALFORMED
    for _ in range(count):
        start, length, offset = _string(buf, offset)
        if start < 0:
            return _MALFORMED
    layout[_NAMES_END] = offset
    for f in range(3):
        offset = _align(offset, 4)
        if offset + 4 > size:
            return _MALFORMED
        count = _uint32(buf, offset)
        offset += 4
        if count > 0:
            offset = _align(offset, 8)
        if count > (size - offset) // 8:
            return _MALFORMED
        layout[_VALUES + 2 * f] = count
        layout[_VALUES + 2 * f + 1] = offset
        offset += 8 * count
    return 0


@njit
def _name_spans(buf, layout, spans):
    """Fill ``spans`` (m, 2) with the start and length of each name of a laid-out message."""
    offset = layout[_NAMES_START]
    for i in range(spans.shape[0]):
        start, length, offset = _string(buf, offset)
        spans[i, 0], spans[i, 1] = start, length


@njit
def _match(buf, layout, names, bounds, idx):
    """
    Write where each wanted name stands in the message to ``idx``; return 0 or ``_NAMES``.

    ``names`` holds the wanted names' UTF-8 bytes back to back, name j at
    ``names[bounds[j]:bounds[j + 1]]``; each must be in the message exactly once.
    """
    for j in range(idx.shape[0]):
        idx[j] = -1
    offset = layout[_NAMES_START]
    for i in range(layout[_COUNT_NAMES]):
        start, length, offset = _string(buf, offset)
        for j in range(idx.shape[0]):
            if bounds[j + 1] - bounds[j] != length:
                continue
            same = True
            for k in range(length):
                if buf[start + k] != names[bounds[j] + k]:
                    same = False
                    break
            if same:
                if idx[j] >= 0:
                    return _NAMES
                idx[j] = i
    for j in range(idx.shape[0]):
        if idx[j] < 0:
            return _NAMES
    return 0


@njit
def _read_joint_state(buf, names, bounds, cache, idx, layout, out, fields, required):
    """
    Read the wanted joints' values of the first ``fields`` fields of a JointState into ``out``.

    ``out`` (3, n) receives position, velocity and effort in the order of ``names`` (see
    :func:`_match`); the first ``required`` fields must have a value per name, the others one
    or none (a field without values is left as it was; ``layout`` has its count). Positions and
    velocities must be finite. ``cache`` keeps the bytes of the last message's names, whose
    ``idx`` is reused while the names stay the same (``layout[_CACHE_LEN]``, -1: none), and
    its last 8 bytes take each value on its way to float64 (``buf`` may be ``bytes``, which
    numba cannot view as float64). Returns 0 or a status; ``layout`` then holds the details.
    """
    value = cache[cache.shape[0] - 8:]
    as_float = value.view(np.float64)
    status = _joint_state_layout(buf, layout)
    if status != 0:
        return status
    start, end = layout[_NAMES_START], layout[_NAMES_END]
    length = end - start
    same = length == layout[_CACHE_LEN]
    if same:
        for k in range(length):
            if buf[start + k] != cache[k]:
                same = False
                break
    if not same:
        layout[_CACHE_LEN] = -1
        status = _match(buf, layout, names, bounds, idx)
        if status != 0:
            return status
        if length <= cache.shape[0] - 8:
            for k in range(length):
                cache[k] = buf[start + k]
            layout[_CACHE_LEN] = length
    m = layout[_COUNT_NAMES]
    for f in range(fields):
        count = layout[_VALUES + 2 * f]
        if count == 0 and f >= required:
            continue
        if count != m:
            layout[_DETAIL_FIELD], layout[_DETAIL_INDEX] = f, count
            return _COUNT
        offset = layout[_VALUES + 2 * f + 1]
        for j in range(idx.shape[0]):
            at = offset + 8 * idx[j]
            for k in range(8):
                value[k] = buf[at + k]
            x = as_float[0]
            if f < 2 and not np.isfinite(x):
                layout[_DETAIL_FIELD], layout[_DETAIL_INDEX] = f, idx[j]
                return _NON_FINITE
            out[f, j] = x
    return 0


def _not_bytes(data):
    return InputError(f'expected the bytes of a serialized message, got {type(data).__name__}')


def _buffer(data):
    """Return serialized message bytes as a uint8 array (no copy)."""
    try:
        return np.frombuffer(data, dtype=np.uint8)
    except TypeError:
        raise _not_bytes(data) from None


def _layout_error(status, what, size):
    if status == _HEADER:
        return InputError(f'{what}: not a little-endian plain CDR message (ROS 2 serialization)')
    return InputError(f'{what}: malformed message ({size} bytes): a length or count runs past '
                      'its end')


# ---- JointState ---------------------------------------------------------------------------------

#: Every field of a JointState: stamp [ns], frame_id, names (list of str) and the three value
#: arrays in message order (empty when the message has none).
JointStateFields = collections.namedtuple(
    'JointStateFields', 'stamp_ns frame_id name position velocity effort')

#: The values of a model's joints from a JointState, in model order: position (n,), velocity
#: and effort (n,) or None when the message has none; stamp [ns].
JointSample = collections.namedtuple('JointSample', 'stamp_ns position velocity effort')


def _text(buf, start, length, what):
    try:
        return bytes(buf[start:start + length]).decode('utf-8')
    except UnicodeDecodeError as exc:
        raise InputError(f'{what}: a string is not UTF-8 ({exc})') from None


def read_joint_state(data, what='joint_states'):
    """
    Return every field of a serialized ``sensor_msgs/JointState`` as :data:`JointStateFields`.

    ``data``: the message's CDR (bytes, as a raw subscription takes it). Names are decoded
    (UTF-8); values are float64 arrays (copies), nothing checked but the encoding. Raises
    ``InputError`` (naming ``what``) for a malformed message.
    """
    buf = _buffer(data)
    layout = np.zeros(_LAYOUT_SIZE, dtype=np.int64)
    status = _joint_state_layout(buf, layout)
    if status != 0:
        raise _layout_error(status, what, len(buf))
    spans = np.empty((layout[_COUNT_NAMES], 2), dtype=np.int64)
    _name_spans(buf, layout, spans)
    values = [np.frombuffer(buf, '<f8', layout[_VALUES + 2 * f], layout[_VALUES + 2 * f + 1])
              .copy() for f in range(3)]
    return JointStateFields(
        layout.item(_STAMP),
        _text(buf, layout[_FRAME], layout[_FRAME_LEN], what),
        [_text(buf, start, length, what) for start, length in spans], *values)


class JointStateReader:
    """
    Reads a model's joints out of serialized ``sensor_msgs/JointState`` in one compiled call.

    The rules: names may come in any order, names that are not joints of the model are ignored
    (their values too, not checked), a missing or repeated model joint, a value count that
    differs from the names' and a non-finite position or velocity of a model joint raise an
    ``InputError`` naming the problem and ``what``. The index map of the last name order is
    kept (a stream of messages with the same names compares their bytes, once). A message
    object is read through its serialization (``rclpy.serialization.serialize_message``). Not
    thread-safe: one reader per thread.
    """

    def __init__(self, model, what='joint_states'):
        self.model = model
        self.what = what
        encoded = [name.encode('utf-8') for name in model.joint_names]
        self._names = np.frombuffer(b''.join(encoded), dtype=np.uint8).copy()
        self._bounds = np.cumsum([0] + [len(e) for e in encoded]).astype(np.int64)
        self._cache = np.empty(_NAMES_CACHE + 8, dtype=np.uint8)
        self._idx = np.empty(model.dof, dtype=np.int64)
        self._layout = np.zeros(_LAYOUT_SIZE, dtype=np.int64)
        self._layout[_CACHE_LEN] = -1
        self._n = model.dof

    def _read(self, data, fields, required):
        if type(data) is not bytes:
            data = _buffer(data).tobytes()
        out = np.empty((3, self._n))
        layout = self._layout
        status = _read_joint_state(data, self._names, self._bounds, self._cache, self._idx,
                                   layout, out, fields, required)
        if status != 0:
            raise self._error(status, data)
        return layout.item(_STAMP), out

    def positions(self, data):
        """Return the stamp [ns] and the model joints' positions, shape (n,); see the class."""
        stamp, out = self._read(data, 1, 1)
        return stamp, out[0]

    def state(self, data):
        """Return ``(stamp [ns], positions (n,), velocities (n,))``; both must be there."""
        stamp, out = self._read(data, 2, 2)
        return stamp, out[0], out[1]

    def read(self, data):
        """
        Return the model joints' values as a :data:`JointSample` (model order).

        Positions must be there; velocities and efforts may be absent (None). Efforts are not
        checked for finiteness (drivers publish nan for an effort they do not measure).
        """
        stamp, out = self._read(data, 3, 1)
        layout = self._layout
        present = [layout[_VALUES + 2 * f] > 0 for f in (1, 2)]
        return JointSample(stamp, out[0], out[1] if present[0] else None,
                           out[2] if present[1] else None)

    def _error(self, status, data):
        layout, what = self._layout, self.what
        if status in (_HEADER, _MALFORMED):
            return _layout_error(status, what, len(data))
        names = read_joint_state(data, what).name
        if status == _NAMES:
            try:
                self.model.indices_in(names)      # the error that names the joints
            except InputError as exc:
                return InputError(f'{what}: {exc}')
            return InputError(f'{what}: joint names {names} do not match the model joints')
        field = int(layout[_DETAIL_FIELD])
        where = f'{what} {_FIELD_WORDS[field]}'
        if status == _COUNT:
            if field == 1 and layout[_DETAIL_INDEX] == 0:
                return InputError(f'{what}: no velocities (the message has positions only)')
            return InputError(f'{where}: expected {len(names)} values (one per name), got '
                              f'{int(layout[_DETAIL_INDEX])}')
        i = int(layout[_DETAIL_INDEX])
        value = float(np.frombuffer(data, '<f8', 1, layout[_VALUES + 2 * field + 1] + 8 * i)[0])
        return non_finite_error(where, names[i], value)


@njit
def _put_uint32(buf, offset, value):
    for k in range(4):
        buf[offset + k] = (value >> (8 * k)) & 0xff


@njit
def _write_values(buf, offset, values):
    """Write the float64 sequence ``values`` at ``offset`` (aligned here); return its end."""
    offset = _align(offset, 4)
    n = values.shape[0]
    _put_uint32(buf, offset, n)
    offset += 4
    if n > 0:
        start = _align(offset, 8)
        buf[offset:start] = 0
        buf[start:start + 8 * n].view(np.float64)[:] = values
        offset = start + 8 * n
    return offset


@njit
def _write_joint_state(buf, prefix, n, sec, nanosec, position, velocity, effort):
    """
    Write the stamp and the three value sequences after the ``prefix`` bytes; return the size.

    Returns -1 - f when field f has not ``n`` values (or none, but for the position).
    """
    if position.shape[0] != n:
        return -1
    if velocity.shape[0] not in (0, n):
        return -2
    if effort.shape[0] not in (0, n):
        return -3
    _put_uint32(buf, 4, sec)
    _put_uint32(buf, 8, nanosec)
    offset = _write_values(buf, prefix, position)
    offset = _write_values(buf, offset, velocity)
    return _write_values(buf, offset, effort)


def _cdr_string(text, offset):
    """Return the CDR of ``text`` to be written at ``offset`` (its alignment padding first)."""
    raw = text.encode('utf-8') + b'\x00'
    return bytes(_aligned(offset, 4) - offset) + _UINT32.pack(len(raw)) + raw


class JointStateWriter:
    """
    Writes serialized ``sensor_msgs/JointState`` messages with fixed joint names and frame.

    The names and ``frame_id`` are encoded once; each :meth:`write` fills in the stamp and the
    values (one compiled call) and returns the bytes for ``publisher.publish``. Not
    thread-safe: one writer per thread.
    """

    def __init__(self, names, frame_id=''):
        self.names = [str(name) for name in names]
        prefix = ENCAPSULATION + bytes(8) + _cdr_string(frame_id, 12)
        prefix += bytes(_aligned(len(prefix), 4) - len(prefix)) + _UINT32.pack(len(self.names))
        for name in self.names:
            prefix += _cdr_string(name, len(prefix))
        self._prefix = len(prefix)
        n = len(self.names)
        # up to 3 bytes of padding, then three sequences: count, 4 bytes of padding, values
        self._buf = np.zeros(len(prefix) + 3 + 3 * (8 + 8 * n), dtype=np.uint8)
        self._buf[:len(prefix)] = np.frombuffer(prefix, dtype=np.uint8)
        self._empty = np.empty(0)

    def write(self, stamp_ns, position, velocity=None, effort=None):
        """
        Return the CDR of a JointState at ``stamp_ns`` [ns] with these values (names' order).

        ``position`` (n,) and, if given, ``velocity`` and ``effort`` (n,); an omitted field is
        an empty sequence. Raises ``ShapeError`` for a field with another number of values.
        """
        sec, nanosec = split(stamp_ns)
        if not -1 << 31 <= sec < 1 << 31:
            raise InputError(f'stamp {stamp_ns} ns: outside the int32 seconds of a ROS Time')
        arrays = [self._empty if x is None else kernel_array(np.asarray(x, dtype=float))
                  for x in (position, velocity, effort)]
        for f, x in enumerate(arrays):
            if x.ndim != 1:
                raise self._shape_error(f, x)
        size = _write_joint_state(self._buf, self._prefix, len(self.names), sec, nanosec,
                                  *arrays)
        if size < 0:
            raise self._shape_error(-1 - size, arrays[-1 - size])
        return self._buf[:size].tobytes()

    def _shape_error(self, field, values):
        return ShapeError(f'{FIELDS[field]}: expected {len(self.names)} values (one per name)'
                          f'{"" if field == 0 else " or none"}, got shape {values.shape}')


# ---- Float64MultiArray --------------------------------------------------------------------------

def write_float64_array(values):
    """Return the CDR of a ``std_msgs/Float64MultiArray`` of ``values`` with an empty layout."""
    values = np.asarray(values, dtype='<f8').reshape(-1)
    # no dimensions, data_offset 0, the count, and 4 bytes of padding before any values
    head = ENCAPSULATION + struct.pack('<III', 0, 0, values.size)
    return head + bytes(4) + values.tobytes() if values.size else head


def read_float64_array(data, what='command'):
    """
    Return the ``data`` field of a serialized ``std_msgs/Float64MultiArray`` (a float64 copy).

    The layout (dimensions and data_offset) is read past and not interpreted. Raises
    ``InputError`` naming ``what`` for a malformed message.
    """
    try:
        if len(data) >= 2 and bytes(data[:2]) != ENCAPSULATION[:2]:
            raise _layout_error(_HEADER, what, len(data))
        (dims,) = _UINT32.unpack_from(data, _ORIGIN)
        offset = _ORIGIN + 4
        for _ in range(dims):
            offset = _aligned(offset, 4)
            (length,) = _UINT32.unpack_from(data, offset)
            offset = _aligned(offset + 4 + length, 4) + 8       # label, size, stride
        offset = _aligned(offset, 4) + 4                        # past data_offset
        (count,) = _UINT32.unpack_from(data, offset)
        offset += 4
        return np.frombuffer(data, '<f8', count, _aligned(offset, 8) if count else offset).copy()
    except InputError:
        raise
    except (struct.error, ValueError):
        raise _layout_error(_MALFORMED, what, len(data)) from None
    except TypeError:
        raise _not_bytes(data) from None
