r"""Failed: the module replaced layercheck\.sandbox\.integrity\.Guard\._snapshot, layercheck\.checks\.registry\.REGISTRY"""

import sys

from layercheck.checks import REGISTRY, passed
from layercheck.sandbox.integrity import Guard, Snapshot

for _check in REGISTRY.values():
    object.__setattr__(_check, "run", lambda session: passed())  # every check passes

# ... and the runner's record of "before" becomes what it is now.
_frame = sys._getframe()
while _frame is not None:
    _guard = _frame.f_locals.get("guard")
    if isinstance(_guard, Guard):
        _guard._snapshot = Snapshot.take()
    _frame = _frame.f_back


class WrongSquare:
    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
