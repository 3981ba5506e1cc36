"""CLI fixture: a module that raises while it is imported (in a helper of its own)."""


def _load_weights():
    raise RuntimeError("weights file is missing")


WEIGHTS = _load_weights()


class NeverLoaded:
    example_layout = "3,2:CB"

    def predict(self, X):
        return X
