"""The command line: parses and validates everything up front, then wires library calls."""

from __future__ import annotations

import sys
import time

import click

from . import __version__
from .api import make_options
from .arrays import DTYPES
from .checks import REGISTRY
from .errors import TargetError, UsageError
from .layout import parse_layout, refuse_if_too_large
from .loading import LoadFailure, collect_targets, parse_args
from .reporters.console import ConsoleReporter, make_console
from .reporters.json_report import write_json
from .results import Report, TargetReport
from .runner import run_target, select_checks


def _names(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    return tuple(n.strip() for n in text.split(",") if n.strip())


def _dtypes(text: str) -> tuple[str, ...]:
    dtypes = _names(text) or ()
    bad = [d for d in dtypes if d not in DTYPES]
    if bad or not dtypes:
        raise UsageError(f"--dtype {text!r}: choose from {', '.join(DTYPES)} (comma-separated)")
    return dtypes


def _layouts_for(target, cli_layouts):
    """Layouts from the command line, else the class attribute `example_layout`."""
    if cli_layouts:
        return cli_layouts
    example = target.example_layout
    if example is None:
        raise TargetError(
            f"no layout for {target.label}: pass --layout SIZES:FORMAT (once per input) "
            "or set the class attribute example_layout"
        )
    try:
        return [parse_layout(example)] if isinstance(example, (str, dict)) else [parse_layout(e) for e in example]
    except UsageError as exc:
        raise TargetError(f"example_layout of {target.name} is invalid: {exc}") from None


def main() -> None:
    """The console script: click's own usage errors become one line and exit status 2."""
    try:
        code = cli.main(standalone_mode=False)
    except click.UsageError as exc:
        click.echo(f"Error: {_one_line(exc.format_message())}", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        click.echo(f"Error: {_one_line(exc.format_message())}", err=True)
        sys.exit(exc.exit_code)
    except click.Abort:
        sys.exit(1)
    sys.exit(code or 0)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def usage_error(exc: UsageError) -> None:
    click.echo(f"Error: {_one_line(exc)}", err=True)
    sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="layercheck")
def cli():
    """Validate hand-written neural-network layers and their backward passes."""


@cli.command()
@click.argument("targets", nargs=-1, required=True)
@click.option("--layout", "layouts", multiple=True, metavar="SIZES:FORMAT", help="Input layout, once per input (e.g. 24,24,20,128:SSCB).")
@click.option("--arg", "args", multiple=True, metavar="NAME=VALUE", help="Constructor argument (value read as a YAML scalar).")
@click.option("--checks", metavar="NAMES", help="Run only these checks (comma-separated).")
@click.option("--skip", metavar="NAMES", help="Skip these checks (comma-separated).")
@click.option("--dtype", "dtype_text", default="float64,float32", show_default=True, help="Precisions to test.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random draw.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), help="Write the report as JSON.")
@click.option("--quiet", is_flag=True, help="Print only failures and summaries.")
def run(targets, layouts, args, checks, skip, dtype_text, seed, json_path, quiet):
    """Check the layers in TARGET (path.py, path.py:ClassName, or a folder)."""
    try:
        options = make_options(dtypes=_dtypes(dtype_text), seed=seed, checks=_names(checks), skip=_names(skip) or ())
        select_checks(options)
        cli_layouts = [parse_layout(text) for text in layouts]
        refuse_if_too_large(cli_layouts)
        ctor_args = parse_args(args)
        found = [item for spec in targets for item in collect_targets(spec)]
    except UsageError as exc:
        usage_error(exc)

    console = make_console()
    reporter = ConsoleReporter(console, quiet=quiet)
    report = Report()
    start = time.perf_counter()
    for item in found:
        target_report = _check_one(item, cli_layouts, ctor_args, options)
        reporter.target(target_report)
        report.targets.append(target_report)
    report.duration_s = time.perf_counter() - start
    reporter.overall(report)
    if json_path:
        write_json(report, json_path)
    sys.exit(0 if report.ok else 1)


def _check_one(item, cli_layouts, ctor_args, options) -> TargetReport:
    if isinstance(item, LoadFailure):
        return TargetReport(item.label, error=str(item.error), traceback=item.error.traceback)
    try:
        layouts = _layouts_for(item, cli_layouts)
        refuse_if_too_large(layouts)
        factory = item.factory(ctor_args)
    except (TargetError, UsageError) as exc:
        return TargetReport(item.label, kind=item.kind, error=str(exc), traceback=getattr(exc, "traceback", ""))
    return run_target(item.label, factory, layouts, options, kind=item.kind)


@cli.command("list-checks")
def list_checks():
    """List every check: name, what it verifies, what it applies to, MATLAB counterpart."""
    from rich.table import Table

    console = make_console()
    table = Table(box=None, show_edge=False, pad_edge=False)
    table.add_column("Check", no_wrap=True)
    table.add_column("Verifies")
    table.add_column("For", no_wrap=True)
    table.add_column("MATLAB counterpart", no_wrap=True)
    applies = {("layer",): "layers", ("function",): "operations"}
    for check in REGISTRY.values():
        table.add_row(check.name, check.description, applies.get(check.kinds, "both"), check.matlab or "-")
    console.print(table)
