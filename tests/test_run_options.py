"""`layercheck run` options of issue 8: --device, --domain, --timeout, --max-memory, and the
layouts a folder's targets get."""

from __future__ import annotations

import json

import pytest
from conftest import CORPUS, SAMPLES, run_cli

from layercheck.checks import REGISTRY
from layercheck.running.plan import make_batch
from layercheck.settings.options import settings_from_command_line


def _domains(texts):
    return settings_from_command_line({"input_domain": texts}, check_names=tuple(REGISTRY)).input_domain


def _memory_cap(text, jobs):
    return make_batch([str(SAMPLES / "prelu.py")], max_memory=text, jobs=jobs).max_memory


def test_domain_once_is_for_every_input_and_repeated_is_per_input():
    assert _domains(("0:",)) == (0.0, None)
    assert _domains(("-1:1", ":2.5")) == ((-1.0, 1.0), (None, 2.5))
    assert _domains(()) is None


def test_domain_reaches_the_checks(tmp_path):
    log_layer = CORPUS / "log_without_domain.py"
    assert run_cli("run", log_layer, "--quiet").returncode == 1  # NaN for negative inputs
    proc = run_cli("run", log_layer, "--quiet", "--domain", "0:")
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--domain", "5:1"],
        ["--domain", "abc"],
        ["--domain", "1"],
        ["--domain", "nan:1"],
        ["--device", "tpu"],
        ["--timeout", "0"],
        ["--timeout", "soon"],
        ["--jobs", "0"],
        ["--max-memory", "lots"],
        ["--max-memory", "-1G"],
        ["--seed", "-1"],
        # issue 19: every number finite and in range
        ["--timeout", "nan"],
        ["--timeout", "inf"],
        ["--timeout", "1e300"],
        ["--timeout", "2147484"],
        ["--max-memory", "99999999999999T"],
        ["--max-memory", "1K"],
        ["--domain", "inf:"],
        ["--domain", ":-inf"],
        ["--jobs", "1e3"],
        ["--jobs", "99999"],
        ["--shard", "1/99999999999"],
        ["--layout", ",".join(["1"] * 100) + ":" + "S" * 100],
        ["--checks", "outputs_are_finite", "--skip", "outputs_are_finite"],
    ],
    ids=lambda args: " ".join(a[:40] for a in args),
)
def test_bad_option_values_exit_2_with_one_line(args):
    proc = run_cli("run", SAMPLES / "prelu.py", *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("Error:") and proc.stderr.count("\n") == 1 and proc.stdout == ""


def test_max_memory_sizes():
    assert _memory_cap("512M", 1) == 512 * 2**20
    assert _memory_cap("1.5GiB", 1) == 3 * 2**29
    assert _memory_cap("none", 4) is None
    assert _memory_cap(None, 2) is None or _memory_cap(None, 2) >= 2**30


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_device_is_accepted(device):
    proc = run_cli("run", SAMPLES / "prelu.py", "--quiet", "--device", device)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_folder_target_without_a_layout_is_reported_with_how_to_give_one(tmp_path):
    (tmp_path / "with_layout.py").write_text(
        'class WithLayout:\n    example_layout = "3,2:CB"\n\n    def predict(self, X):\n        return X\n'
    )
    (tmp_path / "without.py").write_text("class Without:\n    def predict(self, X):\n        return X\n")
    (tmp_path / "helpers.py").write_text("def helper(x):\n    return x\n")  # no layer: not a target
    out = tmp_path / "r.json"
    proc = run_cli("run", tmp_path, "--json", out, "--quiet")
    assert proc.returncode == 1
    targets = {t["target"].rsplit("/", 1)[-1]: t for t in json.loads(out.read_text())["targets"]}
    assert set(targets) == {"with_layout.py:WithLayout", "without.py:Without"}
    assert targets["with_layout.py:WithLayout"]["status"] == "passed"
    error = targets["without.py:Without"]["error"]
    assert "--layout" in error and "example_layout" in error and "config" in error


def test_a_folder_without_layers_exits_2(tmp_path):
    (tmp_path / "helpers.py").write_text("def helper(x):\n    return x\n")
    proc = run_cli("run", tmp_path)
    assert proc.returncode == 2 and "holds no layer" in proc.stderr and proc.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "option, value, allowed",
    [
        ("--timeout", "nan", "above 0 and at most 604800"),
        ("--timeout", "2147484", "above 0 and at most 604800"),
        ("--max-memory", "1K", "from 64M to 1024T"),
        ("--jobs", "0", "from 1 to 1024"),
    ],
)
def test_an_out_of_range_number_is_refused_with_the_range(option, value, allowed):
    proc = run_cli("run", SAMPLES / "prelu.py", option, value)
    assert proc.returncode == 2 and allowed in proc.stderr and option in proc.stderr, proc.stderr


def test_the_api_validates_numbers_as_the_command_line_does():
    from layercheck import check_layer
    from layercheck.errors import UsageError

    for options in (
        {"seed": -1},
        {"input_domains": (float("inf"), None)},
        {"tolerances": {"float64": {"rtol": float("nan")}}},
    ):
        with pytest.raises(UsageError):
            check_layer(lambda X: X, "3,2:CB", **options)


def test_time_elapsed_counts_from_the_commands_start(tmp_path, capsys):
    # `main` gives the process's start: the interpreter and the imports are part of the wait.
    from layercheck.cli import invoke
    from layercheck.clock import monotonic, process_started

    (tmp_path / "double.py").write_text(
        "class Double:\n    def predict(self, X):\n        return 2 * X\n", encoding="utf-8"
    )
    with pytest.raises(SystemExit) as exited:
        invoke(["run", str(tmp_path / "double.py"), "--layout", "3,2:CB", "-q"], started=monotonic() - 100)
    assert exited.value.code == 0
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    assert float(summary.split("Time elapsed: ")[1].split(" s")[0]) >= 100
    assert process_started() <= monotonic()


def test_the_process_start_is_read_from_the_kernel_where_it_keeps_one():
    import sys

    from layercheck import clock

    if not sys.platform.startswith("linux"):
        pytest.skip("/proc is Linux's")
    # This process started before layercheck was imported (pytest ran first), and today.
    age = clock.monotonic() - clock.process_started()
    assert clock.process_started() < clock._IMPORTED and 0 < age < 24 * 3600
