"""The checks that compare a batch with its observations run one at a time, typed for the
reports: the observations whose results differ alone, each result's `Mismatch`, and why as far
as it was shown (`Differences`); a learnable's gradient that is not the sum of its
observations' (`NotSummed`); or a result of an observation alone that is no array of its part
of the batch's shape (`Misshapen`). The failure's message is rendered here from them wherever a
result is made (the check's, a worker's, the cache's, a report file's), as the gradient check's
is from its findings: never a sentence carried beside them.

The details' keys are the JSON schema's: `differences` (`Differences.to_dict`), `not_summed`
(`NotSummed.to_dict`) or `misshapen` (`Misshapen.to_dict`), beside the check's `observations_checked` and
`differing_observations`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from layercheck.numerics import reading
from layercheck.numerics.compare import Mismatch

__all__ = ["Differences", "Interaction", "Misshapen", "NotSummed", "ObservationReport", "Observed"]


class Observed(Enum):
    """A check of a batch against its observations alone: its name, what it compares, and
    what it runs again to tell why they differ."""

    PREDICT = ("predict_is_consistent_across_observations", "predict outputs", "predict")
    FORWARD = ("forward_is_consistent_across_observations", "forward outputs", "forward")
    BACKWARD = ("backward_is_consistent_across_observations", "input gradients", "forward then backward")

    def __init__(self, check: str, what: str, method: str) -> None:
        self.check, self.what, self.method = check, what, method

    @classmethod
    def of(cls, check: str) -> Observed | None:
        return next((member for member in cls if member.check == check), None)


class Interaction(Enum):
    """Why observations that differ alone do, as far as it was shown."""

    MIXES = "mixes"  # changing the other observations changed the first one's results
    PLACE = "place"  # it did not: the batch's size or the observation's place
    RANDOM = "random"  # the method itself is not repeatable: nothing follows from the comparison
    UNKNOWN = "unknown"  # it could not be tried (the layer raised)


def not_repeatable(method: str) -> str:
    return f"{method} is not repeatable (run twice on one layer object with the same batch, it gives other results)"


@dataclass(frozen=True)
class Differences:
    """The observations whose results differ when each runs alone (`observed`: which check):
    by observation, in the order they were compared, each result that differs and how (its
    mismatch's indices those of the whole batch), of `checked` observations; and why, only as
    far as it was shown (`interaction`)."""

    observed: Observed
    differ: Mapping[int, Sequence[tuple[str, Mismatch]]]
    checked: int
    interaction: Interaction

    def __post_init__(self) -> None:
        if not self.differ or not all(self.differ.values()) or len(self.differ) > self.checked:
            raise reading.MalformedFinding(
                f"differences in {len(self.differ)} of {self.checked} observations checked, each with a result"
            )

    @property
    def headline(self) -> str:
        observations = sorted(self.differ)
        shown = ", ".join(map(str, observations[:10])) + (", ..." if len(observations) > 10 else "")
        items = (item for items in self.differ.values() for item in items)
        name, worst = max(items, key=lambda item: item[1].abs_diff)
        message = (
            f"{self.observed.what} of observation(s) {shown} ({len(observations)} of {self.checked} checked) differ "
            "when each observation runs alone"
        )
        if self.interaction is Interaction.MIXES:
            message += (
                f", and those of observation {observations[0]} change when only the other observations change: "
                "the layer mixes observations (statistics over the batch?)"
            )
        elif self.interaction is Interaction.PLACE:
            message += (
                f", though those of observation {observations[0]} do not change when the other observations "
                "change: they depend on the batch's size or on the observation's place in it, not on the others' "
                "values"
            )
        elif self.interaction is Interaction.RANDOM:
            message += f", and {not_repeatable(self.observed.method)}, so whether observations interact is not known"
        return message + "; " + worst.describe(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "interaction": self.interaction.value,
            "results": [
                {"observation": i, "name": name, "mismatch": found.to_dict()}
                for i, items in self.differ.items()
                for name, found in items
            ],
        }

    @classmethod
    def from_dict(cls, observed: Observed, data: Any) -> Differences:
        fields = reading.exactly(data, "the differences", {"checked", "interaction", "results"})
        differ: dict[int, list[tuple[str, Mismatch]]] = {}
        for item in reading.items(fields["results"], "the differing results"):
            result = reading.exactly(item, "a differing result", {"observation", "name", "mismatch"})
            observation = reading.whole(result["observation"], "an observation")
            name = reading.text(result["name"], "a result's name")
            differ.setdefault(observation, []).append((name, Mismatch.from_dict(result["mismatch"])))
        return cls(
            observed,
            differ,
            reading.whole(fields["checked"], "the observations checked"),
            reading.member(Interaction, fields["interaction"], "the interaction"),
        )


@dataclass(frozen=True)
class NotSummed:
    """A learnable's (or a shared state's) gradient for a batch of `batch` observations that is
    not the sum of its observations' run alone: the argument `name`, its gradient's name
    `gradient` (dLdW), and the `mismatch` of the batch's against the sum."""

    name: str
    gradient: str
    batch: int
    mismatch: Mismatch

    @property
    def headline(self) -> str:
        return (
            f"the gradient of {self.name} for a batch of {self.batch} is not the sum of the gradients of its "
            "observations run alone; " + self.mismatch.describe(self.gradient)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "argument": self.name,
            "gradient": self.gradient,
            "batch": self.batch,
            "mismatch": self.mismatch.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Any) -> NotSummed:
        fields = reading.exactly(data, "the gradient not summed", {"argument", "gradient", "batch", "mismatch"})
        return cls(
            reading.text(fields["argument"], "the argument"),
            reading.text(fields["gradient"], "the gradient's name"),
            reading.whole(fields["batch"], "the batch size"),
            Mismatch.from_dict(fields["mismatch"]),
        )


@dataclass(frozen=True)
class Misshapen:
    """A result `name` of `observation` run alone (`observed`: which check) that cannot be
    compared with its part of the batch's: what it `returned` and what that part is
    (`expected`), as `arrays.describe` says them."""

    observed: Observed
    observation: int
    name: str
    returned: str
    expected: str

    @property
    def headline(self) -> str:
        # The backward check runs forward then backward on the observation: its result is a
        # gradient, said against what it should be, not as a part of a batch's output.
        if self.observed is Observed.BACKWARD:
            return (
                f"backward of observation {self.observation} alone returns {self.name} as {self.returned}; "
                f"expected {self.expected}"
            )
        return (
            f"{self.observed.method} of observation {self.observation} alone returns {self.name} as {self.returned}; "
            f"its part of the batch is {self.expected}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "observation": self.observation,
            "name": self.name,
            "returned": self.returned,
            "expected": self.expected,
        }

    @classmethod
    def from_dict(cls, observed: Observed, data: Any) -> Misshapen:
        fields = reading.exactly(data, "the misshapen result", {"observation", "name", "returned", "expected"})
        return cls(
            observed,
            reading.whole(fields["observation"], "the observation"),
            reading.text(fields["name"], "the result's name"),
            reading.text(fields["returned"], "what it returned"),
            reading.text(fields["expected"], "its part of the batch"),
        )


_KEYS: dict[type, str] = {Differences: "differences", NotSummed: "not_summed", Misshapen: "misshapen"}


@dataclass(frozen=True)
class ObservationReport:
    """What a check of a batch against its observations alone found, typed: `found` is
    `Differences`, `NotSummed` or `Misshapen`."""

    found: Differences | NotSummed | Misshapen
    legacy = False  # every report that holds them holds all the sentence needs

    @classmethod
    def of(cls, check: str, details: Mapping[str, Any]) -> ObservationReport | None:
        """The typed details of such a check's failure, None for another check, a pass, or a
        failure of another kind (what the layer raised: `problems.Raised`).

        Raises:
            reading.MalformedFinding: details that are not such a check's, in one line.
        """
        observed = Observed.of(check)
        if observed is None:
            return None
        if "differences" in details:
            return cls(Differences.from_dict(observed, details["differences"]))
        if "not_summed" in details and observed is Observed.BACKWARD:
            return cls(NotSummed.from_dict(details["not_summed"]))
        if "misshapen" in details:
            return cls(Misshapen.from_dict(observed, details["misshapen"]))
        return None

    def to_details(self) -> dict[str, Any]:
        return {_KEYS[type(self.found)]: self.found.to_dict()}

    @property
    def headline(self) -> str:
        return self.found.headline
