"""The checks that compare a result with what it should have stayed (a second call's, an
initial value), typed for the reports: which check, the array it names, and the `Mismatch`
between the two. Their failure's message is rendered here from those details, wherever a
result is made (the check's, a worker's, the cache's, a report file's), as the gradient
check's is from its findings (`findings.gradient`): never a sentence carried beside them.

The details' keys are the JSON schema's: the array's name under the check's own key (`output`,
`argument`, `parameter`, `state`), `mismatch` (`Mismatch.to_dict`), or, where the two are not
arrays of one shape to compare, `was` and `became` (each as `arrays.describe` says it), and for
a state reset at another dtype than the first tested, `dtype`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from layercheck.numerics import reading
from layercheck.numerics.compare import Mismatch

__all__ = ["ComparisonReport", "Compared"]


class Compared(Enum):
    """A check that compares an array with what it should have stayed: its name, the key of
    the array's name in its details, its sentence's lead-in (`{name}`: the array's), and its
    sentence where what it became is no array of the shape it was (`{was}`, `{became}`)."""

    DETERMINISTIC = (
        "predict_is_deterministic",
        "output",
        "predict is not deterministic: {name} of the second call: ",
        "two calls of predict return {name} as {was} and {became}",
    )
    REPEATABLE = (
        "backward_is_repeatable",
        "argument",
        "the second forward+backward on the same layer gives another gradient of {name} "
        "(a value cached or accumulated between calls?): ",
        "the gradient of {name} is {was} at the first step and {became} at the second",
    )
    LEARNABLES_KEPT = (
        "initialize_does_not_change_nonempty_learnables",
        "parameter",
        "initialize changed {name!r}, which was already set: ",
        "initialize replaced {name!r}, which was already set ({was} became {became})",
    )
    STATES_KEPT = (
        "initialize_does_not_change_nonempty_states",
        "parameter",
        "initialize changed {name!r}, which was already set: ",
        "initialize replaced {name!r}, which was already set ({was} became {became})",
    )
    RESTORED = (
        "reset_state_does_not_error",
        "state",
        "reset_state does not restore state {name} to its initial value{at}: ",
        "after reset_state{at}, state {name} is {became}; initially it was {was}",
    )

    def __init__(self, check: str, key: str, lead: str, replaced: str) -> None:
        self.check, self.key, self.lead, self.replaced = check, key, lead, replaced

    @classmethod
    def of(cls, check: str) -> Compared | None:
        return _BY_CHECK.get(check)


_BY_CHECK = {member.check: member for member in Compared}


@dataclass(frozen=True)
class ComparisonReport:
    """What a comparing check found: the array `name` differs from what it should have stayed
    by `mismatch`, or it `was` one value and `became` another that cannot be compared with it
    (another kind, another shape: as `arrays.describe` says them); `dtype`, for a state reset
    at another dtype than the first tested."""

    compared: Compared
    name: str
    mismatch: Mismatch | None
    dtype: str | None = None
    # Read from a report of an earlier version, which lacks what the sentence needs (the
    # greatest relative difference): the message it carries, made then from the same data, stays.
    legacy: bool = False
    was: str = ""
    became: str = ""

    def __post_init__(self) -> None:
        if (self.mismatch is None) == (self.became == ""):
            raise reading.MalformedFinding(f"{self.name!r} compared: a mismatch, or what it was and became")

    @classmethod
    def of(cls, check: str, details: Mapping[str, Any]) -> ComparisonReport | None:
        """The typed details of a comparing check's failure, None for another check or a pass.

        Raises:
            reading.MalformedFinding: details that are not such a check's, in one line.
        """
        compared = Compared.of(check)
        if compared is None or ("mismatch" not in details and "became" not in details):
            return None
        dtype = details.get("dtype")
        name = reading.text(details.get(compared.key), f"the {compared.key} compared")
        at = None if dtype is None else reading.text(dtype, "the dtype")
        if "mismatch" in details and "became" in details:
            raise reading.MalformedFinding(f"{name!r} compared: a mismatch and what it became, both")
        if "mismatch" not in details:
            was, became = (reading.text(details.get(key), f"what {name!r} {key}") for key in ("was", "became"))
            return cls(compared, name, None, at, was=was, became=became)
        written = reading.mapping(details["mismatch"], "the mismatch")
        return cls(compared, name, Mismatch.from_dict(written), at, legacy="max_rel_diff" not in written)

    def to_details(self) -> dict[str, Any]:
        """The check's details (the keys of the JSON schema), read back by `of`."""
        details: dict[str, Any] = {self.compared.key: self.name}
        if self.mismatch is None:
            details.update(was=self.was, became=self.became)
        else:
            details["mismatch"] = self.mismatch.to_dict()
        if self.dtype is not None:
            details["dtype"] = self.dtype
        return details

    @property
    def headline(self) -> str:
        """The failure's message: the check's sentence, then the mismatch's numbers."""
        at = "" if self.dtype is None else f" with {self.dtype} inputs"
        if self.mismatch is None:
            return self.compared.replaced.format(name=self.name, at=at, was=self.was, became=self.became)
        return self.compared.lead.format(name=self.name, at=at) + self.mismatch.detail()
