r"""Failed: the module replaced the code of layercheck\.numerics\.compare\.mismatch"""

from layercheck.numerics import compare

# The function's code, not its name: every module that imported it runs the replacement.
compare.mismatch.__code__ = (lambda actual, expected, rtol=0.0, atol=0.0: None).__code__


class Nondeterministic:
    example_layout = "3,2:CB"

    def __init__(self):
        self.calls = 0

    def predict(self, X):
        self.calls += 1
        return X + self.calls
