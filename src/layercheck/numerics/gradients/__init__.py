"""The gradient check: the engine that probes a hand-written backward with finite differences
(`engine`), and the diagnosis of a failure as typed findings: the evidence a claim is tested
against (`evidence`), the causes (`claims`), where it is wrong (`localization`), in a time
budget (`budget`), as data (`findings`) and grouped over the arguments (`diagnosis`)."""

__all__: list[str] = []  # the modules of this package are its interface
