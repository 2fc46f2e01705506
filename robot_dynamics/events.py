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
What the loop's parts report, and how a goal ended.

One :class:`Event` type for the followers, the controller, the simulator and the source arbiter;
:class:`Outcome` for a goal's end.

The library decides and returns events; the ROS nodes only log them, put them on /diagnostics
and end action goals with them.
"""

import enum
from typing import NamedTuple, Optional


class Outcome(enum.Enum):
    """How a goal ended."""

    SUCCEEDED = 'succeeded'
    INVALID = 'invalid'
    OLD_START_TIME = 'old_start_time'
    PATH_TOLERANCE_VIOLATED = 'path_tolerance_violated'
    GOAL_TOLERANCE_VIOLATED = 'goal_tolerance_violated'
    PREEMPTED = 'preempted'
    CANCELED = 'canceled'
    STOPPED = 'stopped'


class Kind(enum.Enum):
    """What an :class:`Event` reports."""

    # goals (the followers)
    GOAL_ACCEPTED = 'goal accepted'
    GOAL_ENDED = 'goal ended'
    # the controller
    HOLDING = 'holding'
    SAFE_MODE = 'safe mode'
    FAULT = 'fault'
    STATE_REJECTED = 'state rejected'
    STALE_STATES = 'stale states'
    STATES_JUMPED = 'states jumped'
    NEAR_SINGULARITY = 'near singularity'
    # a stream's sources (robot_dynamics.sources): the controller's states, the simulator's
    # commands
    SECOND_SOURCE = 'second source'
    SOURCE_REFUSED = 'source refused'
    SOURCE_CHANGED = 'source changed'
    # the simulator
    STALL = 'stall'
    COMMAND_REJECTED = 'command rejected'
    COMMANDS_TIMED_OUT = 'commands timed out'
    COMMANDS_BACK = 'commands back'
    UNANSWERED = 'unanswered state'
    FAILED = 'simulation failed'


class Event(NamedTuple):
    """
    Something to report: a goal's news, a change of mode, a fault, an unusable input.

    ``message`` says it in words, with the reason. ``tag`` is the goal's handle for goal events
    and the pair ``(followed, other)`` for the source events; ``outcome`` is set for
    ``GOAL_ENDED`` only.
    """

    kind: Kind
    message: str
    tag: object = None
    outcome: Optional[Outcome] = None

    @classmethod
    def goal_ended(cls, tag, outcome, message):
        """Return the event of the goal ``tag`` that ended with ``outcome``."""
        return cls(Kind.GOAL_ENDED, message, tag, outcome)


__all__ = ['Event', 'Kind', 'Outcome']
