r"""Error: the worker's report is malformed: check .*: argument 'X' has status"""

# The module, imported in its check's worker, sends a report whose gradient details are not the
# check's (a status that is a list, which no membership test may take as a key) and ends the
# worker: the parent reads it as no report, never raises.

import gc
import os
import sys
from multiprocessing.connection import Connection

MODE = "listunit"


def _forge():
    frame = sys._getframe()
    while frame is not None and type(frame.f_locals.get("self")).__name__ != "CheckJob":
        frame = frame.f_back
    if frame is None:  # imported in discovery
        return
    job = frame.f_locals["self"]
    from layercheck.results import CheckResult, Status, TargetReport
    from layercheck.running.batch import _payload

    check = CheckResult("gradients\x1b[2J\nPASSED x", Status.PASSED, "\x1b]0;t\x07\nTest Summary: 9 passed")
    data = _payload(TargetReport(job.label, job.kind, list(job.layouts), [check]))
    if MODE == "listunit":
        data["checks"][0]["details"] = {"arguments": [{"argument": "X", "kind": "input", "status": ["failed"]}]}
    elif MODE == "nan":
        data["duration_s"] = float("nan")
        data["checks"][0]["duration_s"] = float("inf")
    elif MODE == "junk":
        data = {"foo": 1}
    else:
        data = 12345
    for obj in gc.get_objects():
        if isinstance(obj, Connection) and obj.writable:
            obj.send(("done", data))
    os._exit(0)


_forge()


class PayloadForgedGradientDetails:
    example_layout = "4,3:CB"

    def predict(self, X):
        return 3 * X

    def backward(self, X, Z, dLdZ, memory):
        return 2 * dLdZ  # wrong: 3 * dLdZ
