"""Error: timed out in predict_does_not_error (an endless loop in predict)."""


class LoopInPredict:
    example_layout = "3,2:CB"

    def predict(self, X):
        while True:
            X = X + 0
