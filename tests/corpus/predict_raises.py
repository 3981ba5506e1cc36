"""Broken: predict raises RuntimeError. Must fail: predict_does_not_error."""


class PredictRaises:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="predict_raises"):
        self.name = name

    def predict(self, X):
        raise RuntimeError("predict is not implemented yet")
