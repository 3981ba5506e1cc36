r"""Error: the layer called sys\.exit in predict_does_not_error: predict raised SystemExit"""


class Code:
    def __repr__(self):
        raise RuntimeError("the exit code's repr raises")

    __str__ = __repr__


class ExitCodeReprRaises:
    example_layout = "3,2:CB"

    def predict(self, X):
        raise SystemExit(Code())
