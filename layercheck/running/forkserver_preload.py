"""The last module the forkserver preloads (`isolation._context`): importing it is the one
hook multiprocessing gives to run code in the forkserver before it forks any worker.

It makes the forkserver a subreaper that kills every process below it when it exits
(`reaping.prepare_forkserver`, which does nothing in any other process).
"""

from layercheck.running import reaping

__all__: list[str] = []

reaping.prepare_forkserver()
