"""Broken: forward drops the last element of the last (batch) axis, so its output has a
different shape from predict's. Must fail: forward_predict_are_consistent_in_size."""


class ForwardSizeMismatch:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="forward_size_mismatch"):
        self.name = name

    def predict(self, X):
        return 2 * X

    def forward(self, X):
        return 2 * X[..., :-1]  # BUG: last observation dropped
