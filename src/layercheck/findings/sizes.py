"""backward_is_consistent_in_size, typed for the reports: each gradient backward returned
wrong before its values could be compared (None, not an array, no numbers, or of another
shape than its argument, and how: `Reduction`). The failure's message is rendered here from
those problems wherever a result is made (the check's, a worker's, the cache's, a report
file's), as the gradient check's is from its findings: never a sentence carried beside them.

The details' keys are the JSON schema's: `size_problems`, every problem in the arguments'
order (`SizeProblem.to_dict`); beside it, for the reports of earlier versions' readers, the
first problem's `argument` (and for a wrong shape its `gradient_shape`, `argument_shape` and
`diagnosis`, the reduction in words) and, where there are several, `problem_arguments`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from layercheck.numerics import reading

__all__ = ["CHECK", "Axis", "Fault", "Misshape", "Reduction", "SizeProblem", "SizeReport"]

CHECK = "backward_is_consistent_in_size"


class Misshape(Enum):
    """How a gradient's shape differs from its argument's."""

    KEEPDIMS = "right elements, wrong number of axes"
    AXES = "wrong number of axes"
    TRANSPOSED = "transposed"
    SUMMED = "summed over the wrong axes"
    SIZES = "axis sizes differ"


@dataclass(frozen=True)
class Axis:
    """An axis of an argument, by index, with its letter in the argument's format if known."""

    index: int
    label: str | None = None

    def __str__(self) -> str:
        return f"axis {self.index}" if self.label is None else f"axis {self.index} ({self.label})"

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "label": self.label}

    @classmethod
    def from_dict(cls, data: Any) -> Axis:
        fields = reading.exactly(data, "an axis", {"index", "label"})
        label = fields["label"]
        return cls(
            reading.whole(fields["index"], "an axis's index"),
            None if label is None else reading.text(label, "an axis's label"),
        )


@dataclass(frozen=True)
class Reduction:
    """How a gradient of shape `gradient` differs from its argument of shape `argument`: the
    axes it was not summed over (it keeps an axis the argument has at size 1), the axes it has at
    size 1 where the argument does not, or what else."""

    kind: Misshape
    gradient: tuple[int, ...]
    argument: tuple[int, ...]
    not_summed: tuple[Axis, ...] = ()
    summed: tuple[Axis, ...] = ()

    @classmethod
    def of(cls, gradient: tuple[int, ...], argument: tuple[int, ...], labels: str | None) -> Reduction:
        """`labels`: the argument's format (a letter per axis), or None."""
        if len(gradient) != len(argument):
            same = sorted(d for d in gradient if d != 1) == sorted(d for d in argument if d != 1)
            return cls(Misshape.KEEPDIMS if same else Misshape.AXES, gradient, argument)
        if tuple(reversed(gradient)) == argument and len(argument) == 2:
            return cls(Misshape.TRANSPOSED, gradient, argument)

        def axis(i: int) -> Axis:
            return Axis(i, labels[i] if labels and i < len(labels) else None)

        pairs = list(enumerate(zip(gradient, argument)))
        not_summed = tuple(axis(i) for i, (g, a) in pairs if a == 1 and g != 1)
        summed = tuple(axis(i) for i, (g, a) in pairs if a != 1 and g == 1)
        kind = Misshape.SUMMED if not_summed or summed else Misshape.SIZES
        return cls(kind, gradient, argument, not_summed, summed)

    def says(self, subject: str = "it") -> str:
        """The reduction in words, of `subject` ("it", or "each" for several gradients)."""
        if self.kind is Misshape.KEEPDIMS:
            return f"{subject} has the right elements but the wrong number of axes (reshape or keepdims=True)"
        if self.kind is Misshape.AXES:
            return f"{subject} has {len(self.gradient)} axes instead of {len(self.argument)}"
        if self.kind is Misshape.TRANSPOSED:
            return f"{subject} is transposed"
        if self.kind is Misshape.SIZES:
            return "the axis sizes differ"
        parts = []
        if self.not_summed:
            parts.append("was not summed over " + ", ".join(map(str, self.not_summed)))
        if self.summed:
            # The shape shows that the axis is gone, not how: a sum, a mean, or one slice of it
            # (numpy-ml's LSTM unpacks a cell's single gradient into its first observation).
            one = len(self.summed) == 1
            sizes = ", ".join(str(self.argument[axis.index]) for axis in self.summed)
            parts.append(
                f"has size 1 along {', '.join(map(str, self.summed))}, where the argument has {sizes} "
                f"(summed, averaged or sliced over {'it' if one else 'them'}?)"
            )
        return "; ".join(f"{subject if k == 0 else 'it'} {part}" for k, part in enumerate(parts))

    def to_dict(self) -> dict[str, Any]:
        return {
            "misshape": self.kind.name.lower(),
            "gradient_shape": list(self.gradient),
            "argument_shape": list(self.argument),
            "not_summed": [axis.to_dict() for axis in self.not_summed],
            "summed": [axis.to_dict() for axis in self.summed],
        }

    @classmethod
    def from_dict(cls, fields: Mapping[str, Any]) -> Reduction:
        reduction = cls(
            reading.named(Misshape, fields["misshape"], "a misshape"),
            reading.indices(fields["gradient_shape"], "a gradient's shape"),
            reading.indices(fields["argument_shape"], "an argument's shape"),
            tuple(Axis.from_dict(a) for a in reading.items(fields["not_summed"], "the axes not summed")),
            tuple(Axis.from_dict(a) for a in reading.items(fields["summed"], "the axes summed")),
        )
        # What `of` makes of the shapes and no other: an axis said summed is one the shapes
        # show gone (a reduction of other words would be a forged sentence).
        if reduction.gradient == reduction.argument or not _consistent(reduction):
            raise reading.MalformedFinding(
                f"a reduction of {reduction.gradient} from {reduction.argument} is not what the shapes show"
            )
        return reduction


def _consistent(reduction: Reduction) -> bool:
    """Whether `Reduction.of` makes this reduction's kind and axes of its shapes (the axes'
    letters are the argument's format's, which the shapes do not show)."""
    again = Reduction.of(reduction.gradient, reduction.argument, None)
    strip = tuple(Axis(a.index) for a in reduction.not_summed), tuple(Axis(a.index) for a in reduction.summed)
    return (again.kind, again.not_summed, again.summed) == (reduction.kind, *strip)


class Fault(Enum):
    """What is wrong with a gradient backward returned, before its values are compared."""

    FOR_INTEGER_INPUT = "returned for an integer input"
    NONE = "None"
    NOT_AN_ARRAY = "not an array"
    NOT_NUMBERS = "holds no numbers"
    SHAPE = "wrong shape"


@dataclass(frozen=True)
class SizeProblem:
    """One gradient's problem: the `argument`'s name, what is wrong, what was returned in its
    place (`returned`: described, or its dtype where it holds no numbers, and what that
    dtype holds), and for a wrong shape how it differs (`reduction`)."""

    argument: str
    fault: Fault
    returned: str = ""
    holds: str = ""
    reduction: Reduction | None = None

    def __post_init__(self) -> None:
        if (self.fault is Fault.SHAPE) != (self.reduction is not None):
            raise reading.MalformedFinding(f"the gradient of {self.argument!r}: a reduction goes with a wrong shape")

    def sentence(self) -> str:
        name = self.argument
        if self.fault is Fault.FOR_INTEGER_INPUT:
            return f"backward returned {self.returned} as the gradient of {name}, an integer input: it must return None for it"
        if self.fault is Fault.NONE:
            return f"backward returned None as the gradient of {name}"
        if self.fault is Fault.NOT_AN_ARRAY:
            return f"the gradient of {name} is {self.returned}, not an array"
        if self.fault is Fault.NOT_NUMBERS:
            return (
                f"the gradient of {name} is an array of dtype {self.returned}, which holds {self.holds}; "
                "gradients must hold numbers"
            )
        assert self.reduction is not None
        return _shape_sentence([name], self.reduction)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"argument": self.argument, "fault": self.fault.name.lower()}
        if self.returned:
            data["returned"] = self.returned
        if self.holds:
            data["holds"] = self.holds
        if self.reduction is not None:
            data.update(self.reduction.to_dict())
        return data

    @classmethod
    def from_dict(cls, data: Any) -> SizeProblem:
        fields = reading.mapping(data, "a size problem")
        unknown = sorted(set(map(str, fields)) - _PROBLEM_KEYS)
        if unknown or not {"argument", "fault"} <= set(fields):
            raise reading.MalformedFinding(f"a size problem has the keys {', '.join(sorted(map(str, fields)))}")
        fault = reading.named(Fault, fields["fault"], "a size problem's fault")
        shaped = fault is Fault.SHAPE
        present = _REDUCTION_KEYS & set(fields)
        if present != (_REDUCTION_KEYS if shaped else set()):
            raise reading.MalformedFinding("a size problem's shapes go with the fault 'shape', and only with it")
        return cls(
            reading.text(fields["argument"], "a size problem's argument"),
            fault,
            reading.text(fields.get("returned", ""), "what backward returned"),
            reading.text(fields.get("holds", ""), "what its dtype holds"),
            Reduction.from_dict(fields) if shaped else None,
        )


_REDUCTION_KEYS = {"misshape", "gradient_shape", "argument_shape", "not_summed", "summed"}
_PROBLEM_KEYS = {"argument", "fault", "returned", "holds"} | _REDUCTION_KEYS


def _shape_sentence(names: list[str], reduction: Reduction) -> str:
    gradient, argument = reduction.gradient, reduction.argument
    if len(names) == 1:
        name = names[0]
        return f"the gradient of {name} has shape {gradient} but {name} has shape {argument}: {reduction.says()}"
    joined = ", ".join(names[:-1]) + " and " + names[-1]
    return (
        f"the gradients of {joined} have shape {gradient} but {joined} have shape {argument}: {reduction.says('each')}"
    )


@dataclass(frozen=True)
class SizeReport:
    """What backward_is_consistent_in_size found: every gradient with a problem, in the
    arguments' order. Set by the check (`legacy` False) or read from a report's details."""

    problems: tuple[SizeProblem, ...]
    # Read from a report of an earlier version, which names the first problem only: the
    # message it carries, made then from the same problems, stays.
    legacy: bool = False

    def __post_init__(self) -> None:
        if not self.problems and not self.legacy:
            raise reading.MalformedFinding("a size failure with no problem")

    @classmethod
    def of(cls, check: str, details: Mapping[str, Any]) -> SizeReport | None:
        """The typed details of a size failure, None for another check or a pass.

        Raises:
            reading.MalformedFinding: details that are not such a check's, in one line.
        """
        if check != CHECK or not {"size_problems", "argument"} & set(details):
            return None
        if "size_problems" not in details:
            return cls((), legacy=True)
        written = reading.items(details["size_problems"], "the size problems")
        return cls(tuple(SizeProblem.from_dict(p) for p in written))

    def to_details(self) -> dict[str, Any]:
        """The check's details (the keys of the JSON schema), read back by `of`."""
        first = self.problems[0]
        details: dict[str, Any] = {"argument": first.argument}
        if first.reduction is not None:
            details["gradient_shape"] = list(first.reduction.gradient)
            details["argument_shape"] = list(first.reduction.argument)
            details["diagnosis"] = first.reduction.says()
        if len(self.problems) > 1:
            details["problem_arguments"] = [problem.argument for problem in self.problems]
        details["size_problems"] = [problem.to_dict() for problem in self.problems]
        return details

    @property
    def headline(self) -> str:
        """Every problem in order; the gradients of one wrong shape for one reason in one
        sentence, at the first one's place (a batch normalization's dgamma and dbeta both (1, D))."""
        shapes: dict[Reduction, list[str]] = {}
        places: list[SizeProblem | Reduction] = []
        for problem in self.problems:
            if problem.reduction is None:
                places.append(problem)
            elif problem.reduction not in shapes:
                shapes[problem.reduction] = [problem.argument]
                places.append(problem.reduction)
            else:
                shapes[problem.reduction].append(problem.argument)
        return "; ".join(
            place.sentence() if isinstance(place, SizeProblem) else _shape_sentence(shapes[place], place)
            for place in places
        )
