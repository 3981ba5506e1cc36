"""Broken: initialize raises ValueError (it insists on a time axis that the layout does not
have). Must fail: initialize_does_not_error."""


class InitRaises:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="init_raises"):
        self.name = name

    def initialize(self, layout):
        if layout.find("T") is None:  # BUG: the layer works on any layout
            raise ValueError(f"expected a layout with a T dimension, got {layout.format}")

    def predict(self, X):
        return 2 * X
