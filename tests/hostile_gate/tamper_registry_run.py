r"""Failed: the module replaced layercheck\.checks\.registry\.REGISTRY\['\w+'\]\.run"""

from layercheck.checks import REGISTRY, passed

for _check in REGISTRY.values():
    object.__setattr__(_check, "run", lambda session: passed())  # every check passes


class WrongSquare:
    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
