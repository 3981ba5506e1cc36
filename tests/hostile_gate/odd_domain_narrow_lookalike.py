r"""Failed: the gradient of X is off by a constant factor 2/3"""


class OddDomainNarrowLookalike:
    """A narrow domain (1, 1.001) that the gradient check works in: this wrong backward fails."""

    example_layout = "4,3:CB"
    input_domain = (1.0, 1.001)

    def predict(self, X):
        return 3 * X

    def backward(self, X, Z, dLdZ, memory):
        return 2 * dLdZ  # wrong: 3 * dLdZ
