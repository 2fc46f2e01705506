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

"""A process's own sockets, read from /proc: which addresses a ROS process binds."""

import ipaddress
import os
from pathlib import Path

PROTOCOLS = ('udp', 'udp6', 'tcp', 'tcp6')


def _address(hex_address):
    """Return the address of a /proc/net/* entry (hex, each 32-bit word in host order)."""
    raw = bytes.fromhex(hex_address)
    words = b''.join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    return ipaddress.ip_address(words)


def sockets(pid):
    """Return ``[(protocol, local address, port)]`` of the sockets ``pid`` holds open."""
    inodes = set()
    for fd in Path(f'/proc/{pid}/fd').iterdir():
        try:
            target = os.readlink(fd)
        except OSError:    # closed meanwhile
            continue
        if target.startswith('socket:['):
            inodes.add(target[len('socket:['):-1])
    found = []
    for protocol in PROTOCOLS:
        lines = Path(f'/proc/{pid}/net/{protocol}').read_text().splitlines()[1:]
        for fields in map(str.split, lines):
            if fields[9] in inodes:
                address, port = fields[1].split(':')
                found.append((protocol, _address(address), int(port, 16)))
    return found


def off_loopback(pids):
    """
    Return ``[(pid, protocol, address, port)]``: the sockets of ``pids`` not on loopback.

    A socket bound to a multicast group receives that group only (on the interfaces that
    joined it: Fast DDS joins the one its interface list allows); any other address outside
    127.0.0.0/8 and ::1, the wildcard above all, reaches other hosts.
    """
    return [(pid, protocol, str(address), port) for pid in pids
            for protocol, address, port in sockets(pid)
            if not (address.is_loopback or address.is_multicast)]


def children(pid):
    """Return the pids whose parent is ``pid``."""
    found = []
    for stat in Path('/proc').glob('[0-9]*/stat'):
        try:
            fields = stat.read_text().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found
