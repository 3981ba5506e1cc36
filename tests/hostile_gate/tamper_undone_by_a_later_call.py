r"""Failed: the layer replaced numpy\.isfinite during \w+"""

import numpy as np

_saved = []


class WrongSquareUndoesLater:
    """predict replaces np.isfinite, backward puts it back: between the two, layercheck would
    compute with the replacement; a wrong layer never passes."""

    example_layout = "3,2:CB"

    def predict(self, X):
        _saved.append(np.isfinite)
        np.isfinite = lambda *args, **kwargs: True
        return X * X

    def backward(self, X, Y, dLdY, memory):
        if _saved:
            np.isfinite = _saved[0]
        return 3 * dLdY * X
