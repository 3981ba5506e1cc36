"""The last module the forkserver preloads (`isolation._context`): importing it is the one
hook multiprocessing gives to run code in the forkserver before it forks any worker.

It makes the forkserver a subreaper that kills every process below it when it exits
(`reaping.prepare_forkserver`, which does nothing in any other process), and takes the record
of NumPy's and layercheck's functions that every worker is judged under
(`integrity.prime`), once rather than in every worker.
"""

from layercheck.running import integrity, reaping

__all__: list[str] = []

reaping.prepare_forkserver()
integrity.prime()
