"""`layercheck list-targets FILE`: what a module defines that layercheck can check, and how
each would be checked (DESIGN.md sections 3, 4 and 11).

The module is imported in a worker, as `layercheck run` imports it: its import may hang,
exit or crash without taking the command with it. The worker answers plain data
(`Listed.to_dict`), which the parent reads back trusting none of it.
"""

from __future__ import annotations

import enum
import inspect
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from layercheck.contract.adapter import is_operation, signature_of
from layercheck.contract.loading import discover, import_module, is_declared_function, is_reproducer, pairs_in
from layercheck.errors import TargetError
from layercheck.safetext import bounded, exception_text, visible
from layercheck.sandbox import Guard, run_jobs
from layercheck.userframes import exception_summary

__all__ = ["Listed", "ListedTarget", "Style", "describe", "list_targets"]


class Style(enum.Enum):
    """The convention a target is written in, and so how layercheck checks it."""

    LAYER = "layer"  # section 3: a class with predict
    FUNCTION = "function"  # section 3: a plain function with example_layout
    OPERATION = "operation"  # section 4: a class with forward and backward, no predict
    PAIR = "function pair"  # section 11: NAME_forward / NAME_backward with a cache


@dataclass(frozen=True)
class ListedTarget:
    name: str  # as path.py:NAME names it
    style: Style
    line: int | None
    parameters: tuple[str, ...]  # of predict, forward, or a pair's forward
    backward: str | None = None  # a pair's backward function
    example_layout: bool = False  # it declares one: `layercheck run path.py:NAME` needs no --layout
    # A class with forward and backward whose backward takes only the output's gradient:
    # an operation of section 4 would take more; it likely keeps its gradients on attributes.
    keeps_gradients: bool = False


@dataclass(frozen=True)
class Listed:
    """The targets of one module, or why it could not be imported."""

    targets: tuple[ListedTarget, ...] = ()
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "targets": [
                {
                    "name": t.name,
                    "style": t.style.value,
                    "line": t.line,
                    "parameters": list(t.parameters),
                    "backward": t.backward,
                    "example_layout": t.example_layout,
                    "keeps_gradients": t.keeps_gradients,
                }
                for t in self.targets
            ],
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Listed:
        """The worker's answer read back; anything malformed is the module's error."""
        try:
            error = None if data["error"] is None else _text(data["error"])
            if len(data["targets"]) > 10_000 or any(len(t["parameters"]) > 1_000 for t in data["targets"]):
                raise ValueError("more than any module defines")
            targets = tuple(
                ListedTarget(
                    _text(t["name"]),
                    Style(t["style"]),
                    t["line"] if type(t["line"]) is int else None,
                    tuple(_text(p) for p in t["parameters"]),
                    None if t["backward"] is None else _text(t["backward"]),
                    t["example_layout"] is True,
                    t["keeps_gradients"] is True,
                )
                for t in data["targets"]
            )
        except (KeyError, TypeError, ValueError):
            return cls(error="the worker's answer is malformed (a module that tampers with layercheck's process?)")
        return cls(targets, error)


def _text(value: Any) -> str:
    if type(value) is not str:
        raise TypeError("not a string")
    return visible(bounded(value, 200))


def _parameters(fn: Any, skip_self: bool) -> tuple[str, ...]:
    """The positional parameters' names (none where the signature cannot be read), without
    `self` of a method read off its class."""
    names = signature_of(fn).names
    return names[1:] if skip_self and inspect.isfunction(fn) and names[:1] == ("self",) else names


def _line(obj: Any) -> int | None:
    try:
        return inspect.getsourcelines(obj)[1]
    except Exception:  # noqa: BLE001 - no source, or a metaclass of the user's that raises
        return None


def _described(name: str, obj: Any) -> ListedTarget:
    example = getattr(obj, "example_layout", None) is not None
    if is_declared_function(obj):
        return ListedTarget(name, Style.FUNCTION, _line(obj), _parameters(obj, False), example_layout=example)
    if is_operation(obj):
        forward, backward = _parameters(obj.forward, True), _parameters(obj.backward, True)
        return ListedTarget(
            name, Style.OPERATION, _line(obj), forward, example_layout=example, keeps_gradients=len(backward) == 1
        )
    return ListedTarget(name, Style.LAYER, _line(obj), _parameters(obj.predict, True), example_layout=example)


@dataclass(frozen=True)
class ListJob:
    """Import one module in a worker and list its targets."""

    path: str
    timeout: float

    def run(self, emit: Callable[[str, Any], None]) -> dict[str, Any]:
        guard = Guard.start()
        try:
            module = import_module(Path(self.path))
        except TargetError as exc:
            return Listed(error=str(exc)).to_dict()
        except BaseException as exc:  # what import_module lets through: KeyboardInterrupt
            return Listed(error=f"importing {os.path.basename(self.path)} raised {exception_summary(exc)}").to_dict()
        finally:
            guard.verify()
        if is_reproducer(module):
            return Listed(error=f"{os.path.basename(self.path)} is a reproducer that layercheck wrote").to_dict()
        try:
            found = [_described(name, obj) for name, obj in discover(module)]
            names = vars(module)
            for forward, backward in pairs_in(module):
                function = names[forward]
                found.append(
                    ListedTarget(forward, Style.PAIR, _line(function), _parameters(function, False), backward=backward)
                )
        except Exception as exc:  # noqa: BLE001 - a class of the user's whose attributes raise
            return Listed(
                error=f"listing the targets of {os.path.basename(self.path)} raised {exception_text(exc)}"
            ).to_dict()
        found.sort(key=lambda t: t.line or 0)
        return Listed(tuple(found)).to_dict()


def list_targets(path: Path, timeout: float = 60.0) -> Listed:
    """The targets `path` defines, its module imported in a worker."""
    (outcome,) = run_jobs([ListJob(str(path), timeout)])
    if not outcome.ok:
        return Listed(error=f"importing {path.name}: {outcome.failure}")
    return Listed.from_dict(outcome.result)


def describe(listed: Listed, label: str) -> list[str]:
    """`list-targets`' lines: each target, what it is, and the command that checks it."""
    if listed.error is not None:
        return [f"{label}: {listed.error}"]
    if not listed.targets:
        return [
            f"{label} defines no target: no class with predict, no class with forward and backward, no function "
            "with example_layout, no NAME_forward with a NAME_backward"
        ]
    lines = [f"{label} defines {len(listed.targets)} target(s):"]
    for target in listed.targets:
        where = f" (line {target.line})" if target.line is not None else ""
        spec = shlex.quote(f"{label}:{target.name}")
        if target.style is Style.PAIR:
            lines.append(
                f"  {target.name}{where}: a function pair with a cache, {target.name}({', '.join(target.parameters)}) "
                f"and {target.backward}(...)"
            )
            lines.append(f"      layercheck run {spec} --layout SIZES:FORMAT ...")
            lines.append(
                f"      one --layout per array argument among ({', '.join(target.parameters)}), in that order; "
                "--arg NAME=VALUE (a YAML value) for each of the others"
            )
            continue
        signature = f"({', '.join(target.parameters)})"
        if target.style is Style.LAYER:
            lines.append(f"  {target.name}{where}: a layer, predict{signature}")
        elif target.style is Style.FUNCTION:
            lines.append(f"  {target.name}{where}: a function layer{signature}")
        else:
            lines.append(f"  {target.name}{where}: an operation (forward and backward, no predict), forward{signature}")
        layout = "" if target.example_layout else " --layout SIZES:FORMAT"
        if target.keeps_gradients:
            lines.append(
                "      its backward takes only the output's gradient: if it keeps its gradients on attributes "
                "(self.dinputs), map them in a config entry's convention: (docs/keeps-gradients.md) and run "
                "layercheck run --config FILE.yaml"
            )
            lines.append(
                f"      as an operation (docs/contracts.md), whose backward takes more: layercheck run {spec}{layout}"
            )
        else:
            lines.append(f"      layercheck run {spec}{layout}")
    return lines
