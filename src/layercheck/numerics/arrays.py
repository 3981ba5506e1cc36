"""One code path for NumPy and CuPy: array modules, explicit host/device moves, dtypes and
random draws.

Every array operation of the engine runs in the module of the arrays it works on (Chainer's
`gradient_check` model); `namespace_of` says which and refuses a mix. Data crosses between
host and device only through `to_host` and `to_module`, so that every transfer is deliberate.
CuPy is never imported here: a CuPy array can only exist once `cupy` is in `sys.modules`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from layercheck import cupyref
from layercheck.contract.layout import Layout
from layercheck.safetext import safe_repr, type_name

__all__ = [
    "DTYPES",
    "REAL_DTYPES",
    "Scalars",
    "array_module",
    "at_dtype",
    "at_precision",
    "cast",
    "chunks",
    "coarser_precision",
    "machine_epsilon",
    "copy_tree",
    "describe",
    "displaced",
    "dot",
    "dot_and_norms",
    "norm_sq",
    "fetch",
    "is_array",
    "is_complex",
    "is_cupy_array",
    "namespace_of",
    "on_gpu",
    "precision_of",
    "random_array",
    "product_norm_sq",
    "random_host_like",
    "random_like",
    "random_moves",
    "random_signs",
    "to_host",
    "to_module",
]

REAL_DTYPES = ("float32", "float64")
DTYPES = REAL_DTYPES + ("complex64", "complex128")


def is_cupy_array(x: Any) -> bool:
    """Whether `x` is a `cupy.ndarray`, without importing CuPy (as array-api-compat does), and
    only of a `cupy` the import system loaded (`cupyref`: a layer may put a fake one there)."""
    return cupyref.is_cupy_array(x)


def is_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) or is_cupy_array(x)


def array_module(x: Any) -> ModuleType:
    """The module of one array: cupy for CuPy arrays, numpy for anything else."""
    cupy = cupyref.imported_cupy()
    return cupy if cupy is not None and is_cupy_array(x) else np


def namespace_of(*xs: Any) -> ModuleType:
    """The one module of the arrays among `xs` (None and scalars are ignored); TypeError on a
    mix of NumPy and CuPy arrays, numpy when there is no array."""
    modules = {array_module(x) for x in xs if is_array(x)}
    if len(modules) > 1:
        raise TypeError("NumPy and CuPy arrays mixed in one computation")
    return modules.pop() if modules else np


def on_gpu(xp: ModuleType) -> bool:
    return xp is not np


def to_host(x: Any) -> npt.NDArray[Any]:
    """A NumPy array of `x`: the one sanctioned download (`.get()`) for CuPy arrays."""
    if is_cupy_array(x):
        host: npt.NDArray[Any] = x.get()  # cupy.ndarray.get(): a numpy.ndarray (x is untyped: CuPy has no stubs)
        return host
    return np.asarray(x)


def to_module(x: Any, xp: ModuleType) -> Any:
    """`x` as an array of `xp` (an upload or a download when it lives elsewhere); `x` itself
    when it is already there; non-arrays and None unchanged."""
    if x is None or not hasattr(x, "dtype"):
        return x
    if array_module(x) is xp:
        return x
    return to_host(x) if xp is np else xp.asarray(x)


def fetch(*scalars: Any) -> list[Any]:
    """Host numbers of 0-d arrays (and numbers) computed on one device, in one transfer: on a
    GPU every value brought back alone is a synchronization. Booleans come back as bools."""
    arrays_in = [s for s in scalars if is_cupy_array(s)]
    if not arrays_in:
        return [s.item() if isinstance(s, (np.ndarray, np.generic)) else s for s in scalars]
    xp = namespace_of(*arrays_in)
    stacked = to_host(xp.stack([xp.asarray(s, dtype=np.float64) for s in scalars])).tolist()
    return [bool(v) if _is_bool(s) else v for s, v in zip(scalars, stacked)]


class Scalars:
    """Scalars computed on one device, gathered in named groups and brought to the host in one
    transfer (`fetch`): each group is read back by its name, never by its position."""

    def __init__(self) -> None:
        self._groups: dict[str, list[Any]] = {}

    def add(self, name: str, values: Iterable[Any]) -> None:
        self._groups[name] = list(values)

    def fetch(self) -> dict[str, list[Any]]:
        flat = fetch(*(v for group in self._groups.values() for v in group))
        found: dict[str, list[Any]] = {}
        start = 0
        for name, group in self._groups.items():
            found[name] = flat[start : start + len(group)]
            start += len(group)
        return found


def _is_bool(x: Any) -> bool:
    return isinstance(x, bool) or np.dtype(getattr(x, "dtype", float)).kind == "b"


def describe(x: Any) -> str:
    """`float32 array of shape (2, 3)` for messages."""
    if is_array(x):
        kind = "CuPy" if is_cupy_array(x) else "NumPy"
        return f"{kind} {x.dtype} array of shape {tuple(x.shape)}"
    if x is None:
        return "None"
    return f"{type_name(x)} {safe_repr(x, 60)}"


def is_complex(x: Any) -> bool:
    """Whether the array (or dtype) `x` holds complex values."""
    dtype: np.dtype[Any] = np.dtype(getattr(x, "dtype", x))  # NumPy's stubs type np.dtype(<Any>) as Any
    return dtype.kind == "c"


def _floating() -> tuple[dict[np.dtype[Any], float], dict[np.dtype[Any], np.dtype[Any]]]:
    """Each floating and complex dtype's machine epsilon, and the real dtype of each complex one."""
    epsilon: dict[np.dtype[Any], float] = {}
    real: dict[np.dtype[Any], np.dtype[Any]] = {}
    for kind in (np.float16, np.float32, np.float64, np.longdouble, np.complex64, np.complex128, np.clongdouble):
        info = np.finfo(kind)
        epsilon[np.dtype(kind)] = float(info.eps)
        real[np.dtype(kind)] = np.dtype(info.dtype)
    return epsilon, real


# Taken when layercheck is imported, before any code of a layer's runs: a layer that sets
# `np.finfo(np.float64).eps` (an attribute of an object NumPy keeps) changes NumPy's value, not
# the one the verdicts are computed with (sandbox.integrity watches this table).
_EPSILON, _REAL = _floating()


def machine_epsilon(dtype: Any) -> float:
    """`np.finfo(dtype).eps` as it was before any layer ran (of the real part, for complex)."""
    kind: np.dtype[Any] = np.dtype(dtype)
    found = _EPSILON.get(kind)
    return float(np.finfo(kind).eps) if found is None else found  # a dtype NumPy gained since


def precision_of(dtype: Any) -> np.dtype[Any]:
    """The real floating type that carries a dtype's precision (complex64 -> float32)."""
    found: np.dtype[Any] = np.dtype(dtype)  # NumPy's stubs type np.dtype(<Any>) as Any
    if found.kind != "c":
        return found
    real = _REAL.get(found)
    return np.dtype(np.finfo(found).dtype) if real is None else real


def coarser_precision(x: Any, than: Any) -> np.dtype[Any] | None:
    """The precision of the floating array `x` where it is coarser than `than`'s (a float32
    gradient returned for float64 inputs), else None (an integer or non-array `x` too)."""
    if getattr(getattr(x, "dtype", None), "kind", "") not in ("f", "c"):
        return None
    own = precision_of(x.dtype)
    return own if machine_epsilon(own) > machine_epsilon(precision_of(than)) else None


def at_precision(dtype: Any, like: Any) -> np.dtype[Any]:
    """The dtype of `like`'s kind (real or complex) at `dtype`'s precision.

    Learnables keep their kind when the tested precision changes: a real bias stays real
    beside complex inputs and a complex weight stays complex beside real ones.
    """
    real = precision_of(dtype)
    if np.dtype(getattr(like, "dtype", float)).kind == "c":
        return np.result_type(real, np.complex64)
    return real


def cast(x: Any, dtype: Any) -> Any:
    """`x` at `dtype`'s precision, keeping its real or complex kind and its array module."""
    if not is_array(x) or np.dtype(x.dtype).kind not in "fc":
        return x
    return x.astype(at_precision(dtype, x), copy=True)


def read_only(x: Any, dtype: Any) -> Any:
    """`x` at `dtype`, for a layer to read and never write: a read-only view where `x` is a
    NumPy array of that dtype already (no copy), else a copy (CuPy arrays cannot be read-only)."""
    if type(x) is np.ndarray and x.dtype == np.dtype(dtype):
        view = x.view()
        view.flags.writeable = False
        return view
    return x.astype(dtype, copy=True)


def copy_tree(x: Any) -> Any:
    if is_array(x):
        return x.copy()
    if isinstance(x, (tuple, list)):
        return type(x)(copy_tree(v) for v in x)
    return x


def random_array(
    layout: Layout,
    dtype: Any,
    rng: np.random.Generator,
    domain: tuple[float | None, float | None] = (None, None),
) -> npt.NDArray[Any]:
    """Standard normal data (complex normal for complex dtypes) inside `domain`; uniform
    int64 integers in the layout's range for an integer input, with repeats (`_repeated`).
    On the host: inputs are the same values on every device."""
    dtype = np.dtype(dtype)
    low, high = domain
    shape = layout.size
    if layout.integer is not None:
        values = rng.integers(layout.integer[0], layout.integer[1], shape, endpoint=True, dtype=np.int64)
        return _repeated(values, rng) if layout.integer[1] > layout.integer[0] else values
    if low is not None and high is not None:
        span = high - low
        x = rng.uniform(low + 0.05 * span, high - 0.05 * span, shape)
    elif low is not None:
        x = low + rng.lognormal(0.0, 0.75, shape)
    elif high is not None:
        x = high - rng.lognormal(0.0, 0.75, shape)
    else:
        x = rng.standard_normal(shape)
    if dtype.kind == "c":
        x = (x + 1j * rng.standard_normal(shape)) / np.sqrt(2)
    return np.asarray(x, dtype=dtype)


def _repeated(values: npt.NDArray[np.int64], rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """`values` with a quarter of its elements (one at least, of two or more) set to another
    element's value: indices repeat in real data (a word seen twice in a sentence), and a
    backward that adds with `dW[x] += dout` keeps one of each repeat, which draws from a
    range far wider than the array would seldom show."""
    flat = values.reshape(-1)
    if flat.size < 2:
        return values
    n = max(1, flat.size // 4)
    targets = rng.choice(flat.size, n, replace=False)
    sources = (targets + 1 + rng.integers(0, flat.size - 1, n)) % flat.size  # never the target itself
    flat[targets] = flat[sources]
    return values


def at_dtype(x: Any, dtype: Any) -> Any:
    """`x` as `dtype`, except integer inputs, which keep their integers."""
    return x if np.dtype(x.dtype).kind in "iub" else x.astype(dtype)


def _device_state(xp: ModuleType, rng: np.random.Generator) -> Any:
    """A generator on `xp`'s device, seeded from the host generator `rng`.

    The host keeps NumPy's Generator (its draws are the CPU results users reproduce); on the
    GPU the draws are made where they are used, so that nothing of an array's size crosses.
    """
    return xp.random.RandomState(int(rng.integers(2**31)))


def random_like(x: Any, rng: np.random.Generator) -> Any:
    """Random values of unit variance, of `x`'s shape and kind (float64 or complex128), in
    `x`'s module: uniform on (-sqrt 3, sqrt 3), each part for complex. Random signs and random
    magnitudes, as normal values would have, at a few times less the cost of drawing them.

    Continuous, not a few levels: where two weights of a loss are equal, a backward that hands
    one output's dL/dY to the other's place shows no error along any direction."""
    xp = array_module(x)
    if not on_gpu(xp):
        return random_host_like(x, rng)
    state, shape, bound = _device_state(xp, rng), tuple(x.shape), math.sqrt(3)
    if np.dtype(x.dtype).kind == "c":
        return (state.uniform(-bound, bound, shape) + 1j * state.uniform(-bound, bound, shape)) / np.sqrt(2)
    return state.uniform(-bound, bound, shape)


def random_signs(x: Any, rng: np.random.Generator) -> Any:
    """Random +1/-1 (float64) of `x`'s shape, in `x`'s module."""
    xp = array_module(x)
    shape = tuple(x.shape)
    if not on_gpu(xp):
        # One random bit each, unpacked from random bytes: a quarter of the cost of drawing a
        # bounded integer per element (`rng.integers`), the same fair and independent signs;
        # made +1/-1 in bytes, so that the float64 array is written once.
        size = math.prod(shape)
        bits = np.unpackbits(np.frombuffer(rng.bytes((size + 7) // 8), dtype=np.uint8), count=size)
        pm = bits.view(np.int8) * np.int8(2) - np.int8(1)
        return pm.reshape(shape).astype(np.float64)
    signs = _device_state(xp, rng).randint(0, 2, size=shape).astype(xp.float64)
    signs *= 2
    signs -= 1
    return signs


_LEVELS = 1 << 14  # magnitudes of `random_moves`: 1/2 + k / 2^14, k < 2^14
# Elements per chunk of what is computed on the host in chunks (`random_moves`, `product_norm_sq`):
# its temporaries stay in the cache.
_CHUNK = 1 << 16


def chunks(size: int) -> Iterator[slice]:
    """Consecutive slices of at most `_CHUNK` elements that cover `range(size)`: a pass over
    large host arrays whose temporaries stay in the cache."""
    for start in range(0, size, _CHUNK):
        yield slice(start, min(start + _CHUNK, size))


def random_moves(x: Any, rng: np.random.Generator, scale: float = 1.0) -> Any:
    """Random signs times random magnitudes from 1/2 to 3/2 (float64, `x`'s shape, in `x`'s
    module): a direction along which every element moves, by a random share of the step.

    Equal magnitudes (random signs alone) let an error made of equal and opposite parts, a
    backward that swaps two elements' gradients, project to exactly zero whenever their signs
    agree: one draw in two. With 2^15 values, one in 32,768. On the host, from 16 random bits
    per element (the sign and 14 bits of magnitude) in 16-bit integers: a float64 array is
    written once, for a fifth of the cost of drawing continuous magnitudes.

    `scale`: the moves times `scale`, in the same pass (a move t v drawn as it is used; the
    same values as the moves scaled after, each magnitude being exact before the one rounding)."""
    xp = array_module(x)
    shape = tuple(x.shape)
    if on_gpu(xp):
        state = _device_state(xp, rng)
        moves = state.uniform(0.5, 1.5, shape)
        moves *= state.randint(0, 2, size=shape) * 2 - 1
        if scale != 1.0:
            moves *= scale
        return moves
    size = math.prod(shape)
    moves = np.empty(size, dtype=np.float64)
    # In chunks of whole 64-bit draws: the integers made on the way stay in the cache and
    # hold no memory of the argument's size (the check's peak is counted in copies of it),
    # and the draws are those of one call, chunk after chunk.
    for part in chunks(size):
        n = part.stop - part.start
        # Little-endian whatever the machine: a seed draws the same moves everywhere.
        raw = rng.bit_generator.random_raw((n + 3) // 4).astype("<u8", copy=False)
        bits = raw.view("<i2")[:n]
        negative = bits >> 15  # -1 where the sign bit is set, else 0
        bits &= _LEVELS - 1
        bits += _LEVELS // 2  # 2^13 + k: a magnitude of 1/2 + k / 2^14, in units of 2^-14
        bits ^= negative  # two's complement: (n ^ -1) - (-1) = -n
        bits -= negative
        # 1 / 2^14 exact, and the scaled product rounded once: the moves drawn, then scaled.
        np.multiply(bits, scale / _LEVELS, out=moves[part])
    return moves.reshape(shape)


def random_host_like(x: Any, rng: np.random.Generator) -> npt.NDArray[Any]:
    """`random_like` drawn on the host whatever `x`'s module: for values that must be the same
    on the CPU and on the GPU (the dL/dY of a parity check)."""
    shape, bound = tuple(x.shape), math.sqrt(3)
    if np.dtype(x.dtype).kind == "c":
        # complex * ndarray is Any to NumPy's stubs
        z: npt.NDArray[Any] = (rng.uniform(-bound, bound, shape) + 1j * rng.uniform(-bound, bound, shape)) / np.sqrt(2)
        return np.asarray(z)
    # rng.uniform(-bound, bound, shape) (low + range * u of the same draws, rounded once per
    # operation here), in two vectorized passes instead of one scalar formula per element;
    # in chunks, the same draws (one 64-bit draw per value, in order), scaled while in the
    # cache. An array for a 0-d `x` too.
    u = np.empty(shape)
    flat = u.reshape(-1)
    for part in chunks(flat.size):
        values = flat[part]
        rng.random(out=values)
        values *= 2 * bound
        values -= bound
    return u


def dot(a: Any, b: Any) -> Any:
    """sum(Re(conj(a) * b)) of two arrays in one module, left where it was computed (a 0-d
    array on the GPU: `fetch` brings several at once).

    On the host without BLAS: a BLAS dot product wakes the library's threads, which then spin
    beside the layer's own calls (several times the cost of the sum itself on a busy machine)."""
    xp = namespace_of(a, b)
    if xp is not np:
        return xp.vdot(a, b).real
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return np.vdot(a, b).real
    if a.dtype.kind == "c" and b.dtype.kind == "c":
        return _host_dot(a.real, b.real) + _host_dot(a.imag, b.imag)
    return _host_dot(a.real, b.real)


def dot_and_norms(a: Any, b: Any) -> tuple[Any, Any, Any]:
    """(dot(a, b), |a * b|^2, |b|^2) of two arrays of one module, left where they were
    computed: a gradient's projection on a move, its terms' size and the move's. On the host,
    for real arrays of one shape, in one pass over both in chunks (each read once, where the
    three apart read them five times); else as `dot`, `product_norm_sq` and `norm_sq`."""
    xp = namespace_of(a, b)
    real = xp is np and np.dtype(a.dtype).kind in "fiu" and np.dtype(b.dtype).kind in "fiu"
    if not real or np.shape(a) != np.shape(b) or math.prod(np.shape(a)) <= _CHUNK:
        return dot(a, b), product_norm_sq(a, b), norm_sq(b)
    flat_a, flat_b = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
    projection = terms = size = 0.0
    for chunk in chunks(flat_a.size):
        part_b = flat_b[chunk]
        part = flat_a[chunk] * part_b
        projection += float(part.sum())
        terms += float(_host_dot(part, part))
        size += float(_host_dot(part_b, part_b))
    return projection, terms, size


def norm_sq(a: Any) -> Any:
    """|a|^2 = dot(a, a), left where it was computed."""
    return dot(a, a)


def displaced(value: Any, move: Any, sign: int, into_move: bool = False) -> Any:
    """value + sign * move; with `into_move` (the move is not needed any more) written into
    the move where its dtype and shape hold the result, no new array made."""
    # A move of a 0-d argument may be a NumPy scalar (t * v of a 0-d array is one): no array
    # to write into.
    holds = (
        into_move
        and is_array(move)
        and np.result_type(value.dtype, move.dtype) == move.dtype
        and move.shape == np.shape(value)
    )
    xp = namespace_of(value, move)
    return (xp.add if sign > 0 else xp.subtract)(value, move, out=move if holds else None)


def product_norm_sq(*factors: Any) -> Any:
    """|f1 * f2 * ...|^2 of arrays of one shape (a boolean one is a mask), left where it was
    computed. On the host in chunks: no array of their size is made, whose first touch of
    fresh memory would cost more than the product itself."""
    xp = namespace_of(*factors)
    shape = np.shape(factors[0])
    small = len(factors) == 1 or math.prod(shape) <= _CHUNK
    if xp is not np or small or any(np.shape(f) != shape for f in factors):
        product = factors[0]
        for f in factors[1:]:
            product = product * f
        return norm_sq(product)
    flat = [np.asarray(f).reshape(-1) for f in factors]
    total = 0.0
    for chunk in chunks(flat[0].size):
        part = flat[0][chunk] * flat[1][chunk]
        for f in flat[2:]:
            part = part * f[chunk]  # not in place: a later factor may be complex
        total += float(dot(part, part))
    return total


def _host_dot(a: npt.NDArray[Any], b: npt.NDArray[Any]) -> Any:
    """sum(a * b) of two real NumPy arrays of one shape, in one pass and without a temporary."""
    axes = list(range(a.ndim))
    return np.einsum(a, axes, b, axes, [])
