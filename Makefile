# robot_dynamics on a machine without a ROS 2 distribution: ROS 2 comes from PyPI's ros-* wheels
# into a venv, the package itself is pip-installed (not editable) so that its data_files (ament
# index marker, package.xml, launch/, config/, urdf/) land in <venv>/share like a colcon install.
#
#   make setup   create/update the venv (idempotent; a no-op when nothing changed)
#   make test    the whole pytest suite (linters included)
#   make demo    robot-dynamics demo (the pick-and-place through the ROS 2 graph), output in demo/
#   make bench   bench/run.py
#   make screenshots  the README's pictures of the view (docs/*.png), from its browser tests
#   make clean   remove the venv
#
# Each takes ROS_DISTRO=kilted (the default, in .venv) or ROS_DISTRO=jazzy (in .venv-jazzy).

SHELL := /bin/bash

# The ROS 2 distribution whose wheels the venv is built from. Each distribution has a venv of its
# own, and everything built for it lives there (stamps, the interfaces' CMake build, set-up and ROS
# logs), so the two never mix and switching between them rebuilds nothing.
ROS_DISTRO ?= kilted
DISTROS := kilted jazzy
ifneq ($(words $(filter $(DISTROS),$(ROS_DISTRO))) $(words $(ROS_DISTRO)),1 1)
# (a sourced ROS 2 set-up script exports ROS_DISTRO too, hence "from the $(origin ...)")
$(error ROS_DISTRO=$(ROS_DISTRO) (from the $(origin ROS_DISTRO)) is not one of $(DISTROS): \
	run e.g. make test ROS_DISTRO=jazzy)
endif

VENV := $(CURDIR)/$(if $(filter kilted,$(ROS_DISTRO)),.venv,.venv-$(ROS_DISTRO))
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check

# ROS 2 wheels from PyPI, by package name. They are not in setup.py: with a ROS distribution the
# same packages come from rosdep (package.xml). rmw_fastrtps_cpp is needed by rclpy but not
# declared by it. The ament linters' own dependencies (flake8 and plugins, pydocstyle) are the
# 'lint' extra in setup.py.
ROS_PACKAGES := \
	rclpy \
	rmw-fastrtps-cpp \
	sensor-msgs \
	trajectory-msgs \
	std-msgs \
	std-srvs \
	geometry-msgs \
	visualization-msgs \
	diagnostic-msgs \
	rosgraph-msgs \
	action-msgs \
	ament-index-python \
	ament-flake8 \
	ament-pep257

# What building robot_dynamics_interfaces (ament_cmake + rosidl) needs beyond the message
# packages; the wheels do not declare these, and each missing one fails the configure step.
# rosidl's type supports load the CMake helpers of ament_cmake_ros: Kilted has them in
# ament_cmake_ros_core; Jazzy's ament_cmake_ros also loads the gmock, gtest and pytest helpers,
# and Jazzy's Python generator finds Python through python_cmake_module.
INTERFACE_BUILD_kilted := ament-cmake-ros-core
INTERFACE_BUILD_jazzy := ament-cmake-ros ament-cmake-gmock ament-cmake-gtest ament-cmake-pytest \
	python-cmake-module
INTERFACE_BUILD_PACKAGES := \
	rosidl-default-generators \
	rosidl-core-generators \
	ament-cmake \
	ament-cmake-include-directories \
	ament-package \
	$(INTERFACE_BUILD_$(ROS_DISTRO))

# Each package is asked for as ros-<distro>-<name>: a wheel with no content of its own that pins
# the plain ros-<name> wheel (the one with the files) to that distribution's version. The plain
# names alone resolve to the newest distribution on PyPI, and their own dependencies to whatever
# the pins allow, so this is what keeps a Jazzy venv all Jazzy.
ROS_WHEELS := $(addprefix ros-$(ROS_DISTRO)-,$(ROS_PACKAGES) $(INTERFACE_BUILD_PACKAGES)) catkin_pkg

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
STAMP_KERNELS := $(VENV)/.stamp-kernels
STAMP_INTERFACES := $(VENV)/.stamp-interfaces
# The interface packages: the project's own, and its stand-ins for upstream's that the controller
# speaks (MoveIt's and ros2_controllers' action types), built where no ROS 2 distribution provides
# them (stand_ins/: the same names, fields and constants, hence the same type hashes).
INTERFACES := robot_dynamics_interfaces stand_ins

# Everything that ends up in the installed package. Folders are listed too, so that deleting or
# renaming a file triggers a reinstall; __pycache__ is left out.
PKG_SOURCES := $(shell find robot_dynamics urdf config launch resource \
	-name __pycache__ -prune -o -print 2>/dev/null) setup.py setup.cfg package.xml
INTERFACE_SOURCES := $(shell find $(INTERFACES) -print)

.PHONY: setup test tree-kernels demo bench screenshots clean chromium

# The set-up's steps that need only the installed dependencies run at the same time: each numba
# compilation takes one core for about a minute, the interfaces' build two for less; one after
# the other they left a core idle for about a minute of a fresh set-up.
SETUP_STEPS := $(STAMP_KERNELS) $(STAMP_INTERFACES) chromium
setup:
	@$(MAKE) --no-print-directory -s -j3 $(SETUP_STEPS)

# A set-up step, quiet: one line saying what it does, the output (pip's and CMake's hundreds of
# lines, of use only when something fails) in $(SETUP_LOGS)/<log>.log, and the tail of that log
# if the step fails. $(call step,what it does,log,shell command); no commas in the arguments.
SETUP_LOGS := $(VENV)/log/setup
define step
@echo 'setup ($(ROS_DISTRO)): $(1)'
@mkdir -p $(SETUP_LOGS)
@{ $(3); } > $(SETUP_LOGS)/$(2).log 2>&1 || { tail -n 40 $(SETUP_LOGS)/$(2).log; \
	echo 'setup ($(ROS_DISTRO)): $(1) failed; the whole log: $(SETUP_LOGS)/$(2).log'; exit 1; }
endef

$(PY):
	$(call step,creating $(notdir $(VENV)),venv,python3 -m venv $(VENV))

# The project's extras installed into the venv: the tests' and the view's (a variable, as the
# comma cannot be written inside the step's arguments).
EXTRAS := test,view

# Third-party wheels: ROS wheels plus the project's dependencies and its extras, in one
# resolver run (this installs the project once too; the rule below keeps it current). setuptools
# and wheel in the venv allow --no-build-isolation (no download of build tools per build). colcon
# and the ament linters (which walk the working directory) skip folders holding the *_IGNORE files.
$(STAMP_DEPS): Makefile setup.py package.xml | $(PY)
	@touch $(VENV)/COLCON_IGNORE $(VENV)/AMENT_IGNORE
	$(call step,installing the ROS 2 $(ROS_DISTRO) wheels and Python packages,deps,\
		$(PIP) install 'setuptools>=64' wheel \
		&& $(PIP) install --no-build-isolation $(ROS_WHEELS) '.[$(EXTRAS)]')
	@touch $@

# The project alone: no dependency resolution, no build isolation (~3 s), then numba's cache of
# its kernels filled for the installed copy (a reinstall makes the cache stale), from outside the
# repository so that the installed package is the one imported. pip builds in-tree, and
# files left in build/lib from an earlier build (a deleted module) would go into the wheel: clear
# it before, and leave no build/ or egg-info behind (the egg-info would shadow the installed
# metadata for anything run from the repository root). build/ is the one folder the venvs share:
# a lock on setup.py keeps a set-up for the other distribution out of it meanwhile.
$(STAMP_PKG): $(STAMP_DEPS) $(PKG_SOURCES)
	$(call step,installing robot_dynamics,package,flock setup.py $(SHELL) -c \
		'rm -rf build/lib build/bdist.* robot_dynamics.egg-info \
		&& $(PIP) install --no-deps --force-reinstall --no-build-isolation . \
		&& rm -rf build/lib build/bdist.* robot_dynamics.egg-info \
		&& { rmdir build 2>/dev/null || true; }')
	@touch $@

$(STAMP_KERNELS): $(STAMP_PKG)
	$(call step,compiling the numba kernels of the library (a minute after an install),precompile,\
		cd $(VENV) && $(PY) -m robot_dynamics.precompile)
	@touch $@

# Chromium from the system's packages, for the view's browser tests (Playwright drives it; its
# own browser download needs the internet). Nothing happens where it is installed; apt-get runs as
# root, else through sudo.
CHROMIUM := $(firstword $(shell command -v chromium chromium-browser 2>/dev/null))
chromium:
ifeq ($(CHROMIUM),)
	$(call step,installing Chromium (apt-get; for the browser tests of the view),chromium,\
		$(if $(filter 0,$(shell id -u)),,sudo -n) apt-get update \
		&& $(if $(filter 0,$(shell id -u)),,sudo -n) apt-get install -y chromium)
endif

# The interface packages, built with CMake against the wheels and installed into the venv prefix
# (so nothing is needed at run time): the stand-ins not provided by another prefix of the ament
# index (a sourced distribution), then the project's own (tools/build_interfaces.py). The wheels'
# CMake files carry their build host's paths: tools/fix_wheel_cmake_paths.py says why and
# rewrites them (idempotent, so every build runs it, also after new ros-* wheels came in through
# STAMP_DEPS).
$(STAMP_INTERFACES): $(STAMP_DEPS) $(INTERFACE_SOURCES) tools/fix_wheel_cmake_paths.py \
		tools/build_interfaces.py
	$(call step,building the interfaces (CMake),interfaces,\
		$(PY) tools/fix_wheel_cmake_paths.py $(VENV) \
		&& $(PY) tools/build_interfaces.py $(VENV) $(ROS_DISTRO))
	@touch $@

# Not -q: pytest's header names the ROS 2 distribution and the rclpy, rcl and RMW versions the run
# uses (test/conftest.py), which -q leaves out. The slowest tests are listed at the end: the
# suite's time is a budget (20 minutes per distribution on a 2-core machine). Two workers, a test
# file each at a time (its module's graph stays in one process; every ROS module holds a domain
# of its own): half of the ROS tests' time is waiting on the wall clock, and the tests are to pass
# beside another suite anyway. TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 2
# The tests import the library from the work tree (pytest puts the checkout first on sys.path),
# whose numba kernels have a disk cache of their own: compiled once, with the set-up's steps and
# before the workers start, rather than by each worker at its first use, in timed tests (seconds
# once cached). It imports the checkout, not the installed copy, hence after the installation
# (pip builds in the checkout).
test:
	@$(MAKE) --no-print-directory -s -j3 $(SETUP_STEPS) tree-kernels
	$(PY) -m pytest test -n $(TEST_WORKERS) --dist loadfile --durations=25

tree-kernels: $(STAMP_PKG)
	$(call step,compiling the numba kernels of the work tree,precompile-tree,\
		$(PY) -m robot_dynamics.precompile)

# The main job: a pick-and-place through the ROS 2 graph; report, recording and plots in demo/.
demo: setup
	$(VENV)/bin/robot-dynamics demo --robot scara --report demo/report.json --out demo

bench: setup
	$(PY) bench/run.py

# The view's browser tests, writing the README's screenshots on their way (a plain test run
# writes none, so that it leaves the work tree as it was).
screenshots: setup
	ROBOT_DYNAMICS_SCREENSHOTS=$(CURDIR)/docs $(PY) -m pytest test/ros/test_view.py -q

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
