r"""Failed: the module replaced numpy\.allclose"""

import opcode

import numpy as np

# The tables the bytecode is read with, changed in place: what layercheck's code looks up can
# no longer be told, so every change counts (np.allclose, read by none, would be allowed).
opcode.opname[opcode.opmap["LOAD_ATTR"]] = "NOP"
np.allclose = lambda *args, **kwargs: True


class WrongSquare:
    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
