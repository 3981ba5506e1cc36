"""Failed: predict returned Sly .* as Y"""


class Sly:
    def __repr__(self):
        raise KeyboardInterrupt


class KeyboardInterruptInRepr:
    example_layout = "3,2:CB"

    def predict(self, X):
        return Sly()
