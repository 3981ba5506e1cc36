"""Error: the worker exited with status 3 (os._exit in predict)."""

import os


class OsExitInPredict:
    example_layout = "3,2:CB"

    def predict(self, X):
        os._exit(3)
