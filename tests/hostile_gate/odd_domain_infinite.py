r"""Error: OddDomainInfinite's input_domain\[0\]: must be a finite number, or None \(null in YAML, empty on the command line\) for unbounded, got -inf"""


class OddDomainInfinite:
    example_layout = "4,3,2:SCB"
    input_domain = (-float("inf"), float("inf"))

    def predict(self, X):
        return 2 * X
