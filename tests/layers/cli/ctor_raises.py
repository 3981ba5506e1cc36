"""CLI fixture: a layer whose constructor raises."""


def _check_name(name):
    if not name.isidentifier():
        raise ValueError(f"layer name {name!r} is not an identifier")


class CtorRaises:
    example_layout = "3,2:CB"

    def __init__(self, name="bad name"):
        _check_name(name)
        self.name = name

    def predict(self, X):
        return X
