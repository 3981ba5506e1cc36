r"""Failed: the layer replaced numpy\.allclose during \w+"""

import numpy as np

_saved = []


class WrongSquareUndoesLater:
    """predict replaces np.allclose, backward puts it back: between the two, layercheck would
    compute with the replacement; a wrong layer never passes."""

    example_layout = "3,2:CB"

    def predict(self, X):
        _saved.append(np.allclose)
        np.allclose = lambda *args, **kwargs: True
        return X * X

    def backward(self, X, Y, dLdY, memory):
        if _saved:
            np.allclose = _saved[0]
        return 3 * dLdY * X
