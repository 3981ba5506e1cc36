r"""Error: the worker sent a message layercheck does not read \(it names builtins\.print; a worker sends only plain data\)"""

# The module sends, as its worker's result, a pickle that calls a function when it is read
# (print here; os.system would do as well): the parent reads only plain data, and calls nothing.

import gc
import os
import pickle
import sys
from multiprocessing.connection import Connection


class _Calls:
    def __reduce__(self):
        return (print, ("layercheck's parent ran code of the layer",))


def _forge():
    frame = sys._getframe()
    while frame is not None and type(frame.f_locals.get("self")).__name__ != "CheckJob":
        frame = frame.f_back
    if frame is None:  # imported in discovery
        return
    message = pickle.dumps(("done", _Calls()))
    for obj in gc.get_objects():
        if isinstance(obj, Connection) and obj.writable:
            obj.send_bytes(message)
    os._exit(0)


_forge()


class PayloadForgedPickle:
    example_layout = "4,3:CB"

    def predict(self, X):
        return 3 * X

    def backward(self, X, Z, dLdZ, memory):
        return 2 * dLdZ  # wrong: 3 * dLdZ
