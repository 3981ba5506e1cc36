"""The peers' gradient checks on the sample PReLU and SReLU, each in units of its own one
forward + backward, for `speed.py` to set beside layercheck's.

    python benchmarks/peer_checks.py --layout 24,24,20,128 [--repeats 3]

prints one JSON object: for each peer (torch, jax) its version and, per layer, the median
over `repeats` of one forward + backward (`step_s`) and of one gradient check (`check_s`),
each cold (the first call of its kind at that size, in a fresh interpreter of its own, after
the library's one-time start on a tiny input, which is not timed), their ratio and whether the check passed; or {"skipped": why} when the peer cannot be
imported by this interpreter. Run it with the interpreter that has torch or JAX.

- torch: `torch.autograd.gradcheck(fast_mode=True)` on the layer written as a
  `torch.autograd.Function` with the samples' hand-written backward, float64.
- JAX: `jax.test_util.check_grads(order=1, modes=["rev"])` on the layer written with
  `jax.custom_vjp` and the same backward, float64 (x64 enabled). JAX compiles each operation
  on its first call: a cold step and a cold check include that, as a user meets them.

The layers' mathematics is the samples' (`sample_layers/prelu.py`, `srelu.py`), copied: this
script imports neither layercheck nor the samples, so that it runs where only a peer is
installed. Input X of shape (H, W, C, B), channel axis 2 (SSCB), standard normal; the
parameters one per channel, shape (1, 1, C, 1), uniform in [0, 1), as `rand` draws them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

LAYERS = ("PReLU", "SReLU")
PEERS = ("torch", "jax")

_TORCH = r"""
import time, numpy as np, torch

class PReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, alpha):
        ctx.save_for_backward(X, alpha)
        return torch.clamp(X, min=0) + alpha * torch.clamp(X, max=0)

    @staticmethod
    def backward(ctx, dLdZ):
        X, alpha = ctx.saved_tensors
        dLdX = alpha * dLdZ
        positive = X > 0
        dLdX[positive] = dLdZ[positive]
        return dLdX, (torch.clamp(X, max=0) * dLdZ).sum(dim=(0, 1, 3), keepdim=True)

class SReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, tl, al, tr, ar):
        ctx.save_for_backward(X, tl, al, tr, ar)
        left, right = (X <= tl).to(X.dtype), (tr <= X).to(X.dtype)
        middle = ((tl < X) & (X < tr)).to(X.dtype)
        return left * (tl + al * (X - tl)) + middle * X + right * (tr + ar * (X - tr))

    @staticmethod
    def backward(ctx, dLdY):
        X, tl, al, tr, ar = ctx.saved_tensors
        left, right = (X <= tl).to(X.dtype), (X >= tr).to(X.dtype)
        middle = ((X > tl) & (X < tr)).to(X.dtype)
        axes = (0, 1, 3)
        return (
            dLdY * (left * al + middle + right * ar),
            (dLdY * left * (1 - al)).sum(dim=axes, keepdim=True),
            (dLdY * left * (X - tl)).sum(dim=axes, keepdim=True),
            (dLdY * right * (1 - ar)).sum(dim=axes, keepdim=True),
            (dLdY * right * (X - tr)).sum(dim=axes, keepdim=True),
        )

def arguments(shape):
    rng = np.random.default_rng(0)
    params = 1 if {name!r} == "PReLU" else 4
    values = [rng.standard_normal(shape)] + [rng.random((1, 1, shape[2], 1)) for _ in range(params)]
    return [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]

fn = {name}.apply
shape = tuple(int(n) for n in {layout!r}.split(","))
if {what!r} == "warm":
    # Warm, in this one process: a warm-up of each, then the median of `repeats` of each, the
    # step and the check interleaved (a busy machine slows both alike).
    import statistics
    args = arguments(shape)

    def step():
        start = time.perf_counter()
        y = fn(*args)
        torch.autograd.grad(y, args, torch.ones_like(y))
        return time.perf_counter() - start

    def check():
        start = time.perf_counter()
        ok = torch.autograd.gradcheck(fn, tuple(args), fast_mode=True)
        return time.perf_counter() - start, ok

    step(), check()
    steps, checks, ratios, passed = [], [], [], True
    for _ in range({repeats!r}):
        unit = statistics.median(step() for _ in range(3))
        seconds, ok = check()
        steps.append(unit), checks.append(seconds), ratios.append(seconds / unit)
        passed = passed and ok
    print(statistics.median(steps), statistics.median(checks), statistics.median(ratios), passed, torch.__version__)
    raise SystemExit
# The library's one-time start (the autograd engine) on a tiny input, not timed.
tiny = arguments((1, 1, shape[2], 1))
torch.autograd.grad(fn(*tiny), tiny, torch.ones_like(fn(*tiny)))
torch.autograd.gradcheck(fn, tuple(tiny), fast_mode=True)
args = arguments(shape)
start = time.perf_counter()
if {what!r} == "step":
    y = fn(*args)
    torch.autograd.grad(y, args, torch.ones_like(y))
    passed = True
else:
    try:
        passed = torch.autograd.gradcheck(fn, tuple(args), fast_mode=True)
    except torch.autograd.gradcheck.GradcheckError:
        passed = False
print(time.perf_counter() - start, passed, torch.__version__)
"""

_JAX = r"""
import time, numpy as np, jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
from jax.test_util import check_grads

@jax.custom_vjp
def PReLU(X, alpha):
    return jnp.maximum(X, 0) + alpha * jnp.minimum(0, X)

def _prelu_backward(saved, dLdZ):
    X, alpha = saved
    dLdX = jnp.where(X > 0, dLdZ, alpha * dLdZ)
    return dLdX, jnp.sum(jnp.minimum(0, X) * dLdZ, axis=(0, 1, 3), keepdims=True)

PReLU.defvjp(lambda X, alpha: (PReLU(X, alpha), (X, alpha)), _prelu_backward)

@jax.custom_vjp
def SReLU(X, tl, al, tr, ar):
    left, right = (X <= tl).astype(X.dtype), (tr <= X).astype(X.dtype)
    middle = ((tl < X) & (X < tr)).astype(X.dtype)
    return left * (tl + al * (X - tl)) + middle * X + right * (tr + ar * (X - tr))

def _srelu_backward(saved, dLdY):
    X, tl, al, tr, ar = saved
    left, right = (X <= tl).astype(X.dtype), (X >= tr).astype(X.dtype)
    middle = ((X > tl) & (X < tr)).astype(X.dtype)
    axes = (0, 1, 3)
    return (
        dLdY * (left * al + middle + right * ar),
        jnp.sum(dLdY * left * (1 - al), axis=axes, keepdims=True),
        jnp.sum(dLdY * left * (X - tl), axis=axes, keepdims=True),
        jnp.sum(dLdY * right * (1 - ar), axis=axes, keepdims=True),
        jnp.sum(dLdY * right * (X - tr), axis=axes, keepdims=True),
    )

SReLU.defvjp(lambda *args: (SReLU(*args), args), _srelu_backward)

def arguments(shape):
    rng = np.random.default_rng(0)
    params = 1 if {name!r} == "PReLU" else 4
    values = [rng.standard_normal(shape)] + [rng.random((1, 1, shape[2], 1)) for _ in range(params)]
    return jax.block_until_ready([jnp.asarray(v) for v in values])

shape = tuple(int(n) for n in {layout!r}.split(","))
# The library's one-time start (the backend) on a tiny input, not timed; each operation is
# still compiled for the real shape on its first call there, as a user meets it.
tiny = arguments((1, 1, shape[2], 1))
y, pullback = jax.vjp({name}, *tiny)
jax.block_until_ready(pullback(jnp.ones_like(y)))
args = arguments(shape)
start = time.perf_counter()
if {what!r} == "step":
    y, pullback = jax.vjp({name}, *args)
    jax.block_until_ready(pullback(jnp.ones_like(y)))
    passed = True
else:
    try:
        check_grads({name}, tuple(args), order=1, modes=["rev"])
        passed = True
    except AssertionError:
        passed = False
print(time.perf_counter() - start, passed, jax.__version__)
"""


def _code(template: str, name: str, layout: str, what: str, repeats: int = 1) -> str:
    code = template.replace("{layout!r}", repr(layout)).replace("{name!r}", repr(name))
    return code.replace("{what!r}", repr(what)).replace("{repeats!r}", repr(repeats)).replace("{name}", name)


def _measure(template: str, name: str, layout: str, what: str) -> tuple[float, bool, str]:
    code = _code(template, name, layout, what)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), out[1] == "True", out[2]


def torch_warm(name: str, layout: str, repeats: int, python: str = sys.executable) -> dict:
    """torch fast gradcheck on `name` against torch's own forward + backward, warm, in one
    process of its own (`python`, which must have torch): the medians of `repeats` of each,
    and the median of their ratios (each check over the steps measured beside it)."""
    code = _code(_TORCH, name, layout, "warm", repeats)
    out = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    return {
        "step_s": float(out[0]),
        "check_s": float(out[1]),
        "ratio": float(out[2]),
        "passed": out[3] == "True",
        "version": out[4],
    }


def peer(module: str, layout: str, repeats: int) -> dict:
    try:
        __import__(module)
    except ImportError:
        return {"skipped": f"{module} is not installed"}
    template = _TORCH if module == "torch" else _JAX
    result: dict = {}
    for name in LAYERS:
        steps = [_measure(template, name, layout, "step") for _ in range(repeats)]
        checks = [_measure(template, name, layout, "check") for _ in range(repeats)]
        step = statistics.median(s[0] for s in steps)
        check = statistics.median(c[0] for c in checks)
        result["version"] = steps[0][2]
        result[name] = {"step_s": step, "check_s": check, "ratio": check / step, "passed": all(c[1] for c in checks)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layout", default="24,24,20,128", help="H,W,C,B of the input (SSCB)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps({module: peer(module, args.layout, args.repeats) for module in PEERS}))


if __name__ == "__main__":
    main()
