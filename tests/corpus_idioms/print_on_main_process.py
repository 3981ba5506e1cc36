"""Distributed training's `setup_for_distributed` (DETR, DeiT, MAE, ConvNeXt): builtins.print
wrapped so that only the main process prints, and a flush forced."""

import builtins as __builtin__

import numpy as np

builtin_print = __builtin__.print
is_master = True  # the rank-0 process


def print(*args, **kwargs):  # noqa: A001 - the idiom shadows print on purpose
    force = kwargs.pop("force", False)
    if is_master or force:
        kwargs.setdefault("flush", True)
        builtin_print(*args, **kwargs)


__builtin__.print = print


class PrintsOnTheMainProcess:
    """Passed"""

    learnables = ("w",)
    example_layout = "6,4:CB"

    def __init__(self):
        self.w = np.linspace(0.5, 1.5, 6).reshape(6, 1)

    def predict(self, X):
        return np.tanh(self.w * X)

    def backward(self, X, Y, dLdY, memory):
        d = dLdY * (1 - Y * Y)
        return d * self.w, (d * X).sum(axis=1, keepdims=True)


class PrintsOnTheMainProcessWrong(PrintsOnTheMainProcess):
    """Failed: the gradient of w is off by a constant factor 2"""

    def backward(self, X, Y, dLdY, memory):
        dX, dw = super().backward(X, Y, dLdY, memory)
        return dX, 2 * dw
