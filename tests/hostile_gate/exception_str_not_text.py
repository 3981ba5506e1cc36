r"""Failed: predict raised NotText \(the exception's __str__ raised TypeError\)"""


class NotText(Exception):
    def __str__(self):
        return 42


class ExceptionStrNotText:
    example_layout = "3,2:CB"

    def predict(self, X):
        raise NotText()
