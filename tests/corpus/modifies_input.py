"""Broken: predict scales its input in place (X *= 2) before returning X + 1, so the
caller's array is changed. Must fail: predict_does_not_modify_inputs."""


class ModifiesInput:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="modifies_input"):
        self.name = name

    def predict(self, X):
        X *= 2  # BUG: modifies the caller's array
        return X + 1
