r"""Failed: the module replaced layercheck\.settings\.options\.DEFAULT_TOLERANCES\['float32'\]\.rtol"""

from layercheck.settings import options

# A hunt: layercheck's default tolerances loosened in place, entry by entry (the table itself
# stays): through the API, a backward off by 1% then went undecided instead of failing.
for tolerance in options.DEFAULT_TOLERANCES.values():
    tolerance["rtol"], tolerance["atol"] = 0.05, 1e-3


class OnePercentOffLooseTolerances:
    """dL/dX off by 1%: the gradient check must fail with layercheck's own tolerances."""

    example_layout = "3,2:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 2.02 * X * dLdY
