"""CLI fixture: a correct layer without example_layout (the command line must give one)."""


class NoLayout:
    def predict(self, X):
        return 2 * X
