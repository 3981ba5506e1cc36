"""The command line: parses and validates everything up front, then wires library calls.

Option texts become values here (`--seed 3` is 3, `--domain 0:` is (0, None)); the values are
validated by `settings.options.parse_settings`, as config files and the API are, so a bad
value reads the same from all three, with the option's name as its key path.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.text import Text

from layercheck.baseline import Baseline, write_baseline
from layercheck.checks import REGISTRY
from layercheck.clock import monotonic, process_started
from layercheck.contract.entries import EntryKind, inspect_entry
from layercheck.errors import UsageError
from layercheck.interrupts import Interrupted, exit_status, handling
from layercheck.merging import exit_status as merged_status
from layercheck.merging import merge_shards, read_shard
from layercheck.numerics.arrays import DTYPES
from layercheck.reporters.ci import GitHubLog, in_github_actions, print_stopped, still_running
from layercheck.reporters.console import (
    ConsoleReporter,
    ProgressBar,
    Verbosity,
    make_console,
    print_wrapped,
    shows_progress,
)
from layercheck.reporters.files import Input, check_no_input_overwritten, check_report_paths, to_stdout
from layercheck.reporters.formats import FORMATS, ReportFiles
from layercheck.reporters.reporter import Reporters
from layercheck.results import Kind, Report, Status, TargetReport
from layercheck.running.batch import Batch, run_batch
from layercheck.running.cache import CACHE_DIR, CACHE_DIR_ENV
from layercheck.running.listing import describe, list_targets
from layercheck.running.plan import inputs_of, inputs_read, make_batch
from layercheck.running.stopping import stopped_line
from layercheck.running.watching import StillRunning, still_running_every_s
from layercheck.safetext import bounded, visible
from layercheck.sandbox import INTEGRITY_ABOUT, INTEGRITY_CHECK, reaping
from layercheck.settings.config import CONFIG_REFERENCE
from layercheck.settings.options import DEVICES, SETTINGS
from layercheck.templates import (
    CONVENTIONS,
    function_template,
    keeps_gradients_template,
    layer_template,
    names_of,
    pair_template,
    write_new,
)
from layercheck.version import __version__

__all__ = ["cli", "invoke", "list_checks", "main", "merge", "new", "run", "usage_error"]


def main() -> None:
    """The console script: click's own usage errors become one line and exit status 2."""
    # This process is layercheck's own (not a user's calling `cli` or the API): it adopts what
    # a layer leaves behind once it has killed the forkserver, and kills that too
    # (`reaping.sweep_adopted`).
    reaping.adopt_orphans()
    sys.stdout = _ReaderMayLeave(sys.stdout)
    sys.exit(invoke(started=process_started()))


class _ReaderMayLeave:
    """The process's standard output, whose reader may leave before the run ends (`| head`):
    from then on what is printed goes nowhere, and the run goes on to write its report files
    and exit with its own status (a write to a closed pipe raised, and the run ended with
    status 1, its reports unwritten)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except OSError as exc:
            self._left(exc)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            self._left(exc)

    def _left(self, exc: OSError) -> None:
        """The reader left (Windows says so with EINVAL), else `exc` is raised on."""
        if not (isinstance(exc, BrokenPipeError) or (sys.platform == "win32" and exc.errno == errno.EINVAL)):
            raise exc
        self._to_nowhere()

    def _to_nowhere(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def invoke(argv: Sequence[str] | None = None, prog_name: str | None = None, started: float | None = None) -> int:
    """Run the command line `argv` (None: `sys.argv[1:]`) and give its exit status; a command
    that exits with a status raises SystemExit, as from the console script. For a caller that
    runs commands in its own process (layercheck's tests): `main` also adopts orphans.
    `started`: when the command started on the `monotonic` clock (`main`: the process's
    start), which `Time elapsed` counts from; None: now."""
    invocation = _Invocation(monotonic() if started is None else started)
    try:
        code = cli.main(
            args=None if argv is None else list(argv), prog_name=prog_name, standalone_mode=False, obj=invocation
        )
    except click.UsageError as exc:
        click.echo(f"Error: {_one_line(exc.format_message())}", err=True)
        return 2
    except click.ClickException as exc:
        click.echo(f"Error: {_one_line(exc.format_message())}", err=True)
        return exc.exit_code
    except click.Abort as exc:  # click turns a KeyboardInterrupt into Abort
        cause = exc.__cause__ or exc.__context__
        signum = cause.signum if isinstance(cause, Interrupted) else signal.SIGINT
        if isinstance(cause, KeyboardInterrupt):
            click.echo(f"interrupted ({signal.Signals(signum).name})", err=True)
            return exit_status(signum)
        return 1
    return code if isinstance(code, int) else 0


@dataclass(frozen=True)
class _Invocation:
    """What a command knows of its invocation (click's context object)."""

    started: float  # on the `monotonic` clock


def _one_line(text: object) -> str:
    """A message that may quote a path, a config value or a target the user gave: one line,
    bounded, with what a terminal would interpret spelled out."""
    return visible(bounded(" ".join(str(text).split())))


def usage_error(exc: UsageError, log: GitHubLog | None = None) -> None:
    """Print each problem of `exc` in one line on stderr and exit 2. With GITHUB_ACTIONS=true
    a line (it may quote a file name, a config's or a shard's text) is printed with workflow
    commands stopped: by the report's `log` where it has stopped them, else around the line."""
    for problem in getattr(exc, "problems", ()) or (str(exc),):
        line = f"Error: {_one_line(problem)}"
        if in_github_actions() and not (log is not None and log.stopped):
            print_stopped(make_console(stderr=True), line)
        else:
            click.echo(line, err=True)
    sys.exit(2)


def _github_log(console: Console) -> GitHubLog:
    """The report's `GitHubLog` (`run` and `merge` alike), started: with GITHUB_ACTIONS=true
    nothing printed from here on is read as a workflow command, until `finish` prints the
    annotations; commands are resumed however the command ends."""
    log = GitHubLog(console)
    click.get_current_context().call_on_close(log.close)
    log.start()
    return log


_EXAMPLES = """\b
Examples:
  layercheck run sample_layers/srelu.py --layout 24,24,20,128:SSCB
  layercheck run my_layers/                       # every layer of a folder
  layercheck run prelu.py:PReLU --checks gradients_are_numerically_correct -v
  layercheck run --config configs/sample_layers.yaml --jobs 4 --junit report.xml
  layercheck run embed.py --layout 20,32:TB:int=0..999 --dtype float64
  layercheck list-checks
  layercheck new MyLayer --learnables w,b --backward
"""


class _ReportPath(click.Path):
    """A report's file: `-` is standard output (`reporters.files`), the report alone written
    there; a folder is refused, one that does not exist yet too (`reports/`: written as a file
    named `reports`, the next run would find a file where it names a folder)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value)
        if text != "-" and text.endswith(("/", "\\")):
            self.fail(f"{text!r} ends with {text[-1]!r}: it names a folder; give the report's file path", param, ctx)
        return super().convert(value, param, ctx)


_REPORT_PATH = _ReportPath(dir_okay=False, writable=True, allow_dash=True)

_Command = TypeVar("_Command", bound=Callable[..., Any])


def _report_file_options(command: _Command) -> _Command:
    """An option for each report format (`reporters.formats.FORMATS`): `--json PATH`..."""
    for fmt in reversed(FORMATS):
        command = click.option(fmt.option, fmt.dest, type=_REPORT_PATH, help=fmt.help)(command)
    return command


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    invoke_without_command=True,
    epilog=_EXAMPLES,
)
@click.version_option(__version__, prog_name="layercheck")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Validate hand-written neural-network layers and their backward passes."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@cli.command(epilog=_EXAMPLES)
@click.argument("targets", nargs=-1)
@click.option(
    "--layout",
    "layouts",
    multiple=True,
    metavar="SIZES:FORMAT",
    help="Input layout, once per input: sizes and one letter per axis, S spatial, C channel, B batch, "
    "T time, U unspecified (e.g. 24,24,20,128:SSCB); an input of integers adds :int=LOW..HIGH "
    "(e.g. 20,32:TB:int=0..999).  [default: the layer's example_layout]",
)
@click.option(
    "--arg",
    "args",
    multiple=True,
    metavar="NAME=VALUE",
    help="Constructor argument, or a function pair's argument that is not an array (value read as YAML: "
    "3, 1e-3, 'conv_param={stride: 1, pad: 1}').",
)
@click.option(
    "--backward",
    metavar="NAME",
    help="The backward function of a function pair with a cache, when it is not NAME_backward of "
    "the target NAME_forward (docs/function-pairs.md).",
)
@click.option(
    "--config",
    metavar="FILE",
    help=f"YAML defaults and targets (every key is described in {CONFIG_REFERENCE}).",
)
@click.option("--checks", metavar="NAMES", help="Run only these checks (comma-separated).")
@click.option("--skip", metavar="NAMES", help="Skip these checks (comma-separated).")
@click.option(
    "--dtype",
    "dtypes",
    metavar="NAMES",
    help="Precisions to test, comma-separated, of: " + ", ".join(DTYPES) + "  [default: float64,float32]",
)
@click.option("--seed", metavar="N", help="Seed of every random draw  [default: 0]")
@click.option(
    "--device",
    metavar=f"[{'|'.join(DEVICES)}]",
    help="Where to run: cpu, gpu, or auto (gpu checks when a GPU is usable)  [default: auto]",
)
@click.option(
    "--domain",
    "input_domain",
    multiple=True,
    metavar="LOW:HIGH",
    help="Input domain, once for every input or once per input; an empty side is unbounded (0:).",
)
@click.option(
    "--jobs",
    default="1",
    show_default=True,
    metavar="N",
    help="Targets checked in parallel, each in its own worker process.",
)
@click.option(
    "--timeout",
    metavar="S",
    help="Seconds per target before its worker is stopped  [default: 120]",
)
@click.option(
    "--max-memory",
    "max_memory",
    metavar="SIZE",
    help="Memory cap per worker, e.g. 4G, or none  [default: available memory / jobs]",
)
@click.option("--shard", metavar="K/N", help="Check only the K-th of N shares of the targets (CI matrix).")
@_report_file_options
@click.option(
    "--repro",
    metavar="DIR",
    help="Write a reproducer (DIR/<target>__<check>.py and its .npz, NumPy alone) for every failed "
    "check that a computation decided: a regression test that exits 1 until the layer is fixed.",
)
@click.option(
    "-k",
    "keyword",
    metavar="EXPR",
    help="Check only the targets and checks EXPR selects: a word is true of a check of a target when it "
    "is part of the target's label or of the check's name (case-insensitive); and, or, not and "
    "parentheses combine words (-k 'prelu and not gradients'). A target is checked when EXPR "
    "selects any of its checks, and then only those.",
)
@click.option("-x", "--exitfirst", "exitfirst", is_flag=True, help="Stop after the first failed target (--maxfail 1).")
@click.option(
    "--maxfail",
    metavar="N",
    help="Stop after N failed targets (a check failed, or it could not be checked); the others are "
    "reported as not checked.",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Print only the targets that failed (and notes on what was not tested), one line per failure, "
    "and the summary.",
)
@click.option("-v", "--verbose", is_flag=True, help="Print every check of every target.")
@click.option(
    "--strict", is_flag=True, help="An incomplete check fails the run (exit 1): for a CI gate that must decide."
)
@click.option(
    "--only-layers",
    is_flag=True,
    help="Pass over the files that define no layer or operation, as in a folder (for pre-commit, "
    "which hands over every .py file a commit touches).",
)
@click.option(
    "--baseline",
    "baseline_path",
    metavar="FILE",
    help="Accepted failures (from --update-baseline): reported as known; only the others fail the run.",
)
@click.option(
    "--update-baseline",
    "update_baseline_path",
    metavar="FILE",
    help="Record every failure of this run in FILE (exit 0 once written).",
)
@click.option("--no-cache", is_flag=True, help="Check every target, and store nothing in the result cache.")
@click.option(
    "--cache-dir",
    metavar="DIR",
    help=f"Folder of the result cache  [default: ${CACHE_DIR_ENV}, else {CACHE_DIR} of the working folder]",
)
def run(**given: Any) -> None:
    """Check the layers in TARGET (path.py, path.py:ClassName, or a folder), or those of --config.

    Exit status: 0 when every check passed, was skipped or was incomplete (with --strict:
    passed or skipped); 1 when a check failed or a target could not be checked (with --strict:
    or a check was incomplete); 2 for a usage error (a -k that selects nothing included); 130 /
    143 when interrupted by SIGINT / SIGTERM.

    Off a terminal (a CI log), each target's lines are printed as it finishes, and a target
    still running after 30 s says which check it is in, again every 30 s (with -q too). With
    GITHUB_ACTIONS=true each failure is also a GitHub annotation on the layer's line.
    """
    # SIGINT and SIGTERM stop the workers, write what finished and exit 130 / 143.
    click.get_current_context().with_resource(handling((signal.SIGINT, signal.SIGTERM)))
    try:
        command = _RunCommand.of(given)
    except UsageError as exc:
        usage_error(exc)
    batch, files, strict = command.batch, command.files, command.strict

    # `--json -`: standard output holds the report alone; what is printed goes to stderr.
    console = make_console(stderr=files.to_stdout or to_stdout(command.update_baseline))
    github = _github_log(console)  # no line of the report is read as a workflow command (`reporters.ci`)

    def closing(report: Report) -> list[str]:
        lines = (_strict_line(report, strict), stopped_line(report, batch.maxfail))
        return [line for line in lines if line is not None]

    files = replace(  # the modules the layers imported and the files they read are known only at the end
        files, before_writing=lambda report: check_no_input_overwritten(command.outputs, inputs_read(report))
    )
    reporters = Reporters((ConsoleReporter(console, command.verbosity, closing), github, files))
    interrupted: Interrupted | None = None
    # Where no progress bar shows (a CI log, a pipe), each target's lines come as it finishes,
    # and a target that runs long says so: nothing else shows the run is alive.
    log = not shows_progress(console)
    try:
        with ProgressBar(console) as bar:
            report = run_batch(
                batch,
                on_report=_marking(command.baseline, reporters.target),
                on_progress=bar.update,
                as_finished=log,
                still_running=StillRunning(still_running(console), command.every_s) if log else None,
            )
    except UsageError as exc:  # known once modules are imported: a folder without any layer
        usage_error(exc, github)
    except Interrupted as exc:  # the workers are stopped; what finished is reported
        interrupted, report = exc, exc.report or Report()
    if not report.targets and interrupted is None:
        shard = command.shard
        console.print(f"No targets in shard {shard}." if shard else "No layers in the files given.")
    _record_run(report, strict, command.baseline, console)
    # `Time elapsed` is what the user waited: the interpreter's start and the imports too.
    invocation = click.get_current_context().find_object(_Invocation)
    if invocation is not None:
        report.duration_s = max(report.duration_s, monotonic() - invocation.started)
    status = 1 if not report.ok or _strict_line(report, strict) is not None else 0
    status = _finish(reporters, report, files, github, status)
    if command.update_baseline is not None and interrupted is None:
        status = _update_baseline(command.update_baseline, report, console, status)
    if interrupted is not None:
        name = signal.Signals(interrupted.signum).name
        click.echo(f"interrupted ({name}): targets that did not finish are reported as interrupted", err=True)
        status = exit_status(interrupted.signum)
    sys.exit(status)


@dataclass(frozen=True)
class _RunCommand:
    """What `layercheck run` was given, validated once: the batch (`make_batch`), the report
    files, what is printed, the baseline read and the one written."""

    batch: Batch
    files: ReportFiles
    verbosity: Verbosity
    strict: bool  # an incomplete check fails the run
    shard: str | None  # `--shard K/N` as given
    baseline: Baseline | None
    update_baseline: str | None
    outputs: dict[str, str | None]  # the paths written, by option: none may overwrite an input
    every_s: float  # a target still running says so this often, off a terminal

    @classmethod
    def of(cls, given: dict[str, Any]) -> _RunCommand:
        """From click's values by parameter name: each setting's option (`--dtype`...) by its
        key (`dtypes`...), each report file by its format's name, the rest by `make_batch`'s
        parameter names, and what is printed and the baselines'."""
        given = dict(given)
        files = ReportFiles.of({fmt.dest: given.pop(fmt.dest) for fmt in FORMATS})
        settings = {setting.key: given.pop(setting.key) for setting in SETTINGS if setting.option}
        quiet, verbose = given.pop("quiet"), given.pop("verbose")
        baseline_path, update_baseline = given.pop("baseline_path"), given.pop("update_baseline_path")
        batch = make_batch(given.pop("targets"), settings=settings, **given)
        baseline = Baseline.load(baseline_path, (*REGISTRY, INTEGRITY_CHECK)) if baseline_path else None
        if update_baseline is not None and batch.shard is not None:
            raise UsageError("--update-baseline records every failure of a run: give it without --shard")
        every_s = still_running_every_s()
        outputs = {**files.options(), "--update-baseline": update_baseline}
        # No output overwrites what the run reads (its folders are listed only when there is
        # an output); `--update-baseline` may refresh the `--baseline` file.
        read = (
            []
            if not baseline_path
            else [Input(baseline_path, "the --baseline file", rewritten_by=frozenset({"--update-baseline"}))]
        )
        written = any(path is not None for path in outputs.values())
        check_report_paths(outputs, inputs_of(batch) + read if written else [])
        verbosity = Verbosity.QUIET if quiet else Verbosity.VERBOSE if verbose else Verbosity.NORMAL
        return cls(
            batch, files, verbosity, given["strict"], given["shard"], baseline, update_baseline, outputs, every_s
        )


def _strict_line(report: Report, strict: bool) -> str | None:
    """With `strict`, how many incomplete checks fail the run; None where none does."""
    incomplete = report.summary[Status.INCOMPLETE.value]
    if not (strict and incomplete):
        return None
    checks = "1 incomplete check fails" if incomplete == 1 else f"{incomplete} incomplete checks fail"
    return f"--strict: {checks} the run"


def _finish(reporters: Reporters, report: Report, files: ReportFiles, github: GitHubLog, status: int) -> int:
    """Tell every reporter the run is over; the exit status: `status`, or 2 after a passing run
    where a report file could not be written (every one is tried; a failed run keeps its status
    1). A file that would overwrite one the run read is a usage error (exit 2), nothing written."""
    try:
        reporters.finish(report)
    except UsageError as exc:
        usage_error(exc, github)
    for failure in files.failures:
        click.echo(_one_line(f"Error: {failure}"), err=True)
        status = status or 2
    return status


def _marking(baseline: Baseline | None, on_report: Callable[[TargetReport], None]) -> Callable[[TargetReport], None]:
    """`on_report` of the targets with the failures `baseline` accepts marked known first."""
    if baseline is None:
        return on_report

    def marked(target: TargetReport) -> None:
        on_report(baseline.apply(target))

    return marked


def _record_run(report: Report, strict: bool, baseline: Baseline | None, console: Console) -> None:
    """What the report records of the run beyond its plan (`runinfo`): --strict and the
    baseline (its digest and its entries); with a baseline, every target marked (those handed
    on are already) and the baseline's stale entries said in one line."""
    if baseline is not None:
        for target in report.targets:
            baseline.apply(target)
        line = baseline.stale_line(report)
        if line is not None:
            print_wrapped(console, Text(line))
    if report.run is not None:
        entries = None if baseline is None else tuple(sorted((e.target, e.check) for e in baseline.entries))
        report.run = replace(
            report.run,
            strict=strict,
            baseline=None if baseline is None else baseline.digest,
            baseline_entries=entries,
        )


def _update_baseline(path: str, report: Report, console: Console, status: int) -> int:
    """Write the baseline of `report`'s failures; the exit status: 0 once it is written (the
    failures are what it records: the run did what was asked), a report's error (2) kept."""
    try:
        entries = write_baseline(path, report)
    except OSError as exc:
        click.echo(_one_line(f"Error: cannot write {path}: {exc.strerror or exc}"), err=True)
        return 2
    print_wrapped(console, Text(f"--update-baseline {visible(path)}: recorded {entries} failure(s)"))
    return 0 if status == 1 else status


@cli.command()
@click.argument("reports", nargs=-1, required=True, metavar="REPORT.json...")
@_report_file_options
@click.option("-q", "--quiet", is_flag=True, help="Print only the targets that failed, and the summary.")
@click.option("-v", "--verbose", is_flag=True, help="Print every check of every target.")
def merge(reports: tuple[str, ...], quiet: bool, verbose: bool, **paths: str | None) -> None:
    """Merge the --json reports of the shards of one run (run --shard K/N --json F) into the
    report that run unsharded gives: its targets in order, its summary and its exit status.

    Shards of different runs (versions, settings, --strict, --baseline) or of different
    contents of a file, a shard missing or given twice, or one whose statuses do not fit its
    checks are refused (exit 2). With GITHUB_ACTIONS=true each failure is also a GitHub
    annotation on the layer's line, as run gives it.
    """
    files = ReportFiles.of(paths)  # the report files' parameters (json_path...), by FORMATS
    try:
        merged = merge_shards([read_shard(path) for path in reports])
        check_report_paths(files.options(), [Input(path, "a report being merged") for path in reports])
    except UsageError as exc:
        usage_error(exc)
    console = make_console(stderr=files.to_stdout)
    github = _github_log(console)  # the shards quote their layers' text: no line is a workflow command
    strict = merged.run is not None and merged.run.strict
    verbosity = Verbosity.QUIET if quiet else Verbosity.VERBOSE if verbose else Verbosity.NORMAL
    reporters = Reporters(
        (ConsoleReporter(console, verbosity, lambda report: [line] if (line := _strict_line(report, strict)) else []),)
        + (github, files)
    )
    for target in merged.targets:
        reporters.target(target)
    sys.exit(_finish(reporters, merged, files, github, merged_status(merged, strict)))


@cli.command("list-checks")
def list_checks() -> None:
    """List every check: its name (as --checks and --skip take it), what it verifies, what it
    applies to, the calls of the layer it judges, and its MATLAB counterpart."""

    console = make_console()
    applies: dict[tuple[Kind, ...], str] = {(Kind.LAYER,): "layers", (Kind.FUNCTION,): "operations"}
    for check in REGISTRY.values():
        console.print(Text(check.name, style="bold"))  # whole, whatever the width: users type it
        about = f"{check.description}. For {applies.get(check.kinds, 'layers and operations')}"
        names = [call.value for call in check.calls]
        about += f"; calls {' and '.join(filter(None, [', '.join(names[:-1]), names[-1]]))}"
        about += f"; MATLAB: {check.matlab}." if check.matlab else "."
        print_wrapped(console, Text(about), 4)
    # Not in the registry (it cannot be selected or skipped: every verdict depends on it), but a
    # name users meet in reports.
    console.print(Text(INTEGRITY_CHECK, style="bold"))
    print_wrapped(console, Text(f"{INTEGRITY_ABOUT}. Always run: it cannot be selected or skipped."), 4)


@cli.command("list-targets")
@click.argument("file")
def list_targets_command(file: str) -> None:
    """List what FILE defines that layercheck checks (layers, operations, function pairs with
    a cache) and the command that checks each. FILE is imported in a worker process, as
    `layercheck run` imports it."""
    try:
        path = Path(file)
        entry = inspect_entry(path)
        if entry.kind is EntryKind.MISSING:
            raise UsageError(f"{file!r}: no such file")
        if entry.kind is not EntryKind.FILE or path.suffix != ".py":
            raise UsageError(f"{file!r} is not a .py file")
    except UsageError as exc:
        usage_error(exc)
    with handling((signal.SIGINT, signal.SIGTERM)):
        listed = list_targets(path)
    for line in describe(listed, file):
        click.echo(line)
    sys.exit(1 if listed.error is not None else 0)


@cli.command()
@click.argument("name")
@click.option(
    "--learnables",
    metavar="A,B",
    help="Learnable attributes (comma-separated); with --function, extra inputs (per-channel parameters).",
)
@click.option("--state", "state_names", metavar="H,C", help="State attributes (comma-separated).")
@click.option("--backward", is_flag=True, help="Write a backward (an operation always has one).")
@click.option(
    "--function",
    "operation",
    is_flag=True,
    help="Write an operation (forward and backward, like deep.DifferentiableFunction).",
)
@click.option(
    "--convention",
    type=click.Choice(CONVENTIONS),
    help="Write in another convention (docs/function-pairs.md, docs/keeps-gradients.md): a function pair with a cache (NAME_forward, "
    "NAME_backward), or a class that keeps its gradients on attributes, with the config that maps them.",
)
@click.option(
    "-o", "--output", "directory", default=".", show_default=True, metavar="DIR", help="Folder to write into."
)
def new(
    name: str,
    learnables: str | None,
    state_names: str | None,
    backward: bool,
    operation: bool,
    convention: str | None,
    directory: str,
) -> None:
    """Write a template layer (or operation) file NAME.py that passes every check as written."""
    try:
        if convention is not None:
            given = [
                flag
                for flag, value in (
                    ("--learnables", learnables),
                    ("--state", state_names),
                    ("--backward", backward),
                    ("--function", operation),
                )
                if value
            ]
            if given:
                raise UsageError(
                    f"{given[0]}: the template of --convention {convention} has its own; give one of the two"
                )
            template = pair_template(name) if convention == "pair" else keeps_gradients_template(name)
        elif operation:
            if state_names:
                raise UsageError("--state: an operation (--function) has no state; write a layer to keep state")
            template = function_template(name, names_of(learnables, "learnables"))
        else:
            template = layer_template(
                name, names_of(learnables, "learnables"), names_of(state_names, "state"), backward
            )
        path = write_new(directory, template)
    except UsageError as exc:
        usage_error(exc)
    # Quoted: the command is meant to be pasted into a shell, and -o may name "my layers/".
    config = f" and {path.with_name(template.config[0])}" if template.config else ""
    click.echo(f"Wrote {path}{config} ({template.what()}). Check it with: {template.command(path)}")
