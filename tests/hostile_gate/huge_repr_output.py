r"""Failed: predict returned Huge y+ \[\.\.\. 49,999,\d{3} of 50,000,000 characters cut \.\.\.\] y+ as Y"""


class Huge:
    def __repr__(self):
        return "y" * 50_000_000


class HugeReprOutput:
    example_layout = "3,2:CB"

    def predict(self, X):
        return Huge()
