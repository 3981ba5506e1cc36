"""function_syntaxes_are_correct's failure, typed for the reports: every problem with how the
layer's methods are called and what they return, in the order found (`SyntaxProblem`). The
failure's message (the first problem, and how many more) and its list of problems are rendered
here wherever a result is made (the check's, a worker's, the cache's, a report file's), as the
other families' are (`findings.problems`): never sentences carried beside the data.

The details' key is `syntax_problems`, each problem written by the codec of
`findings.problems` (its fields by name, the fault's name in lower case, those at their default
left out); `problems`, the sentences, stays beside it for readers of earlier reports.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from enum import Enum
from typing import Any

from layercheck.findings.problems import Problem
from layercheck.numerics import reading

__all__ = ["SyntaxFault", "SyntaxProblem", "SyntaxReport"]

CHECK = "function_syntaxes_are_correct"


class SyntaxFault(Enum):
    """What is wrong with how a method is called or what the layer holds."""

    CALL = "a method that cannot be called with the arguments the contract gives it"
    NUM_INPUTS = "num_inputs that the input method's signature does not require"
    NO_ATTRIBUTE = "a learnable or state listed that the layer does not hold"
    NOT_ARRAY = "a learnable or state that is not an array"
    NOT_FLOATING = "a learnable or state that is not a floating or complex array"
    UNCHECKED = "learnables and state not checked: initialize failed"
    CONTRACT = "a call that broke the contract (returned too many or too few values)"


@dataclasses.dataclass(frozen=True)
class SyntaxProblem(Problem):
    """One problem: the `fault`, and what it needs. A `method` with its `signature` (as
    `Signature.describe` writes it) given `count` arguments (`arguments`: what they are), or
    requiring `required` inputs where num_inputs is `count`; a learnable or state (`group`)
    `name`, its `value` (described, or its dtype) after initialize (`initialized`) or
    construction; or the `text` of an error (initialize's, as `CallError.summary` says it, or a
    broken contract's own words)."""

    sparse = True

    fault: SyntaxFault
    method: str = ""
    signature: str = ""
    count: int = 0
    arguments: str = ""
    required: int = 0
    group: str = ""
    name: str = ""
    value: str = ""
    initialized: bool = False
    text: str = ""

    def __post_init__(self) -> None:
        fault = self.fault
        needs = {
            SyntaxFault.CALL: self.method,
            SyntaxFault.NUM_INPUTS: self.method,
            SyntaxFault.NO_ATTRIBUTE: self.name,
            SyntaxFault.NOT_ARRAY: self.name and self.value,
            SyntaxFault.NOT_FLOATING: self.name and self.value,
            SyntaxFault.UNCHECKED: self.text,
            SyntaxFault.CONTRACT: self.text,
        }[fault]
        if not needs:
            raise reading.MalformedFinding(f"a syntax problem {fault.name.lower()} without what it needs")

    def sentence(self) -> str:
        fault, name = self.fault, repr(self.name)
        if fault is SyntaxFault.CALL:
            return f"{self.method}{self.signature} cannot be called with {self.count} argument(s) ({self.arguments})"
        if fault is SyntaxFault.NUM_INPUTS:
            return f"num_inputs is {self.count} but {self.method}{self.signature} requires {self.required} input(s)"
        if fault is SyntaxFault.NO_ATTRIBUTE:
            return f"{self.group} {name} is listed but the layer has no attribute {name}"
        if fault is SyntaxFault.NOT_ARRAY:
            when = "after initialize" if self.initialized else "after construction (and there is no initialize)"
            return f"{self.group} {name} is {self.value} {when}; it must be an array"
        if fault is SyntaxFault.NOT_FLOATING:
            return f"{self.group} {name} has dtype {self.value}; it must be a floating or complex array"
        if fault is SyntaxFault.UNCHECKED:
            return f"learnables and state not checked: {self.text}"
        return self.text


@dataclasses.dataclass(frozen=True)
class SyntaxReport:
    """Every problem function_syntaxes_are_correct found, in the order found."""

    problems: tuple[SyntaxProblem, ...]
    legacy = False  # every report that holds them holds all the sentences need

    def __post_init__(self) -> None:
        if not self.problems:
            raise reading.MalformedFinding("a syntax failure without a problem")

    @classmethod
    def of(cls, check: str, details: Mapping[str, Any]) -> SyntaxReport | None:
        """The typed problems of the check's failure, None for another check, a pass, or a
        report of an earlier version (which held the sentences alone).

        Raises:
            reading.MalformedFinding: details that are not such problems, in one line.
        """
        if check != CHECK or "syntax_problems" not in details:
            return None
        items = reading.items(details["syntax_problems"], "the syntax problems")
        found = []
        for item in items:
            problem = SyntaxProblem.from_details(reading.mapping(item, "a syntax problem"))
            assert isinstance(problem, SyntaxProblem)  # from_details makes its own class
            found.append(problem)
        return cls(tuple(found))

    def to_details(self) -> dict[str, Any]:
        return {"syntax_problems": [p.to_details() for p in self.problems]}

    @property
    def sentences(self) -> list[str]:
        return [p.sentence() for p in self.problems]

    @property
    def headline(self) -> str:
        """The failure's message: the first problem, and how many more."""
        more = f" (and {len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
        return self.problems[0].sentence() + more
