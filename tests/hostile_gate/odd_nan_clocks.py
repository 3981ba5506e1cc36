"""Failed: the module replaced time.monotonic when it was imported"""

import time

# Every clock of the time module replaced: NaN, zero, or running backwards. layercheck's own
# clocks were bound before this module ran, so its durations and timeouts stay true, and the
# clocks no code layercheck runs looks up (time.time, time.perf_counter) are allowed; but the
# worker's channel to its parent reads time.monotonic (multiprocessing.connection.wait): that
# one is tampering, and the target fails, naming it.
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
