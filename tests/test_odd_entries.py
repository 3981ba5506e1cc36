"""Odd things on the file system and in a layer's module (issue 27).

- Paths that name no module: a named pipe `x.py` (reading it waits for a writer: the run must
  not block until the timeout), a socket, a device, a folder named `layer.py`, a dangling
  symlink, a symlink loop, a file that cannot be read. Given on the command line (or in a
  config), each is refused at once in one line (exit status 2, as a path that does not
  exist); found below a folder, pipes, sockets and devices are skipped as pytest skips them,
  and a `.py` name that cannot be read is that file's error, in one line. Folder symlinks are
  not followed (no loop) and no file is listed twice.
- What a layer's module does to the process: a `cupy` it puts in `sys.modules`, `str`
  subclasses as learnable names, an `input_domain` that `--domain` would refuse, clocks it
  replaces (durations stay true; the replacement fails the target, `sandbox.integrity`).

These entries are made in tmp_path at test time: git cannot hold pipes, sockets or loops.
"""

from __future__ import annotations

import enum
import json
import math
import os
import re
import socket
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

import layercheck
from layercheck import cupyref
from layercheck.contract import fresh
from layercheck.contract.adapter import adapt, not_numbers, require_arrays
from layercheck.contract.entries import Entry, EntryKind, inspect_entry, module_files
from layercheck.contract.layout import Layout, parse_layout
from layercheck.devices import gpu_status
from layercheck.errors import ContractError, UsageError
from layercheck.results import Status
from layercheck.sandbox.integrity import Snapshot
from layercheck.settings.config import parse_config_text
from layercheck.userframes import user_stack

LAYER = "class Double:\n    example_layout = '3,2:CB'\n\n    def predict(self, X):\n        return 2 * X\n"
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
POSIX = os.name == "posix"
posix_only = pytest.mark.skipif(not POSIX, reason="named pipes, sockets and symlinks as on POSIX")


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _socket(path: Path) -> Path:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))  # the socket file stays after close
    server.close()
    return path


def _one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


# -- inspect_entry: what a path is, without opening it ---------------------------------------


@posix_only
def test_inspect_entry_tells_every_kind_apart_without_opening_anything(tmp_path):
    (tmp_path / "plain.py").write_text(LAYER)
    (tmp_path / "layer.py").mkdir()
    os.symlink("nowhere.py", tmp_path / "dangling.py")
    os.symlink("b.py", tmp_path / "a.py")
    os.symlink("a.py", tmp_path / "b.py")
    os.symlink("plain.py", tmp_path / "alias.py")
    kinds = {
        "plain.py": (EntryKind.FILE, ""),
        "alias.py": (EntryKind.FILE, ""),
        "layer.py": (EntryKind.FOLDER, ""),
        "missing.py": (EntryKind.MISSING, "does not exist"),
        "dangling.py": (EntryKind.BROKEN, "is a symlink to 'nowhere.py', which does not exist"),
        "a.py": (EntryKind.BROKEN, "is a symlink loop"),
        "fifo.py": (EntryKind.SPECIAL, "is a named pipe (FIFO), not a file"),
        "sock.py": (EntryKind.SPECIAL, "is a socket, not a file"),
    }
    _fifo(tmp_path / "fifo.py")
    _socket(tmp_path / "sock.py")
    for name, (kind, problem) in kinds.items():
        entry = inspect_entry(tmp_path / name)
        assert (entry.kind, entry.problem) == (kind, problem), name
    assert inspect_entry("/dev/null").problem == "is a character device, not a file"


@pytest.mark.skipif(ROOT or not POSIX, reason="root reads a file whatever its mode")
def test_a_file_without_read_permission_is_broken_and_one_with_it_is_not(tmp_path):
    path = tmp_path / "secret.py"
    path.write_text(LAYER)
    assert inspect_entry(path).kind is EntryKind.FILE
    path.chmod(0)
    try:
        assert inspect_entry(path) == Entry(EntryKind.BROKEN, "cannot be read (permission denied)")
    finally:
        path.chmod(0o644)


# -- walking a folder ---------------------------------------------------------------------------


@posix_only
def test_a_folder_walk_skips_pipes_sockets_and_folder_symlinks_and_lists_each_file_once(tmp_path):
    (tmp_path / "good.py").write_text(LAYER)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.py").write_text(LAYER)
    (tmp_path / "layer.py").mkdir()  # a folder named like a module: walked into, not imported
    (tmp_path / "layer.py" / "inner.py").write_text(LAYER)
    _fifo(tmp_path / "fifo.py")
    _socket(tmp_path / "sock.py")
    os.symlink("..", tmp_path / "sub" / "loop")  # a folder symlink loop
    os.symlink(tmp_path / "sub", tmp_path / "again")  # the same folder through a second path
    os.symlink("good.py", tmp_path / "alias.py")  # the same file under a second name
    os.symlink("b.py", tmp_path / "a.py")
    os.symlink("a.py", tmp_path / "b.py")
    os.symlink("nowhere.py", tmp_path / "dangling.py")
    found = {str(f.path.relative_to(tmp_path)): f.problem for f in module_files(tmp_path)}
    assert found == {
        "a.py": "is a symlink loop",
        "b.py": "is a symlink loop",
        "dangling.py": "is a symlink to 'nowhere.py', which does not exist",
        "good.py": None,
        "layer.py/inner.py": None,
        "sub/deep.py": None,
    }


@posix_only
def test_of_a_file_and_its_symlink_the_file_is_kept_whichever_sorts_first(tmp_path):
    (tmp_path / "z_real.py").write_text(LAYER)
    os.symlink("z_real.py", tmp_path / "a_link.py")
    assert [f.path.name for f in module_files(tmp_path)] == ["z_real.py"]


# -- the command line ---------------------------------------------------------------------------


def _run(*args: object, cwd: Path) -> tuple[int, str, str, float]:
    started = time.monotonic()
    proc = run_cli("run", *map(str, args), "--timeout", "60", cwd=cwd, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started


@posix_only
@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: _fifo(p / "x.py"), "target 'x.py' is a named pipe (FIFO), not a .py file or a folder"),
        (lambda p: _socket(p / "x.py"), "target 'x.py' is a socket, not a .py file or a folder"),
        (lambda p: os.symlink("y.py", p / "x.py") or os.symlink("x.py", p / "y.py"), "target 'x.py' is a symlink loop"),
        (
            lambda p: os.symlink("gone.py", p / "x.py"),
            "target 'x.py' is a symlink to 'gone.py', which does not exist",
        ),
    ],
    ids=["fifo", "socket", "symlink-loop", "dangling-symlink"],
)
def test_a_target_that_names_no_module_is_refused_at_once_in_one_line(tmp_path, make, message):
    make(tmp_path)
    code, stdout, stderr, took = _run("x.py", cwd=tmp_path)
    assert code == 2, stdout + stderr
    assert _one_line(stderr) == f"Error: {message}"
    assert took < 30  # not the 60 s timeout a blocked import would wait for


def test_a_device_is_refused_as_a_target(tmp_path):
    code, _, stderr, _ = _run(os.devnull, cwd=tmp_path)
    assert code == 2
    assert _one_line(stderr) == f"Error: target {os.devnull!r} is a character device, not a .py file or a folder"


@posix_only
def test_a_folder_with_every_odd_entry_is_checked_at_once_each_entry_in_one_line(tmp_path):
    folder = tmp_path / "layers"
    folder.mkdir()
    (folder / "good.py").write_text(LAYER)
    (folder / "layer.py").mkdir()
    _fifo(folder / "fifo.py")
    _socket(folder / "sock.py")
    os.symlink("b.py", folder / "a.py")
    os.symlink("a.py", folder / "b.py")
    os.symlink("nowhere.py", folder / "dangling.py")
    (folder / "sub").mkdir()
    os.symlink("..", folder / "sub" / "loop")
    report_path = tmp_path / "r.json"
    code, stdout, stderr, took = _run("layers", "--jobs", "2", "--json", report_path, cwd=tmp_path)
    assert code == 1, stdout + stderr
    assert took < 30 and "Traceback" not in stdout + stderr
    report = json.loads(report_path.read_text())
    errors = {Path(t["target"]).name: t["error"] for t in report["targets"] if t["status"] == "error"}
    assert errors == {
        "a.py": "a.py is a symlink loop",
        "b.py": "b.py is a symlink loop",
        "dangling.py": "dangling.py is a symlink to 'nowhere.py', which does not exist",
    }
    assert [t["target"].rsplit("/", 1)[-1] for t in report["targets"] if t["status"] == "passed"] == ["good.py:Double"]
    assert "pathlib" not in stdout  # no frame of pathlib shown as the user's
    for name, error in errors.items():  # the recap's one line
        assert f"ERROR layers/{name} - {error}" in stdout.splitlines(), stdout


@posix_only
def test_a_config_target_that_is_a_pipe_is_refused_in_its_words(tmp_path):
    _fifo(tmp_path / "x.py")
    with pytest.raises(
        UsageError, match=r"^<config>: targets\[0\]\.target: 'x.py' is a named pipe \(FIFO\), not a file$"
    ):
        parse_config_text("targets:\n  - x.py\n", base=tmp_path, check_names=())


@posix_only
def test_the_source_loader_refuses_a_pipe_instead_of_waiting_for_a_writer(tmp_path):
    path = _fifo(tmp_path / "x.py")
    loader = fresh.SourceOnlyLoader("x", str(path))
    with pytest.raises(ImportError, match=r"x.py is a named pipe \(FIFO\), not a file"):
        loader.get_data(str(path))


# -- odd objects: what holds numbers ----------------------------------------------------------


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float16", "float64", "complex64"])
def test_arrays_of_numbers_are_outputs(dtype):
    y = np.zeros((2, 3), dtype=dtype)
    assert not_numbers(y.dtype) is None
    assert require_arrays([y], ["Y"], "predict") == (y,)


@pytest.mark.parametrize(
    "array, held",
    [
        (np.zeros(3, dtype=object), "Python objects"),
        (np.zeros(3, dtype=[("a", "f8")]), "structured records"),
        (np.zeros(3, dtype="V8"), "raw bytes (void)"),
        (np.array([b"ab"]), "byte strings"),
        (np.array(["ab"]), "text"),
        (np.zeros(3, dtype="datetime64[s]"), "dates (datetime64)"),
        (np.zeros(3, dtype="timedelta64[s]"), "time spans (timedelta64)"),
    ],
)
def test_arrays_that_hold_no_numbers_are_refused_with_what_they_hold(array, held):
    with pytest.raises(ContractError, match=f"as Y, which holds {re.escape(held)};"):
        require_arrays([array], ["Y"], "predict")


# -- odd objects: a cupy in sys.modules ---------------------------------------------------------


@pytest.fixture
def no_cupy(monkeypatch):
    """sys.modules without cupy, restored afterwards (the real one or the stand-in, if any)."""
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    return monkeypatch


def test_a_module_made_in_memory_is_not_cupy_and_numpy_arrays_stay_numpy_arrays(no_cupy):
    fake = types.ModuleType("cupy")
    fake.ndarray = np.ndarray  # every NumPy array would look like a CuPy array
    no_cupy.setitem(sys.modules, "cupy", fake)
    assert cupyref.fake_cupy() == "holds a module made in memory, not one imported from a file"
    assert cupyref.imported_cupy() is None
    assert not cupyref.is_cupy_array(np.zeros(3))


def test_an_object_that_is_no_module_is_not_cupy(no_cupy):
    no_cupy.setitem(sys.modules, "cupy", object())
    assert cupyref.fake_cupy() == "holds a 'object' object, not a module"
    assert not cupyref.is_cupy_array(np.zeros(3))


def _judged_in_a_process_of_its_own(tmp_path: Path, package_source: str) -> list:
    """What cupyref says of a `cupy` package imported from a file. In a process of its own:
    this one imports one CuPy, whichever its path finds, and keeps it (tests/cupy_rooms.py)."""
    (tmp_path / "cupy").mkdir()
    (tmp_path / "cupy" / "__init__.py").write_text(package_source)
    code = (
        "import json, numpy as np, cupy\n"
        "from layercheck import cupyref\n"
        "arrays = [cupy.ndarray() if cupy.ndarray is not np.ndarray else None, np.zeros(3)]\n"
        "print(json.dumps([cupyref.fake_cupy(), cupyref.imported_cupy() is cupy]"
        " + [cupyref.is_cupy_array(x) for x in arrays]))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_cupy_imported_from_a_file_counts_and_its_arrays_are_told_apart(tmp_path):
    judged = _judged_in_a_process_of_its_own(tmp_path, "class ndarray:\n    pass\n")
    assert judged == [None, True, True, False]


def test_a_cupy_from_a_file_whose_ndarray_is_numpys_is_refused(tmp_path):
    judged = _judged_in_a_process_of_its_own(tmp_path, "from numpy import ndarray\n")
    assert judged == ["holds a module whose ndarray is not an array class of its own", False, False, False]


def test_a_fake_cupy_is_no_usable_gpu_whatever_it_answers(no_cupy):
    fake = types.ModuleType("cupy")
    fake.ndarray = type("ndarray", (), {})
    fake.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=lambda: 1))
    no_cupy.setitem(sys.modules, "cupy", fake)
    status = gpu_status.__wrapped__()  # uncached: this process's answer may be cached already
    assert not status.usable
    assert (
        status.reason
        == "sys.modules['cupy'] holds a module made in memory, not one imported from a file, so it is not CuPy"
    )


def test_a_layer_run_in_process_with_a_fake_cupy_is_an_error_that_says_so(no_cupy):
    no_cupy.setitem(sys.modules, "cupy", types.ModuleType("cupy"))
    report = layercheck.check_layer(lambda X: 2 * X, "3,2:CB")
    assert report.status is Status.ERROR
    assert report.error.startswith("sys.modules['cupy'] holds a module made in memory")


# -- odd objects: names, domains, clocks -------------------------------------------------------


class _Name(str):
    """A name whose every method is the layer's own: equal to every name, one hash for all,
    and no text, characters or length to be had from it but its plain value."""

    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0

    def _refuse(self, *args, **kwargs):
        raise RuntimeError("a method of the str subclass was called")

    __str__ = __repr__ = __iter__ = __len__ = __contains__ = __getitem__ = _refuse
    strip = split = count = find = index = upper = isidentifier = _refuse


if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # enum.StrEnum is new in 3.11; a str mixin is what it is made of

    class StrEnum(str, enum.Enum):
        pass


class _Names(StrEnum):
    WEIGHT = "w"
    HIDDEN = "h"


class _Formats(StrEnum):
    CB = "CB"
    LAYOUT = "3,2:CB"


def _scaled(learnables, state=()):
    class Scaled:
        def __init__(self):
            self.w = np.ones(3)
            self.h = np.zeros((3, 1))

        def predict(self, X):
            y = X * self.w[:, None]
            return (y, self.h + 1) if self.state else y

    Scaled.learnables = learnables
    Scaled.state = state
    return Scaled


@pytest.mark.parametrize(
    "learnables, state",
    [
        ((_Name("w"),), ()),
        (_Name("w"), ()),
        ([_Name("w")], (_Name("h"),)),  # equal and of one hash, they would clash: their values do not
        ((_Names.WEIGHT,), _Names.HIDDEN),
    ],
    ids=["in-a-tuple", "alone", "with-state", "str-enum"],
)
def test_names_of_a_str_subclass_are_taken_by_their_plain_values(learnables, state):
    layer = _scaled(learnables, state)
    adapter = adapt(layer())
    assert adapter.learnables == ("w",) and adapter.state == (("h",) if state else ())
    assert all(type(name) is str for name in adapter.learnables + adapter.state)
    report = layercheck.check_layer(layer, "3,2:CB")
    # No backward: the gradient check alone is undecided, naming the learnable by its value.
    assert report.error is None and not report.failures, report.error or [c.message for c in report.failures]
    undecided = [c for c in report.checks if c.status is Status.INCOMPLETE]
    assert [c.name for c in undecided] == ["gradients_are_numerically_correct"]
    assert "the layer has learnables (w) and defines no backward" in undecided[0].message


@pytest.mark.parametrize("fmt", [_Name("CB"), _Formats.CB], ids=["str-subclass", "str-enum"])
def test_formats_and_layouts_of_a_str_subclass_are_taken_by_their_plain_values(fmt):
    layout = _Name("3,2:CB") if isinstance(fmt, _Name) else _Formats.LAYOUT

    class Formatted:
        example_layout = layout  # read, without a layout given, as the command line reads it

        def output_format(self, *formats):
            return fmt

        def predict(self, X):
            return 3 * X

    (formats,) = [adapt(Formatted()).output_formats(["CB"])]
    assert formats == ("CB",) and type(formats[0]) is str
    assert parse_layout(layout) == Layout((3, 2), "CB") and type(Layout((3, 2), fmt).format) is str
    report = layercheck.check_layer(Formatted)
    assert report.layouts == [layercheck.parse_layout("3,2:CB")]
    assert report.status is Status.PASSED, report.error or [c.message for c in report.failures]
    assert report.result("output_format_is_consistent").status is Status.PASSED


class _Lying(int):
    """A count whose comparisons are the layer's own: never below anything."""

    def __lt__(self, other):
        return False


def test_a_count_of_an_int_subclass_is_taken_by_its_plain_value():
    class NoOutputs:
        num_outputs = _Lying(0)

        def predict(self, X):
            return X

    with pytest.raises(ContractError, match=r"^`num_outputs` must be a positive integer, got 0$"):
        adapt(NoOutputs())
    NoOutputs.num_outputs = _Lying(1)
    assert type(adapt(NoOutputs()).num_outputs) is int


@pytest.mark.parametrize("learnables", [("w",), "w", ["w"]], ids=["tuple", "str", "list"])
def test_plain_str_learnable_names_are_accepted(learnables):
    report = layercheck.check_layer(_scaled(learnables), "3,2:CB", checks=["function_syntaxes_are_correct"])
    assert report.status is Status.PASSED, report.error


def _with_domain(domain):
    class Domained:
        input_domain = domain

        def predict(self, X):
            return 2 * X

    return Domained


@pytest.mark.parametrize(
    "domain, option",
    [((math.nan, None), "nan:"), ((-math.inf, math.inf), "-inf:inf"), ((0, math.inf), "0:inf"), ((1.0, 0.0), "1:0")],
)
def test_a_class_input_domain_is_refused_in_the_words_of_the_same_domain_option(tmp_path, domain, option):
    report = layercheck.check_layer(_with_domain(domain), "3,2:CB")
    assert report.status is Status.ERROR
    (tmp_path / "double.py").write_text(LAYER)
    cli = run_cli("run", "double.py", f"--domain={option}", cwd=tmp_path)
    assert cli.returncode == 2
    said = _one_line(cli.stderr).removeprefix("Error: --domain")
    assert report.error == f"Domained's input_domain{said}"


@pytest.mark.parametrize("domain", [(0, None), (None, 1), (-1, 1), (np.float32(0), None), [(0, None)]])
def test_a_finite_class_input_domain_is_accepted(domain):
    report = layercheck.check_layer(_with_domain(domain), "3,2:CB")
    assert report.status is Status.PASSED, report.error


def test_durations_stay_finite_when_the_layer_replaces_the_clocks(monkeypatch):
    class NanClocks:
        def predict(self, X):
            monkeypatch.setattr(time, "monotonic", lambda: math.nan)
            monkeypatch.setattr(time, "perf_counter", lambda: -1e9)
            return 2 * X

    # Whether a replaced clock is tampering depends on whether code layercheck runs reads it:
    # time.monotonic is read by multiprocessing's channel where that is loaded (a worker); the
    # guard decides from the code there is (sandbox.lookups), and so does this test.
    read = Snapshot.take().lookups.reader(vars(time), time, "monotonic") is not None
    report = layercheck.check_layer(NanClocks, "3,2:CB")
    failed = [check for check in report.checks if check.status is Status.FAILED]
    if read:
        assert [check.name for check in failed] == ["module_does_not_replace_numpy_or_layercheck"]
        assert failed[0].message.startswith("the layer replaced time.monotonic during ")
        assert math.isfinite(time.monotonic()), "the guard put the clock back"
    else:
        assert failed == [] and report.status is Status.PASSED
    # time.perf_counter is read by no code layercheck runs (it bound its own clocks before).
    assert not any("time.perf_counter" in check.message for check in failed)
    durations = [report.duration_s] + [check.duration_s for check in report.checks]
    assert all(math.isfinite(d) and d >= 0 for d in durations), durations


# -- whose frames -------------------------------------------------------------------------------


def _faulthandler_stack(*files: str) -> str:
    frames = "".join(f'  File "{file}", line 10 in run\n' for file in files)
    return f"Current thread 0x00007f (most recent call first):\n{frames}"


def test_the_standard_librarys_frames_are_never_shown_as_the_users():
    import multiprocessing.process  # noqa: PLC0415

    # A worker stopped in layercheck's own work (a named pipe read at import, before this issue)
    assert user_stack(_faulthandler_stack(multiprocessing.process.__file__, os.__file__)) == ""


def test_an_installed_packages_frames_are_the_users_when_no_other_is():
    # The lookalike: a layer installed as a package, whose frames are all in site-packages
    stack = user_stack(_faulthandler_stack(np.__file__))
    assert stack.startswith("Traceback") and np.__file__ in stack
