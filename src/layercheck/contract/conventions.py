"""The conventions people already write (DESIGN.md section 11), each seen as a layer of
section 3, so that every check, diagnosis, report and reproducer applies to it unchanged.

- A **function pair with a cache**: `NAME_forward(*args) -> (out, cache)` and
  `NAME_backward(dout, cache) -> (d_arg1, d_arg2, ...)` (CS231n's assignments and many courses).
  The array arguments are the forward's first parameters that no `--arg` gives, one per
  layout; those whose layout has a `B` are the layer's inputs, the others its learnables,
  drawn by `initialize` from their layouts.
- A **class that keeps its gradients**: `forward(X)` returns the output or stores it on an
  attribute, `backward(dY)` returns dL/dX or stores it, and stores each parameter's gradient
  on an attribute (nnfs, ML-From-Scratch). A mapping names the methods and attributes.

The layer each one becomes calls the user's code as it is, with the arrays layercheck gives,
so that what the user's code does to them (an argument changed in place, an output of another
dtype) is seen as it is for a layer of section 3.

Everything below the marker uses NumPy and the standard library only: every reproducer
carries it (`reproducers.files`), so that a reproducer of a pair needs nothing of layercheck.
"""

from __future__ import annotations

# >>> the conventions (layercheck writes what follows into every reproducer)
import copy
import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np

FORWARD_SUFFIX, BACKWARD_SUFFIX = "_forward", "_backward"
# The keys of a keeps-gradients mapping (`keeps_gradients_layer`); `arguments` gives the
# method that computes the outputs its other arguments (nnfs's `training`).
KEEPS_GRADIENTS_KEYS = ("predict", "output", "backward", "input_gradient", "learnables", "arguments")


class ConventionError(Exception):
    """A target that does not fit the convention it is checked by; the message is one line."""


def backward_name(forward: str) -> str | None:
    """The backward's name that goes with a forward's: its last `forward` made `backward`
    (`affine_forward`: `affine_backward`; `conv_forward_naive`: `conv_backward_naive`)."""
    head, sep, tail = forward.rpartition("forward")
    return f"{head}backward{tail}" if sep else None


def pair_names(names: Any, name: str, backward: str | None = None) -> tuple[str, str] | None:
    """The (forward, backward) function names of the pair `name` names among `names` (a
    module's namespace): a forward with its backward of the same name (`backward_name`),
    `NAME` when `NAME_forward` and `NAME_backward` exist, `NAME` itself when `NAME_backward`
    takes a cache (deeplearning.ai's `relu` and `relu_backward(dA, cache)`), or `name` with
    the given `backward`. None: `name` is no pair."""

    def function(key: str | None) -> bool:
        return key is not None and inspect.isfunction(names.get(key))

    if backward is not None:
        forward = name if function(name) else f"{name}{FORWARD_SUFFIX}"
        return (forward, backward) if function(forward) and function(backward) else None
    partner = backward_name(name)
    if function(name) and partner is not None:
        return (name, partner) if function(partner) else None
    forward, partner = f"{name}{FORWARD_SUFFIX}", f"{name}{BACKWARD_SUFFIX}"
    if function(forward) and function(partner):
        return forward, partner
    if function(name) and function(partner) and _takes_a_cache(names[partner]):
        return name, partner
    return None


def _takes_a_cache(fn: Any) -> bool:
    """Whether `fn`'s last required positional parameter is named `cache`: a backward of a
    pair whose forward bears no suffix (`relu_backward(dA, cache)`), told apart from a helper
    that happens to be named after a plain function."""
    try:
        params = [p for p in _parameters(fn) if p.default is p.empty]
    except ConventionError:
        return False
    return len(params) >= 2 and params[-1].name == "cache"


def _parameters(fn: Any, keyword_only: bool = False) -> list[inspect.Parameter]:
    """The positional parameters of `fn` (with `keyword_only`, its keyword-only ones after)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        raise ConventionError(f"the signature of {getattr(fn, '__name__', fn)!r} cannot be read") from None
    kinds: tuple[Any, ...] = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    kinds += (inspect.Parameter.KEYWORD_ONLY,) if keyword_only else ()
    return [p for p in params if p.kind in kinds]


def _signature(names: Any) -> inspect.Signature:
    """`(self, name1, name2, ...)`: what the adapter reads the inputs' names from."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature([inspect.Parameter(n, kind) for n in ("self", *names)])


def _one_or_tuple(values: Any) -> Any:
    values = tuple(values)
    return values[0] if len(values) == 1 else values


def _draw(size: Any, integer: Any, rng: Any) -> Any:
    """A value of a layout: integers in its range, else standard normal numbers."""
    if integer is not None:
        return rng.randint(integer[0], integer[1] + 1, size=tuple(size))
    return rng.standard_normal(tuple(size))


def _format_of(first: str, ndim: int) -> str:
    """The format of an output of `ndim` axes, from the first input's format `first`."""
    if ndim >= len(first):
        return first + "U" * (ndim - len(first))
    return "B" + "U" * (ndim - 1) if first[:1] == "B" and ndim else "U" * ndim


@dataclass(frozen=True)
class TrainingMode:
    """The argument that puts a target in training mode, in words (`bn_param={mode: train}`),
    and the one that would put it in inference mode instead (`bn_param={mode: test}`): in
    training mode a layer may mix observations by design (batch statistics, a dropout mask
    drawn for the whole batch)."""

    given: str
    inference: str


def training_mode(args: Any) -> TrainingMode | None:
    """A pair's training mode, as its arguments set it (None: not in training mode)."""
    for name, value in args.items():
        # Plain strings only: an argument may be an array, whose == compares elementwise.
        if name == "mode" and isinstance(value, str) and value == "train":
            return TrainingMode("mode=train", "mode=test")
        if isinstance(value, dict) and isinstance(value.get("mode"), str) and value["mode"] == "train":
            return TrainingMode(f"{name}={{mode: train}}", f"{name}={{mode: test}}")
    return None


def _output_names(back_required: Any) -> tuple[list[str], dict[str, str]]:
    """The outputs' names, and each one's gradient as the backward names it: `dout` is the
    gradient of `out`; a parameter named otherwise (`grad`) is the gradient of `out` (`out1`...)."""
    names: list[str] = []
    labels: dict[str, str] = {}
    several = len(back_required) > 1
    for i, param in enumerate(back_required):
        stripped = param.name[1:] if param.name[:1] == "d" and len(param.name) > 1 else None
        name = stripped or (f"out{i + 1}" if several else "out")
        names.append(name)
        labels[name] = param.name
    return names, labels


def pair_layer(user_forward: Any, user_backward: Any, layouts: Any, given: Any) -> type:
    """The section-3 layer of the pair (`user_forward`, `user_backward`) checked at `layouts`
    (one [size, format] or [size, format, integer range] per array argument, in the forward's
    order), the forward's other arguments named by `given` (their values come to the
    constructor: `--arg`, a config entry's `args:`)."""
    params = _parameters(user_forward)
    every = _parameters(user_forward, keyword_only=True)
    names = [p.name for p in params]
    unknown = [n for n in given if n not in {p.name for p in every}]
    if unknown:
        raise ConventionError(
            f"{user_forward.__name__} takes no argument {', '.join(map(repr, unknown))}; "
            f"it takes ({', '.join(p.name for p in every)})"
        )
    free = [p for p in params if p.name not in given]
    if len(layouts) > len(free):
        shown = ", ".join(p.name for p in free)
        raise ConventionError(
            f"{user_forward.__name__} takes {len(free)} argument(s) not given a value ({shown}) but "
            f"{len(layouts)} layouts were given: give one layout per array argument, in its order"
        )
    arrays = [p.name for p in free[: len(layouts)]]
    missing = [
        p.name for p in [*free[len(layouts) :], *every[len(params) :]] if p.default is p.empty and p.name not in given
    ]
    if missing:
        raise ConventionError(
            f"{user_forward.__name__}'s argument {missing[0]} has no value: give it a layout (an array) or a "
            f"value ({missing[0]}=VALUE: --arg on the command line, args: in a config)"
        )
    formats = [str(layout[1]) for layout in layouts]
    batched = [i for i, fmt in enumerate(formats) if "B" in fmt]
    inputs = [arrays[i] for i in batched] if batched else arrays[:1]
    learnables = tuple(n for n in arrays if n not in inputs)
    sizes = {n: tuple(layout[0]) for n, layout in zip(arrays, layouts)}
    integer = {n: (layout[2] if len(layout) > 2 else None) for n, layout in zip(arrays, layouts)}
    # The forward's other arguments that the backward takes too, by name (Ng's
    # `linear_activation_backward(dA, cache, activation)`): given the values the forward got.
    others = {p.name: p for p in every if p.name not in arrays}
    shared = [p.name for p in _parameters(user_backward, keyword_only=True) if p.name in others]
    # The gradient of each output, then the cache; parameters with a default are not counted.
    back_required = [p for p in _parameters(user_backward) if p.default is p.empty and p.name not in others]
    if len(back_required) < 2:
        raise ConventionError(
            f"{user_backward.__name__} takes ({', '.join(p.name for p in back_required)}); a backward of a "
            "pair takes the gradient of each output, then the cache"
        )
    num_outputs = len(back_required) - 1
    outputs, labels = _output_names(back_required[:-1])
    labels.update({n: f"d{n}" for n in arrays})
    # Arguments up to the last array are passed by position, as a caller of the forward does;
    # the others by name.
    last = max(names.index(n) for n in arrays) if arrays else -1

    class PairLayer:
        def __init__(self, **args: Any) -> None:
            self._given = args
            self.training_mode = training_mode(args)
            for n in learnables:
                setattr(self, n, None)

        def initialize(self, *input_layouts: Any) -> None:
            # The learnables are drawn from their layouts, with the global RNG layercheck seeds.
            for n in learnables:
                if getattr(self, n) is None:
                    setattr(self, n, _draw(sizes[n], integer[n], np.random))

        def _call(self, xs: Any) -> Any:
            values = dict(zip(inputs, xs))
            values.update({n: getattr(self, n) for n in learnables})
            # A fresh copy of the other arguments on each call: a forward may store what it
            # computed in them (CS231n's batchnorm keeps its running mean in bn_param), which
            # is its design; the arrays are given as they are, and what it does to them is seen.
            given = copy.deepcopy(self._given)
            positional = [
                values[n] if n in values else given.pop(n, params[i].default) for i, n in enumerate(names[: last + 1])
            ]
            result = user_forward(*positional, **given)
            if not isinstance(result, tuple) or len(result) != num_outputs + 1:
                expected = "(out, cache)" if num_outputs == 1 else f"{num_outputs} outputs, then the cache"
                raise ConventionError(
                    f"{user_forward.__name__} returned {type(result).__name__}"
                    + (f" of {len(result)}" if isinstance(result, tuple) else "")
                    + f"; expected {expected}, as {user_backward.__name__} takes {num_outputs} gradient(s) and the cache"
                )
            return result

        def predict(self, *xs: Any) -> Any:
            return _one_or_tuple(self._call(xs)[:-1])

        def output_format(self, *input_formats: str) -> Any:
            # A pair declares no format: each output keeps the first input's where it has as
            # many axes, and its axes first where it has more (an embedding adds one); with
            # fewer, it is batch-first as the convention's arrays are (affine: N, M). The axes
            # are counted on one call of the forward with inputs of the layouts.
            rng = np.random.RandomState(0)
            try:
                returned = self._call([_draw(sizes[n], integer[n], rng) for n in inputs])[:-1]
                ndims = [int(np.ndim(y)) for y in returned]
            except Exception:  # the checks that call the forward report it
                ndims = [len(input_formats[0])] * num_outputs
            first = input_formats[0]
            return _one_or_tuple(_format_of(first, n) for n in ndims)

        def forward(self, *xs: Any) -> Any:
            return self._call(xs)

        def backward(self, *args: Any) -> Any:
            n = len(inputs)
            douts, cache = args[n + num_outputs : n + 2 * num_outputs], args[-1]
            given = copy.deepcopy({name: self._given[name] for name in shared if name in self._given})
            given.update({name: others[name].default for name in shared if name not in given})
            result = user_backward(*douts, cache, **given)
            # The gradients of integer arguments are not asked for (a word embedding's
            # backward returns dW alone); whatever the backward gives for them is not read.
            wanted = [a for a in arrays if integer[a] is None]
            if isinstance(result, dict):
                by_name = {}
                for key, value in result.items():
                    name = key[1:] if isinstance(key, str) and key not in arrays and key[:1] == "d" else key
                    by_name[name] = value
                lacking = [a for a in wanted if a not in by_name]
                if lacking:
                    raise ConventionError(
                        f"{user_backward.__name__} returned a dict without d{lacking[0]} (keys: {', '.join(map(str, result))})"
                    )
                by_argument = {a: by_name[a] for a in wanted}
            else:
                ordered = list(result) if isinstance(result, (tuple, list)) else [result]
                if len(ordered) == len(arrays):
                    by_argument = {a: g for a, g in zip(arrays, ordered) if integer[a] is None}
                elif len(ordered) == len(wanted):
                    by_argument = dict(zip(wanted, ordered))
                else:
                    raise ConventionError(
                        f"{user_backward.__name__} returned {len(ordered)} value(s); expected the gradients of "
                        f"{', '.join(wanted)} ({len(wanted)}), in the forward's order"
                    )
            return _one_or_tuple([by_argument.get(a) for a in (*inputs, *learnables)])

    PairLayer.__name__ = PairLayer.__qualname__ = user_forward.__name__
    PairLayer.__doc__ = f"{user_forward.__name__} and {user_backward.__name__}, checked as a layer."
    PairLayer.learnables = learnables  # type: ignore[attr-defined]
    PairLayer.num_outputs = num_outputs  # type: ignore[attr-defined]
    # Which of the layouts are the inputs' (in the forward's order), for layercheck to give.
    PairLayer.input_indices = tuple(arrays.index(n) for n in inputs)  # type: ignore[attr-defined]
    # Messages name the outputs and gradients as the pair's code does: dx, dw; dout.
    PairLayer.convention_names = {  # type: ignore[attr-defined]
        "outputs": outputs,
        "gradients": labels,
        "formats_inferred": True,  # read from the outputs (`output_format`)
        "forward_is_predict": True,  # both are one call of the user's forward
    }
    PairLayer.predict.__signature__ = _signature(inputs)  # type: ignore[attr-defined]
    PairLayer.forward.__signature__ = _signature(inputs)  # type: ignore[attr-defined]
    return PairLayer


# What a training loop calls before backward where a class adds its gradients to its buffers
# (PyTorch's name): the class's own reset of them.
_RESET = "zero_grad"


def _clear(layer: Any, attributes: Any, dtypes: dict[str, Any] | None = None) -> dict[str, Any]:
    """Empty the attributes a call stores its results in before it runs: a result a call does
    not store is then missing, not the one an earlier call stored.

    An array: where the class resets its gradients itself (`zero_grad`, which a training loop
    calls before backward), that reset is called and the buffers are the class's (cast first
    to the precision `dtypes` gives, as a class built at that precision holds them); else a new
    array of its shape filled with NaN takes its place, at the precision `dtypes` gives (a
    learnable's gradient: its learnable's, which layercheck sets at each precision it checks,
    after the class allocated the buffer). A class that writes into its buffer (`self.dW[...]
    = ...`) overwrites the NaN; one that adds to it with no reset (`self.dW += ...`: gradients
    that pile up across calls) or stores nothing leaves NaN (`_stored`). Anything else becomes
    None. Returns the arrays of NaN given, by attribute."""
    present = [a for a in attributes if a is not None and a in getattr(layer, "__dict__", {})]
    reset: Any = getattr(layer, _RESET, None)
    resets = callable(reset) and any(_is_float_array(getattr(layer, a)) for a in present)
    if resets:
        # The buffers the class allocated for its learnables as they were built, at the
        # precision layercheck has set them to since (a reset that fills them in place would
        # keep a float64 buffer beside a float32 learnable, as the class never would).
        for attribute in present:
            value, dtype = getattr(layer, attribute), (dtypes or {}).get(attribute)
            if _is_float_array(value) and dtype is not None and value.dtype != dtype:
                setattr(layer, attribute, value.astype(dtype))
        reset()
    filled = {}
    for attribute in present:
        value = getattr(layer, attribute)  # as the reset left it
        if not _is_float_array(value):
            setattr(layer, attribute, None)
        elif not resets:
            dtype = (dtypes or {}).get(attribute, value.dtype)
            filled[attribute] = value.astype(dtype, copy=True)  # NumPy's or CuPy's, its layout kept
            filled[attribute].fill(np.nan)
            setattr(layer, attribute, filled[attribute])
    return filled


def _is_float_array(value: Any) -> bool:
    # NumPy's array or CuPy's (by its module: this code runs in reproducers, NumPy alone)
    array = isinstance(value, np.ndarray) or type(value).__module__.partition(".")[0] == "cupy"
    return array and np.dtype(value.dtype).kind in "fc"


def _stored(layer: Any, attribute: str, filled: dict[str, Any], what: str) -> Any:
    """What the call `what` stored in `attribute` (None where nothing: the attribute None).
    Raises ConventionError where it left the array of NaN it was given as it was."""
    value = getattr(layer, attribute, None)
    given = filled.get(attribute)
    if value is not None and value is given and bool(np.isnan(given).all()):
        raise ConventionError(
            f"{what} left {attribute!r} as layercheck filled it before the call (NaN): it stored nothing there, "
            f"or added to what was there (gradients that pile up across calls need a {_RESET} that the "
            "training loop calls)"
        )
    return value


# What a class that keeps its gradients declares of section 3 and its wrapper passes on.
_DECLARATIONS = ("input_domain", "example_layout")


def keeps_gradients_layer(cls: type, mapping: Any) -> type:
    """The section-3 layer of a class that keeps its gradients on attributes, by `mapping`
    (KEEPS_GRADIENTS_KEYS: the method that computes the outputs and the other arguments it
    takes, the attribute it stores them in, the backward, the attribute of dL/dX, and each
    parameter's gradient attribute). A configured attribute is read whatever the method
    returns: it is what the class gives its caller."""
    predict_method = mapping.get("predict") or "forward"
    backward_method = mapping.get("backward") or "backward"
    output, input_gradient = mapping.get("output"), mapping.get("input_gradient")
    gradients = dict(mapping.get("learnables") or {})
    arguments = dict(mapping.get("arguments") or {})
    for method in (predict_method, backward_method):
        if not callable(getattr(cls, method, None)):
            raise ConventionError(f"{cls.__name__} has no method {method!r}")
    params = _parameters(getattr(cls, predict_method))[1:]  # after self
    unknown = [n for n in arguments if n not in {p.name for p in _parameters(getattr(cls, predict_method), True)}]
    if unknown:
        raise ConventionError(
            f"{cls.__name__}.{predict_method} takes no argument {unknown[0]!r} (convention: arguments)"
        )
    input_names = [p.name for p in params if p.default is p.empty and p.name not in arguments] or ["X"]

    def result(layer: Any, value: Any, attribute: Any, what: str, filled: dict[str, Any]) -> Any:
        if attribute is not None:
            value = _stored(layer, attribute, filled, f"{cls.__name__}.{what}")
            if value is None:
                raise ConventionError(f"{cls.__name__}.{what} stored nothing in {attribute!r}")
        elif value is None:
            key = "output" if what == predict_method else "input_gradient"
            raise ConventionError(
                f"{cls.__name__}.{what} returned None: give `{key}:` the attribute it stores its result in"
            )
        return value

    class KeepsGradientsLayer:
        _layer: Any

        def __init__(self, **args: Any) -> None:
            self._layer = cls(**args)
            # In training mode a layer may mix observations by design: said where they mix.
            training = arguments.get("training") is True
            self.training_mode = (
                TrainingMode("arguments: {training: true}", "arguments: {training: false}") if training else None
            )

        def _run(self, xs: Any) -> Any:
            layer = self._layer
            filled = _clear(layer, [output])  # what a call stores is this call's, never a call's before
            return result(layer, getattr(layer, predict_method)(*xs, **arguments), output, predict_method, filled)

        def predict(self, *xs: Any) -> Any:
            return self._run(xs)

        def forward(self, *xs: Any) -> Any:
            y = self._run(xs)
            # What backward reads of this forward (self.inputs, a dropout mask): the attributes
            # as they are now, put back before backward, whatever ran between the two.
            layer = self._layer
            return y, (dict(vars(layer)) if hasattr(layer, "__dict__") else None)

        def backward(self, *args: Any) -> Any:
            layer, memory = self._layer, args[-1]
            if memory is not None:
                vars(layer).update(memory)
            learnables = {attribute: getattr(layer, name, None) for name, attribute in gradients.items()}
            dtypes = {a: v.dtype for a, v in learnables.items() if v is not None and hasattr(v, "dtype")}
            filled = _clear(layer, [input_gradient, *gradients.values()], dtypes)
            dx = result(
                layer,
                getattr(layer, backward_method)(args[len(input_names) + 1]),
                input_gradient,
                backward_method,
                filled,
            )
            grads = []
            for name, attribute in gradients.items():
                value = _stored(layer, attribute, filled, f"{cls.__name__}.{backward_method}")
                if value is None:
                    raise ConventionError(
                        f"{cls.__name__}.{backward_method} stored no gradient of {name} in {attribute!r}"
                    )
                grads.append(value)
            return _one_or_tuple([dx, *grads])

    def held(name: str) -> property:
        """The parameter `name` of the wrapped layer, read and set through the wrapper."""

        def get(self: KeepsGradientsLayer) -> Any:
            return getattr(self._layer, name)

        def set_(self: KeepsGradientsLayer, value: Any) -> None:
            setattr(self._layer, name, value)

        return property(get, set_)

    for name in gradients:
        setattr(KeepsGradientsLayer, name, held(name))
    for declared in _DECLARATIONS:
        if getattr(cls, declared, None) is not None:
            setattr(KeepsGradientsLayer, declared, getattr(cls, declared))
    declared_format = getattr(cls, "output_format", None)
    if declared_format is not None:
        if callable(declared_format):

            def output_format(self: KeepsGradientsLayer, *formats: str) -> Any:
                return self._layer.output_format(*formats)

            KeepsGradientsLayer.output_format = output_format  # type: ignore[attr-defined]
        else:
            KeepsGradientsLayer.output_format = declared_format  # type: ignore[attr-defined]
    # Messages name the gradients as the class does: dvalues (its backward's parameter),
    # dinputs, dweights (its attributes).
    back_params = _parameters(getattr(cls, backward_method))[1:]
    output_name = output or "Y"
    labels = {output_name: back_params[0].name if back_params else f"d{output_name}"}
    labels.update({n: input_gradient or f"d{n}" for n in input_names[:1]})
    labels.update(gradients)
    KeepsGradientsLayer.convention_names = {  # type: ignore[attr-defined]
        "outputs": [output_name],
        "gradients": labels,
        "forward_is_predict": True,  # both are one call of its method
    }
    KeepsGradientsLayer.__name__ = KeepsGradientsLayer.__qualname__ = cls.__name__
    KeepsGradientsLayer.__doc__ = f"{cls.__name__}, whose gradients are kept on attributes, checked as a layer."
    KeepsGradientsLayer.learnables = tuple(gradients)  # type: ignore[attr-defined]
    KeepsGradientsLayer.predict.__signature__ = _signature(input_names)  # type: ignore[attr-defined]
    KeepsGradientsLayer.forward.__signature__ = _signature(input_names)  # type: ignore[attr-defined]
    return KeepsGradientsLayer


def adopt(names: Any, name: str, convention: Any) -> Any:
    """The layer a target of a convention is checked as: `convention` is plain data,
    {"pair": [forward, backward], "layouts": [[size, format], ...], "given": [arg names]} or
    {"keeps_gradients": mapping}; `names` is the module's namespace."""
    if "pair" in convention:
        forward, backward = convention["pair"]
        layer = pair_layer(names[forward], names[backward], convention["layouts"], convention["given"])
    else:
        layer = keeps_gradients_layer(names[name], convention["keeps_gradients"])
    layer.layercheck_convention = convention  # type: ignore[attr-defined]
    return layer
