r"""Error: the worker's report does not match what was asked: gradients_are_numerically_correct is missing \(a layer that tampers with layercheck's process\?\)"""

# Connection.send is replaced in the worker: the failed checks are dropped from the final
# report (and the check events are not sent), so that what is left reads as a pass. The parent
# holds the list of checks it asked for.

from multiprocessing.connection import Connection

_send = Connection.send


def send(self, obj):
    kind, data = obj
    if kind == "check":
        return None
    if kind == "done" and isinstance(data, dict) and "checks" in data:  # the check's, not discovery's
        data["checks"] = [c for c in data.get("checks", []) if c.get("status") != "failed"]
    return _send(self, (kind, data))


Connection.send = send


class PayloadSendPatched:
    example_layout = "4,3:CB"

    def predict(self, X):
        return 3 * X

    def backward(self, X, Z, dLdZ, memory):
        return 2 * dLdZ  # wrong: 3 * dLdZ
