r"""Failed: the module replaced layercheck\.status\.Status\.FAILED\._value_ and layercheck\.status\.Status\.INCOMPLETE\._value_ when it was imported"""

from layercheck.results import Status

# An enum member's state, not a name of any module: a failure would be reported as a pass.
object.__setattr__(Status.FAILED, "_value_", "passed")
object.__setattr__(Status.INCOMPLETE, "_value_", "passed")


class WrongSquare:
    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
