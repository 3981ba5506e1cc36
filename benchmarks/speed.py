"""The gradient check as a user meets it: its cost in units of the layer's own training step,
its memory in copies of the input, and torch's fast gradcheck in its own units, in one run.

    python benchmarks/speed.py            # the seed layout 24,24,20,128:SSCB; memory at 48,48,32,128
    python benchmarks/speed.py --quick    # a small layout and fewer repeats, for a smoke test
    python benchmarks/speed.py --peer-python /path/to/venv/bin/python   # where torch is

(a) The headline, warm: in this one process, for the sample PReLU and SReLU, the float64
    gradient check (`check_layer(..., checks=[gradients_are_numerically_correct],
    dtypes=["float64"], inputs=[X])`, given the input as torch's check is given its own) over
    one warm predict + backward of the same layer on the same X. A warm-up call of each, then
    for each repeat the median of three steps and one check, measured side by side (a busy
    machine slows both alike); the median of those ratios per seed 0, 1, 2 (the cost depends
    on the draws: a kink within the step costs a backward more, a block whose gradient is
    small by chance two passes more), and the median over the seeds.
    Targets (issue 26): at most 2.5 units, and at most 0.8 times torch's own ratio.
(b) torch.autograd.gradcheck(fast_mode=True) on the same layers written as
    torch.autograd.Function with the samples' backward (benchmarks/peer_checks.py), over
    torch's own warm forward + backward, warm in a process of its own, the same way; skipped
    with a line where torch cannot be imported.
(c) Memory: the peak RSS of the SReLU float64 gradient check through `check_layer` at
    48,48,32,128:SSCB, and that of one predict + backward of the layer alone, each in a fresh
    interpreter and counted from before the input exists, in copies of the input.
    Target (issue 26): at most the layer's own step + 2 copies.
(d) Cold: the first gradient check in a fresh interpreter over the first predict + backward in
    another (imports not timed), the best of the repeats. Target (issue 17): at most 4 units.
(e) The whole default run, warm: every check at the default dtypes (`check_layer(cls, layout)`)
    of PReLU and SReLU at the layout of (a), in units of (a)'s float64 step, measured the same
    way; and how many predicts (forwards) and backwards each check made, a call counted for the
    check that first needed it (the runner shares each call among the checks). (a) prints the
    gradient check's beside its ratio. Targets (issue 38): at most 15 units; the floor is one
    backward and two predicts for a passing gradient check.

Ratios, not absolute times, are the figures to read: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_layers"
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

import peer_checks  # noqa: E402

import layercheck  # noqa: E402
from layercheck.checks import REGISTRY  # noqa: E402
from layercheck.settings.options import DEFAULT_DTYPES  # noqa: E402

LAYERS = {"PReLU": SAMPLES / "prelu.py", "SReLU": SAMPLES / "srelu.py"}
GRADIENTS = "gradients_are_numerically_correct"
TARGETS = {"warm": 2.5, "torch": 0.8, "memory": 2.0, "cold": 4.0, "whole": 15.0}


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def load(name: str) -> type:
    spec = importlib.util.spec_from_file_location(f"sample_{name.lower()}", LAYERS[name])
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return getattr(module, name)


class Calls:
    """The calls of a layer class's predict, forward and backward, each counted for the check
    of the registry on the stack when it was made ("set-up" where none is): the class's methods
    are wrapped in place (their signatures kept, as layercheck reads them), on a copy of the
    class loaded for this count alone."""

    METHODS = ("predict", "forward", "backward")

    def __init__(self, cls: type):
        from layercheck.checks import REGISTRY

        self.cls = cls
        self.counts: dict[str, dict[str, int]] = {}
        self._checks = {check.run.__code__: name for name, check in REGISTRY.items()}
        for method in self.METHODS:
            if method in vars(cls):
                setattr(cls, method, self._counted(method, vars(cls)[method]))

    def _counted(self, method: str, fn: Any) -> Any:
        import functools

        @functools.wraps(fn)
        def counted(*args: Any, **kwargs: Any) -> Any:
            frame = sys._getframe(1)
            while frame is not None and frame.f_code not in self._checks:
                frame = frame.f_back  # type: ignore[assignment]
            check = "set-up" if frame is None else self._checks[frame.f_code]
            mine = self.counts.setdefault(check, dict.fromkeys(self.METHODS, 0))
            mine[method] += 1
            return fn(*args, **kwargs)

        return counted

    def total(self, method: str) -> int:
        return sum(counts[method] for counts in self.counts.values())

    def words(self, check: str | None = None) -> str:
        """ "2 predicts, 1 backward" for one check (None: the whole run)."""
        counts = self.counts.get(check, {}) if check is not None else {m: self.total(m) for m in self.METHODS}
        return ", ".join(
            f"{counts.get(m, 0)} {m}{'s' if counts.get(m, 0) != 1 else ''}"
            for m in self.METHODS
            if counts.get(m, 0) or m != "forward"
        )


def calls_of_check(name: str, layout: str, checks: list[str] | None, x: Any = None) -> Calls:
    """The calls one run of `checks` (None: every check, at the default dtypes) makes of the
    sample layer `name`; the gradient check's at float64 alone, as (a) measures it."""
    calls = Calls(load(name))
    dtypes = ["float64"] if checks == [GRADIENTS] else None
    layercheck.check_layer(calls.cls, layout, checks=checks, dtypes=dtypes, inputs=None if x is None else [x], seed=0)
    return calls


def warm_units(
    name: str, layout: str, seeds: list[int], repeats: int, whole: bool = False
) -> tuple[float, list[float], float, str]:
    """The gradient check (`whole`: the whole default run, every check at the default dtypes)
    in units of one warm float64 predict + backward, in this process: the median over `seeds`
    of each seed's median ratio; each seed's; the unit in seconds; the status."""
    cls = load(name)
    shape = layercheck.parse_layout(layout)
    np.random.seed(0)
    layer = cls()
    layer.initialize(shape)
    x = np.random.default_rng(0).standard_normal(shape.size)
    dldy = np.random.default_rng(1).standard_normal(shape.size)

    def step() -> float:
        start = time.perf_counter()
        y = layer.predict(x)
        layer.backward(x, y, dldy, None)
        return time.perf_counter() - start

    status = "passed"

    def check(seed: int) -> float:
        nonlocal status
        start = time.perf_counter()
        if whole:
            report = layercheck.check_layer(cls, layout, seed=seed)
        else:
            report = layercheck.check_layer(cls, layout, checks=[GRADIENTS], dtypes=["float64"], inputs=[x], seed=seed)
        seconds = time.perf_counter() - start
        failures = [check for check in report.checks if check.status not in ("passed", "skipped")]
        if failures:
            status = f"{failures[0].name} {failures[0].status}: {failures[0].message}"
        return seconds

    per_seed, units = [], []
    for seed in seeds:
        step(), check(seed)  # warm-up
        ratios = []
        for _ in range(repeats):
            unit = statistics.median(step() for _ in range(3))
            units.append(unit)
            ratios.append(check(seed) / unit)
        per_seed.append(statistics.median(ratios))
    return statistics.median(per_seed), per_seed, statistics.median(units), status


def torch_lines(python: str, layout: str, repeats: int, ours: dict[str, float]) -> list[str]:
    shape = ",".join(layout.split(":")[0].split(","))
    lines = []
    for name in LAYERS:
        try:
            found = peer_checks.torch_warm(name, shape, repeats, python)
        except (subprocess.CalledProcessError, FileNotFoundError, IndexError, ValueError):
            return [f"    torch fast gradcheck: skipped (torch cannot be imported by {python})"]
        verdict = "passed" if found["passed"] else "FAILED (a correct layer)"
        share = ours[name] / found["ratio"]
        lines.append(
            f"    {name}: torch {found['version']} gradcheck(fast_mode=True) {found['check_s'] * 1e3:.0f} ms = "
            f"{found['ratio']:.2f} units of its own {found['step_s'] * 1e3:.0f} ms step ({verdict}); "
            f"layercheck / torch = {share:.2f}   [target <= {TARGETS['torch']:g}] {_verdict(share <= TARGETS['torch'])}"
        )
    return lines


# Peak RSS, counted from before the input exists, of the float64 gradient check or of one
# predict + backward of the layer alone, in copies of the input; each in a fresh interpreter.
_MEMORY = """
import importlib.util, resource, sys, numpy as np
sys.path[:0] = [{root!r}]
import layercheck
spec = importlib.util.spec_from_file_location("sample", {path!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
cls = module.SReLU
layout = layercheck.parse_layout({layout!r})
np.random.seed(0)
layer = cls()
layer.initialize(layout)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
x = np.random.default_rng(0).standard_normal(layout.size)
if {what!r} == "check":
    report = layercheck.check_layer(cls, layout, checks=[{check!r}], dtypes=["float64"], inputs=[x])
    status = report.result({check!r}).status
else:
    y = layer.predict(x)
    grads = layer.backward(x, y, np.random.default_rng(1).standard_normal(y.shape), None)
    status = "step"
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(status, (after - before) * 1024 / x.nbytes)
"""

# The first call in a fresh interpreter (imports and layer construction not timed).
_COLD = """
import importlib.util, sys, time, numpy as np
sys.path[:0] = [{root!r}]
import layercheck
spec = importlib.util.spec_from_file_location("sample", {path!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
cls = getattr(module, {name!r})
layout = layercheck.parse_layout({layout!r})
np.random.seed(0)
layer = cls()
layer.initialize(layout)
x = np.random.default_rng(0).standard_normal(layout.size)
start = time.perf_counter()
if {what!r} == "check":
    report = layercheck.check_layer(cls, layout, checks=[{check!r}], dtypes=["float64"], inputs=[x])
else:
    y = layer.predict(x)
    layer.backward(x, y, np.ones_like(y), None)
print(time.perf_counter() - start)
"""


def _python(template: str, **fields: Any) -> str:
    code = template.format(root=str(ROOT), check=GRADIENTS, **fields)
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small layout and fewer repeats")
    parser.add_argument("--peer-python", default=sys.executable, help="the interpreter that has torch")
    args = parser.parse_args()
    layout = "8,8,4,16:SSCB" if args.quick else "24,24,20,128:SSCB"
    memory_layout = "24,24,20,128:SSCB" if args.quick else "48,48,32,128:SSCB"
    seeds = [0] if args.quick else [0, 1, 2]
    repeats = 3 if args.quick else 5

    print(f"(a) warm, in this process, layout {layout}: the gradient check (float64, given X) in units of one")
    print(f"    warm predict + backward; per seed the median of {repeats} side-by-side ratios, then the median")
    ours = {}
    for name in LAYERS:
        ratio, each, unit, status = warm_units(name, layout, seeds, repeats)
        ours[name] = ratio
        x = np.random.default_rng(0).standard_normal(layercheck.parse_layout(layout).size)
        made = calls_of_check(name, layout, [GRADIENTS], x).words(GRADIENTS)
        print(
            f"    {name}: {ratio:.2f} units of its {unit * 1e3:.0f} ms step ({status}; {made})   [target <= "
            f"{TARGETS['warm']:g}] {_verdict(ratio <= TARGETS['warm'])}   seeds: {' '.join(f'{r:.2f}' for r in each)}"
        )
    print(f"(b) torch fast gradcheck, warm, in units of torch's own warm forward + backward ({args.peer_python})")
    for line in torch_lines(args.peer_python, layout, repeats, ours):
        print(line)

    print(f"(c) memory of the SReLU float64 gradient check, layout {memory_layout}, from before the input exists")
    path = str(LAYERS["SReLU"])
    status, check = _python(_MEMORY, path=path, layout=memory_layout, what="check").split()
    _, step = _python(_MEMORY, path=path, layout=memory_layout, what="step").split()
    over = float(check) - float(step)
    print(
        f"    peak RSS: the check {float(check):.2f} copies of the input ({status}), the layer's own predict + backward "
        f"{float(step):.2f}: {over:+.2f}   [target <= step + {TARGETS['memory']:g}] {_verdict(over <= TARGETS['memory'])}"
    )

    cold_repeats = 1 if args.quick else 3
    print(f"(d) cold, layout {layout}: the first call in a fresh interpreter, the best of {cold_repeats}")
    for name in LAYERS:
        path = str(LAYERS[name])
        fields = {"path": path, "name": name, "layout": layout}
        step_s = min(float(_python(_COLD, what="step", **fields)) for _ in range(cold_repeats))
        check_s = min(float(_python(_COLD, what="check", **fields)) for _ in range(cold_repeats))
        ratio = check_s / step_s
        print(
            f"    {name}: gradient check {check_s * 1e3:.0f} ms = {ratio:.2f} units of the first step "
            f"({step_s * 1e3:.0f} ms)   [target <= {TARGETS['cold']:g}] {_verdict(ratio <= TARGETS['cold'])}"
        )

    print(
        f"(e) the whole default run (every check, {' and '.join(DEFAULT_DTYPES)}), warm, layout {layout}, in units of"
    )
    print("    the step of (a); its calls, each counted for the check that made it")
    for name in LAYERS:
        ratio, each, unit, status = warm_units(name, layout, seeds, max(1, repeats // 2), whole=True)
        calls = calls_of_check(name, layout, None)
        print(
            f"    {name}: {ratio:.1f} units of its {unit * 1e3:.0f} ms step ({status}; {calls.words()} in all)   "
            f"[target <= {TARGETS['whole']:g}] {_verdict(ratio <= TARGETS['whole'])}   "
            f"seeds: {' '.join(f'{r:.1f}' for r in each)}"
        )
        ranked = sorted(calls.counts, key=lambda c: -sum(calls.counts[c].values()))
        for check in ranked:
            declared = REGISTRY[check].calls if check in REGISTRY else ()
            judges = f" (declares {', '.join(call.value for call in declared)})" if declared else ""
            print(f"      {check}: {calls.words(check)}{judges}")


if __name__ == "__main__":
    main()
