"""Passed

Starts children and leaves them running: a plain one, one in a session of its own, one by
`setsid`. The verdict is the layer's; the children end with its target. With
LAYERCHECK_GATE_HANG set (tests/test_hostile_gate.py) it then replaces layercheck's
faulthandler watchdog with its own and hangs.
"""

import faulthandler
import os
import shutil
import subprocess

_started = []


def _record(pid, what):
    """The pid, in the folder the tests look in for survivors (tests/hostile_gate/README.md)."""
    folder = os.environ.get("LAYERCHECK_GATE_PIDS")
    if folder:
        with open(os.path.join(folder, str(pid)), "w") as f:
            f.write(what)


def _start_children():
    _record(subprocess.Popen(["sleep", "1000"]).pid, "plain child")
    _record(subprocess.Popen(["sleep", "1000"], start_new_session=True).pid, "child in a new session")
    if shutil.which("setsid"):
        _record(subprocess.Popen(["setsid", "sleep", "1000"]).pid, "setsid child")


class LeavesChildrenRunning:
    example_layout = "3,2:CB"

    def predict(self, X):
        if not _started and hasattr(os, "fork"):
            _started.append(True)
            _start_children()
            if os.environ.get("LAYERCHECK_GATE_HANG"):
                faulthandler.dump_traceback_later(3600)
                _record("ready-children", "hangs")
                while True:
                    pass
        return 2 * X
