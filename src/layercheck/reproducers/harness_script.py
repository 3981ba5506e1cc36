"""The part every reproducer shares: the saved data, the user's layer, and its calls as
layercheck makes them. `script_text` writes the code below the marker into each script in
place of the script's own import of it, so that a reproducer needs nothing of layercheck.

It reads the header every script starts with (MODULE_PATH, MODULE_PATH_IS_RELATIVE,
TARGET_NAME, CONSTRUCTOR_ARGS), passed to `Saved` by the script.
"""

from __future__ import annotations

# In a reproducer, the code of `contract.conventions` is written above the harness instead.
from layercheck.contract.conventions import adopt

# isort: split
# >>> the harness (layercheck writes what follows into every reproducer)
import importlib.util
import json
import math
import os
import random
import sys
from typing import Any

import numpy as np

FORMAT = 1  # the layout of the .npz this script reads (layercheck's EVIDENCE_FORMAT)
# layercheck finds no layer in a reproducer (Saved has predict), in a folder it checks too.
LAYERCHECK_REPRODUCER = True


class Layout:
    """What `initialize` is given for each input, as layercheck gives it: size, format, ndim,
    find(label)."""

    def __init__(self, size: list[int], format: str, integer: list[int] | None = None):
        self.size, self.format = tuple(size), format
        self.integer = None if integer is None else tuple(integer)

    @property
    def ndim(self) -> int:
        return len(self.size)

    @property
    def numel(self) -> int:
        return math.prod(self.size)

    def find(self, label: str) -> int | None:
        index = self.format.find(label)
        return None if index < 0 else index

    def with_batch_size(self, n: int) -> Layout:
        batch = self.find("B")
        size = list(self.size)
        if batch is not None:
            size[batch] = n
        return Layout(size, self.format, None if self.integer is None else list(self.integer))

    def __str__(self) -> str:
        return ",".join(map(str, self.size)) + ":" + self.format


def load_target(script: str, module_path: str, relative: bool, name: str, convention: Any = None) -> Any:
    """The layer's class (or operation, or function) from its module, or the layer a
    convention makes of it (a function pair's, `adopt`); the module's folder is put on
    sys.path so that it imports its siblings as it does when layercheck imports it."""
    here = os.path.dirname(os.path.abspath(script))
    path = os.path.normpath(os.path.join(here, module_path)) if relative else module_path
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.dont_write_bytecode = True  # nothing written beside the user's files
    stem = os.path.splitext(os.path.basename(path))[0]
    # A module of a package (its folders hold __init__.py) is imported by its dotted name, as
    # layercheck imports it, so that its relative imports resolve.
    parts, root = [stem], folder
    while os.path.isfile(os.path.join(root, "__init__.py")) and os.path.dirname(root) != root:
        parts.insert(0, os.path.basename(root))
        root = os.path.dirname(root)
    if len(parts) > 1 and stem != "__init__" and all(part.isidentifier() for part in parts):
        sys.path.insert(0, root)
        module = importlib.import_module(".".join(parts))
    else:
        module_name = "_reproduced_" + "".join(c if c.isalnum() else "_" for c in stem)
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise SystemExit(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return getattr(module, name) if convention is None else adopt(vars(module), name, convention)


def unpack(result: Any, n: int) -> tuple[Any, ...]:
    """A method's values: a bare value when there is one, else a tuple (layercheck's contract)."""
    return (result,) if n == 1 else tuple(result)


class Saved:
    """The data layercheck saved beside the script (THIS_FILE.npz) and the layer it checked."""

    def __init__(self, script: str, module_path: str, relative: bool, name: str, args: str):
        self.path = os.path.splitext(os.path.abspath(script))[0] + ".npz"
        with np.load(self.path, allow_pickle=False) as data:
            self.data = {key: data[key] for key in data.files}
        self.meta = json.loads(str(self.data.pop("meta")))
        if self.meta.get("format") != FORMAT:
            raise SystemExit(f"{self.path} was written by another version of layercheck: run layercheck --repro again")
        meta = self.meta
        if meta["device"] == "gpu":
            import cupy  # the check ran on the GPU: so does its reproducer

            self.xp: Any = cupy
        else:
            self.xp = np
        self.target = load_target(script, module_path, relative, name, meta.get("convention"))
        self.args = json.loads(args)
        self.n_in, self.n_out = meta["n_inputs"], meta["n_outputs"]
        self.parameters = meta["learnables"] + meta["state"]
        self.dtypes = [np.dtype(d) for d in meta["arg_dtypes"]]
        self.layouts = [Layout(**layout) for layout in meta["layouts"]]

    def array(self, key: str, xp: Any = None) -> Any:
        """A fresh copy of a saved array, on the device the check ran on (or in module `xp`)."""
        return (xp or self.xp).array(self.data[key], copy=True)

    def arguments(self, xp: Any = None) -> list[Any]:
        """Fresh copies of the inputs, then the learnables and state, as layercheck gave them
        (on the device the check ran on, or in module `xp`)."""
        return [self.array(f"x{i}", xp).astype(dtype) for i, dtype in enumerate(self.dtypes)]

    # -- the layer ------------------------------------------------------------------------

    def fresh(self, layouts: list[Layout] | None = None, initialize: bool = True) -> Any:
        """The layer constructed and initialized as layercheck does (the global RNGs seeded
        before each); set its learnables and state with `set_parameters`."""
        seed = self.meta["seed"]
        np.random.seed(seed % 2**32)
        random.seed(seed)
        obj = self.target(**self.args) if isinstance(self.target, type) else self.target
        if callable(getattr(obj, "initialize", None)) and initialize:
            np.random.seed(seed % 2**32)
            random.seed(seed)
            obj.initialize(*(layouts or self.layouts))
        return obj

    def built(self, xp: Any = None) -> tuple[Any, list[Any], list[Any]]:
        """A fresh layer holding the saved learnables and state, the inputs, and every argument
        (fresh copies, on the device the check ran on, or in module `xp`)."""
        obj = self.fresh()
        arguments = self.arguments(xp)
        self.set_parameters(obj, arguments[self.n_in :])
        return obj, arguments[: self.n_in], arguments

    def set_parameters(self, obj: Any, values: list[Any]) -> None:
        """Set the learnables and state (in that order) to copies of `values`."""
        for name, value in zip(self.parameters, values):
            setattr(obj, name, value.copy())

    def held(self, obj: Any) -> list[Any]:
        """The learnables and state the layer holds now."""
        return [getattr(obj, name, None) for name in self.parameters]

    # -- its calls, as layercheck makes them ----------------------------------------------

    def predict(self, obj: Any, xs: list[Any]) -> tuple[list[Any], list[Any]]:
        """The outputs and updated states of predict (of forward, for an operation)."""
        if self.meta["target_kind"] == "function":
            return self.forward(obj, xs)[:2]
        n_state = len(self.meta["state"])
        call = obj if self.meta.get("plain_function") else obj.predict
        got = unpack(call(*xs), self.n_out + n_state)
        return list(got[: self.n_out]), list(got[self.n_out :])

    def forward(self, obj: Any, xs: list[Any]) -> tuple[list[Any], list[Any], Any]:
        """The outputs, updated states and memory of the training pass (predict for a layer
        that defines no forward)."""
        meta = self.meta
        if meta["target_kind"] == "function":
            got = unpack(obj.forward(*xs), self.n_out + meta["num_memory_values"])
            return list(got[: self.n_out]), [], got[self.n_out :]
        if not meta["has_forward"]:
            ys, states = self.predict(obj, xs)
            return ys, states, None
        n_state = len(meta["state"])
        memory = 1 if meta["has_backward"] else 0
        got = unpack(obj.forward(*xs), self.n_out + n_state + memory)
        memory_value = got[-1] if memory else None
        return list(got[: self.n_out]), list(got[self.n_out : self.n_out + n_state]), memory_value

    def backward(
        self,
        obj: Any,
        xs: list[Any],
        ys: list[Any],
        dLdY: list[Any],
        dLdS: list[Any],
        memory: Any,
        mask: tuple[bool, ...] | None = None,
    ) -> list[Any]:
        """The gradients of the inputs, then of the learnables and state; an operation is asked
        for the gradients of `mask` (default: of every differentiable input)."""
        meta = self.meta
        if meta["target_kind"] == "function":
            args = [*dLdY, tuple(meta["differentiable"]) if mask is None else mask]
            args += xs if meta["save_inputs"] else []
            args += ys if meta["save_outputs"] else []
            args += list(memory)
            return list(unpack(obj.backward(*args), self.n_in))
        args = [*xs, *ys, *dLdY, *(dLdS if meta["state"] else []), memory]
        return list(unpack(obj.backward(*args), self.n_in + len(self.parameters)))

    def trained(self, obj: Any, xs: list[Any], dLdY: list[Any], dLdS: list[Any]) -> list[Any]:
        """forward then backward on `obj` (which holds its learnables and state), with dL/dY
        and dL/dS_out cast to the dtype of the outputs and states, as layercheck casts them."""
        ys, states, memory = self.forward(obj, xs)
        dLdY = [d.astype(y.dtype) if hasattr(y, "dtype") else d for d, y in zip(dLdY, ys)]
        dLdS = [d.astype(s.dtype) if hasattr(s, "dtype") else d for d, s in zip(dLdS, states)]
        return self.backward(obj, xs, ys, dLdY, dLdS, memory)


def names_of_arguments(meta: dict[str, Any]) -> list[str]:
    """The inputs, learnables and state, named as layercheck names them."""
    return [*meta["names"], *(f"learnable {n}" for n in meta["learnables"]), *(f"state {n}" for n in meta["state"])]


def number(x: Any) -> str:
    x = x.item() if hasattr(x, "item") else x
    return f"({x.real:.10g}{x.imag:+.10g}j)" if isinstance(x, complex) else f"{x:.10g}"


def index_text(index: tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, index)) + "]"


def differs(actual: Any, expected: Any, rtol: float, atol: float) -> dict[str, Any] | None:
    """None when `actual` equals `expected` within atol + rtol * |expected| (NaN equals NaN),
    else the worst element: its index, both values, the difference, what was allowed and how
    many elements differ."""
    xp = module_of(actual)
    wide = np.complex128 if actual.dtype.kind == "c" or expected.dtype.kind == "c" else np.float64
    a, e = actual.astype(wide), expected.astype(wide)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = xp.abs(a - e)
        allowed = atol + rtol * xp.abs(e)
        bad = ~((diff <= allowed) | (xp.isnan(a) & xp.isnan(e)) | (xp.isinf(a) & (a == e)))
    count = int(xp.count_nonzero(bad))
    if count == 0:
        return None
    score = xp.where(bad, xp.nan_to_num(diff, nan=np.inf, posinf=np.inf), -1.0)
    index = tuple(int(i) for i in np.unravel_index(int(xp.argmax(score)), a.shape))
    return {
        "index": index,
        "actual": actual[index],
        "expected": expected[index],
        "difference": float(diff[index]),
        "allowed": float(allowed[index]),
        "count": count,
        "size": int(a.size),
    }


def largest(values: list[Any]) -> float:
    """The largest finite magnitude in `values` (0 for none)."""
    best = 0.0
    for value in values:
        if value is None or not hasattr(value, "dtype") or value.dtype.kind not in "fc" or not value.size:
            continue
        magnitude = abs(value)
        finite = magnitude[magnitude == magnitude]
        finite = finite[finite != np.inf]
        best = max(best, float(finite.max()) if finite.size else 0.0)
    return best


def repeat_tolerance(y: Any) -> float:
    """How far two calls with the same inputs may differ: 16 ulps of the largest value."""
    return 16 * float(np.finfo(y.dtype).eps) * largest([y]) if y.dtype.kind in "fc" else 0.0


def module_of(x: Any) -> Any:
    """NumPy for a NumPy array, else CuPy (imported by `Saved` for a check on the GPU)."""
    return np if isinstance(x, (np.ndarray, np.generic)) else sys.modules["cupy"]


def finish(wrong: list[str], failed: str, passed: str, out: Any) -> int:
    """The verdict line and the exit status: 1 while something is wrong, else 0."""
    if wrong:
        print(
            f"FAILED: {failed} (" + ("1 finding" if len(wrong) == 1 else f"{len(wrong)} findings") + " above)", file=out
        )
        return 1
    print(f"PASSED: {passed}", file=out)
    return 0
