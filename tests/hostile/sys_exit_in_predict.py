"""Error: the layer called sys.exit (in predict)."""

import sys


class SysExitInPredict:
    example_layout = "3,2:CB"

    def predict(self, X):
        sys.exit(3)
