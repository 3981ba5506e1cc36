"""The stand-in's `cupy.fft`: numpy.fft computed on the device copy (names CuPy 14.2.0 has)."""

import numpy as _np

from cupy import _device_function

_NAMES = (
    "fft fft2 fftfreq fftn fftshift hfft ifft ifft2 ifftn ifftshift ihfft irfft irfft2 irfftn rfft rfft2 rfftfreq rfftn"
).split()

for _name in _NAMES:
    globals()[_name] = _device_function(_name, getattr(_np.fft, _name), "cupy.fft")
del _name
