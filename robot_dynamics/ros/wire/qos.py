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
The QoS profiles of the graph's topics: one place for how each kind of topic is delivered.

Who uses which: ``/robot_description`` (:data:`DESCRIPTION_QOS`); what the loop reads every
cycle (:data:`NEWEST_ONLY`); goals on a topic (:data:`NEWEST_GOAL`); what is recorded beside
the loop (:data:`RECORDED`); service and action clients (:data:`SERVICE_CLIENT`); the loop on
simulated time, lockstep (:data:`LOCKSTEP_WRITER`, :data:`LOCKSTEP_ALL`,
:data:`LOCKSTEP_NEWEST`).
"""

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

#: QoS of ``/robot_description``: late subscribers receive the last description.
DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)

#: QoS of what the loop reads every cycle (joint states at the controller, commands at the
#: simulator): the newest sample only. A deeper queue would hand a node that fell behind a backlog
#: of old samples, each a period late, instead of letting it skip to the newest (the skipped
#: cycles are counted as missed). Best effort matches reliable publishers too.
NEWEST_ONLY = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                         reliability=ReliabilityPolicy.BEST_EFFORT)


#: Goals on a topic (``~/joint_trajectory``): a newer goal preempts an older one at once, so a
#: node busy with a burst (a flood of them) skips to the newest and the middleware drops the
#: older ones it had not read, rather than queueing work that the next message makes moot.
#: Reliable: a single goal is not lost on the wire.
NEWEST_GOAL = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                         reliability=ReliabilityPolicy.RELIABLE)

#: Depth of the writers' history of what is recorded: a reliable writer resends from it to a
#: reader that fell behind (a recorder starved on a busy host) and drops the oldest when full,
#: so this many samples is how far behind a reader may fall without a loss.
RECORDED_DEPTH = 1000
#: QoS of what the loop records besides its own topics (the controller's state, the
#: parameter estimate): reliable, deep (RECORDED_DEPTH).
RECORDED = QoSProfile(depth=RECORDED_DEPTH, reliability=ReliabilityPolicy.RELIABLE)
#: Depth of the lockstep writers' history: 10 s of a 1 kHz simulation, how far behind an
#: observer may fall without a loss.
LOCKSTEP_DEPTH = 10000
#: QoS of a service client (IK, reset, an action's goal, result and cancel): ROS 2's default
#: but RECORDED_DEPTH deep. With Fast DDS a reply reaches the reply queue of every client of the
#: service, and ROS 2's default depth of 10 let the replies to other clients push a starved
#: client's own out: 5-17 of 4 x 1,000 IK calls lost for good on a loaded host, none at this
#: depth (``test_faults``).
SERVICE_CLIENT = QoSProfile(depth=RECORDED_DEPTH, reliability=ReliabilityPolicy.RELIABLE)
#: QoS of the loop on simulated time (lockstep): reliable, and the newest samples kept for a node
#: that matches late (transient local), so that neither the simulator's first state nor the
#: controller's answer to it is lost to discovery, however the processes start. A
#: transient-local writer reaches volatile readers too (recorders, tools); a transient-local
#: reader only transient-local writers. Deep (LOCKSTEP_DEPTH): a lockstep simulation waits for
#: the controller only, and runs on however far an observer (a recorder, a test's probe) falls
#: behind; with RECORDED_DEPTH (1 s at 1 kHz) a probe starved on a busy host lost 476 of 3,001
#: states of a simulation running faster than real time.
LOCKSTEP_WRITER = QoSProfile(depth=LOCKSTEP_DEPTH, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
#: The controller's joint states on simulated time where rclpy does not name each message's
#: publisher (Jazzy): the newest only (the deep reader below serves the one-source rule).
LOCKSTEP_NEWEST = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
#: The lockstep loop's readers (the simulator's commands, the controller's joint states): every
#: sample, in order, so that what someone else publishes does not take the place of the loop's
#: own. The simulator takes each command in turn; the controller each source's newest state of
#: those that came (a controller that starts late receives the simulator's recent states and
#: cycles on the newest). Deep (RECORDED_DEPTH): what comes while the node does not run stays in
#: its history until it takes it, and a burst of someone else's does not push the loop's out.
LOCKSTEP_ALL = QoSProfile(depth=RECORDED_DEPTH, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL)
