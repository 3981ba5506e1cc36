"""Broken at the layout's own batch size only: predict handles the batch in chunks of 32
observations (to bound its memory) and every chunk after the first reads the first chunk's
inputs (the offset forgotten), so observations 32 to 39 of a batch of 40 get the outputs of
observations 0 to 7. Run on a batch of the 16 observations checked, it is right.
Must fail: predict_is_consistent_across_observations"""

import numpy as np

CHUNK = 32


class SoftplusInChunks:
    example_layout = "4,4,3,40:SSCB"

    def predict(self, X):
        B = X.shape[-1]
        Y = np.empty_like(X)
        for start in range(0, B, CHUNK):
            stop = min(start + CHUNK, B)
            Y[..., start:stop] = np.logaddexp(0, X[..., 0 : stop - start])  # BUG: X[..., start:stop]
        return Y
