r"""Error: OddDomainOneDenormal's input_domain: is too narrow to check gradients in: 4\.94e-324 wide, below 1e-34"""


class OddDomainOneDenormal:
    """A domain one denormal wide: no input drawn in it can be moved, which would leave the
    gradient check undecided (and this wrong backward unfailed)."""

    example_layout = "4,3:CB"
    input_domain = (0.0, 5e-324)

    def predict(self, X):
        return 3 * X

    def backward(self, X, Z, dLdZ, memory):
        return 2 * dLdZ  # wrong: 3 * dLdZ
