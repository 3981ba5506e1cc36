"""Failed: predict raised Escape: out of the check"""


class Escape(BaseException):
    pass


class BaseExceptionSubclass:
    example_layout = "3,2:CB"

    def predict(self, X):
        raise Escape("out of the check")
