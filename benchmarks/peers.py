"""The peers' gradient checks on the sample PReLU and SReLU, in units of their own one forward + backward.

    python benchmarks/peers.py --layout 24,24,20,128 [--repeats 3]

prints one JSON object, {"torch": {...}, "jax": {...}}: per peer its version and, per layer,

- `step_s`: one forward + backward (the torch Function / the custom_vjp through `jax.vjp`, with
  a cotangent of ones), results ready;
- `check_s`: one call of the peer's gradient check on X and every parameter;
- `ratio` = check_s / step_s, and `passed` (every repeat's check passed);
- JAX only, `check_warm_s`: a second check in the process of the first, on the same inputs.

Every step and every check is cold: the first call of its kind in a fresh interpreter of its own
(one per peer, layer, repeat and kind), timed after the imports and the inputs are built, with no
warm-up, so each includes the library's first-call costs as a user meets them. Each figure is the
median over `--repeats` (repeat r draws its inputs with seed r). A peer this interpreter cannot
import gives {"skipped": "<peer> is not installed"}; run the script with the Python that has them.

- torch: `torch.autograd.gradcheck(fn, inputs, fast_mode=True)`, default tolerances, on the layer
  written as a `torch.autograd.Function` with the samples' hand-written backward (not autograd of
  the forward), float64, default thread count.
- JAX: `jax.test_util.check_grads(f, args, order=1, modes=["rev"])`, default tolerances, on the
  layer written with `jax.custom_vjp` and the same backward, float64 (`jax_enable_x64`). JAX
  compiles each operation for its shapes on first use: a cold step and a cold check include that
  compile time, as a user of `check_grads` meets it; `check_warm_s` shows the check without it.

The layers' mathematics is copied from `sample_layers/prelu.py` and `sample_layers/srelu.py`;
this script imports neither them nor layercheck, so that it runs where only a peer is installed.
Layout SSCB: X of shape (H, W, C, B), standard normal; parameters of shape (1, 1, C, 1), uniform
in [0, 1), drawn in the samples' order (SReLU: al, ar, tl, tr). `--plant-error E` scales the
backward's dLdX by (1 + E), to see whether the checks catch a relative error of E.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

LAYERS = ("PReLU", "SReLU")
PEERS = ("torch", "jax")
AXES = (0, 1, 3)  # every axis but the channel axis (2) of SSCB


def draw(layer: str, shape: tuple[int, ...], seed: int) -> list[Any]:
    """X and the layer's parameters, in the order the layer function takes them."""
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.standard_normal(shape)
    param_shape = (1, 1, shape[2], 1)
    if layer == "PReLU":
        return [X, rng.random(param_shape)]
    al, ar, tl, tr = (rng.random(param_shape) for _ in range(4))
    return [X, tl, al, tr, ar]


def torch_layer(layer: str, plant: float) -> Any:
    import torch

    class PReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, X: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
            ctx.save_for_backward(X, alpha)
            return torch.clamp(X, min=0) + alpha * torch.clamp(X, max=0)

        @staticmethod
        def backward(ctx: Any, dLdZ: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            X, alpha = ctx.saved_tensors
            dLdX = alpha * dLdZ
            positive = X > 0
            dLdX[positive] = dLdZ[positive]
            dLdAlpha = (torch.clamp(X, max=0) * dLdZ).sum(dim=AXES, keepdim=True)
            return dLdX * (1 + plant), dLdAlpha

    class SReLU(torch.autograd.Function):
        @staticmethod
        def forward(
            ctx: Any, X: torch.Tensor, tl: torch.Tensor, al: torch.Tensor, tr: torch.Tensor, ar: torch.Tensor
        ) -> torch.Tensor:
            ctx.save_for_backward(X, tl, al, tr, ar)
            left = (X <= tl).to(X.dtype)
            middle = ((tl < X) & (X < tr)).to(X.dtype)
            right = (tr <= X).to(X.dtype)
            return left * (tl + al * (X - tl)) + middle * X + right * (tr + ar * (X - tr))

        @staticmethod
        def backward(ctx: Any, dLdY: torch.Tensor) -> tuple[torch.Tensor, ...]:
            X, tl, al, tr, ar = ctx.saved_tensors
            left = (X <= tl).to(X.dtype)
            middle = ((X > tl) & (X < tr)).to(X.dtype)
            right = (X >= tr).to(X.dtype)
            dLdX = dLdY * (left * al + middle + right * ar)
            return (
                dLdX * (1 + plant),
                (dLdY * left * (1 - al)).sum(dim=AXES, keepdim=True),
                (dLdY * left * (X - tl)).sum(dim=AXES, keepdim=True),
                (dLdY * right * (1 - ar)).sum(dim=AXES, keepdim=True),
                (dLdY * right * (X - tr)).sum(dim=AXES, keepdim=True),
            )

    return {"PReLU": PReLU, "SReLU": SReLU}[layer].apply


def jax_layer(layer: str, plant: float) -> Any:
    import jax
    import jax.numpy as jnp

    @jax.custom_vjp
    def prelu(X: Any, alpha: Any) -> Any:
        return jnp.maximum(X, 0) + alpha * jnp.minimum(0, X)

    def prelu_backward(saved: tuple[Any, ...], dLdZ: Any) -> tuple[Any, ...]:
        X, alpha = saved
        dLdX = jnp.where(X > 0, dLdZ, alpha * dLdZ)  # the sample's dLdX[positive] = dLdZ[positive]
        dLdAlpha = jnp.sum(jnp.minimum(0, X) * dLdZ, axis=AXES, keepdims=True)
        return dLdX * (1 + plant), dLdAlpha

    prelu.defvjp(lambda X, alpha: (prelu(X, alpha), (X, alpha)), prelu_backward)

    @jax.custom_vjp
    def srelu(X: Any, tl: Any, al: Any, tr: Any, ar: Any) -> Any:
        left = (X <= tl).astype(X.dtype)
        middle = ((tl < X) & (X < tr)).astype(X.dtype)
        right = (tr <= X).astype(X.dtype)
        return left * (tl + al * (X - tl)) + middle * X + right * (tr + ar * (X - tr))

    def srelu_backward(saved: tuple[Any, ...], dLdY: Any) -> tuple[Any, ...]:
        X, tl, al, tr, ar = saved
        left = (X <= tl).astype(X.dtype)
        middle = ((X > tl) & (X < tr)).astype(X.dtype)
        right = (X >= tr).astype(X.dtype)
        dLdX = dLdY * (left * al + middle + right * ar)
        return (
            dLdX * (1 + plant),
            jnp.sum(dLdY * left * (1 - al), axis=AXES, keepdims=True),
            jnp.sum(dLdY * left * (X - tl), axis=AXES, keepdims=True),
            jnp.sum(dLdY * right * (1 - ar), axis=AXES, keepdims=True),
            jnp.sum(dLdY * right * (X - tr), axis=AXES, keepdims=True),
        )

    srelu.defvjp(lambda *args: (srelu(*args), args), srelu_backward)
    return {"PReLU": prelu, "SReLU": srelu}[layer]


def work_torch(layer: str, what: str, shape: tuple[int, ...], seed: int, plant: float) -> dict[str, Any]:
    import torch
    from torch.autograd.gradcheck import GradcheckError

    fn = torch_layer(layer, plant)
    args = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in draw(layer, shape, seed)]
    if what == "step":
        ones = torch.ones(shape, dtype=torch.float64)
        start = time.perf_counter()
        torch.autograd.grad(fn(*args), args, ones)
        return {"step_s": time.perf_counter() - start}
    start = time.perf_counter()
    try:
        passed, error = torch.autograd.gradcheck(fn, tuple(args), fast_mode=True), ""
    except GradcheckError as exc:
        passed, error = False, str(exc)
    return {"check_s": time.perf_counter() - start, "passed": passed, "error": error}


def work_jax(layer: str, what: str, shape: tuple[int, ...], seed: int, plant: float) -> dict[str, Any]:
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.test_util import check_grads

    fn = jax_layer(layer, plant)
    args = jax.block_until_ready([jnp.asarray(a) for a in draw(layer, shape, seed)])
    if what == "step":
        ones = jax.block_until_ready(jnp.ones(shape, dtype=jnp.float64))
        start = time.perf_counter()  # from here on, compile time of each first-used operation included
        y, pullback = jax.vjp(fn, *args)
        jax.block_until_ready((y, pullback(ones)))
        return {"step_s": time.perf_counter() - start}

    def check() -> tuple[bool, str]:
        # check_grads compares on the host (numpy asserts), so it returns with its results ready.
        try:
            check_grads(fn, tuple(args), order=1, modes=["rev"])
        except AssertionError as exc:
            return False, str(exc)
        return True, ""

    start = time.perf_counter()  # cold: JIT compile of every operation included, as a check_grads user meets it
    passed, error = check()
    check_s = time.perf_counter() - start
    start = time.perf_counter()
    check()
    return {"check_s": check_s, "check_warm_s": time.perf_counter() - start, "passed": passed, "error": error}


def measure(peer: str, layer: str, what: str, layout: str, seed: int, plant: float) -> dict[str, Any]:
    """One cold step or check, in a fresh interpreter (this one's executable)."""
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", peer, layer, what]
    command += ["--layout", layout, "--seed", str(seed), "--plant-error", repr(plant)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{peer} {layer} {what} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def peer(module: str, layout: str, repeats: int, plant: float) -> dict[str, Any]:
    try:
        version = importlib.import_module(module).__version__
    except ImportError:
        return {"skipped": f"{module} is not installed"}
    result: dict[str, Any] = {"version": version}
    for layer in LAYERS:
        steps, checks = [], []
        for seed in range(repeats):  # step first, then the check, each in its own process
            steps.append(measure(module, layer, "step", layout, seed, plant))
            checks.append(measure(module, layer, "check", layout, seed, plant))
        step = statistics.median(s["step_s"] for s in steps)
        check = statistics.median(c["check_s"] for c in checks)
        entry = {"step_s": step, "check_s": check, "ratio": check / step, "passed": all(c["passed"] for c in checks)}
        if module == "jax":
            entry["check_warm_s"] = statistics.median(c["check_warm_s"] for c in checks)
        errors = [c["error"] for c in checks if c["error"]]
        if errors:
            entry["error"] = errors[0][:300]
        result[layer] = entry
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--layout", default="24,24,20,128", help="H,W,C,B of the input (SSCB)")
    parser.add_argument("--repeats", type=int, default=3, help="cold runs per figure; the median is kept")
    parser.add_argument("--plant-error", type=float, default=0.0, help="scale dLdX by (1 + this) in the backward")
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--worker", nargs=3, metavar=("PEER", "LAYER", "WHAT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        module, layer, what = args.worker
        shape = tuple(int(n) for n in args.layout.split(","))
        work = work_torch if module == "torch" else work_jax
        print(json.dumps(work(layer, what, shape, args.seed, args.plant_error)))
        return
    print(json.dumps({module: peer(module, args.layout, args.repeats, args.plant_error) for module in PEERS}))


if __name__ == "__main__":
    main()
