"""Passed"""

import os


class ChdirInPredict:
    example_layout = "3,2:CB"

    def predict(self, X):
        os.chdir(os.path.dirname(os.path.abspath(os.sep)))
        return 2 * X
