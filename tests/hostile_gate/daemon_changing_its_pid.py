"""Passed

Starts a process that forks and exits over and over, so that its pid changes at every step,
in a session of its own; each step leaves an ended process to whoever adopted it. The
verdict is the layer's; the process ends with its target, and the pids are given back.
"""

import os
import time

_started = []


def _record(pid, what):
    """The pid, in the folder the tests look in for survivors (tests/hostile_gate/README.md)."""
    folder = os.environ.get("LAYERCHECK_GATE_PIDS")
    if folder:
        with open(os.path.join(folder, str(pid)), "w") as f:
            f.write(what)


def _hop():
    if os.fork():
        return
    try:
        os.setsid()
        _record(os.getpid(), "process changing its pid")
        while True:
            if os.fork():
                os._exit(0)
    finally:
        os._exit(0)  # never back into the worker's code


class ChangesItsPid:
    example_layout = "3,2:CB"

    def predict(self, X):
        if not _started and hasattr(os, "fork"):
            _started.append(True)
            _hop()
            time.sleep(1)  # long enough to leave hundreds of ended processes behind
        return 2 * X
