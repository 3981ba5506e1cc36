"""The stand-in's `cupy.random`: NumPy's generators, drawing straight into "device" arrays (no
upload). Seeded like CuPy's, but the numbers are NumPy's, not cuRAND's."""

import numpy as _np

from cupy._array import _unwrap, _wrap
from cupy._array import ndarray as _ndarray


def _float(dtype):
    dtype = _np.dtype(dtype)
    if dtype.char not in "fd":
        raise TypeError(f"cupy.random only supports float32 and float64 (got {dtype})")
    return dtype


def _device(values, dtype=None):
    values = _np.asarray(values)
    if dtype is not None and values.dtype != dtype:
        values = values.astype(dtype)
    return _wrap(values)


class RandomState:
    """Portable container of a pseudo-random number generator (NumPy's RandomState inside)."""

    def __init__(self, seed=None, method=None):
        self._rs = _np.random.RandomState(seed)

    def seed(self, seed=None):
        self._rs.seed(seed)

    def rand(self, *size, dtype=float):
        return _device(self._rs.random_sample(size), _float(dtype))

    def randn(self, *size, dtype=float):
        return _device(self._rs.standard_normal(size), _float(dtype))

    def random_sample(self, size=None, dtype=float):
        return _device(self._rs.random_sample(size), _float(dtype))

    def standard_normal(self, size=None, dtype=float):
        return _device(self._rs.standard_normal(size), _float(dtype))

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=float):
        return _device(self._rs.normal(_unwrap(loc), _unwrap(scale), size), _float(dtype))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=float):
        return _device(self._rs.uniform(_unwrap(low), _unwrap(high), size), _float(dtype))

    def randint(self, low, high=None, size=None, dtype=int):
        return _device(self._rs.randint(low, high, size, dtype=dtype))

    def choice(self, a, size=None, replace=True, p=None):
        return _device(self._rs.choice(_unwrap(a), size, replace, _unwrap(p)))

    def permutation(self, num):
        return _device(self._rs.permutation(_unwrap(num)))

    def shuffle(self, a):
        if not isinstance(a, _ndarray):
            raise TypeError("The array must be cupy.ndarray")
        self._rs.shuffle(a._a)


_state = RandomState()


def get_random_state():
    return _state


def set_random_state(rs):
    global _state
    if not isinstance(rs, RandomState):
        raise TypeError(f"Random state must be an instance of RandomState. Actual: {type(rs)}")
    _state = rs


def seed(seed=None):
    _state.seed(seed)


def rand(*size, dtype=float):
    return _state.rand(*size, dtype=dtype)


def randn(*size, dtype=float):
    return _state.randn(*size, dtype=dtype)


def random_sample(size=None, dtype=float):
    return _state.random_sample(size, dtype)


random = ranf = sample = random_sample


def standard_normal(size=None, dtype=float):
    return _state.standard_normal(size, dtype)


def normal(loc=0.0, scale=1.0, size=None, dtype=float):
    return _state.normal(loc, scale, size, dtype)


def uniform(low=0.0, high=1.0, size=None, dtype=float):
    return _state.uniform(low, high, size, dtype)


def randint(low, high=None, size=None, dtype=int):
    return _state.randint(low, high, size, dtype)


def choice(a, size=None, replace=True, p=None):
    return _state.choice(a, size, replace, p)


def permutation(a):
    return _state.permutation(a)


def shuffle(a):
    _state.shuffle(a)


class Generator:
    """CuPy's Generator API (default_rng): NumPy's Generator inside."""

    def __init__(self, bit_generator):
        self._g = _np.random.default_rng(bit_generator)

    def random(self, size=None, dtype=_np.float64, out=None):
        dtype = _float(dtype)
        if out is not None:
            self._g.random(out=out._a, dtype=dtype)
            return out
        return _device(self._g.random(size, dtype=dtype))

    def standard_normal(self, size=None, dtype=_np.float64, out=None):
        dtype = _float(dtype)
        if out is not None:
            self._g.standard_normal(out=out._a, dtype=dtype)
            return out
        return _device(self._g.standard_normal(size, dtype=dtype))

    def integers(self, low, high=None, size=None, dtype=_np.int64, endpoint=False):
        return _device(self._g.integers(low, high, size, dtype=dtype, endpoint=endpoint))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=_np.float64):
        return _device(self._g.uniform(_unwrap(low), _unwrap(high), size), _float(dtype))


def default_rng(seed=None):
    if isinstance(seed, Generator):
        return seed
    return Generator(seed)
