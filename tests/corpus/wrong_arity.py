"""Broken: predict returns a tuple (Y, Y) although num_outputs is 1 (and there is no
state). Must fail: function_syntaxes_are_correct."""


class WrongArity:
    num_outputs = 1
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="wrong_arity"):
        self.name = name

    def predict(self, X):
        Y = 2 * X
        return Y, Y  # BUG: one output declared, two returned
