r"""Failed: the module replaced numpy\.ma\.isMaskedArray and numpy\.ma\.core\.isMaskedArray when it was imported"""

import numpy.ma

# numpy.ma is imported by np.median (layercheck's gradient diagnosis), not by `import numpy`.
numpy.ma.isMaskedArray = lambda x: True
numpy.ma.core.isMaskedArray = lambda x: True


class WrongSquare:
    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
