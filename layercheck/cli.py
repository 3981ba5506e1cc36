"""The command line: parses and validates everything up front, then wires library calls.

Option texts become values here (`--seed 3` is 3, `--domain 0:` is (0, None)); the values are
validated by `settings.options.parse_settings`, as config files and the API are, so a bad
value reads the same from all three, with the option's name as its key path.
"""

from __future__ import annotations

import signal
import sys
from typing import Any

import click

from layercheck.checks import REGISTRY
from layercheck.contract.layout import parse_layout
from layercheck.contract.loading import parse_args
from layercheck.errors import UsageError
from layercheck.interrupts import Interrupted, exit_status, handling
from layercheck.machine import refuse_if_too_large
from layercheck.numerics.arrays import DTYPES
from layercheck.numerics.devices import require_usable_gpu
from layercheck.reporters.console import ConsoleReporter, ProgressBar, Verbosity, make_console, print_wrapped
from layercheck.reporters.files import check_report_paths
from layercheck.reporters.json_report import write_json
from layercheck.reporters.junit import write_junit
from layercheck.results import Kind, Report, Status
from layercheck.running import reaping
from layercheck.running.batch import Batch, Request, requests_from_config, requests_from_specs, run_batch
from layercheck.running.cache import CACHE_DIR, CACHE_DIR_ENV, cache_folder
from layercheck.running.integrity import INTEGRITY_ABOUT, INTEGRITY_CHECK
from layercheck.running.isolation import default_memory_cap
from layercheck.safetext import bounded, visible
from layercheck.settings.config import load_config
from layercheck.settings.options import DEVICES, parse_jobs, parse_memory, parse_settings, parse_shard
from layercheck.templates import function_template, layer_template, names_of, write_new
from layercheck.version import __version__

__all__ = ["cli", "list_checks", "main", "new", "run", "usage_error"]


def main() -> None:
    """The console script: click's own usage errors become one line and exit status 2."""
    # This process is layercheck's own (not a user's calling `cli` or the API): it adopts what
    # a layer leaves behind once it has killed the forkserver, and kills that too
    # (`reaping.sweep_adopted`).
    reaping.adopt_orphans()
    try:
        code = cli.main(standalone_mode=False)
    except click.UsageError as exc:
        click.echo(f"Error: {_one_line(exc.format_message())}", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        click.echo(f"Error: {_one_line(exc.format_message())}", err=True)
        sys.exit(exc.exit_code)
    except click.Abort as exc:  # click turns a KeyboardInterrupt into Abort
        cause = exc.__cause__ or exc.__context__
        signum = cause.signum if isinstance(cause, Interrupted) else signal.SIGINT
        if isinstance(cause, KeyboardInterrupt):
            click.echo(f"interrupted ({signal.Signals(signum).name})", err=True)
            sys.exit(exit_status(signum))
        sys.exit(1)
    sys.exit(code or 0)


def _one_line(text: object) -> str:
    """A message that may quote a path, a config value or a target the user gave: one line,
    bounded, with what a terminal would interpret spelled out."""
    return visible(bounded(" ".join(str(text).split())))


def usage_error(exc: UsageError) -> None:
    click.echo(f"Error: {_one_line(exc)}", err=True)
    sys.exit(2)


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


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    invoke_without_command=True,
    epilog=_EXAMPLES,
)
@click.version_option(__version__, prog_name="layercheck")
@click.pass_context
def cli(ctx):
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
    "--arg", "args", multiple=True, metavar="NAME=VALUE", help="Constructor argument (value read as a YAML scalar)."
)
@click.option(
    "--config",
    "config_path",
    metavar="FILE",
    help="YAML defaults and targets (the README's Config section shows every key).",
)
@click.option("--checks", metavar="NAMES", help="Run only these checks (comma-separated).")
@click.option("--skip", metavar="NAMES", help="Skip these checks (comma-separated).")
@click.option(
    "--dtype",
    "dtype_text",
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
    "domains",
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
@click.option(
    "--shard", "shard_text", metavar="K/N", help="Check only the K-th of N shares of the targets (CI matrix)."
)
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), help="Write the report as JSON.")
@click.option(
    "--junit", "junit_path", type=click.Path(dir_okay=False, writable=True), help="Write the report as JUnit XML."
)
@click.option("-q", "--quiet", is_flag=True, help="Print only the targets that failed, and the summary.")
@click.option("-v", "--verbose", is_flag=True, help="Print every check of every target.")
@click.option(
    "--strict", is_flag=True, help="An incomplete check fails the run (exit 1): for a CI gate that must decide."
)
@click.option("--no-cache", is_flag=True, help="Check every target, and store nothing in the result cache.")
@click.option(
    "--cache-dir",
    metavar="DIR",
    help=f"Folder of the result cache  [default: ${CACHE_DIR_ENV}, else {CACHE_DIR} of the working folder]",
)
def run(
    targets,
    layouts,
    args,
    config_path,
    checks,
    skip,
    dtype_text,
    seed,
    device,
    domains,
    jobs,
    timeout,
    max_memory,
    shard_text,
    json_path,
    junit_path,
    quiet,
    verbose,
    strict,
    no_cache,
    cache_dir,
):
    """Check the layers in TARGET (path.py, path.py:ClassName, or a folder), or those of --config.

    Exit status: 0 when every check passed, was skipped or was incomplete (with --strict:
    passed or skipped); 1 when a check failed or a target could not be checked (with --strict:
    or a check was incomplete); 2 for a usage error; 130 / 143 when interrupted by SIGINT /
    SIGTERM.
    """
    # SIGINT and SIGTERM stop the workers, write what finished and exit 130 / 143.
    click.get_current_context().with_resource(handling((signal.SIGINT, signal.SIGTERM)))
    try:
        check_names = tuple(REGISTRY)
        config = load_config(config_path, check_names=check_names) if config_path else None
        given = {
            "dtypes": dtype_text,
            "seed": _number(seed),
            "timeout": _number(timeout),
            "device": device,
            "checks": checks,
            "skip": skip,
            "input_domain": _domains(domains),
        }
        settings = parse_settings(given, _OPTION_NAMES, check_names=check_names)
        if settings.device == "gpu":
            require_usable_gpu()  # refused with the reason before any worker starts
        cli_layouts = tuple(parse_layout(text) for text in layouts)
        refuse_if_too_large(list(cli_layouts))
        jobs = parse_jobs(jobs)
        batch = Batch(
            requests=tuple(_requests(targets, config)),
            config=config,
            layouts=cli_layouts,
            args=parse_args(args),
            settings=settings,
            jobs=jobs,
            max_memory=_memory_cap(max_memory, jobs),
            shard=_shard(shard_text),
            cache=cache_folder(no_cache, cache_dir),
        )
        check_report_paths({"--json": json_path, "--junit": junit_path})
    except UsageError as exc:
        usage_error(exc)

    console = make_console()
    verbosity = Verbosity.QUIET if quiet else Verbosity.VERBOSE if verbose else Verbosity.NORMAL
    reporter = ConsoleReporter(console, verbosity)
    interrupted: Interrupted | None = None
    try:
        with ProgressBar(console) as bar:
            report = run_batch(batch, on_report=reporter.target, on_progress=bar.update)
    except UsageError as exc:  # known once modules are imported: a folder without any layer
        usage_error(exc)
    except Interrupted as exc:  # the workers are stopped; what finished is reported
        interrupted, report = exc, exc.report or Report()
    if not report.targets and interrupted is None:
        console.print(f"No targets in shard {shard_text}.")
    reporter.overall(report)
    status = 0 if report.ok else 1
    incomplete = report.summary[Status.INCOMPLETE.value]
    if strict and incomplete:
        checks = "1 incomplete check fails" if incomplete == 1 else f"{incomplete} incomplete checks fail"
        console.print(f"--strict: {checks} the run")
        status = 1
    for path, write in ((json_path, write_json), (junit_path, write_junit)):
        if path:
            try:
                write(report, path)
            except OSError as exc:  # every report is tried; a failed run keeps its status 1
                click.echo(_one_line(f"Error: cannot write {path}: {exc.strerror or exc}"), err=True)
                status = status or 2
    if interrupted is not None:
        name = signal.Signals(interrupted.signum).name
        click.echo(f"interrupted ({name}): targets that did not finish are reported as interrupted", err=True)
        status = exit_status(interrupted.signum)
    sys.exit(status)


def _requests(targets, config) -> list[Request]:
    if targets:
        return requests_from_specs(targets)
    if config is None:
        raise UsageError("give a TARGET (path.py, path.py:ClassName or a folder) or --config FILE")
    if not config.targets:
        raise UsageError(
            f"{config.source}: targets: the config lists no targets; give them there or on the command line"
        )
    return requests_from_config(config)


# The option that gives each setting, named in messages as a config names its key path.
_OPTION_NAMES = {
    "dtypes": "--dtype",
    "seed": "--seed",
    "timeout": "--timeout",
    "device": "--device",
    "checks": "--checks",
    "skip": "--skip",
    "input_domain": "--domain",
}


def _number(text: str | None) -> Any:
    """The int or float an option's text spells, else the text: `parse_settings` judges it."""
    if text is None:
        return None
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            pass
    return text


def _domains(texts: tuple[str, ...]) -> Any:
    """`--domain LOW:HIGH`: once, one interval for every input; repeated, one per input."""
    if not texts:
        return None
    domains = tuple(_domain(text) for text in texts)
    return domains[0] if len(domains) == 1 else domains


def _domain(text: str) -> tuple[float | None, float | None]:
    """`LOW:HIGH` as numbers (None for an empty side); `parse_settings` checks the interval."""
    low_text, sep, high_text = text.partition(":")
    try:
        if not sep:
            raise ValueError
        low, high = (float(t) if t.strip() else None for t in (low_text, high_text))
    except ValueError:
        raise UsageError(
            f"--domain {text!r}: give LOW:HIGH with LOW < HIGH, an empty side for unbounded (e.g. 0: or -1:1)"
        ) from None
    return low, high


def _memory_cap(text: str | None, jobs: int) -> int | None:
    """`--max-memory`, validated by `settings.options.parse_memory`; unset, the default share."""
    return default_memory_cap(jobs) if text is None else parse_memory(text, "--max-memory")


def _shard(text: str | None) -> tuple[int, int] | None:
    return None if text is None else parse_shard(text, "--shard")


@cli.command("list-checks")
def list_checks():
    """List every check: its name (as --checks and --skip take it), what it verifies, what it
    applies to, and its MATLAB counterpart."""
    from rich.text import Text

    console = make_console()
    applies: dict[tuple[Kind, ...], str] = {(Kind.LAYER,): "layers", (Kind.FUNCTION,): "operations"}
    for check in REGISTRY.values():
        console.print(Text(check.name, style="bold"))  # whole, whatever the width: users type it
        about = f"{check.description}. For {applies.get(check.kinds, 'layers and operations')}"
        about += f"; MATLAB: {check.matlab}." if check.matlab else "."
        print_wrapped(console, Text(about), 4)
    # Not in the registry (it cannot be selected or skipped: every verdict depends on it), but a
    # name users meet in reports.
    console.print(Text(INTEGRITY_CHECK, style="bold"))
    print_wrapped(console, Text(f"{INTEGRITY_ABOUT}. Always run: it cannot be selected or skipped."), 4)


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
    "-o", "--output", "directory", default=".", show_default=True, metavar="DIR", help="Folder to write into."
)
def new(name, learnables, state_names, backward, operation, directory):
    """Write a template layer (or operation) file NAME.py that passes every check as written."""
    try:
        if operation:
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
    click.echo(f"Wrote {path} (class {template.class_name}). Check it with: layercheck run {path}")
