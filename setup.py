from glob import glob
import os

from setuptools import find_packages
from setuptools import setup

package_name = 'robot_dynamics'

# Files installed under share/robot_dynamics/<folder>, by patterns. glob() keeps the list current
# as files are added, and an empty or missing folder simply installs nothing.
SHARE_GLOBS = {
    'launch': ('*.launch.py',),
    'config': ('*.yaml',),
    'config/hardware': ('*.yaml', '*.xacro'),
    'config/moveit': ('*.yaml',),
    'urdf': ('*.urdf',),
    'rviz': ('*.rviz',),
    'foxglove': ('*.json',),
}

data_files = [
    ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
    ('share/' + package_name, ['package.xml']),
]
for folder, patterns in SHARE_GLOBS.items():
    files = sorted(f for pattern in patterns for f in glob(os.path.join(folder, pattern)))
    if files:
        data_files.append((os.path.join('share', package_name, folder), files))

# The ament linters' own dependencies: the ros-ament-flake8 and ros-ament-pep257 wheels do not
# declare them (a ROS distribution installs them through rosdep instead).
LINT_REQUIRES = [
    'flake8>=7',
    'flake8-blind-except',
    'flake8-builtins',
    'flake8-class-newline',
    'flake8-comprehensions',
    'flake8-deprecated',
    'flake8-docstrings',
    'flake8-import-order',
    'flake8-quotes',
    'pydocstyle>=6.3',
]

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*', 'bench', 'bench.*']),
    package_data={'robot_dynamics.ros.wire': ['fastdds/*.xml']},
    data_files=data_files,
    install_requires=[
        'numpy',
        'scipy',
        'numba',
        'pyyaml',
        'urdfdom-py',
        # closed-form equations and generated code (robot_dynamics.symbolic, .generated)
        'sympy',
        # ROS 2 recordings (MCAP): the recorder node writes them, robot-dynamics plot reads them
        'mcap',
        'mcap-ros2-support',
    ],
    extras_require={
        'test': ['pytest', 'pytest-xdist', 'pin', 'roboticstoolbox-python', 'matplotlib',
                 'example-robot-data', 'pytracik', 'colcon-common-extensions', 'viser>=1.1',
                 # the view's tests drive the system's Chromium (make setup installs it)
                 'playwright'] + LINT_REQUIRES,
        'lint': LINT_REQUIRES,
        'plots': ['matplotlib'],
        # robot-dynamics view: the 3D view in the browser (viser serves its client offline)
        'view': ['viser>=1.1'],
    },
    zip_safe=True,
    python_requires='>=3.10',
    maintainer='robot_dynamics developers',
    maintainer_email='robot_dynamics@example.com',
    description='Kinematics and dynamics of serial robot arms, with ROS 2 nodes.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'robot-dynamics = robot_dynamics.cli:main',
            'model_node = robot_dynamics.ros.nodes.model_node:main',
            'kinematics_node = robot_dynamics.ros.nodes.kinematics_node:main',
            'simulator_node = robot_dynamics.ros.nodes.simulator_node:main',
            'controller_node = robot_dynamics.ros.nodes.controller_node:main',
            'recorder_node = robot_dynamics.ros.tools.recorder:main',
        ],
    },
)
