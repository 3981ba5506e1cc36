"""The last module the forkserver preloads (`isolation._context`): importing it is the one
hook multiprocessing gives to run code in the forkserver before it forks any worker.

It makes the forkserver a subreaper that kills every process below it when it exits
(`reaping.prepare_forkserver`, which does nothing in any other process), and takes the record
of NumPy's and layercheck's functions that every worker is judged under
(`integrity.prime`), once rather than in every worker, after installing the audit hook that
counts writes of functions' code and defaults (`integrity.count_function_writes`: a look then
compares the functions only after one); and it gives up the controlling terminal, for itself
and every worker (`terminal.give_up_terminal`).
"""

import layercheck
from layercheck.sandbox import integrity, reaping, terminal

__all__: list[str] = []

reaping.prepare_forkserver()
if reaping.in_forkserver():  # and never in a process of the user's that imports this module
    terminal.give_up_terminal()  # no worker can write to the user's terminal through /dev/tty
# The package's public names, which it imports when first used: loaded before the record,
# as a user's `from layercheck import Layer` will want them.
layercheck._import_public()
if reaping.in_forkserver():  # a user's process never gets the hook
    integrity.count_function_writes()
integrity.prime()
