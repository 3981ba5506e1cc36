"""The gradient check when a layer is wrong, against the same layer's passing check: warm, in
one process (a warm-up call, then the fastest of five: on a shared machine the run least
disturbed by other processes, timeit's rule), as ratios measured in one run.

    python benchmarks/failing_path.py                      # the seed layout 24,24,20,128:SSCB
    python benchmarks/failing_path.py --layout 8,8,4,16:SSCB

A parametric Swish layer, Y = X * sigmoid(beta X) with one beta per channel, and three wrong
twins: dL/dbeta off by a factor 2, dL/dbeta wrong in one channel, and a predict that mixes
the observations of a batch (its backward ignores the mixing). Each line gives the failing
check's time over the correct layer's, the time the diagnosis spent, the calls of the layer the
check made (counted in one more run: `speed.Calls`) and how many of them ran on the whole
batch, the peak of that run's allocations (traced: `tracemalloc`) in copies of the input,
and its headline.
Target (issues 26, 38): a failed check at most 3x the passing one, never a timeout; the
diagnosis spends a budget of calls of the layer (`numerics.gradients.budget`), and localizes a
large batch, and shows a dependence across its observations, on its first observations
(`numerics.gradients.sub_batch`).
"""

from __future__ import annotations

import argparse
import functools
import time
import tracemalloc
from typing import Any

import numpy as np
from speed import Calls

import layercheck
import layercheck.checks.gradients as gradients
from layercheck.contract.layout import parse_layout

GRADIENTS = "gradients_are_numerically_correct"
TARGET = 3.0  # a failed check, over the same layer's passing one
_RUNS = 5  # warm runs timed, the fastest taken


def swish(bug: str | None, channels: int) -> type:
    class Swish:
        learnables = ("beta",)

        def __init__(self) -> None:
            self.beta = np.linspace(0.5, 1.5, channels).reshape(1, 1, channels, 1)

        def _input(self, X: Any) -> Any:
            return X + 1e-3 * X.mean(axis=3, keepdims=True) if bug == "mixes observations" else X

        def predict(self, X: Any) -> Any:
            X = self._input(X)
            return X / (1 + np.exp(-self.beta * X))

        def backward(self, X: Any, Y: Any, dLdY: Any, memory: Any) -> tuple[Any, Any]:
            X = self._input(X)  # the mixing's own gradient is left out: the bug
            s = 1 / (1 + np.exp(-self.beta * X))
            dLdX = dLdY * (s + self.beta * X * s * (1 - s))
            dLdbeta = (dLdY * X * X * s * (1 - s)).sum(axis=(0, 1, 3), keepdims=True)
            if bug == "factor 2 in beta":
                dLdbeta = 2 * dLdbeta
            if bug == "one channel of beta":
                dLdbeta[0, 0, channels // 3, 0] *= 1.5
            return dLdX, dLdbeta

    Swish.__name__ = "Swish" if bug is None else f"Swish ({bug})"
    return Swish


def timed(cls: type, layout: str) -> tuple[float, float, Any]:
    """Seconds of the fastest of five warm runs of the gradient check, the diagnosis's share
    of that run, and the last result."""
    spent: list[float] = []
    original = gradients.Diagnostician.diagnose

    def diagnose(self: Any, index: int) -> Any:
        start = time.perf_counter()
        try:
            return original(self, index)
        finally:
            spent.append(time.perf_counter() - start)

    gradients.Diagnostician.diagnose = diagnose  # type: ignore[method-assign]
    try:
        layercheck.check_layer(cls, layout, checks=[GRADIENTS], dtypes=["float64"])  # warm-up
        times, diagnosis = [], []
        for _ in range(_RUNS):
            spent.clear()
            start = time.perf_counter()
            report = layercheck.check_layer(cls, layout, checks=[GRADIENTS], dtypes=["float64"])
            times.append(time.perf_counter() - start)
            diagnosis.append(sum(spent))
    finally:
        gradients.Diagnostician.diagnose = original  # type: ignore[method-assign]
    fastest = min(range(len(times)), key=times.__getitem__)
    return times[fastest], diagnosis[fastest], report.result(GRADIENTS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layout", default="24,24,20,128:SSCB")
    args = parser.parse_args()
    layout = parse_layout(args.layout)
    channels = layout.size[layout.format.index("C")]
    passing, _, result = timed(swish(None, channels), args.layout)
    assert result.status == "passed", result.message
    print(
        f"layout {args.layout}; the correct layer's gradient check: {passing:.3f} s (warm, fastest of {_RUNS}; "
        f"{counted(None, args.layout, channels)})"
    )
    for bug in ("factor 2 in beta", "one channel of beta", "mixes observations"):
        seconds, diagnosis, result = timed(swish(bug, channels), args.layout)
        ratio = seconds / passing
        print(
            f"{bug:>22}: {ratio:5.1f}x [target <= {TARGET:g}x] {'PASS' if ratio <= TARGET else 'MISS'} "
            f"({seconds:.2f} s, diagnosis {diagnosis:.2f} s; {counted(bug, args.layout, channels)}) "
            f"{result.status}: {result.message}"
        )


def counted(bug: str | None, layout: str, channels: int) -> str:
    """The calls one gradient check of the layer with `bug` makes, and those of them on the
    whole batch (the rest run on a sub-batch of a few observations, at a fraction of the
    cost), and the peak of its allocations in copies of the input: "57 predicts, 3 backwards;
    12 and 2 of the whole batch; peak 9.1 copies of X"."""
    calls = Calls(swish(bug, channels))
    parsed = parse_layout(layout)
    batch, axis = parsed.size[parsed.format.index("B")], parsed.format.index("B")
    whole = {"predict": 0, "backward": 0}

    def on_whole(method: str) -> Any:
        fn = getattr(calls.cls, method)

        @functools.wraps(fn)  # the signature kept: layercheck reads it
        def counting(self: Any, X: Any, *rest: Any) -> Any:
            whole[method] += X.shape[axis] == batch
            return fn(self, X, *rest)

        return counting

    for method in whole:
        setattr(calls.cls, method, on_whole(method))
    tracemalloc.start()
    try:
        layercheck.check_layer(calls.cls, layout, checks=[GRADIENTS], dtypes=["float64"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    copies = peak / (parsed.numel * np.dtype(np.float64).itemsize)
    return (
        f"{calls.words()}; {whole['predict']} and {whole['backward']} of the whole batch; peak {copies:.1f} copies of X"
    )


if __name__ == "__main__":
    main()
