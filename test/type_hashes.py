"""
Type hashes (RIHS01, REP 2011) computed from interface definitions, without building them.

The same computation rosidl runs at build time, from the .msg/.action files themselves: the
definitions are converted to IDL (rosidl_adapter), and the type descriptions of the packages they
refer to come from the installed ones (<prefix>/share/<package>/*/*.json). A test compares these
with the hashes the running nodes advertise and with upstream's.
"""

import contextlib
from importlib import metadata
import io
import json
from pathlib import Path
import re
import tempfile

from rosidl_adapter.action import convert_action_to_idl
from rosidl_adapter.msg import convert_msg_to_idl
from rosidl_generator_type_description import generate_type_hash


#: Upstream's hashes of the types the controller advertises, by distribution: computed with
#: :func:`definition_hashes` from upstream's own definitions, control_msgs 6.8.0 (commit 13dacdd,
#: its master branch, which Kilted is released from) and 5.8.0 (f901df2, its jazzy branch),
#: cartesian_control_msgs 0.1.0 for ROS 2 (6fc8eff, its ros2-main branch). Every other type the
#: stand-ins define hashed the same as upstream's too.
CARTESIAN = {
    'cartesian_control_msgs/action/FollowCartesianTrajectory':
        'RIHS01_29e6384544305aa854526aec98a11901c858d17a48c9a0e4b89fb552b2c9d993',
    'cartesian_control_msgs/action/FollowCartesianTrajectory_FeedbackMessage':
        'RIHS01_6eef83b0340d0a1374930885dc8157c470869da90e0c438893cece312e6404af',
}
STATE = {
    'control_msgs/msg/JointTrajectoryControllerState':
        'RIHS01_51d8dd89cc624cbe9daaeeb4d80d6de9b86168ffdc3be41fefc0953e3c26e480',
}
UPSTREAM = {
    'kilted': {
        'control_msgs/action/FollowJointTrajectory':
            'RIHS01_ff29901b2693f5deb847e96084a1c2cdb26e70b7c847be21859b70a55fb29cf0',
        'control_msgs/action/FollowJointTrajectory_FeedbackMessage':
            'RIHS01_95618cc73912d99b9acaa17d2da5e832cb0bfdeede7534fa8ec600feca2a6c4b',
        **STATE, **CARTESIAN},
    'jazzy': {
        'control_msgs/action/FollowJointTrajectory':
            'RIHS01_738ebcb7a2d7cfa42f9f1001cc99ce3a4383d1cfe508015d9be8485e4b1c66f6',
        'control_msgs/action/FollowJointTrajectory_FeedbackMessage':
            'RIHS01_80398fcb9674a79081a9906e2ccf0c804dd7cb15e22e362e606ee87186beab71',
        **STATE, **CARTESIAN},
}


#: The project's stand-ins for upstream's interface packages
STAND_INS = Path(__file__).resolve().parents[1] / 'stand_ins'


def installed_distribution():
    """Return the ROS 2 distribution of the installed wheels (ros-<distro>-rclpy), or None."""
    distros = [match.group(1) for match in (
        re.fullmatch(r'ros-([a-z]+)-rclpy', dist.metadata['Name'] or '')
        for dist in metadata.distributions()) if match]
    return distros[0] if len(distros) == 1 else None


def stand_in_hashes(distro, share):
    """Return the hashes of every type the stand-ins define, as built for ``distro``."""
    hashes = {}
    for package in ('control_msgs', 'cartesian_control_msgs'):
        overlay = STAND_INS / package / distro
        hashes.update(definition_hashes(STAND_INS / package, package, share,
                                        overlay if overlay.is_dir() else None))
    return hashes


def definition_hashes(package_dir, package, share, overlay=None):
    """
    Return ``{'pkg/msg/Name': 'RIHS01_...'}`` for the .msg and .action files under package_dir.

    overlay: a folder whose files replace package_dir's of the same relative path (a
    distribution's differing definitions). share: the folder holding the installed packages
    that the definitions refer to.
    """
    package_dir = Path(package_dir).resolve()
    files = {p.relative_to(package_dir): p for p in package_dir.glob('*/*.msg')}
    files.update({p.relative_to(package_dir): p for p in package_dir.glob('*/*.action')})
    if overlay is not None:
        overlay = Path(overlay).resolve()
        files.update({p.relative_to(overlay): p for p in overlay.glob('*/*.*')})
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        idl_tuples = []
        for relative, path in sorted(files.items()):
            convert = convert_action_to_idl if path.suffix == '.action' else convert_msg_to_idl
            with contextlib.redirect_stdout(io.StringIO()):     # a line per file
                convert(path.parent.parent, package, Path(relative),
                        tmp / 'idl' / relative.parent)
            idl_tuples.append(f"{tmp / 'idl'}:{relative.with_suffix('.idl')}")
        out = tmp / 'out'
        includes = [f'{p.name}:{p}' for p in Path(share).iterdir() if p.is_dir()]
        arguments = tmp / 'arguments.json'
        arguments.write_text(json.dumps({
            'package_name': package, 'output_dir': str(out),
            'idl_tuples': idl_tuples, 'include_paths': includes}))
        generate_type_hash(str(arguments))
        hashes = {}
        for description in out.glob('*/*.json'):
            for entry in json.loads(description.read_text())['type_hashes']:
                hashes[entry['type_name']] = entry['hash_string']
    return hashes
