r"""Error: OddDomainNarrowAtItsSize's input_domain\[0\]: is too narrow to check gradients in: 1e-06 wide at values of size 1, below 1e-05 of their size"""


class OddDomainNarrowAtItsSize:
    """(1, 1 + 1e-6): a step of the gradient check from values of size 1 barely fits, and grows."""

    example_layout = "4,3:CB"
    input_domain = [(1.0, 1.000001)]

    def predict(self, X):
        return 3 * X

    def backward(self, X, Z, dLdZ, memory):
        return 2 * dLdZ  # wrong: 3 * dLdZ
