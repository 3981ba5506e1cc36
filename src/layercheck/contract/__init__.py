"""The layer and operation contract (DESIGN.md sections 3 and 4): layouts, the optional base
class, loading a user's module and the adapter that calls a layer the same way whatever it is."""

__all__: list[str] = []  # the modules of this place are its interface
