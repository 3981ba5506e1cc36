"""Error: the worker exited with status 4 (os._exit at import)."""

import os

os._exit(4)
