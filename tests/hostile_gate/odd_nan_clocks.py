"""Failed: the module replaced time.time, time.monotonic"""

import time

# Every clock of the time module replaced: NaN, zero, or running backwards. layercheck's own
# clocks were bound before this module ran, so its durations and timeouts stay true; the
# replacement is tampering with the host all the same: the target fails, naming it.
_ticks = iter(range(10**9))
time.monotonic = lambda: float("nan")
time.perf_counter = lambda: -float(next(_ticks))
time.time = lambda: float("nan")
time.monotonic_ns = lambda: 0
time.perf_counter_ns = lambda: 0


class NanClocks:
    example_layout = "4,3,2:SCB"

    def predict(self, X):
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY
