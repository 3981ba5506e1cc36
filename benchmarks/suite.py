"""The whole default run of one layer, in warm units, and where its time goes (issue 26, section 4).

    python benchmarks/suite.py            # PReLU and SReLU at the seed layout 24,24,20,128:SSCB
    python benchmarks/suite.py --quick    # a small layout and fewer repeats, for a smoke test

A warm unit is one warm predict + backward of the layer at float64, measured in this process.
The whole default run (float64 and float32, every check) goes through the Python API,
`layercheck.check_layer(cls, layout)`. After one warm-up of each, `--repeats` rounds of five
units and one whole run, interleaved so that both see the same load on a shared machine; the
median of each. Target: at most 15 units per layer.

The breakdown, from one more run: each check's time in units (`duration_s` of its result), the
set-up (building the session: the reference layer, its initialize) as what the target took
beyond its checks, and how many times each check called the layer's own methods (predict,
forward, backward, initialize; `layers` counts the layer objects constructed), counted by
wrapping the class's methods for that run only (the timed runs are not wrapped).

Ratios, not absolute times, are the figures to read: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "sample_layers")]

from prelu import PReLU  # noqa: E402
from srelu import SReLU  # noqa: E402

import layercheck  # noqa: E402
from layercheck.contract.layout import parse_layout  # noqa: E402
from layercheck.running import runner  # noqa: E402

LAYERS: dict[str, type] = {"PReLU": PReLU, "SReLU": SReLU}
SEED_LAYOUT = "24,24,20,128:SSCB"
QUICK_LAYOUT = "8,8,4,16:SSCB"
TARGET_UNITS = 15.0
METHODS = ("predict", "forward", "backward", "initialize")
SETUP = "(set-up)"


def _timed(fn: Callable[[], Any]) -> float:
    """The wall-clock seconds of one call of `fn`."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def warm_step(cls: type, layout: str) -> Callable[[], None]:
    """One predict + backward of `cls` at float64 (the unit), on a layer made once."""
    parsed = parse_layout(layout)
    np.random.seed(0)
    layer = cls()
    layer.initialize(parsed)
    rng = np.random.default_rng(0)
    X = rng.standard_normal(parsed.size)
    dLdY = rng.standard_normal(parsed.size)

    def step() -> None:
        Y = layer.predict(X)
        layer.backward(X, Y, dLdY, None)

    return step


def units_of(cls: type, layout: str, repeats: int) -> tuple[float, float]:
    """(the unit in seconds, the whole run in seconds).

    One warm-up of each, then `repeats` rounds of five units and one whole run, interleaved,
    so that both see the same load on a shared machine; the medians of each."""
    step = warm_step(cls, layout)
    whole_run = functools.partial(layercheck.check_layer, cls, layout)
    step()
    whole_run()
    units: list[float] = []
    wholes: list[float] = []
    for _ in range(repeats):
        units += [_timed(step) for _ in range(5)]
        wholes.append(_timed(whole_run))
    return statistics.median(units), statistics.median(wholes)


@contextmanager
def counted(cls: type) -> Iterator[Counter[tuple[str, str]]]:
    """Count the calls of `cls`'s methods (and constructions) per check, for one run: the
    class's methods are wrapped (keeping their signatures) and the runner's `run_check` names
    the check running; calls outside every check are the set-up's."""
    counts: Counter[tuple[str, str]] = Counter()
    current = [SETUP]
    saved = {name: cls.__dict__[name] for name in (*METHODS, "__init__") if name in cls.__dict__}

    def wrap(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        key = "layers" if name == "__init__" else name

        @functools.wraps(method)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counts[(current[0], key)] += 1
            return method(*args, **kwargs)

        return wrapper

    original_run_check = runner.run_check

    def run_check(check: Any, session: Any, *rest: Any) -> Any:
        current[0] = check.name
        try:
            return original_run_check(check, session, *rest)
        finally:
            current[0] = SETUP

    for name, method in saved.items():
        setattr(cls, name, wrap(name, method))
    runner.run_check = run_check
    try:
        yield counts
    finally:
        runner.run_check = original_run_check
        for name, method in saved.items():
            setattr(cls, name, method)


def measure(name: str, layout: str, repeats: int) -> tuple[float, float, list[str]]:
    """(units of the whole run, the unit in seconds, the breakdown's lines)."""
    cls = LAYERS[name]
    unit, whole = units_of(cls, layout, repeats)
    # The breakdown's run: timed per check by the report, its layer calls counted.
    with counted(cls) as counts:
        report = layercheck.check_layer(cls, layout)
    units = whole / unit
    verdict = "PASS" if units <= TARGET_UNITS else "MISS"
    lines = [
        f"{name}: one warm predict + backward {unit * 1e3:.1f} ms; whole default run {whole * 1e3:.0f} ms "
        f"= {units:.1f} units   [target <= {TARGET_UNITS:g}] {verdict}   ({report.status.value})"
    ]
    checked = sum(c.duration_s for c in report.checks)
    rows = [(SETUP, report.duration_s - checked, "")]
    rows += [(c.name, c.duration_s, c.status.value) for c in report.checks]
    header = "  ".join(f"{m:>8}" for m in (*METHODS, "layers"))
    lines.append(f"    {'check':50} {'units':>6}  {header}  status")
    totals: Counter[str] = Counter()
    for check, seconds, status in rows:
        calls = [counts[(check, m)] for m in (*METHODS, "layers")]
        for m, n in zip((*METHODS, "layers"), calls):
            totals[m] += n
        if seconds / unit < 0.05 and not any(calls):
            continue
        cells = "  ".join(f"{n:8d}" for n in calls)
        lines.append(f"    {check:50} {seconds / unit:6.2f}  {cells}  {status}")
    cells = "  ".join(f"{totals[m]:8d}" for m in (*METHODS, "layers"))
    lines.append(f"    {'total (this run)':50} {report.duration_s / unit:6.2f}  {cells}")
    return units, unit, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small layout and fewer repeats")
    parser.add_argument("--repeats", type=int, default=None, help="timed whole runs per layer (default 5, quick 3)")
    parser.add_argument("--layer", choices=sorted(LAYERS), action="append", help="only this layer (repeatable)")
    args = parser.parse_args()
    layout = QUICK_LAYOUT if args.quick else SEED_LAYOUT
    repeats = args.repeats or (3 if args.quick else 5)
    print(
        f"whole default run (float64 and float32, every check) through check_layer at {layout}, in warm units "
        f"(one warm predict + backward at float64); median of {repeats} runs interleaved with units"
    )
    results = {}
    for name in args.layer or LAYERS:
        units, _, lines = measure(name, layout, repeats)
        results[name] = units
        print("\n".join(lines))
    summary = ", ".join(f"{name} {units:.1f}" for name, units in results.items())
    verdict = "PASS" if all(u <= TARGET_UNITS for u in results.values()) else "MISS"
    print(f"units: {summary}   [target <= {TARGET_UNITS:g} each] {verdict}")


if __name__ == "__main__":
    main()
