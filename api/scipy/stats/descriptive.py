"""Descriptive statistics of jax.scipy.stats: mode, rankdata, sem."""
from typing import Any, NamedTuple

import numpy as np

from ....core import dtypes as _dt
from ... import numpy as jnp
from ...numpy.promotion import _arrays, _axes
from ._common import promote


class ModeResult(NamedTuple):
    """The most common value along an axis and how often it occurs."""
    mode: Any
    count: Any


def _check_nan_policy(name, nan_policy):
    """JAX's errors for nan policies other than 'propagate'."""
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy != "propagate":
        raise NotImplementedError(f"{name}: nan_policy={nan_policy!r} is not implemented (as in "
                                  "JAX); check for nans before calling it")


def _pairwise(x):
    """x[..., i, None] and x[..., None, j] along the last axis: every pair of elements."""
    return x[..., :, None], x[..., None, :]


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The smallest most frequent value along axis (all values for None) and its count."""
    _check_nan_policy("mode", nan_policy)
    x = jnp.atleast_1d(_arrays("mode", a)[0])
    if axis is None:
        x, axis = jnp.ravel(x), 0
        out_shape = (1,) * jnp.ndim(a) if keepdims else ()
    else:
        axis = _axes(axis, x.ndim, name="mode")[0]
        out_shape = x.shape[:axis] + ((1,) if keepdims else ()) + x.shape[axis + 1:]
    if x.shape[axis] == 0:
        fill = np.full(out_shape, np.nan, _dt.default_float())
        return ModeResult(jnp.asarray(fill), jnp.zeros(out_shape, _dt.default_float()))
    x = jnp.sort(jnp.moveaxis(x, axis, -1), axis=-1)
    xi, xj = _pairwise(x)
    counts = jnp.sum(xi == xj, axis=-1, dtype=_dt.default_int())
    best = jnp.argmax(counts, axis=-1, keepdims=True)
    values = jnp.take_along_axis(x, best, axis=-1)
    count = jnp.take_along_axis(counts, best, axis=-1)
    return ModeResult(jnp.reshape(values, out_shape), jnp.reshape(count, out_shape))


_RANKS = {
    "min": lambda less, eq, dense, ordinal: less + 1,
    "max": lambda less, eq, dense, ordinal: less + eq,
    "average": lambda less, eq, dense, ordinal: less + (eq + 1) / 2,
    "dense": lambda less, eq, dense, ordinal: dense,
    "ordinal": lambda less, eq, dense, ordinal: ordinal,
}


def _ranks(x, method):
    """Ranks along the last axis from pairwise comparisons (counts of smaller and equal values)."""
    ftype = _dt.default_float()
    xi, xj = _pairwise(x)
    less = jnp.sum(xj < xi, axis=-1).astype(ftype)
    equal = xj == xi
    eq = jnp.sum(equal, axis=-1).astype(ftype)
    # dense rank: the distinct values below x_i, each group of equal values counted once
    dense = jnp.round(jnp.sum(jnp.where(xj < xi, 1 / eq[..., None, :], 0), axis=-1)) + 1
    n = x.shape[-1]
    before = np.arange(n)[None, :] < np.arange(n)[:, None]
    ordinal = less + jnp.sum(equal & before, axis=-1).astype(ftype) + 1
    ranks = _RANKS[method](less, eq, dense.astype(ftype), ordinal)
    has_nan = jnp.any(jnp.isnan(x), axis=-1, keepdims=True)
    return jnp.where(has_nan, np.array(np.nan, ftype), ranks.astype(ftype))


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """The ranks (from 1) of a's values, ties resolved by `method` ('average', 'min', 'max',
    'dense' or 'ordinal'), of the flattened array or along axis; all nan where a nan occurs."""
    _check_nan_policy("rankdata", nan_policy)
    if method not in _RANKS:
        raise ValueError(f"unknown method '{method}'")
    x = _arrays("rankdata", a)[0]
    if axis is None:
        return _ranks(jnp.ravel(x), method)
    axis = _axes(axis, x.ndim, name="rankdata")[0]
    return jnp.moveaxis(_ranks(jnp.moveaxis(x, axis, -1), method), -1, axis)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, std(a, ddof) / sqrt(n), along axis (nan_policy 'omit'
    ignores nans)."""
    b = promote("sem", a)[0]
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return b.std(axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = jnp.sum(~jnp.isnan(b), axis, keepdims=keepdims)
        return jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")
