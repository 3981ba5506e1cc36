r"""Failed: the module replaced numpy\.array_equal when it was imported"""

import numpy as np

np.array_equal = lambda *args, **kwargs: True


class Nondeterministic:
    """A different answer on every call: predict_is_deterministic must fail."""

    example_layout = "3,2:CB"

    def __init__(self):
        self.calls = 0

    def predict(self, X):
        self.calls += 1
        return X + self.calls
