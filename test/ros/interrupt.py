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

"""Test helper: a Ctrl-C of a command run in the test's process (the ``here`` fixture)."""

import signal
import threading
import time

#: Longest wait [s] for the moment to interrupt, and for the command to end after it.
TIMEOUT = 60.0


def interrupted(run, when, before=lambda: None):
    """
    Run ``run()`` and SIGINT this process once ``when()`` holds (after ``before()``).

    The signal goes to a thread other than the main one, which the kernel may choose for a
    Ctrl-C (a process's signal goes to any of its threads): Python runs the handler only when
    the main thread next runs Python, and a command must not put that off. The command's own
    handler takes the signal while it runs; the test's handler around it keeps a late one from
    pytest. Return what ``run()`` returned. A moment that does not come within TIMEOUT fails
    the test (the command is interrupted all the same, so that it ends).
    """
    strays, missed = [], []
    previous = signal.signal(signal.SIGINT, lambda *_: strays.append(True))

    def interrupt():
        deadline = time.monotonic() + TIMEOUT
        while not when():
            if time.monotonic() > deadline:
                missed.append(True)
                break
            time.sleep(0.01)
        else:
            before()
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
    thread = threading.Thread(target=interrupt, daemon=True)
    thread.start()
    try:
        result = run()
        thread.join(TIMEOUT)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not missed, f'the moment to interrupt did not come within {TIMEOUT:g} s: {result}'
    assert not strays, 'SIGINT came after the command had ended'
    return result
