"""The failures that are one problem with one value a method returned or was given, typed for
the reports: an updated state that does not keep its state's shape or dtype (`StateProblem`), a
value of another type than its inputs' (`TypeProblem`), outputs of other shapes from forward
than from predict (`SizesDiffer`), outputs that are not finite (`NonFinite`), an argument a call
modified (`Modification`), an output of another rank than its format (`FormatRank`) or of
another batch size than its inputs (`BatchSize`), a gradient backward returned against its
`compute_gradients` mask (`MaskProblem`), a value the GPU computed otherwise than the CPU
(`Parity`), a method of the user's that raised (`Raised`). The failure's message is rendered here from the problem wherever a
result is made (the check's, a worker's, the cache's, a report file's), as the gradient check's
is from its findings: never a sentence carried beside them.

Each problem is a frozen dataclass of strings, flags, whole numbers, indices, enums and
mismatches, written into the check's details field by field (an enum by its member's name in
lower case, a mismatch by `Mismatch.to_dict` and left out where there is none; a field under
the key `keys` gives it, else its own name) and read back strictly by the same fields: one
codec for every such family. A check's details may hold other keys beside them. A check may
fail with problems of several families (a batch size, or predict raising at it): each family of
a check has its own `marker`, the key that says its problem is held.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from enum import Enum
from typing import Any, ClassVar

import numpy as np

from layercheck.numerics import reading
from layercheck.numerics.arrays import machine_epsilon
from layercheck.numerics.compare import Mismatch
from layercheck.portability import IDIOM

__all__ = [
    "BatchSize",
    "Declared",
    "FormatRank",
    "LostPrecision",
    "MaskFault",
    "MaskProblem",
    "Modification",
    "NonFinite",
    "Parity",
    "Problem",
    "Raised",
    "RaisedWhen",
    "SizesDiffer",
    "StateFault",
    "StateProblem",
    "TypeFault",
    "TypeProblem",
    "describe_mask",
    "read",
]


class Problem:
    """The base of a family's problem: `checks` are the checks whose failure it is, `keys` the
    details' key of a field where it is not the field's name. A subclass is a frozen
    dataclass whose fields are `str`, `bool`, `int`, a tuple of one of those, an `Enum` or
    `Mismatch | None`, and says itself in `sentence`."""

    checks: ClassVar[tuple[str, ...]] = ()
    keys: ClassVar[Mapping[str, str]] = {}
    # The details' key that says they hold the problem: one a report of an earlier version,
    # which did not hold it whole, lacks.
    marker: ClassVar[str] = "fault"
    # A problem read is whole (a report of an earlier version holds none: `read` gives None).
    legacy: ClassVar[bool] = False
    # Fields at their default are left out, and read as their default where absent: for the
    # families whose fields are each needed by some of their problems only (a family written
    # whole before keeps every key: keys are only ever added).
    sparse: ClassVar[bool] = False
    # Fields added to a family written whole before: read as their default where a report of
    # an earlier version lacks them, and left out at their default (so that such a report and
    # a problem without them read the same).
    added: ClassVar[frozenset[str]] = frozenset()

    def sentence(self) -> str:
        raise NotImplementedError

    @property
    def headline(self) -> str:
        """The failure's message."""
        return self.sentence()

    def to_details(self) -> dict[str, Any]:
        """The check's details (the keys of the JSON schema), read back by `read`."""
        defaults = self._optional()
        return {
            self.keys.get(name, name): _encoded(value)
            for name in _fields(type(self))
            if (value := getattr(self, name)) is not None and not (name in defaults and value == defaults[name])
        }

    @classmethod
    def from_details(cls, details: Mapping[str, Any]) -> Problem:
        """The problem the details hold, strictly: every field's key, of its type.

        Raises:
            reading.MalformedFinding: one line that says what does not fit.
        """
        values = {}
        optional = cls._optional()
        for name, kind in _fields(cls).items():
            key = cls.keys.get(name, name)
            if key in details:
                values[name] = _decoded(kind, details[key], key)
            elif kind != _OPTIONAL_MISMATCH and name not in optional:
                raise reading.MalformedFinding(f"the details lack {key!r}")
        return cls(**values)

    @classmethod
    def _optional(cls) -> dict[str, Any]:
        """The fields that may be left out, with the default each is read as."""
        defaults = _defaults(cls)
        return defaults if cls.sparse else {name: defaults[name] for name in cls.added}


def _fields(cls: type[Problem]) -> dict[str, type]:
    """Each field of the problem's dataclass with its type (the annotations evaluated)."""
    hints = typing.get_type_hints(cls)
    return {field.name: hints[field.name] for field in dataclasses.fields(cls)}  # type: ignore[arg-type]


def _defaults(cls: type[Problem]) -> dict[str, Any]:
    """Each field of the problem's dataclass that has a default, with it."""
    return {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}  # type: ignore[arg-type]


_OPTIONAL_MISMATCH = Mismatch | None
_INDEX = tuple[int, ...]
_NAMES = tuple[str, ...]
_FLAGS = tuple[bool, ...]


def _encoded(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.name.lower()
    if isinstance(value, Mismatch):
        return value.to_dict()
    return list(value) if isinstance(value, tuple) else value


def _decoded(kind: Any, value: Any, key: str) -> Any:
    if kind is bool:
        return reading.flag(value, key)
    if kind is str:
        return reading.text(value, key)
    if kind is int:
        return reading.whole(value, key)
    if kind is float:
        return reading.real(value, key)
    if kind == _INDEX:
        return reading.indices(value, key)
    if kind == _NAMES:
        return tuple(reading.text(v, key) for v in reading.items(value, key))
    if kind == _FLAGS:
        return tuple(reading.flag(v, key) for v in reading.items(value, key))
    if kind == _OPTIONAL_MISMATCH:
        return Mismatch.from_dict(value)
    if not (isinstance(kind, type) and issubclass(kind, Enum)):  # a field the codec does not know: a defect
        raise TypeError(f"a problem's field {key!r} of type {kind!r}")
    return reading.named(kind, value, key)


def read(check: str, details: Mapping[str, Any]) -> Problem | None:
    """The typed problem of `check`'s failure, or None: another check's, a pass, or a failure
    of this check that is not one such problem (no `marker`: of another kind, or a report of
    an earlier version, whose message, made then from the same data, stays).

    Raises:
        reading.MalformedFinding: details that are not such a problem, in one line.
    """
    families = [f for f in _BY_CHECK.get(check, ()) if f.marker in details]
    if len(families) > 1:  # one failure is one problem: details holding two are forged
        raise reading.MalformedFinding(f"the details hold a {' and a '.join(f.__name__ for f in families)}")
    return families[0].from_details(details) if families else None


class StateFault(Enum):
    """What is wrong with an updated state: what it must keep of the state it updates."""

    NOT_ARRAY = "not an array"
    SHAPE = "another shape"
    DTYPE = "another dtype"
    MODULE = "another array module"


@dataclasses.dataclass(frozen=True)
class StateProblem(Problem):
    """An updated state `name` that `method` returned (as `arrays.describe` says it) at the
    tested `dtype`, and what it does not keep of the state it updates (`current`: that
    state's shape, dtype or description, as the fault needs)."""

    checks = ("predict_returns_valid_states", "forward_returns_valid_states")
    keys = {"name": "state"}

    name: str
    method: str
    dtype: str
    updated: str
    fault: StateFault
    current: str = ""

    def sentence(self) -> str:
        what = f"{self.method} returns updated {self.name} as {self.updated} with {self.dtype} inputs"
        if self.fault is StateFault.NOT_ARRAY:
            return what + "; it must be an array"
        if self.fault is StateFault.SHAPE:
            return f"{what}, but state {self.name} has shape {self.current}: an updated state keeps its shape"
        if self.fault is StateFault.DTYPE:
            return f"{what}, but state {self.name} is {self.current}: an updated state keeps its dtype"
        return f"{what}, but state {self.name} is a {self.current}"


class TypeFault(Enum):
    """What is wrong with the type of a value a method returned."""

    NOT_ARRAY = "not an array"
    OTHER_MODULE = "an array of another module than its inputs'"
    COMPLEX = "complex where its argument or the inputs are real"
    DTYPE = "another dtype than expected"
    ON_HOST = "a NumPy array from CuPy inputs"


@dataclasses.dataclass(frozen=True)
class TypeProblem(Problem):
    """A value whose type is wrong: `what` it is ("predict output Y", "gradient dLdX"), the
    tested `dtype`, the `fault`, the value as `arrays.describe` says it (its dtype for the
    dtype faults), what was `expected` (the inputs' module name, or a dtype), and whether it
    is a `gradient` (of a real argument, its real part is its gradient). For a gradient, the
    output whose dL/dY backward was given explains its dtype where one does (`given`, of the
    training pass `given_by`, of dtype `given_dtype`); `on_gpu` where CuPy inputs gave it."""

    checks = (
        "predict_is_consistent_in_type",
        "forward_is_consistent_in_type",
        "backward_is_consistent_in_type",
        "outputs_stay_on_device",
    )
    # `dtype` is what the inputs were, in words ("integer" where every input is integers): the
    # details' own `dtype` is the tested dtype.
    keys = {"what": "value", "found": "returned", "dtype": "inputs"}

    what: str
    dtype: str
    fault: TypeFault
    found: str
    expected: str = ""
    gradient: bool = False
    given: str = ""
    given_by: str = ""
    given_dtype: str = ""
    on_gpu: bool = False

    def sentence(self) -> str:
        return self._sentence() + self._given() + (" (on the GPU)" if self.on_gpu else "")

    def _sentence(self) -> str:
        what = f"{self.what} with {self.dtype} inputs"
        if self.fault is TypeFault.NOT_ARRAY:
            return f"{what} is {self.found}, not an array"
        if self.fault is TypeFault.OTHER_MODULE:
            return f"{what} is a {self.found} but the inputs were {self.expected} arrays"
        if self.fault is TypeFault.COMPLEX and self.gradient:
            return (
                f"{what} is complex ({self.found}) but its argument is real: the gradient of a real argument is "
                "real (its real part)"
            )
        if self.fault is TypeFault.COMPLEX:
            return f"{what} is complex ({self.found}) although the inputs and learnables are real"
        if self.fault is TypeFault.ON_HOST:
            return (
                f"{self.what} is a NumPy array from CuPy inputs ({self.dtype}): the layer moved it to the host "
                f"(cupy.asnumpy or .get()); {IDIOM}"
            )
        return f"{what} is {self.found}, expected {self.expected}"  # TypeFault.DTYPE

    def _given(self) -> str:
        if not self.given:
            return ""
        name, method = self.given, self.given_by
        return (
            f"; the dL/d{name} backward was given is {self.given_dtype}, as {method}'s output {name} is "
            f"(see {method}_is_consistent_in_type)"
        )


@dataclasses.dataclass(frozen=True)
class SizesDiffer(Problem):
    """An `output` of shape `forward_shape` from forward but `predict_shape` from predict."""

    checks = ("forward_predict_are_consistent_in_size",)
    marker = "forward_shape"

    output: str
    forward_shape: tuple[int, ...]
    predict_shape: tuple[int, ...]

    def sentence(self) -> str:
        return f"{self.output} has shape {self.forward_shape} from forward but {self.predict_shape} from predict"


@dataclasses.dataclass(frozen=True)
class NonFinite(Problem):
    """The output `output` of `method` with `dtype` inputs holds `nan` NaNs and `inf` infinite
    values of its `elements`, the first at `first_index`; `undeclared` where the layer declares
    no input domain (it may be defined on part of the real line only)."""

    checks = ("outputs_are_finite",)
    marker = "elements"

    method: str
    output: str
    dtype: str
    nan: int
    inf: int
    elements: int
    first_index: tuple[int, ...]
    undeclared: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.nan + self.inf <= self.elements:
            raise reading.MalformedFinding(f"{self.nan} NaN and {self.inf} infinite value(s) of {self.elements}")

    def sentence(self) -> str:
        said = (
            f"{self.method} output {self.output} has {self.nan} NaN and {self.inf} infinite value(s) of "
            f"{self.elements} with {self.dtype} inputs (first at index {self.first_index})"
        )
        if self.undeclared:
            said += "; if the layer is only defined on part of the real line, declare input_domain, e.g. (0, None)"
        return said


@dataclasses.dataclass(frozen=True)
class Modification(Problem):
    """An argument `name` that a call of `method` changed: replaced by another value (`was`
    and `became`, as `arrays.describe` says them), or by another array of its shape
    (`rebound`: a learnable or state the layer set anew), or modified in place (its `mismatch`
    with the original)."""

    checks = ("predict_does_not_modify_inputs", "forward_does_not_modify_inputs", "backward_does_not_modify_inputs")
    keys = {"name": "argument"}
    marker = "argument"

    method: str
    name: str
    mismatch: Mismatch | None = None
    was: str = ""
    became: str = ""
    rebound: bool = False

    def __post_init__(self) -> None:
        if (self.mismatch is None) == (self.was == ""):
            raise reading.MalformedFinding(f"{self.name!r} modified: a mismatch, or what it was and became")

    def sentence(self) -> str:
        lead = f"{self.method} modifies its arguments: "
        if self.mismatch is None:
            return f"{lead}{self.name} was replaced ({self.was} became {self.became})"
        if self.rebound:
            return f"{lead}{self.name} was set to another array on the layer: " + self.mismatch.detail()
        return f"{lead}{self.name} was modified in place: " + self.mismatch.detail()


class Declared(Enum):
    """Where an output's format comes from, in the words a failure says it."""

    INFERRED = "read from the pair's outputs: the first input's, with U for an axis more, batch first with fewer"
    DECLARED = "declared by output_format"
    FIRST_INPUT = "the first input's; a layer that changes layout declares output_format"


@dataclasses.dataclass(frozen=True)
class FormatRank(Problem):
    """predict's `output` of `shape`, of another number of axes than its `format` (from where
    `declared` says)."""

    checks = ("output_format_is_consistent",)
    marker = "declared"

    output: str
    shape: tuple[int, ...]
    format: str
    declared: Declared

    def __post_init__(self) -> None:
        if len(self.shape) == len(self.format):
            raise reading.MalformedFinding(f"shape {self.shape} has as many axes as format {self.format!r}")

    def sentence(self) -> str:
        return (
            f"predict output {self.output} has {len(self.shape)} dimension(s) (shape {self.shape}) but its format "
            f"{self.format!r} ({self.declared.value}) has {len(self.format)}"
        )


@dataclasses.dataclass(frozen=True)
class BatchSize(Problem):
    """predict's `output` of `shape`, for inputs of `observations`, without as many along its
    batch axis `batch_axis` (or without that axis)."""

    checks = ("output_batch_size_matches_input",)
    marker = "batch_axis"

    output: str
    observations: int
    shape: tuple[int, ...]
    batch_axis: int

    def __post_init__(self) -> None:
        if self.batch_axis < len(self.shape) and self.shape[self.batch_axis] == self.observations:
            raise reading.MalformedFinding(f"shape {self.shape} has {self.observations} along axis {self.batch_axis}")

    def sentence(self) -> str:
        axis = self.batch_axis
        got = self.shape[axis] if len(self.shape) > axis else "no"
        return (
            f"predict output {self.output} has batch size {got} (shape {self.shape}, B is axis {axis}) "
            f"for inputs with {self.observations} observations"
        )


class MaskFault(Enum):
    """What a call of backward with a `compute_gradients` mask got wrong for one input."""

    UNREQUESTED = "a gradient not requested"
    MISSING = "None for a gradient requested"
    MALFORMED = "not an array of the all-True call's gradient's shape"
    DIFFERS = "another gradient than the all-True call's"
    NONE_AT_ALL = "no gradient where every gradient is requested"


@dataclasses.dataclass(frozen=True)
class MaskProblem(Problem):
    """What backward, called with the `compute_gradients` `mask` over the operation's `inputs`,
    returned wrong for the input `name`: the `fault`, and for a malformed gradient what it
    returned and what the all-True call returns (as `arrays.describe` says them), for one that
    differs its `mismatch`."""

    checks = ("backward_respects_compute_gradients",)
    keys = {"name": "input", "full": "all_true"}
    added = frozenset({"missing"})

    inputs: tuple[str, ...]
    mask: tuple[bool, ...]
    name: str
    fault: MaskFault
    returned: str = ""
    full: str = ""
    mismatch: Mismatch | None = None
    # Every input backward returned no gradient for, where it was asked for all (`NONE_AT_ALL`).
    missing: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.mask) != len(self.inputs) or self.name not in self.inputs:
            raise reading.MalformedFinding(f"a mask {self.mask} of the inputs {self.inputs}, for {self.name!r}")
        if (self.fault is MaskFault.DIFFERS) != (self.mismatch is not None):
            raise reading.MalformedFinding("a mismatch goes with the fault 'differs', and only with it")
        if (self.fault is MaskFault.NONE_AT_ALL) != (self.name in self.missing):
            raise reading.MalformedFinding("the inputs missing go with the fault 'none_at_all', and only with it")

    def sentence(self) -> str:
        name = self.name
        if self.fault is MaskFault.NONE_AT_ALL:
            said = f"returned no gradient for {', '.join(self.missing)}"
        elif self.fault is MaskFault.UNREQUESTED:
            said = f"returned a gradient for {name}, which was not requested (it must return None there)"
        elif self.fault is MaskFault.MISSING:
            said = f"returned None for {name}, which was requested"
        elif self.mismatch is not None:  # MaskFault.DIFFERS
            said = (
                f"returned a gradient for {name} that differs from the one with every gradient requested: "
                + self.mismatch.detail()
            )
        else:
            said = f"returned {self.returned} for {name}; with every gradient requested it returns {self.full}"
        return f"with {describe_mask(self.mask, self.inputs)}, backward {said}"


@dataclasses.dataclass(frozen=True)
class Parity(Problem):
    """A value (`what`: "predict output Y", "gradient dLdX") the GPU computed at the tested
    `dtype` that differs from the CPU's: by `mismatch`, or, as another kind or shape of array,
    as `gpu` and `cpu` describe them."""

    checks = ("predict_is_consistent_on_gpu", "backward_is_consistent_on_gpu")
    keys = {"what": "value"}
    marker = "value"

    what: str
    dtype: str
    mismatch: Mismatch | None = None
    gpu: str = ""
    cpu: str = ""

    def __post_init__(self) -> None:
        if (self.mismatch is None) == (self.gpu == ""):
            raise reading.MalformedFinding(f"{self.what!r} on the GPU: a mismatch, or what each device returned")

    def sentence(self) -> str:
        if self.mismatch is None:
            return f"{self.what} is {self.gpu} on the GPU but {self.cpu} on the CPU"
        return f"{self.what} differs between GPU and CPU with {self.dtype} inputs: {self.mismatch.detail()}"


def describe_mask(mask: tuple[bool, ...], names: tuple[str, ...]) -> str:
    """`compute_gradients=(True, False) (only x requested)`."""
    requested = [name for name, wanted in zip(names, mask) if wanted]
    which = "every gradient" if all(mask) else "only " + ", ".join(requested)
    return f"compute_gradients={mask} ({which} requested)"


@dataclasses.dataclass(frozen=True)
class LostPrecision(Problem):
    """A `method` that computes in float32 (or lower) inside with `dtype` inputs: moving its
    `moved` ("inputs", "learnables and state") by a relative `step` gives outputs with a
    `roundoff` relative to their size that float64 never shows; `float32_values` where every
    output is a float32 value (a cast back at the end). Every comparison is then judged at
    float32's precision (`numerics.precision`)."""

    checks = ("predict_is_consistent_in_type", "forward_is_consistent_in_type")
    # Not `roundoff`: a report of an earlier version holds it beside its message, not the rest.
    marker = "moved"

    method: str
    dtype: str
    moved: str
    step: float
    roundoff: float
    float32_values: bool

    def sentence(self) -> str:
        eps64, eps32 = machine_epsilon(np.float64), machine_epsilon(np.float32)
        how = (
            "every output is a float32 value: it computes in float32 inside and casts back"
            if self.float32_values
            else "it rounds to float32 (or lower) inside, or cancels large terms"
        )
        return (
            f"{self.method} computes below float64 precision: moving its {self.moved} by a relative {self.step:g} "
            f"gives outputs with round-off of {self.roundoff:.1g} of their size (float64 rounds at {eps64:.2g}, "
            f"float32 at {eps32:.2g}); {how} ({self.dtype} inputs); every comparison is judged at float32 precision"
        )


class RaisedWhen(Enum):
    """When a method of the user's raised, as its failure says it."""

    DTYPE = "at a tested dtype"
    PLAIN = "when called"
    GPU = "on the GPU (the CPU ran the same step)"
    BATCH_SIZE = "at another batch size than the layouts'"
    MASK = "with a compute_gradients mask"
    SECOND_STEP = "at the second training step on the same layer"
    NEW_OBJECT = "on a new layer object, after the same step ran once"
    FORMAT = "in output_format"
    # The checks across observations: on one observation run alone, on the whole batch, on it
    # run again, and on it with the other observations' inputs replaced.
    ALONE = "on an observation run alone"
    BATCH = "on the batch"
    BATCH_AGAIN = "on the batch again"
    OTHER_OBSERVATIONS = "on the batch with other observations"


@dataclasses.dataclass(frozen=True)
class Raised(Problem):
    """A method of the user's (`call`) that raised: its `exception` as
    `userframes.exception_summary` says it (the user's words, its place in their code, and
    what to write instead of a non-portable idiom), or the contract it broke (`contract`), and
    `when`: at the tested `dtype`, on the GPU, with `observations` where the layouts have
    `layout_observations`, with the `mask` over the operation's `inputs`, at a second training
    step, on `observation` run alone. `hint`: what the error shows of the layer's code (a
    gradient never assigned)."""

    checks = (
        "predict_does_not_error",
        "forward_does_not_error",
        "backward_does_not_error",
        "initialize_does_not_error",
        "reset_state_does_not_error",
        "output_format_is_consistent",
        "output_batch_size_matches_input",
        "backward_respects_compute_gradients",
        "backward_is_repeatable",
        "predict_is_consistent_on_gpu",
        "backward_is_consistent_on_gpu",
        "outputs_stay_on_device",
        "predict_is_consistent_across_observations",
        "forward_is_consistent_across_observations",
        "backward_is_consistent_across_observations",
    )
    keys = {"exception": "raised", "when": "raised_when"}
    marker = "raised"
    sparse = True

    call: str
    exception: str
    when: RaisedWhen
    contract: bool = False
    dtype: str = ""
    hint: str = ""
    observations: int = 0
    layout_observations: int = 0
    inputs: tuple[str, ...] = ()
    mask: tuple[bool, ...] = ()
    observation: int = 0

    def __post_init__(self) -> None:
        if self.when is RaisedWhen.DTYPE and not self.dtype:
            raise reading.MalformedFinding(f"{self.call} raised at a dtype, without one")
        if self.when is RaisedWhen.BATCH_SIZE and not 0 < self.observations != self.layout_observations:
            raise reading.MalformedFinding(
                f"{self.call} raised with {self.observations} observations, where the layouts have "
                f"{self.layout_observations}"
            )
        if self.when is RaisedWhen.MASK and not 0 < len(self.mask) == len(self.inputs):
            raise reading.MalformedFinding(f"a mask {self.mask} of the inputs {self.inputs}")

    def sentence(self) -> str:
        # A broken contract is said in its own words; a raise, as the method that raised.
        lead = self.exception if self.contract else f"{self.call} raised {self.exception}"
        when = self.when
        if when is RaisedWhen.DTYPE:
            return f"{lead} with {self.dtype} inputs" + (f": {self.hint}" if self.hint else "")
        if when is RaisedWhen.GPU:
            return f"{lead} on the GPU"
        if when is RaisedWhen.BATCH_SIZE:
            return f"{lead} with {self.observations} observations (the layouts have {self.layout_observations})"
        if when is RaisedWhen.MASK:
            return f"with {describe_mask(self.mask, self.inputs)}, {lead}"
        if when is RaisedWhen.SECOND_STEP:
            return f"the second training step on the same layer raised {self.exception}"
        if when is RaisedWhen.NEW_OBJECT:
            return (
                f"forward and backward ran once, and now raise {self.exception} on a new layer object with the same "
                "inputs: calls after the first fail, even on new layer objects"
            )
        if when is RaisedWhen.FORMAT:
            return f"output_format is invalid ({lead})"
        if when is RaisedWhen.ALONE:
            return f"{lead} on observation {self.observation} alone"
        if when is RaisedWhen.BATCH:
            return f"{lead} on the batch"
        if when is RaisedWhen.BATCH_AGAIN:
            return f"{lead} on the batch again"
        if when is RaisedWhen.OTHER_OBSERVATIONS:
            return f"{lead} on the batch with other observations"
        return lead


_FAMILIES: tuple[type[Problem], ...] = (
    StateProblem,
    TypeProblem,
    SizesDiffer,
    NonFinite,
    Modification,
    FormatRank,
    BatchSize,
    MaskProblem,
    Parity,
    LostPrecision,
    Raised,
)
# Each check's families, each with its own marker.
_BY_CHECK: dict[str, tuple[type[Problem], ...]] = {
    check: tuple(family for family in _FAMILIES if check in family.checks)
    for check in {check for family in _FAMILIES for check in family.checks}
}
