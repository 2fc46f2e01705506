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
Who sent a message: its publisher's GID, and the node that owns that publisher.

The controller (joint states) and the simulator (commands) each follow one source of a stream
(:mod:`robot_dynamics.sources`), labelled by the publisher's GID in hex. The message info and
the graph pad a GID to different lengths (Jazzy's graph to 24 bytes; the middleware's GID is
:data:`GID_BYTES` long), so both are cut to that length here, in one place.
"""

#: Bytes of a GID that name a publisher (a DDS GUID: participant prefix and entity id).
GID_BYTES = 16


def publisher_gid(info):
    """
    Return the publisher's GID (hex) in a message info, or None where there is none.

    ``info['publisher_gid']`` is ``{'implementation_identifier', 'data'}`` or the bytes; without
    it (no :data:`~robot_dynamics.ros.wire.compat.PUBLISHER_GID`) every message counts as from
    one source.
    """
    gid = info.get('publisher_gid') if info else None
    if isinstance(gid, dict):
        gid = gid.get('data')
    return bytes(gid)[:GID_BYTES].hex() if gid else None


def publisher_node(node, topic, gid):
    """
    Return ``'node /namespace/name'`` that owns the publisher ``gid`` (hex) of ``topic``.

    None while the graph does not know it (a first message can come before discovery names its
    node), or once it is gone.
    """
    for endpoint in node.get_publishers_info_by_topic(topic):
        if gid is not None and bytes(endpoint.endpoint_gid)[:GID_BYTES].hex() == gid \
                and not endpoint.node_name.startswith('_NODE_NAME_UNKNOWN'):
            return f'node {endpoint.node_namespace.rstrip("/")}/{endpoint.node_name}'
    return None
