"""A wrong gradient, reproduced: written by `layercheck run --repro` for one failed
gradients_are_numerically_correct. A regression test to keep.

    python THIS_FILE.py    exit status 1 while the gradient is wrong, 0 once it is right
    pytest THIS_FILE.py    the same, as the test `test_gradient` (pytest collects a file named
                           on its command line whatever its name; to collect it with a folder,
                           name it test_*.py, keeping the .npz beside it under the same name)

It needs NumPy (CuPy for a check that ran on the GPU) and the layer's module, nothing of
layercheck. The data is THIS_FILE.npz beside it: every input, learnable and state at the point
layercheck checked, the loss weights W (dL/dY), and for each wrong gradient the direction v and
the step t of the finite difference that disagreed, with the seed, dtypes and tolerances.

What it computes, for each argument A whose gradient failed (the loss is L = sum(Re(conj(W) Y))
over every output and updated state):
    analytic = <dL/dA, v>, from the layer's backward with dL/dY = W
    numeric  = <W, Y(A + t v) - Y(A - t v)> / 2t, the central difference of the training pass
and they must agree within rtol * max(|analytic|, |numeric|) + atol * |v| + the finite
difference's own error (estimated from the second difference) + the round-off of the analytic
side. Outputs that cross a non-differentiable point within the step (a ReLU kink) are left out
of the loss, as layercheck leaves them out. It then measures a few elements of A one at a time.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

# >>> the target (written by layercheck)
MODULE_PATH = "layer.py"
MODULE_PATH_IS_RELATIVE = True
TARGET_NAME = "Layer"
CONSTRUCTOR_ARGS = "{}"
TARGET_LABEL = "layer.py"
# <<< the target

# >>> the harness (written by layercheck)
from layercheck.reproducers.harness_script import Saved  # noqa: E402 - replaced by the code

# <<< the harness

ELEMENT_SLACK = 10.0


class Problem:
    """The layer's training pass and backward at the saved point, as layercheck ran them."""

    def __init__(self) -> None:
        self.saved = Saved(__file__, MODULE_PATH, MODULE_PATH_IS_RELATIVE, TARGET_NAME, CONSTRUCTOR_ARGS)
        saved, meta = self.saved, self.saved.meta
        self.meta, self.data, self.xp = meta, saved.data, saved.xp
        self.precision = np.dtype(meta["precision"])
        self.eps = float(meta["eps"])
        self.n_in, self.n_out = saved.n_in, saved.n_out
        self.dtypes = saved.dtypes
        self.values = [self.xp.asarray(self.data[f"x{i}"]) for i in range(len(meta["arguments"]))]
        self.weights = [self.xp.asarray(self.data[f"w{j}"]) for j in range(len(meta["output_names"]))]

    # -- the layer ------------------------------------------------------------------------

    def _compute(self, y: Any) -> Any:
        kind = np.result_type(self.precision, np.complex64) if y.dtype.kind == "c" else self.precision
        return self.xp.asarray(y).astype(kind)

    def run(self, obj: Any, values: list[Any]) -> tuple[list[Any], list[Any], list[Any], Any]:
        """The training pass at `values`: the inputs given, the outputs, states and memory."""
        n = self.n_in
        self.saved.set_parameters(obj, [value.astype(dtype) for value, dtype in zip(values[n:], self.dtypes[n:])])
        xs = [value.astype(dtype, copy=True) for value, dtype in zip(values[:n], self.dtypes[:n])]
        ys, states, memory = self.saved.forward(obj, xs)
        return xs, ys, states, memory

    def outputs(self, values: list[Any]) -> list[Any]:
        """Every output and updated state at `values`, at the compute precision."""
        _, ys, states, _ = self.run(self.layer_for_passes, values)
        return [self._compute(y) for y in ys + states]

    def gradients(self, weights: list[Any]) -> list[Any]:
        """backward at the saved point with dL/dY = `weights`, on a fresh layer right after
        its training pass (layers keep on self what forward saw)."""
        obj = self.saved.fresh()
        xs, ys, states, memory = self.run(obj, self.values)
        loss = [w.astype(y.dtype) for w, y in zip(weights, ys + states)]
        grads = self.saved.backward(obj, xs, ys, loss[: self.n_out], loss[self.n_out :], memory)
        return [None if g is None else self._compute(g) for g in grads]

    def start(self) -> None:
        self.layer_for_passes = self.saved.fresh()
        self.base_outputs = self.outputs(self.values)
        self.base_gradients = self.gradients(self.weights)

    # -- one finite difference ----------------------------------------------------------------

    def compare(self, index: int, direction: Any, t: float, terms_eps: float) -> dict[str, Any]:
        """The analytic and numeric derivative along `direction` with step `t`, the tolerance
        and what makes it up."""
        xp, meta = self.xp, self.meta
        moved = list(self.values)
        moved[index] = self.values[index] + t * direction
        plus = self.outputs(moved)
        moved[index] = self.values[index] - t * direction
        minus = self.outputs(moved)
        weights, masked, changed, seconds, deltas = [], 0, 0, [], []
        for y0, yp, ym, w in zip(self.base_outputs, plus, minus, self.weights):
            delta, second = yp - ym, yp + ym - 2 * y0
            floor = xp.maximum(self.eps * xp.abs(y0), meta["spread"])
            kinks = xp.abs(second) > 64 * floor + meta["rho"] * xp.abs(delta)
            masked += int(xp.count_nonzero(kinks))
            changed += int(xp.count_nonzero(delta))
            weights.append(xp.where(kinks, 0, w))
            deltas.append(delta)
            seconds.append(second)
        gradients = self.gradients(weights) if masked else self.base_gradients
        g = gradients[index]
        if g is None or tuple(g.shape) != tuple(direction.shape):
            return {"analytic": math.nan, "numeric": math.nan, "missing": True}
        analytic = _dot(g, direction)
        numeric = sum(_dot(w, d) for w, d in zip(weights, deltas)) / (2 * t)
        second_error = 4 * math.sqrt(sum(_sq(w * s) for w, s in zip(weights, seconds))) / (2 * t)
        roundoff = 0.0
        for w, y0, d in zip(weights, self.base_outputs, deltas):
            floor = xp.maximum(self.eps * xp.abs(y0), meta["spread"])
            roundoff += _sq(w * floor * (d != 0))
        roundoff_error = math.sqrt(roundoff) / t
        estimate = second_error + roundoff_error
        terms = math.sqrt(_sq(g * direction))
        tolerance = (
            meta["rtol"] * max(abs(analytic), abs(numeric))
            + meta["atol"] * math.sqrt(_sq(direction))
            + estimate
            + 64 * terms_eps * terms
        )
        return {
            "analytic": analytic,
            "numeric": numeric,
            "tolerance": tolerance,
            "estimate": estimate,
            "roundoff": roundoff_error,
            "masked": masked,
            "changed": changed,
            "scale": max(terms, abs(numeric), abs(analytic)),
            "missing": False,
        }

    def element(self, index: int, element: tuple[int, ...], terms_eps: float) -> dict[str, Any] | None:
        """The partial derivative at one element (each part of a complex one), with a step
        made smaller where the outputs cross a kink; None where no step decides."""
        value = self.values[index]
        rms = math.sqrt(_sq(value) / value.size) if value.size else 0.0
        scale = rms if rms > 0 and math.isfinite(rms) else 1.0
        units = (1, 1j) if value.dtype.kind == "c" else (1,)
        parts = []
        for unit in units:
            direction = self.xp.zeros(value.shape, dtype=value.dtype)
            direction[element] = unit
            h, found = self.meta["step_relative"], None
            for _ in range(4):
                got = self.compare(index, direction, h * scale, terms_eps)
                if got["missing"]:
                    return None
                if not got["masked"] and got["estimate"] <= self.meta["resolution"] * max(got["scale"], 1e-300):
                    found = got
                    break
                h = h * 100 if got["estimate"] <= 20 * got["roundoff"] else h / 10
            if found is None:
                return None
            parts.append(found)
        if len(parts) == 1:
            analytic, numeric = parts[0]["analytic"], parts[0]["numeric"]
        else:
            analytic = complex(parts[0]["analytic"], parts[1]["analytic"])
            numeric = complex(parts[0]["numeric"], parts[1]["numeric"])
        # One element's finite difference is noisier than a projection's: an element counts
        # as wrong only beyond ELEMENT_SLACK times its tolerance.
        allowed = ELEMENT_SLACK * max(p["tolerance"] for p in parts)
        return {
            "index": element,
            "analytic": analytic,
            "numeric": numeric,
            "allowed": allowed,
            "wrong": not all(math.isfinite(p["analytic"]) for p in parts) or abs(analytic - numeric) > allowed,
        }


def _dot(a: Any, b: Any) -> float:
    """sum(Re(conj(a) * b))."""
    return float((a.conj() * b).real.sum()) if a.dtype.kind == "c" else float((a * b.real).sum())


def _sq(a: Any) -> float:
    return float((abs(a) ** 2).sum())


def _wrong(got: dict[str, Any]) -> bool:
    """The analytic side is not a finite number, or differs by more than the tolerance."""
    if not math.isfinite(got["analytic"]):
        return True
    return bool(abs(got["analytic"] - got["numeric"]) > got["tolerance"])


def _number(x: Any) -> str:
    return f"{x:.10g}" if not isinstance(x, complex) else f"({x.real:.10g}{x.imag:+.10g}j)"


def reproduce(out: Any = None) -> int:
    """Recompute every failing gradient and print the numbers: 1 while one is wrong, else 0."""
    out = out or sys.stdout
    problem = Problem()
    meta = problem.meta
    problem.start()
    print(f"reproducing gradients_are_numerically_correct of {TARGET_LABEL}", file=out)
    print(
        f"  differentiated: {meta['evaluated']} in {meta['precision']} (the layer given {meta['dtype']}), seed {meta['seed']}",
        file=out,
    )
    print(
        f"  tolerance: rtol {meta['rtol']:g}, atol {meta['atol']:g} ({meta['tolerance_source']}), plus the finite "
        "difference's error estimate and the analytic side's round-off",
        file=out,
    )
    wrong = []
    for failure in meta["failures"]:
        index = failure["index"]
        name, kind = meta["arguments"][index], meta["kinds"][index]
        direction = problem.xp.asarray(problem.data[f"v{index}"])
        got = problem.compare(index, direction, failure["step"], failure["terms_eps"])
        print(f"{name} ({kind}): along the saved random direction v, step t = {failure['step']:.6g}", file=out)
        if got["missing"]:
            print(f"  backward returned no gradient of {name}'s shape: WRONG", file=out)
            wrong.append(name)
            continue
        bad = _wrong(got) or not math.isfinite(got["numeric"])
        difference = abs(got["analytic"] - got["numeric"])
        print(f"  analytic <dL/d{name}, v> = {_number(got['analytic'])}", file=out)
        print(f"  numeric  central difference = {_number(got['numeric'])}", file=out)
        print(
            f"  |analytic - numeric| = {difference:.6g}, tolerance {got['tolerance']:.6g}: "
            + ("WRONG" if bad else "agree"),
            file=out,
        )
        if got["masked"]:
            print(
                f"  ({got['masked']} of {got['changed']} changed outputs that bent sharply within the step "
                "left out of the loss)",
                file=out,
            )
        elements = [problem.element(index, tuple(e), failure["terms_eps"]) for e in failure["elements"]]
        measured = [e for e in elements if e is not None]
        if measured:
            worst = max(measured, key=lambda e: (e["wrong"], abs(e["analytic"] - e["numeric"])))
            at = ", ".join(map(str, worst["index"]))
            print(
                f"  worst of {len(measured)} element(s) measured: {name}[{at}]: analytic {_number(worst['analytic'])}, "
                f"numeric {_number(worst['numeric'])}, |difference| {abs(worst['analytic'] - worst['numeric']):.6g}, "
                f"allowed {worst['allowed']:.6g} ({ELEMENT_SLACK:g} times the tolerance of one element's finite "
                "difference): " + ("WRONG" if worst["wrong"] else "agree"),
                file=out,
            )
            bad = bad or any(e["wrong"] for e in measured)
        if bad:
            wrong.append(name)
    if wrong:
        print(f"FAILED: the gradient of {', '.join(wrong)} is wrong", file=out)
        return 1
    print("PASSED: every gradient that failed now agrees with finite differences", file=out)
    return 0


def test_gradient() -> None:
    """For pytest: fails while the gradient is wrong."""
    import io

    out = io.StringIO()
    status = reproduce(out)
    assert status == 0, out.getvalue()


if __name__ == "__main__":
    sys.exit(reproduce())
