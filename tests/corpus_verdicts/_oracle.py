"""Independent brute-force oracle for the layers of tests/corpus_verdicts (imports no layercheck).

For each layer file: build the layer from its `example_layout` (np.random.seed(0), float64), draw
inputs and loss weights W, and compare backward with central differences of L = sum(W*Y), taken
element by element for every element of the input and of every learnable. Differences are taken
on the outputs first (sum(W * (Y(x+h) - Y(x-h))) / 2h), at the step 1e-6 and at larger steps for
layers whose outputs carry round-off (the best step counts). It also probes what the docstrings
claim beyond the gradient: linearity in dL/dY, finiteness, repeatability, observation mixing,
changes to dL/dY, float32 behaviour. Prints one block per file and, at the end, every file whose
oracle verdict disagrees with its docstring (exit status 1 if any).

    python tests/corpus_verdicts/_oracle.py [FILE.py ...]
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import inspect
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
GRADIENTS = "gradients_are_numerically_correct"
STEPS = (1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4)
RTOL = 1e-6  # a Correct backward must agree to this relative error, element by element


# -- docstring and layout ----------------------------------------------------------------------


@dataclass
class Declared:
    correct: bool
    check: str | None
    says: list[str] = field(default_factory=list)
    never_says: list[str] = field(default_factory=list)


def declared(path: Path) -> Declared:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = doc.split(":", 1)[0]
    if first not in ("Correct", "Broken"):
        raise ValueError(f"{path.name}: docstring must start with 'Correct:' or 'Broken:'")
    d = Declared(first == "Correct", None)
    for line in doc.splitlines()[1:]:
        key, _, value = line.partition(":")
        if key == "Check":
            d.check = value.strip()
        elif key == "Says":
            d.says.append(value.strip())
        elif key == "Never says":
            d.never_says.append(value.strip())
    if d.correct == bool(d.check):
        raise ValueError(f"{path.name}: a Broken file names one Check, a Correct file none")
    return d


@dataclass(frozen=True)
class Layout:
    size: tuple[int, ...]
    format: str

    @property
    def ndim(self) -> int:
        return len(self.size)

    def find(self, label: str) -> int | None:
        return self.format.index(label) if label in self.format else None


def parse_layout(text: str) -> Layout:
    sizes, _, labels = text.partition(":")
    size = tuple(int(s) for s in sizes.split(","))
    if len(size) != len(labels) or not set(labels) <= set("SCBTU"):
        raise ValueError(f"bad layout {text!r}")
    return Layout(size, labels)


def load_class(path: Path) -> type:
    spec = importlib.util.spec_from_file_location(f"verdict_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    classes = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj) and obj.__module__ == module.__name__ and hasattr(obj, "predict")
    ]
    if len(classes) != 1:
        raise ValueError(f"{path.name}: expected one layer class, found {len(classes)}")
    return classes[0]


# -- running the layer -------------------------------------------------------------------------


class Case:
    """A layer class at its example layout with fixed inputs and loss weights."""

    def __init__(self, cls: type):
        self.cls = cls
        self.layout = parse_layout(cls.example_layout)
        self.learnables = tuple(getattr(cls, "learnables", ()))
        np.random.seed(0)
        self.template = self._build()
        low = (getattr(cls, "input_domain", None) or (None, None))[0]
        x = np.random.standard_normal(self.layout.size)
        self.X = np.exp(x) if low == 0 else x  # log-normal inside (0, inf)
        Y, _ = self.run(self.fresh(), self.X)
        self.W = np.random.standard_normal(Y.shape)

    def _build(self):
        layer = self.cls()
        if hasattr(layer, "initialize"):
            layer.initialize(self.layout)
        for name in self.learnables:
            setattr(layer, name, np.asarray(getattr(layer, name), dtype=np.float64))
        return layer

    def fresh(self):
        return copy.deepcopy(self.template)

    @staticmethod
    def run(layer, X):
        if hasattr(layer, "forward"):
            Y, memory = layer.forward(X)
            return Y, memory
        return layer.predict(X), None

    def backward(self, layer, X, dLdY):
        Y, memory = self.run(layer, X)
        grads = layer.backward(X, Y, dLdY, memory)
        grads = list(grads) if isinstance(grads, tuple) else [grads]
        return [np.asarray(g, dtype=np.float64) for g in grads]

    def numeric(self, arg: int, h: float) -> np.ndarray:
        """dL/d(argument) by central differences, element by element, at step h."""
        layer = self.fresh()
        X = self.X.copy()
        target = X if arg == 0 else getattr(layer, self.learnables[arg - 1])
        out = np.empty(target.shape)
        flat, res = target.reshape(-1), out.reshape(-1)
        for i in range(flat.size):
            v = flat[i]
            flat[i] = v + h
            yp, _ = self.run(layer, X)
            flat[i] = v - h
            ym, _ = self.run(layer, X)
            flat[i] = v
            res[i] = np.sum(self.W * (yp - ym)) / (2 * h)
        return out


@dataclass
class ArgResult:
    name: str
    rel_at_default: float  # max element-wise relative error at the step 1e-6
    best_rel: float
    best_step: float
    where: str


def elementwise_rel(num: np.ndarray, ana: np.ndarray) -> np.ndarray:
    scale = [np.max(np.abs(a[np.isfinite(a)]), initial=0.0) for a in (num, ana)]
    floor = 1e-9 * max(*scale, 1e-300)
    with np.errstate(all="ignore"):
        rel = np.abs(num - ana) / np.maximum(np.maximum(np.abs(num), np.abs(ana)), floor)
    return np.where(np.isfinite(rel), rel, np.inf)


def where_wrong(rel: np.ndarray, num: np.ndarray, ana: np.ndarray, labels: str | None, x: np.ndarray | None) -> str:
    wrong = rel > RTOL
    if not wrong.any():
        return ""
    parts = [f"{int(wrong.sum())}/{wrong.size} wrong"]
    for axis in range(wrong.ndim):
        hit = np.flatnonzero(wrong.any(axis=tuple(a for a in range(wrong.ndim) if a != axis)))
        if wrong.shape[axis] > 1 and hit.size < wrong.shape[axis]:
            label = labels[axis] if labels else "?"
            parts.append(f"axis {axis} ({label}) only at {hit.tolist()}")
    spatial = [i for i, label in enumerate(labels or "") if label == "S"]
    if spatial:
        grids = np.indices(wrong.shape)
        edge = np.min([np.minimum(grids[i], wrong.shape[i] - 1 - grids[i]) for i in spatial], axis=0)
        parts.append(f"distance to the plane's edge {sorted(set(edge[wrong].tolist()))}")
    if x is not None and x.shape == wrong.shape:
        parts.append(f"X<0 among wrong {np.mean(x[wrong] < 0):.0%}")
    with np.errstate(all="ignore"):
        ratio = ana[wrong] / num[wrong]
    finite = ratio[np.isfinite(ratio)]
    if finite.size and np.ptp(finite) < 1e-6 * max(1.0, np.abs(finite).max()):
        parts.append(f"analytic/numeric = {finite[0]:.6g}")
    nonfinite = int((~np.isfinite(ana)).sum())
    if nonfinite:
        parts.append(f"{nonfinite} non-finite analytic")
    return ", ".join(parts)


@dataclass
class Findings:
    args: list[ArgResult]
    nonfinite: int
    linear: bool | None
    ignores: bool | None
    repeatable: bool
    modifies_dldy: bool
    mixes: bool | None
    float32_like: float  # share of outputs unchanged by a 1e-9 relative change of every input


def _close(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return all(
        x.shape == y.shape
        and np.allclose(x, y, rtol=1e-9, atol=1e-12 * max(1.0, np.nanmax(np.abs(y), initial=0)), equal_nan=True)
        for x, y in zip(a, b)
    )


def examine(case: Case) -> Findings:
    ana = case.backward(case.fresh(), case.X, case.W.copy())
    names = ["X", *case.learnables]
    args = []
    for k, name in enumerate(names):
        results = []
        for h in STEPS:
            num = case.numeric(k, h)
            rel = elementwise_rel(num, ana[k])
            results.append((float(rel.max()), h, rel, num))
        default = results[0]
        best = min(results, key=lambda r: r[0])
        # an element is wrong where it disagrees at every step; its numeric value is the step-1e-6 one
        rel_min = np.min([r[2] for r in results], axis=0)
        labels = case.layout.format if ana[k].ndim == case.layout.ndim else None
        where = where_wrong(rel_min, default[3], ana[k], labels, case.X if k == 0 else None)
        args.append(ArgResult(name, default[0], best[0], best[1], where))
    nonfinite = int(sum((~np.isfinite(g)).sum() for g in ana))

    linear = ignores = None
    try:
        twice = case.backward(case.fresh(), case.X, 2 * case.W)
        other = case.backward(case.fresh(), case.X, np.random.default_rng(1).standard_normal(case.W.shape))
        linear = _close(twice, [2 * g for g in ana])
        ignores = _close(other, ana) and _close(twice, ana)
    except Exception:
        pass

    layer = case.fresh()
    try:
        first = case.backward(layer, case.X, case.W.copy())
        second = case.backward(layer, case.X, case.W.copy())
        repeatable = _close(first, second)
    except Exception:
        repeatable = False

    dLdY = case.W.copy()
    try:
        case.backward(case.fresh(), case.X, dLdY)
    except Exception:
        pass
    modifies = not np.array_equal(dLdY, case.W)

    mixes = None
    fmt = case.template.output_format(case.layout.format) if hasattr(case.template, "output_format") else None
    fmt = fmt or case.layout.format
    b_in, b_out = case.layout.find("B"), fmt.find("B") if "B" in fmt else None
    if b_in is not None and b_out is not None:
        Y = case.fresh().predict(case.X)
        mixes = False
        for b in range(case.X.shape[b_in]):
            alone = case.fresh().predict(np.take(case.X, [b], axis=b_in))
            if not np.allclose(alone, np.take(Y, [b], axis=b_out), rtol=1e-12, atol=1e-12):
                mixes = True

    Y0 = case.fresh().predict(case.X)
    Y1 = case.fresh().predict(case.X * (1 + 1e-9))
    float32_like = float(np.mean(Y0 == Y1))
    return Findings(args, nonfinite, linear, ignores, repeatable, modifies, mixes, float32_like)


def verdict(d: Declared, f: Findings) -> str | None:
    """None when the oracle agrees with the docstring, else what disagrees."""
    wrong = [a.name for a in f.args if a.best_rel > RTOL]
    if d.correct:
        problems = []
        if wrong:
            problems.append(f"backward wrong for {wrong}")
        if f.nonfinite:
            problems.append("non-finite gradient")
        if f.linear is False:
            problems.append("not linear in dL/dY")
        if not f.repeatable:
            problems.append("not repeatable")
        if f.modifies_dldy:
            problems.append("modifies dL/dY")
        if f.mixes:
            problems.append("mixes observations")
        return "; ".join(problems) or None
    if d.check == GRADIENTS:
        return None if wrong else "declared wrong but every gradient agrees"
    expected = {
        "predict_is_consistent_across_observations": f.mixes is True,
        "backward_is_repeatable": not f.repeatable,
        "backward_does_not_modify_inputs": f.modifies_dldy,
        "predict_is_consistent_in_type": f.float32_like > 0.5,
    }
    if d.check not in expected:
        return f"the oracle has no probe for {d.check}"
    return None if expected[d.check] else f"no sign of the {d.check} failure"


def report(path: Path) -> str | None:
    d = declared(path)
    case = Case(load_class(path))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        f = examine(case)
    kind = "Correct" if d.correct else f"Broken ({d.check})"
    print(f"{path.name}: {kind}")
    for a in f.args:
        line = f"  {a.name:>6}: rel@1e-6 {a.rel_at_default:9.2e}  best {a.best_rel:9.2e} at step {a.best_step:g}"
        print(line + (f"  [{a.where}]" if a.where else ""))
    print(
        f"  linear in dL/dY {f.linear}, ignores dL/dY {f.ignores}, non-finite {f.nonfinite}, "
        f"repeatable {f.repeatable}, modifies dL/dY {f.modifies_dldy}, mixes observations {f.mixes}, "
        f"outputs insensitive to 1e-9 input change {f.float32_like:.0%}"
    )
    problem = verdict(d, f)
    print(f"  oracle: {'AGREES' if problem is None else 'DISAGREES: ' + problem}")
    return problem


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(p for p in HERE.glob("*.py") if not p.name.startswith("_"))
    disagree = {}
    for path in paths:
        problem = report(path)
        if problem is not None:
            disagree[path.name] = problem
    print(f"\n{len(paths) - len(disagree)} of {len(paths)} files agree with their docstring")
    for name, problem in disagree.items():
        print(f"  DISAGREES {name}: {problem}")
    return 1 if disagree else 0


if __name__ == "__main__":
    if not re.match(r"3\.(1\d|[2-9]\d)", sys.version.split()[0]):
        raise SystemExit("needs Python 3.10 or newer")
    raise SystemExit(main(sys.argv[1:]))
