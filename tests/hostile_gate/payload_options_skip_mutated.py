r"""Error: the worker's report does not match what was asked: gradients_are_numerically_correct is missing"""

# The worker's copy of the options is changed at import: the gradient check, which would fail
# this layer, is skipped there. The parent selects the checks from its own options.

import sys

frame = sys._getframe()
while frame is not None:
    job = frame.f_locals.get("self")
    if type(job).__name__ == "CheckJob":
        object.__setattr__(job.options, "skip", (*job.options.skip, "gradients_are_numerically_correct"))
    frame = frame.f_back


class PayloadOptionsSkipMutated:
    example_layout = "4,3:CB"

    def predict(self, X):
        return 3 * X

    def backward(self, X, Z, dLdZ, memory):
        return 2 * dLdZ  # wrong: 3 * dLdZ
