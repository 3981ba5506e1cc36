r"""Error: OddDomainNan's input_domain\[0\]: must be a number, got NaN"""


class OddDomainNan:
    example_layout = "4,3,2:SCB"
    input_domain = (float("nan"), None)

    def predict(self, X):
        return 2 * X
