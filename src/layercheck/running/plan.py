"""From what a user gave to a validated `Batch`: the one way in to the checks of targets in
worker processes, for every entry point that has one (the command line, the pytest plugin).

An entry point hands over what it was given, as given (option texts keyed by setting, the
TARGETs, the config file's path) and gets a `Batch` back, or a one-line UsageError; it
validates nothing itself. Every value goes through the validators of `settings/` (the ones
config files and the Python API use), the layouts through `parse_input_layouts` (which refuses
those too large for the memory), and a setting of `device: gpu` through `options_from` (which
refuses it where no GPU is usable), so that a bad value is refused in the same words, up
front, wherever it came from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from layercheck.checks import REGISTRY
from layercheck.contract.entries import module_files
from layercheck.contract.loading import parse_args
from layercheck.errors import UsageError
from layercheck.reporters.files import Input
from layercheck.reproducers.files import check_repro_dir
from layercheck.results import Report
from layercheck.running.batch import Batch, Request, requests_from_config, requests_from_specs
from layercheck.running.cache import cache_folder
from layercheck.running.keywords import parse_keyword
from layercheck.running.stopping import parse_maxfail
from layercheck.sandbox import default_memory_cap
from layercheck.settings.config import Config, load_config
from layercheck.settings.options import (
    merge_settings,
    options_from,
    parse_input_layouts,
    parse_jobs,
    parse_memory,
    parse_shard,
    settings_from_command_line,
)

__all__ = ["BEING_CHECKED", "READ_BY_THE_LAYERS", "inputs_of", "inputs_read", "make_batch"]


def make_batch(
    targets: Sequence[str] = (),
    *,
    config: str | os.PathLike[str] | None = None,
    layouts: Sequence[str] = (),
    args: Sequence[str] = (),
    settings: Mapping[str, Any] | None = None,
    jobs: Any = 1,
    max_memory: Any = None,
    shard: str | None = None,
    only_layers: bool = False,
    repro: str | os.PathLike[str] | None = None,
    keyword: str | None = None,
    exitfirst: bool = False,
    maxfail: Any = None,
    strict: bool = False,
    no_cache: bool = False,
    cache_dir: str | None = None,
    backward: str | None = None,
) -> Batch:
    """A validated Batch of what an entry point was given.

    Args:
        targets: `path.py`, `path.py:Name` or folders; none: the config's targets.
        config: the path of a YAML config, or None.
        layouts: `SIZES:FORMAT` texts, one per input, for every target (over the config's).
        args: `NAME=VALUE` texts, constructor arguments for every target (over the config's).
        settings: each setting's command-line text by its key (`Setting.key`: `dtypes`,
            `seed`, `timeout`, `device`, `checks`, `skip`, `input_domain` (its texts));
            None or left out: not given.
        jobs: targets checked in parallel, a number or its text.
        max_memory: the memory cap per worker as `4G`, `none`...; None: the default share of
            the memory available (`default_memory_cap`).
        shard: `K/N`, or None for every target.
        only_layers: pass over the files that define no layer, as in a folder, rather than
            reporting each as an error (for a hook that hands over every file it touches).
        repro: the folder of the failed checks' reproducers (`--repro DIR`), or None.
        keyword: `-k EXPR`: the targets and checks it selects (`running.keywords`), or None.
        exitfirst, maxfail: `-x`, `--maxfail N` (its text): stop after that many failed
            targets; `strict`: an incomplete check counts as a failure there too.
        no_cache, cache_dir: `--no-cache`, `--cache-dir DIR` (`running.cache.cache_folder`).
        backward: `--backward NAME`: the backward function of the pair a target names
            (DESIGN.md section 11), when its name does not say it.

    Raises:
        UsageError: one line for the first value that is not valid, each named as the command
            line names it (`--seed: ...`, `c.yaml: targets[1].layout: ...`).
    """
    check_names = tuple(REGISTRY)
    loaded = load_config(config, check_names=check_names) if config is not None else None
    given = settings_from_command_line(settings or {}, check_names=check_names)
    # Refused before any worker starts: device gpu where no GPU is usable (the command line's
    # over the config's defaults; a config target's own is refused when it is planned).
    options_from(merge_settings(given, *([loaded.defaults] if loaded else [])))
    every_target = parse_input_layouts(list(layouts)) if layouts else ()
    requests = tuple(_requests(targets, loaded))
    if backward is not None:
        _check_backward(backward, requests, loaded)
    workers = parse_jobs(jobs)
    return Batch(
        requests=requests,
        config=loaded,
        layouts=every_target,
        args=parse_args(tuple(args)),
        settings=given,
        jobs=workers,
        max_memory=default_memory_cap(workers) if max_memory is None else parse_memory(max_memory, "--max-memory"),
        shard=None if shard is None else parse_shard(shard, "--shard"),
        only_layers=only_layers,
        repro=None if repro is None else check_repro_dir(os.fspath(repro)),
        keyword=None if keyword is None else parse_keyword(keyword),
        maxfail=parse_maxfail(exitfirst, maxfail, strict),
        cache=cache_folder(no_cache, cache_dir),
        backward=backward,
    )


BEING_CHECKED = "a file being checked"


def inputs_of(batch: Batch) -> list[Input]:
    """The files `batch` reads, which no report may overwrite (`reporters.files.Input`): the
    config file, each target's file, and the `.py` files below a folder target as discovery
    lists them; each named as the reports name it."""
    inputs = [] if batch.config is None else [Input(batch.config.source, "the config file")]
    for request in batch.requests:
        # The label without `:Name`: the file as the user gave it (the config, as it shows it).
        shown = request.label if request.name is None else request.label[: -len(request.name) - 1]
        if request.path.is_dir():
            inputs += [
                Input(module.path, BEING_CHECKED, str(Path(shown) / module.path.relative_to(request.path)))
                for module in module_files(request.path)
            ]
        else:
            inputs.append(Input(request.path, BEING_CHECKED, shown))
    return inputs


READ_BY_THE_LAYERS = "a file the layers read"


def inputs_read(report: Report) -> list[Input]:
    """The files a batch run recorded as read (`runinfo.RunInfo.sources`), which no report may
    overwrite either, though they are known only once the run is over: the modules the layers
    imported and, where the result cache was on and recorded them, the data files they opened
    (of a target served from the cache, only the modules its file imported as it was found).
    The targets' files and the config are among them, refused before the run by `inputs_of`."""
    if report.run is None:
        return []
    return [Input(path, READ_BY_THE_LAYERS, path) for path, _ in report.run.sources]


def _check_backward(backward: str, requests: Sequence[Request], config: Config | None) -> None:
    """`--backward NAME` is the backward of the pair each TARGET names (`path.py:NAME`)."""
    if not backward.isidentifier():
        raise UsageError(f"--backward {backward!r} is not a function's name")
    unnamed = [r.label for r in requests if r.entry is not None or r.name is None]
    if unnamed:
        raise UsageError(
            f"--backward {backward} is the backward of the function pair a TARGET names (path.py:NAME_forward); "
            f"{unnamed[0]} names none (a config entry takes backward: instead)"
        )
    for request in requests:
        entry = None if config is None or request.name is None else config.entry_for(request.path, request.name)
        if entry is not None and entry.convention.keeps_gradients is not None:
            raise UsageError(
                f"--backward {backward}: {request.label} is a class its config entry checks by a convention; "
                "give --backward for function pairs only"
            )


def _requests(targets: Sequence[str], config: Config | None) -> list[Request]:
    if targets:
        return requests_from_specs(targets)
    if config is None:
        raise UsageError("give a TARGET (path.py, path.py:ClassName or a folder) or --config FILE")
    if not config.targets:
        raise UsageError(
            f"{config.source}: targets: the config lists no targets; give them there or on the command line"
        )
    return requests_from_config(config)
