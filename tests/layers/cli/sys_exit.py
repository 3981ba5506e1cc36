"""CLI fixture: a layer whose predict calls sys.exit (DESIGN.md section 7: that target is
reported with the reason; every other target is still checked)."""

import sys


class SysExit:
    example_layout = "3,2:CB"

    def predict(self, X):
        sys.exit(3)
