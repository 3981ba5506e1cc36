"""A layer whose results have the wrong shape, reproduced: written by `layercheck run --repro`
for one failed backward_is_consistent_in_size, forward_predict_are_consistent_in_size,
output_format_is_consistent, output_batch_size_matches_input, predict_returns_valid_states or
forward_returns_valid_states. A regression test to keep.

    python THIS_FILE.py    exit status 1 while a result has the wrong shape, 0 once none has
    pytest THIS_FILE.py    the same, as the test `test_reproduce`

It needs NumPy (CuPy for a check that ran on the GPU) and the layer's module, nothing of
layercheck. The data is THIS_FILE.npz beside it: every input, learnable and state as layercheck
gave them (at the batch size where the check failed), and for backward the loss gradients
dL/dY and dL/dS_out.

What it checks, by the check that failed:
- backward: one gradient per argument, an array of numbers of the argument's shape (None for
  an integer input);
- forward against predict: each output of forward has the shape of predict's;
- the states predict or forward returns: each is an array of the shape, dtype and array type
  of the state it updates;
- predict: each output has as many dimensions as its format (what the layer's output_format
  declares, else the first input's) and, for the batch size, as many observations along the
  format's B axis as the inputs have.
A call that raises ends the script with the layer's traceback (exit status 1).
"""

from __future__ import annotations

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
from layercheck.reproducers.harness_script import Saved, finish, unpack  # noqa: E402 - replaced by the code

# <<< the harness


def is_array(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype") and hasattr(x, "ndim")


def kind_of(x: Any) -> str:
    return f"a {type(x).__module__}.{type(x).__name__}"


def output_formats(saved: Saved, obj: Any) -> list[str]:
    """The format of each output: what the layer's output_format declares, else the first input's."""
    inputs = [layout.format for layout in saved.layouts]
    declared = None if saved.meta.get("plain_function") else getattr(obj, "output_format", None)
    if declared is None:
        return [inputs[0]] * saved.n_out
    formats = unpack(declared(*inputs) if callable(declared) else declared, saved.n_out)
    # A str subclass (a StrEnum member) by its characters, as layercheck reads it: without
    # calling its __str__, which may be the layer's own.
    return [str.__str__(fmt) if isinstance(fmt, str) else str(fmt) for fmt in formats]


def gradient_problems(meta: dict[str, Any], gradients: list[Any], arguments: list[Any]) -> list[str]:
    wrong = []
    for name, g, argument, integer in zip(meta["gradient_names"], gradients, arguments, meta["integer_arguments"]):
        if integer:
            if g is not None:
                wrong.append(f"the gradient of {name}, an integer input, is {kind_of(g)}: backward must return None")
        elif g is None:
            wrong.append(f"backward returned None as the gradient of {name}")
        elif not is_array(g):
            wrong.append(f"the gradient of {name} is {kind_of(g)}, not an array")
        elif np.dtype(g.dtype).kind not in "biufc":
            wrong.append(f"the gradient of {name} is an array of dtype {g.dtype}, which holds no numbers")
        elif tuple(g.shape) != tuple(argument.shape):
            wrong.append(
                f"the gradient of {name} has shape {tuple(g.shape)} but {name} has shape {tuple(argument.shape)}"
            )
    return wrong


def output_problems(names: list[str], ys: list[Any], formats: list[str], observations: int | None) -> list[str]:
    wrong = []
    for name, y, fmt in zip(names, ys, formats):
        if not is_array(y):
            wrong.append(f"predict output {name} is {kind_of(y)}, not an array")
        elif y.ndim != len(fmt):
            wrong.append(
                f"predict output {name} has {y.ndim} dimension(s) (shape {tuple(y.shape)}) "
                f"but its format {fmt!r} has {len(fmt)}"
            )
        elif observations is not None and "B" in fmt and y.shape[fmt.index("B")] != observations:
            wrong.append(
                f"predict output {name} has batch size {y.shape[fmt.index('B')]} (shape {tuple(y.shape)}, "
                f"B is axis {fmt.index('B')}) for inputs with {observations} observations"
            )
    return wrong


def state_problems(method: str, names: list[str], updated: list[Any], held: list[Any]) -> list[str]:
    wrong = []
    for name, new, old in zip(names, updated, held):
        what = f"{method} returns updated {name} as {shape_of(new)}"
        if not is_array(new):
            wrong.append(f"{what}: a state must be an array")
        elif tuple(new.shape) != tuple(old.shape):
            wrong.append(f"{what}, but state {name} has shape {tuple(old.shape)}")
        elif np.dtype(new.dtype) != np.dtype(old.dtype):
            wrong.append(f"{what} of dtype {new.dtype}, but state {name} is {old.dtype}")
        elif type(new) is not type(old):
            wrong.append(f"{what}, a {kind_of(new)}, but state {name} is {kind_of(old)}")
    return wrong


def shape_of(y: Any) -> Any:
    return tuple(y.shape) if is_array(y) else kind_of(y)


def reproduce(out: Any = None) -> int:
    """Call the method and check the shapes of what it returns: 1 while one is wrong, else 0."""
    out = out or sys.stdout
    saved = Saved(__file__, MODULE_PATH, MODULE_PATH_IS_RELATIVE, TARGET_NAME, CONSTRUCTOR_ARGS)
    meta, method = saved.meta, saved.meta["method"]
    shapes = ", ".join(str(tuple(layout.size)) for layout in saved.layouts)
    print(f"reproducing {meta['check']} of {TARGET_LABEL}", file=out)
    print(f"  {method} with {meta['dtype']} inputs of shape {shapes}, seed {meta['seed']}", file=out)
    obj, xs, arguments = saved.built()
    if method == "backward":
        dLdY = [saved.array(f"w{j}") for j in range(saved.n_out)]
        dLdS = [saved.array(f"w{saved.n_out + j}") for j in range(len(meta["state"]))]
        wrong = gradient_problems(meta, saved.trained(obj, xs, dLdY, dLdS), arguments)
        passed = "every gradient has its argument's shape"
    elif meta.get("judged") == "states":
        states = (saved.predict(obj, xs) if method == "predict" else saved.forward(obj, xs))[1]
        held = arguments[saved.n_in + len(meta["learnables"]) :]
        wrong = state_problems(method, meta["state"], states, held)
        passed = f"every state {method} returns keeps the shape, dtype and array type of the state it updates"
    elif method == "forward":
        predicted = saved.predict(obj, xs)[0]
        obj, xs, _ = saved.built()
        trained = saved.forward(obj, xs)[0]
        wrong = [
            f"{name} has shape {shape_of(f)} from forward but {shape_of(p)} from predict"
            for name, p, f in zip(meta["outputs"], predicted, trained)
            if shape_of(p) != shape_of(f)
        ]
        passed = "forward's outputs have predict's shapes"
    else:
        ys = saved.predict(obj, xs)[0]
        observations = meta.get("observations")
        wrong = output_problems(meta["outputs"], ys, output_formats(saved, obj), observations)
        passed = "every output has its format's rank" + (
            f" and {observations} observations" if observations is not None else ""
        )
    for line in wrong:
        print(f"  {line}", file=out)
    return finish(wrong, "a result has the wrong shape", passed, out)


def test_reproduce() -> None:
    """For pytest: fails while a result has the wrong shape."""
    import io

    out = io.StringIO()
    assert reproduce(out) == 0, out.getvalue()


if __name__ == "__main__":
    sys.exit(reproduce())
