"""Passed

Starts a daemon (forked twice, in a session of its own, deaf to SIGTERM and SIGHUP) as the
module is imported: in the worker that finds the targets, and again in the one that checks
them. The verdict is the layer's; each daemon ends with its worker.
"""

import os
import signal
import time


def _record(pid, what):
    """The pid, in the folder the tests look in for survivors (tests/hostile_gate/README.md)."""
    folder = os.environ.get("LAYERCHECK_GATE_PIDS")
    if folder:
        with open(os.path.join(folder, str(pid)), "w") as f:
            f.write(what)


def _daemon():
    middle = os.fork()
    if middle:
        os.waitpid(middle, 0)
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        _record(os.getpid(), "daemon started at import")
        while True:
            time.sleep(1)
    finally:
        os._exit(0)  # never back into the importing worker's code


if hasattr(os, "fork"):
    _daemon()


class ImportedWithADaemon:
    example_layout = "3,2:CB"

    def predict(self, X):
        return 2 * X
