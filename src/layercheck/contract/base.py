"""An optional base class: it only supplies the contract's defaults and documents them."""

from __future__ import annotations

__all__ = ["Layer"]


class Layer:
    """Base class for a layer; subclassing is optional (any class with `predict` is a layer).

    Set `learnables` and `state` to the names of the attributes that hold learnable and state
    arrays. `predict(self, *X)` returns the outputs, then the updated states. Define
    `forward` for a training-time pass that differs from `predict`, and `backward` for a
    hand-written derivative: `backward(self, *X, *Y, *dLdY, *dLdSout, memory)` returns
    `(*dLdX, *dLdW, *dLdSin)`; a bare array when there is exactly one value.

    Complex values: for a real loss L and complex z = a + ib, the gradient passed and returned
    is dL/da + i*dL/db.
    """

    learnables: tuple[str, ...] = ()
    state: tuple[str, ...] = ()
    num_outputs: int = 1
