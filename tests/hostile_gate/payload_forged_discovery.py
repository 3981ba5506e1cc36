r"""Error: the discovery worker's answer is malformed: the kind of 'PayloadForgedDiscovery' is 'layer\\x1b\[2J'"""

# The module, imported in its discovery worker, answers for it with a target of a kind that
# does not exist: that file is an error, and the other targets are checked.

import gc
import os
import sys
from multiprocessing.connection import Connection


def _forge():
    frame = sys._getframe()
    while frame is not None and type(frame.f_locals.get("self")).__name__ != "DiscoverJob":
        frame = frame.f_back
    if frame is None:  # imported in its check
        return
    found = {
        "name": "PayloadForgedDiscovery",
        "kind": "layer\x1b[2J",
        "example": ["4,3:CB"],
        "example_error": None,
        "line": 1,
    }
    answer = {"found": [found], "error": None, "traceback": "", "cause": None}
    for obj in gc.get_objects():
        if isinstance(obj, Connection) and obj.writable:
            obj.send(("done", answer))
    os._exit(0)


_forge()


class PayloadForgedDiscovery:
    example_layout = "4,3:CB"

    def predict(self, X):
        return 3 * X

    def backward(self, X, Z, dLdZ, memory):
        return 2 * dLdZ  # wrong: 3 * dLdZ
