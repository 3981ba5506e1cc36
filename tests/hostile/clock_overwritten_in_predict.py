"""Overwrites the clock layercheck times the layer's calls with, then hangs: the timeout must
not say whose time it was (the clock says nothing), least of all 'had run -inf s'."""

from layercheck.contract import calls


class ClockOverwritten:
    example_layout = "3,2:CB"

    def predict(self, X):
        if calls._clock is not None:  # in a worker: the shared start of the call under way
            calls._clock.value = float("inf")
        while True:
            pass
