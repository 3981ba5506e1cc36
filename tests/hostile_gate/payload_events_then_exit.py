r"""Error: the worker process exited with status 3 before reporting .*; 2 check result\(s\) it sent were dropped, not matching what was asked \(the first: a check result is 'junk', not a mapping\)"""

# The module sends check results of its own through its worker's pipe (one not a result at
# all, one of a check that was not asked for, and a pass of the gradient check out of its
# turn), then ends the worker: the parent keeps none of them.

import gc
import os
import sys
from multiprocessing.connection import Connection


def _forge():
    frame = sys._getframe()
    while frame is not None and type(frame.f_locals.get("self")).__name__ != "CheckJob":
        frame = frame.f_back
    if frame is None:  # imported in discovery
        return
    passed = {"name": "gradients_are_numerically_correct", "status": "passed", "message": "", "details": {}}
    for obj in gc.get_objects():
        if isinstance(obj, Connection) and obj.writable:
            obj.send(("check", "junk"))
            obj.send(("check", passed))
    os._exit(3)


_forge()


class PayloadEventsThenExit:
    example_layout = "4,3:CB"

    def predict(self, X):
        return 3 * X

    def backward(self, X, Z, dLdZ, memory):
        return 2 * dLdZ  # wrong: 3 * dLdZ
