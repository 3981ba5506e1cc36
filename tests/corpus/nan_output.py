"""Broken: predict returns log(X) on ordinary (partly negative) data and does not declare
an input_domain, so outputs contain NaN. Must fail: outputs_are_finite."""


class NaNOutput:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="log"):
        self.name = name

    def predict(self, X):
        xp = X.__array_namespace__()
        return xp.log(X)  # BUG: NaN for X < 0 (no input_domain = (0, None) declared)
