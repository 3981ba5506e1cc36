"""Run the examples of README.md and of every docs/**/*.md page, as the pages show them.

    python docs/examples.py --check [FILES]   # what tests/test_docs_examples.py does
    python docs/examples.py --write [FILES]   # rewrite the output blocks from fresh output

The convention (shared by the README and the docs pages):

- A page runs top to bottom in one fresh temporary folder, its working folder, which starts
  with a copy of the repository's sample_layers/ and configs/; later blocks see the files that
  earlier blocks made.
- ```bash blocks: each line is one command (a trailing backslash joins lines; # lines are
  comments), run with `bash -c`; it must exit 0, or N when it ends with `# exits N`.
- ```python blocks: run as a script (`python -c`, so the page's folder is on sys.path); they
  must exit 0, or N when their first line is `# exits N`.
- `<!-- file: NAME -->` on the line before a block: the block is written to NAME, not run.
- `<!-- not-run: REASON -->`: the block is not run; REASON is one of NOT_RUN_REASONS.
- `<!-- output: COMMAND -->` before a ```text block: the block is COMMAND's stdout and stderr
  at that point of the page (any exit status), compared after `normalize`.
- `<!-- output-without-cupy: COMMAND -->`: the same, for output that says what a machine
  without CuPy lacks; where CuPy is installed the command still runs, its output is not
  compared (nor written), and the page's result says so (`PageResult.uncompared`).
- Any other block is a problem: every example on a page is run, written or excused.

Importable: tests/test_docs_examples.py calls `check_page` for each page of `pages()`.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib.util
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# What a page's folder starts with: the files its examples name (`layercheck run
# sample_layers/prelu.py`, `--config configs/sample_layers.yaml`).
COPIED = ("sample_layers", "configs")

# The only reasons a block may be shown without being run; anything else could hide a wrong example.
NOT_RUN_REASONS = {
    "install": "pip install (CI's rooms install layercheck themselves)",
    "clone": "git clone",
    "gpu": "needs a CUDA device",
    "ci-config": "a CI provider's YAML, shown for copying",
}

COMMAND_TIMEOUT_S = 300  # one command; a hung example must not hang the test suite

# Whether the pages' interpreter has CuPy (CI's room with the real CuPy): blocks that show what a
# machine without it prints are run there, not compared.
CUPY_INSTALLED = importlib.util.find_spec("cupy") is not None

# Variables that change what layercheck or pytest print, or where they keep state, whatever the
# page says: CI's own settings must not leak into the pages' output.
_DROPPED_VARIABLES = ("CI", "FORCE_COLOR", "CLICOLOR_FORCE", "PYTEST_ADDOPTS", "PYTEST_PLUGINS")
_DROPPED_PREFIXES = ("LAYERCHECK_", "GITHUB_", "PYTEST_XDIST_")

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)[^`]*$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*(?P<kind>[a-z][a-z-]*)\s*:\s*(?P<value>.*?)\s*-->\s*$")
_EXITS = re.compile(r"#\s*exits\s+(?P<status>\d+)\s*$")
# Commands that are shown but never run: an install would change the test's own environment.
_EXCUSED_COMMANDS = {
    "install": re.compile(r"\bpip3?\s+install\b"),  # python -m pip install too
    "clone": re.compile(r"\bgit\s+clone\b"),
}
_RUN_LANGUAGES = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python", "py": "python"}


@dataclass(frozen=True)
class Directive:
    """The `<!-- kind: value -->` comment on the line before a block's opening fence."""

    kind: str  # file | not-run | output (anything else is a problem)
    value: str
    line: int  # 1-based


@dataclass(frozen=True)
class Block:
    """A fenced block of a page: its language, its text and where it is."""

    language: str
    text: str
    indent: str  # of the fence: a block inside a list item keeps its indentation when rewritten
    line: int  # 1-based line of the opening fence
    body: slice  # the indices of its content lines in the page's lines
    directive: Directive | None


@dataclass(frozen=True)
class Problem:
    """A wrong example: the page, the line of the block (or command) and what is wrong."""

    page: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{_shown(self.page)}:{self.line}: {self.message}"


@dataclass
class PageResult:
    page: Path
    problems: list[Problem] = field(default_factory=list)
    rewritten: str | None = None  # the page with its output blocks rewritten (--write), when changed
    uncompared: list[str] = field(default_factory=list)  # output blocks run but not compared, and why


@dataclass(frozen=True)
class Command:
    """A command of a ```bash block, or a ```python block, with the exit status the page
    expects of it."""

    text: str  # the bash command, or the Python source
    line: int
    expected: int
    python: bool = False

    @property
    def argv(self) -> list[str]:
        return [sys.executable, "-c", self.text] if self.python else ["bash", "-c", self.text]

    @property
    def label(self) -> str:
        return "the python block" if self.python else f"`{self.text}`"


# -- reading a page ---------------------------------------------------------------------------


def blocks(text: str) -> list[Block]:
    """The fenced blocks of a Markdown page, in order."""
    lines = text.splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        end = i + 1
        while end < len(lines) and not _closes(lines[end], fence):
            end += 1
        body = [line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines[i + 1 : end]]
        found.append(
            Block(
                language=opening["info"].lower(),
                text="\n".join(body) + ("\n" if body else ""),
                indent=indent,
                line=i + 1,
                body=slice(i + 1, end),
                directive=_directive(lines, i),
            )
        )
        i = end + 1
    return found


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and set(stripped) == {fence[0]}


def _directive(lines: list[str], fence_index: int) -> Directive | None:
    if fence_index == 0:
        return None
    match = _DIRECTIVE.match(lines[fence_index - 1])
    return Directive(match["kind"], match["value"], fence_index) if match else None


def commands(block: Block) -> Iterator[Command]:
    """The commands of a ```bash block: one a line, `\\` continuing a line, # lines skipped."""
    pending: list[str] = []
    start = 0
    for number, line in enumerate(block.text.splitlines(), start=block.line + 1):
        if not pending:
            start = number
            if not line.strip() or line.lstrip().startswith("#"):
                continue
        if line.endswith("\\"):
            pending.append(line[:-1])
            continue
        pending.append(line)
        text = " ".join(part.strip() for part in pending)
        pending = []
        exits = _EXITS.search(text)
        yield Command(text, start, int(exits["status"]) if exits else 0)
    if pending:
        yield Command(" ".join(part.strip() for part in pending), start, 0)


# -- normalization ----------------------------------------------------------------------------


def _temporary_roots() -> list[str]:
    roots = {tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir())}
    return sorted(roots, key=len, reverse=True)  # /private/var/... before /var/... (macOS)


_DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e-?\d+)?\s?(?:s|ms|µs|us|seconds?)\b")
_JSON_DURATION = re.compile(r'("\w*_s"\s*:\s*)-?\d+(?:\.\d+)?(?:e-?\d+)?')
_PID = re.compile(r"\b(pid|PID)([ =:]\s*)\d+")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?")
_CLOCK = re.compile(r"\b\d{2}:\d{2}:\d{2}(?:\.\d+)?\b")
# The lines of ^ and ~ under the failing expression of a traceback: Python 3.11 and later print
# them, 3.10 does not.
_CARETS = re.compile(r"^[ \t]*[~^]+[ \t]*$", re.M)


def normalize(text: str) -> str:
    """The output with what changes from run to run replaced, for comparing two runs.

    Replaced: paths below the temporary folder (the page's folder has a random name) by
    `<tmp>`, durations (`0.42 s`, `0.42s`, `"duration_s": 0.42`) by `<duration>`, process ids,
    dates and clock times; a traceback's lines of carets (Python 3.11 and later) are dropped. Then every run of whitespace becomes one space: layercheck wraps its
    lines at COLUMNS, so where a line breaks depends on the width of the durations in it.
    """
    for root in _temporary_roots():
        text = re.sub(re.escape(root) + r"/[^/\s\"':]+", "<tmp>", text)
    text = _JSON_DURATION.sub(r"\1<duration>", text)
    text = _DURATION.sub("<duration>", text)
    text = _PID.sub(r"\1\2<pid>", text)
    text = _DATE.sub("<date>", text)
    text = _CLOCK.sub("<time>", text)
    text = _CARETS.sub("", text)
    return " ".join(text.split())


# A number with a fraction or an exponent, not inside a word or a version (`3.13.0`, `sha1e5`).
_FLOAT = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d+(?:e[-+]?\d+)?|\d+e[-+]?\d+)(?![\w.]*\d)", re.I)
# How far a float shown may be from the fresh one. Some depend on the machine's round-off (the
# gradient check's allowance adds the round-off it measures; BLAS and NumPy's SIMD loops sum in
# another order), so a page made with one NumPy shows 1.61e-07 where another computes 1.64e-07,
# and one machine's CPU 3.32e-07 where another's gives 3.6e-07 (the allowance of a small LSTM's
# 18 peephole weights, measured from few outputs); a wrong number is off by far more. Integers
# (counts, indices, sizes) and every word must be equal.
FLOAT_RTOL = 0.15


def same_output(shown: str, fresh: str) -> bool:
    """`shown` and `fresh` are the same output: equal once normalized, but for floats, which
    may differ by FLOAT_RTOL relatively."""
    shown, fresh = normalize(shown), normalize(fresh)
    if shown == fresh:
        return True
    if _FLOAT.split(shown) != _FLOAT.split(fresh):
        return False
    pairs = zip(_FLOAT.findall(shown), _FLOAT.findall(fresh))
    return all(abs(float(a) - float(b)) <= FLOAT_RTOL * max(abs(float(a)), abs(float(b))) for a, b in pairs)


def _presented(output: str, folder: Path) -> str:
    """Output as a page shows it: the page's random folder is `<tmp>`; no trailing blanks."""
    for path in sorted({str(folder), os.path.realpath(folder)}, key=len, reverse=True):
        output = output.replace(path, "<tmp>")
    return "\n".join(line.rstrip() for line in output.rstrip("\n").splitlines()) + "\n"


# -- running a page ---------------------------------------------------------------------------


def environment() -> dict[str, str]:
    """What every example runs with: the test interpreter's `layercheck`, `python` and `pytest`
    first on PATH, a fixed width, no colour, no CI variables, and no GPU (`CUDA_VISIBLE_DEVICES`
    empty), so that the output a page shows is the same on every machine, a GPU one included."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in _DROPPED_VARIABLES and not name.startswith(_DROPPED_PREFIXES)
    }
    env.update(
        COLUMNS="100",
        NO_COLOR="1",
        TERM="dumb",
        CUDA_VISIBLE_DEVICES="",
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
    )
    return env


@dataclass
class _Page:
    """A page being run: its folder, its environment and what it found so far."""

    path: Path
    folder: Path
    env: dict[str, str]
    write: bool
    result: PageResult
    # Output blocks to rewrite (--write): their content lines and the fresh lines, applied at the
    # end, last first, so that a block of another length does not move the ones not yet replaced.
    rewrites: list[tuple[slice, list[str]]] = field(default_factory=list)

    def problem(self, line: int, message: str) -> None:
        self.result.problems.append(Problem(self.path, line, message))

    def run(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        plain = _plain_layercheck(argv)
        if plain is not None:
            return run_in_process(plain, self.folder, self.env, merged=True, prog_name="layercheck")
        return subprocess.run(
            argv,
            cwd=self.folder,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # interleaved as a terminal shows them
            text=True,
            errors="replace",
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )


# A command that is `layercheck ARGS` alone (no pipe, redirection, variable or pattern) runs in
# this process, as `python -m layercheck ARGS` would (`run_in_process`): its checks still run in
# worker processes, and it costs no interpreter and no forkserver of its own, which were most
# of a page's time. Where CuPy is installed, every command has a process of its own: CuPy reads
# the pages' CUDA_VISIBLE_DEVICES="" only as it is imported.
_PLAIN_LAYERCHECK = re.compile(r"""layercheck(?:\s+(?:[\w./:=,@%+-]|'[^']*'|"[^"$`\\]*")+)*\s*(?:#.*)?""")


def _plain_layercheck(argv: Sequence[str]) -> list[str] | None:
    """The arguments of a bash command that runs `layercheck ARGS` alone; None for any other."""
    if CUPY_INSTALLED or len(argv) != 3 or argv[:2] != ["bash", "-c"] or not _PLAIN_LAYERCHECK.fullmatch(argv[2]):
        return None
    return shlex.split(argv[2], comments=True)[1:]


def run_in_process(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    *,
    merged: bool = False,
    prog_name: str = "python -m layercheck",
) -> subprocess.CompletedProcess[str]:
    """`layercheck.cli.invoke(argv)` run in this process as `prog_name ARGV` runs: in
    `cwd`, with `env` as the environment, its exit status and what it wrote on stdout and stderr
    (`merged`: both in stdout, as a terminal interleaves them), a traceback of layercheck's own
    on stderr with status 1. The working folder and the environment are put back after."""
    from layercheck.cli import invoke

    out = _Pipe()
    err = out if merged else _Pipe()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = invoke(list(argv), prog_name=prog_name)
            except SystemExit as exc:
                code = _exit_status(exc.code)
            except BaseException:  # noqa: BLE001 - what the interpreter would print and exit 1 with
                traceback.print_exc()
                code = 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["layercheck", *argv], code, out.text(), "" if merged else err.text())


class _Pipe(io.TextIOWrapper):
    """What a process writes into a pipe, read as `subprocess.run(text=True)` reads it: UTF-8
    with a binary buffer under it (`--json -` writes the report there), lines ended by \\n,
    \\r\\n or \\r."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="surrogateescape", write_through=True)

    def text(self) -> str:
        self.flush()
        data: str = self.buffer.getvalue().decode("utf-8", errors="replace")  # type: ignore[attr-defined]
        return data.replace("\r\n", "\n").replace("\r", "\n")


def _exit_status(code: object) -> int:
    """The status `sys.exit(code)` gives a process (a message is printed on stderr, status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def check_page(path: Path, *, write: bool = False) -> PageResult:
    """Run every example of the page at `path`; with `write`, rewrite its output blocks."""
    text = path.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="layercheck-docs-") as scratch:
        folder = Path(scratch)
        for name in COPIED:
            shutil.copytree(REPO / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        page = _Page(path, folder, environment(), write, PageResult(path))
        _stray_directives(page, text)
        for block in blocks(text):
            _run_block(page, block)
    if page.rewrites:
        lines = text.splitlines()
        for body, fresh in reversed(page.rewrites):
            lines[body] = fresh
        page.result.rewritten = "\n".join(lines) + "\n"
    return page.result


def _stray_directives(page: _Page, text: str) -> None:
    """A directive must sit on the line right before its fence: one a blank line away would
    leave its block run (a `pip install` excused as not-run) or unwritten."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if _DIRECTIVE.match(line) and (index + 1 == len(lines) or not _FENCE.match(lines[index + 1])):
            page.problem(index + 1, "a directive that is not on the line right before a block's opening fence")


def _run_block(page: _Page, block: Block) -> None:
    directive = block.directive
    if directive is None:
        if block.language in _RUN_LANGUAGES:
            _execute(page, block)
        else:
            page.problem(
                block.line,
                f"a ```{block.language or '(no language)'} block that is neither run nor written: precede it "
                "with <!-- file: NAME -->, <!-- output: COMMAND --> (a ```text block) or <!-- not-run: REASON -->",
            )
    elif directive.kind == "file":
        _write_file(page, block, directive.value)
    elif directive.kind == "not-run":
        if directive.value not in NOT_RUN_REASONS:
            allowed = ", ".join(NOT_RUN_REASONS)
            page.problem(directive.line, f"not-run reason {directive.value!r} is not one of {allowed}")
    elif directive.kind == "output":
        _compare_output(page, block, directive.value)
    elif directive.kind == "output-without-cupy":
        _compare_output(page, block, directive.value, compare=not CUPY_INSTALLED)
        if CUPY_INSTALLED:
            page.result.uncompared.append(f"{_shown(page.path)}:{block.line}: CuPy is installed here")
    else:
        page.problem(
            directive.line,
            f"unknown directive {directive.kind!r}: use file, not-run, output or output-without-cupy",
        )


def _execute(page: _Page, block: Block) -> None:
    if _RUN_LANGUAGES[block.language] == "python":
        first = block.text.splitlines()[0] if block.text else ""
        exits = _EXITS.fullmatch(first.strip())
        _expect(page, Command(block.text, block.line, int(exits["status"]) if exits else 0, python=True))
        return
    for command in commands(block):
        excuse = _needs_excuse(command.text)
        if excuse is not None:  # never run: it would change the environment the tests run in
            page.problem(command.line, f"`{command.text}` runs in a <!-- not-run: {excuse} --> block")
        else:
            _expect(page, command)


def _needs_excuse(command: str) -> str | None:
    """The not-run reason a command needs whatever its block: one that installs or clones."""
    for reason, pattern in _EXCUSED_COMMANDS.items():
        if pattern.search(command):
            return reason
    return None


def _expect(page: _Page, command: Command) -> None:
    try:
        proc = page.run(command.argv)
    except subprocess.TimeoutExpired:
        page.problem(command.line, f"{command.label} did not finish in {COMMAND_TIMEOUT_S} s")
        return
    if proc.returncode != command.expected:
        tail = "\n".join(proc.stdout.rstrip().splitlines()[-30:])
        expected = f"{command.expected}" + ("" if command.expected else " (add `# exits N` if that is intended)")
        page.problem(
            command.line, f"{command.label} exited {proc.returncode}, expected {expected}; its output:\n{tail}"
        )


def _write_file(page: _Page, block: Block, name: str) -> None:
    target = (page.folder / name).resolve()
    if not name or Path(name).is_absolute() or not target.is_relative_to(page.folder.resolve()):
        page.problem(block.line, f"file {name!r}: give a path inside the page's folder")
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(block.text, encoding="utf-8")


def _compare_output(page: _Page, block: Block, command: str, *, compare: bool = True) -> None:
    """Run `command`; unless not to `compare`, the block must be its output (or, with --write,
    becomes it)."""
    if block.language != "text":
        page.problem(block.line, f"an output block is a ```text block, not ```{block.language or '(no language)'}")
        return
    try:
        proc = page.run(["bash", "-c", command])
    except subprocess.TimeoutExpired:
        page.problem(block.line, f"`{command}` did not finish in {COMMAND_TIMEOUT_S} s")
        return
    fresh = _presented(proc.stdout, page.folder)
    if not compare or same_output(block.text, fresh):
        return  # the block stays as it is: its durations are as real as the fresh ones
    if page.write:
        page.rewrites.append((block.body, [block.indent + line if line else line for line in fresh.splitlines()]))
        return
    diff = difflib.unified_diff(block.text.splitlines(), fresh.splitlines(), "shown", "fresh", lineterm="", n=1)
    page.problem(
        block.line,
        f"the output of `{command}` differs from the block (python docs/examples.py --write "
        f"{_shown(page.path)} rewrites it):\n" + "\n".join(diff),
    )


# -- the command line ---------------------------------------------------------------------------


def pages() -> list[Path]:
    """Every page the convention covers: README.md and the Markdown pages below docs/."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="fail when an example fails or an output block is stale")
    mode.add_argument("--write", action="store_true", help="rewrite the output blocks that differ from fresh output")
    parser.add_argument("files", nargs="*", type=Path, help="pages (default: README.md and docs/**/*.md)")
    options = parser.parse_args(argv)
    failed = False
    for path in options.files or pages():
        result = check_page(path, write=options.write)
        for problem in result.problems:
            print(problem, file=sys.stderr)
        failed = failed or bool(result.problems)
        if result.rewritten is not None:
            path.write_text(result.rewritten, encoding="utf-8")
            print(f"rewrote the output blocks of {_shown(path)}")
        elif not result.problems:
            print(f"{_shown(path)}: every example runs as shown")
        for note in result.uncompared:
            print(f"{note}: its output was not compared")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
