r"""Failed: the layer set a trace function \(sys\.settrace\) during \w+"""

import sys


def _tracer(frame, event, arg):
    # Rewrites the outcome of the check under way to a pass, with no attribute changed.
    if frame.f_code.co_name == "run_check" and event == "line":
        outcome = frame.f_locals.get("outcome")
        status = getattr(outcome, "status", None)
        if status is not None and getattr(status, "value", "") in ("failed", "incomplete"):
            from layercheck.checks.registry import Outcome

            frame.f_locals["outcome"] = Outcome(type(status)("passed"))
    return _tracer


def _arm():
    frame = sys._getframe()
    while frame is not None:
        frame.f_trace = _tracer
        frame = frame.f_back
    sys.settrace(_tracer)


class WrongSquareTraces:
    example_layout = "3,2:CB"

    def predict(self, X):
        _arm()
        return X * X

    def backward(self, X, Y, dLdY, memory):
        return 3 * dLdY * X
