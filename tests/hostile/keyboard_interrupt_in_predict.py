"""Error: KeyboardInterrupt raised in predict (not an Exception: the checks let it through)."""


class KeyboardInterruptInPredict:
    example_layout = "3,2:CB"

    def predict(self, X):
        raise KeyboardInterrupt
