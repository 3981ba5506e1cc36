"""Everything the checks of one target share: fresh layers, inputs, and cached steps.

A step (predict, forward or backward at one dtype on one device) runs once and is cached with
its result or the user's exception, so that a check depending on a step that failed can say
so instead of failing again, and so that the run costs one call per step however many checks
read it. The backward step continues its forward step (the same layer object and inputs), so
a training step costs one forward and one backward; a layer without forward trains with
predict, and its forward step is its predict step.

The cache is the session's own: a user method is only ever given copies of what it holds (the
inputs drawn once, the reference parameters, dL/dY, a step's outputs). What each step's call
left of its arguments is recorded (`CallArguments`), so that the checks that a layer does not
modify its arguments read it instead of calling the layer again.
"""

from __future__ import annotations

import dataclasses
import random
import sys
import types
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from layercheck.checks.context import BackwardResult, CallArguments, CallError, Step, call
from layercheck.checks.registry import Incomplete
from layercheck.clock import monotonic
from layercheck.contract import calls
from layercheck.contract.adapter import Adapter, Outputs, adapt, domains_per_input
from layercheck.contract.layout import Layout
from layercheck.contract.loading import contract_collisions
from layercheck.cupyref import fake_cupy
from layercheck.devices import GpuStatus, gpu_status
from layercheck.errors import USER_ERRORS, ContractError, TargetError, UsageError
from layercheck.numerics import arrays
from layercheck.numerics.precision import PrecisionFinding, measure_precision
from layercheck.portability import is_cuda_error, is_cupy_refusal
from layercheck.results import Call, Kind
from layercheck.running.draws import DataKey, Draws, OutputGradients
from layercheck.safetext import exception_text
from layercheck.settings.options import COMPLEX_DTYPES, Options, parse_input_domain

__all__ = ["DataKey", "Session", "StepKey", "notes", "seed_user_rngs"]


@dataclass(frozen=True)
class StepKey:
    """One step: a method called at one dtype on one device."""

    method: Call
    dtype: str
    gpu: bool

    @property
    def data(self) -> DataKey:
        return DataKey(self.dtype, self.gpu)

    @property
    def where(self) -> str:
        return f"{self.dtype} {'CuPy ' if self.gpu else ''}inputs"


@dataclass(frozen=True)
class _Pass:
    """The layer object and the inputs a predict or forward step ran on: its backward step
    continues from them (layers keep on self what forward saw)."""

    layer: Adapter
    inputs: tuple[Any, ...]


@dataclass
class _Cache:
    """What the checks of one target share, each kind of value under its own typed key."""

    steps: dict[StepKey, Step] = field(default_factory=dict)
    passes: dict[StepKey, _Pass] = field(default_factory=dict)  # until backward continues one
    arguments: dict[StepKey, CallArguments] = field(default_factory=dict)  # of the steps that ran
    parameters: dict[DataKey, dict[str, Any]] = field(default_factory=dict)
    precision: dict[str, PrecisionFinding] = field(default_factory=dict)  # by dtype name
    output_formats: Step | None = None
    gpu_failure: tuple[CallError | None] | None = None  # (the failure or None,) once looked for
    complex_outputs: bool = False  # some predict or forward step returned complex outputs


_T = TypeVar("_T")


def _weakly(method: Callable[[], _T]) -> Callable[[], _T]:
    """`method`, called through a weak reference to its object. A session's draws ask the
    session for its input domains; holding the session itself would make a cycle, and every
    array the session holds (a few copies of each input) would outlive `check_layer` until the
    cyclic collector next runs, which counts objects, not bytes."""
    ref = weakref.WeakMethod(method)

    def called() -> _T:
        bound = ref()
        if bound is None:  # a defect of layercheck: the draws are reached through their session
            raise ReferenceError("a session's draws outlived the session")
        return bound()

    return called


def seed_user_rngs(seed: int) -> None:
    """Layers initialize with the global RNGs; seed them so that every fresh layer is alike."""
    np.random.seed(seed % 2**32)
    random.seed(seed)


class Session:
    """One target under test: its factory, input layouts and options, and what its checks share."""

    def __init__(self, factory: Callable[[], Any], layouts: Sequence[Layout], options: Options):
        self.started = monotonic()  # the target's time limit counts from about here
        self.factory = factory
        self.layouts = tuple(layouts)
        self.options = options
        self._cache = _Cache()
        self.draws = Draws(options.seed, self.layouts, _weakly(self.input_domains), options.inputs)
        self.reference = self._build_reference()
        # What the notes say of the layer itself, read while it is set up: after the checks
        # nothing of the layer's runs (`notes`), and the guard's last look is the last check's.
        try:
            self.collisions = tuple(contract_collisions(self.reference.obj, getattr(factory, "args", {})))
        except Exception:  # noqa: BLE001 - notes are advice: a __dict__ of the layer's that raises loses them
            self.collisions = ()
        self.complex_parameters = tuple(
            f"learnable {name}" if name in self.reference.learnables else f"state {name}"
            for name, value in self.reference_parameters.items()
            if arrays.is_array(value) and arrays.is_complex(value)
        )
        if options.default_dtypes and _complex_valued(self.reference, self.reference_parameters):
            self.options = dataclasses.replace(options, dtypes=(*options.dtypes, *COMPLEX_DTYPES))
        if self.options.device != "gpu":
            self._refuse_if_bound_to_gpu()

    # -- randomness ---------------------------------------------------------------------

    def rng(self, purpose: str) -> np.random.Generator:
        """A generator that depends only on the seed and `purpose`: checks do not disturb each other."""
        return self.draws.rng(purpose)

    # -- layers -------------------------------------------------------------------------

    def _build_reference(self) -> Adapter:
        """The layer constructed and initialized once; its parameters are the reference values."""
        adapter = self.new_layer(initialize=False)
        if adapter.num_inputs != len(self.layouts):
            names = ", ".join(adapter.input_names)
            raise TargetError(
                f"{adapter.name} takes {adapter.num_inputs} input(s) ({names}) but "
                f"{len(self.layouts)} layout(s) were given: give one --layout per input"
            )
        fake = fake_cupy()
        if fake is not None:  # put there by the user's code: layercheck would take it for CuPy
            raise TargetError(
                f"sys.modules['cupy'] {fake}: layercheck cannot tell CuPy arrays with it, nor check the "
                "layer on the GPU; import the real CuPy, or leave 'cupy' out of sys.modules"
            )
        try:
            self.reference = adapter
            self.input_domains()
        except ContractError as exc:
            raise TargetError(str(exc)) from None
        self.initialize_step = call("initialize", Call.INITIALIZE, lambda: adapter.initialize(self.layouts))
        self.reference_parameters = {name: arrays.copy_tree(value) for name, value in adapter.parameters().items()}
        return adapter

    def new_layer(self, initialize: bool = True, layouts: Sequence[Layout] | None = None) -> Adapter:
        """A freshly constructed layer; initialized with the seeded global RNGs when asked."""
        seed_user_rngs(self.options.seed)
        # The layer's code (its constructor, or the __deepcopy__ of an instance the API was
        # given): a call of the layer, timed and guarded as its methods are (`contract.calls`).
        obj = calls.run(self.factory)
        try:
            adapter = adapt(obj)
        except ContractError as exc:
            raise TargetError(str(exc)) from None
        if adapter.kind == Kind.FUNCTION:
            adapter.differentiable = tuple(not integer for integer in self.integer_inputs)
        if initialize:
            seed_user_rngs(self.options.seed)
            adapter.initialize(self.layouts if layouts is None else layouts)
        return adapter

    def layer(self, dtype: Any, layouts: Sequence[Layout] | None = None, gpu: bool | None = None) -> Adapter:
        """A fresh layer whose parameters are the reference values cast to `dtype`'s precision,
        on the GPU when `gpu` (None: the session's home device).

        It is initialized like the reference first: initialize may also set up what is not a
        parameter (a channel axis, say). On other `layouts` (another batch size), the states
        are the ones initialize gives there, since their shape may follow the layout.
        """
        self.initialize_step.require()
        for name, value in self.reference_parameters.items():
            if not arrays.is_array(value):
                raise Incomplete(
                    f"not checked: {name!r} is {arrays.describe(value)}, not an array (see function_syntaxes_are_correct)"
                )
        try:
            adapter = self.new_layer(initialize=True, layouts=layouts)
        except USER_ERRORS as exc:
            where = "" if layouts is None else f" with layouts {'; '.join(map(str, layouts))}"
            raise Incomplete(f"not checked: initialize raised {exception_text(exc)} on a fresh layer{where}") from None
        xp = self._module(gpu)
        values = {name: value.copy() for name, value in self.parameters(dtype, gpu).items()}
        if layouts is not None:
            values.update(
                {
                    name: arrays.to_module(arrays.cast(adapter.get(name), dtype), xp)
                    for name in adapter.state
                    if arrays.is_array(adapter.get(name))
                }
            )
        adapter.set_parameters(values)
        return adapter

    def parameters(self, dtype: Any, gpu: bool | None = None) -> dict[str, Any]:
        """The reference parameters at `dtype`'s precision, on the GPU when `gpu` (None: the
        home device): moved once per dtype. Shared: copy before handing one to a layer."""
        key = self._data_key(dtype, gpu)
        if key not in self._cache.parameters:
            xp = self._module(key.gpu)
            self._cache.parameters[key] = {
                name: arrays.to_module(arrays.cast(value, dtype), xp)
                for name, value in self.reference_parameters.items()
            }
        return self._cache.parameters[key]

    # -- devices ------------------------------------------------------------------------

    def gpu(self) -> GpuStatus:
        """The GPU the checks may use; never asks CuPy with `device="cpu"`."""
        if self.options.device == "cpu":
            return GpuStatus(False, "--device cpu")
        return gpu_status()

    def home_module(self) -> Any:
        """The module the checks run the layer in: cupy with --device gpu, else numpy; numpy
        also when the layer raises on the GPU where it runs on the CPU (`gpu_failure`), so
        that every CPU check still runs and the GPU checks report the failure."""
        return self._module(None)

    def _module(self, gpu: bool | None) -> Any:
        if gpu is None:
            gpu = self.options.device == "gpu" and self.gpu_failure() is None
        return self.gpu().module if gpu else np

    def _data_key(self, dtype: Any, gpu: bool | None) -> DataKey:
        return DataKey(np.dtype(dtype).name, arrays.on_gpu(self._module(gpu)))

    def gpu_binding(self) -> str | None:
        """How the layer shows that it runs on the GPU whatever its inputs, or None."""
        return _gpu_binding(self)

    def _refuse_if_bound_to_gpu(self) -> None:
        """One line for a layer bound to the GPU, instead of every host check failing."""
        binding = self.gpu_binding()
        if binding is None:
            return
        status = self.gpu()
        where = "check it with --device gpu" if status.usable else f"no GPU is usable here ({status.reason})"
        raise TargetError(f"{self.reference.name} runs only on the GPU: {binding}; {where}")

    def gpu_failure(self) -> CallError | None:
        """With --device gpu: the error of the first training-time step (predict or forward,
        then backward, at the first dtype) that raises on the GPU but runs on the CPU."""
        if self.options.device != "gpu" or not self.gpu().usable:
            return None
        if self._cache.gpu_failure is None:
            self._cache.gpu_failure = (None,)  # while looking (every step it runs names its device)
            self._cache.gpu_failure = (_first_gpu_failure(self),)
        return self._cache.gpu_failure[0]

    # -- data ---------------------------------------------------------------------------

    def inputs(self, dtype: Any, gpu: bool | None = None, shared: bool = False) -> tuple[Any, ...]:
        """Random inputs at `dtype` (the same values at every precision and on every device:
        drawn once), on the GPU when `gpu` (None: the home device); a fresh copy each call, or
        with `shared` the session's own arrays, which the caller must never write into."""
        return self.draws.inputs(dtype, self._module(gpu), shared)

    def input_domains(self) -> tuple[tuple[float | None, float | None], ...]:
        """Where each input is drawn and perturbed: the options' override, else the layer's."""
        if self.options.input_domains is not None:
            return domains_per_input(self.options.input_domains, self.reference.num_inputs)
        declared = self.reference.declared_input_domain
        if declared is None:
            return domains_per_input(None, self.reference.num_inputs)
        try:  # the rules and words of `--domain`: (nan, None) or (-inf, inf) is no domain
            domain = parse_input_domain(declared, "input_domain")
        except UsageError as exc:
            raise ContractError(f"{self.reference.name}'s {exc}") from None
        return domains_per_input(domain, self.reference.num_inputs)

    @property
    def integer_inputs(self) -> tuple[bool, ...]:
        """Which inputs hold integers (not differentiated; backward returns None for them)."""
        return tuple(layout.integer is not None for layout in self.layouts)

    @property
    def integer_arguments(self) -> tuple[bool, ...]:
        """`integer_inputs` for every argument in backward's return order (parameters are not)."""
        return self.integer_inputs + (False,) * len(self.reference.parameter_names)

    def random_inputs(self, layouts: Sequence[Layout], dtype: Any, purpose: str) -> tuple[Any, ...]:
        """Inputs drawn like `inputs` but for other layouts (another batch size)."""
        return self.draws.random_inputs(layouts, dtype, purpose, self.home_module())

    def output_gradients(self, outputs: Outputs, purpose: str) -> OutputGradients:
        """Random dL/dY and dL/dS_out like the outputs and states, in their module."""
        return self.draws.output_gradients(outputs, purpose)

    def training_output_gradients(self, outputs: Outputs, dtype: Any) -> OutputGradients:
        """The training step's dL/dY and dL/dS_out at `dtype`, as fresh arrays on every call."""
        return self.draws.training_output_gradients(outputs, dtype)

    def output_formats(self) -> tuple[str, ...]:
        """The declared format of each output; `Incomplete` when output_format breaks."""
        if self._cache.output_formats is None:
            formats = [layout.format for layout in self.layouts]
            self._cache.output_formats = call(
                "output_format", Call.OUTPUT_FORMAT, lambda: self.reference.output_formats(formats)
            )
        declared: tuple[str, ...] = self._cache.output_formats.require()
        return declared

    # -- cached steps -----------------------------------------------------------------------

    @property
    def _evaluated(self) -> Call:
        """The method a check of the outputs reads: predict for a layer, forward for an operation."""
        return Call.PREDICT if self.reference.kind == Kind.LAYER else Call.FORWARD

    def predict(self, dtype: Any, gpu: bool | None = None) -> Step:
        return self.step(Call.PREDICT, dtype, gpu)

    def forward(self, dtype: Any, gpu: bool | None = None) -> Step:
        return self.step(Call.FORWARD, dtype, gpu)

    def backward(self, dtype: Any, gpu: bool | None = None) -> Step:
        """forward then backward at `dtype`, with random dL/dY; the value is a BackwardResult."""
        return self.step(Call.BACKWARD, dtype, gpu)

    def step(self, method: str, dtype: Any, gpu: bool | None = None) -> Step:
        """The cached step of `method` ("predict", "forward" or "backward"), on the GPU when
        `gpu` (None: the home device)."""
        return self._step(self._step_key(Call(method), dtype, gpu))

    def call_arguments(self, method: str, dtype: Any) -> CallArguments:
        """What the call of the step of `method` at `dtype` on the home device was given and
        left of it; `Incomplete` when the step failed."""
        key = self._step_key(Call(method), dtype, None)
        self._step(key).require()
        return self._cache.arguments[key]

    def _step_key(self, method: Call, dtype: Any, gpu: bool | None) -> StepKey:
        if method is Call.FORWARD and self.reference.kind == Kind.LAYER and not self.reference.has_forward:
            method = Call.PREDICT  # a layer without forward trains with predict: one call for both
        return StepKey(method, np.dtype(dtype).name, arrays.on_gpu(self._module(gpu)))

    def _step(self, key: StepKey) -> Step:
        if key not in self._cache.steps:
            self._cache.steps[key] = self._run_backward(key) if key.method is Call.BACKWARD else self._run_pass(key)
        return self._cache.steps[key]

    def _run_pass(self, key: StepKey) -> Step:
        """predict or forward on a fresh layer and fresh copies of the inputs."""
        layer, xs = self.layer(key.dtype, gpu=key.gpu), self.inputs(key.dtype, key.gpu)
        held = _held_by(layer)
        name = key.method.value
        step = call(f"{name} with {key.where}", key.method, lambda: getattr(layer, name)(xs))
        if step.ok and isinstance(step.value, Outputs):
            # Read now, while the check that asked for the step runs (`notes`).
            self._cache.complex_outputs |= any(arrays.is_array(y) and arrays.is_complex(y) for y in step.value.all)
        if step.ok:
            given = self.inputs(key.dtype, key.gpu, shared=True) + self._held(self.parameters(key.dtype, key.gpu))
            self._cache.arguments[key] = _left(given, xs + _held_by(layer), xs + held)
            self._cache.passes[key] = _Pass(layer, xs)
        return step

    def _held(self, parameters: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(parameters[name] for name in self.reference.parameter_names)

    def _run_backward(self, key: StepKey) -> Step:
        """backward on the layer object and inputs of the forward step, with the very outputs
        it returned (a training step; a layer may hold them on self), and copies of the
        session's dL/dY and dL/dS_out. The forward step keeps copies of its outputs from then
        on: whatever backward writes into, no other check sees it."""
        source = self._step_key(Call.FORWARD, key.dtype, key.gpu)
        forward = self._step(source)
        outputs: Outputs = forward.require()
        run = self._cache.passes.pop(source)  # continued once: the backward step is cached
        kept = Outputs(_copies(outputs.values), _copies(outputs.states), outputs.memory)
        self._cache.steps[source] = dataclasses.replace(forward, value=kept)
        drawn = self.draws.training_output_gradients(outputs, key.dtype, shared=True)
        dLdY, dLdS = _copies(drawn[0]), _copies(drawn[1])
        what = f"backward with {key.where}"
        placed = run.inputs + _held_by(run.layer) + outputs.values + dLdY + dLdS
        step = call(what, Call.BACKWARD, lambda: run.layer.backward(run.inputs, outputs, dLdY, dLdS))
        if not step.ok:
            return step
        given = self._cache.arguments[source].after + kept.values + drawn[0] + drawn[1]
        now = run.inputs + _held_by(run.layer) + outputs.values + dLdY + dLdS
        self._cache.arguments[key] = _left(given, now, placed)
        return Step(what, BackwardResult(step.value, run.inputs, outputs, dLdY, dLdS, run.layer))

    # -- precision ------------------------------------------------------------------------

    def precision(self, dtype: Any) -> PrecisionFinding:
        """The precision the layer really computes in at `dtype` (measured once, on the home
        device): a layer that rounds to float32 inside is judged at float32."""
        name = np.dtype(dtype).name
        if name not in self._cache.precision:
            self._cache.precision[name] = _measure_precision(self, dtype)
        return self._cache.precision[name]

    def measured_precision(self, dtype: Any) -> PrecisionFinding | None:
        """`precision(dtype)` if some check measured it already, else None (nothing is run)."""
        return self._cache.precision.get(np.dtype(dtype).name)

    def tolerance(self, dtype: Any) -> tuple[float, float]:
        """(rtol, atol) to judge results at `dtype` with: those of the precision the layer
        really computes in (float32's for a float64 layer that rounds to float32 inside)."""
        finding = self.precision(dtype)
        if finding.lost:
            return self.options.tolerance("complex64" if np.dtype(dtype).kind == "c" else "float32")
        return self.options.tolerance(dtype)

    def complex_outputs_ran(self) -> bool:
        """Whether a predict or forward step that ran so far returned complex outputs."""
        return self._cache.complex_outputs


def _gpu_binding(session: Session) -> str | None:
    """How the layer shows that it runs on the GPU whatever its inputs (an array module chosen
    once, at import), or None. Only possible where the layer's code can reach CuPy."""
    if not _reaches_cupy(session.reference.obj):
        return None
    parameters = session.reference_parameters
    if any(arrays.is_cupy_array(v) for v in parameters.values()):
        names = [n for n, v in parameters.items() if arrays.is_cupy_array(v)]
        return f"initialize made {', '.join(names)} CuPy arrays"
    failed = session.initialize_step.error
    if failed is not None and is_cuda_error(failed.exception):  # made its learnables with CuPy
        return f"initialize calls CuPy on the GPU ({failed.summary(hint=False)})"
    method = session._evaluated.value
    try:
        step = session.step(method, session.options.dtypes[0], gpu=False)
    except Incomplete:  # a step it needs failed (initialize raised): its own check says so
        return None
    if step.error is not None:
        if is_cupy_refusal(step.error.exception):
            return f"{method} refuses NumPy inputs ({step.error.summary()})"
        if is_cuda_error(step.error.exception):  # on NumPy inputs: the layer's own CuPy call
            return f"{method} calls CuPy on the GPU ({step.error.summary(hint=False)})"
        return None
    values = step.value.all if isinstance(step.value, Outputs) else ()
    if any(arrays.is_cupy_array(y) for y in values):
        return f"{method} returns CuPy arrays from NumPy inputs"
    return None


def _reaches_cupy(obj: Any) -> bool:
    """Whether CuPy is imported and the module of the layer's code (of its class and the
    classes it derives from, or of the function) holds CuPy or something of it.

    Not merely whether CuPy is imported: layercheck imports it itself before the user's module
    (`sandbox.integrity` records it first), and asking a layer that never names CuPy would call
    it while the layer is set up, where the checks should be the first to.
    """
    if "cupy" not in sys.modules:
        return False
    if isinstance(obj, types.FunctionType):
        owners: list[Any] = [obj]
    else:
        owners = list((obj if isinstance(obj, type) else type(obj)).__mro__)
    for owner in owners:
        module = sys.modules.get(getattr(owner, "__module__", None) or "")
        if module is None or module.__name__ in ("builtins", "abc"):
            continue
        if any(_of_cupy(value) for value in list(vars(module).values())):
            return True
    return False


def _of_cupy(value: Any) -> bool:
    """A CuPy module, or a function, class or object defined in one (`cp.float32`, `cp.asarray`)."""
    try:
        if isinstance(value, types.ModuleType):
            name = value.__name__
        else:
            name = getattr(value, "__module__", None) or type(value).__module__
    except Exception:  # noqa: BLE001 - an object of the user's whose attributes raise: not CuPy's
        return False
    return isinstance(name, str) and name.partition(".")[0] in ("cupy", "cupyx")


def _first_gpu_failure(session: Session) -> CallError | None:
    """The error of the first training-time step (predict or forward, then backward, at the
    first dtype) that raises on the GPU but runs on the CPU."""
    dtype = session.options.dtypes[0]
    evaluated = session._evaluated
    methods = [evaluated]
    if session.reference.has_forward and evaluated is not Call.FORWARD:
        methods.append(Call.FORWARD)
    if session.reference.has_backward:
        methods.append(Call.BACKWARD)
    for method in methods:
        on_gpu = _error_of(session, method, dtype, True)
        if on_gpu is not None and _error_of(session, method, dtype, False) is None:
            return on_gpu
    return None


def _error_of(session: Session, method: Call, dtype: Any, gpu: bool) -> CallError | None:
    """The error of a step, None when it ran (or when a step it needs failed: that step's
    error is the one to report, and it is asked first)."""
    try:
        return session.step(method, dtype, gpu).error
    except Incomplete:
        return None


def _complex_valued(layer: Adapter, parameters: dict[str, Any]) -> bool:
    """Whether the initialized layer holds a complex array: a learnable, a state, or a constant
    among its attributes (read from its instance dictionary, no code of its run)."""
    try:
        attributes = object.__getattribute__(layer.obj, "__dict__")
    except AttributeError:  # __slots__ alone
        attributes = {}
    values = [*parameters.values(), *(attributes.values() if type(attributes) is dict else ())]
    return any(arrays.is_array(v) and arrays.is_complex(v) for v in values)


def notes(session: Session) -> list[str]:
    """What the report should say beside the results: constructor arguments that set a
    contract attribute; complex learnables or outputs checked with real dtypes only (their
    complex arithmetic, conjugates included, was never exercised). Nothing of the layer's
    runs: what they say of it was read while it was set up, or while a check ran."""
    said = list(session.collisions)
    dtypes = session.options.dtypes
    if any(np.dtype(d).kind == "c" for d in dtypes):
        return said
    complex_parts = list(session.complex_parameters)
    if session.complex_outputs_ran():
        complex_parts.append("the outputs")
    if complex_parts:
        said.append(
            f"{' and '.join(complex_parts)} are complex, but only real dtypes were tested "
            f"({', '.join(dtypes)}): add --dtype complex128 to check the complex arithmetic"
        )
    return said


def _measure_precision(session: Session, dtype: Any) -> PrecisionFinding:
    """The precision the layer computes in at `dtype`, from its evaluated method on a fresh
    layer (the nominal one where that step failed, or the dtype is not float64)."""
    nominal = arrays.precision_of(dtype)
    finding = PrecisionFinding(nominal, 0.0, False)
    method = session._evaluated.value
    step = session.step(method, dtype)
    if not (step.ok and isinstance(step.value, Outputs) and nominal == np.dtype(np.float64)):
        return finding
    layer = session.layer(dtype)
    # The inputs and the learnables and state move together: a layer may round either to
    # float32 (float32 weights, a cast of its parameters).
    names = [n for n in layer.parameter_names if arrays.is_array(layer.get(n))]
    n_in = layer.num_inputs

    def evaluate(values: list[Any]) -> Any:
        for name, value in zip(names, values[n_in:]):
            layer.set(name, value)
        return getattr(layer, method)(list(values[:n_in])).all

    arguments = list(session.inputs(dtype)) + [layer.get(n).copy() for n in names]
    inputs = [not integer for integer in session.integer_inputs]
    domains = list(session.input_domains()) + [(None, None)] * len(names)
    # Inputs first, then the parameters, each group alone: moved together, their products (a
    # weight times an input) would look like curvature.
    groups = [inputs + [False] * len(names), [False] * n_in + [True] * len(names)]
    try:
        for movable, what in zip(groups if names else groups[:1], ("inputs", "learnables and state")):
            found = measure_precision(
                evaluate, arguments, movable, domains, step.value.all, nominal, session.rng("precision")
            )
            found = dataclasses.replace(found, moved=what)
            if found.lost or found.roundoff > finding.roundoff:
                finding = found
            if finding.lost:
                break
    except USER_ERRORS:
        pass  # the layer raised at a moved point: no finding, as for a layer that cannot be moved
    return finding


def _held_by(layer: Adapter) -> tuple[Any, ...]:
    """The learnables and state a layer holds now, in `parameter_names` order."""
    return tuple(layer.get(name) for name in layer.parameter_names)


def _copies(values: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(arrays.copy_tree(v) for v in values)


def _left(given: tuple[Any, ...], now: tuple[Any, ...], placed: tuple[Any, ...]) -> CallArguments:
    """A call's arguments as it was given them (`given`: the session's own arrays, which no
    layer holds) and as it left them (`now`): where it left one as it was, the very array of
    `given` (no copy), else a copy of what it left (a layer that writes into it). `placed`:
    the objects the call was given (the layer's own copies of `given` for its learnables and
    state), each replaced where `now` holds another."""
    after = tuple(g if _unchanged(g, x) else arrays.copy_tree(x) for g, x in zip(given, now))
    return CallArguments(given, after, tuple(x is not p for x, p in zip(now, placed)))


def _unchanged(given: Any, now: Any) -> bool:
    if given is now:
        return True
    if not (arrays.is_array(given) and arrays.is_array(now)) or type(given) is not type(now):
        return False
    if given.shape != now.shape or given.dtype != now.dtype:
        return False
    return bool(arrays.array_module(now).array_equal(given, now))
