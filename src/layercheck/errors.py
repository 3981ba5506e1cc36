__all__ = ["ContractError", "LayercheckError", "TargetError", "USER_ERRORS", "UsageError"]
"""Exceptions that carry a user-facing message.

`UsageError` is bad input to layercheck itself (exit status 2, one line, no traceback).
`TargetError` is a target that could not be loaded or constructed; it is reported as
that target's error and the run goes on with the others.
`ContractError` is a layer that breaks the calling conventions of DESIGN.md section 3
(wrong number of returned values, missing attributes); the checks report it as a failure.
"""


class LayercheckError(Exception):
    """Base class for errors with a message meant for the user."""


class UsageError(LayercheckError):
    """Malformed layout, argument, option or config: exit status 2, a line per problem.

    Most carry one problem; a validation that goes on past the first (a config's: every
    unknown key, every bad value) carries all it found, in `problems`, so that one run shows
    them all."""

    def __init__(self, *problems: object) -> None:
        super().__init__("\n".join(map(str, problems)))
        self.problems = tuple(str(problem) for problem in problems)


class TargetError(LayercheckError):
    """A target that could not be imported, found or constructed."""

    def __init__(self, message: str, traceback: str = ""):
        super().__init__(message)
        self.traceback = traceback


class ContractError(LayercheckError):
    """A layer whose methods do not follow the layer contract."""


# What a user's code may raise that layercheck reports instead of dying of it: sys.exit too.
USER_ERRORS = (Exception, SystemExit)
