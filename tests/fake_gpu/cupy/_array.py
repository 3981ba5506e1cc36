"""The stand-in's `ndarray` and `ufunc`, and the conversions between host and "device".

Private: `cupy/__init__.py` says what the stand-in is. Everything here computes with NumPy on a
NumPy array that only this module touches (the slot `_a`); what crosses the boundary is checked
as CuPy checks it and counted in `transfer_ledger`.
"""

import functools
import sys
import types
import warnings

import numpy as np
import transfer_ledger

from cupy.cuda import memory as _memory

_cupy = sys.modules["cupy"]  # the package, still being imported: looked up at call time only

# Dtypes CuPy arrays can have, and the scalar types CuPy takes as kernel arguments
# (cupy/_core/_scalar.pyx: Python int, float, bool, complex and the NumPy scalars of those dtypes).
_DTYPE_CHARS = frozenset("?bBhHiIlLqQefdFD")
_SCALAR_TYPES = frozenset({int, float, bool, complex} | {np.dtype(c).type for c in _DTYPE_CHARS})
_COMPARISONS = frozenset({"greater", "greater_equal", "less", "less_equal", "equal", "not_equal"})


def _unsupported(value):
    # cupy/_core/_scalar.pyx (CScalar): what a kernel argument that is neither a cupy.ndarray nor
    # a scalar meets, NumPy arrays included: ufunc operands and outputs, cupy.concatenate's items.
    return TypeError(f"Unsupported type {type(value)}")


# CuPy's other refusals of a non-CuPy array, each with its own words (recorded from CuPy 14.2.0 in
# tests/reference/cupy-14.2.0-refusals.json). Compiled functions declare their array parameters
# `_ndarray_base` and Cython checks them on the call, before any device work.
_NDARRAY_BASE = "cupy._core.core._ndarray_base"
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement


def _tp_name(t):
    """A type as Cython's messages name it (its C tp_name): NumPy's as numpy.ndarray, builtins and
    classes from class statements by their bare name."""
    if t.__module__ == "builtins" or t.__flags__ & _HEAP_TYPE:
        return t.__name__
    return f"{t.__module__}.{t.__qualname__}"


def _check_typed(**arguments):
    """Cython's check of `_ndarray_base` parameters, in their order (None passes, as in Cython)."""
    for name, value in arguments.items():
        if value is not None and not isinstance(value, ndarray):
            raise TypeError(
                f"Argument '{name}' has incorrect type (expected {_NDARRAY_BASE}, got {_tp_name(type(value))})"
            )


def _check_cupy_like(value, what):
    """CuPy's own check where a kernel takes only device arrays (core.pxd _convert_from_cupy_like),
    e.g. reduction kernels such as cupy.count_nonzero."""
    if not isinstance(value, ndarray):
        raise TypeError(f"{what} has incorrect type (expected <class '{_NDARRAY_BASE}'>, got {type(value)}).")


def _check_array(value, arg_name):
    """cupy/_util.pyx check_array, which cupy.all, cupy.any, ... call first."""
    if not isinstance(value, ndarray):
        raise TypeError(f"'{arg_name}' must be a cupy.ndarray object, not {type(value)}.")


def _implicit_conversion():
    return TypeError(
        "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy array explicitly."
    )


def _only_keywords(name, kwargs):
    """Cython's refusal of a keyword a compiled method does not take (NumPy's where=, initial=, ...)."""
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")


def _upload(nbytes, what):
    transfer_ledger.record(transfer_ledger.UPLOAD, nbytes, what)


def _download(nbytes, what):
    transfer_ledger.record(transfer_ledger.DOWNLOAD, nbytes, what)


# -- wrapping and unwrapping ------------------------------------------------------------------------


def _wrap(a):
    """A cupy.ndarray on NumPy array `a` (already on the "device": nothing is counted)."""
    if a.dtype.char not in _DTYPE_CHARS:
        raise ValueError(f"Unsupported dtype {a.dtype}")
    _memory._default_pool._track(a)
    r = object.__new__(ndarray)
    r._a = a
    return r


def _result(r, keep=()):
    """NumPy's result as CuPy's: arrays and NumPy scalars become cupy.ndarray (0-d for scalars);
    an array that is the storage of one of `keep` (an input or `out`) comes back as that array."""
    if isinstance(r, np.ndarray):
        for w in keep:
            if w._a is r:
                return w
        return _wrap(r)
    if isinstance(r, np.generic):
        return _wrap(np.asarray(r))
    t = type(r)
    if t is tuple or t is list:
        return t([_result(i, keep) for i in r])
    if isinstance(r, tuple) and hasattr(r, "_fields"):  # NumPy's named results (SVDResult, ...)
        return t(*[_result(i, keep) for i in r])
    return r


def _unwrap(v):
    """An argument for NumPy: a cupy.ndarray gives its storage; a NumPy array is refused as
    CuPy refuses it (it would be an implicit upload); lists and tuples are looked into."""
    t = type(v)
    if t is ndarray:
        return v._a
    if t in _SCALAR_TYPES or v is None:
        return v
    if isinstance(v, np.ndarray):
        raise _unsupported(v)
    if t is list or t is tuple:
        return t([_unwrap(i) for i in v])
    if isinstance(v, ndarray):
        return v._a
    return v


def _arrays_in(args, kwargs):
    found = [v for v in args if isinstance(v, ndarray)]
    for v in kwargs.values():
        if isinstance(v, ndarray):
            found.append(v)
        elif type(v) is tuple:
            found.extend(i for i in v if isinstance(i, ndarray))
    return found


def _call(fn, args, kwargs):
    """fn (a NumPy callable) on the unwrapped arguments, its result wrapped."""
    r = fn(*[_unwrap(v) for v in args], **{k: _unwrap(v) for k, v in kwargs.items()})
    return _result(r, _arrays_in(args, kwargs))


def _host_leaves(obj):
    """(elements that come from the host, whether any come from the device) in nested data."""
    if isinstance(obj, ndarray):
        return 0, True
    if isinstance(obj, np.ndarray):
        return obj.size, False
    if type(obj) is list or type(obj) is tuple:
        host, device = 0, False
        for item in obj:
            h, d = _host_leaves(item)
            host, device = host + h, device or d
        return host, device
    return 1, False


def _to_device(obj, what, dtype=None, copy=True, order="K", ndmin=0):
    """cupy.array and its kin: a cupy.ndarray is used (or copied) on the device; anything else is
    host data, copied into a new device array and counted as an upload."""
    if isinstance(obj, ndarray):
        a = obj._a
        if copy:
            r = np.array(a, dtype=dtype, order=order, copy=True, ndmin=ndmin)
        else:
            r = np.asarray(a, dtype=dtype, order=None if order == "K" else order)
            if r.ndim < ndmin:
                r = r.reshape((1,) * (ndmin - r.ndim) + r.shape)
        return obj if r is a else _wrap(r)
    host, device = _host_leaves(obj)
    if device and _nested_shape(obj) is None:
        # CuPy joins a nested sequence on the device only when its leaves are cupy arrays of one
        # shape (core.pyx _compute_concat_info_impl); any other mix goes through numpy.array,
        # which the cupy leaves refuse.
        raise _implicit_conversion()
    data = _unwrap_nested(obj) if device else obj
    r = np.array(data, dtype=dtype, order=order, copy=True, ndmin=ndmin)
    if r.dtype.char not in _DTYPE_CHARS:
        raise ValueError(f"Unsupported dtype {r.dtype}")
    if host:
        _upload(r.nbytes, what)
    return _wrap(r)


def _nested_shape(obj):
    """The shape of nested lists/tuples of cupy arrays of one shape, else None."""
    if isinstance(obj, ndarray):
        return obj.shape
    if (type(obj) is not list and type(obj) is not tuple) or not obj:
        return None
    first = _nested_shape(obj[0])
    if first is None or any(_nested_shape(item) != first for item in obj[1:]):
        return None
    return (len(obj),) + first


def _unwrap_nested(obj):
    if isinstance(obj, ndarray):
        return obj._a
    if type(obj) is list or type(obj) is tuple:
        return [_unwrap_nested(i) for i in obj]
    return obj


def _index(key, what):
    """An index for NumPy: cupy arrays are on the device; NumPy arrays and lists are uploaded."""
    if type(key) is tuple:
        return tuple([_index_item(k, what) for k in key])
    return _index_item(key, what)


def _index_item(k, what):
    t = type(k)
    if t is ndarray:
        return k._a
    if t is int or t is slice or k is None or k is Ellipsis:
        return k
    if isinstance(k, np.ndarray):
        _upload(k.nbytes, what)
        return k
    if t is list:
        a = np.asarray(_unwrap_nested(k))
        _, device = _host_leaves(k)
        if not device:
            _upload(a.nbytes, what)
        return a
    if isinstance(k, ndarray):
        return k._a
    return k


def _value(v, what):
    """A value stored into a device array: host arrays and lists are uploaded."""
    t = type(v)
    if t is ndarray:
        return v._a
    if t in _SCALAR_TYPES:
        return v
    if isinstance(v, np.ndarray):
        _upload(v.nbytes, what)
        return v
    if t is list or t is tuple:
        return _to_device(v, what)._a
    if isinstance(v, ndarray):
        return v._a
    return v


# -- ufuncs -----------------------------------------------------------------------------------------

# ufunc.at of CuPy's ufuncs is a bound method of a compiled class (type builtin_function_or_method,
# as recorded): the stand-in hands out the `at` of a NumPy ufunc made for the purpose, whose
# __array_ufunc__ override lands back here. Called without a cupy array it never reaches NumPy's
# loop with data: the loop function refuses.
_AT_CARRIERS = {}  # id(carrier NumPy ufunc) -> stand-in ufunc
_SCATTER = frozenset({"add", "subtract", "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor"})


class ufunc:
    """CuPy's universal function: inputs are cupy arrays or scalars, NumPy arrays are refused."""

    def __init__(self, np_ufunc):
        self._f = np_ufunc
        self.name = self.__name__ = "cupy_" + np_ufunc.__name__
        self.nin = np_ufunc.nin
        self.nout = np_ufunc.nout
        self.nargs = np_ufunc.nargs
        self.__doc__ = f"Stand-in for CuPy's {self.name}: numpy.{np_ufunc.__name__} on the device copy."
        self._carrier = None

    def __repr__(self):
        return f"<ufunc '{self.name}'>"

    @property
    def types(self):
        return list(self._f.types)

    def __call__(self, *args, **kwargs):
        # In the order of cupy/_core/_kernel.pyx ufunc.__call__: keywords, the argument count, then
        # each input and output as a kernel argument (a NumPy array is refused, never uploaded).
        out = kwargs.pop("out", None)
        where = kwargs.pop("_where", None)  # CuPy's where= is private: NumPy's where= is refused
        numpy_kwargs = {k: kwargs.pop(k) for k in ("dtype", "casting") if k in kwargs}
        if kwargs:
            raise TypeError(f"Wrong arguments {kwargs}")
        if not self.nin <= len(args) <= self.nargs:
            raise TypeError(
                f"Wrong number of arguments for {self.name!r}. It must be either {self.nin} or "
                f"{self.nargs} (with outputs), but given {len(args)}."
            )
        inputs, outs = args[: self.nin], args[self.nin :]
        if out is not None:
            if outs:
                raise ValueError("Cannot specify 'out' as both a positional and keyword argument")
            if type(out) is tuple:
                if len(out) != self.nout:
                    raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")
                outs = out
            elif self.nout != 1:
                raise ValueError("'out' must be a tuple of arrays")
            else:
                outs = (out,)
        a = [_kernel_argument(v) for v in inputs]
        outs = [o for o in outs if o is not None]
        for o in outs:
            _kernel_argument(o)
            if not isinstance(o, ndarray):  # a scalar passes as an argument, not as an output
                raise TypeError("Output arguments type must be cupy.ndarray")
        if outs:
            numpy_kwargs["out"] = tuple(o._a for o in outs)
        if where is not None:
            numpy_kwargs["where"] = _kernel_argument(where)
        return _result(self._f(*a, **numpy_kwargs), outs)

    @property
    def at(self):
        if self._carrier is None:
            self._carrier = np.frompyfunc(functools.partial(_refuse_at, self.name), self.nin, 1)
            _AT_CARRIERS[id(self._carrier)] = self
        return self._carrier.at

    def _at(self, a, indices, b=None):
        if self._f.__name__ not in _SCATTER:
            raise NotImplementedError(f"`{self.name}.at` is not supported yet")
        if not isinstance(a, ndarray):
            raise _unsupported(a)
        args = (a._a, _index(indices, "index"))
        if self.nin == 2:
            args += (_value(b, "at"),)
        self._f.at(*args)

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False):
        if not isinstance(array, ndarray):
            raise _unsupported(array)
        if self._f.__name__ == "add":
            return array.sum(axis, dtype, out, keepdims)
        if self._f.__name__ == "multiply":
            return array.prod(axis, dtype, out, keepdims)
        raise NotImplementedError(f"`{self.name}.reduce` is not supported yet")

    def accumulate(self, array, axis=0, dtype=None, out=None):
        if not isinstance(array, ndarray):
            raise _unsupported(array)
        if self._f.__name__ == "add":
            return array.cumsum(axis, dtype, out)
        if self._f.__name__ == "multiply":
            return array.cumprod(axis, dtype, out)
        raise NotImplementedError(f"`{self.name}.accumulate` is not supported yet")

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        if not isinstance(array, ndarray):
            raise _unsupported(array)
        if self._f.__name__ != "add":
            raise NotImplementedError(f"`{self.name}.reduceat` is not supported yet")
        return _call(np.add.reduceat, (array, indices, axis, dtype, out), {})

    def outer(self, A, B, **kwargs):
        # As CuPy's: both operands go through cupy.array (so host data is uploaded).
        A = _to_device(A, "outer")
        B = _to_device(B, "outer")
        A = A.reshape(A.shape + (1,) * B.ndim)
        B = B.reshape((1,) * (A.ndim - B.ndim) + B.shape)
        return self(A, B, **kwargs)


ufunc.__module__ = "cupy"


def _kernel_argument(v):
    """A kernel argument as _kernel.pyx _preprocess_arg takes it: a cupy array's storage, or a
    scalar CuPy can pass to a kernel; anything else (a NumPy array of any shape) is refused."""
    if isinstance(v, ndarray):
        return v._a
    if type(v) in _SCALAR_TYPES:
        return v
    raise _unsupported(v)


def _refuse_at(name, *args):
    raise TypeError(f"{name}.at: the array must be a cupy.ndarray")


_UFUNCS = {}  # NumPy ufunc -> the stand-in's


def _ufunc(np_ufunc):
    u = _UFUNCS.get(np_ufunc)
    if u is None:
        u = _UFUNCS[np_ufunc] = ufunc(np_ufunc)
    return u


# -- operators --------------------------------------------------------------------------------------

_NO_UFUNC = object()


def _should_use_rop(x, y):
    # cupy/_core/core.pyx: defer to y if it opted out of ufuncs, else by __array_priority__.
    y_ufunc = getattr(y, "__array_ufunc__", _NO_UFUNC)
    if y_ufunc is not _NO_UFUNC:
        return y_ufunc is None
    return getattr(x, "__array_priority__", 0) < getattr(y, "__array_priority__", 0)


def _binary(np_ufunc):
    u = _ufunc(np_ufunc)

    def op(self, other, modulo=None):
        if isinstance(other, ndarray):
            return u(self, other)
        if _should_use_rop(self, other):
            return NotImplemented
        return np_ufunc(self, other)  # NumPy's dispatch: lands in __array_ufunc__ or refuses

    def rop(self, other, modulo=None):
        return u(other, self)

    def iop(self, other):
        return u(self, other, out=self)

    return op, rop, iop


def _comparison(np_ufunc, py_default=None):
    u = _ufunc(np_ufunc)

    def op(self, other):
        if isinstance(other, ndarray):
            return u(self, other)
        if _should_use_rop(self, other):
            return NotImplemented
        if isinstance(other, np.ndarray) and other.ndim == 0:
            other = other.item()
        if py_default is not None and (type(other).__eq__ is object.__eq__ or other is None):
            return _wrap(np.full(self._a.shape, py_default))
        return np_ufunc(self, other)

    return op


# -- the array --------------------------------------------------------------------------------------


def _fill(a, value):
    """core.pyx ndarray.fill into NumPy array `a`: a cupy value must be 0-d; anything else goes
    through numpy.asarray and must come out 0-d."""
    if isinstance(value, ndarray):
        if value.shape != ():
            raise ValueError("non-scalar cupy.ndarray cannot be used for fill")
        a[...] = value._a
        return
    v = np.asarray(value, dtype=a.dtype)
    if v.shape != ():
        raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
    a[...] = v[()]


def _is_basic_index(key):
    """Whether `key` holds no index array (ints, slices, None and Ellipsis only)."""
    for k in key if type(key) is tuple else (key,):
        if not (type(k) is int or type(k) is slice or k is None or k is Ellipsis or isinstance(k, np.integer)):
            return False
    return True


def _reduction(name, parameters):
    """A reduction method with the parameters of CuPy's compiled one (so that NumPy-only keywords
    such as where= and initial= are refused as Cython refuses them), computed by NumPy's."""
    count = len(parameters)

    def method(self, *args, **kwargs):
        if len(args) > count:
            raise TypeError(f"{name}() takes at most {count} positional arguments ({len(args)} given)")
        given = dict(zip(parameters, args))
        for key in list(kwargs):
            if key in given:
                raise TypeError(f"{name}() got multiple values for keyword argument '{key}'")
            if key in parameters:
                given[key] = kwargs.pop(key)
        _only_keywords(name, kwargs)
        return _call(getattr(self._a, name), (), given)

    method.__name__ = name
    method.__qualname__ = f"ndarray.{name}"
    method.__doc__ = f"As cupy.ndarray.{name}({', '.join(parameters)}), computed by numpy.ndarray.{name}."
    return method


class Flags:
    """Memory-layout information of a cupy.ndarray (read-only, as CuPy's)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, c_contiguous, f_contiguous, owndata):
        self.c_contiguous = c_contiguous
        self.f_contiguous = f_contiguous
        self.owndata = owndata

    def __getitem__(self, name):
        if name == "C_CONTIGUOUS":
            return self.c_contiguous
        if name == "F_CONTIGUOUS":
            return self.f_contiguous
        if name == "OWNDATA":
            return self.owndata
        raise KeyError(f"{name} is not defined for cupy.ndarray.flags")

    def __repr__(self):
        return "\n".join(f"  {name} : {self[name]}" for name in ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA"))


def _method(name, doc=None):
    def method(self, *args, **kwargs):
        return _call(getattr(self._a, name), args, kwargs)

    method.__name__ = name
    method.__qualname__ = f"ndarray.{name}"
    method.__doc__ = doc or f"As numpy.ndarray.{name}, on the device."
    return method


class ndarray:
    """Multi-dimensional array on the (stand-in) CUDA device.

    `ndarray(shape, dtype=float, memptr=None, strides=None, order='C')` allocates an
    uninitialized array, as CuPy's; `memptr` needs real device memory and is refused.
    """

    __slots__ = ("_a",)
    __array_priority__ = 100
    __class_getitem__ = classmethod(types.GenericAlias)

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        if order not in ("C", "F"):
            raise ValueError(f"order not understood. order={order}")
        if strides is not None and memptr is None:
            raise ValueError("memptr is required if strides is given.")
        if memptr is not None:
            raise TypeError("the stand-in has no device memory: memptr is not supported")
        a = np.empty(shape, dtype=dtype, order=order)
        if a.dtype.char not in _DTYPE_CHARS:
            raise ValueError(f"Unsupported dtype {a.dtype}")
        _memory._default_pool._track(a)
        self._a = a

    # -- attributes --

    @property
    def shape(self):
        return self._a.shape

    @shape.setter
    def shape(self, value):
        self._a.shape = value

    @property
    def dtype(self):
        return self._a.dtype

    @property
    def ndim(self):
        return self._a.ndim

    @property
    def size(self):
        return self._a.size

    @property
    def nbytes(self):
        return self._a.nbytes

    @property
    def itemsize(self):
        return self._a.itemsize

    @property
    def strides(self):
        return self._a.strides

    @property
    def flags(self):
        f = self._a.flags
        return Flags(f.c_contiguous, f.f_contiguous, self.base is None)

    @property
    def base(self):
        base = self._a.base
        return _wrap(base) if isinstance(base, np.ndarray) else None

    @property
    def device(self):
        from cupy.cuda.device import Device

        return Device(0)

    @property
    def T(self):
        return self if self._a.ndim < 2 else _wrap(self._a.T)

    @property
    def mT(self):
        if self._a.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return _wrap(self._a.swapaxes(-1, -2))

    @property
    def real(self):
        r = self._a.real
        return self if r is self._a else _wrap(r)

    @real.setter
    def real(self, value):
        self._a.real = _unwrap(value)

    @property
    def imag(self):
        if self._a.dtype.kind == "c":
            return _wrap(self._a.imag)
        return _wrap(np.zeros_like(self._a))

    @imag.setter
    def imag(self, value):
        self._a.imag = _unwrap(value)

    # -- transfers --

    def get(self, stream=None, order="C", out=None, blocking=True):
        """A NumPy copy on the host (a download)."""
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError("Only numpy.ndarray can be obtained fromcupy.ndarray")
            if self.dtype != out.dtype:
                raise TypeError(f"{out.dtype} array cannot be obtained from {self.dtype} array")
            if self.shape != out.shape:
                raise ValueError(f"Shape mismatch. Expected shape: {self.shape}, actual shape: {out.shape}")
            _download(self._a.nbytes, "get")
            out[...] = self._a
            return out
        _download(self._a.nbytes, "get")
        return np.array(self._a, order=order, copy=True)

    def set(self, arr, stream=None):
        """Copy NumPy array `arr` into this array (an upload)."""
        if not isinstance(arr, np.ndarray):
            raise TypeError("Only numpy.ndarray can be set to cupy.ndarray")
        if self.dtype != arr.dtype:
            raise TypeError(f"{arr.dtype} array cannot be set to {self.dtype} array")
        if self.shape != arr.shape:
            raise ValueError(f"Shape mismatch. Old shape: {self.shape}, new shape: {arr.shape}")
        if not (self._a.flags.c_contiguous or self._a.flags.f_contiguous):
            raise RuntimeError("Cannot set to non-contiguous array")
        _upload(arr.nbytes, "set")
        self._a[...] = arr

    def item(self):
        if self._a.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        _download(self._a.nbytes, "item")
        return self._a.item()

    def tolist(self):
        _download(self._a.nbytes, "tolist")
        return self._a.tolist()

    def tobytes(self, order="C"):
        _download(self._a.nbytes, "tobytes")
        return self._a.tobytes(order)

    def tofile(self, fid, sep="", format="%s"):
        _download(self._a.nbytes, "tofile")
        self._a.tofile(fid, sep, format)

    def dump(self, file):
        import pickle

        pickle.dump(self, file, -1)

    def dumps(self):
        import pickle

        return pickle.dumps(self, -1)

    def __reduce__(self):
        return _cupy.array, (self.get(),)

    def __array__(self, dtype=None, copy=None):
        raise _implicit_conversion()

    def __int__(self):
        _download(self._a.nbytes, "int")
        return int(self._a)

    def __float__(self):
        _download(self._a.nbytes, "float")
        return float(self._a)

    def __complex__(self):
        _download(self._a.nbytes, "complex")
        return complex(self._a)

    def __bool__(self):
        size = self._a.size
        if size == 0:
            warnings.warn(
                "The truth value of an empty array is ambiguous. Returning False, but in future "
                "this will result in an error. Use `array.size > 0` to check that an array is not empty.",
                DeprecationWarning,
                stacklevel=2,
            )
            return False
        if size > 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()"
            )
        _download(self._a.nbytes, "bool")
        return bool(self._a)

    def __bytes__(self):
        _download(self._a.nbytes, "bytes")
        return bytes(self._a)

    def __repr__(self):
        _download(self._a.nbytes, "repr")
        return repr(self._a)

    def __str__(self):
        _download(self._a.nbytes, "str")
        return str(self._a)

    def __format__(self, format_spec):
        _download(self._a.nbytes, "format")
        return format(self._a, format_spec)

    # -- copies and views --

    def copy(self, order="C"):
        return _wrap(self._a.copy(order))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        r = self._a.astype(dtype, order=order, casting="unsafe" if casting is None else casting, copy=copy)
        return self if r is self._a else _wrap(r)

    def view(self, dtype=None, array_class=None):
        if array_class is not None and array_class is not ndarray:
            raise ValueError("array_class must be a subclass of cupy.ndarray")
        return _wrap(self._a.view() if dtype is None else self._a.view(dtype))

    def fill(self, value):
        _fill(self._a, value)

    def dot(self, b, out=None):
        _check_typed(b=b, out=out)
        return _call(self._a.dot, (b,), {} if out is None else {"out": out})

    def put(self, indices, values, mode="wrap"):
        self._a.put(_unwrap(indices), _unwrap(values), mode=mode)

    def ptp(self, axis=None, out=None, keepdims=False):
        return _call(np.ptp, (self, axis, out, keepdims), {})

    # -- indexing and iteration --

    def __getitem__(self, key):
        index = _index(key, "index")
        r = self._a[index]
        if isinstance(r, np.generic):  # a view, as CuPy's x[i, j] is
            r = self._a[(index if type(index) is tuple else (index,)) + (Ellipsis,)]
        return _wrap(r)

    def __setitem__(self, key, value):
        if _is_basic_index(key) and not isinstance(value, ndarray):
            # _routines_indexing.pyx _scatter_op: with no array in the index, a value that is not a
            # cupy array is filled in, so a NumPy array (or a list) of more than one element is
            # refused, not uploaded (CuPy gh-2079).
            view = self._a[key]
            if isinstance(view, np.generic):
                view = self._a[(key if type(key) is tuple else (key,)) + (Ellipsis,)]
            _fill(view, value)
            return
        value = _value(value, "setitem")
        self._a[_index(key, "index")] = value

    def __len__(self):
        if self._a.ndim == 0:
            raise TypeError("len() of unsized object")
        return self._a.shape[0]

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._a.shape[0]))

    # -- NumPy's protocols, as CuPy answers them --

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inout = inputs
        if "out" in kwargs:
            out = kwargs["out"]
            if len(out) != 1:
                raise ValueError("The 'out' parameter must have exactly one array value")
            inout += out
            kwargs["out"] = out[0]
        if method == "at" and id(ufunc) in _AT_CARRIERS:
            return _AT_CARRIERS[id(ufunc)]._at(*inputs, **kwargs)
        if method not in ("__call__", "outer", "at", "reduce", "accumulate", "reduceat"):
            return NotImplemented
        name = ufunc.__name__
        func = getattr(_cupy, name, None)
        if func is None:
            return NotImplemented
        if method != "__call__":
            func = getattr(func, method, None)
            if func is None:
                return NotImplemented
        for v in inout:
            if type(v) not in _SCALAR_TYPES and not isinstance(v, (ndarray, np.ndarray)):
                return NotImplemented
        if name in _COMPARISONS:
            inputs = tuple(v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v for v in inputs)
        return func(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        try:
            module = functools.reduce(getattr, func.__module__.split(".")[1:], _cupy)
            cupy_func = getattr(module, func.__name__)
        except AttributeError:
            return NotImplemented
        if cupy_func is func:
            return NotImplemented
        for t in types:
            if not issubclass(t, (ndarray, np.ndarray)):
                return NotImplemented
        return cupy_func(*args, **kwargs)

    # -- operators --

    __add__, __radd__, __iadd__ = _binary(np.add)
    __sub__, __rsub__, __isub__ = _binary(np.subtract)
    __mul__, __rmul__, __imul__ = _binary(np.multiply)

    def __matmul__(self, other):
        # core.pyx __matmul__: a cupy operand goes to matmul, anything else through NumPy's
        # dispatch, which comes back to cupy.matmul through __array_ufunc__.
        if isinstance(other, ndarray):
            return _cupy.matmul(self, other)
        if _should_use_rop(self, other):
            return NotImplemented
        return np.matmul(self, other)

    def __rmatmul__(self, other):
        return _cupy.matmul(other, self)

    __truediv__, __rtruediv__, __itruediv__ = _binary(np.true_divide)
    __floordiv__, __rfloordiv__, __ifloordiv__ = _binary(np.floor_divide)
    __mod__, __rmod__, __imod__ = _binary(np.remainder)
    __divmod__, __rdivmod__, _ = _binary(np.divmod)
    __lshift__, __rlshift__, __ilshift__ = _binary(np.left_shift)
    __rshift__, __rrshift__, __irshift__ = _binary(np.right_shift)
    __and__, __rand__, __iand__ = _binary(np.bitwise_and)
    __or__, __ror__, __ior__ = _binary(np.bitwise_or)
    __xor__, __rxor__, __ixor__ = _binary(np.bitwise_xor)
    __pow__, __rpow__, __ipow__ = _binary(np.power)  # the modulo of pow(x, y, z) is ignored, as by CuPy
    del _

    __lt__ = _comparison(np.less)
    __le__ = _comparison(np.less_equal)
    __gt__ = _comparison(np.greater)
    __ge__ = _comparison(np.greater_equal)
    __eq__ = _comparison(np.equal, py_default=False)
    __ne__ = _comparison(np.not_equal, py_default=True)
    __hash__ = None

    def __neg__(self):
        return _ufunc(np.negative)(self)

    def __pos__(self):
        return _ufunc(np.positive)(self)

    def __abs__(self):
        return _ufunc(np.absolute)(self)

    def __invert__(self):
        return _ufunc(np.invert)(self)

    # -- methods computed by NumPy's of the same name --

    reshape = _method("reshape")
    ravel = _method("ravel")
    flatten = _method("flatten")
    transpose = _method("transpose")
    swapaxes = _method("swapaxes")
    squeeze = _method("squeeze")
    diagonal = _method("diagonal")
    repeat = _method("repeat")
    take = _method("take")
    compress = _method("compress")
    choose = _method("choose")
    byteswap = _method("byteswap")
    sum = _reduction("sum", ("axis", "dtype", "out", "keepdims"))
    prod = _reduction("prod", ("axis", "dtype", "out", "keepdims"))
    mean = _reduction("mean", ("axis", "dtype", "out", "keepdims"))
    var = _reduction("var", ("axis", "dtype", "out", "ddof", "keepdims"))
    std = _reduction("std", ("axis", "dtype", "out", "ddof", "keepdims"))
    max = _reduction("max", ("axis", "out", "keepdims"))
    min = _reduction("min", ("axis", "out", "keepdims"))
    argmax = _method("argmax")
    argmin = _method("argmin")
    all = _reduction("all", ("axis", "out", "keepdims"))
    any = _reduction("any", ("axis", "out", "keepdims"))
    cumsum = _method("cumsum")
    cumprod = _method("cumprod")
    clip = _method("clip")
    round = _method("round")
    trace = _method("trace")
    conj = _method("conj")
    conjugate = _method("conjugate")
    nonzero = _method("nonzero")
    sort = _method("sort")
    argsort = _method("argsort")
    partition = _method("partition")
    argpartition = _method("argpartition")
    searchsorted = _method("searchsorted")


ndarray.__module__ = "cupy"
