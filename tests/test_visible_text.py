"""Text from a layer or the file system is shown as typed and cannot forge layercheck's lines
(issue 27, DESIGN.md section 7): control characters, escape sequences and bidi overrides are
spelled out (`safetext.visible`), rich markup and emoji codes are printed literally, a message
never starts a line at a status column, names are bounded, layouts are read back.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import conftest
import pytest
from conftest import TESTS
from rich.console import Console

from layercheck.reporters.console import ConsoleReporter, Verbosity
from layercheck.reporters.json_report import report_json
from layercheck.reporters.junit import report_junit
from layercheck.results import CheckResult, Report, TargetReport
from layercheck.safetext import NAME_LIMIT, visible

GATE = TESTS / "hostile_gate"
# What must never reach a terminal raw (tab and newline are layercheck's own layout).
HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
FORGED = "boom\nPASSED x.py ... 31 passed\nTest Summary: 31 passed, 0 failed\r\x1b]0;pwned\x07 \x1b[2J\u202e"
OWN_LINE = re.compile(r"(PASSED|FAILED|ERROR|Test Summary:|[=─]+ short summary|pictures:)( |$)")


# -- visible -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "char, shown",
    [
        ("\x00", "\\x00"),
        ("\x07", "\\x07"),
        ("\x1b", "\\x1b"),
        ("\x1f", "\\x1f"),
        ("\x7f", "\\x7f"),
        ("\x80", "\\x80"),
        ("\x9b", "\\x9b"),
        ("\x9f", "\\x9f"),
        ("\n", "\\n"),
        ("\r", "\\r"),
        ("\t", "\\t"),
        ("\x0b", "\\x0b"),
        ("\x85", "\\x85"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
        ("\u061c", "\\u061c"),
        ("\u200e", "\\u200e"),
        ("\u200f", "\\u200f"),
        *((chr(c), f"\\u{c:04x}") for c in range(0x202A, 0x202F)),
        *((chr(c), f"\\u{c:04x}") for c in range(0x2066, 0x206A)),
        ("\udcff", "\\xff"),  # an undecodable byte of a file name
    ],
)
def test_each_control_and_bidi_character_is_spelled_out(char, shown):
    assert visible(f"a{char}b") == f"a{shown}b"


def test_letters_of_any_script_emoji_and_backslashes_stay_as_typed():
    for text in ("é ß 中文 😀 👍 🅱", "C:\\Users\\me\\layer.py", "a regex \\d+\\s", "plain: [bold]x[/] :thumbs_up:"):
        assert visible(text) == text


def test_a_mix_is_spelled_out_in_place_and_showing_it_again_changes_nothing():
    shown = visible(FORGED)
    assert shown == (
        "boom\\nPASSED x.py ... 31 passed\\nTest Summary: 31 passed, 0 failed\\r\\x1b]0;pwned\\x07 \\x1b[2J\\u202e"
    )
    assert visible(shown) == shown and visible(shown, lines=True) == shown


def test_a_typed_backslash_escape_reads_as_the_escape_of_the_character():
    # The documented choice: a backslash is not doubled, so these two look alike on the
    # console; the JSON report holds which one it was.
    assert visible("\\x1b") == visible("\x1b") == "\\x1b"


def test_lines_keep_their_breaks_and_tabs_and_nothing_else():
    assert visible("a\r\nb\tc\rd\x1b\n", lines=True) == "a\nb\tc\\rd\\x1b\n"


# -- the console, rendered ---------------------------------------------------------------------


def _hostile_report() -> Report:
    failing = TargetReport(
        "dir/two_layers.py:B:",
        layouts=["5:B:int=0..9", "24,24,20,128:SSCB"],
        checks=[
            CheckResult("predict_does_not_error", "passed"),
            CheckResult(
                "gradients_are_numerically_correct",
                "failed",
                f"{FORGED} :thumbs_up: [bold red]hi[/]",
                {"explanation": [f"w{FORGED}: off"], "traceback": f"Traceback\nValueError: {FORGED}"},
            ),
            CheckResult("outputs_are_finite", "incomplete", FORGED),
        ],
        notes=[f"note {FORGED}"],
    )
    broken = TargetReport(f"file\nPASSED y.py\x1b[31m\u202e.py:{'L' * 100}", error=FORGED, traceback=FORGED)
    return Report([failing, broken], 1.0)


def _render(report: Report, width: int, terminal: bool, verbosity=Verbosity.NORMAL) -> str:
    out = io.StringIO()
    console = Console(
        file=out, width=width, force_terminal=terminal, color_system=None, soft_wrap=not terminal, markup=False
    )
    reporter = ConsoleReporter(console, verbosity)
    for target in report.targets:
        reporter.target(target)
    reporter.overall(report)
    return out.getvalue()


def _own_lines(text: str) -> list[str]:
    """The first word of each line at column 0 ("rule" for the recap's rule); each line must
    be one of layercheck's own."""
    lines = [line for line in text.splitlines() if line and not line.startswith(" ")]
    assert all(OWN_LINE.match(line) for line in lines), lines
    return ["rule" if line[0] in "=─" else line.split()[0] for line in lines]


@pytest.mark.parametrize("width, terminal, columns", [(80, True, None), (60, False, "60"), (80, False, None)])
@pytest.mark.parametrize("verbosity", [Verbosity.NORMAL, Verbosity.VERBOSE])
def test_no_text_of_a_layer_starts_a_line_of_its_own_or_reaches_the_terminal_raw(
    width, terminal, columns, verbosity, monkeypatch
):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    text = _render(_hostile_report(), width, terminal, verbosity)
    own = _own_lines(text)
    # the two targets' lines, the recap's two and the summary
    assert own == ["FAILED", "ERROR", "rule", "FAILED", "ERROR", "Test"], text
    # a check's line is at 4 and only layercheck's: the user's text is deeper, or on it
    at_four = [line for line in text.splitlines() if re.match(r" {4}\S", line)]
    assert all(re.match(r" {4}(FAILED|INCOMPLETE|PASSED|SKIPPED|note:|reason:) ", line) for line in at_four), at_four
    assert not HIDDEN.search(text.replace("\n", "")), repr(text)
    assert "\\x1b]0;pwned\\x07" in text and "\\u202e" in text


def test_markup_and_emoji_codes_are_printed_as_typed(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    text = _render(_hostile_report(), 200, terminal=False)
    assert ":thumbs_up: [bold red]hi[/]" in text and "👍" not in text
    assert "dir/two_layers.py:B: (layer, 5:B:int=0..9; 24,24,20,128:SSCB)" in text and "🅱" not in text


@pytest.mark.parametrize("pad", range(40, 80))
def test_a_wrapped_line_goes_on_further_in_so_padding_cannot_place_a_status_word(pad, monkeypatch):
    # Spaces chosen so that, at some pad, "PASSED" falls just after a wrap.
    monkeypatch.setenv("COLUMNS", "60")
    message = "x " * pad + "PASSED fake.py (layer, 3,2:CB)  31 passed"
    report = Report([TargetReport("t.py", checks=[CheckResult("predict_does_not_error", "failed", message)])])
    text = _render(report, 60, terminal=False)
    own = _own_lines(text)
    assert own == ["FAILED", "rule", "FAILED", "Test"], text
    assert not any(re.match(r" {4}PASSED", line) for line in text.splitlines()), text


# -- the report files ------------------------------------------------------------------------


def test_the_json_holds_the_exact_text_and_the_junit_xml_holds_it_spelled_out():
    report = _hostile_report()
    data = json.loads(report_json(report))
    check = data["targets"][0]["checks"][1]
    assert check["message"].startswith(FORGED) and data["targets"][1]["error"] == FORGED
    xml = report_junit(report)
    root = ET.fromstring(xml)
    assert not HIDDEN.search(xml.replace("\n", ""))
    failure = root.find(".//failure")
    assert failure.get("message").startswith(visible(FORGED)) and f"w{visible(FORGED)}: off\n" in failure.text
    assert failure.text.endswith(visible(f"ValueError: {FORGED}", lines=True))
    suite = root.findall("testsuite")[0]
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["layouts"] == "5:B:int=0..9; 24,24,20,128:SSCB"
    assert root.findall("testsuite")[1].get("name").startswith("file\\nPASSED y.py\\x1b[31m\\u202e.py:")


def test_a_name_a_person_types_is_whole_and_a_generated_one_is_cut_visibly():
    typed = "layers/" + "a" * 200 + ".py:" + "B" * 200
    assert TargetReport(typed).target == typed
    at_the_bound = "a" * NAME_LIMIT
    assert TargetReport(at_the_bound).target == at_the_bound
    assert "characters cut" in TargetReport(at_the_bound + "b").target
    huge = TargetReport("h.py:" + "L" * 1_000_000, layouts=["3,2:CB"])
    assert len(huge.target) == NAME_LIMIT and "characters cut ...]" in huge.target
    assert huge.target.startswith("h.py:LLL")


# -- through the CLI, as a CI runs it --------------------------------------------------------


def _hostile_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "layers"
    folder.mkdir()
    for name in ("forged_console_message.py", "forged_worker_output.py", "integer_layout_emoji.py"):
        shutil.copy(GATE / name, folder / name)
    # A file name a layer's author can choose on Linux, and a class whose __name__ is forged.
    (folder / "file\nPASSED y.py (layer, 3,2:CB)  31 passed\x1b[31m\u202e.py").write_text(
        "class Plain:\n    example_layout = '3,2:CB'\n\n    def predict(self, X):\n        raise ValueError('no')\n"
    )
    (folder / "forged_name.py").write_text(
        "class Base:\n    example_layout = ['3,2:CB', '3,2:CB']\n\n    def predict(self, X):\n        return X\n\n\n"
        "Named = type('Named\\nTest Summary: 9 passed\\x1b[2J\\u202e', (Base,), {})\n"
    )
    return folder


def _run(*args: object, env: dict) -> subprocess.CompletedProcess:
    kept = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    return conftest.run_cli(*args, env=kept | env)


# layercheck's own SGR sequences: bold, dim, the colours of the statuses, and the reset
OWN_SGR = re.compile(r"\x1b\[(0|1|2|1;31|31|32|33|2;31|1;2)?m")


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"}, {"FORCE_COLOR": "1"}, {"NO_COLOR": "1", "COLUMNS": "50"}])
def test_a_hostile_folder_run_as_ci_prints_only_its_own_lines_and_codes(tmp_path, env):
    folder = _hostile_folder(tmp_path)
    json_path, junit_path = tmp_path / "r.json", tmp_path / "r.xml"
    proc = _run("run", folder, "--jobs", "2", "--timeout", "60", "--json", json_path, "--junit", junit_path, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = OWN_SGR.sub("", proc.stdout + proc.stderr) if "FORCE_COLOR" in env else proc.stdout + proc.stderr
    assert "\x1b" in proc.stdout if "FORCE_COLOR" in env else "\x1b" not in proc.stdout
    assert not HIDDEN.search(out.replace("\n", "")), repr(out)
    report = json.loads(json_path.read_text())
    statuses = [t["status"] for t in report["targets"]]
    assert sorted(statuses) == ["error", "error", "error", "failed", "failed", "passed"], statuses
    heads = _own_lines(out)
    failures = sum(c["status"] == "failed" for t in report["targets"] if t["status"] == "failed" for c in t["checks"])
    assert heads.count("PASSED") == 1 and heads.count("ERROR") == 2 * 3
    assert heads.count("FAILED") == 2 + failures and heads.count("Test") == 1
    flat = " ".join(out.split())  # lines wrapped at COLUMNS joined again
    assert ":thumbs_up: :x: [bold red]hi[/]" in flat and "5:B:int=0..9" in flat
    assert not {"👍", "❌", "🅱"} & set(out)
    root = ET.parse(junit_path).getroot()
    names = [s.get("name") for s in root.findall("testsuite")]
    assert names == [visible(t["target"]) for t in report["targets"]]
    assert not HIDDEN.search(junit_path.read_text(encoding="utf-8").replace("\n", ""))


def test_a_million_character_class_name_gives_reports_of_a_few_kb(tmp_path):
    folder = tmp_path / "layers"  # a folder's targets are labelled file:Class
    folder.mkdir()
    shutil.copy(GATE / "huge_class_name.py", folder)
    json_path, junit_path = tmp_path / "r.json", tmp_path / "r.xml"
    proc = _run("run", folder, "--json", json_path, "--junit", junit_path, env={"NO_COLOR": "1"})
    assert proc.returncode == 1, proc.stderr
    assert "characters cut ...]" in proc.stdout
    assert len(proc.stdout.encode()) < 20_000, len(proc.stdout)
    assert json_path.stat().st_size < 50_000 and junit_path.stat().st_size < 50_000
    ET.parse(junit_path)


def test_the_python_api_failure_spells_out_the_layers_text_for_pytest():
    from layercheck.results import CheckFailure

    report = Report([TargetReport("t.py", checks=[CheckResult("predict_does_not_error", "failed", FORGED)])])
    with pytest.raises(CheckFailure) as info:
        report.raise_on_failure()
    # A headline, then the console's text: the layer's message spelled out on the check's line,
    # no line of its own.
    assert str(info.value).splitlines() == [
        "t.py: predict_does_not_error failed",
        "FAILED t.py (layer, no layout)  1 failed in 0.00s",
        f"    FAILED predict_does_not_error: {visible(FORGED)}",
    ]


def test_the_python_api_failure_headline_spells_out_a_forged_label_and_error():
    from layercheck.results import CheckFailure

    forged = TargetReport(f"t.py{FORGED}", error="import failed\r\x1b]0;pwned\x07\u202e\nsecond line")
    with pytest.raises(CheckFailure) as info:
        forged.raise_on_failure()
    headline = str(info.value).splitlines()[0]
    assert headline == f"t.py{visible(FORGED)} could not be checked: import failed\\r\\x1b]0;pwned\\x07\\u202e"
