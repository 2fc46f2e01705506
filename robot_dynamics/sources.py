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
One source of a stream: the rule the controller (joint states) and the simulator (commands) share.

Each message of a stream comes with its ``source``, an opaque label of who sent it (a ROS node
passes the publisher's GID), compared for equality only. An :class:`Arbiter` follows one source:
the one it was given (pinned), else the first that sends a usable message. Two publishers of one
stream are a fault to fix, not a choice to make:

- a message from another source is ignored and counted (:attr:`Arbiter.ignored`); the first one
  of each other source is reported at once (``SECOND_SOURCE``, naming both);
- another source is taken only once the followed one has been **silent** for ``timeout`` [s]
  (a publisher that died; a loaded host holds one back for a fraction of that) **and** the
  caller is **idle** (nothing moves and nothing is commanded: the caller knows what that means
  for it). A source that would be taken but for a moving arm is refused (``SOURCE_REFUSED``,
  once per source); taking one is ``SOURCE_CHANGED`` (:attr:`Arbiter.changes`), which the
  nodes report as an error;
- a pinned source is never replaced; a ``source`` of None (no identity) counts as the followed
  one.

The caller measures the silence on its own clock and passes it in: the arbiter holds no clock.
"""

from .errors import InputError
from .events import Event, Kind

#: Default silence [s] of a followed source after which another may be taken: far beyond a
#: loaded host's hold-ups (tens of ms) and a controller's watchdog (its safe mode comes first).
DEFAULT_SOURCE_TIMEOUT = 2.0


class Arbiter:
    """
    The followed source of one stream (see the module docstring).

    Parameters
    ----------
    timeout : float
        Silence [s] of the followed source after which another may be taken.
    what : str
        The stream, in words ('joint states', 'commands'), for the events.
    source : object, optional
        The one source to follow (pinned); None: the first that sends.

    """

    def __init__(self, timeout, *, what, source=None):
        if not timeout > 0.0:      # NaN too; inf: never another source
            raise InputError(f'source timeout: expected a positive number of seconds, got '
                             f'{timeout!r}')
        self.timeout = float(timeout)
        self.what = what
        self.followed = source
        self.pinned = source is not None
        #: messages from the sources not followed
        self.ignored = 0
        #: sources taken after the first
        self.changes = 0
        self._reported = set()      # (kind, source) reported already

    def offer(self, source, silence, *, idle=None):
        """
        Say whether a usable message from ``source`` may be used: ``(follow, events)``.

        ``silence`` [s] is how long the followed source has been silent; ``idle()`` says whether
        a new source could take over now (asked only then: the followed source's messages, one
        per control cycle, cost no more; None: always). A taken new source is followed from then
        on.
        """
        if source is None or source == self.followed:
            return True, []
        if self.followed is None:
            self.followed = source
            return True, []
        followed = self.followed
        if self.pinned or silence < self.timeout:
            return self._ignore(source, Kind.SECOND_SOURCE, (
                f'{self.what} from a second source, {source}, beside {followed}, which is '
                f'followed: ignoring them (stop the other publisher)'))
        if idle is not None and not idle():
            return self._ignore(source, Kind.SOURCE_REFUSED, (
                f'{self.what} from {source}, while {followed} has been silent for '
                f'{silence:.3g} s: not taken while the arm moves or is commanded'))
        self.followed = source
        self.changes += 1
        self._reported = {(kind, other) for kind, other in self._reported if other != source}
        return True, [Event(Kind.SOURCE_CHANGED, (
            f'{self.what} now come from {source}: {followed} was silent for {silence:.3g} s '
            f'(at least {self.timeout:g} s)'), (followed, source))]

    def _ignore(self, source, kind, message):
        self.ignored += 1
        if (kind, source) in self._reported:
            return False, []
        self._reported.add((kind, source))
        return False, [Event(kind, message, (self.followed, source))]


__all__ = ['Arbiter', 'DEFAULT_SOURCE_TIMEOUT']
