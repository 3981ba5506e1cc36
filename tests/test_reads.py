"""What a worker records of a target's reads (`layercheck.running.reads`, DESIGN.md section 7):
every file the layer's side opens or looks at, every environment variable it reads, and what
makes its verdict uncacheable; never what layercheck itself reads.

Each case is a few lines run in a worker of its own between `Reads.start` and `Reads.finish`
(`reads_jobs.Reading`), compiled as from a file of the user's; all the cases run in one
`run_jobs` call, and each test reads its case's inputs. tests/test_cache.py shows the same
through the batch runner: a changed read checks the layer again, an uncacheable one is never
stored.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import py_compile
import sysconfig
from importlib.machinery import all_suffixes
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from reads_jobs import Reading

from layercheck.running.sources import ABSENT, FOLDER, UNSET, Look, Uncacheable, file_state
from layercheck.sandbox.isolation import run_jobs

DATA = "1.0\n"
HELPER = "FACTOR = 1.0\n"

# name: the code (HERE is the folder of the files below), as the layer's module would run it.
CASES = {
    # -- files, keyed ----------------------------------------------------------------------
    "open": "open(HERE + '/data.txt').read()",
    "np.load": "import numpy as np\nnp.load(HERE + '/data.npy')",
    # What os.supports_follow_symlinks says of os.stat decides what shutil does: the recording
    # stat must answer as the real one.
    "shutil.copy2": (
        "import os, shutil\nassert os.stat in os.supports_follow_symlinks and os.stat in os.supports_dir_fd\n"
        "shutil.copy2(HERE + '/data.txt', HERE + '/copy.txt')\n"
        "shutil.copystat(HERE + '/data.txt', HERE + '/copy.txt', follow_symlinks=False)"
    ),
    "Path.read_text of a missing file": (
        "from pathlib import Path\ntry:\n    Path(HERE, 'missing.txt').read_text()\nexcept FileNotFoundError:\n    pass"
    ),
    "os.path.exists, isfile, isdir": (
        "import os.path\nos.path.exists(HERE + '/flag')\nos.path.isfile(HERE + '/data.txt')\nos.path.isdir(HERE)"
    ),
    "a helper loaded by path": (
        "import importlib.util\n"
        "spec = importlib.util.spec_from_file_location('helper_by_path', HERE + '/helper.py')\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "assert module.FACTOR == 1.0"
    ),
    "a helper loaded by path, its bytecode written": (
        "import importlib.util, sys\n"
        "sys.dont_write_bytecode = False\n"
        "spec = importlib.util.spec_from_file_location('fresh_by_path', HERE + '/fresh.py')\n"
        "spec.loader.exec_module(importlib.util.module_from_spec(spec))"
    ),
    "a helper named like a module of the standard library": (
        "import importlib.util\n"
        "spec = importlib.util.spec_from_file_location('textwrap', HERE + '/textwrap.py')\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "module.read(HERE + '/data.txt')"
    ),
    "a thread it started": (
        "import threading\n"
        "thread = threading.Thread(target=lambda: open(HERE + '/data.txt').read())\n"
        "thread.start()\nthread.join()"
    ),
    "a file it only writes": "open(HERE + '/written.txt', 'w').write('x')\nopen(HERE + '/log.txt', 'a').write('x')",
    # -- looks that return more than what a path is, keyed on what they returned -------------
    "os.path.getmtime, os.access": (
        "import os\nos.path.getmtime(HERE + '/data.txt')\nos.access(HERE + '/helper.py', os.R_OK)"
    ),
    "os.lstat": "import os\nos.lstat(HERE + '/link')",
    "os.path.lexists, islink": "import os.path\nos.path.lexists(HERE + '/flip')\nos.path.islink(HERE + '/link')",
    "os.readlink": "import os\nos.readlink(HERE + '/link')",
    "Path.resolve, Path.exists": "from pathlib import Path\nPath(HERE, 'link').resolve()\nPath(HERE, 'data.txt').exists()",
    # -- imports: where the module was found, and that nothing was before it ----------------
    "an import of a sibling module": "import sys\nsys.path.insert(0, HERE)\nimport sibling_of_reads",
    "a module that fails to import": (
        "import sys\nsys.path.insert(0, HERE)\ntry:\n    import lc_reads_not_there\nexcept ImportError:\n    pass"
    ),
    # -- environment variables, keyed ------------------------------------------------------
    "variables": (
        "import os\n"
        "os.environ['LC_READS_A']\n"
        "os.getenv('LC_READS_UNSET')\n"
        "os.environ.get('LC_READS_B', 'x')\n"
        "'LC_READS_C' in os.environ\n"
        "os.environb.get(b'LC_READS_D')\n"
        "os.environ.setdefault('LC_READS_E', 'set by the layer')"
    ),
    # -- lookalikes: layercheck's reads, the import system's, the standard library's --------
    "layercheck reads a file and a variable": (
        "from layercheck.running.sources import digest_file\n"
        "from layercheck.running.watching import still_running_every_s\n"
        "digest_file(HERE + '/data.txt')\nstill_running_every_s()"
    ),
    "layercheck lists a folder": (
        "from pathlib import Path\nfrom layercheck.contract.entries import module_files\nmodule_files(Path(HERE))"
    ),
    "a file of the standard library": "import json\nopen(json.__file__).read()",
    # -- uncacheable ----------------------------------------------------------------------
    "os.listdir": "import os\nos.listdir(HERE)",
    "os.scandir": "import os\nlist(os.scandir(HERE))",
    "glob": "import glob\nglob.glob(HERE + '/*.txt')",
    "os.walk": "import os\nlist(os.walk(HERE))",
    "subprocess": "import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'pass'], check=True)",
    "os.system": "import os\nos.system('true')",
    "a name lookup": "import socket\ntry:\n    socket.getaddrinfo('localhost', 80)\nexcept OSError:\n    pass",
    "ctypes": "import ctypes\nctypes.CDLL(None)",
    "dict(os.environ)": "import os\ndict(os.environ)",
    "os.environ.copy()": "import os\nos.environ.copy()",
    "os.environ replaced": "import os\nos.environ = {'LC_READS_A': 'mine'}",
    "os.stat replaced": "import os\nos.stat = os.lstat",
    "a file it reads and writes": (
        "from pathlib import Path\ncount = Path(HERE, 'count.txt')\ncount.write_text(str(int(count.read_text()) + 1))"
    ),
    "a device": "open('/dev/zero', 'rb').read(8)",
    "a file of /proc": "open('/proc/self/status').read()",
    "an event with a garbled path": "import sys\nsys.audit('open', object(), 'r', 0)",
    "an event with no arguments": "import sys\nsys.audit('open')",
    "os.open in a folder it holds open": (
        "import os\nfolder = os.open(HERE, os.O_RDONLY)\nos.close(os.open('data.txt', os.O_RDONLY, dir_fd=folder))"
    ),
    "open with an opener in a folder it holds open": (
        "import os\nfolder = os.open(HERE, os.O_RDONLY)\n"
        "open('data.txt', opener=lambda name, flags: os.open(name, flags, dir_fd=folder)).read()"
    ),
    "os.stat in a folder it holds open": "import os\nos.stat('data.txt', dir_fd=os.open(HERE, os.O_RDONLY))",
    "an import path changed past the limit": (
        "import sys\n"
        "for n in range(70):\n"
        "    sys.path.insert(0, f'{HERE}/p{n}')\n"
        "    try:\n"
        "        import lc_reads_nowhere\n"
        "    except ImportError:\n"
        "        pass"
    ),
    "a module made where it would have been found first, while it runs": (
        "import os, sys\n"
        "os.mkdir(HERE + '/first')\n"
        "sys.path[:0] = [HERE + '/first', HERE]\n"
        "import sibling_of_reads\n"
        "open(HERE + '/first/sibling_of_reads.py', 'w').write('X = 2')"
    ),
    "an import path that is no list": (
        "import sys\nsys.path = tuple(sys.path)\ntry:\n    import lc_reads_nowhere\nexcept ImportError:\n    pass"
    ),
}
EXPECTED_UNCACHEABLE = {
    "os.listdir": Uncacheable.LISTING,
    "os.scandir": Uncacheable.LISTING,
    "glob": Uncacheable.LISTING,
    "os.walk": Uncacheable.LISTING,
    "subprocess": Uncacheable.PROCESS,
    "os.system": Uncacheable.PROCESS,
    "a name lookup": Uncacheable.NETWORK,
    "ctypes": Uncacheable.NATIVE,
    "dict(os.environ)": Uncacheable.ENVIRONMENT,
    "os.environ.copy()": Uncacheable.ENVIRONMENT,
    "os.environ replaced": Uncacheable.REPLACED,
    "os.stat replaced": Uncacheable.REPLACED,
    "a file it reads and writes": Uncacheable.CHANGED,
    "a device": Uncacheable.UNHASHABLE,
    "a file of /proc": Uncacheable.UNHASHABLE,
    "an event with a garbled path": Uncacheable.UNSEEN,
    "an event with no arguments": Uncacheable.UNSEEN,
    "os.open in a folder it holds open": Uncacheable.DESCRIPTOR,
    "open with an opener in a folder it holds open": Uncacheable.DESCRIPTOR,
    "os.stat in a folder it holds open": Uncacheable.DESCRIPTOR,
    "an import path changed past the limit": Uncacheable.TOO_MANY,
    "an import path that is no list": Uncacheable.UNSEEN,
    # Its search took the signature of first/sibling_of_reads.py before it looked: absent then.
    "a module made where it would have been found first, while it runs": Uncacheable.CHANGED,
}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, Any]]]:
    """Each case's folder and what its worker sent back: its inputs and whether it ran to its end."""
    jobs, folders = [], []
    with pytest.MonkeyPatch.context() as patch:  # the parent's environment is the worker's
        patch.setenv("LC_READS_A", "a")
        patch.setenv("LC_READS_B", "b")
        patch.delenv("LC_READS_UNSET", raising=False)
        patch.setenv("LC_READS_C", "")
        patch.setenv("LC_READS_D", "d")
        patch.delenv("LC_READS_E", raising=False)
        for code in CASES.values():
            folder = tmp_path_factory.mktemp("reads")
            (folder / "data.txt").write_text(DATA, encoding="utf-8")
            np.save(folder / "data.npy", np.array(1.0))
            (folder / "helper.py").write_text(HELPER, encoding="utf-8")
            py_compile.compile(str(folder / "helper.py"), doraise=True)  # valid: the .py is not opened
            (folder / "fresh.py").write_text(HELPER, encoding="utf-8")
            (folder / "textwrap.py").write_text("def read(path):\n    return open(path).read()\n", encoding="utf-8")
            (folder / "sibling_of_reads.py").write_text("X = 1\n", encoding="utf-8")
            (folder / "count.txt").write_text("0", encoding="utf-8")
            (folder / "link").symlink_to("data.txt")
            source = folder / "layer.py"
            folders.append(folder)
            jobs.append(Reading(f"HERE = {str(folder)!r}\n{code}\ndone = True\n", str(source)))
        outcomes = run_jobs(jobs, workers=2)
    results = {}
    for name, folder, outcome in zip(CASES, folders, outcomes):
        assert outcome.ok, (name, outcome.failure, outcome.output)
        results[name] = (folder, outcome.result)
    return results


def _files(result: dict[str, Any], folder: Path | None = None) -> dict[str, str]:
    """The files recorded (below `folder`, relative to it, when given)."""
    files = dict(map(tuple, result["files"]))
    if folder is None:
        return files
    return {os.path.relpath(path, folder): state for path, state in files.items() if path.startswith(str(folder))}


def _keyed(recorded, name: str) -> tuple[Path, dict[str, Any]]:
    folder, result = recorded[name]
    assert result["done"], "the code did not run to its end"
    assert result["uncacheable"] is None, result
    return folder, result


def test_a_file_opened_is_keyed_on_its_contents(recorded):
    folder, result = _keyed(recorded, "open")
    assert _files(result, folder) == {"data.txt": _sha(DATA.encode())}
    folder, result = _keyed(recorded, "np.load")
    assert _files(result, folder) == {"data.npy": _sha((folder / "data.npy").read_bytes())}


def test_shutil_runs_as_without_the_recorder(recorded):
    _, result = recorded["shutil.copy2"]
    assert result["done"] and result["restored"], result  # done: the assertions inside it held


def test_a_missing_file_is_keyed_as_absent_and_a_folder_as_a_folder(recorded):
    folder, result = _keyed(recorded, "Path.read_text of a missing file")
    assert _files(result, folder) == {"missing.txt": ABSENT}
    folder, result = _keyed(recorded, "os.path.exists, isfile, isdir")
    assert _files(result, folder) == {"flag": ABSENT, "data.txt": _sha(DATA.encode()), ".": FOLDER}


def test_a_helper_loaded_by_path_is_keyed_on_its_source(recorded):
    """Never in sys.modules, so no source of the import's: its read is. Python read its valid
    bytecode, not the source; the bytecode stands for the source (Python checks it against it)."""
    folder, result = _keyed(recorded, "a helper loaded by path")
    assert _files(result, folder) == {"helper.py": _sha(HELPER.encode())}
    assert Path(importlib.util.cache_from_source(str(folder / "helper.py"))).exists()


def test_bytecode_python_writes_for_a_helper_loaded_by_path_does_not_make_it_uncacheable(recorded):
    """The loader found no bytecode, read the source, and wrote the bytecode (a file written
    while the target ran, but not one it read)."""
    folder, result = _keyed(recorded, "a helper loaded by path, its bytecode written")
    assert _files(result, folder) == {"fresh.py": _sha(HELPER.encode())}
    assert Path(importlib.util.cache_from_source(str(folder / "fresh.py"))).exists()


def test_whose_read_it_is_goes_by_the_code_s_file_not_its_module_s_name(recorded):
    folder, result = _keyed(recorded, "a helper named like a module of the standard library")
    assert _files(result, folder)["data.txt"] == _sha(DATA.encode())


def test_a_thread_of_the_layer_s_reads_for_it(recorded):
    folder, result = _keyed(recorded, "a thread it started")
    assert _files(result, folder) == {"data.txt": _sha(DATA.encode())}


def test_a_file_only_written_is_not_read(recorded):
    folder, result = _keyed(recorded, "a file it only writes")
    assert _files(result, folder) == {}


def test_each_variable_read_is_keyed_on_its_value_or_on_being_unset(recorded):
    """`[]`, `os.getenv`, `get`, `in`, `os.environb`, `setdefault`: the value the worker started
    with (the parent's), unset included; a variable the layer set is keyed on its value before."""
    _, result = _keyed(recorded, "variables")
    assert dict(map(tuple, result["variables"])) == {
        "LC_READS_A": _sha(b"a"),
        "LC_READS_UNSET": UNSET,
        "LC_READS_B": _sha(b"b"),
        "LC_READS_C": _sha(b""),
        "LC_READS_D": _sha(b"d"),
        "LC_READS_E": UNSET,
    }


def test_a_look_that_returns_a_file_s_metadata_is_keyed_on_what_it_returned(recorded):
    """os.path.getmtime, os.access: beside its contents, the file's type, permission bits,
    owner, inode, size and modification time, as the look returned them (`Look.STAT`); a touch
    is then a change. os.path.exists, isfile, isdir, which say only what is there, add nothing
    to the contents' state (above)."""
    folder, result = _keyed(recorded, "os.path.getmtime, os.access")
    data, helper = str(folder / "data.txt"), str(folder / "helper.py")
    assert _files(result, folder) == {
        "data.txt": file_state(data, {Look.STAT}),
        "helper.py": file_state(helper, {Look.STAT}),
    }
    assert _files(result)[data].startswith(f"{_sha(DATA.encode())};stat=file:")


def test_a_look_that_does_not_follow_a_link_is_keyed_on_the_link(recorded):
    """os.lstat: the link's own metadata; os.path.lexists and islink: what the path itself is
    (nothing, a link); os.readlink: the link's text. The contents' state follows the link."""
    folder, result = _keyed(recorded, "os.lstat")
    assert _files(result, folder) == {"link": file_state(str(folder / "link"), {Look.LSTAT})}
    assert ";lstat=link:" in _files(result, folder)["link"]
    folder, result = _keyed(recorded, "os.path.lexists, islink")
    assert _files(result, folder) == {"flip": f"{ABSENT};link={ABSENT}", "link": f"{_sha(DATA.encode())};link=link"}
    folder, result = _keyed(recorded, "os.readlink")
    assert _files(result, folder) == {"link": f"{_sha(DATA.encode())};target={_sha(b'data.txt')}"}


def test_resolving_a_path_is_keyed_on_what_each_part_is_never_on_its_times(recorded):
    """Path.resolve (os.path.realpath) looks at every folder of the path and reads each link:
    keyed on each being a folder, a file or a link, and on the link's text; no size or time of
    any of them (the idiom `Path(__file__).resolve()` stays served when a checkout touches it)."""
    folder, result = _keyed(recorded, "Path.resolve, Path.exists")
    files = _files(result)
    assert files[str(folder / "link")] == f"{_sha(DATA.encode())};link=link;target={_sha(b'data.txt')}"
    assert files[str(folder / "data.txt")] == f"{_sha(DATA.encode())};link=file"
    assert files[str(folder)] == f"{FOLDER};link=folder"
    assert all(";stat=" not in state and ";lstat=" not in state for state in files.values())


def test_an_import_is_keyed_on_its_module_and_on_nothing_being_found_before_it(recorded):
    """The module found first on the import path (HERE), with its source; every other file the
    import system would have taken for it there, or before it, is keyed as absent: one made
    there later would be imported instead."""
    folder, result = _keyed(recorded, "an import of a sibling module")
    would_be_found = {f"sibling_of_reads{suffix}": ABSENT for suffix in all_suffixes() if suffix != ".py"}
    assert _files(result, folder) == {
        "sibling_of_reads.py": _sha(b"X = 1\n"),
        "sibling_of_reads": ABSENT,
        **would_be_found,
    }
    assert all(path.startswith(str(folder)) for path in _files(result)), "found first: nothing before it"


def test_a_module_that_fails_to_import_is_keyed_as_absent_wherever_it_was_looked_for(recorded):
    """An optional module the layer falls back from: installed later (in site-packages, beside
    the layer), it would be imported."""
    folder, result = _keyed(recorded, "a module that fails to import")
    files = _files(result)
    for where in (str(folder), sysconfig.get_paths()["purelib"]):
        for suffix in ("", *all_suffixes()):
            assert files[os.path.join(where, "lc_reads_not_there" + suffix)] == ABSENT


@pytest.mark.parametrize(
    "name",
    [
        "layercheck reads a file and a variable",
        "layercheck lists a folder",
        "a file of the standard library",
    ],
)
def test_what_layercheck_the_import_system_or_the_standard_library_reads_is_not_the_layer_s(recorded, name):
    """layercheck's own reads, even when the layer called it; a file the Python version keys.
    (The import system's listing of a folder it searches: `an import of a sibling module`.)"""
    folder, result = _keyed(recorded, name)
    assert _files(result, folder) == {}
    assert result["variables"] == []
    if name == "a file of the standard library":
        assert _files(result) == {}


@pytest.mark.parametrize("name", list(EXPECTED_UNCACHEABLE))
def test_what_cannot_be_keyed_makes_the_target_uncacheable_and_never_raises(recorded, name):
    _, result = recorded[name]
    assert result["done"], "the recorder raised into the layer's code"
    assert result["uncacheable"] == EXPECTED_UNCACHEABLE[name].value


def test_the_recorder_puts_os_back_when_it_finishes(recorded):
    """What `start` replaced in `os` (environ, environb, stat, lstat, access, readlink, open) is
    back after `finish`, the originals even where the layer had replaced them with its own."""
    assert all(result["restored"] for _, result in recorded.values())
