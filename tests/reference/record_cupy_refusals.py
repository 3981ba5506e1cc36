"""Record what the importable `cupy` does when a NumPy array (or a NumPy-only keyword) comes where
CuPy work is due: whether it raises (which exception, which words) or goes on (and gives what).

    python tests/reference/record_cupy_refusals.py                  # JSON on stdout
    python tests/reference/record_cupy_refusals.py --merge FILE     # update a reference file

It runs against whichever `cupy` comes first on the path: the real CuPy, or the stand-in
(PYTHONPATH=tests/fake_gpu). Without a GPU the real CuPy still answers many of these, because it
checks its arguments before touching the device: `x` is then a zero-size array on an unowned null
pointer, which needs no device to make. An expression that reaches the device first is recorded
as "needs-device" (its CUDA error as the message).

--merge FILE writes the recording into a reference (tests/reference/cupy-14.2.0-refusals.json):
every answer recorded here replaces the file's entry and is marked "recorded": true; an entry this
run could not answer (needs-device) keeps what the file has, which says where in CuPy's source its
answer comes from ("source"). A run on a GPU therefore replaces every source-derived entry with a
recording, and `git diff` shows any that the source reading got wrong.
"""

from __future__ import annotations

import argparse
import json
import operator
import platform
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import cupy
import numpy


class Outcome(str, Enum):
    RAISES = "raises"
    OK = "ok"
    NEEDS_DEVICE = "needs-device"


@dataclass(frozen=True)
class Operands:
    x: Any  # a float64 cupy.ndarray of shape (0, 3)
    a: numpy.ndarray  # a NumPy array of the same shape: the operand CuPy is to refuse
    v: numpy.ndarray  # a non-empty NumPy vector, for what CuPy computes on the host


# name -> what it does, with the operands. The names are the expressions, `x` CuPy's and `a`, `v`
# NumPy's. Grouped by how CuPy answers (see layercheck/portability.py for the hints).
BEHAVIOURS: dict[str, Callable[[Operands], Any]] = {
    # A NumPy array as a kernel argument (ufuncs, operators, concatenate): "Unsupported type".
    "x * a": lambda o: o.x * o.a,
    "a * x": lambda o: o.a * o.x,
    "x + numpy.array(1.0)": lambda o: o.x + numpy.array(1.0),
    "x += a": lambda o: operator.iadd(o.x, o.a),
    "cupy.tanh(a)": lambda o: cupy.tanh(o.a),
    "numpy.add(x, a)": lambda o: numpy.add(o.x, o.a),
    "cupy.add(x, x, out=a)": lambda o: cupy.add(o.x, o.x, out=o.a),
    "cupy.where(x > 0, x, a)": lambda o: cupy.where(o.x > 0, o.x, o.a),
    "cupy.concatenate([x, a])": lambda o: cupy.concatenate([o.x, o.a]),
    "numpy.concatenate([x, a])": lambda o: numpy.concatenate([o.x, o.a]),
    # Compiled functions with `_ndarray_base` parameters: Cython's "Argument 'b' has incorrect type".
    "x @ a.T": lambda o: o.x @ o.a.T,
    "a @ x.T": lambda o: o.a @ o.x.T,
    "cupy.dot(x, a.T)": lambda o: cupy.dot(o.x, o.a.T),
    "numpy.dot(x, a.T)": lambda o: numpy.dot(o.x, o.a.T),
    "x.dot(a.T)": lambda o: o.x.dot(o.a.T),
    "cupy.matmul(x, a.T)": lambda o: cupy.matmul(o.x, o.a.T),
    "cupy.tensordot(x, a, axes=([1], [1]))": lambda o: cupy.tensordot(o.x, o.a, axes=([1], [1])),
    "cupy.stack([x, a])": lambda o: cupy.stack([o.x, o.a]),
    "numpy.stack([x, a])": lambda o: numpy.stack([o.x, o.a]),
    "cupy.expand_dims(a, 0)": lambda o: cupy.expand_dims(o.a, 0),
    "cupy.broadcast_to(a, (0, 3))": lambda o: cupy.broadcast_to(o.a, (0, 3)),
    # CuPy's own checks, in its own words.
    "cupy.count_nonzero(a)": lambda o: cupy.count_nonzero(o.a),
    "cupy.all(a)": lambda o: cupy.all(o.a),
    "cupy.column_stack([x, a])": lambda o: cupy.column_stack([o.x, o.a]),
    "cupy.concatenate([x, 1.0])": lambda o: cupy.concatenate([o.x, 1.0]),
    "cupy.array([x, a])": lambda o: cupy.array([o.x, o.a]),
    "cupy.dot(a, x.T)": lambda o: cupy.dot(o.a, o.x.T),
    # Assigning host data into a device array: filled in, so only a single value is taken.
    "x[...] = a": lambda o: o.x.__setitem__(Ellipsis, o.a),
    "x[:, 0] = numpy.ones(0)": lambda o: o.x.__setitem__((slice(None), 0), numpy.ones(0)),
    "x[...] = [1.0, 2.0, 3.0]": lambda o: o.x.__setitem__(Ellipsis, [1.0, 2.0, 3.0]),
    "x.fill(a)": lambda o: o.x.fill(o.a),
    "cupy.copyto(x, a)": lambda o: cupy.copyto(o.x, o.a),
    "numpy.copyto(x, a)": lambda o: numpy.copyto(o.x, o.a),
    "x[...] = numpy.array(2.0)": lambda o: o.x.__setitem__(Ellipsis, numpy.array(2.0)),
    "x[numpy.array([], dtype=numpy.intp)] = a": lambda o: o.x.__setitem__(numpy.array([], dtype=numpy.intp), o.a),
    # NumPy-only keywords.
    "x.sum(where=True)": lambda o: o.x.sum(where=True),
    "x.max(initial=0.0)": lambda o: o.x.max(initial=0.0),
    "cupy.sum(x, where=True)": lambda o: cupy.sum(o.x, where=True),
    "numpy.sum(x, where=True)": lambda o: numpy.sum(o.x, where=True),
    "numpy.mean(x, where=True)": lambda o: numpy.mean(o.x, where=True),
    "numpy.max(x, initial=0.0)": lambda o: numpy.max(o.x, initial=0.0),
    "numpy.add(x, x, where=True)": lambda o: numpy.add(o.x, o.x, where=True),
    "numpy.exp(x, order='C')": lambda o: numpy.exp(o.x, order="C"),
    "cupy.einsum('ij->j', x, out=None)": lambda o: cupy.einsum("ij->j", o.x, out=None),
    "cupy.asarray(v, device='cpu')": lambda o: cupy.asarray(o.v, device="cpu"),
    # Taken: computed on the host by NumPy, or uploaded.
    "cupy.sum(v)": lambda o: cupy.sum(o.v),
    "cupy.mean(v)": lambda o: cupy.mean(o.v),
    "cupy.max(v)": lambda o: cupy.max(o.v),
    "cupy.transpose(a)": lambda o: cupy.transpose(o.a),
    "x * numpy.float64(2.0)": lambda o: o.x * numpy.float64(2.0),
    "cupy.einsum('ij,ij->', x, a)": lambda o: cupy.einsum("ij,ij->", o.x, o.a),
    "cupy.hstack([x, a])": lambda o: cupy.hstack([o.x, o.a]),
    "cupy.asarray(a, copy=False)": lambda o: cupy.asarray(o.a, copy=False),
}


def _type_name(t: type) -> str:
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _needs_device(exc: BaseException) -> bool:
    """CuPy's CUDA errors (no driver, no device): the expression got past the argument checks."""
    return type(exc).__module__.startswith(("cupy_backends.cuda", "cupy.cuda"))


def _device_array() -> Any:
    try:
        return cupy.empty((0, 3))
    except Exception as exc:
        if not _needs_device(exc):
            raise
    # No device: an array over no memory. UnownedMemory(ptr, size, owner, device_id) needs the
    # device id given for a null pointer (cupy/cuda/memory.pyx), so it asks the driver nothing.
    memory = cupy.cuda.memory.UnownedMemory(0, 0, None, 0)
    return cupy.ndarray((0, 3), numpy.float64, memptr=cupy.cuda.MemoryPointer(memory, 0))


def answer(run: Callable[[Operands], Any]) -> dict[str, Any]:
    """One behaviour, on operands of its own (an expression may write into x)."""
    operands = Operands(x=_device_array(), a=numpy.ones((0, 3)), v=numpy.ones(3))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = run(operands)
    except Exception as exc:
        outcome = Outcome.NEEDS_DEVICE if _needs_device(exc) else Outcome.RAISES
        return {"outcome": outcome.value, "type": _type_name(type(exc)), "message": str(exc)}
    return {"outcome": Outcome.OK.value, "type": _type_name(type(value)), "message": None}


def record() -> dict[str, Any]:
    return {
        "cupy_version": cupy.__version__,
        "numpy_version": numpy.__version__,
        "python_version": platform.python_version(),
        "cupy_file": str(Path(cupy.__file__).resolve()),
        "behaviours": {name: answer(run) for name, run in BEHAVIOURS.items()},
    }


def merge(recording: dict[str, Any], reference: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The reference with this recording's answers in it, and what it could not fill in."""
    kept = reference.get("behaviours", {})
    merged, missing = {}, []
    for name, found in recording["behaviours"].items():
        if found["outcome"] != Outcome.NEEDS_DEVICE.value:
            merged[name] = {**found, "recorded": True}
        elif name in kept and "source" in kept[name]:
            merged[name] = kept[name]
        else:
            merged[name] = {**found, "source": None}
            missing.append(name)
    versions = {key: recording[key] for key in ("cupy_version", "numpy_version", "python_version")}
    return {**reference, **versions, "behaviours": merged}, missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merge", type=Path, help="update this reference file with the recording")
    args = parser.parse_args(argv)
    recording = record()
    if args.merge is None:
        json.dump(recording, sys.stdout, indent=1)
        print()
        return 0
    reference = json.loads(args.merge.read_text(encoding="utf-8")) if args.merge.exists() else {}
    merged, missing = merge(recording, reference)
    args.merge.write_text(json.dumps(merged, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for name in missing:
        print(f"{name}: needs a device and the reference says nothing from the source", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
