"""Gradient-check benchmark: speed, sensitivity and false alarms, measured in one run.

    python benchmarks/gradients.py            # full run (a few minutes on 2 cores)
    python benchmarks/gradients.py --quick    # fewer seeds, for a smoke test

(a) time of the gradient check / time of one predict + backward, for the sample SReLU at the
    seed layout 24,24,20,128:SSCB (all 128 observations);
(b) the smallest planted relative error (gradient scaled by 1 + delta, delta = 1e-2 .. 1e-8)
    detected for PReLU and SReLU, per argument;
(c) false alarms over many seeds of correct kinked layers: PReLU, SReLU, ReLU with a third of
    its inputs within 1e-7 of the kink (some exactly on it), SReLU with inputs within 1e-7 of
    its thresholds, and a layer with a kink every 0.001 of its input.

Ratios, not absolute times, are the figures to read: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "sample_layers")]

from prelu import PReLU  # noqa: E402
from srelu import SReLU  # noqa: E402

import layercheck  # noqa: E402
from layercheck.contract.layout import parse_layout  # noqa: E402

GRADIENTS = ["gradients_are_numerically_correct"]
SEED_LAYOUT = "24,24,20,128:SSCB"


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# -- (a) speed ---------------------------------------------------------------------------------


def speed(repeats: int) -> None:
    layout = parse_layout(SEED_LAYOUT)
    np.random.seed(0)
    layer = SReLU()
    layer.initialize(layout)
    rng = np.random.default_rng(0)
    X = rng.standard_normal(layout.size)
    dLdY = rng.standard_normal(layout.size)

    def predict_backward():
        Y = layer.predict(X)
        layer.backward(X, Y, dLdY, None)

    predict_backward()
    one = median_time(predict_backward, repeats * 2)
    check = median_time(lambda: layercheck.check_layer(SReLU, SEED_LAYOUT, checks=GRADIENTS), repeats)
    report = layercheck.check_layer(SReLU, SEED_LAYOUT, checks=GRADIENTS)
    print(f"(a) SReLU at {SEED_LAYOUT} ({layout.numel:,} elements per input)")
    print(f"    predict + backward: {one * 1e3:.0f} ms   gradient check (with its set-up): {check * 1e3:.0f} ms")
    print(f"    ratio gradient check / (predict + backward) = {check / one:.1f}   [target <= 10]")
    print(f"    verdict: {report.checks[0].status}: {report.checks[0].message}")


# -- (b) sensitivity ---------------------------------------------------------------------------


def planted(cls, which: int, delta: float):
    """`cls` with its `which`-th returned gradient scaled by 1 + delta."""

    class Planted(cls):
        def backward(self, *args):
            grads = list(super().backward(*args))
            grads[which] = grads[which] * (1 + delta)
            return tuple(grads)

    Planted.__name__ = f"{cls.__name__}_planted"
    return Planted


def sensitivity(layout: str, seeds: int) -> None:
    deltas = [10.0**-k for k in range(2, 9)]
    print(f"(b) planted relative errors, gradient scaled by 1 + delta, layout {layout}, {seeds} seed(s) each")
    header = "    layer  argument  " + "  ".join(f"{d:7.0e}" for d in deltas) + "   smallest always detected"
    print(header)
    for cls, names in ((PReLU, ["X", "alpha"]), (SReLU, ["X", "tl", "al", "tr", "ar"])):
        for which, name in enumerate(names):
            rates = []
            for delta in deltas:
                hits = 0
                for seed in range(seeds):
                    report = layercheck.check_layer(planted(cls, which, delta), layout, checks=GRADIENTS, seed=seed)
                    hits += report.checks[0].status == "failed"
                rates.append(hits / seeds)
            always = [d for d, r in zip(deltas, rates) if r == 1.0]
            smallest = f"{min(always):.0e}" if always else "none"
            cells = "  ".join(f"{r:7.0%}" for r in rates)
            print(f"    {cls.__name__:5}  {name:8}  {cells}   {smallest}")


# -- (c) false alarms --------------------------------------------------------------------------


class KinkEvery:
    """Continuous piecewise-linear: slope 0.5 and 1.5 alternating, a kink every 0.001."""

    example_layout = "4,4,8,4:SSCB"

    def predict(self, X):
        xp = get_array_module(X)
        return X + 0.5 * xp.abs(xp.remainder(X, 0.002) - 0.001)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        return dLdY * (1 + 0.5 * xp.sign(xp.remainder(X, 0.002) - 0.001))


class ReLU:
    def predict(self, X):
        xp = get_array_module(X)
        return xp.maximum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        return dLdY * (X > 0)


def near(points: np.ndarray, rng: np.random.Generator, share: float, x: np.ndarray) -> np.ndarray:
    """Place `share` of x within 1e-7 of `points` (broadcast like x), a tenth of those exactly on them."""
    points = np.broadcast_to(points, x.shape)
    chosen = rng.random(x.shape) < share
    exact = chosen & (rng.random(x.shape) < 0.1)
    x = np.where(chosen, points + rng.uniform(-1e-7, 1e-7, x.shape), x)
    return np.where(exact, points, x)


def srelu_thresholds(layout, seed: int):
    from layercheck.running.session import seed_user_rngs

    seed_user_rngs(seed)
    layer = SReLU()
    layer.initialize(layout)
    return layer


def false_alarms(layout_text: str, seeds: int, kinds: tuple[str, ...] = ()) -> None:
    layout = parse_layout(layout_text)
    print(f"(c) false alarms of correct kinked layers, layout {layout_text}, {seeds} seeds each")

    def run(name, make_report):
        counts = {"passed": 0, "failed": 0, "incomplete": 0, "skipped": 0}
        masked = 0
        start = time.perf_counter()
        for seed in range(seeds):
            result = make_report(seed).checks[0]
            counts[result.status] += 1
            masked += sum(
                p["outputs_masked_at_kinks"] for a in result.details.get("arguments", []) for p in a.get("probes", [])
            )
        spent = time.perf_counter() - start
        print(
            f"    {name:42} failed {counts['failed']:4}  incomplete {counts['incomplete']:4}  passed {counts['passed']:4}"
            f"   (outputs masked at kinks: {masked}; {spent / seeds * 1e3:.0f} ms per check)"
        )

    def fixed(cls, x, seed):
        return layercheck.check_layer(cls, layout_text, checks=GRADIENTS, seed=seed, inputs=[x])

    def normal(seed):
        return np.random.default_rng(seed).standard_normal(layout.size)

    def srelu_near(seed):
        layer = srelu_thresholds(layout, seed)
        rng = np.random.default_rng(seed)
        x = near(layer.tl, rng, 1 / 6, 0.5 + 0.5 * normal(seed))
        x = near(layer.tr, rng, 1 / 6, x)
        return fixed(SReLU, x, seed)

    cases = {
        "PReLU": lambda s: layercheck.check_layer(PReLU, layout_text, checks=GRADIENTS, seed=s),
        "SReLU": lambda s: layercheck.check_layer(SReLU, layout_text, checks=GRADIENTS, seed=s),
        "ReLU, 1/3 of inputs within 1e-7 of 0": lambda s: fixed(
            ReLU, near(np.zeros(1), np.random.default_rng(s), 1 / 3, normal(s)), s
        ),
        "PReLU, 1/3 of inputs within 1e-7 of 0": lambda s: fixed(
            PReLU, near(np.zeros(1), np.random.default_rng(s), 1 / 3, normal(s)), s
        ),
        "SReLU, 1/3 of inputs within 1e-7 of thresholds": srelu_near,
        "kink every 0.001": lambda s: layercheck.check_layer(KinkEvery, layout_text, checks=GRADIENTS, seed=s),
    }
    for name, make_report in cases.items():
        if not kinds or name in kinds:
            run(name, make_report)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer seeds and repeats")
    args = parser.parse_args()
    seeds_c = 50 if args.quick else 1000
    speed(repeats=3 if args.quick else 5)
    print()
    sensitivity("12,12,20,16:SSCB", seeds=1 if args.quick else 3)
    print()
    false_alarms("4,4,8,4:SSCB", seeds_c)
    print()
    false_alarms(
        SEED_LAYOUT,
        3 if args.quick else 10,
        ("PReLU", "SReLU", "SReLU, 1/3 of inputs within 1e-7 of thresholds", "kink every 0.001"),
    )


if __name__ == "__main__":
    main()
