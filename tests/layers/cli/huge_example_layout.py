"""CLI fixture: a layer whose example_layout would need petabytes (DESIGN.md section 7:
refused up front with the estimate, reported as that target's error)."""


class HugeExampleLayout:
    example_layout = "100000,100000,1000,1000:SSCB"

    def predict(self, X):
        return X
