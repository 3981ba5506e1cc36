"""layercheck's version, in a module of its own so that the command line can say it without
importing the public API (`layercheck/__init__.py`) above itself."""

__version__ = "0.1.0"
