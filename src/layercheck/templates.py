"""`layercheck new`: a layer or operation file to start from, like MATLAB's custom layer
template: declared learnables and state, initialize, predict, and optionally backward and
reset_state. The generated code is a small working layer (a scaled tanh with offsets) that
passes every check as written, so that a user edits something that works.
"""

from __future__ import annotations

import keyword
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from layercheck.errors import UsageError

__all__ = [
    "ARRAY_MODULE_IMPORT",
    "CONVENTIONS",
    "Template",
    "class_and_file",
    "function_template",
    "keeps_gradients_template",
    "layer_template",
    "pair_template",
    "names_of",
    "write_new",
]

# Names the generated code uses itself; a learnable or state may not take them.
_RESERVED = {
    "self",
    "name",
    "learnables",
    "state",
    "example_layout",
    "initialize",
    "predict",
    "forward",
    "backward",
    "reset_state",
    "num_inputs",
    "num_outputs",
    "output_format",
    "input_domain",
    "X",
    "Y",
    "Z",
    "T",
    "xp",
    "np",
    "memory",
    "axes",
    "shape",
    "channel",
    "layout",
    "compute_gradients",
    "get_array_module",
}

# The array module of the inputs, on NumPy 1.x and 2.x and on CuPy 13 and 14, without a
# dependency on CuPy (not an __array_namespace__ method: cupy.ndarray and NumPy 1.x arrays
# have none).
ARRAY_MODULE_IMPORT = [
    "import numpy as np",
    "",
    "try:  # CuPy is optional: without it every array is a NumPy array",
    "    from cupy import get_array_module",
    "except ImportError:",
    "    def get_array_module(*arrays):",
    "        return np",
]


@dataclass(frozen=True)
class Template:
    """What `layercheck new` writes: a class name, its file name and its source; the
    conventions of DESIGN.md section 11 name what it defines otherwise, and one writes a
    config beside it (`config`: its file name and text)."""

    class_name: str
    file_name: str
    source: str
    defines: str = ""  # "class NAME" unless said
    config: tuple[str, str] | None = None

    def what(self) -> str:
        return self.defines or f"class {self.class_name}"

    def command(self, path: Path) -> str:
        """The command that checks what was written at `path` (shell-quoted)."""
        if self.config is not None:
            return f"layercheck run --config {shlex.quote(str(path.with_name(self.config[0])))}"
        return f"layercheck run {shlex.quote(str(path))}{self._options}"

    @property
    def _options(self) -> str:
        return _PAIR_OPTIONS.format(stem=self.file_name[:-3]) if self.defines.startswith("functions") else ""


CONVENTIONS = ("pair", "keeps-gradients")
_PAIR_LAYOUTS = "--layout 8,5:BC --layout 5,3:UU --layout 3:U"
_PAIR_OPTIONS = ":{stem}_forward " + _PAIR_LAYOUTS


def names_of(text: str | None, what: str) -> tuple[str, ...]:
    """`a,b` -> ("a", "b"); each a Python identifier the template does not use itself."""
    if not text:
        return ()
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    for n in names:
        problem = _not_a_name(n)
        if problem is None and (n in _RESERVED or n.startswith("dLd")):
            problem = "is a name the template uses itself"
        if problem is not None:
            raise UsageError(
                f"--{what} {n!r} {problem}: give Python identifiers other than keywords, "
                f"{', '.join(sorted(_RESERVED))} and names starting with dLd"
            )
    return names


def _not_a_name(name: str) -> str | None:
    """Why `name` cannot name an attribute or a class in the generated code, or None.

    A keyword (`class`, `None`) cannot; a soft keyword (`match`, `case`, `type`, `_`) can: it
    is a keyword only inside the statements that use it."""
    if keyword.iskeyword(name):
        return "is a Python keyword"
    if not name.isidentifier():
        return "is not a Python identifier"
    return None


def class_and_file(name: str) -> tuple[str, str]:
    """`my_layer` -> (MyLayer, my_layer.py); `MyLayer` -> (MyLayer, my_layer.py). A name in
    snake_case gives the file name exactly (`prelu` for a file prelu.py, class Prelu)."""
    problem = _not_a_name(name)
    if problem is None and not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
        # A module name that imports as written everywhere: no leading _, ASCII only.
        problem = "does not start with a letter, or holds other characters than ASCII letters, digits and _"
    if problem is not None:
        raise UsageError(f"NAME {name!r} {problem}: give a name such as my_layer or MyLayer")
    if name[0].isupper():
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()  # WeightedSum: weighted_sum
        return name, f"{snake}.py"
    cls = "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)
    if keyword.iskeyword(cls):  # none, true, false: the class would be None, True, False
        raise UsageError(
            f"NAME {name!r} makes the class {cls}, a Python keyword: give a name such as my_layer or MyLayer"
        )
    return cls, f"{name}.py"


def layer_template(
    name: str, learnables: tuple[str, ...] = (), state: tuple[str, ...] = (), backward: bool = False
) -> Template:
    """A layer: Z = w1 * tanh(X) + w2 + ... (w per channel); Y = Z + (sum of states) / 2, and
    every updated state is Y."""
    _distinct(learnables + state)
    cls, file = class_and_file(name)
    z = "xp.tanh(X)"
    if learnables:
        z = " + ".join([f"self.{learnables[0]} * xp.tanh(X)"] + [f"self.{w}" for w in learnables[1:]])
    formula = z.replace("self.", "").replace("xp.", "")
    lines = [
        f'"""{cls}: a custom layer (written by `layercheck new`).',
        "",
        "Replace the computation with your own; keep the structure. Check it with:",
        "",
        f"    layercheck run {file}",
        '"""',
        "",
        *ARRAY_MODULE_IMPORT,
        "",
        "",
        f"class {cls}:",
        f'    """{_doc(formula, state)}"""',
        "",
    ]
    if learnables:
        lines.append(f"    learnables = {_tuple(learnables)}  # attributes holding learnable arrays")
    if state:
        lines.append(f"    state = {_tuple(state)}  # attributes holding state arrays")
    lines += [
        '    example_layout = "8,8,4,2:SSCB"  # the layout `layercheck run` uses without --layout',
        "",
        f'    def __init__(self, name="{file[:-3]}"):',
        "        self.name = name",
    ]
    lines += [f"        self.{n} = None  # filled by initialize" for n in learnables + state]
    lines += [
        "",
        "    def initialize(self, layout):",
        '        """Fill the learnables and states that are None; never change those already set."""',
    ]
    if learnables:
        lines += [
            "        shape = [1] * layout.ndim  # one value per channel, broadcast over the other axes",
            '        channel = layout.find("C")',
            "        if channel is not None:",
            "            shape[channel] = layout.size[channel]",
        ]
        for i, w in enumerate(learnables):
            low, high = (0.5, 1.5) if i == 0 else (-0.5, 0.5)
            lines += [
                f"        if self.{w} is None:",
                f"            self.{w} = np.random.uniform({low}, {high}, shape)",
            ]
    for s in state:
        lines += [
            f"        if self.{s} is None:  # the size of the input: it follows the batch",
            f"            self.{s} = np.zeros(layout.size)",
        ]
    if not learnables and not state:
        lines.append("        pass")
    lines += [
        "",
        "    def predict(self, X):",
        '        """The output' + (", then the updated states" if state else "") + '."""',
        "        xp = get_array_module(X)  # NumPy or CuPy: one code path",
    ]
    if state:
        lines += [
            f"        Z = {z}",
            f"        Y = Z + 0.5 * ({' + '.join(f'self.{s}' for s in state)})",
            f"        return {', '.join(['Y'] * (1 + len(state)))}  # Y, then the new {', '.join(state)}",
        ]
    else:
        lines.append(f"        return {z}")
    lines += [
        "",
        "    # Optional: forward(self, X), a training-time pass that differs from predict (dropout,",
        "    # batch normalization); it returns what predict returns"
        + (", then memory for backward." if backward else "."),
    ]
    if backward:
        lines += _layer_backward(learnables, state)
    if state:
        lines += [
            "",
            "    def reset_state(self):",
            '        """Back to the initial state."""',
        ]
        lines += [f"        self.{s} = get_array_module(self.{s}).zeros_like(self.{s})" for s in state]
    return Template(cls, file, "\n".join(lines) + "\n")


def _layer_backward(learnables: tuple[str, ...], state: tuple[str, ...]) -> list[str]:
    d_state_out = [f"dLd{s}" for s in state]
    arguments = ["X"] + (["the learnables"] if learnables else []) + (["the states"] if state else [])
    params = ", ".join(["X", "Y", "dLdY"] + d_state_out + ["memory"])
    lines = [
        "",
        f"    def backward(self, {params}):",
        f'        """Gradients of the loss with respect to {_listing(arguments)}."""',
        "        xp = get_array_module(X)",
        "        T = xp.tanh(X)",
    ]
    dz = " + ".join(["dLdY"] + d_state_out)  # Y and every updated state are Z + ...
    lines.append(f"        dLdZ = {dz}" if state else "        dLdZ = dLdY")
    returns = []
    if learnables:
        w0 = learnables[0]
        lines += [
            f"        axes = tuple(i for i in range(X.ndim) if self.{w0}.shape[i] == 1)  # where {w0} was broadcast",
            f"        dLdX = dLdZ * self.{w0} * (1 - T * T)",
            f"        dLd{w0} = (dLdZ * T).sum(axis=axes, keepdims=True)",
        ]
        lines += [f"        dLd{w} = dLdZ.sum(axis=axes, keepdims=True)" for w in learnables[1:]]
    else:
        lines.append("        dLdX = dLdZ * (1 - T * T)")
    returns = ["dLdX"] + [f"dLd{w}" for w in learnables] + ["0.5 * dLdZ"] * len(state)
    lines.append(f"        return {', '.join(returns)}")
    return lines


def function_template(name: str, parameters: tuple[str, ...] = ()) -> Template:
    """An operation: Y = p1 * tanh(X) + p2 + ..., with per-channel inputs p."""
    _distinct(parameters)
    cls, file = class_and_file(name)
    inputs = ("X",) + parameters
    z = "xp.tanh(X)"
    if parameters:
        z = " + ".join([f"{parameters[0]} * xp.tanh(X)"] + list(parameters[1:]))
    layouts = ['"8,8,4,2:SSCB"'] + ['"1,1,4,1:SSCU"'] * len(parameters)
    example = layouts[0] if not parameters else f"[{', '.join(layouts)}]"
    lines = [
        f'"""{cls}: a differentiable operation (written by `layercheck new --function`).',
        "",
        "Like MATLAB's deep.DifferentiableFunction: forward and backward, no learnables. Replace",
        "the computation with your own; keep the structure. Check it with:",
        "",
        f"    layercheck run {file}",
        '"""',
        "",
        *ARRAY_MODULE_IMPORT,
        "",
        "",
        f"class {cls}:",
        f'    """Y = {z.replace("xp.", "")}'
        + (" (one value of each parameter per channel)" if parameters else "")
        + '."""',
        "",
        "    save_inputs_for_backward = True  # backward receives the inputs after the mask",
        f"    example_layout = {example}  # one layout per input of forward",
        "",
        f"    def forward(self, {', '.join(inputs)}):",
        "        xp = get_array_module(X)  # NumPy or CuPy: one code path",
        f"        return {z}",
        "",
        f"    def backward(self, dLdY, compute_gradients, {', '.join(inputs)}):",
        '        """One gradient per input of forward, None where compute_gradients says so."""',
        "        xp = get_array_module(X)",
        "        T = xp.tanh(X)",
    ]
    if parameters:
        p0 = parameters[0]
        lines += [
            f"        axes = tuple(i for i in range(X.ndim) if {p0}.shape[i] == 1)  # where {p0} was broadcast",
            f"        dLdX = dLdY * {p0} * (1 - T * T) if compute_gradients[0] else None",
            f"        dLd{p0} = (dLdY * T).sum(axis=axes, keepdims=True) if compute_gradients[1] else None",
        ]
        lines += [
            f"        dLd{p} = dLdY.sum(axis=axes, keepdims=True) if compute_gradients[{i}] else None"
            for i, p in enumerate(parameters[1:], start=2)
        ]
        lines.append(f"        return {', '.join('dLd' + n for n in inputs)}")
    else:
        lines.append("        return dLdY * (1 - T * T) if compute_gradients[0] else None")
    return Template(cls, file, "\n".join(lines) + "\n")


def _module_name(name: str) -> str:
    """The file stem of a convention's template: `dense_tanh` as given, `DenseTanh` in snake case."""
    return class_and_file(name)[1][:-3]


def pair_template(name: str) -> Template:
    """A function pair with a cache (DESIGN.md section 11): out = tanh(x @ w + b)."""
    stem = _module_name(name)
    file = f"{stem}.py"
    lines = [
        f'"""{stem}: a function pair with a cache (written by `layercheck new --convention pair`).',
        "",
        "The convention of CS231n's assignments: NAME_forward returns the output and a cache;",
        "NAME_backward takes the output's gradient and the cache, and returns the gradients of the",
        "forward's array arguments, in their order. Replace the computation with your own; keep the",
        "structure. Check it with one --layout per array argument (B: the batch axis):",
        "",
        f"    layercheck run {file}{_PAIR_OPTIONS.format(stem=stem)}",
        '"""',
        "",
        *ARRAY_MODULE_IMPORT,
        "",
        "",
        f"def {stem}_forward(x, w, b):",
        '    """out = tanh(x @ w + b), for x of shape (N, D), w (D, M) and b (M,); the cache holds',
        '    what the backward needs."""',
        "    xp = get_array_module(x)  # NumPy or CuPy: one code path",
        "    out = xp.tanh(x @ w + b)",
        "    cache = (x, w, out)",
        "    return out, cache",
        "",
        "",
        f"def {stem}_backward(dout, cache):",
        '    """dx, dw, db: the gradients of x, w and b, in the forward\'s order."""',
        "    x, w, out = cache",
        "    dz = dout * (1 - out * out)  # a new array: the caller's dout stays as it was",
        "    dx = dz @ w.T",
        "    dw = x.T @ dz",
        "    db = dz.sum(axis=0)",
        "    return dx, dw, db",
    ]
    return Template(stem, file, "\n".join(lines) + "\n", defines=f"functions {stem}_forward and {stem}_backward")


def keeps_gradients_template(name: str) -> Template:
    """A class that keeps its gradients on attributes (DESIGN.md section 11), with the config
    that maps them: output = tanh(inputs @ weights + biases)."""
    cls, file = class_and_file(name)
    config = f"{file[:-3]}.yaml"
    lines = [
        f'"""{cls}: a layer that keeps its gradients (written by `layercheck new --convention keeps-gradients`).',
        "",
        "The convention of the nnfs book and many courses: forward stores its output on self.output,",
        "backward stores the gradients on self.dinputs, self.dweights and self.dbiases. layercheck",
        f"checks it as written; {config} maps those names. Replace the computation with your own;",
        "keep the structure. Check it with:",
        "",
        f"    layercheck run --config {config}",
        '"""',
        "",
        *ARRAY_MODULE_IMPORT,
        "",
        "",
        f"class {cls}:",
        '    """output = tanh(inputs @ weights + biases)."""',
        "",
        "    def __init__(self, n_inputs, n_neurons):",
        "        self.weights = 0.1 * np.random.randn(n_inputs, n_neurons)",
        "        self.biases = np.zeros((1, n_neurons))",
        "",
        "    def forward(self, inputs):",
        "        xp = get_array_module(inputs)  # NumPy or CuPy: one code path",
        "        self.inputs = inputs",
        "        self.output = xp.tanh(inputs @ self.weights + self.biases)",
        "",
        "    def backward(self, dvalues):",
        "        dz = dvalues * (1 - self.output * self.output)  # a new array: dvalues stays as it was",
        "        self.dweights = self.inputs.T @ dz",
        "        self.dbiases = dz.sum(axis=0, keepdims=True)",
        "        self.dinputs = dz @ self.weights.T",
    ]
    yaml_text = "\n".join(
        [
            f"# How layercheck checks {cls} (written by `layercheck new --convention keeps-gradients`):",
            f"#   layercheck run --config {config}",
            "targets:",
            f"  - target: {file}:{cls}",
            "    args: {n_inputs: 5, n_neurons: 3}",
            "    layout: 8,5:BC  # the inputs: 8 observations (B) of 5 values (C)",
            "    convention:",
            "      predict: forward  # the method that computes the outputs",
            "      output: output  # where forward stores them (it returns nothing)",
            "      backward: backward  # the method that takes dL/d(output)",
            "      input_gradient: dinputs  # where backward stores dL/d(inputs)",
            "      learnables: {weights: dweights, biases: dbiases}  # each parameter: its gradient",
        ]
    )
    return Template(cls, file, "\n".join(lines) + "\n", config=(config, yaml_text + "\n"))


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] + ", in that order"


def _distinct(names: tuple[str, ...]) -> None:
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise UsageError(
            f"the names {', '.join(repeated)} are given more than once (learnables and state share one namespace)"
        )


def _tuple(names: tuple[str, ...]) -> str:
    return "(" + ", ".join(f'"{n}"' for n in names) + ("," if len(names) == 1 else "") + ")"


def _doc(formula: str, state: tuple[str, ...]) -> str:
    text = f"Y = {formula}"
    if state:
        text += f" + ({' + '.join(state)}) / 2; every new state is Y"
    return text + "."


def write_new(directory: str | Path, template: Template) -> Path:
    """Write the template into `directory` (created if needed); never overwrite a file. The
    file's path: as `directory` spells it, or its real path where that spelling reaches
    nothing (`nope/../`).

    The folder is taken where a report's would be (`os.path.realpath`: `nope/..` is the
    working folder, and makes no folder `nope`); the file is created there, never through a
    symlink of that name (`open(..., "x")`)."""
    path = Path(directory) / template.file_name  # as the messages name it
    folder = Path(os.path.realpath(directory))
    files = [(template.file_name, template.source)] + ([template.config] if template.config else [])
    for name, _ in files:
        if os.path.lexists(folder / name):
            raise UsageError(
                f"{Path(directory) / name} exists; layercheck new never overwrites a file (choose another NAME or -o DIR)"
            )
    written = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files:
            with open(folder / name, "x", encoding="utf-8") as f:
                written.append(folder / name)
                f.write(text)
    except (FileExistsError, OSError) as exc:
        for done in written:  # all or nothing: a template without its config checks nothing
            done.unlink(missing_ok=True)
        if isinstance(exc, FileExistsError):
            raise UsageError(
                f"{Path(directory) / exc.filename if exc.filename else path} exists; layercheck new never "
                "overwrites a file (choose another NAME or -o DIR)"
            ) from None
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path if path.exists() else folder / template.file_name  # a path that reaches it
