"""The stand-in CuPy (tests/fake_gpu) held against the real CuPy 14.2.0, so that it cannot drift.

tests/reference/cupy-14.2.0-surface.json records the real CuPy on an H100 (with NumPy 2.5.2): the
module's public names, every attribute of cupy.ndarray, and what 70 expressions did. The stand-in
must have nothing the real one lacks (every public name and ndarray attribute is one the real has),
and must do what the real one did: each recorded behaviour has an entry in BEHAVIOUR below, and a
new reference with other keys fails `test_every_recorded_behaviour_has_an_entry` until it has.
The transfer ledger (tests/fake_gpu/transfer_ledger.py) is checked byte for byte.

These tests are marked `stand_in`: they run in a pytest process whose `cupy` is the stand-in
(tests/cupy_rooms.py), never in one that imported the real CuPy or expects none.
"""

from __future__ import annotations

import copy
import gc
import importlib
import json
import pickle
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

TESTS = Path(__file__).resolve().parent
STAND_IN = TESTS / "fake_gpu"
REFERENCE_NAME = "cupy-14.2.0-surface.json"
REFERENCE = TESTS / "reference" / REFERENCE_NAME
SHARED_REFERENCE = TESTS.parents[1] / "shared" / "reference" / REFERENCE_NAME  # beside the repo
RECORDED = json.loads(REFERENCE.read_text(encoding="utf-8"))
NUMPY_2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"

# Attributes of the real cupy.ndarray the stand-in leaves out, because no stand-in without a GPU
# can be faithful to them: code using them must fail in CI (AttributeError), not pass.
NOT_PROVIDED = {
    "__cuda_array_interface__": "describes device memory (a raw pointer): nothing to point at",
    "__dlpack__": "exports a DLPack capsule of device memory",
    "__dlpack_device__": "names the CUDA device of a DLPack export",
    "toDlpack": "exports a DLPack capsule of device memory",
    "data": "a cupy.cuda.MemoryPointer to device memory",
    "cstruct": "the C struct handed to CUDA kernels",
    "mdspan": "the C++ mdspan handed to CUDA kernels",
    "reduced_view": "a CuPy kernel-launch internal",
    "scatter_add": "CuPy's scatter kernels (cupyx API)",
    "scatter_max": "CuPy's scatter kernels (cupyx API)",
    "scatter_min": "CuPy's scatter kernels (cupyx API)",
    "flat": "cupy.flatiter, a kernel-backed iterator",
    "__buffer__": "the buffer protocol of a compiled class (Python >= 3.12); CuPy refuses it anyway",
    "__release_buffer__": "the buffer protocol of a compiled class (Python >= 3.12)",
    "__pyx_vtable__": "Cython's method table",
    "__array_finalize__": "a Cython artefact; never called on CuPy arrays",
    "__delitem__": "a Cython slot artefact: deleting items is refused either way",
    "__div__": "Python 2 protocol, never called by Python 3",
    "__idiv__": "Python 2 protocol, never called by Python 3",
    "__hex__": "Python 2 protocol, never called by Python 3",
    "__oct__": "Python 2 protocol, never called by Python 3",
}


pytestmark = pytest.mark.stand_in


@pytest.fixture(scope="module")
def stand_in():
    """The stand-in's `cupy` and `transfer_ledger`, first on this process's path."""
    cupy = importlib.import_module("cupy")
    ledger = importlib.import_module("transfer_ledger")
    assert Path(cupy.__file__).resolve().parent == STAND_IN / "cupy", cupy.__file__
    return SimpleNamespace(cupy=cupy, ledger=ledger)


@pytest.fixture
def cp(stand_in):
    return stand_in.cupy


@pytest.fixture
def ledger(stand_in):
    stand_in.ledger.reset()
    return stand_in.ledger


def _type_name(value) -> str:
    return f"{type(value).__module__}.{type(value).__qualname__}"


# -- the reference itself --------------------------------------------------------------------------


def test_the_reference_is_the_shared_recording():
    if not SHARED_REFERENCE.exists():
        pytest.skip(f"no {SHARED_REFERENCE} beside the repository")
    assert REFERENCE.read_bytes() == SHARED_REFERENCE.read_bytes(), f"copy {SHARED_REFERENCE} to {REFERENCE}"


def test_the_reference_is_cupy_14_2_0():
    assert RECORDED["cupy_version"] == "14.2.0"
    assert {"cupy", "ndarray", "behaviour"} <= set(RECORDED)


# -- (a), (b): nothing the real one lacks ------------------------------------------------------------


def test_every_public_name_of_the_stand_in_is_one_cupy_has(cp):
    public = {n for n in dir(cp) if not n.startswith("_")}
    assert public - set(RECORDED["cupy"]) == set()


def test_the_names_layers_use_are_there(cp):
    assert cp.__version__ == "14.2.0"
    for name in (
        "asarray",
        "asnumpy",
        "get_array_module",
        "cuda",
        "random",
        "linalg",
        "fft",
        "testing",
        "ndarray",
        "float32",
        "float64",
        "complex128",
        "tanh",
        "einsum",
        "where",
        "stack",
        "broadcast_to",
        "newaxis",
    ):
        assert hasattr(cp, name), name


class _Compiled:
    pass


# What the interpreter records on every class compiled from Python source (Python 3.13 on), which
# the stand-in's classes have and a Cython class such as cupy.ndarray does not.
_CLASS_BODY_RECORDS = {"__static_attributes__", "__firstlineno__"} & set(dir(_Compiled))


# What every object has on the recording's Python (3.11 added object.__getstate__) and this
# older one gives no object: the stand-in cannot have it where the interpreter does not.
_NEWER_OBJECT_NAMES = {"__getstate__"} - set(dir(object))


def _public_attributes(obj) -> set[str]:
    return {n for n in dir(obj) if not (n.startswith("_") and not n.startswith("__"))} - _CLASS_BODY_RECORDS


def test_every_ndarray_attribute_of_the_stand_in_is_one_cupy_ndarray_has(cp):
    x = cp.arange(6.0).reshape(2, 3)
    assert _public_attributes(x) - set(RECORDED["ndarray"]) == set()
    assert _public_attributes(cp.ndarray) - set(RECORDED["ndarray"]) == set()
    # Private storage only: the NumPy array behind the "device" memory.
    assert {n for n in dir(x) if n.startswith("_") and not n.startswith("__")} == {"_a"}


def test_every_ndarray_attribute_of_cupy_is_provided_or_declared_left_out(cp):
    x = cp.arange(6.0).reshape(2, 3)
    # CuPy's own single-underscore names are its internals; the rest must be accounted for.
    recorded = {n for n in RECORDED["ndarray"] if not (n.startswith("_") and not n.startswith("__"))}
    provided = _public_attributes(x)
    assert recorded - provided - set(NOT_PROVIDED) - _NEWER_OBJECT_NAMES == set()
    assert set(NOT_PROVIDED) <= recorded, "NOT_PROVIDED names an attribute CuPy lacks"
    assert set(NOT_PROVIDED) & provided == set()


@pytest.mark.parametrize("name", sorted(NOT_PROVIDED))
def test_what_is_left_out_fails_loudly(cp, name):
    x = cp.arange(6.0).reshape(2, 3)
    with pytest.raises(AttributeError):
        getattr(x, name)


def test_the_array_is_not_a_numpy_array(cp):
    x = cp.arange(6.0).reshape(2, 3)
    assert type(x).__module__ == "cupy" and type(x).__name__ == "ndarray"
    assert not isinstance(x, np.ndarray) and not issubclass(cp.ndarray, np.ndarray)
    assert not hasattr(x, "__array_namespace__") and not hasattr(x, "__dict__") and not hasattr(x, "__weakref__")


# -- (c): the recorded behaviour ---------------------------------------------------------------------


class Lacks:
    """An entry the stand-in cannot reproduce without a GPU: it must raise AttributeError."""

    def __init__(self, expression, reason):
        self.expression, self.reason = expression, reason


class Compat:
    """An entry that needs array-api-compat: run only where it is importable."""

    def __init__(self, expression):
        self.expression = expression


def _memory_pool_used_by_x_and_c(cp, x, c):
    # Real: 1024 bytes with x and c alive (each rounded up to a 512-byte block). Measured here as
    # what a fresh x and c add, so that arrays other tests left alive do not count.
    pool = cp.get_default_memory_pool()
    gc.collect()
    before = pool.used_bytes()
    x2 = cp.arange(6.0).reshape(2, 3)
    c2 = x2 * (1 + 1j)
    used = pool.used_bytes() - before
    del x2, c2
    return used


def _copyto(cp, x, c):
    r = np.copyto(x, 0)
    assert not x.any(), "np.copyto must write into x"
    return r


BEHAVIOUR = {
    "x.__array_namespace__()": lambda cp, x, c: x.__array_namespace__(),
    "np.asarray(x)": lambda cp, x, c: np.asarray(x),
    "np.maximum(x, 0)": lambda cp, x, c: np.maximum(x, 0),
    "np.sum(x)": lambda cp, x, c: np.sum(x),
    "np.sum(x, axis=0)": lambda cp, x, c: np.sum(x, axis=0),
    "np.where(x>1, x, 0)": lambda cp, x, c: np.where(x > 1, x, 0),
    "np.einsum('ij->j', x)": lambda cp, x, c: np.einsum("ij->j", x),
    "np.zeros_like(x)": lambda cp, x, c: np.zeros_like(x),
    "np.random.rand(*x.shape) * x": lambda cp, x, c: np.random.rand(*x.shape) * x,
    "x * np.ones((2,3))": lambda cp, x, c: x * np.ones((2, 3)),
    "float(x.sum())": lambda cp, x, c: float(x.sum()),
    "x.sum()": lambda cp, x, c: x.sum(),
    "x[np.array([0])]": lambda cp, x, c: x[np.array([0])],
    "cupy.get_array_module(x)": lambda cp, x, c: cp.get_array_module(x),
    "cupy.get_array_module(np.ones(2))": lambda cp, x, c: cp.get_array_module(np.ones(2)),
    "cupy.asarray(np.ones(2))": lambda cp, x, c: cp.asarray(np.ones(2)),
    "x.get()": lambda cp, x, c: x.get(),
    "cupy.asnumpy(x)": lambda cp, x, c: cp.asnumpy(x),
    "np.isfinite(x)": lambda cp, x, c: np.isfinite(x),
    "bool(x.any())": lambda cp, x, c: bool(x.any()),
    "x.item() on 0-d": lambda cp, x, c: x.sum().item(),
    "int(x[0,0])": lambda cp, x, c: int(x[0, 0]),
    "np.float64(2.0) * x": lambda cp, x, c: np.float64(2.0) * x,
    "x * 2.0": lambda cp, x, c: x * 2.0,
    "np.dot(x, x.T)": lambda cp, x, c: np.dot(x, x.T),
    "x @ x.T": lambda cp, x, c: x @ x.T,
    "np.linalg.norm(x)": lambda cp, x, c: np.linalg.norm(x),
    "np.allclose(x, x)": lambda cp, x, c: np.allclose(x, x),
    "np.array_equal(x, x)": lambda cp, x, c: np.array_equal(x, x),
    "np.count_nonzero(x)": lambda cp, x, c: np.count_nonzero(x),
    "np.testing.assert_allclose(x, x)": lambda cp, x, c: np.testing.assert_allclose(x, x),
    "np.iscomplexobj(c)": lambda cp, x, c: np.iscomplexobj(c),
    "np.result_type(x)": lambda cp, x, c: np.result_type(x),
    "np.may_share_memory(x, x)": lambda cp, x, c: np.may_share_memory(x, x),
    "np.shares_memory(x, x)": lambda cp, x, c: np.shares_memory(x, x),
    "x.device": lambda cp, x, c: x.device,
    "x.flags.c_contiguous": lambda cp, x, c: x.flags.c_contiguous,
    "np.copyto(x, 0)": _copyto,
    "np.conj(c)": lambda cp, x, c: np.conj(c),
    "c.conj()": lambda cp, x, c: c.conj(),
    "np.ascontiguousarray(x)": lambda cp, x, c: np.ascontiguousarray(x),
    "np.array(x)": lambda cp, x, c: np.array(x),
    "np.asanyarray(x)": lambda cp, x, c: np.asanyarray(x),
    "np.float32(1) + x": lambda cp, x, c: np.float32(1) + x,
    "x.astype(np.float32)": lambda cp, x, c: x.astype(np.float32),
    "np.broadcast_to(x, (2,2,3))": lambda cp, x, c: np.broadcast_to(x, (2, 2, 3)),
    "np.random.default_rng(0).standard_normal(3) + x[0]": lambda cp, x, c: (
        np.random.default_rng(0).standard_normal(3) + x[0]
    ),
    "x[0] + [1, 2, 3]": lambda cp, x, c: x[0] + [1, 2, 3],
    "np.add.at(x, [0], 1)": lambda cp, x, c: np.add.at(x, [0], 1),
    "cupy.add.at": lambda cp, x, c: cp.add.at,
    "x.sum(axis=(0,1), keepdims=True)": lambda cp, x, c: x.sum(axis=(0, 1), keepdims=True),
    "np.einsum('ij,kj->ik', x, x)": lambda cp, x, c: np.einsum("ij,kj->ik", x, x),
    "np.take_along_axis": lambda cp, x, c: np.take_along_axis(x, np.argsort(x, axis=1), axis=1),
    "np.float16 sum dtype": lambda cp, x, c: str(np.sum(cp.ones(8, dtype=np.float16)).dtype),
    "np.sum(float32 1e7 ones) exact": lambda cp, x, c: float(np.sum(cp.ones(10**7, dtype=np.float32))),
    "np.sum(numpy float32 1e7 ones)": lambda cp, x, c: float(np.sum(np.ones(10**7, dtype=np.float32))),
    "x.__cuda_array_interface__ keys": Lacks(
        lambda cp, x, c: sorted(x.__cuda_array_interface__), NOT_PROVIDED["__cuda_array_interface__"]
    ),
    "x.__dlpack__()": Lacks(lambda cp, x, c: x.__dlpack__(), NOT_PROVIDED["__dlpack__"]),
    # The real one raised BufferError (NumPy cannot read CUDA memory); the stand-in has no
    # __dlpack__ at all, so NumPy's from_dlpack fails on the attribute instead.
    "np.from_dlpack(x)": Lacks(lambda cp, x, c: np.from_dlpack(x), NOT_PROVIDED["__dlpack__"]),
    "cupy.cuda.runtime.getDeviceCount()": lambda cp, x, c: cp.cuda.runtime.getDeviceCount(),
    "cupy.cuda.Device().mem_info": lambda cp, x, c: cp.cuda.Device().mem_info,
    "cupy.get_default_memory_pool().used_bytes()": _memory_pool_used_by_x_and_c,
    "array_api_compat.array_namespace(x)": Compat(lambda aac, cp, x, c: aac.array_namespace(x).__name__),
    "array_api_compat.array_namespace(np.ones(2))": Compat(
        lambda aac, cp, x, c: aac.array_namespace(np.ones(2)).__name__
    ),
    "aac cupy: xp.einsum": Compat(lambda aac, cp, x, c: aac.array_namespace(x).einsum("ij->j", x)),
    "aac cupy: xp.maximum": Compat(lambda aac, cp, x, c: aac.array_namespace(x).maximum(x, cp.zeros_like(x))),
    "aac cupy: xp.sum keepdims": Compat(lambda aac, cp, x, c: aac.array_namespace(x).sum(x, axis=0, keepdims=True)),
    "aac cupy: xp.where": Compat(lambda aac, cp, x, c: aac.array_namespace(x).where(x > 1, x, cp.zeros_like(x))),
    "aac numpy: xp.einsum": Compat(
        lambda aac, cp, x, c: aac.array_namespace(np.ones(2)).einsum("i,i->", np.ones(2), np.ones(2))
    ),
    "aac numpy: xp.minimum": Compat(
        lambda aac, cp, x, c: aac.array_namespace(np.ones(2)).minimum(np.ones(2), np.zeros(2))
    ),
}


def test_every_recorded_behaviour_has_an_entry():
    assert set(BEHAVIOUR) == set(RECORDED["behaviour"])


def _parse(outcome: str):
    if outcome.startswith("ok: "):
        type_name, _, value = outcome[4:].partition(" = ")
        return "ok", type_name, value or None
    match = re.fullmatch(r"raises (\w+): (.*)", outcome, re.S)
    assert match, f"unreadable outcome {outcome!r}"
    return "raises", match.group(1), match.group(2)


def _same_type(value, recorded: str) -> bool:
    if _type_name(value) == recorded:
        return True
    # NumPy-version-dependent: dtype classes live in numpy.dtypes from NumPy 1.25 on (before,
    # type(np.dtype('f8')) is numpy.dtype[float64]); compared loosely on older NumPy.
    if recorded.startswith("numpy.dtypes.") and np.lib.NumpyVersion(np.__version__) < "1.25.0":
        return isinstance(value, np.dtype) and recorded.endswith(
            type(value).__name__.split("[")[-1].rstrip("]").capitalize() + "DType"
        )
    return False


def _same_value(value, recorded: str) -> bool:
    if repr(value) == recorded:
        return True
    # NumPy < 2 prints scalars without their type (2.0, not np.float64(2.0)).
    match = re.fullmatch(r"np\.\w+\((.*)\)", recorded)
    return not NUMPY_2 and match is not None and repr(value) == match.group(1)


def _check(outcome: str, expression, cp):
    kind, name, detail = _parse(outcome)
    x = cp.arange(6.0).reshape(2, 3)
    c = x * (1 + 1j)
    if kind == "raises":
        with pytest.raises(Exception) as caught:
            expression(cp, x, c)
        assert type(caught.value).__name__ == name, caught.value
        assert str(caught.value).startswith(detail), f"{caught.value}\n  does not start with the recorded\n{detail}"
        return
    value = expression(cp, x, c)
    assert _same_type(value, name), f"{_type_name(value)}, recorded {name}"
    if detail is not None:
        assert _same_value(value, detail), f"{value!r}, recorded {detail}"


@pytest.mark.parametrize("key", sorted(RECORDED["behaviour"]))
def test_the_recorded_behaviour_is_reproduced(cp, key):
    entry = BEHAVIOUR[key]
    outcome = RECORDED["behaviour"][key]
    x = cp.arange(6.0).reshape(2, 3)
    if isinstance(entry, Lacks):
        # Not reproducible without a GPU: the stand-in lacks the attribute, so it fails loudly.
        with pytest.raises(AttributeError):
            entry.expression(cp, x, x * 1j)
        return
    if isinstance(entry, Compat):
        aac = pytest.importorskip("array_api_compat", reason="array-api-compat is not installed")
        _check(outcome, lambda cp, x, c: entry.expression(aac, cp, x, c), cp)
        return
    _check(outcome, entry, cp)


# -- refusals and results beyond the recording (each as CuPy 14.2.0 does, per its source) ---------


UNSUPPORTED = "Unsupported type <class 'numpy.ndarray'>"


@pytest.mark.parametrize(
    "expression",
    [
        lambda cp, x, a: x * a,
        lambda cp, x, a: a * x,
        lambda cp, x, a: x + np.array(1.0),
        lambda cp, x, a: np.array(1.0) - x,
        lambda cp, x, a: np.add(x, a),
        lambda cp, x, a: np.maximum(a, x),
        lambda cp, x, a: cp.add(a, 1),
        lambda cp, x, a: np.concatenate([x, a]),
        lambda cp, x, a: cp.linalg.norm(a),
        lambda cp, x, a: x.__iadd__(a),
    ],
)
def test_a_numpy_array_next_to_a_cupy_array_is_refused(cp, expression):
    x = cp.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError, match=re.escape(UNSUPPORTED)):
        expression(cp, x, np.ones((2, 3)))


@pytest.mark.parametrize(
    ("expression", "argument"),
    [
        (lambda cp, x, a: cp.stack([x, a]), "a"),
        (lambda cp, x, a: np.dot(x, a.T), "b"),
        (lambda cp, x, a: x @ a.T, "b"),
        (lambda cp, x, a: cp.broadcast_to(a, (2, 3)), "array"),
    ],
)
def test_a_numpy_array_for_a_compiled_array_parameter_is_refused_by_name(cp, expression, argument):
    # Cython's type check of a `_ndarray_base` parameter, before any kernel (tests/reference).
    x = cp.arange(6.0).reshape(2, 3)
    message = f"Argument '{argument}' has incorrect type (expected cupy._core.core._ndarray_base, got numpy.ndarray)"
    with pytest.raises(TypeError, match=re.escape(message)):
        expression(cp, x, np.ones((2, 3)))


def test_a_reduction_of_a_numpy_array_alone_is_computed_on_the_host(cp):
    # cupy.sum(a) calls a.sum(): NumPy's method, NumPy's result (tests/reference: "cupy.sum(v)").
    result = cp.sum(np.ones((2, 3)))
    assert type(result) is np.float64 and result == 6.0


def test_scalars_mix_and_results_stay_on_the_device(cp):
    x = cp.arange(6.0).reshape(2, 3)
    for r in (np.float64(2.0) * x, x * 2, 2**x, x / np.float32(2), -x, abs(x), x > 1, 1 < x, x == None):  # noqa: E711
        assert type(r) is cp.ndarray
    assert (x == None).dtype == np.bool_ and not (x == None).any()  # noqa: E711
    assert type(x[0, 0]) is cp.ndarray and x[0, 0].ndim == 0
    for r in (x.sum(), np.sum(x), np.mean(x), x.max(), np.linalg.norm(x), np.trace(x), cp.add(1, 2)):
        assert type(r) is cp.ndarray and r.ndim == 0
    assert (x * np.float32(2)).dtype == (np.arange(6.0) * np.float32(2)).dtype


def test_comparison_with_a_0d_numpy_array_is_taken_as_a_scalar(cp):
    # CuPy's comparison operators read a 0-d NumPy array as its item (core.pyx __richcmp__).
    x = cp.arange(6.0)
    assert (x > np.array(2.0)).get().tolist() == [False, False, False, True, True, True]


def test_lists_are_not_ufunc_operands(cp):
    x = cp.arange(3.0)
    with pytest.raises(TypeError, match="operand type.s. all returned NotImplemented"):
        np.add(x, [1, 2, 3])
    with pytest.raises(TypeError, match=re.escape("Unsupported type <class 'list'>")):
        cp.add(x, [1, 2, 3])


def test_ufunc_out_and_methods(cp):
    x = cp.arange(6.0).reshape(2, 3)
    y = cp.empty((2, 3))
    assert np.add(x, x, out=y) is y and y.get().tolist() == [[0, 2, 4], [6, 8, 10]]
    assert cp.multiply(x, 2, out=y) is y and y.get().tolist() == [[0, 2, 4], [6, 8, 10]]
    y += x
    assert y.get().tolist() == [[0, 3, 6], [9, 12, 15]]
    assert np.add.reduce(x, axis=0).get().tolist() == [3, 5, 7]
    assert np.multiply.accumulate(x[1]).get().tolist() == [3, 12, 60]
    assert np.add.outer(x[0], x[0]).shape == (3, 3)
    with pytest.raises(NotImplementedError):
        np.maximum.reduce(x)
    cp.add.at(x, cp.asarray([0, 0]), 1)
    assert x[0].get().tolist() == [2, 3, 4]  # row 0 twice
    with pytest.raises(TypeError):
        cp.add.at(np.zeros(3), [0], 1)
    with pytest.raises(TypeError, match=re.escape(UNSUPPORTED)):  # out= goes through the kernel's argument check
        cp.add(x, x, out=np.empty((2, 3)))
    assert np.divmod(x, 2)[0].dtype == np.float64 and type(np.modf(x)) is tuple


def test_numpy_functions_cupy_lacks_are_refused(cp):
    x = cp.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError, match="no implementation found"):
        np.apply_along_axis(np.sum, 0, x)


def test_python_conversions_only_for_one_element(cp):
    x = cp.arange(6.0).reshape(2, 3)
    with pytest.raises(ValueError, match="truth value"):
        bool(x)
    with pytest.raises(TypeError):
        float(x)
    with pytest.raises(ValueError, match="size 1"):
        x.item()
    assert float(x[1, 2]) == 5.0 and int(x[1, 2]) == 5 and complex(x[1, 2]) == 5 and bool(x[1, 2])
    with pytest.raises(TypeError):
        range(10)[x[0, 1]]  # no __index__, as CuPy
    assert len(x) == 2 and [r.shape for r in x] == [(3,), (3,)]
    with pytest.raises(TypeError):
        len(x.sum())


def test_indexing_and_views(cp):
    x = cp.arange(6.0).reshape(2, 3)
    v = x[1:]
    v[0, 0] = 30.0
    x[0, 1] = np.float64(10.0)
    x[x > 20] = -1.0
    x[cp.asarray([0])] = cp.zeros(3)
    assert x.get().tolist() == [[0, 0, 0], [-1, 4, 5]]
    assert x[1:].base is not None and x.copy().base is None and x.flags.c_contiguous and x.T.flags.f_contiguous
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2) and x.swapaxes(0, 1).shape == (3, 2)
    assert x.astype(np.float64, copy=False) is x
    assert cp.asarray(x) is x and cp.array(x) is not x
    assert x.strides == (24, 8) and x.nbytes == 48 and x.itemsize == 8 and x.size == 6 and x.ndim == 2


def test_methods_layers_use(cp):
    x = cp.arange(6.0).reshape(2, 3)
    c = x * (1 - 2j)
    results = [
        x.ravel(),
        x.flatten(),
        x.transpose(),
        x.squeeze(),
        x.mean(axis=0),
        x.std(),
        x.var(),
        x.min(),
        x.prod(),
        x.all(),
        x.any(),
        x.argmax(),
        x.argmin(),
        x.cumsum(),
        x.cumprod(),
        x.clip(1, 4),
        x.conjugate(),
        x.dot(x.T),
        x.take(cp.asarray([0, 1])),
        x.repeat(2),
        x.round(),
        x.diagonal(),
        x.trace(),
        x.ptp(),
        x.view(),
        c.real,
        c.imag,
        x.imag,
        x.argsort(),
        x.nonzero()[0],
    ]
    assert all(type(r) is cp.ndarray for r in results)
    y = x.copy()
    y.fill(2.0)
    y.put(cp.asarray([0]), 7.0)
    y.sort(axis=1)
    assert y.get().tolist() == [[2, 2, 7], [2, 2, 2]]
    with pytest.raises(TypeError):
        x.dot(np.ones((3, 2)))
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]] and "3." in repr(x) and f"{x[0, 1]:.1f}" == "1.0"


def test_copies_and_pickles(cp):
    x = cp.arange(6.0).reshape(2, 3)
    for y in (copy.copy(x), copy.deepcopy(x), pickle.loads(pickle.dumps(x))):
        assert type(y) is cp.ndarray and y is not x and y.get().tolist() == x.get().tolist()


def test_uploads_copy_the_host_data(cp):
    a = np.ones(3)
    x = cp.asarray(a)
    a[0] = 5.0
    assert x.get().tolist() == [1, 1, 1]
    assert cp.asarray([[1, 2], [3, 4]]).dtype == np.array([[1, 2]]).dtype
    assert cp.ascontiguousarray(np.ones((3, 2)).T).flags.c_contiguous
    with pytest.raises(ValueError, match="Unsupported dtype"):
        cp.asarray(np.array(["a"]))


def test_cupy_functions(cp):
    x = cp.arange(6.0).reshape(2, 3)
    assert cp.get_array_module(x) is cp and cp.get_array_module(np.ones(2), 1.0) is np
    assert type(cp.asnumpy(x)) is np.ndarray and type(cp.asnumpy([1, 2])) is np.ndarray
    assert cp.is_available() is True
    assert isinstance(cp.stack([x, x]), cp.ndarray) and isinstance(cp.concatenate([x, x]), cp.ndarray)
    assert isinstance(np.stack([x, x]), cp.ndarray) and isinstance(cp.split(x, 3, axis=1)[0], cp.ndarray)
    assert cp.result_type(x, np.float32) == np.float64 and cp.ndim(x) == 2 and np.shape(x) == (2, 3)
    u, s, vt = cp.linalg.svd(x)
    assert all(type(r) is cp.ndarray for r in (u, s, vt))
    for name in ("norm", "det", "inv", "solve", "qr", "cholesky", "eigh", "pinv", "lstsq", "matrix_power", "slogdet"):
        assert callable(getattr(cp.linalg, name)), name
    m = x @ x.T + cp.eye(2)
    assert type(cp.linalg.solve(m, cp.ones(2))) is cp.ndarray and type(np.linalg.inv(m)) is cp.ndarray
    for name in ("fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn"):
        assert type(getattr(cp.fft, name)(x)) is cp.ndarray, name
    assert type(np.fft.fft(x)) is cp.ndarray
    cp.testing.assert_allclose(x, x.get())
    cp.testing.assert_array_equal(x, x)
    cp.testing.assert_array_almost_equal(x, x + 1e-9)
    with pytest.raises(AssertionError):
        cp.testing.assert_allclose(x, x + 1)
    assert type(cp.r_[x[0], x[1]]) is cp.ndarray and cp.mgrid[0:2, 0:3].shape == (2, 2, 3)


def test_cuda(cp):
    x = cp.arange(3.0)
    props = cp.cuda.runtime.getDeviceProperties(0)
    assert props["name"] == b"Stand-in GPU"
    device = cp.cuda.Device(0)
    assert device.id == 0 and x.device == device and type(x.device).__module__ == "cupy.cuda.device"
    free, total = device.mem_info
    assert type(free) is int and type(total) is int and 0 < free <= total
    device.synchronize()
    with cp.cuda.Device(0):
        pass
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError):
        cp.cuda.Device(1).use()
    pool = cp.get_default_memory_pool()
    assert pool.used_bytes() <= pool.total_bytes()
    pool.free_all_blocks()
    assert pool.total_bytes() == pool.used_bytes()


def test_random(cp, ledger):
    rs = cp.random.RandomState(0)
    draws = [
        rs.randint(0, 5, size=4),
        rs.standard_normal((2, 3)),
        rs.normal(0, 1, (2,)),
        rs.uniform(0, 1, 3),
        rs.rand(2, 3),
        rs.randn(2),
        rs.random_sample((2,)),
        rs.choice(5, 3),
        cp.random.rand(2),
        cp.random.randn(2),
        cp.random.randint(0, 3, 2),
        cp.random.standard_normal(2),
        cp.random.normal(size=2),
        cp.random.uniform(size=2),
        cp.random.random_sample(2),
    ]
    rng = cp.random.default_rng(0)
    draws += [rng.random(3), rng.standard_normal(3), rng.integers(0, 5, 3), rng.uniform(0, 1, 3)]
    assert all(type(d) is cp.ndarray for d in draws)
    assert rs.standard_normal((2, 3), dtype=np.float32).dtype == np.float32
    cp.random.seed(1)
    first = cp.random.rand(3).get()
    cp.random.seed(1)
    assert (cp.random.rand(3).get() == first).all()
    assert ledger.uploaded() == 0


# -- (d): the transfer ledger ------------------------------------------------------------------------


UPLOADS = [
    ("cupy.asarray(numpy)", lambda cp, x: cp.asarray(np.ones(3)), 24, "asarray"),
    ("cupy.array(numpy float32)", lambda cp, x: cp.array(np.ones((2, 2), dtype=np.float32)), 16, "array"),
    ("cupy.asarray(list)", lambda cp, x: cp.asarray([1.0, 2.0]), 16, "asarray"),
    ("cupy.asarray(scalar)", lambda cp, x: cp.asarray(3.0), 8, "asarray"),
    ("cupy.ascontiguousarray(numpy)", lambda cp, x: cp.ascontiguousarray(np.ones(4)), 32, "ascontiguousarray"),
    ("x[numpy index]", lambda cp, x: x[np.array([0, 1])], 16, "index"),
    ("x[list index]", lambda cp, x: x[[0, 1]], 16, "index"),
    ("x[index] = numpy", lambda cp, x: x.__setitem__(cp.arange(1), np.array([[7.0, 8.0, 9.0]])), 24, "setitem"),
    ("x.set(numpy)", lambda cp, x: x.set(np.ones((2, 3))), 48, "set"),
]

DOWNLOADS = [
    ("x.get()", lambda cp, x: x.get(), 48, "get"),
    ("cupy.asnumpy(x)", lambda cp, x: cp.asnumpy(x), 48, "asnumpy"),
    ("x.item()", lambda cp, x: x.sum().item(), 8, "item"),
    ("float(x)", lambda cp, x: float(x.sum()), 8, "float"),
    ("int(x)", lambda cp, x: int(x[0, 0]), 8, "int"),
    ("bool(x)", lambda cp, x: bool(x.any()), 1, "bool"),
    ("complex(x)", lambda cp, x: complex((x * 1j).sum()), 16, "complex"),
    ("x.tolist()", lambda cp, x: x.tolist(), 48, "tolist"),
    ("x.tobytes()", lambda cp, x: x.tobytes(), 48, "tobytes"),
    ("repr(x)", lambda cp, x: repr(x), 48, "repr"),
    ("str(x)", lambda cp, x: str(x), 48, "str"),
    ("format(x)", lambda cp, x: format(x.sum(), ".2f"), 8, "format"),
]

ON_THE_DEVICE = [
    ("(x * 2).sum(axis=0)", lambda cp, x: (x * 2).sum(axis=0)),
    ("np.maximum(x, 0)", lambda cp, x: np.maximum(x, 0)),
    ("x[1:]", lambda cp, x: x[1:]),
    ("x.copy()", lambda cp, x: x.copy()),
    ("RandomState.standard_normal", lambda cp, x: cp.random.RandomState(0).standard_normal((2, 3))),
    ("cupy.asarray(x)", lambda cp, x: cp.asarray(x)),
    ("x[cupy index]", lambda cp, x: x[cp.arange(1)]),
    ("x[0] = scalar", lambda cp, x: x.__setitem__(0, 5.0)),
    ("creation", lambda cp, x: (cp.zeros((2, 3)), cp.ones_like(x), cp.arange(4), cp.eye(2), cp.full(3, 2.0))),
    ("np.sum/np.einsum/np.where", lambda cp, x: (np.sum(x), np.einsum("ij->j", x), np.where(x > 1, x, 0))),
]


@pytest.mark.parametrize("label, expression, nbytes, what", UPLOADS, ids=[u[0] for u in UPLOADS])
def test_uploads_are_counted(cp, ledger, label, expression, nbytes, what):
    x = cp.arange(6.0).reshape(2, 3)
    with ledger.counting() as moved:
        expression(cp, x)
    assert (moved.uploaded, moved.downloaded) == (nbytes, 0)
    assert [tuple(e) for e in moved.events] == [("upload", nbytes, what)]


@pytest.mark.parametrize("label, expression, nbytes, what", DOWNLOADS, ids=[d[0] for d in DOWNLOADS])
def test_downloads_are_counted(cp, ledger, label, expression, nbytes, what):
    x = cp.arange(6.0).reshape(2, 3)
    with ledger.counting() as moved:
        expression(cp, x)
    assert (moved.uploaded, moved.downloaded) == (0, nbytes)
    assert [tuple(e) for e in moved.events] == [("download", nbytes, what)]


@pytest.mark.parametrize("label, expression", ON_THE_DEVICE, ids=[d[0] for d in ON_THE_DEVICE])
def test_device_work_moves_nothing(cp, ledger, label, expression):
    x = cp.arange(6.0).reshape(2, 3)
    with ledger.counting() as moved:
        expression(cp, x)
    assert (moved.uploaded, moved.downloaded, moved.events) == (0, 0, [])


def test_the_ledger_totals_resets_and_nests(cp, ledger):
    x = cp.arange(6.0).reshape(2, 3)
    with ledger.counting() as outer:
        cp.asarray(np.ones(2))
        with ledger.counting() as inner:
            x.get()
        float(x[0, 0])
    assert (inner.uploaded, inner.downloaded) == (0, 48)
    assert (outer.uploaded, outer.downloaded) == (16, 56)
    assert (ledger.uploaded(), ledger.downloaded()) == (16, 56)
    assert [(e.direction, e.nbytes, e.what) for e in ledger.events()] == [
        ("upload", 16, "asarray"),
        ("download", 48, "get"),
        ("download", 8, "float"),
    ]
    ledger.reset()
    assert (ledger.uploaded(), ledger.downloaded(), ledger.events()) == (0, 0, [])
    assert outer.downloaded == 56  # a block keeps what it counted


def test_the_stand_in_is_this_processs_cupy_and_the_only_one():
    """The stand-in's tests run where `cupy` is the stand-in; the real CuPy is never imported
    beside it (a process imports one CuPy, once: tests/cupy_rooms.py)."""
    import cupy

    assert Path(cupy.__file__).resolve().parent == STAND_IN / "cupy"
    real = [m for name, m in sys.modules.items() if name.startswith("cupy_backends")]
    assert real == [], "the real CuPy's compiled backends are loaded beside the stand-in"
