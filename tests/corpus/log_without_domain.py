"""Broken declaration: a log layer that does not declare input_domain, so the default
(standard normal) inputs make it return NaN; the failure hints at declaring the domain.
Must fail: outputs_are_finite"""

import numpy as np


class LogNoDomain:
    example_layout = "4,3,5,6:SSCB"

    def predict(self, X):
        with np.errstate(invalid="ignore"):
            return np.log(X)
