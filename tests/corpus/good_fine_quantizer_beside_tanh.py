"""Correct: two float64 outputs, tanh(X) and X quantized to a step of 1/1000 (a step that is no
power of two, so its values lie on no grid of float32's): the quantized output moves only where
an element crosses a step, by the step, which is no round-off. Judged output by output, its
jumps were taken for a float32 computation ("round-off of 0.003"); a single output quantized so
was, before that, too."""

import numpy as np


class TanhBesideFineQuantizer:
    num_outputs = 2
    example_layout = "8,8,3,4:SSCB"

    def predict(self, X):
        return np.tanh(X), np.round(X * 1000) / 1000
