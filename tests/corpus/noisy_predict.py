"""Broken: predict adds random noise (1e-3 * randn), so two calls on the same input
differ. Must fail: predict_is_deterministic. (Side effects: it may also fail
predict_is_consistent_across_observations and the GPU parity checks, which compare
separate calls.)"""


class NoisyPredict:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="noisy"):
        self.name = name

    def predict(self, X):
        xp = X.__array_namespace__()
        noise = xp.random.standard_normal(X.shape).astype(X.dtype)  # BUG: not deterministic
        return X + 1e-3 * noise
