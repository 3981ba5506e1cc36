"""Run the selected checks on one target and collect a TargetReport."""

from __future__ import annotations

import gc
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from layercheck.checks import REGISTRY, Check, Incomplete, Skip
from layercheck.clock import perf_counter
from layercheck.contract.layout import Layout
from layercheck.errors import TargetError, UsageError
from layercheck.interrupts import reraise_if_interrupt
from layercheck.reproducers.evidence import LazyEvidence
from layercheck.results import STATUSES, Cause, CheckResult, Kind, Status, TargetReport, cause_of
from layercheck.running.session import Session, notes
from layercheck.safetext import exception_text, safe_repr
from layercheck.sandbox import INTEGRITY_CHECK, Allowed, ChangeKind, Finding, Guard
from layercheck.settings.options import Options
from layercheck.userframes import being_handled, chained, exception_summary, own_frame, user_traceback

__all__ = ["allowed_words", "run_check", "run_target", "select_checks", "unexpected"]


def select_checks(options: Options) -> list[Check]:
    """The registered checks named by `options.checks` (all when None) less `options.skip`."""
    unknown = [n for n in (options.checks or ()) + tuple(options.skip) if n not in REGISTRY]
    if unknown:
        raise UsageError(f"unknown check(s) {', '.join(unknown)}; `layercheck list-checks` lists them")
    wanted = options.checks or tuple(REGISTRY)
    selected = [REGISTRY[n] for n in REGISTRY if n in wanted and n not in options.skip]
    if not selected:  # a run that checks nothing must not read as a pass
        raise UsageError("checks and skip leave no check to run")
    return selected


def run_check(
    check: Check, session: Session, on_evidence: Callable[[str, LazyEvidence], None] | None = None
) -> CheckResult:
    """Run one check; `on_evidence(name, evidence)` gets what recomputes a failure a
    computation decided (`--repro`), once the failure is known to be typed."""
    start = perf_counter()
    outside = being_handled()  # a caller's exception, which what the check raises chains
    raised: BaseException | None = None
    try:
        not_applicable = check.applies_to(session.reference.kind)
        if not_applicable:
            raise Skip(not_applicable)
        outcome = check.run(session)
        result = CheckResult(
            check.name,
            outcome.status,
            outcome.message,
            dict(outcome.details),
            explanation=list(outcome.explanation),
            traceback=outcome.traceback,
            cause=outcome.cause,
        )
        if result.status is Status.FAILED and not result.message:
            # Every failure is typed, its message rendered from what it found: one that is not
            # is layercheck's defect (reported as such), never a failure without a cause.
            raise RuntimeError(f"{check.name} failed without a typed finding (details: {', '.join(result.details)})")
        if on_evidence is not None and outcome.status is Status.FAILED and outcome.evidence is not None:
            on_evidence(check.name, outcome.evidence)
    except Skip as exc:
        result, raised = CheckResult(check.name, Status.SKIPPED, str(exc)), exc
    except Incomplete as exc:
        raised = exc
        result = CheckResult(
            check.name,
            Status.INCOMPLETE,
            str(exc),
            dict(exc.details),
            explanation=exc.explanation,
            traceback=exc.traceback,
            blocked=exc.blocked,
            cause=exc.cause or cause_of(exc),
        )
    except TargetError as exc:
        raised = exc
        result = CheckResult(
            check.name, Status.INCOMPLETE, f"not checked: {exc}", traceback=exc.traceback, cause=cause_of(exc)
        )
    except SystemExit as exc:
        raised = exc
        result = CheckResult(
            check.name,
            Status.FAILED,
            f"the layer called sys.exit({safe_repr(exc.code)}) during the check",
            cause=Cause.EXIT,
        )
    except BaseException as exc:  # what the check let through: never a pass, never "incomplete"
        reraise_if_interrupt(exc)
        result, raised = unexpected(check.name, exc), exc
    if raised is not None:
        # What a check raised ended it: the frames it went through hold the check's locals
        # (the session, its arrays, other exceptions kept there) in a cycle with it; cleared,
        # they are freed as the check ends, not when the cyclic collector next runs.
        _clear_frames(raised, outside)
        del raised
    result.duration_s = perf_counter() - start
    assert result.status in STATUSES
    return result


def _clear_frames(exc: BaseException, outside: frozenset[int]) -> None:
    """The locals of the finished frames of `exc`'s traceback, and of those it chains, cleared;
    those of `outside` (a caller's exceptions) left as they are."""
    for one in chained(exc, outside):
        try:
            traceback.clear_frames(one.__traceback__)
        except Exception:  # noqa: BLE001 - frames left as they are keep a cycle, nothing worse
            pass


def unexpected(where: str, exc: BaseException) -> CheckResult:
    """The failed result of a check (or, `where` naming it, of the construction) that raised
    what the checks do not expect.

    Raised while the layer's own code ran (a `__repr__`, `__eq__` or `__len__` of an object it
    returned or raised, or a BaseException such as KeyboardInterrupt that only a layer raises
    here): the layer's doing. Out of memory: the machine's, as a step that ran out of memory.
    Anything else: a defect of layercheck, with cause INTERNAL, which makes the target an
    error (`run_target`) rather than blaming the layer.
    """
    frame = own_frame(exc)
    cause = cause_of(exc)
    if cause is Cause.MEMORY and frame is None:
        return CheckResult(where, Status.FAILED, f"ran out of memory: {exception_text(exc)}", cause=cause)
    if frame is not None or not isinstance(exc, Exception):
        message = f"the layer raised {exception_summary(exc)}"
        if frame is not None and frame.name.startswith("__"):  # __repr__, __eq__, __len__, __array__...
            message = f"an object from the layer raised {exception_summary(exc)} when layercheck used it"
        return CheckResult(
            where,
            Status.FAILED,
            message,
            traceback=user_traceback(exc),
            cause=cause,
        )
    return CheckResult(
        where,
        Status.FAILED,
        f"layercheck internal error: {exception_text(exc)}",
        explanation=[_BUG],
        traceback=traceback.format_exc(),
        cause=Cause.INTERNAL,
    )


_TAMPERED = (
    f"the layer replaced what layercheck computes with (see {INTEGRITY_CHECK}), which may be what made "
    "layercheck fail here"
)
_BUG = (
    "this is a defect of layercheck, not of the layer: please report it with the layer (or a "
    "smaller one that shows it), the command and this traceback"
)


def run_target(
    label: str,
    factory: Callable[[], Any],
    layouts: Sequence[Layout],
    options: Options,
    kind: Kind = Kind.LAYER,
    on_check: Callable[[CheckResult], None] | None = None,
    on_start: Callable[[Check], None] | None = None,
    guard: Guard | None = None,
    on_evidence: Callable[[str, LazyEvidence], None] | None = None,
    looked: bool = False,
) -> TargetReport:
    """Check one layer; construction errors become the report's `error`.

    `on_start(check)` and `on_check(result)` are called around each check (a worker process
    reports with them where it is, so that a hang or a crash can be placed).

    `guard` holds what layercheck computes its verdicts with as it was before the layer's
    module was imported (`sandbox.integrity`); without one, as it is now. Tampering found (at
    import, while the layer is set up, in a check) is put back at once and reported as the
    failed `module_does_not_replace_numpy_or_layercheck`; every check still runs, with the
    originals, and decides, but one during which tampering was found only once it had ended
    (it may have computed with the replacement). What touches no verdict is allowed, and said
    in `allowed_changes`. `looked`: the given guard's last look was taken after the last code
    of the layer's that the caller ran, so that none is taken again before the layer is set up.
    """
    if guard is None:
        guard = Guard.start()
        try:
            return _run_target(label, factory, layouts, options, kind, on_check, on_start, guard, on_evidence, True)
        finally:
            guard.stop()
    return _run_target(label, factory, layouts, options, kind, on_check, on_start, guard, on_evidence, looked)


def _run_target(
    label: str,
    factory: Callable[[], Any],
    layouts: Sequence[Layout],
    options: Options,
    kind: Kind,
    on_check: Callable[[CheckResult], None] | None,
    on_start: Callable[[Check], None] | None,
    guard: Guard,
    on_evidence: Callable[[str, LazyEvidence], None] | None,
    looked: bool,
) -> TargetReport:
    start = perf_counter()
    report = TargetReport(label, kind, list(layouts))
    checks = select_checks(options)

    def record(result: CheckResult) -> None:
        report.checks.append(result)
        if on_check is not None:
            on_check(result)

    if not looked:
        guard.verify()  # what the module did when it was imported, or the caller ran of the layer's
    session = None
    guard.where = "while the layer was set up"
    try:
        session = Session(factory, layouts, options)
    except TargetError as exc:
        report.error, report.traceback, report.cause = str(exc), exc.traceback, cause_of(exc)
    except BaseException as exc:  # what constructing or adapting the layer let through
        reraise_if_interrupt(exc)
        failure = unexpected("setting up the layer", exc)
        report.error, report.traceback, report.cause = failure.message, failure.traceback, failure.cause
    guard.verify()
    if session is not None:
        _run_checks(checks, session, guard, record, on_start, on_evidence)
        guard.where = "after the checks"
        # Nothing of the layer's runs in the notes: the look after the last check is the
        # report's last (its callers look again once the run's objects are freed).
        report.notes = notes(session)
    if guard.findings:
        record(_replaced(guard.findings))
    report.allowed_changes = [allowed_words(finding) for finding in guard.allowed]
    internal = [c for c in report.checks if c.cause is Cause.INTERNAL]
    if internal and report.error is None:
        # Never a pass: the target could not be checked. Nor the layer's fault, unless it
        # replaced what layercheck computes with, which may be what broke.
        names = ", ".join(c.name for c in internal)
        why = _TAMPERED if guard.findings else _BUG
        if guard.findings:
            for result in internal:
                result.explanation = [_TAMPERED]
        report.error = f"{internal[0].message} (in {names}); {why}"
        report.traceback, report.cause = internal[0].traceback, Cause.INTERNAL
    report.bound()
    report.duration_s = perf_counter() - start
    return report


def look_once_freed(report: TargetReport, guard: Guard) -> None:
    """The look once the objects a run made are freed, cycles collected too (their `__del__`
    is the layer's code, and a worker sends its report next, through what a verdict reads):
    tampering found then is put back, and fails the target as any other does."""
    gc.collect()
    found = len(guard.findings)
    guard.where = "as its objects were freed after the checks"
    guard.verify()
    if len(guard.findings) > found:
        report.checks = [c for c in report.checks if c.name != INTEGRITY_CHECK] + [_replaced(guard.findings)]
    report.allowed_changes = [allowed_words(finding) for finding in guard.allowed]
    report.bound()


# The results of checks that called no method of the layer that wait for the guard's look.
_WAITS = frozenset({Status.PASSED, Status.SKIPPED})


def _run_checks(
    checks: Sequence[Check],
    session: Session,
    guard: Guard,
    record: Callable[[CheckResult], None],
    on_start: Callable[[Check], None] | None,
    on_evidence: Callable[[str, LazyEvidence], None] | None,
) -> None:
    """Each check run, and recorded once the guard has looked after it."""
    # The checks since the guard's last look that called no method of the layer and passed
    # or were skipped (`_WAITS`): their whole look is owed (`Guard.owe`), taken before the
    # layer's next call or after the last check, and they are recorded once it was taken
    # (before that call: a check that then hangs or crashes loses none of them). NumPy's
    # public names and the hooks are looked at after each (`Guard.glance`, as after a call):
    # changed there, the look owed is taken at once. Where it found tampering, each of them
    # runs again, looked after as any other check is (`_looked`), and so does the check
    # whose first call took it. A failure is looked after at once: what it says is said
    # where it was found, and a worker may stop there (`on_check`).
    unlooked: list[tuple[Check, CheckResult]] = []
    raised: list[BaseException] = []

    def looked_after(found: bool) -> None:
        if found:
            return
        try:
            for _, earlier in unlooked:
                record(earlier)
        except BaseException as exc:  # on_check's (a worker stopping): raised once this check ended
            raised.append(exc)
        unlooked.clear()

    for number, check in enumerate(checks, 1):
        if on_start is not None:
            on_start(check)
        guard.where = f"during {check.name}"
        owed = bool(unlooked)
        if owed:
            guard.owe(_during([*(c.name for c, _ in unlooked), check.name]), looked_after)
        found, calls = len(guard.findings), guard.calls
        result = run_check(check, session, on_evidence)
        if guard.calls == calls and number < len(checks) and result.status in _WAITS and guard.glance():
            unlooked.append((check, result))
            continue
        if guard.settle_owed():
            guard.verify()  # what this check's calls did, before anything runs again
            for again, _ in [*unlooked, (check, result)]:
                if on_start is not None:
                    on_start(again)
                record(_looked(again, session, guard, on_evidence))
            unlooked.clear()
            continue
        if raised:
            raise raised[0]
        if guard.calls != calls or not owed:  # else the look owed was taken after it
            guard.verify()
        record(_decided_unless_found(result, guard, found))


def _looked(
    check: Check, session: Session, guard: Guard, on_evidence: Callable[[str, LazyEvidence], None] | None
) -> CheckResult:
    """`check` run, and the guard's look taken after it (`_decided_unless_found`)."""
    guard.where = f"during {check.name}"
    found = len(guard.findings)
    result = run_check(check, session, on_evidence)
    guard.verify()
    return _decided_unless_found(result, guard, found)


def _decided_unless_found(result: CheckResult, guard: Guard, found: int) -> CheckResult:
    """`result`, undecided where the guard found tampering since its `found`-th finding other
    than right after a call of the layer. Found right after a call, tampering was put back
    before the check computed anything more; found only later, the check may have computed
    with it."""
    if any(not finding.at_call for finding in guard.findings[found:]):
        return _undecided(result)
    return result


def _during(names: Sequence[str]) -> str:
    """Where a look owed for checks that called no method of the layer (and the start of the
    check after them, up to its first call) found what it found: during one of them."""
    if len(names) <= 3:
        return f"during {', '.join(names[:-1])} or {names[-1]}"
    return f"during one of the {len(names)} checks from {names[0]} to {names[-1]}"


def _replaced(findings: Sequence[Finding]) -> CheckResult:
    """The failed result of a module or layer that replaced what layercheck computes its
    verdicts with: the first finding's words, where each later one was found, and every
    change with the function that looks it up."""
    first = findings[0]
    later = list(dict.fromkeys(f.when for f in findings[1:] if f.when != first.when))
    message = first.message()
    if later:
        rest = len(later) - _LATER_SHOWN
        message += f"; again {_joined(later[:_LATER_SHOWN] + ([f'{rest} more times'] if rest > 0 else []))}"
    changes = [change for finding in findings for change in finding.changes]
    readers = list(dict.fromkeys(f"{c.what} is looked up by {c.reader}" for c in changes if c.reader is not None))
    explanation = [
        "layercheck put the originals back at once: every other check decided with them"
        + (
            "; a check during which the replacement was found only once it had ended is not decided"
            if any(not f.at_call and f.when.startswith("during ") for f in findings)
            else ""
        ),
        "a layer may add names of its own, restore an alias NumPy removed, reload NumPy or change settings "
        "(np.seterr, np.set_printoptions, warnings filters, time.tzset()); it may not replace what layercheck "
        "computes its verdicts with: the functions its code and NumPy's look up, layercheck's own code and "
        "objects, the worker's channel to its parent (multiprocessing.connection, pickle), or the interpreter's "
        "trace and profile hooks (sys.settrace, sys.setprofile)",
    ]
    if readers:
        explanation.append("; ".join(readers[:_READERS_SHOWN]))
    return CheckResult(
        INTEGRITY_CHECK,
        Status.FAILED,
        message,
        {
            "changes": [{"kind": c.kind.value, "what": c.what, "reader": c.reader} for c in changes[:_CHANGES_KEPT]],
            "found": [{"when": f.when, "at_call": f.at_call} for f in findings[:_CHANGES_KEPT]],
        },
        explanation=explanation,
    )


def allowed_words(finding: Finding) -> str:
    """What a module or layer changed that no verdict reads, and why each change is allowed:
    `the module added numpy.int (it is the builtin of that name itself) when it was imported`."""
    by_reason: dict[Allowed, list[str]] = {}
    for change in finding.changes:
        if change.allowed is not None:
            verb = "added" if change.kind is ChangeKind.SHADOWED else change.kind.value
            by_reason.setdefault(change.allowed, []).append(f"{verb} {change.what}")
    who = "the module" if finding.at_import else "the layer"
    parts = [f"{_joined(done[:_ALLOWED_SHOWN])}{_more(done)} ({reason.value})" for reason, done in by_reason.items()]
    return f"{who} {'; '.join(parts)} {finding.when}: allowed, it touches no verdict"


def _joined(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _more(words: Sequence[str]) -> str:
    rest = len(words) - _ALLOWED_SHOWN
    return f" and {rest} more" if rest > 0 else ""


_CHANGES_KEPT = 20  # in the report's details; the message names the first few
_READERS_SHOWN = 3
_LATER_SHOWN = 2  # places a later finding was made, in the message
_ALLOWED_SHOWN = 5

# What a check says whose verdict may have come from what a layer replaced while it ran.
_UNDECIDED = (
    f"not decided: the layer replaced what layercheck computes its verdicts with during this check, and "
    f"it was found only once the check had ended (see {INTEGRITY_CHECK})"
)


def _undecided(result: CheckResult) -> CheckResult:
    """`result` computed by code the layer replaced while it ran: no verdict."""
    undecided = CheckResult(result.name, Status.INCOMPLETE, _UNDECIDED)
    undecided.duration_s = result.duration_s
    return undecided
