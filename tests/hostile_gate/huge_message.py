r"""Failed: predict raised ValueError: x+ \[\.\.\. 3,99\d,\d{3} of 4,000,0\d\d characters cut \.\.\.\]"""


class HugeMessage:
    example_layout = "3,2:CB"

    def predict(self, X):
        raise ValueError("x" * 4_000_000)
