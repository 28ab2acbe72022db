"""The implementation of refjax.scipy.fft (that module re-exports its public names): the type-2
discrete cosine transform and its inverse, as products with the (float64-built) DCT matrix."""
import functools
import operator
from collections.abc import Sequence

import numpy as np

from .. import numpy as jnp
from ..numpy.promotion import _arrays, _axes
from ..nn.functions import _inexact


@functools.lru_cache(maxsize=64)
def _dct_matrix(n, norm, inverse):
    """The n x n matrix of the type-2 DCT (scipy's scaling for norm None/'backward' or 'ortho'),
    or of its inverse, in float64."""
    k, m = np.arange(n)[:, None], np.arange(n)[None, :]
    matrix = 2 * np.cos(np.pi * k * (2 * m + 1) / (2 * n))
    if norm == "ortho":
        matrix = matrix / np.sqrt(np.where(k == 0, 4.0, 2.0) * n)
    return np.linalg.inv(matrix) if inverse else matrix


def _check(name, type, norm):
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")


def _resize(x, n, axis):
    """x cut or zero-padded to length n along axis (scipy's n argument)."""
    size = x.shape[axis]
    if n is None or n == size:
        return x
    if n < size:
        return jnp.take(x, jnp.arange(n), axis=axis)
    pad = [(0, 0)] * x.ndim
    pad[axis] = (0, n - size)
    return jnp.pad(x, pad)


def _transform(name, x, type, n, axis, norm, inverse):
    _check(name, type, norm)
    x = _inexact(name, _arrays(name, x)[0])[0]
    axis = _axes(axis, x.ndim, name=name)[0]
    x = _resize(x, n, axis)
    real_dtype = np.array(0, x.dtype).real.dtype
    matrix = jnp.asarray(_dct_matrix(x.shape[axis], norm or "backward", inverse).astype(real_dtype))
    out = jnp.tensordot(x, matrix, axes=([axis], [1]))
    return jnp.moveaxis(out, -1, axis)


def dct(x, type=2, n=None, axis=-1, norm=None):
    """The type-2 discrete cosine transform along axis (n: length to cut or zero-pad to)."""
    return _transform("dct", x, type, n, axis, norm, inverse=False)


def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse of dct with the same norm along axis."""
    return _transform("idct", x, type, n, axis, norm, inverse=True)


def _nd_axes(x, s, axes):
    """(axes, lengths) of an n-dimensional transform from scipy's s and axes arguments."""
    if s is not None:
        s = list(s) if isinstance(s, Sequence) else [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    else:
        axes = _axes(axes, x.ndim)
    return axes, (s if s is not None else [None] * len(axes))


def _transform_nd(name, one, x, type, s, axes, norm):
    _check(name, type, norm)
    x = _arrays(name, x)[0]
    axes, lengths = _nd_axes(x, s, axes)
    for axis, n in zip(axes, lengths):
        x = one(x, n=n, axis=axis, norm=norm)
    return x


def dctn(x, type=2, s=None, axes=None, norm=None):
    """The type-2 DCT over several axes (all by default)."""
    return _transform_nd("dctn", dct, x, type, s, axes, norm)


def idctn(x, type=2, s=None, axes=None, norm=None):
    """The inverse of dctn with the same norm."""
    return _transform_nd("idctn", idct, x, type, s, axes, norm)
