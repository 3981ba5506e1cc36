"""Passed

Starts a daemon the classic way: fork, setsid, fork again, the middle process exits; the
daemon ignores SIGTERM, SIGHUP and SIGINT and keeps every descriptor it inherited (the
worker's pipes among them). The verdict is the layer's; the daemon ends with its target.
With LAYERCHECK_GATE_HANG set (tests/test_hostile_gate.py) it then cancels layercheck's
faulthandler watchdog and hangs.
"""

import faulthandler
import os
import signal
import time

_started = []


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
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(signum, signal.SIG_IGN)
        _record(os.getpid(), "daemon forked twice")
        while True:
            time.sleep(1)
    finally:
        os._exit(0)  # never back into the worker's code


class StartsADaemon:
    example_layout = "3,2:CB"

    def predict(self, X):
        if not _started and hasattr(os, "fork"):
            _started.append(True)
            _daemon()
            if os.environ.get("LAYERCHECK_GATE_HANG"):
                faulthandler.cancel_dump_traceback_later()
                _record("ready-daemon", "hangs")
                while True:
                    pass
        return 2 * X
