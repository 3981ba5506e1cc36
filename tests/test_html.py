"""`--html FILE` (DESIGN.md section 10) without a browser: what the page holds and in which
order, that it fetches nothing, that a layer's text stays text, and the environment every
report records (JSON, JUnit, HTML). tests/test_html_browser.py opens the page in Chromium."""

from __future__ import annotations

import base64
import hashlib
import json
import platform
import re
import types
import xml.etree.ElementTree as ET
from html import escape

import numpy as np
import pytest
from conftest import run_cli
from html_reports import CHANNEL_BUG, CORRECT, GRADIENTS, HUGE, SCRIPT, checked, diagnosis, sample_report

from layercheck import environment
from layercheck.devices import GpuStatus
from layercheck.environment import Environment, collect
from layercheck.reporters.html import report_html, write_html
from layercheck.reporters.json_report import report_json
from layercheck.reporters.junit import report_junit
from layercheck.reporters.pictures import SHADE_BOUNDS
from layercheck.reporters.text import target_text
from layercheck.results import CheckResult, MalformedReport, Report, TargetReport
from layercheck.safetext import visible


@pytest.fixture(scope="module")
def report() -> Report:
    return sample_report()


@pytest.fixture(scope="module")
def page(report) -> str:
    return report_html(report)


def _sections(page: str) -> list[str]:
    return re.findall(r'<section class="target[^"]*"[^>]*>.*?</section>', page, re.S)


def test_every_target_and_check_is_on_the_page(report, page):
    sections = _sections(page)
    assert len(sections) == len(report.targets)
    for target in report.targets:
        (section,) = [s for s in sections if f'data-name="{escape(visible(target.target), quote=True)}"' in s]
        names = re.findall(r'<li class="check[^"]*" data-status="(\w+)" data-name="([^"]*)"', section)
        assert sorted(names) == sorted((c.status.value, c.name) for c in target.checks)


def test_failures_come_first_targets_and_checks(report, page):
    statuses = [re.search(r'data-status="(\w+)"', s).group(1) for s in _sections(page)]
    assert statuses == ["failed", "failed", "failed", "error", "passed"], statuses
    missing_dx = next(s for s in _sections(page) if "srelu_missing_dx" in s)
    order = re.findall(r'<li class="check st-(\w+)"', missing_dx)
    rank = {"failed": 0, "incomplete": 1, "passed": 2, "skipped": 3}
    assert order == sorted(order, key=rank.get) and order[0] == "failed" and "passed" in order


def test_the_page_fetches_nothing_and_runs_only_its_own_script(page):
    assert not re.search(r"https?:|//[a-z]", page, re.I), "a URL in a self-contained page"
    for attribute in re.findall(r'\b(?:src|href)="([^"]*)"', page):
        assert attribute.startswith("data:"), attribute
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
    assert "default-src 'none'" in policy and "unsafe-inline" not in policy
    for tag in ("script", "style"):
        (body,) = re.findall(rf"<{tag}>(.*?)</{tag}>", page, re.S)
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"{tag}-src 'sha256-{digest}'" in policy
    assert page.count("<script") == 1 and page.count("<style") == 1


def test_a_per_channel_bug_is_drawn_cell_by_cell_with_its_numbers(report, page):
    target = next(t for t in report.targets if "channel_scale_bias_one_channel.py" in t.target)
    blocks = next(a for a in target.result(GRADIENTS).details["arguments"] if a["argument"] == "X")["diagnosis"]
    channels = blocks["blocks"]["channel"]
    section = next(s for s in _sections(page) if "channel_scale_bias_one_channel" in s)
    (svg,) = re.findall(r'<svg class="picture".*?</svg>', section, re.S)
    cells = re.findall(r'<rect class="(c-[a-z0-9]+)"[^>]*><title>channel (\d+): ([^<]*)</title>', svg)
    # Channel 1 wrong, shaded by the band of its relative error along the direction it was
    # probed in (which band depends on the draw), the others right.
    band = next(i for i, bound in enumerate(SHADE_BOUNDS) if channels[1]["rel_error"] >= bound)
    assert [(int(n), css) for css, n, _ in cells] == [(0, "c-ok"), (1, f"c-s{band}"), (2, "c-ok"), (3, "c-ok")]
    assert cells[1][2] == f"wrong, relative error {channels[1]['rel_error']:.3g} along a random direction"
    assert cells[0][2] == f"right, relative error {channels[0]['rel_error']:.3g} along a random direction"
    assert 'class="legend"' in section and "wrong, relative error ≥ 10% along a random direction" in section
    # the numbers without hovering: a table of the same blocks
    table = re.search(r'<details class="numbers">.*?</details>', section, re.S).group()
    assert re.findall(r"<tr><td>(\d)</td><td>(\w+)</td>", table) == [
        (str(k), channel["verdict"]) for k, channel in enumerate(channels)
    ]


def test_a_map_of_the_plane_has_its_row_and_column_numbers():
    target = checked(CHANNEL_BUG.parent / "border_pool_divides_by_nine.py", checks=[GRADIENTS])
    page = report_html(Report([target]))
    (svg,) = re.findall(r'<svg class="picture".*?</svg>', page, re.S)
    assert len(re.findall(r'text-anchor="end">(\d+)</text>', svg)) == 6  # rows 0-5
    assert len(re.findall(r'text-anchor="middle">(\d+)</text>', svg)) == 6  # columns 0-5
    assert "row 0, column 0 (distance from the edge 0): wrong" in svg
    assert re.search(r"row 2, column 2 \(distance from the edge 2\+?\): right", svg)


def test_no_picture_and_no_legend_where_nothing_was_localized():
    target = checked(CHANNEL_BUG.parent / "factor_scale_bias_x2.py", checks=[GRADIENTS])
    assert target.result(GRADIENTS).status == "failed"
    page = report_html(Report([target]))
    assert "<svg" not in page and 'class="legend"' not in page


def test_a_layers_text_is_escaped_visible_and_bounded(page):
    assert SCRIPT not in page and "<img" not in page and "window.__pwned = 1</script>" not in page
    assert escape(SCRIPT, quote=True) in page
    assert "\x1b" not in page and "\u202e" not in page and "\x00" not in page
    assert "\\x1b[31m" in page and "\\u202e" in page and "\\x00" in page
    assert len(page) < HUGE // 4, "a megabyte message is cut as every report cuts it"
    assert "characters cut" in page


def test_a_target_that_could_not_be_checked_says_why_with_its_traceback(page):
    section = next(s for s in _sections(page) if 'data-status="error"' in s)
    assert "could not be checked: import failed: &lt;script&gt;" in section and "Traceback" in section
    passed = next(s for s in _sections(page) if "prelu" in s)
    assert "could not be checked" not in passed and "<details open>" not in passed


def test_write_html_writes_the_page(tmp_path, report):
    path = tmp_path / "sub" / "report.html"
    write_html(report, path)
    assert path.read_text(encoding="utf-8") == report_html(report)


# -- the environment -----------------------------------------------------------------------


def test_the_cli_records_the_environment_in_json_junit_and_html(tmp_path):
    files = {kind: tmp_path / f"report.{kind}" for kind in ("json", "xml", "html")}
    proc = run_cli(
        "run",
        str(CORRECT),
        "--seed",
        "3",
        "--device",
        "cpu",
        "--json",
        str(files["json"]),
        "--junit",
        str(files["xml"]),
        "--html",
        str(files["html"]),
        env={"CUPY_TF32": "1", "OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": ""},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(files["json"].read_text())
    env = data["environment"]
    assert env["python"].startswith(platform.python_version()) and env["numpy"] == np.__version__
    assert env["seeds"] == [3] and env["devices"] == ["cpu"]
    assert env["gpu"] is None and env["cuda_runtime"] is None and env["gpu_reason"] == "not asked for (--device cpu)"
    assert env["variables"]["CUPY_TF32"] == "1" and env["variables"]["OMP_NUM_THREADS"] == "2"
    assert env["variables"]["OPENBLAS_NUM_THREADS"] == "" and env["variables"]["MKL_NUM_THREADS"] is None
    assert Report.from_dict(data).environment == Environment.from_dict(env)
    suite = ET.parse(files["xml"]).getroot().find("testsuite")
    properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert properties["environment.CUPY_TF32"] == "1" and properties["environment.seed"] == "3"
    assert properties["environment.MKL_NUM_THREADS"] == "unset" and properties["environment.device"] == "cpu"
    html = files["html"].read_text()
    assert "<dt>CUPY_TF32</dt><dd>1</dd>" in html and f"<dt>numpy</dt><dd>{np.__version__}</dd>" in html


def test_a_report_without_an_environment_says_so_and_writes_none():
    report = Report([checked(CORRECT, checks=["predict_does_not_error"])])
    assert "environment" not in json.loads(report_json(report))
    assert "environment." not in report_junit(report)
    assert "Environment: not recorded in this report." in report_html(report)
    assert "not recorded" not in report_html(
        Report(report.targets, 0.0, environment=collect([0], ["cpu"], gpu_probe=None))
    )


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"seeds": ["0"]}, "field seeds is not a list of integers"),
        ({"python": 3}, "field python is int, not a string"),
        ({"python": None}, "field python is null, not a string"),
        ({"variables": {"CUPY_TF32": 1}}, "field variables does not map names to strings"),
        ({"shell": "bash"}, "has unknown field(s) shell"),
    ],
)
def test_an_environment_read_back_is_validated(change, words):
    data = json.loads(report_json(Report([], 0.0, environment=collect([0], ["cpu"], gpu_probe=None))))
    data["environment"].update(change)
    with pytest.raises(MalformedReport, match=re.escape(f"the report's environment {words}")):
        Report.from_dict(data)


def test_a_usable_gpu_gives_cuda_versions_and_its_name(monkeypatch):
    runtime = types.SimpleNamespace(runtimeGetVersion=lambda: 12080, driverGetVersion=lambda: 12090)
    cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime))
    monkeypatch.setattr(environment, "_cupy_importable", lambda: True)
    env = collect([1, 0, 1], ["auto"], gpu_probe=lambda: GpuStatus(True, "NVIDIA H100, CuPy 14.2.0", cupy))
    assert (env.gpu, env.cuda_runtime, env.cuda_driver, env.seeds) == (
        "NVIDIA H100, CuPy 14.2.0",
        "12.8",
        "12.9",
        (0, 1),
    )
    shown = dict(env.items())
    assert shown["gpu"] == "NVIDIA H100, CuPy 14.2.0" and shown["cuda_runtime"] == "12.8" and shown["seed"] == "0, 1"


def test_a_cpu_run_never_asks_the_gpu_and_no_cupy_says_not_installed(monkeypatch):
    def refuse():
        raise AssertionError("the GPU was asked about on a CPU-only run")

    env = collect([0], ["cpu"], gpu_probe=refuse)
    assert env.gpu is None and "not read (no GPU used)" == dict(env.items())["cuda_runtime"]
    monkeypatch.setattr(environment, "_cupy_importable", lambda: True)
    interrupted = collect([0], ["auto"], gpu_probe=None)  # a run stopped by SIGINT stops now
    assert interrupted.gpu is None and interrupted.gpu_reason == "not read (the run was interrupted)"
    monkeypatch.setattr(environment, "_cupy_importable", lambda: False)
    shown = dict(collect([0], ["auto"], gpu_probe=refuse).items())
    assert shown["cupy"] == "not installed" and shown["gpu"] == "none (CuPy is not installed)"


def test_cupy_on_the_path_without_a_distribution_gives_its_own_version(monkeypatch):
    fake = types.ModuleType("cupy")
    fake.__version__ = "13.9.9"
    # No __spec__, so find_spec raises: no distribution installed the module an import finds,
    # wherever the test runs (room 3 of CI has cupy-cuda12x installed).
    monkeypatch.setitem(__import__("sys").modules, "cupy", fake)
    assert environment._cupy_version() == "13.9.9"


@pytest.mark.parametrize("listed", ["top_level.txt", "RECORD"])
def test_cupy_version_is_that_of_the_distribution_beside_the_cupy_an_import_finds(tmp_path, monkeypatch, listed):
    """The distribution that installed the `cupy` on the path, found by its top_level.txt
    (CuPy's wheels have one) or else by its list of files; one elsewhere on the path that
    names `cupy` too (another CUDA major's, shadowed, or an installed one behind a source
    checkout) is not the one reported."""
    import importlib
    import sys

    def site(folder, name, version, cupy):
        info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        if listed == "top_level.txt":
            (info / "top_level.txt").write_text("cupy\ncupyx\n" if cupy else "other\n")
        (info / "RECORD").write_text(f"{'cupy' if cupy else 'other'}/__init__.py,,\n")
        if cupy:
            (folder / "cupy").mkdir()
            (folder / "cupy" / "__init__.py").write_text("raise ImportError('never imported')\n")
        return folder

    first = site(tmp_path / "first", "cupy-cuda12x", "14.2.0", cupy=True)
    site(first, "unrelated", "1.0", cupy=False)
    second = site(tmp_path / "second", "cupy-cuda11x", "13.6.0", cupy=True)
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    monkeypatch.setattr(sys, "path", [str(first), str(second), *sys.path])
    importlib.invalidate_caches()
    assert environment._cupy_version() == "14.2.0 (cupy-cuda12x)"
    assert "cupy" not in sys.modules
    # A checkout of CuPy's sources first on the path: no distribution installed what an
    # import finds, whatever is installed further on.
    checkout = tmp_path / "checkout"
    (checkout / "cupy").mkdir(parents=True)
    (checkout / "cupy" / "__init__.py").write_text("")
    monkeypatch.setattr(sys, "path", [str(checkout), str(first), *sys.path])
    importlib.invalidate_caches()
    assert environment._cupy_version() == "unknown version (no distribution installed it)"


def test_html_and_json_on_one_file_are_refused(tmp_path):
    path = tmp_path / "r.out"
    proc = run_cli("run", str(CORRECT), "--json", str(path), "--html", str(path))
    assert proc.returncode == 2 and "--json and --html name the same file" in proc.stderr
    proc = run_cli("run", str(CORRECT), "--html", str(tmp_path))
    assert proc.returncode == 2 and "'--html'" in proc.stderr and "is a directory" in proc.stderr


def test_odd_blocks_read_back_are_drawn_and_what_is_no_block_is_refused():
    """Details read back from a file may hold what the check never writes: a negative error,
    an infinite one or NaN, which are drawn as such; data that is not a block at all, or a
    block without its numbers, is refused by the codec, in one line, as any malformed report is."""
    blocks = [
        {"block": "0", "verdict": "wrong", "rel_error": -1.0},
        {"block": "1", "verdict": "right", "rel_error": "inf"},
        {"block": "2", "verdict": "undecided", "rel_error": "nan"},
    ]
    record = {"argument": "X", "kind": "input", "status": "failed", "diagnosis": diagnosis("channel", blocks)}
    data = {"name": GRADIENTS, "status": "failed", "message": "wrong", "details": {"arguments": [record]}}
    check = CheckResult.from_dict(data)
    page = report_html(Report([TargetReport("t.py", checks=[check], layouts=["4,4,3,2:SSCB"])]))
    assert "<title>channel 0: wrong, relative error -1 along a random direction</title>" in page
    assert "<title>channel 1: right, no error recorded</title>" in page
    assert "<title>channel 2: undecided, no error recorded</title>" in page
    for junk, said in [
        ("not a block", "a block is not a mapping"),
        ({"block": "3", "verdict": "maybe"}, "the verdict of block '3' is 'maybe'"),
        (
            {"block": "3", "verdict": "right", "abs_error": 0.1, "tolerance": 1e-8, "probes": 2},
            "the rel_error of block .3. is None",
        ),
    ]:
        odd = {
            **record,
            "diagnosis": {
                **record["diagnosis"],
                "blocks": {"channel": [*record["diagnosis"]["blocks"]["channel"], junk]},
            },
        }
        with pytest.raises(MalformedReport, match=f"^check {GRADIENTS}: {said}"):
            CheckResult.from_dict({**data, "details": {"arguments": [odd]}})
    with pytest.raises(MalformedReport, match="an argument of the gradient check is not a mapping"):
        CheckResult.from_dict({**data, "details": {"arguments": [record, "junk"]}})


def test_a_target_whose_check_could_not_decide_is_incomplete_on_the_page():
    undecided = TargetReport(
        "k.py:Kink", checks=[CheckResult("c0", "passed"), CheckResult(GRADIENTS, "incomplete", "on a kink")]
    )
    page = report_html(Report([TargetReport("p.py:P", checks=[CheckResult("c0", "passed")]), undecided]))
    (section,) = [s for s in _sections(page) if 'data-name="k.py:Kink"' in s]
    assert section.startswith('<section class="target st-incomplete"') and 'data-status="incomplete"' in section
    assert '<span class="badge st-incomplete">INCOMPLETE</span><span class="name">k.py:Kink</span>' in section
    assert "<p>Targets: 1 passed, 0 failed, 1 incomplete, 0 could not be checked.</p>" in page
    assert ".target.st-incomplete{border-left-color:var(--incomplete)}" in page


@pytest.mark.parametrize(
    ("record", "said"),
    [
        ({"status": ["failed"]}, "has status"),
        (
            {
                "diagnosis": {
                    **diagnosis("channel", [{"block": "0", "verdict": "wrong", "rel_error": 1.0}]),
                    "regions": [{"unit": ["channel"]}],
                }
            },
            "a region.s kind is None",
        ),
        ({"diagnosis": diagnosis("channel", [{"block": "0", "verdict": {"w": 1}, "rel_error": 1.0}])}, "verdict"),
        ({"shape": [10**400, 3]}, "the shape of argument"),
    ],
)
def test_gradient_details_of_any_json_type_are_refused_in_one_line_never_raised(record, said):
    """What a worker sends or a file holds may put a list where a string is due, or an integer
    past any float: refused as malformed, in one line, never a TypeError or OverflowError."""
    data = {
        "name": GRADIENTS,
        "status": "failed",
        "message": "wrong",
        "details": {"arguments": [{"argument": "X", "kind": "input", "status": "failed", **record}]},
    }
    with pytest.raises(MalformedReport, match=said) as raised:
        CheckResult.from_dict(data)
    assert "\n" not in str(raised.value)


def test_odd_numbers_and_planes_read_back_are_drawn_without_raising():
    """An infinite error is drawn as no number; a plane with no interior (a size 0 read back)
    as a strip, not a map. A number past any float is no report's: refused in one line."""
    edge = [
        {"block": "0", "verdict": "wrong", "rel_error": "inf", "span": [0, 0]},
        {"block": "1+", "verdict": "right", "rel_error": 0.0, "span": [1, None]},
    ]
    record = {"argument": "X", "kind": "input", "status": "failed", "shape": [0, 3, 5, 6], "labels": "SSCB"}
    record["diagnosis"] = diagnosis("distance from the edge", edge)
    data = {"name": GRADIENTS, "status": "failed", "message": "wrong", "details": {"arguments": [record]}}
    check = CheckResult.from_dict(data)
    page = report_html(Report([TargetReport("t.py", checks=[check])]))
    assert "<title>distance from the edge 0: wrong, no error recorded</title>" in page
    assert target_text(TargetReport("t.py", checks=[check])).count("X by distance from the edge") == 1
    edge[0]["rel_error"] = 10**400
    record["diagnosis"] = diagnosis("distance from the edge", edge)
    with pytest.raises(MalformedReport, match="too large for a float"):
        CheckResult.from_dict(data)


def test_a_target_from_the_result_cache_says_so_on_the_page_as_in_every_report():
    """A hunt: the console, the JSON and JUnit said a result came from the cache; the page did
    not (the README promises "(cached)" in every report)."""
    for cached in (True, False):
        target = TargetReport("scale.py:Scale", checks=[CheckResult("predict_does_not_error", "passed")], cached=cached)
        (section,) = _sections(report_html(Report([target])))
        assert ("(cached)" in section) is cached, section
