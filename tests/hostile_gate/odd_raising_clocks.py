"""Failed: the layer replaced time.monotonic during"""

import time


def _stopped():
    raise RuntimeError("the clock is stopped")


class RaisingClocks:
    example_layout = "4,3,2:SCB"

    def predict(self, X):
        # While the checks run: every later look at time.monotonic or time.perf_counter raises.
        time.monotonic = time.perf_counter = _stopped
        return 2 * X
