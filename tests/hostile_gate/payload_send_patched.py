r"""Error: the worker's report does not match what was asked: gradients_are_numerically_correct is missing \(a layer that tampers with layercheck's process\?\)"""

# The send of the worker's own connection object is replaced (found through the garbage
# collector: an instance attribute, which no record of functions sees; replacing
# Connection.send itself is caught by the record, tamper_connection_send.py): the failed checks
# are dropped from the final report and the check events are not sent, so that what is left
# reads as a pass. The parent holds the list of checks it asked for.

import gc
from multiprocessing.connection import Connection


def _patch(connection):
    send = connection.send

    def dropping(obj):
        kind, data = obj
        if kind == "check":
            return None
        if kind == "done" and isinstance(data, dict) and "checks" in data:  # the check's, not discovery's
            data["checks"] = [c for c in data.get("checks", []) if c.get("status") != "failed"]
        return send((kind, data))

    connection.send = dropping


for _connection in [o for o in gc.get_objects() if isinstance(o, Connection) and o.writable]:
    _patch(_connection)


class PayloadSendPatched:
    example_layout = "4,3:CB"

    def predict(self, X):
        return 3 * X

    def backward(self, X, Z, dLdZ, memory):
        return 2 * dLdZ  # wrong: 3 * dLdZ
