r"""Failed: the gradient of X is off by a constant factor 3/2"""

import numpy as np

# Every comparison agrees: but no code layercheck runs looks np.allclose up (it compares with
# its own functions), so the replacement is allowed (judged by effect, issue 36), and the wrong
# gradient below is found all the same.
np.allclose = lambda *args, **kwargs: True


class WrongSquare:
    """predict is X*X, backward says 3*dLdY*X: wrong, whatever compares it."""

    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
