"""The layer contract of DESIGN.md section 3, behind one normalized interface.

This module alone knows how a user's layer is called: how many inputs `predict` takes,
how its return value unpacks into outputs and updated states, when `forward` appends a
memory value, and in which order `backward` takes and returns its arguments. Checks see
`Outputs` and `Gradients` and never count tuple elements themselves.
"""

from __future__ import annotations

import inspect
import operator
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from layercheck import cupyref
from layercheck.contract import calls
from layercheck.contract.conventions import TrainingMode
from layercheck.contract.layout import Layout, validate_format
from layercheck.errors import ContractError, UsageError
from layercheck.safetext import plain_str, safe_repr, safe_str, type_name
from layercheck.status import Kind

__all__ = [
    "Adapter",
    "Gradients",
    "LayerAdapter",
    "OperationAdapter",
    "Outputs",
    "Signature",
    "adapt",
    "domains_per_input",
    "is_operation",
    "kind_of",
    "not_numbers",
    "require_arrays",
    "signature_of",
    "unpack",
]


@dataclass(frozen=True)
class Outputs:
    """What one forward pass produced: outputs Y1..YM, updated states S1..SK, memory."""

    values: tuple[Any, ...]
    states: tuple[Any, ...]
    memory: Any = None

    @property
    def all(self) -> tuple[Any, ...]:
        """Outputs then states: every array the loss of a gradient check depends on."""
        return self.values + self.states


@dataclass(frozen=True)
class Gradients:
    """What `backward` returned, split into its three groups."""

    inputs: tuple[Any, ...]
    learnables: tuple[Any, ...]
    states: tuple[Any, ...]

    @property
    def all(self) -> tuple[Any, ...]:
        return self.inputs + self.learnables + self.states


def _zero_dimensional(gradients: tuple[Any, ...]) -> tuple[Any, ...]:
    """Each NumPy scalar among the gradients as the 0-d array it stands for: the gradient of a
    0-d learnable is `(dLdY * X).sum()`, which NumPy returns as a scalar (CuPy as a 0-d
    array); its shape and dtype are then judged as any array's. NumPy's own scalar types only
    (a subclass is the layer's code, which nothing here runs)."""
    return tuple(np.asarray(g) if type(g) in _NUMPY_SCALARS else g for g in gradients)


_NUMPY_SCALARS = frozenset(
    np.dtype(code).type
    for code in ("?", "b", "h", "i", "l", "q", "B", "H", "I", "L", "Q", "e", "f", "d", "g", "F", "D", "G")
)


@dataclass(frozen=True)
class Signature:
    """Positional parameters of one method, with `self` removed."""

    names: tuple[str, ...]
    required: int
    variadic: bool

    def accepts(self, n: int) -> bool:
        return self.required <= n and (self.variadic or n <= len(self.names))

    def describe(self) -> str:
        names = list(self.names) + (["*args"] if self.variadic else [])
        return "(" + ", ".join(names) + ")"


def signature_of(fn: Callable[..., Any]) -> Signature:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return Signature((), 0, True)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return Signature(
        names=tuple(p.name for p in positional),
        required=sum(p.default is p.empty for p in positional),
        variadic=any(p.kind is p.VAR_POSITIONAL for p in params),
    )


def _names(value: Any, what: str) -> tuple[str, ...]:
    """The attribute names of `learnables` or `state`: one name, or an iterable of names.

    A name of a `str` subclass (a member of an `enum.StrEnum`) is taken as its plain value
    (`plain_str`): its `==`, hash and methods may be the layer's own, and layercheck compares,
    hashes and looks attributes up by plain names only."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = (value,)
    try:
        names = tuple(value)
    except Exception:  # not iterable, or an __iter__ of the layer's that raises
        raise ContractError(f"`{what}` must be a tuple of attribute names, got {safe_repr(value, 200)}") from None
    names = tuple(plain_str(name) if isinstance(name, str) else name for name in names)
    # str.isidentifier itself: the names are plain str here, whose methods no layer overrides
    if not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise ContractError(f"`{what}` must hold attribute names (strings), got {safe_repr(value, 200)}")
    return names


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def unpack(result: Any, n: int, what: str, expected: str) -> tuple[Any, ...]:
    """Split a method's return value into exactly `n` values.

    The contract returns a bare array when there is exactly one value, else a tuple.
    """
    if n == 1:
        if isinstance(result, (tuple, list)):
            raise ContractError(
                f"{what} returned a {type(result).__name__} of {len(result)} value(s) but should return "
                f"one bare array ({expected})"
            )
        return (result,)
    if not isinstance(result, (tuple, list)):
        raise ContractError(f"{what} returned one value but should return a tuple of {n} ({expected})")
    if len(result) != n:
        raise ContractError(f"{what} returned {_plural(len(result), 'value')} but should return {n} ({expected})")
    return tuple(result)


def _is_plain_array(x: Any) -> bool:
    """A `numpy.ndarray` itself or a `cupy.ndarray` (CuPy is never imported here)."""
    return type(x) is np.ndarray or cupyref.is_cupy_array(x)


def _class_name(x: Any) -> str:
    """`numpy.matrix`, `numpy.ma.MaskedArray`; a class of the user's by its name alone.

    NumPy's classes by their public path, the shortest module that exports them: NumPy 1.x
    gives MaskedArray the `__module__` `numpy.ma.core`, NumPy 2 `numpy.ma`."""
    cls, name = type(x), type_name(x)
    module = getattr(cls, "__module__", "")
    if not (isinstance(module, str) and module.split(".")[0] == "numpy"):
        return name
    parts = module.split(".")
    for end in range(1, len(parts) + 1):
        prefix = ".".join(parts[:end])
        if getattr(sys.modules.get(prefix), name, None) is cls:
            return f"{prefix}.{name}"
    return f"{module}.{name}"


# What an array of each non-numeric dtype kind holds: no check can compare, difference or
# differentiate it.
_NOT_NUMBERS = {
    "O": "Python objects",
    "V": "raw bytes (void)",  # structured records are V too: told apart by their fields
    "S": "byte strings",
    "U": "text",
    "M": "dates (datetime64)",
    "m": "time spans (timedelta64)",
}


def not_numbers(dtype: np.dtype[Any]) -> str | None:
    """What an array of `dtype` holds when it is not numbers ("Python objects"), else None."""
    return "structured records" if dtype.names else _NOT_NUMBERS.get(dtype.kind)


def require_arrays(values: Sequence[Any], names: Sequence[str], what: str) -> tuple[Any, ...]:
    """`values` when each is a NumPy or CuPy array, else ContractError naming the first that
    is not. A subclass of `numpy.ndarray` is refused too: `np.matrix` makes `*` a matrix
    product and reshapes to 2-D, a masked array leaves masked values out of every comparison,
    so the checks would judge something else than what the layer computes."""
    for name, x in zip(names, values):
        if _is_plain_array(x):
            held = not_numbers(x.dtype)
            if held is not None:
                raise ContractError(
                    f"{what} returned an array of dtype {safe_str(x.dtype, 80)} as {name}, which holds {held}; "
                    "outputs and states must hold numbers (bool, integer, floating or complex)"
                )
            continue
        if isinstance(x, np.ndarray):
            raise ContractError(
                f"{what} returned a {_class_name(x)} as {name}: return a plain array "
                "(np.asarray), since a subclass such as np.matrix or a masked array changes what "
                "arithmetic and comparisons mean"
            )
        raise ContractError(
            f"{what} returned {type_name(x)} {safe_repr(x, 80)} as {name}; outputs and states must be "
            "NumPy or CuPy arrays"
        )
    return tuple(values)


def _count(obj: Any, attr: str, default: int, minimum: int = 1) -> int:
    value = getattr(obj, attr, default)
    if isinstance(value, int) and not isinstance(value, bool):
        # A plain int, as names are plain str: an int subclass's `<` may be the layer's own.
        # `operator.index` copies an int subclass's value without calling its methods.
        value = operator.index(value)
    if type(value) is not int or value < minimum:
        kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise ContractError(f"`{attr}` must be {kind}, got {safe_repr(value, 200)}")
    return value


def is_operation(obj: Any) -> bool:
    """A differentiable operation (DESIGN section 4): `forward` and `backward`, no `predict`."""
    return (
        not inspect.isfunction(obj)
        and callable(getattr(obj, "forward", None))
        and callable(getattr(obj, "backward", None))
        and not callable(getattr(obj, "predict", None))
    )


def kind_of(obj: Any) -> Kind:
    """How a target is reported: FUNCTION ("function") for an operation, else LAYER."""
    return Kind.FUNCTION if is_operation(obj) else Kind.LAYER


def adapt(obj: Any) -> Adapter:
    return OperationAdapter(obj) if is_operation(obj) else LayerAdapter(obj)


class Adapter(ABC):
    """What layers and operations share: names, parameters, formats, domains, and the calls
    every check makes (`forward`, `backward`) whatever the target is."""

    kind: Kind = Kind.LAYER
    is_plain_function = False
    learnables: tuple[str, ...] = ()
    state: tuple[str, ...] = ()
    has_forward = has_backward = has_initialize = has_reset_state = False

    def __init__(self, obj: Any, input_signature: Signature):
        self.obj = obj
        self.input_signature = input_signature
        self.num_outputs = self._count("num_outputs", 1)
        self.num_inputs = self._infer_num_inputs()
        # Which inputs backward is asked to differentiate (integer inputs are not).
        self.differentiable: tuple[bool, ...] = (True,) * self.num_inputs

    def _method(self, name: str) -> Callable[..., Any] | None:
        if self.is_plain_function:
            return None
        fn = getattr(self.obj, name, None)
        return fn if callable(fn) else None

    def _count(self, attr: str, default: int, minimum: int = 1) -> int:
        return default if self.is_plain_function else _count(self.obj, attr, default, minimum)

    def _infer_num_inputs(self) -> int:
        declared = None if self.is_plain_function else getattr(self.obj, "num_inputs", None)
        if declared is not None:
            return self._count("num_inputs", 1)
        sig, method = self.input_signature, self.input_method
        if sig.variadic and sig.required == 0:
            raise ContractError(f"{method} takes *X, so the {self.kind_word} must set `num_inputs`")
        if sig.required == 0:
            raise ContractError(f"{method} takes no input argument")
        return sig.required

    @property
    def input_method(self) -> str:
        return "predict"

    @property
    def kind_word(self) -> str:
        return "layer"

    @property
    def name(self) -> str:
        return getattr(self.obj, "__name__", None) or type(self.obj).__name__

    @property
    def input_names(self) -> tuple[str, ...]:
        names = self.input_signature.names
        if len(names) >= self.num_inputs and len(set(names[: self.num_inputs])) == self.num_inputs:
            return tuple(names[: self.num_inputs])
        return ("X",) if self.num_inputs == 1 else tuple(f"X{i + 1}" for i in range(self.num_inputs))

    @property
    def output_names(self) -> tuple[str, ...]:
        declared = self._convention_names.get("outputs")
        if declared is not None and len(declared) == self.num_outputs:
            return tuple(declared)
        return ("Y",) if self.num_outputs == 1 else tuple(f"Y{i + 1}" for i in range(self.num_outputs))

    @property
    def _convention_names(self) -> dict[str, Any]:
        """The names a layer made of another convention uses (`contract.conventions`): a
        pair's gradients are `dx`, `dout`, as its code names them, not `dLdx`, `dLdY`."""
        names = None if self.is_plain_function else getattr(type(self.obj), "convention_names", None)
        return names if type(names) is dict else {}

    @property
    def convention_data(self) -> dict[str, Any] | None:
        """The plain data a layer of another convention was made from (`conventions.adopt`);
        None for a layer, operation or function of layercheck's contract."""
        data = None if self.is_plain_function else getattr(type(self.obj), "layercheck_convention", None)
        return data if type(data) is dict else None

    @property
    def training_mode(self) -> TrainingMode | None:
        """The argument that puts a target of another convention in training mode
        (`bn_param={mode: train}`), and the one for inference; None for any other target."""
        mode = getattr(self.obj, "training_mode", None) if self._convention_names else None
        return mode if type(mode) is TrainingMode else None

    def d(self, name: str) -> str:
        """The gradient of the argument or output `name`, as messages name it: `dLdX`, a
        pair's `dx` and `dout`, a class's own attribute (`dinputs`)."""
        labels = self._convention_names.get("gradients")
        if type(labels) is dict and type(labels.get(name)) is str:
            return str(labels[name])
        return f"dLd{name}"

    @property
    def forward_is_predict(self) -> bool:
        """Whether the training pass is the very call predict makes (a function pair's forward,
        a keeps-gradients class's), so that a check of forward would repeat predict's verdict."""
        return self._convention_names.get("forward_is_predict") is True

    @property
    def formats_inferred(self) -> bool:
        """Whether the outputs' formats are layercheck's reading of a function pair's outputs
        (a pair declares none), not an `output_format` the user wrote."""
        return self._convention_names.get("formats_inferred") is True

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """Learnables then state: the arrays held as attributes of the layer."""
        return self.learnables + self.state

    def gradient_names(self) -> tuple[str, ...]:
        """The argument each returned gradient belongs to, in backward's return order."""
        return self.input_names + self.learnables + self.state

    def method_signature(self, name: str) -> Signature | None:
        fn = self._method(name)
        return None if fn is None else signature_of(fn)

    # -- parameters ------------------------------------------------------------------

    def get(self, name: str) -> Any:
        return getattr(self.obj, name, None)

    def set(self, name: str, value: Any) -> None:
        setattr(self.obj, name, value)

    def parameters(self) -> dict[str, Any]:
        return {name: self.get(name) for name in self.parameter_names}

    def set_parameters(self, values: dict[str, Any]) -> None:
        for name, value in values.items():
            self.set(name, value)

    def initialize(self, layouts: Sequence[Layout]) -> None:
        fn = self._method("initialize")
        if fn is not None:
            calls.run(fn, *layouts)

    @property
    def declared_input_domain(self) -> Any:
        """The layer's `input_domain` as it wrote it (None when it declares none): the session
        validates it by the rules of `--domain`."""
        return None if self.is_plain_function else getattr(self.obj, "input_domain", None)

    # -- the contract's arities and calls -------------------------------------------------

    @abstractmethod
    def expected_calls(self) -> list[tuple[str, int, str]]:
        """(method, number of positional arguments, what they are) for every method."""

    @abstractmethod
    def forward_returns(self) -> tuple[int, str]:
        """How many values forward returns, named for messages."""

    @abstractmethod
    def backward_takes(self) -> tuple[int, str]:
        """How many positional arguments backward takes, named for messages."""

    @abstractmethod
    def backward_returns(self) -> tuple[int, str]:
        """How many gradients backward returns, named for messages."""

    def predict(self, inputs: Sequence[Any]) -> Outputs:
        """The inference pass; an operation has none."""
        raise ContractError(f"an {self.kind_word} has no predict")

    @abstractmethod
    def forward(self, inputs: Sequence[Any]) -> Outputs:
        """The training-time pass: outputs, updated states and the memory backward takes."""

    @abstractmethod
    def backward(
        self,
        inputs: Sequence[Any],
        outputs: Outputs,
        dLdY: Sequence[Any],
        dLdS: Sequence[Any] = (),
        compute_gradients: Sequence[bool] | None = None,
    ) -> Gradients:
        """The user's backward with dL/dY (and dL/dS_out), its return split into its groups.
        `compute_gradients` is an operation's mask (default: `differentiable`)."""

    def reset_state(self) -> None:
        """Reset the state attributes (nothing to do without state)."""
        return None

    def output_formats(self, input_formats: Sequence[str]) -> tuple[str, ...]:
        """The format of each output: what `output_format` declares, else the first input's."""
        declared = None if self.is_plain_function else getattr(self.obj, "output_format", None)
        if declared is None:
            return (input_formats[0],) * self.num_outputs
        what = f"output_format{tuple(input_formats)}"
        formats = unpack(
            calls.run(declared, *input_formats) if callable(declared) else declared,
            self.num_outputs,
            what,
            "one format string per output",
        )
        # A format of a str subclass (a StrEnum member) by its plain value, as names are.
        formats = tuple(plain_str(fmt) if isinstance(fmt, str) else fmt for fmt in formats)
        for fmt in formats:
            if not isinstance(fmt, str):
                raise ContractError(f"{what} returned {safe_repr(fmt, 200)}; a format is a string such as 'CB'")
            try:
                validate_format(fmt)
            except UsageError as exc:
                raise ContractError(f"{what} returned an invalid format: {exc}") from None
        return formats


class LayerAdapter(Adapter):
    """A user's layer (any object with `predict`, or a plain function) seen through the contract."""

    def __init__(self, obj: Any):
        self.is_plain_function = inspect.isfunction(obj) or inspect.isbuiltin(obj)
        if self.is_plain_function:
            self._predict = obj
        elif callable(getattr(obj, "predict", None)):
            self._predict = obj.predict
        else:
            raise ContractError(f"{type(obj).__name__} has no predict method")
        self.predict_signature = signature_of(self._predict)
        super().__init__(obj, self.predict_signature)
        self.learnables = () if self.is_plain_function else _names(getattr(obj, "learnables", ()), "learnables")
        self.state = () if self.is_plain_function else _names(getattr(obj, "state", ()), "state")
        clash = set(self.learnables) & set(self.state)
        if clash:
            raise ContractError(f"{sorted(clash)} listed both as learnables and as state")
        self.has_forward = self._method("forward") is not None
        self.has_backward = self._method("backward") is not None
        self.has_initialize = self._method("initialize") is not None
        self.has_reset_state = self._method("reset_state") is not None

    def method_signature(self, name: str) -> Signature | None:
        return self.predict_signature if name == "predict" else super().method_signature(name)

    def expected_calls(self) -> list[tuple[str, int, str]]:
        """(method, number of positional arguments, what they are) for every method."""
        inputs = ", ".join(self.input_names)
        return [
            ("predict", self.num_inputs, inputs),
            ("forward", self.num_inputs, inputs),
            ("initialize", self.num_inputs, "one layout per input"),
            ("backward", *self.backward_takes()),
            ("reset_state", 0, "no arguments"),
        ]

    # Expected arities, named for messages.

    def _returned_names(self) -> list[str]:
        return list(self.output_names) + [f"updated {s}" for s in self.state]

    def predict_returns(self) -> tuple[int, str]:
        names = self._returned_names()
        return len(names), ", ".join(names)

    def forward_returns(self) -> tuple[int, str]:
        n, names = self.predict_returns()
        if self.has_backward:
            return n + 1, names + ", memory"
        return n, names

    def backward_takes(self) -> tuple[int, str]:
        names = (
            list(self.input_names)
            + list(self.output_names)
            + [self.d(y) for y in self.output_names]
            + [f"dLd{s}_out" for s in self.state]
            + ["memory"]
        )
        return len(names), ", ".join(names)

    def backward_returns(self) -> tuple[int, str]:
        names = [self.d(x) for x in self.input_names] + [self.d(p) for p in self.learnables]
        names += [f"dLd{s}_in" for s in self.state]
        return len(names), ", ".join(names)

    # -- calls --------------------------------------------------------------------------

    def predict(self, inputs: Sequence[Any]) -> Outputs:
        n, names = self.predict_returns()
        values = unpack(calls.run(self._predict, *inputs), n, "predict", names)
        require_arrays(values, self._returned_names(), "predict")
        return Outputs(values[: self.num_outputs], values[self.num_outputs :])

    def forward(self, inputs: Sequence[Any]) -> Outputs:
        """The training-time pass: `forward` when the layer defines one, else `predict`."""
        if not self.has_forward:
            return self.predict(inputs)
        n, names = self.forward_returns()
        forward = self._method("forward")
        if forward is None:  # has_forward said there is one: the attribute changed since
            raise ContractError("the layer's forward is no longer callable")
        values = unpack(calls.run(forward, *inputs), n, "forward", names)
        m, k = self.num_outputs, len(self.state)
        require_arrays(values[: m + k], self._returned_names(), "forward")
        memory = values[m + k] if self.has_backward else None
        return Outputs(values[:m], values[m : m + k], memory)

    def backward(
        self,
        inputs: Sequence[Any],
        outputs: Outputs,
        dLdY: Sequence[Any],
        dLdS: Sequence[Any] = (),
        compute_gradients: Sequence[bool] | None = None,
    ) -> Gradients:
        fn = self._method("backward")
        if fn is None:
            raise ContractError("the layer defines no backward")
        args = [*inputs, *outputs.values, *dLdY, *(dLdS if self.state else ()), outputs.memory]
        n, names = self.backward_returns()
        values = _zero_dimensional(unpack(calls.run(fn, *args), n, "backward", names))
        a, b = self.num_inputs, self.num_inputs + len(self.learnables)
        return Gradients(values[:a], values[a:b], values[b:])

    def reset_state(self) -> None:
        """Reset the state attributes; a layer returned in MATLAB's style gives its state back."""
        fn = self._method("reset_state")
        if fn is None:
            return
        result = fn()
        if result is not None and result is not self.obj and type(result) is type(self.obj):
            for name in self.state:
                self.set(name, getattr(result, name, None))


class OperationAdapter(Adapter):
    """A differentiable operation (DESIGN section 4) seen through the same interface as a layer:
    no learnables or state, `forward` appends the memory values, and `backward` takes the
    mask `compute_gradients` and returns one gradient (or None) per input."""

    kind = Kind.FUNCTION
    has_forward = has_backward = True

    def __init__(self, obj: Any):
        super().__init__(obj, signature_of(obj.forward))
        self.num_memory_values = self._count("num_memory_values", 0, minimum=0)
        self.save_inputs = bool(getattr(obj, "save_inputs_for_backward", False))
        self.save_outputs = bool(getattr(obj, "save_outputs_for_backward", False))

    @property
    def input_method(self) -> str:
        return "forward"

    @property
    def kind_word(self) -> str:
        return "operation"

    def forward_returns(self) -> tuple[int, str]:
        names = list(self.output_names) + [f"memory{i + 1}" for i in range(self.num_memory_values)]
        return len(names), ", ".join(names)

    def backward_takes(self) -> tuple[int, str]:
        names = [f"dLd{y}" for y in self.output_names] + ["compute_gradients"]
        names += list(self.input_names) if self.save_inputs else []
        names += list(self.output_names) if self.save_outputs else []
        names += [f"memory{i + 1}" for i in range(self.num_memory_values)]
        return len(names), ", ".join(names)

    def backward_returns(self) -> tuple[int, str]:
        return self.num_inputs, ", ".join(f"dLd{x}" for x in self.input_names) + " (None where not requested)"

    def expected_calls(self) -> list[tuple[str, int, str]]:
        return [("forward", self.num_inputs, ", ".join(self.input_names)), ("backward", *self.backward_takes())]

    def forward(self, inputs: Sequence[Any]) -> Outputs:
        n, names = self.forward_returns()
        values = unpack(calls.run(self.obj.forward, *inputs), n, "forward", names)
        require_arrays(values[: self.num_outputs], self.output_names, "forward")
        return Outputs(values[: self.num_outputs], (), values[self.num_outputs :])

    def backward(
        self,
        inputs: Sequence[Any],
        outputs: Outputs,
        dLdY: Sequence[Any],
        dLdS: Sequence[Any] = (),
        compute_gradients: Sequence[bool] | None = None,
    ) -> Gradients:
        mask = tuple(bool(m) for m in (self.differentiable if compute_gradients is None else compute_gradients))
        args = [*dLdY, mask]
        args += list(inputs) if self.save_inputs else []
        args += list(outputs.values) if self.save_outputs else []
        args += list(outputs.memory)
        n, names = self.backward_returns()
        return Gradients(_zero_dimensional(unpack(calls.run(self.obj.backward, *args), n, "backward", names)), (), ())


def domains_per_input(domain: Any, n: int) -> tuple[tuple[float | None, float | None], ...]:
    """`None`, one `(low, high)` for every input, or one (or None) per input, as n intervals."""
    if domain is None:
        return ((None, None),) * n
    if _is_interval(domain):
        return (tuple(domain),) * n
    domains = tuple(domain) if isinstance(domain, (tuple, list)) else ()
    if len(domains) != n or not all(d is None or _is_interval(d) for d in domains):
        raise ContractError(
            f"input_domain must be (low, high) with low < high (None for unbounded), or one per input "
            f"({n} input(s)), got {safe_repr(domain, 200)}"
        )
    return tuple((None, None) if d is None else tuple(d) for d in domains)


def _is_interval(value: Any) -> bool:
    return (
        isinstance(value, (tuple, list))
        and len(value) == 2
        and all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in value)
        and (value[0] is None or value[1] is None or value[0] < value[1])
    )
