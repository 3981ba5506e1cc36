"""Broken: forward reads an attribute that was never set (self.dropout_mask) and raises
AttributeError; predict works. Must fail: forward_does_not_error."""


class ForwardRaises:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="forward_raises"):
        self.name = name

    def predict(self, X):
        return 2 * X

    def forward(self, X):
        return 2 * X * self.dropout_mask  # BUG: attribute never set -> AttributeError
