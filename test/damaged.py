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
Damaged copies of a recording, as storage, a copy cut short or a bad transfer leaves them.

Shared by the ``plot`` and ``identify`` tests: each copy must give either the messages before
the damage with the damage named, or one line and exit status 2, never a traceback, and never
a silent wrong answer (a copy read without a word about damage reads as the original).
"""

import io

from mcap.reader import make_reader
from mcap.writer import Writer
import numpy as np

#: Where the copies are cut, as shares of the file's length.
CUTS = (0.01, 0.25, 0.6, 0.9, 0.999)
#: Single bits flipped at these many offsets spread over the whole file (magic to footer).
FLIPS = 12
#: Blocks of random bytes written over the file at these shares of its length, and their size.
GARBAGE, GARBAGE_BYTES = (0.2, 0.5, 0.8), 256
#: Words by which a reader names damage (recordings.read's ``problem``, or its error).
DAMAGE_WORDS = ('ends early', 'damaged', 'fails its CRC', 'not an MCAP file', 'points the summary')


def rechunked(data, chunk_size):
    """
    Return the MCAP file ``data`` written again in chunks of ``chunk_size`` bytes.

    With every CRC the format has (chunks, data section, summary), as the recorder writes them;
    small chunks so that damage to one loses a part of the file, not all of it.
    """
    reader = make_reader(io.BytesIO(data))
    out = io.BytesIO()
    writer = Writer(out, chunk_size=chunk_size, enable_data_crcs=True)
    header = reader.get_header()
    writer.start(profile=header.profile, library=header.library)
    schemas, channels = {}, {}
    for schema, channel, message in reader.iter_messages(log_time_order=False):
        if schema.id not in schemas:
            schemas[schema.id] = writer.register_schema(schema.name, schema.encoding,
                                                        schema.data)
        if channel.id not in channels:
            channels[channel.id] = writer.register_channel(
                channel.topic, channel.message_encoding, schemas[schema.id], channel.metadata)
        writer.add_message(channels[channel.id], message.log_time, message.data,
                           message.publish_time, message.sequence)
    writer.finish()
    return out.getvalue()


def damaged_copies(data, seed=30):
    """Return ``{name: bytes}``: ``data`` cut short, with a bit flipped, with garbage blocks."""
    n = len(data)
    rng = np.random.default_rng(seed)
    copies = {f'cut_at_{share:g}': data[:int(n * share)] for share in CUTS}
    for k, offset in enumerate(np.linspace(0, n - 1, FLIPS).astype(int)):
        flipped = bytearray(data)
        flipped[offset] ^= 1 << (k % 8)
        copies[f'bit_{k % 8}_flipped_at_{offset}'] = bytes(flipped)
    for share in GARBAGE:
        start = int(n * share)
        garbled = bytearray(data)
        garbled[start:start + GARBAGE_BYTES] = rng.bytes(GARBAGE_BYTES)
        copies[f'garbage_at_{start}'] = bytes(garbled)
    return copies


def names_damage(text):
    """Return whether ``text`` names damage to a recording."""
    return any(words in text for words in DAMAGE_WORDS)
