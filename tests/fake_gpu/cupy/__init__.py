"""A stand-in for CuPy 14.2.0 on machines without a GPU, so that layercheck's GPU code paths run in
CI; only the tests put this folder on sys.path (a real GPU run uses the real CuPy, tests marked
`gpu`).

What it is: `cupy.ndarray` is a wrapper (not a numpy.ndarray subclass) around a NumPy array that
stands for device memory; every computation is NumPy's on that array, so dtypes and values are
NumPy's, and every array or NumPy-scalar result comes back as a cupy.ndarray (0-d for scalars), as
CuPy's do. NumPy functions reach it through `__array_ufunc__`/`__array_function__` exactly as they
reach CuPy (numpy.X -> cupy.X, numpy.linalg.X -> cupy.linalg.X, ...). Bytes crossing between host
and "device" are counted by the separate module `transfer_ledger` (beside this package).

What it refuses, as CuPy does: implicit conversion to NumPy (`np.asarray(x)`, `np.array(x)`,
`np.ascontiguousarray(x)`, `np.testing.*` on a cupy array, `cupy.array` of a list mixing cupy and
NumPy arrays raise "Implicit conversion to a NumPy array is not allowed..."); a numpy.ndarray of
any shape where CuPy wants a device array, in CuPy's words for each: an operand or `out=` of an
operator or a ufunc, or an item of `cupy.concatenate` ("Unsupported type <class
'numpy.ndarray'>"), an argument of `@`/`matmul`/`dot`/`tensordot`/`stack`/`expand_dims`/
`broadcast_to` (Cython's "Argument 'b' has incorrect type ..."), of `count_nonzero`, `all`, `any`,
`column_stack`, and `x[...] = v`/`x.fill(v)`/`copyto` of more than one element ("non-scalar
numpy.ndarray cannot be used for fill"); NumPy-only keywords (`where=`, `initial=` on reductions
and ufuncs); lists as ufunc operands (NumPy's "operand type(s) all returned NotImplemented");
numpy functions cupy lacks ("no implementation found"); dtypes CuPy lacks. What CuPy does with a
NumPy array instead of refusing it, it does too: `cupy.sum`/`mean`/`max`/`transpose`/... call the
array's own method (NumPy computes on the host), `cupy.hstack`/`vstack`/`einsum` upload it. Only
those, `cupy.array`/`asarray`/`asanyarray`/`ascontiguousarray`/`asfortranarray`/
`asarray_chkfinite`, the loaders (`load`, `fromfunction`, `frombuffer`, ...), `x.set()`, indexing
and assignment with an index array take host data: those are the uploads.
tests/test_cupy_refusals.py holds these refusals against tests/reference/cupy-14.2.0-refusals.json
(recorded from the real CuPy 14.2.0 where it needs no GPU, read from its source where it does);
functions not modelled there refuse any NumPy array with "Unsupported type".

What it leaves out (code using them fails in CI instead of passing): everything that needs a GPU
to be faithful: `__cuda_array_interface__`, `__dlpack__`, `__dlpack_device__`, `toDlpack`,
`from_dlpack`, `data` and `memptr` (device pointers), `cstruct`, `mdspan`, `reduced_view`,
`scatter_add/max/min`, `flat`, CUDA kernels (`ElementwiseKernel`, `RawKernel`, `RawModule`,
`ReductionKernel`, `fuse`, `vectorize`), streams and events, `cupyx`; and the cupy names whose
NumPy counterparts would run user functions on host arrays (`apply_along_axis`, `piecewise`, ...).
Random draws are NumPy's (seeded the same way, but not the numbers cuRAND would give).

tests/test_fake_cupy.py holds this stand-in against the recorded surface and behaviour of the real
CuPy (tests/reference/cupy-14.2.0-surface.json): every public name here is one CuPy has, every
ndarray attribute is one cupy.ndarray has, and each recorded behaviour is reproduced.
"""

import builtins as _builtins

import numpy as _np

from cupy import cuda  # noqa: F401  (first: the arrays count their memory in cuda.memory)
from cupy._array import (  # noqa: F401
    _call,
    _check_array,
    _check_cupy_like,
    _check_typed,
    _download,
    _kernel_argument,
    _result,
    _to_device,
    _ufunc,
    _unsupported,
    _unwrap,
    _wrap,
    ndarray,
    ufunc,
)

__version__ = "14.2.0"

# -- NumPy's names that CuPy has too ------------------------------------------------------------------
# Names of the real CuPy 14.2.0 that NumPy (2.x or 1.2x) also has, computed here by NumPy. A name the
# installed NumPy lacks is left out. ufuncs become stand-in ufuncs; other functions unwrap cupy
# arrays, refuse NumPy arrays and wrap array results.
_NUMPY_NAMES = """
abs absolute acos acosh add all allclose alltrue amax amin angle any append arange arccos arccosh
arcsin arcsinh arctan arctan2 arctanh argmax argmin argpartition argsort argwhere around array_equal
array_equiv array_split asin asinh astype atan atan2 atanh atleast_1d atleast_2d atleast_3d average
bartlett bincount bitwise_and bitwise_count bitwise_invert bitwise_left_shift bitwise_not bitwise_or
bitwise_right_shift bitwise_xor blackman bool_ broadcast_arrays broadcast_to byte cbrt cdouble
ceil choose clip column_stack complex128 complex64 complexfloating compress concat concatenate conj
conjugate convolve copy copysign copyto corrcoef correlate cos cosh count_nonzero cov cross csingle
cumprod cumproduct cumsum cumulative_prod cumulative_sum deg2rad degrees delete diag diag_indices
diag_indices_from diagflat diagonal diff digitize divide divmod dot double dsplit dstack dtype e
ediff1d einsum empty empty_like equal euler_gamma exp exp2 expand_dims expm1 extract eye fabs
fill_diagonal finfo fix flatnonzero flip fliplr flipud float16 float32 float64 float_power floating
floor floor_divide fmax fmin fmod frexp full full_like gcd generic gradient greater greater_equal
half hamming hanning heaviside histogram histogram2d histogramdd hsplit hstack hypot i0 identity
iinfo imag in1d indices inexact inf inner int16 int32 int64 int8 int_ intc integer interp
intersect1d intp invert isclose iscomplex isfinite isfortran isin isinf isnan isneginf isposinf
isreal ix_ kaiser kron lcm ldexp left_shift less less_equal lexsort linspace log log10 log1p log2
logaddexp logaddexp2 logical_and logical_not logical_or logical_xor logspace longlong matmul
matrix_transpose max maximum may_share_memory mean median meshgrid min minimum mod modf moveaxis msort
multiply nan nan_to_num nanargmax nanargmin nancumprod nancumsum nanmax nanmean nanmedian nanmin
nanprod nanstd nansum nanvar negative nextafter nonzero not_equal number ones ones_like outer packbits
pad partition percentile permute_dims pi poly polyadd polyfit polymul polysub polyval positive pow
power prod product ptp put put_along_axis putmask quantile rad2deg radians ravel ravel_multi_index
real real_if_close reciprocal remainder repeat require reshape resize right_shift rint roll rollaxis
roots rot90 round round_ row_stack s_ searchsorted select setdiff1d setxor1d shape shares_memory short
sign signbit signedinteger sin sinc single sinh size sometrue sort sort_complex split sqrt square
squeeze stack std subtract sum swapaxes take take_along_axis tan tanh tensordot tile trace transpose
trapezoid trapz tri tril tril_indices tril_indices_from trim_zeros triu triu_indices triu_indices_from
true_divide trunc ubyte uint uint16 uint32 uint64 uint8 uintc uintp ulonglong union1d unique
unique_all unique_counts unique_inverse unique_values unpackbits unravel_index unsignedinteger unwrap
ushort vander var vdot vsplit vstack where zeros zeros_like
""".split()

# NumPy's own objects, as CuPy re-exports them (no arrays go in or out).
_NUMPY_AS_IS = frozenset(
    "promote_types issubdtype isdtype mintypecode typename iterable broadcast_shapes get_printoptions"
    " set_printoptions printoptions format_float_positional format_float_scientific index_exp s_"
    " e euler_gamma inf nan pi".split()
)

# Functions about dtypes and shapes, which CuPy answers for NumPy arrays too (no result is wrapped).
_METADATA = frozenset(
    "result_type can_cast common_type min_scalar_type isscalar ndim iscomplexobj isrealobj"
    " binary_repr base_repr".split()
)

# NumPy gives a Python bool or int; CuPy a 0-d cupy.ndarray (recorded for allclose and
# array_equal; count_nonzero is below).
_PYTHON_RESULT_ON_DEVICE = frozenset("allclose array_equal array_equiv".split())


def _device_function(name, fn, module="cupy"):
    if name in _PYTHON_RESULT_ON_DEVICE:

        def function(*args, **kwargs):
            r = _call(fn, args, kwargs)
            return _wrap(_np.asarray(r)) if type(r) in (_builtins.bool, _builtins.int, _builtins.float) else r

    else:

        def function(*args, **kwargs):
            return _call(fn, args, kwargs)

    function.__name__ = function.__qualname__ = name
    function.__module__ = module
    function.__doc__ = f"Stand-in for {module}.{name}: {fn.__module__}.{fn.__name__} on the device copy."
    return function


def _metadata_function(name, fn):
    def function(*args, **kwargs):
        return fn(*[_unwrap_meta(v) for v in args], **{k: _unwrap_meta(v) for k, v in kwargs.items()})

    function.__name__ = function.__qualname__ = name
    function.__module__ = "cupy"
    function.__doc__ = f"Stand-in for cupy.{name}: numpy.{name}, on cupy or NumPy arrays."
    return function


def _unwrap_meta(v):
    return v._a if isinstance(v, ndarray) else v


def _numpy_attribute(name):
    value = getattr(_np, name, None)
    if value is None and hasattr(_np, "exceptions"):
        value = getattr(_np.exceptions, name, None)
    return value


def _export(names):
    g = globals()
    for name in names:
        value = _numpy_attribute(name)
        if value is None or isinstance(value, type(_np)):
            continue
        if name in _NUMPY_AS_IS or isinstance(value, type) or not callable(value):
            g[name] = value
        elif isinstance(value, _np.ufunc):
            g[name] = _ufunc(value)
        elif name in _METADATA:
            g[name] = _metadata_function(name, value)
        else:
            g[name] = _device_function(name, value)


_export(_NUMPY_NAMES)
_export(_METADATA)
_export("AxisError ComplexWarning ModuleDeprecationWarning RankWarning TooHardError VisibleDeprecationWarning".split())
newaxis = None
if _np.__version__ >= "2":  # as cupy/__init__.py picks them
    bool = _np.bool  # noqa: A001
    long = _np.long
    ulong = _np.ulong
else:
    bool = _np.bool_  # noqa: A001
    long = _np.int_
    ulong = _np.uint

# CuPy's aliases of NumPy 1.x names (cupy/__init__.py), where this NumPy has dropped them.
PINF = Inf = Infinity = infty = _np.inf
NINF = -_np.inf
NAN = NaN = _np.nan
PZERO = 0.0
NZERO = -0.0
float_ = _np.float64
complex_ = cfloat = _np.complex128
singlecomplex = _np.complex64
if "alltrue" not in globals():
    alltrue = all  # noqa: F821 - made by _export
    sometrue = any  # noqa: F821
if "trapz" not in globals() and "trapezoid" in globals():
    trapz = trapezoid  # noqa: F821
if "cumproduct" not in globals():
    cumproduct = cumprod  # noqa: F821
    product = prod  # noqa: F821
if "round_" not in globals():
    round_ = round  # noqa: F821
if "msort" not in globals():

    def msort(a):
        return sort(a, axis=0)  # noqa: F821


if "in1d" not in globals():

    def in1d(ar1, ar2, assume_unique=False, invert=False):
        return isin(ar1, ar2, assume_unique=assume_unique, invert=invert).ravel()  # noqa: F821


disable_experimental_feature_warning = False


# -- where CuPy's functions take their arguments otherwise than NumPy's -------------------------------
# Each as the CuPy 14.2.0 source has it, so that a NumPy array meets the check CuPy gives it (and
# the same message) or goes where CuPy sends it: NumPy's own method (cupy.sum), an upload
# (cupy.hstack, cupy.einsum) or a refusal of its own (cupy.copyto). tests/test_cupy_refusals.py
# holds them against tests/reference/cupy-14.2.0-refusals.json. Functions not listed here refuse
# any NumPy array with the ufuncs' "Unsupported type".


# cupy/_math/sumprod.py, _statistics/meanvar.py, _statistics/order.py, _manipulation/transpose.py:
# the method of whatever comes in, so a NumPy array is computed on the host by NumPy, and the
# parameters are CuPy's (NumPy's where=, initial=, ... are refused).
def sum(a, axis=None, dtype=None, out=None, keepdims=False):  # noqa: A001
    return a.sum(axis, dtype, out, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    return a.prod(axis, dtype, out, keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    return a.mean(axis=axis, dtype=dtype, out=out, keepdims=keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return a.var(axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return a.std(axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)


def amax(a, axis=None, out=None, keepdims=False):
    return a.max(axis=axis, out=out, keepdims=keepdims)


def amin(a, axis=None, out=None, keepdims=False):
    return a.min(axis=axis, out=out, keepdims=keepdims)


max = amax  # noqa: A001  (as CuPy: NumPy's numpy.max reaches a function named amax)
min = amin  # noqa: A001


def transpose(a, axes=None):
    return a.transpose(axes)


# cupy/_logic/truth.py: checked first (cupy/_util.pyx check_array).
def all(a, axis=None, out=None, keepdims=False):  # noqa: A001
    _check_array(a, "a")
    return a.all(axis=axis, out=out, keepdims=keepdims)


def any(a, axis=None, out=None, keepdims=False):  # noqa: A001
    _check_array(a, "a")
    return a.any(axis=axis, out=out, keepdims=keepdims)


# cupy/_sorting/count.py: a reduction kernel, with CuPy's own type check.
def count_nonzero(a, axis=None):
    _check_cupy_like(a, "Argument 'a'")
    return _wrap(_np.asarray(_np.count_nonzero(a._a, axis=axis)))


# Compiled functions whose array parameters are typed `_ndarray_base` (Cython's check).
def dot(a, b, out=None):
    return a.dot(b, out)  # cupy/linalg/_product.py: NumPy's dot for a NumPy `a`


def matmul(*args, **kwargs):
    # A _GUFunc over _routines_linalg.pyx matmul(_ndarray_base a, _ndarray_base b, ...).
    _check_typed(**dict(zip(("a", "b"), args)))
    return _call(_np.matmul, args, kwargs)


def tensordot(a, b, axes=2):
    # cupy/linalg/_product.py: ends in _core.tensordot_core(_ndarray_base a, _ndarray_base b, ...).
    _check_typed(a=a, b=b)
    return _call(_np.tensordot, (a, b), {"axes": axes})


def expand_dims(a, axis):
    _check_typed(a=a)  # _routines_manipulation.pyx _expand_dims
    return _call(_np.expand_dims, (a, axis), {})


def broadcast_to(array, shape):
    _check_typed(array=array)  # _routines_manipulation.pyx broadcast_to
    return _call(_np.broadcast_to, (array, shape), {})


# cupy/_manipulation/join.py and _routines_manipulation.pyx concatenate_method.
def concatenate(tup, axis=0, out=None, *, dtype=None, casting="same_kind"):
    if axis is None:
        tup = [m.ravel() for m in tup]
        axis = 0
    arrays = list(tup)
    for item in arrays:  # every item as a kernel argument first: a NumPy array is "Unsupported type"
        _kernel_argument(item)
    if len(arrays) == 0:
        raise ValueError("Cannot concatenate from empty tuple")
    for item in arrays:
        if not isinstance(item, ndarray):
            raise TypeError("Only cupy arrays can be concatenated")
    for item in arrays:
        if item.ndim == 0:
            raise TypeError("zero-dimensional arrays cannot be concatenated")
    kwargs = {"casting": casting} if dtype is None else {"dtype": dtype, "casting": casting}
    return _call(_np.concatenate, (arrays, axis, out), kwargs)


def stack(tup, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return concatenate([expand_dims(x, axis) for x in tup], axis, out, dtype=dtype, casting=casting)


def column_stack(tup):
    if _builtins.any(not isinstance(a, ndarray) for a in tup):
        raise TypeError("Only cupy arrays can be column stacked")
    return _call(_np.column_stack, (list(tup),), {})


def _atleast(numpy_function, arys):
    # cupy/_manipulation/dims.py _atleast_nd_helper: cupy.asarray first (host data is uploaded).
    res = []
    for a in arys:
        a = asarray(a)
        res.append(_result(numpy_function(a._a), (a,)))
    return res[0] if len(res) == 1 else res


def atleast_1d(*arys):
    return _atleast(_np.atleast_1d, arys)


def atleast_2d(*arys):
    return _atleast(_np.atleast_2d, arys)


def atleast_3d(*arys):
    return _atleast(_np.atleast_3d, arys)


def hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, 0 if arrs[0].ndim == 1 else 1, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    return concatenate([atleast_2d(m) for m in tup], 0, dtype=dtype, casting=casting)


def dstack(tup):
    return concatenate([atleast_3d(m) for m in tup], 2)


# cupy/_manipulation/basic.py: a NumPy source of more than one element is refused, one of a single
# element is taken as a scalar.
def copyto(dst, src, casting="same_kind", where=None):
    if isinstance(src, _np.ndarray):
        if src.size != 1:
            raise ValueError("non-scalar numpy.ndarray cannot be used for copyto")
        src = src.squeeze()[()]
    _call(_np.copyto, (dst, src), {"casting": casting, "where": True if where is None else where})


# cupy/linalg/_einsum.py: parsing the arguments puts every operand through cupy.asarray (host data
# is uploaded); then only dtype= and optimize= are understood.
def einsum(*operands, **kwargs):
    operands = list(operands)
    if isinstance(operands[0], str):
        positions = range(1, len(operands))
    else:  # einsum(op0, sublist0, op1, sublist1, ..., [sublistout])
        positions = range(0, len(operands) - len(operands) % 2, 2)
    for i in positions:
        operands[i] = asarray(operands[i])._a
    dtype = kwargs.pop("dtype", None)
    optimize = kwargs.pop("optimize", False)
    if kwargs:
        raise TypeError(f"Did not understand the following kwargs: {list(kwargs.keys())}")
    return _result(_np.einsum(*operands, dtype=dtype, optimize=optimize))


# -- index tricks ----------------------------------------------------------------------------------


class _IndexTrick:
    def __init__(self, numpy_object):
        self._numpy_object = numpy_object

    def __getitem__(self, key):
        return _call(self._numpy_object.__getitem__, (key,), {})


c_ = _IndexTrick(_np.c_)
r_ = _IndexTrick(_np.r_)
mgrid = _IndexTrick(_np.mgrid)
ogrid = _IndexTrick(_np.ogrid)


# -- host data in: the uploads ----------------------------------------------------------------------


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    """A cupy.ndarray of `obj`; host data (NumPy arrays, lists, scalars) is uploaded."""
    return _to_device(obj, "array", dtype, copy, order, ndmin)


def asarray(a, dtype=None, order=None, *, copy=None, blocking=False):
    return _to_device(a, "asarray", dtype, _builtins.bool(copy), order or "K")


def asanyarray(a, dtype=None, order=None, *, copy=None, blocking=False):
    return _to_device(a, "asanyarray", dtype, _builtins.bool(copy), order or "K")


def ascontiguousarray(a, dtype=None):
    if isinstance(a, ndarray):
        return _result(_np.ascontiguousarray(a._a, dtype=dtype), (a,))
    return _to_device(_np.ascontiguousarray(a, dtype=dtype), "ascontiguousarray")


def asfortranarray(a, dtype=None):
    if isinstance(a, ndarray):
        return _result(_np.asfortranarray(a._a, dtype=dtype), (a,))
    return _to_device(_np.asfortranarray(a, dtype=dtype), "asfortranarray", order="F")


def asarray_chkfinite(a, dtype=None, order=None):
    a = _to_device(a, "asarray_chkfinite", dtype, False, order or "K")
    if not _np.isfinite(a._a).all():
        raise ValueError("array must not contain infs or NaNs")
    return a


def _host_loader(name):
    numpy_function = getattr(_np, name)

    def load(*args, **kwargs):
        return _to_device(numpy_function(*args, **kwargs), name)

    load.__name__ = load.__qualname__ = name
    load.__doc__ = f"numpy.{name} on the host, uploaded (as CuPy's)."
    return load


fromfunction = _host_loader("fromfunction")
frombuffer = _host_loader("frombuffer")
fromfile = _host_loader("fromfile")
fromiter = _host_loader("fromiter")
fromstring = _host_loader("fromstring")
loadtxt = _host_loader("loadtxt")
genfromtxt = _host_loader("genfromtxt")


class _NpzFile:
    """cupy.load of an .npz file: each array is uploaded when read."""

    def __init__(self, npz_file):
        self.npz_file = npz_file

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.npz_file.close()

    def __getitem__(self, key):
        return _to_device(self.npz_file[key], "load")

    @property
    def files(self):
        return self.npz_file.files

    def close(self):
        self.npz_file.close()


def load(file, mmap_mode=None, allow_pickle=None):
    obj = _np.load(file, mmap_mode=mmap_mode, allow_pickle=allow_pickle is True)
    if isinstance(obj, _np.ndarray):
        return _to_device(obj, "load")
    if isinstance(obj, _np.lib.npyio.NpzFile):
        return _NpzFile(obj)
    return obj


# -- device data out: the downloads -----------------------------------------------------------------


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    """A NumPy array of `a`: a download for a cupy.ndarray, numpy.asarray otherwise."""
    if isinstance(a, ndarray):
        _download(a.nbytes, "asnumpy")
        data = _np.array(a._a, order=order, copy=True)
    else:
        data = _np.asarray(a, order=order)
    if out is not None:
        out[...] = data
        return out
    return data


def _host(a, what):
    if isinstance(a, ndarray):
        _download(a.nbytes, what)
        return a._a
    return a


def save(file, arr, allow_pickle=None):
    _np.save(file, _host(arr, "save"), allow_pickle=allow_pickle is not False)


def savez(file, *args, **kwds):
    _np.savez(file, *[_host(a, "savez") for a in args], **{k: _host(a, "savez") for k, a in kwds.items()})


def savez_compressed(file, *args, **kwds):
    _np.savez_compressed(file, *[_host(a, "savez") for a in args], **{k: _host(a, "savez") for k, a in kwds.items()})


def savetxt(fname, X, *args, **kwargs):
    _np.savetxt(fname, _host(X, "savetxt"), *args, **kwargs)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    return _np.array_repr(_host(arr, "repr"), max_line_width, precision, suppress_small)


def array_str(arr, max_line_width=None, precision=None, suppress_small=None):
    return _np.array_str(_host(arr, "str"), max_line_width, precision, suppress_small)


def array2string(a, *args, **kwargs):
    return _np.array2string(_host(a, "str"), *args, **kwargs)


# -- CuPy's own -------------------------------------------------------------------------------------


def get_array_module(*args):
    """cupy if any argument is a cupy.ndarray, else numpy."""
    import sys

    for arg in args:
        if isinstance(arg, ndarray):
            return sys.modules[__name__]
    return _np


def is_available():
    return cuda.is_available()


def get_default_memory_pool():
    return cuda.memory._default_pool


def get_default_pinned_memory_pool():
    return cuda.memory._default_pinned_pool


def show_config(*, _full=False):
    print(
        f"CuPy Version          : {__version__} (stand-in, tests/fake_gpu)\nNumPy Version         : {_np.__version__}"
    )


from cupy import fft, linalg, random, testing  # noqa: E402,F401
