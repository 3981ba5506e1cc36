"""The gradient check as a user meets it: its cost in one-training-step units, its memory in
copies of the input, and the same ratios for the peers that are installed, in one run.

    python benchmarks/speed.py            # the seed layout 24,24,20,128:SSCB; memory at 48,48,32,128
    python benchmarks/speed.py --quick    # a small layout, for a smoke test

(a) Time, measured as the CLI runs it: `layercheck run FILE --layout L --checks
    gradients_are_numerically_correct --dtype float64 --json ...`, the target's time as its
    worker reports it (set-up included, process start not), over one predict + backward run
    cold (the first call in a fresh process, first-touch page faults included). Then the
    whole default suite (float64 and float32) the same way. Targets (issue 17): gradient check
    <= 4x, whole suite <= 15x.
(b) Peers on the same layers and layout, over their own one forward + backward:
    torch.autograd.gradcheck(fast_mode=True) and jax.test_util.check_grads, each skipped with
    a line when not installed; the ratio of ratios (goal: layercheck at most half of torch's).
(c) Memory: peak RSS over the interpreter's (after imports and inputs), for the SReLU float64
    gradient check through `check_layer`, in copies of the input. Target: at most 8.

Ratios, not absolute times, are the figures to read: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_layers"
LAYERS = {"PReLU": SAMPLES / "prelu.py", "SReLU": SAMPLES / "srelu.py"}
TARGETS = {"gradient check": 4.0, "whole suite": 15.0, "memory copies": 8.0}

# One predict + backward, cold, in a fresh interpreter: the unit of every ratio.
_ONE_STEP = """
import sys, time, numpy as np
sys.path[:0] = [{root!r}, {samples!r}]
from layercheck.contract.loading import import_module
from pathlib import Path
cls = getattr(import_module(Path({path!r})), {name!r})
from layercheck import parse_layout
layout = parse_layout({layout!r})
layer = cls()
layer.initialize(layout)
x = np.random.default_rng(0).standard_normal(layout.size)
start = time.perf_counter()
y = layer.predict(x)
grads = layer.backward(x, y, np.ones_like(y), None)
print(time.perf_counter() - start)
"""

# Peak RSS of the float64 gradient check, over the interpreter's once its inputs exist.
_MEMORY = """
import resource, sys, numpy as np
sys.path[:0] = [{root!r}, {samples!r}]
import layercheck
from layercheck.contract.loading import import_module
from pathlib import Path
cls = getattr(import_module(Path({path!r})), "SReLU")
layout = layercheck.parse_layout({layout!r})
x = np.random.default_rng(0).standard_normal(layout.size)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report = layercheck.check_layer(cls, layout, checks=["gradients_are_numerically_correct"], dtypes=["float64"], inputs=[x])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(report.result("gradients_are_numerically_correct").status, (after - before) * 1024 / x.nbytes)
"""


# The same for one predict + backward of the layer alone: the floor no check can go below.
_STEP_MEMORY = """
import resource, sys, numpy as np
sys.path[:0] = [{root!r}, {samples!r}]
import layercheck
from layercheck.contract.loading import import_module
from pathlib import Path
cls = getattr(import_module(Path({path!r})), "SReLU")
layout = layercheck.parse_layout({layout!r})
x = np.random.default_rng(0).standard_normal(layout.size)
layer = cls()
layer.initialize(layout)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
y = layer.predict(x)
grads = layer.backward(x, y, np.random.default_rng(1).standard_normal(y.shape), None)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) * 1024 / x.nbytes)
"""


def _python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()


def one_step(name: str, layout: str, repeats: int) -> float:
    code = _ONE_STEP.format(root=str(ROOT), samples=str(SAMPLES), path=str(LAYERS[name]), name=name, layout=layout)
    return statistics.median(float(_python(code)) for _ in range(repeats))


def cli_target_seconds(name: str, layout: str, extra: list[str], repeats: int) -> tuple[float, str]:
    """The target's time as its worker reports it, and its status."""
    times, status = [], ""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "report.json"
        for _ in range(repeats):
            cmd = [sys.executable, "-m", "layercheck", "run", f"{LAYERS[name]}:{name}", "--layout", layout]
            subprocess.run(cmd + extra + ["--json", str(out)], capture_output=True, text=True, cwd=ROOT)
            target = json.loads(out.read_text())["targets"][0]
            times.append(target["duration_s"])
            status = target["status"]
    return statistics.median(times), status


def peers(name: str, layout: str) -> list[str]:
    lines = []
    for module, what in (("torch", "torch gradcheck(fast_mode=True)"), ("jax", "jax check_grads")):
        try:
            __import__(module)
        except ImportError:
            lines.append(f"    {what:34} skipped: {module} is not installed")
            continue
        lines.append(f"    {what:34} installed, but no {name} port is bundled: not measured")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small layout and fewer repeats")
    args = parser.parse_args()
    layout = "8,8,4,16:SSCB" if args.quick else "24,24,20,128:SSCB"
    memory_layout = "24,24,20,128:SSCB" if args.quick else "48,48,32,128:SSCB"
    repeats = 1 if args.quick else 3
    print(f"(a) time in one-training-step units, layout {layout}, CLI worker times, median of {repeats}")
    for name in LAYERS:
        step = one_step(name, layout, repeats)
        gradient, status = cli_target_seconds(
            name, layout, ["--checks", "gradients_are_numerically_correct", "--dtype", "float64"], repeats
        )
        suite, suite_status = cli_target_seconds(name, layout, [], repeats)
        print(f"    {name}: one predict + backward (cold) {step * 1e3:.0f} ms")
        print(
            f"      gradient check {gradient * 1e3:.0f} ms = {gradient / step:.1f}x ({status})   "
            f"[target <= {TARGETS['gradient check']:g}x]"
        )
        print(
            f"      whole suite    {suite * 1e3:.0f} ms = {suite / step:.1f}x ({suite_status})   "
            f"[target <= {TARGETS['whole suite']:g}x]"
        )
    print("(b) peers on the same layers")
    for name in LAYERS:
        for line in peers(name, layout):
            print(line.replace("    ", f"    {name}: ", 1))
    print(f"(c) memory of the SReLU float64 gradient check through check_layer, layout {memory_layout}")
    code = _MEMORY.format(root=str(ROOT), samples=str(SAMPLES), path=str(LAYERS["SReLU"]), layout=memory_layout)
    status, copies = _python(code).split()
    step_code = _STEP_MEMORY.format(
        root=str(ROOT), samples=str(SAMPLES), path=str(LAYERS["SReLU"]), layout=memory_layout
    )
    step_copies = float(_python(step_code))
    print(
        f"    peak RSS over the interpreter's: {float(copies):.1f} copies of the input ({status})   "
        f"[target <= {TARGETS['memory copies']:g}]"
    )
    print(f"    one predict + backward of the layer alone: {step_copies:.1f} copies (the floor)")


if __name__ == "__main__":
    main()
