"""The checks on the device: time of the gradient check and of the whole suite over one
predict + backward of the sample SReLU (float64), measured in one run.

    python benchmarks/gpu.py            # the seed layout and 64,64,64,128:SSCB, GPU and CPU
    python benchmarks/gpu.py --quick    # a small layout, for a smoke test

Targets on the GPU (issue 14): gradient check <= 10x and whole suite <= 60x one predict +
backward, at both layouts; on the CPU the ratios no worse than before the engine moved to the
device (10x and 23x at the seed layout). Without a usable GPU only the CPU rows are printed,
with the reason. Every GPU time is taken after a warm-up run (CuPy compiles its kernels on
first use) and ends with a device synchronization. Ratios, not absolute times, are the figures
to read: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "sample_layers")]

import layercheck  # noqa: E402
from layercheck.contract.layout import parse_layout  # noqa: E402
from layercheck.devices import gpu_status  # noqa: E402

GRADIENTS = ["gradients_are_numerically_correct"]
DTYPES = ["float64"]
LAYOUTS = ("24,24,20,128:SSCB", "64,64,64,128:SSCB")
QUICK_LAYOUTS = ("8,8,4,16:SSCB",)
TARGETS = {"gpu": (10.0, 60.0), "cpu": (10.0, 23.0)}


def _srelu() -> Any:
    from srelu import SReLU  # the sample imports CuPy when it is installed: after sys.path is set

    return SReLU


def median_time(fn: Callable[[], Any], repeats: int, sync: Callable[[], None]) -> float:
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(layout_text: str, device: str, repeats: int) -> dict[str, float]:
    """Seconds for one predict + backward, the gradient check and the whole suite on `device`."""
    SReLU = _srelu()
    xp: Any = np
    sync: Callable[[], None] = lambda: None  # noqa: E731
    if device == "gpu":
        xp = gpu_status().module
        sync = xp.cuda.Device().synchronize
    layout = parse_layout(layout_text)
    np.random.seed(0)
    layer = SReLU()
    layer.initialize(layout)
    for name in layer.learnables:
        setattr(layer, name, xp.asarray(getattr(layer, name)))
    rng = np.random.default_rng(0)
    X = xp.asarray(rng.standard_normal(layout.size))
    dLdY = xp.asarray(rng.standard_normal(layout.size))

    def predict_backward() -> None:
        Y = layer.predict(X)
        layer.backward(X, Y, dLdY, None)

    def gradient_check() -> None:
        report = layercheck.check_layer(SReLU, layout_text, device=device, checks=GRADIENTS, dtypes=DTYPES)
        assert report.checks[0].status == "passed", report.checks[0].message

    def whole_suite() -> None:
        report = layercheck.check_layer(SReLU, layout_text, device=device, dtypes=DTYPES)
        bad = {c.name: c.message for c in report.checks if c.status not in ("passed", "skipped")}
        assert not bad, bad

    for warm_up in (predict_backward, gradient_check, whole_suite):
        warm_up()
    return {
        "one": median_time(predict_backward, 4 * repeats, sync),
        "gradients": median_time(gradient_check, repeats, sync),
        "suite": median_time(whole_suite, max(1, repeats // 2), sync),
    }


def report(layout: str, device: str, times: dict[str, float]) -> bool:
    gradient_target, suite_target = TARGETS[device]
    gradients, suite = times["gradients"] / times["one"], times["suite"] / times["one"]
    ok = gradients <= gradient_target and suite <= suite_target
    print(
        f"{device.upper()} {layout}: predict + backward {times['one'] * 1e3:.2f} ms, "
        f"gradient check {times['gradients'] * 1e3:.1f} ms, whole suite {times['suite'] * 1e3:.1f} ms"
    )
    print(f"    gradient check / (predict + backward) = {gradients:.1f}   [target <= {gradient_target:g}]")
    print(
        f"    whole suite / (predict + backward)    = {suite:.1f}   [target <= {suite_target:g}]"
        f"   {'meets both targets' if ok else 'MISSES a target'}"
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one small layout, few repeats (smoke test)")
    parser.add_argument("--cpu-large", action="store_true", help="also time the CPU at 64,64,64,128 (about a minute)")
    args = parser.parse_args()
    layouts = QUICK_LAYOUTS if args.quick else LAYOUTS
    repeats = 2 if args.quick else 6
    status = gpu_status()
    print(f"GPU: {status.reason if status.usable else 'none (' + status.reason + ')'}; NumPy {np.__version__}")
    all_ok = True
    for layout in layouts:
        if status.usable:
            all_ok &= report(layout, "gpu", measure(layout, "gpu", repeats))
        if layout == layouts[0] or args.cpu_large:
            all_ok &= report(layout, "cpu", measure(layout, "cpu", max(2, repeats // 2)))
    if not args.quick:
        print("every target met" if all_ok else "some target missed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
