"""CuPy 14.2.0's refusals of NumPy operands, held three ways against one reference.

tests/reference/cupy-14.2.0-refusals.json says, per expression, what CuPy 14.2.0 does with a NumPy
array (or a NumPy-only keyword) where CuPy work is due: recorded from the package where no GPU is
needed, read from its source where one is. Here:

- the stand-in (tests/fake_gpu) must answer every expression as the reference says: the same
  outcome, exception type and message (tests/reference/record_cupy_refusals.py run with the
  stand-in first on PYTHONPATH);
- where the real CuPy is installed, what it answers here (without a GPU: what it checks before
  touching the device) must be what the reference and the stand-in say;
- layercheck.portability must recognise each refusal, with a hint that is true of it, and nothing
  that only looks like one.

This process never imports `cupy`: each CuPy is asked in a subprocess of its own (one run each).
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from layercheck.portability import IDIOM, REFUSALS, Kind, hint_for, is_cupy_refusal, refusal_of

TESTS = Path(__file__).resolve().parent
STAND_IN = TESTS / "fake_gpu"
RECORDER = TESTS / "reference" / "record_cupy_refusals.py"
REFERENCE = json.loads((TESTS / "reference" / "cupy-14.2.0-refusals.json").read_text(encoding="utf-8"))
BEHAVIOURS: dict[str, dict[str, Any]] = REFERENCE["behaviours"]
ANSWER = ("outcome", "type", "message")  # what is compared; the rest of an entry is provenance


def _answer(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: entry[key] for key in ANSWER}


def _without_stand_in(paths: list[str]) -> list[str]:
    return [p for p in paths if not (p and Path(p).resolve() == STAND_IN)]


def _record(stand_in: bool) -> dict[str, Any]:
    """The recorder's answers, run by this Python with the stand-in first on its path or not at all."""
    env = dict(os.environ)
    paths = _without_stand_in([p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYTHONPATH"] = os.pathsep.join(([str(STAND_IN)] if stand_in else []) + paths)
    proc = subprocess.run(
        [sys.executable, str(RECORDER)],
        cwd=TESTS.parent,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def stand_in() -> dict[str, Any]:
    recording = _record(stand_in=True)
    assert Path(recording["cupy_file"]).parent == STAND_IN / "cupy", recording["cupy_file"]
    return recording


@pytest.fixture(scope="module")
def real() -> dict[str, Any]:
    # Found the way the subprocess will import it, without importing it here.
    if importlib.machinery.PathFinder.find_spec("cupy", _without_stand_in(sys.path)) is None:
        pytest.skip("the real CuPy is not installed for this Python")
    recording = _record(stand_in=False)
    assert STAND_IN not in Path(recording["cupy_file"]).parents, recording["cupy_file"]
    return recording


# -- the reference ---------------------------------------------------------------------------------


def test_the_reference_is_cupy_14_2_0_and_says_where_each_answer_comes_from():
    assert REFERENCE["cupy_version"] == "14.2.0"
    assert {"numpy_version", "python_version", "recorded_with", "what"} <= set(REFERENCE)
    for name, entry in BEHAVIOURS.items():
        assert entry["outcome"] in ("raises", "ok"), name
        assert (entry["message"] is None) == (entry["outcome"] == "ok"), name
        # Either recorded from the package, or the file and line of CuPy's source that answers.
        assert (entry.get("recorded") is True) != bool(entry.get("source")), name
        if "source" in entry:
            assert entry["source"].startswith("cupy/"), name


def test_the_reference_has_each_kind_of_answer():
    answers = [_answer(e) for e in BEHAVIOURS.values()]
    assert {a["type"] for a in answers if a["outcome"] == "raises"} == {"TypeError", "ValueError"}
    assert {a["type"] for a in answers if a["outcome"] == "ok"} >= {"cupy.ndarray", "numpy.float64"}
    assert sum(e.get("recorded") is True for e in BEHAVIOURS.values()) >= 30


# -- the stand-in --------------------------------------------------------------------------------


def test_the_stand_in_is_asked_what_the_reference_answers(stand_in):
    assert list(stand_in["behaviours"]) == list(BEHAVIOURS)


@pytest.mark.parametrize("name", list(BEHAVIOURS))
def test_the_stand_in_answers_as_cupy_14_2_0(stand_in, name):
    assert stand_in["behaviours"][name] == _answer(BEHAVIOURS[name])


# -- the real CuPy, where installed --------------------------------------------------------------


def _answered(recording: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: a for n, a in recording["behaviours"].items() if a["outcome"] != "needs-device"}


def test_the_real_cupy_answers_as_the_stand_in(real, stand_in):
    if real["cupy_version"] != "14.2.0":
        pytest.skip(f"the stand-in is CuPy 14.2.0's; CuPy {real['cupy_version']} is installed")
    answered = _answered(real)
    assert answered, "the real CuPy answered nothing without a device"
    differ = {n: (a, stand_in["behaviours"][n]) for n, a in answered.items() if a != stand_in["behaviours"][n]}
    assert differ == {}


def test_the_real_cupy_answers_as_the_reference(real):
    if real["cupy_version"] != "14.2.0":
        pytest.skip(f"the reference is CuPy 14.2.0's; CuPy {real['cupy_version']} is installed")
    answered = _answered(real)
    differ = {n: (a, BEHAVIOURS[n]) for n, a in answered.items() if a != _answer(BEHAVIOURS[n])}
    assert differ == {}
    # What it needs a device for, the reference reads from the source; on a GPU all is answered.
    needs_device = set(real["behaviours"]) - set(answered)
    assert {n for n in needs_device if BEHAVIOURS[n].get("recorded")} == set()


# -- layercheck.portability ----------------------------------------------------------------------

# Which table entry explains each refusal in the reference; None where no hint is due.
EXPECTED_KIND: dict[str, Kind | None] = {
    "x * a": Kind.NUMPY_KERNEL_OPERAND,
    "a * x": Kind.NUMPY_KERNEL_OPERAND,
    "x + numpy.array(1.0)": Kind.NUMPY_KERNEL_OPERAND,
    "x += a": Kind.NUMPY_KERNEL_OPERAND,
    "cupy.tanh(a)": Kind.NUMPY_KERNEL_OPERAND,
    "numpy.add(x, a)": Kind.NUMPY_KERNEL_OPERAND,
    "cupy.add(x, x, out=a)": Kind.NUMPY_KERNEL_OPERAND,
    "cupy.where(x > 0, x, a)": Kind.NUMPY_KERNEL_OPERAND,
    "cupy.concatenate([x, a])": Kind.NUMPY_KERNEL_OPERAND,
    "numpy.concatenate([x, a])": Kind.NUMPY_KERNEL_OPERAND,
    "x @ a.T": Kind.NUMPY_TYPED_ARGUMENT,
    "a @ x.T": Kind.NUMPY_TYPED_ARGUMENT,
    "cupy.dot(x, a.T)": Kind.NUMPY_TYPED_ARGUMENT,
    "numpy.dot(x, a.T)": Kind.NUMPY_TYPED_ARGUMENT,
    "x.dot(a.T)": Kind.NUMPY_TYPED_ARGUMENT,
    "cupy.matmul(x, a.T)": Kind.NUMPY_TYPED_ARGUMENT,
    "cupy.tensordot(x, a, axes=([1], [1]))": Kind.NUMPY_TYPED_ARGUMENT,
    "cupy.stack([x, a])": Kind.NUMPY_TYPED_ARGUMENT,
    "numpy.stack([x, a])": Kind.NUMPY_TYPED_ARGUMENT,
    "cupy.expand_dims(a, 0)": Kind.NUMPY_TYPED_ARGUMENT,
    "cupy.broadcast_to(a, (0, 3))": Kind.NUMPY_TYPED_ARGUMENT,
    "cupy.count_nonzero(a)": Kind.NUMPY_TYPED_ARGUMENT,  # CuPy's own wording of the same check
    "cupy.all(a)": Kind.NUMPY_CHECKED_ARGUMENT,
    "cupy.column_stack([x, a])": Kind.NUMPY_COLUMN_STACKED,
    # Only for items that are not arrays at all (a NumPy array is "Unsupported type" first), which
    # NumPy refuses too ("zero-dimensional arrays cannot be concatenated"): not a portability issue.
    "cupy.concatenate([x, 1.0])": None,
    "cupy.array([x, a])": Kind.CUPY_TO_NUMPY,
    "cupy.dot(a, x.T)": Kind.CUPY_TO_NUMPY,
    "x[...] = a": Kind.NUMPY_FILLED_IN,
    "x[:, 0] = numpy.ones(0)": Kind.NUMPY_FILLED_IN,
    "x[...] = [1.0, 2.0, 3.0]": Kind.NUMPY_FILLED_IN,
    "x.fill(a)": Kind.NUMPY_FILLED_IN,
    "cupy.copyto(x, a)": Kind.NUMPY_COPIED_IN,
    "numpy.copyto(x, a)": Kind.NUMPY_COPIED_IN,
    "x.sum(where=True)": Kind.NUMPY_KEYWORD,
    "x.max(initial=0.0)": Kind.NUMPY_KEYWORD,
    "cupy.sum(x, where=True)": Kind.NUMPY_KEYWORD,
    "numpy.sum(x, where=True)": Kind.NUMPY_KEYWORD,
    "numpy.mean(x, where=True)": Kind.NUMPY_KEYWORD,
    "numpy.max(x, initial=0.0)": Kind.NUMPY_KEYWORD,
    "numpy.add(x, x, where=True)": Kind.NUMPY_UFUNC_KEYWORD,
    "numpy.exp(x, order='C')": Kind.NUMPY_UFUNC_KEYWORD,
    "cupy.einsum('ij->j', x, out=None)": Kind.EINSUM_KEYWORD,
    "cupy.asarray(v, device='cpu')": Kind.NUMPY_KEYWORD,
}

# Words each hint must have: what the layer did, true of every call behind the message.
HINT_WORDS: dict[Kind, tuple[str, ...]] = {
    Kind.CUPY_TO_NUMPY: ("converts a CuPy array to NumPy",),
    Kind.NUMPY_KERNEL_OPERAND: ("mixes a NumPy array into CuPy arithmetic", "cupy.tanh", "out=", "cupy.concatenate"),
    Kind.NUMPY_TYPED_ARGUMENT: ("passes a NumPy array as argument", "takes only CuPy arrays"),
    Kind.NUMPY_CHECKED_ARGUMENT: ("passes a NumPy array as 'a'", "takes only CuPy arrays"),
    Kind.NUMPY_COLUMN_STACKED: ("column-stacks a NumPy array",),
    Kind.NUMPY_FILLED_IN: ("assigns a NumPy array (or a list) into a CuPy array", "single value"),
    Kind.NUMPY_COPIED_IN: ("copies a NumPy array into a CuPy array with copyto",),
    Kind.NUMPY_KEYWORD: ("NumPy's keyword", "does not take"),
    Kind.NUMPY_UFUNC_KEYWORD: ("calls a ufunc with NumPy's keyword", "CuPy's ufuncs do not take"),
    Kind.EINSUM_KEYWORD: ("cupy.einsum", "'out'", "dtype= and optimize="),
}

REFUSED = {name: entry for name, entry in BEHAVIOURS.items() if entry["outcome"] == "raises"}
EXCEPTIONS = {"TypeError": TypeError, "ValueError": ValueError}


def _raised(name: str) -> BaseException:
    """The exception CuPy raises for behaviour `name`, as the reference records it."""
    entry = REFUSED[name]
    return EXCEPTIONS[entry["type"]](entry["message"])


def test_every_refusal_in_the_reference_has_an_expected_kind():
    assert set(EXPECTED_KIND) == set(REFUSED)
    assert {k for k in EXPECTED_KIND.values() if k is not None} | {Kind.NO_ARRAY_NAMESPACE} == set(Kind)
    assert [r.kind for r in REFUSALS] == list(Kind), "one table entry per kind"


@pytest.mark.parametrize("name", list(REFUSED))
def test_each_refusal_is_recognised_with_a_true_hint(name):
    exc, kind = _raised(name), EXPECTED_KIND[name]
    found = refusal_of(exc)
    if kind is None:
        assert found is None and hint_for(exc) is None and not is_cupy_refusal(exc)
        return
    assert found is not None and found[0].kind is kind, found
    hint = hint_for(exc)
    assert hint is not None
    for word in HINT_WORDS[kind]:
        assert word in hint, (word, hint)
    # A NumPy array meeting CuPy means a layer bound to one device; a refused keyword does not.
    assert is_cupy_refusal(exc) is found[0].numpy_met_cupy
    assert is_cupy_refusal(exc) is (kind not in (Kind.NUMPY_KEYWORD, Kind.NUMPY_UFUNC_KEYWORD, Kind.EINSUM_KEYWORD))


def test_hints_name_what_the_message_names():
    assert "argument 'b' of a CuPy function" in hint_for(_raised("x @ a.T"))
    assert "argument 'array' of a CuPy function" in hint_for(_raised("cupy.broadcast_to(a, (0, 3))"))
    assert "calls amax() with NumPy's keyword initial=" in hint_for(_raised("numpy.max(x, initial=0.0)"))
    assert "calls asarray() with NumPy's keyword device=" in hint_for(_raised("cupy.asarray(v, device='cpu')"))
    assert "keyword where=" in hint_for(_raised("numpy.add(x, x, where=True)"))
    for name in ("x * a", "x @ a.T", "x[...] = a", "cupy.copyto(x, a)"):
        assert hint_for(_raised(name)).endswith(IDIOM), name


def test_the_array_namespace_hint_is_kept():
    exc = AttributeError("'ndarray' object has no attribute '__array_namespace__'")
    assert "have no __array_namespace__" in hint_for(exc) and not is_cupy_refusal(exc)


class _Unprintable(TypeError):
    def __str__(self) -> str:
        raise RuntimeError("no text")


@pytest.mark.parametrize(
    "exc",
    [
        # The same words, another exception type.
        ValueError("Unsupported type <class 'numpy.ndarray'>"),
        RuntimeError("Implicit conversion to a NumPy array is not allowed"),
        TypeError("non-scalar numpy.ndarray cannot be used for fill"),
        TypeError("non-scalar numpy.ndarray cannot be used for copyto"),
        ValueError("Argument 'b' has incorrect type (expected cupy._core.core._ndarray_base, got numpy.ndarray)"),
        ValueError("Only cupy arrays can be column stacked"),
        # CuPy's words about something that is not a NumPy array.
        TypeError("Unsupported type <class 'list'>"),
        TypeError("Argument 'b' has incorrect type (expected cupy._core.core._ndarray_base, got list)"),
        TypeError("'a' must be a cupy.ndarray object, not <class 'list'>."),
        ValueError("non-scalar cupy.ndarray cannot be used for fill"),
        TypeError("Only cupy arrays can be concatenated"),
        TypeError("Wrong arguments {'out': 1}"),
        # A layer's own TypeErrors.
        TypeError("unsupported operand type(s) for *: 'Weights' and 'float'"),
        TypeError("Argument 'b' has incorrect type"),
        TypeError("forward() got an unexpected keyword argument 'where'"),
        TypeError("Layer.sum() got an unexpected keyword argument 'where'"),
        TypeError("sum() got an unexpected keyword argument 'axes'"),
        TypeError("expected a numpy.ndarray"),
        AttributeError("'ndarray' object has no attribute 'namespace'"),
        _Unprintable(),
    ],
    ids=lambda exc: f"{type(exc).__name__}: {str(exc)[:60]}" if not isinstance(exc, _Unprintable) else "unprintable",
)
def test_lookalikes_get_no_hint(exc):
    assert refusal_of(exc) is None
    assert hint_for(exc) is None
    assert not is_cupy_refusal(exc)
