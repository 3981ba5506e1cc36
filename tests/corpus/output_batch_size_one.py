"""Broken output size: predict sums over the batch axis with keepdims, so a mini-batch of
B observations gives an output with batch size 1 (shape (4,3,5,1) for the example
layout) instead of B. No backward.
Must fail: output_batch_size_matches_input."""


class SumOverBatch:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="sum_over_batch"):
        self.name = name
        self.batch_axis = None

    def initialize(self, layout):
        self.batch_axis = layout.find("B")

    def predict(self, X):
        xp = X.__array_namespace__()
        return xp.sum(X, axis=self.batch_axis, keepdims=True)  # BUG: batch size 1 out
