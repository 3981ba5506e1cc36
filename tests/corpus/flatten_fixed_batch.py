"""Broken output size at other batch sizes: a flatten layer SSCB -> CB that reshapes to a
batch size written into the code, the example layout's, so at the layout's own batch size it
is right and with fewer observations its output has the wrong batch size (shape (30, 4) for
2 observations of the example layout); one observation alone is flattened wrong as well.
No backward.
Must fail: output_batch_size_matches_input (at the second batch size only)"""

BATCH = 4


class FlattenFixedBatch:
    example_layout = "4,3,5,4:SSCB"

    def __init__(self, name="flatten_fixed_batch"):
        self.name = name

    def output_format(self, fmt):
        return "CB"

    def predict(self, X):
        return X.reshape(-1, BATCH)  # BUG: the example layout's batch size, not X's
