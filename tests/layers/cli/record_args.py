"""CLI fixture: a layer that records its constructor keyword arguments.

Every construction appends one JSON line with the keyword arguments to the file named by the
environment variable LAYERCHECK_TEST_RECORD (nothing is written when it is not set)."""

import json
import os


class RecordArgs:
    example_layout = "3,2:CB"

    def __init__(self, **kwargs):
        path = os.environ.get("LAYERCHECK_TEST_RECORD")
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(kwargs) + "\n")
        self.kwargs = kwargs

    def predict(self, X):
        return 2 * X
