"""A stand-in for CuPy on machines without a GPU: arrays are NumPy arrays of a subclass whose
type lives in the module `cupy`, so layercheck's GPU code paths (detection, moving arrays,
parity, device hygiene) run in CI. Only the tests put this folder on sys.path; a real GPU
run uses the real CuPy (tests marked `gpu`)."""

import numpy as _np

__version__ = "0.0-fake"


class ndarray(_np.ndarray):
    def __array_namespace__(self, api_version=None):
        import cupy

        return cupy

    def get(self):
        return _np.array(self.view(_np.ndarray))


ndarray.__module__ = "cupy"


def asarray(x, dtype=None):
    return _np.array(x, dtype=dtype).view(ndarray)


def asnumpy(x):
    return _np.array(x.view(_np.ndarray) if isinstance(x, _np.ndarray) else x)


def zeros(*args, **kwargs):
    return _np.zeros(*args, **kwargs).view(ndarray)


def get_array_module(*arrays):
    import cupy

    return cupy if any(isinstance(a, ndarray) for a in arrays) else _np


def _on_device(result):
    if isinstance(result, (_np.ndarray, _np.generic)):
        return _np.asarray(result).view(ndarray)
    if isinstance(result, tuple):
        return tuple(_on_device(r) for r in result)
    return result


def __getattr__(name):
    # Everything else is NumPy's, with array results on the "device" (as CuPy's are, where
    # NumPy returns scalars from full reductions).
    value = getattr(_np, name)
    if isinstance(value, type) or not callable(value):
        return value

    def on_device(*args, **kwargs):
        return _on_device(value(*args, **kwargs))

    return on_device


class _Runtime:
    @staticmethod
    def getDeviceCount():
        return 1

    @staticmethod
    def getDeviceProperties(index):
        return {"name": b"Fake GPU"}


class _Device:
    id = 0


class cuda:  # noqa: N801 - CuPy's module name
    runtime = _Runtime
    Device = _Device
