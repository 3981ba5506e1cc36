"""The typed view a check has of the target under test, and the records of the steps it reads.

`running.session.Session` implements `CheckContext`; checks see only this Protocol, so that they
depend on what they read and never on how a run is organised (checks never import `running`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from traceback import FrameSummary
from typing import Any, Protocol

import numpy as np

from layercheck.checks.stops import Incomplete
from layercheck.contract.adapter import Adapter, Gradients, Outputs
from layercheck.contract.conventions import ConventionError
from layercheck.contract.layout import Layout
from layercheck.devices import GpuStatus
from layercheck.errors import ContractError
from layercheck.findings.problems import Raised, RaisedWhen
from layercheck.interrupts import reraise_if_interrupt
from layercheck.numerics.precision import PrecisionFinding
from layercheck.results import Blocked, Call, Cause, cause_of
from layercheck.userframes import being_handled, detached, exception_summary, last_user_frame, user_traceback

__all__ = ["BackwardResult", "CallArguments", "CallError", "CheckContext", "CheckOptions", "Step", "StepFailed", "call"]


@dataclass(frozen=True)
class CallError:
    """A user method that raised, or broke the contract, during a step.

    The exception is kept without its traceback (`call` reads what the reports say of its
    frames first): each frame leads, through its callers, back to the frames of the step that
    keeps this error, and to the session among their locals. That cycle would hold every array
    of the run until the cyclic collector next ran, which counts objects, not bytes."""

    method: Call
    exception: BaseException
    traceback: str
    where: FrameSummary | None = None  # the innermost frame of the user's code it was raised in

    @property
    def is_contract(self) -> bool:
        # A layer of another convention that breaks it (a gradient its backward did not
        # store) breaks the contract as a layer does: said as it is, not as a raise.
        return isinstance(self.exception, (ContractError, ConventionError))

    @property
    def cause(self) -> Cause | None:
        """MEMORY or EXIT when the user's method ran out of memory or called sys.exit."""
        return cause_of(self.exception)

    def summary(self, *, hint: bool = True) -> str:
        if self.is_contract:
            return str(self.exception)
        return f"{self.method} raised {exception_summary(self.exception, hint=hint, at=self.where)}"

    def raised(self, when: RaisedWhen, **context: Any) -> Raised:
        """The failure this error is, typed: `when` it was raised, with what that needs
        (`Raised`'s fields: the dtype, the mask...)."""
        said = str(self.exception) if self.is_contract else exception_summary(self.exception, at=self.where)
        return Raised(self.method.value, said, when, contract=self.is_contract, **context)


@dataclass(frozen=True)
class Step:
    """The result of one call of a user method, or the error it raised."""

    what: str
    value: Any = None
    error: CallError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def require(self) -> Any:
        """The value, or `Incomplete` naming the step that failed (and, in its details, the
        method that raised under `blocked_by`, with `broke_contract` where it broke the
        contract rather than raised: the reports give each such cause once)."""
        if self.error is not None:
            raise StepFailed(self.what, self.error)
        return self.value


class StepFailed(Incomplete):
    """A step a check depends on failed: `what` the step is ("output_format"), and its
    `error`, typed, for a check whose own failure that is."""

    def __init__(self, what: str, error: CallError):
        super().__init__(
            f"not checked: {what} failed ({error.summary()})",
            blocked=Blocked(error.method, error.is_contract),
            cause=error.cause,
        )
        self.what, self.error = what, error


def call(what: str, method: Call, fn: Callable[[], Any]) -> Step:
    outside = being_handled()  # a caller's exception, which the layer's chains as its context
    try:
        return Step(what, fn())
    except (ContractError, ConventionError) as exc:
        return Step(what, error=CallError(method, detached(exc, outside), ""))
    except BaseException as exc:  # the user's code: a KeyboardInterrupt it raises is its own
        reraise_if_interrupt(exc)
        text, where = user_traceback(exc), last_user_frame(exc)
        return Step(what, error=CallError(method, detached(exc, outside), text, where))


@dataclass(frozen=True)
class BackwardResult:
    """forward then backward at one dtype: the gradients, and everything they were computed from."""

    gradients: Gradients
    inputs: tuple[Any, ...]
    outputs: Outputs
    dLdY: tuple[Any, ...]
    dLdS: tuple[Any, ...]
    layer: Adapter


@dataclass(frozen=True)
class CallArguments:
    """The arguments of one step's call, as it was given them and as it left them: the inputs,
    learnables and state, then for backward the outputs Y, dL/dY and dL/dS_out. An argument
    the call left as it was is the same object in both (no copy was made). `replaced`: for
    each, whether the call left another object in its place (a learnable or state the layer
    set to a new array, where one written into is the same object)."""

    before: tuple[Any, ...]
    after: tuple[Any, ...]
    replaced: tuple[bool, ...] = ()


class CheckOptions(Protocol):
    """The settings a check reads."""

    @property
    def dtypes(self) -> tuple[str, ...]: ...

    @property
    def device(self) -> str: ...

    @property
    def timeout(self) -> float | None: ...

    @property
    def seed(self) -> int: ...  # of every random draw, the layer's initialization included

    def tolerance(self, dtype: Any) -> tuple[float, float]: ...


class CheckContext(Protocol):
    """What a check reads of the target under test: fresh layers, inputs, and cached steps."""

    @property
    def options(self) -> CheckOptions: ...

    @property
    def layouts(self) -> tuple[Layout, ...]: ...

    @property
    def started(self) -> float: ...  # time.monotonic() when the target's checks began

    @property
    def reference(self) -> Adapter: ...

    @property
    def reference_parameters(self) -> dict[str, Any]: ...

    @property
    def initialize_step(self) -> Step: ...

    @property
    def integer_inputs(self) -> tuple[bool, ...]: ...

    @property
    def integer_arguments(self) -> tuple[bool, ...]: ...

    def rng(self, purpose: str) -> np.random.Generator: ...

    def new_layer(self, initialize: bool = True, layouts: Sequence[Layout] | None = None) -> Adapter: ...

    def layer(self, dtype: Any, layouts: Sequence[Layout] | None = None, gpu: bool | None = None) -> Adapter: ...

    def parameters(self, dtype: Any, gpu: bool | None = None) -> dict[str, Any]: ...

    def inputs(self, dtype: Any, gpu: bool | None = None, shared: bool = False) -> tuple[Any, ...]: ...

    def random_inputs(self, layouts: Sequence[Layout], dtype: Any, purpose: str) -> tuple[Any, ...]: ...

    def input_domains(self) -> tuple[tuple[float | None, float | None], ...]: ...

    def output_gradients(self, outputs: Outputs, purpose: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]: ...

    def training_output_gradients(self, outputs: Outputs, dtype: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]: ...

    def output_formats(self) -> tuple[str, ...]: ...

    def predict(self, dtype: Any, gpu: bool | None = None) -> Step: ...

    def forward(self, dtype: Any, gpu: bool | None = None) -> Step: ...

    def step(self, method: str, dtype: Any, gpu: bool | None = None) -> Step: ...

    def backward(self, dtype: Any, gpu: bool | None = None) -> Step: ...

    def call_arguments(self, method: str, dtype: Any) -> CallArguments: ...

    def precision(self, dtype: Any) -> PrecisionFinding: ...

    def measured_precision(self, dtype: Any) -> PrecisionFinding | None: ...

    def tolerance(self, dtype: Any) -> tuple[float, float]: ...

    def gpu(self) -> GpuStatus: ...

    def gpu_binding(self) -> str | None: ...

    def gpu_failure(self) -> CallError | None: ...

    def home_module(self) -> Any: ...
