r"""Failed: predict raised BadError \(the exception's __str__ raised RuntimeError\)"""


class BadError(Exception):
    def __str__(self):
        raise RuntimeError("the __str__ of the exception raises")


class ExceptionStrRaises:
    example_layout = "3,2:CB"

    def predict(self, X):
        raise BadError()
