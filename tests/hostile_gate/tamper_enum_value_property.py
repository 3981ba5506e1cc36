r"""Failed: the module replaced enum\.Enum\.value"""

import enum
import types

_value = vars(enum.Enum)["value"]


def _said(self):
    # The standard library's Enum, not layercheck's: every failed check of layercheck's would
    # be written as passed into the worker's report.
    value = self._value_
    if type(self).__name__ == "Status" and type(self).__module__.startswith("layercheck") and value == "failed":
        return "passed"
    return value


enum.Enum.value = getattr(enum, "property", types.DynamicClassAttribute)(_said)  # enum.property: Python 3.11+


class WrongSquare:
    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
