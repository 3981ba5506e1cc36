"""Failed: KeyboardInterrupt raised in predict is the layer's doing (a failed check), not an interrupt of the run."""


class KeyboardInterruptInPredict:
    example_layout = "3,2:CB"

    def predict(self, X):
        raise KeyboardInterrupt
