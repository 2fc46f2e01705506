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
``robot-dynamics view RECORDING.mcap``: a recording replayed in the browser, no ROS needed.

:class:`Replay` holds what a recording shows over time (the arm, the reference, the controller's
mode and tracking error), read with :mod:`robot_dynamics.recordings` (a torn recording: what
was written before the tear); :func:`run` serves it in an
:class:`~robot_dynamics.viewer.ArmView` with play, pause, speed and a timeline (:class:`Playback`,
the clock on explicit time).
"""

import math
import signal
import sys
import threading
import time

import numpy as np

from . import recorded_motion, recordings
from .errors import InputError
from .viewer import ArmView

#: Replay speeds offered (x real time).
SPEEDS = ('0.1', '0.25', '0.5', '1', '2', '5')
#: The replay's drawing rate [Hz].
RATE_HZ = 30.0


class Replay:
    """
    A recording's configurations over time: :meth:`at` gives them at ``t`` [s from the start].

    ``t`` (K,), ``q`` (K, n) and ``q_ref`` (K, n) or None, in the order of the recorded
    description's model (``model``); ``mode`` (K,) the controller's mode, or None.
    """

    def __init__(self, path, topics):
        # the controller's states carry the arm and the reference: the 1 kHz joint states are
        # read only when they are missing
        wanted = [topics.controller_state, topics.trajectory_controller_state,
                  topics.robot_description, topics.joint_trajectory]
        recording = recordings.read(path, wanted)
        if recordings.controller_states(recording, topics) is None:
            recording = recordings.read(path, wanted + [topics.joint_states])
        self.problem = recording.problem
        self.model, note = recordings.robot_model(recording, topics)
        if self.model is None:
            raise InputError(f'cannot replay {path}: {note}')
        self.urdf = recordings.robot_description(recording, topics)
        track, note = recorded_motion.tracking(recording, topics, self.model)
        if track is None:
            raise InputError(f'cannot replay {path}: {note}')
        order = [list(track.names).index(n) if n in track.names else None
                 for n in self.model.joint_names]
        if None in order:
            missing = [n for n, i in zip(self.model.joint_names, order) if i is None]
            raise InputError(f'cannot replay {path}: joints {missing} of the robot description '
                             'are not recorded')
        self.t, self.q = track.t, track.q[:, order]
        self.q_ref = None if track.q_ref is None else track.q_ref[:, order]
        state = recordings.controller_states(recording, topics)
        self.mode = None
        if state is not None and len(state) == len(self.t):
            self.mode = [m.mode for m in state.messages]

    @property
    def duration(self):
        """Length of the recording [s]."""
        return float(self.t[-1])

    def index(self, t):
        """Return the index of the newest sample at or before ``t`` [s] (the first before it)."""
        return max(int(np.searchsorted(self.t, t, side='right')) - 1, 0)

    def at(self, t):
        """Return ``(q, q_ref or None)`` at ``t`` [s]: the newest sample at or before it."""
        k = self.index(t)
        return self.q[k], None if self.q_ref is None else self.q_ref[k]


class Playback:
    """
    The replay's clock over ``[0, duration]`` [s]: play, pause, speed and seek on explicit time.

    :meth:`advance` moves it by ``dt`` [s] of wall time times ``speed`` while playing, back to the
    start past the end (a replay loops); :meth:`seek` puts it at a time, playing or not.
    """

    def __init__(self, duration, speed=1.0, playing=True):
        if not (math.isfinite(duration) and duration >= 0.0):
            raise InputError(f'duration: expected a finite time >= 0 s, got {duration!r}')
        self.duration = float(duration)
        self.speed = float(speed)
        self.playing = bool(playing)
        self.t = 0.0

    def seek(self, t):
        """Put the clock at ``t`` [s], clipped to the recording."""
        self.t = min(max(float(t), 0.0), self.duration)

    def advance(self, dt):
        """Let ``dt`` [s] of wall time pass; return the clock's time [s]."""
        if self.playing:
            self.t += dt * self.speed
            if self.t > self.duration:
                self.t = 0.0
        return self.t


def run(path, topics, host='127.0.0.1', port=8080, out=sys.stdout, stop=None):
    """Serve the replay of ``path`` until Ctrl-C (or ``stop`` is set); return 0."""
    replay = Replay(path, topics)
    view = ArmView(host, port, title=f'robot_dynamics: replay of {path}', interactive=False)
    view.set_robot(replay.urdf, replay.model)
    gui = view.server.gui
    playing = gui.add_checkbox('Play', True)
    speed = gui.add_dropdown('Speed (x real time)', SPEEDS, initial_value='1')
    timeline = gui.add_slider('Time [s]', 0.0, max(replay.duration, 1e-3),
                              step=max(replay.duration, 1e-3) / 1000, initial_value=0.0)
    clock = Playback(replay.duration)

    def scrubbed(event):
        if event.client is not None:     # the user moved it, not the playback
            clock.seek(timeline.value)

    timeline.on_update(scrubbed)
    note = [f'**recording torn**: {replay.problem}'] if replay.problem else []
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        # a flag, not KeyboardInterrupt: raised inside viser's calls, that could be swallowed
        # there (a replay that did not end on Ctrl-C on a loaded host)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda signum, frame: stop.set())
    print(f'view: {view.url} (replay of {path}, {replay.duration:.1f} s)', file=out, flush=True)
    try:
        last = time.monotonic()
        while not stop.is_set():
            now = time.monotonic()
            clock.playing, clock.speed = playing.value, float(speed.value)
            t = clock.advance(now - last)
            if clock.playing:
                timeline.value = t
            last = now
            k = replay.index(t)
            q, q_ref = replay.at(t)
            view.show(q, float(replay.t[k]))
            if q_ref is not None:
                view.show_reference(q_ref)
            # paused: said once the playback stopped, after any time it sent before
            lines = note + [f't = {replay.t[k]:.3f} s of {replay.duration:.3f} s'
                            + ('' if clock.playing else ', paused')]
            if replay.mode is not None:
                lines.append(f'controller: **{replay.mode[k]}**')
            if q_ref is not None:
                lines.append(f'tracking error (max |e|): {np.max(np.abs(q_ref - q)):.2e}')
            view.set_status(lines)
            stop.wait(1.0 / RATE_HZ)
    finally:
        view.close()
    return 0
