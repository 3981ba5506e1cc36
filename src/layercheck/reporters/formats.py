"""The report files a command writes, declared once: `--json`, `--junit`, `--html`.

`layercheck run` and `layercheck merge` take an option for each format of `FORMATS` and write
every file asked for the same way (`ReportFiles`, one of their `reporters.reporter.Reporters`).
A new format is one entry here and the module of its writer; the command line makes its
options from this table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from layercheck.reporters.files import to_stdout
from layercheck.reporters.html import write_html
from layercheck.reporters.json_report import write_json
from layercheck.reporters.junit import write_junit
from layercheck.results import Report, TargetReport

__all__ = ["FORMATS", "Format", "ReportFiles", "WriteFailure"]


@dataclass(frozen=True)
class Format:
    """A report file format and its option."""

    option: str  # "--json"
    dest: str  # the command's parameter: "json_path"
    help: str
    write: Callable[[Report, str], None]  # writes the report at a path (`-`: standard output)


FORMATS: tuple[Format, ...] = (
    Format(
        "--json",
        "json_path",
        "Write the report as JSON (- for standard output: the report alone; the rest goes to stderr).",
        write_json,
    ),
    Format("--junit", "junit_path", "Write the report as JUnit XML (- for standard output).", write_junit),
    Format(
        "--html", "html_path", "Write the report as one self-contained HTML page (- for standard output).", write_html
    ),
)


@dataclass(frozen=True)
class WriteFailure:
    """A report file that could not be written."""

    path: str
    error: OSError

    def __str__(self) -> str:
        return f"cannot write {self.path}: {self.error.strerror or self.error}"


@dataclass(frozen=True)
class ReportFiles:
    """The report files asked for: a path (or `-`) by format, in `FORMATS` order. A
    `reporters.reporter.Reporter`: each file is written once the run is over (`finish`), and
    those that could not be are kept in `failures`."""

    paths: Mapping[Format, str]
    # Asked before anything is written; raises UsageError where a file would overwrite one the
    # run read, known only once it is over (the modules its layers imported, their data files).
    before_writing: Callable[[Report], None] | None = None
    failures: list[WriteFailure] = field(default_factory=list)

    @classmethod
    def of(cls, values: Mapping[str, str | None]) -> ReportFiles:
        """From the command's parameters (`json_path`...), those given."""
        return cls({f: path for f in FORMATS if (path := values.get(f.dest)) is not None})

    def options(self) -> dict[str, str | None]:
        """Option name to path, None where not given (for `reporters.files.check_report_paths`)."""
        return {f.option: self.paths.get(f) for f in FORMATS}

    @property
    def to_stdout(self) -> bool:
        """Whether one of them is standard output: what else is printed then goes to stderr."""
        return to_stdout(*self.paths.values())

    def target(self, report: TargetReport) -> None:
        """Nothing as targets finish: a file holds the whole report."""

    def finish(self, report: Report) -> None:
        if self.before_writing is not None:
            self.before_writing(report)
        self.failures[:] = self.write(report)

    def write(self, report: Report) -> list[WriteFailure]:
        """Write each file; every one is tried, and those that could not be written are said."""
        failures = []
        for fmt, path in self.paths.items():
            try:
                fmt.write(report, path)
            except OSError as exc:
                failures.append(WriteFailure(path, exc))
        return failures
