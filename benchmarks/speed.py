"""The gradient check as a user meets it: its cost in one-training-step units, its memory in
copies of the input, and the same ratios for the peers that are installed, in one run.

    python benchmarks/speed.py            # the seed layout 24,24,20,128:SSCB; memory at 48,48,32,128
    python benchmarks/speed.py --quick    # a small layout, for a smoke test
    python benchmarks/speed.py --peer-python /path/to/venv/bin/python   # where torch/JAX are

(a) Time, measured as the CLI runs it: `layercheck run FILE --layout L --checks
    gradients_are_numerically_correct --dtype float64 --json ...`, the target's time as its
    worker reports it (set-up included, process start not), over one predict + backward run
    cold (the first call in a fresh process, first-touch page faults included). Then the
    whole default suite (float64 and float32) the same way. Each seed of 0, 1, 2 (the cost
    depends on the draws: a kink within the step costs a pass and a backward more) is run
    three times and its best time kept, as the step's is (noise only ever adds time); the
    median over the seeds is compared, and each is printed. Targets (issue 17): gradient check <= 4x, whole suite <= 15x.
(b) Peers on the same layers and layout, over their own one forward + backward
    (benchmarks/peer_checks.py, run by --peer-python, which must have torch or JAX):
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
    """The best of `repeats` cold steps, each in a fresh interpreter (noise only adds time)."""
    code = _ONE_STEP.format(root=str(ROOT), samples=str(SAMPLES), path=str(LAYERS[name]), name=name, layout=layout)
    return min(float(_python(code)) for _ in range(repeats))


def cli_target_seconds(name: str, layout: str, extra: list[str], repeats: int) -> tuple[float, str, list[float]]:
    """The target's time as its worker reports it: for each of seeds 0, 1, ... (the cost
    depends on the draws, such as whether a kink falls within the step) the best of `repeats`
    runs (noise only ever adds time), and the median over the seeds; its status; each seed's."""
    best, status = [], ""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "report.json"
        for seed in range(repeats):
            times = []
            for _ in range(repeats):
                cmd = [sys.executable, "-m", "layercheck", "run", f"{LAYERS[name]}:{name}", "--layout", layout]
                cmd += ["--seed", str(seed)]
                subprocess.run(cmd + extra + ["--json", str(out)], capture_output=True, text=True, cwd=ROOT)
                target = json.loads(out.read_text())["targets"][0]
                times.append(target["duration_s"])
                status = target["status"] if status in ("", "passed") else status
            best.append(min(times))
    return statistics.median(best), status, best


def _each(times: list[float], step: float) -> str:
    return " ".join(f"{t / step:.1f}x" for t in times)


def peers(python: str, layout: str, repeats: int) -> dict:
    """benchmarks/peer_checks.py run by `python` (an interpreter with torch or JAX): its JSON."""
    script = Path(__file__).with_name("peer_checks.py")
    shape = ",".join(layout.split(":")[0].split(","))
    cmd = [python, str(script), "--layout", shape, "--repeats", str(repeats)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def peer_lines(found: dict, ours: dict[str, float]) -> list[str]:
    lines = []
    for module, what in (("torch", "torch gradcheck(fast_mode=True)"), ("jax", "jax check_grads")):
        result = found.get(module, {"skipped": f"{module} was not measured"})
        for name in LAYERS:
            if "skipped" in result:
                lines.append(f"    {name}: {what:34} skipped: {result['skipped']}")
                continue
            peer = result[name]
            verdict = "passed" if peer["passed"] else "FAILED (a correct layer)"
            lines.append(
                f"    {name}: {what:34} {peer['check_s'] * 1e3:.0f} ms = {peer['ratio']:.1f}x its own "
                f"{peer['step_s'] * 1e3:.0f} ms step ({verdict}); layercheck / {module} = "
                f"{ours[name] / peer['ratio']:.2f}   [goal <= 0.5 against torch]"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small layout and fewer repeats")
    parser.add_argument(
        "--peer-python",
        default=sys.executable,
        help="the interpreter that has torch and/or JAX installed (default: this one)",
    )
    args = parser.parse_args()
    layout = "8,8,4,16:SSCB" if args.quick else "24,24,20,128:SSCB"
    memory_layout = "24,24,20,128:SSCB" if args.quick else "48,48,32,128:SSCB"
    repeats = 1 if args.quick else 3
    print(
        f"(a) time in one-training-step units, layout {layout}, CLI worker times: the median over seeds "
        f"0-{repeats - 1} of the best of {repeats} runs each (the step: the best of {repeats} cold runs)"
    )
    ours = {}
    for name in LAYERS:
        step = one_step(name, layout, repeats)
        gradient, status, gradient_each = cli_target_seconds(
            name, layout, ["--checks", "gradients_are_numerically_correct", "--dtype", "float64"], repeats
        )
        suite, suite_status, suite_each = cli_target_seconds(name, layout, [], repeats)
        ours[name] = gradient / step
        print(f"    {name}: one predict + backward (cold) {step * 1e3:.0f} ms")
        print(
            f"      gradient check {gradient * 1e3:.0f} ms = {gradient / step:.1f}x ({status})   "
            f"[target <= {TARGETS['gradient check']:g}x]   seeds: {_each(gradient_each, step)}"
        )
        print(
            f"      whole suite    {suite * 1e3:.0f} ms = {suite / step:.1f}x ({suite_status})   "
            f"[target <= {TARGETS['whole suite']:g}x]   seeds: {_each(suite_each, step)}"
        )
    print(f"(b) peers on the same layers, each over its own cold step ({args.peer_python})")
    for line in peer_lines(peers(args.peer_python, layout, repeats), ours):
        print(line)
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
