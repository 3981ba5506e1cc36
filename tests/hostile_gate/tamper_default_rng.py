r"""Failed: the module replaced numpy\.random\.default_rng when it was imported"""

import numpy as np

_real = np.random.default_rng


class _Zeros:
    """A generator whose every draw is zeros: the engine's directions and weights vanish."""

    def __init__(self, *args, **kwargs):
        self._rng = _real(*args, **kwargs)

    def __getattr__(self, name):
        method = getattr(self._rng, name)
        return lambda *args, **kwargs: np.zeros_like(method(*args, **kwargs))


np.random.default_rng = _Zeros


class WrongSquare:
    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
