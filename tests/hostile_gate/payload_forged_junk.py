r"""Error: the worker's report is malformed: a target's report has unknown field\(s\) 'foo'"""

# The module, imported in its check's worker, sends a report of its own through the worker's
# pipe and ends the worker: one with non-finite durations and a check name that would drive
# the terminal, a dict of unknown fields, or a number. The parent reads none of it as a report.

import gc
import os
import sys
from multiprocessing.connection import Connection

MODE = "junk"


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
    if MODE == "nan":
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


class PayloadForgedJunk:
    example_layout = "4,3:CB"

    def predict(self, X):
        return 3 * X

    def backward(self, X, Z, dLdZ, memory):
        return 2 * dLdZ  # wrong: 3 * dLdZ
