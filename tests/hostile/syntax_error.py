"""Error: SyntaxError at import."""


class Broken:
    example_layout = "3,2:CB"

    def predict(self, X)
        return X
