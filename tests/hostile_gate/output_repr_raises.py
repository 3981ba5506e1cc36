"""Failed: predict returned Weird .* as Y; outputs and states must be NumPy or CuPy arrays"""


class Weird:
    def __repr__(self):
        raise RuntimeError("the repr of the output raises")

    __str__ = __repr__

    def __eq__(self, other):
        raise RuntimeError("== raises")

    def __len__(self):
        raise RuntimeError("len raises")


class OutputReprRaises:
    example_layout = "3,2:CB"

    def predict(self, X):
        return Weird()
