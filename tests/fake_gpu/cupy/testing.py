"""The stand-in's `cupy.testing` (the array assertions): both sides are downloaded and compared by
numpy.testing, as CuPy's do."""

import numpy as _np

from cupy import asnumpy as _asnumpy


def assert_allclose(actual, desired, rtol=1e-7, atol=0, err_msg="", verbose=True):
    _np.testing.assert_allclose(
        _asnumpy(actual), _asnumpy(desired), rtol=rtol, atol=atol, err_msg=err_msg, verbose=verbose
    )


def assert_array_almost_equal(x, y, decimal=6, err_msg="", verbose=True):
    _np.testing.assert_array_almost_equal(_asnumpy(x), _asnumpy(y), decimal=decimal, err_msg=err_msg, verbose=verbose)


def assert_array_equal(x, y, err_msg="", verbose=True, strict=False):
    kwargs = {"strict": strict} if strict else {}
    _np.testing.assert_array_equal(_asnumpy(x), _asnumpy(y), err_msg=err_msg, verbose=verbose, **kwargs)


def assert_array_less(x, y, err_msg="", verbose=True):
    _np.testing.assert_array_less(_asnumpy(x), _asnumpy(y), err_msg=err_msg, verbose=verbose)
