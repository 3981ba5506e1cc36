"""Broken observations: forward and predict both centre each element on its mean over the
observations of the batch (a batch statistic at prediction time), with a backward that is
right for that computation. Each observation alone is all zeros.
Must fail: forward_is_consistent_across_observations
Must fail: predict_is_consistent_across_observations
Must fail: backward_is_consistent_across_observations"""


class CentreOverBatch:
    example_layout = "4,3,5,6:SSCB"

    def predict(self, X):
        return X - X.mean(axis=3, keepdims=True)  # BUG: a mean over the observations

    def forward(self, X):
        return self.predict(X), None

    def backward(self, X, Y, dLdY, memory):
        return dLdY - dLdY.mean(axis=3, keepdims=True)
