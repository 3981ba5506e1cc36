"""The checks that compare a result with what it should have stayed (a second call's, an
initial value), typed for the reports: which check, the array it names, and the `Mismatch`
between the two. Their failure's message is rendered here from those details, wherever a
result is made (the check's, a worker's, the cache's, a report file's), as the gradient
check's is from its findings (`findings.gradient`): never a sentence carried beside them.

The details' keys are the JSON schema's: the array's name under the check's own key (`output`,
`argument`, `parameter`, `state`), `mismatch` (`Mismatch.to_dict`), and for a state reset at
another dtype than the first tested, `dtype`.
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
    the array's name in its details, and its sentence's lead-in (`{name}`: the array's)."""

    DETERMINISTIC = ("predict_is_deterministic", "output", "predict is not deterministic: {name} of the second call: ")
    REPEATABLE = (
        "backward_is_repeatable",
        "argument",
        "the second forward+backward on the same layer gives another gradient of {name} "
        "(a value cached or accumulated between calls?): ",
    )
    LEARNABLES_KEPT = (
        "initialize_does_not_change_nonempty_learnables",
        "parameter",
        "initialize changed {name!r}, which was already set: ",
    )
    STATES_KEPT = (
        "initialize_does_not_change_nonempty_states",
        "parameter",
        "initialize changed {name!r}, which was already set: ",
    )
    RESTORED = (
        "reset_state_does_not_error",
        "state",
        "reset_state does not restore state {name} to its initial value{at}: ",
    )

    def __init__(self, check: str, key: str, lead: str) -> None:
        self.check, self.key, self.lead = check, key, lead

    @classmethod
    def of(cls, check: str) -> Compared | None:
        return _BY_CHECK.get(check)


_BY_CHECK = {member.check: member for member in Compared}


@dataclass(frozen=True)
class ComparisonReport:
    """What a comparing check found: the array `name` differs from what it should have stayed
    by `mismatch`; `dtype`, for a state reset at another dtype than the first tested."""

    compared: Compared
    name: str
    mismatch: Mismatch
    dtype: str | None = None
    # Read from a report of an earlier version, which lacks what the sentence needs (the
    # greatest relative difference): the message it carries, made then from the same data, stays.
    legacy: bool = False

    @classmethod
    def of(cls, check: str, details: Mapping[str, Any]) -> ComparisonReport | None:
        """The typed details of a comparing check's failure, None for another check or a pass.

        Raises:
            reading.MalformedFinding: details that are not such a check's, in one line.
        """
        compared = Compared.of(check)
        if compared is None or "mismatch" not in details:
            return None
        dtype = details.get("dtype")
        written = reading.mapping(details["mismatch"], "the mismatch")
        return cls(
            compared,
            reading.text(details.get(compared.key), f"the {compared.key} compared"),
            Mismatch.from_dict(written),
            None if dtype is None else reading.text(dtype, "the dtype"),
            legacy="max_rel_diff" not in written,
        )

    def to_details(self) -> dict[str, Any]:
        """The check's details (the keys of the JSON schema), read back by `of`."""
        details: dict[str, Any] = {self.compared.key: self.name, "mismatch": self.mismatch.to_dict()}
        if self.dtype is not None:
            details["dtype"] = self.dtype
        return details

    @property
    def headline(self) -> str:
        """The failure's message: the check's sentence, then the mismatch's numbers."""
        at = "" if self.dtype is None else f" with {self.dtype} inputs"
        return self.compared.lead.format(name=self.name, at=at) + self.mismatch.detail()
