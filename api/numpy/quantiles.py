"""jnp's order statistics: quantile, percentile, median and their NaN-ignoring forms."""
import numpy as np

from ...core import dtypes as _dt
from ...core.primitives import elementwise as ew
from ...core.primitives import gather as ga
from ...core.primitives import structural as st
from .. import lax
from .promotion import (astype, broadcast_shapes, broadcast_to, lax_full, lax_select, ravel,
                        reshape, squeeze, _arrays, _axes, _axis, _const_like, _lax_scalar,
                        _promote_to_inexact, _where, staged_as)
from .ufuncs import equal, isnan, less, logical_not, logical_or, maximum, minimum, multiply, subtract
from .indexing import take_along_axis, where
from .reductions import any, cumsum, sum, _static_axes

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")
_STATIC = ("axis", "overwrite_input", "keepdims", "method")


def _quantile_jit(name, squash_nans):
    """JAX's jit `name` (quantile or nanquantile)."""
    @staged_as(name, static_argnames=_STATIC)
    def staged(a, q, axis, out, overwrite_input, method, keepdims, *, weights):
        return _quantile(name, a, q, axis, out, overwrite_input, method, keepdims, weights,
                         squash_nans)
    return staged


def _percentile_jit(name, of):
    """JAX's jit `name` (percentile or nanpercentile): `of` at q / 100."""
    @staged_as(name, static_argnames=_STATIC)
    def staged(a, q, axis, out, overwrite_input, method, keepdims, *, weights):
        a, q = _arrays(name, a, q)
        return of(a, _promote_to_inexact(q)[0] / 100, axis=axis, out=out, method=method,
                  overwrite_input=overwrite_input, keepdims=keepdims, weights=weights)
    return staged


def _median_jit(name, of):
    """JAX's jit `name` (median or nanmedian): `of` at 0.5 by midpoints."""
    @staged_as(name, static_argnames=("axis", "overwrite_input", "keepdims"))
    def staged(a, axis, out, overwrite_input, keepdims):
        a, = _arrays(name, a)
        return of(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                  keepdims=keepdims, method="midpoint")
    return staged


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """The q-th quantiles along axis (q in [0, 1]; the q dimensions come first)."""
    return _QUANTILE(a, q, _static_axes(axis), out, overwrite_input, method, keepdims,
                     weights=weights)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """The q-th percentiles along axis (q in [0, 100])."""
    return _PERCENTILE(a, q, _static_axes(axis), out, overwrite_input, method, keepdims,
                       weights=weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along axis (NaN when the slice holds a NaN)."""
    return _MEDIAN(a, _static_axes(axis), out, overwrite_input, keepdims)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    """quantile ignoring NaNs."""
    return _NANQUANTILE(a, q, _static_axes(axis), out, overwrite_input, method, keepdims,
                        weights=weights)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """median ignoring NaNs."""
    return _NANMEDIAN(a, _static_axes(axis), out, overwrite_input, keepdims)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    """percentile ignoring NaNs."""
    return _NANPERCENTILE(a, q, _static_axes(axis), out, overwrite_input, method, keepdims,
                          weights=weights)


_QUANTILE, _NANQUANTILE = _quantile_jit("quantile", False), _quantile_jit("nanquantile", True)
_PERCENTILE = _percentile_jit("percentile", quantile)
_NANPERCENTILE = _percentile_jit("nanpercentile", nanquantile)
_MEDIAN, _NANMEDIAN = _median_jit("median", quantile), _median_jit("nanmedian", nanquantile)


def _quantile(name, a, q, axis, out, overwrite_input, method, keepdims, weights, squash_nans):
    """JAX's _quantile: the reduced axes merged into one (the last, for several), sorted; the
    two neighbours of each q's position gathered and combined as `method` says."""
    a, q = _arrays(name, a, q)
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or "
                         "out != None")
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "'nearest' or 'inverted_cdf'")
    a, weights = _quantile_weights(name, a, weights, axis, method)
    if _dt.kind(a.dtype) == "c":
        raise ValueError("quantile does not support complex input, as the operation is "
                         "poorly defined.")
    if method == "inverted_cdf":
        return _by_inverted_cdf(name, a, q, axis, keepdims, weights, squash_nans)
    a, axis, keep_shape = _merge_axes(a, axis, keepdims)
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    if a.shape[axis] == 0:
        raise ValueError(f"jnp.{name}: cannot compute quantiles of an empty axis")
    find = _neighbours_of_nans if squash_nans else _neighbours
    low, high, low_weight, high_weight = find(a, q, axis, keepdims)
    result = _combine(method, low, high, low_weight, high_weight, q)
    if keepdims and keep_shape:
        result = reshape(result, q.shape + keep_shape)
    return ew.convert_element_type(result, a.dtype)


def _merge_axes(a, axis, keepdims):
    """a with several reduced axes merged into a last one (raveled for axis None), the axis
    to reduce and the keepdims shape (empty for one axis), as JAX's _quantile."""
    if axis is None:
        return ravel(a), 0, (1,) * a.ndim if keepdims else ()
    if not isinstance(axis, tuple):
        return a, _axis(axis, a.ndim), ()
    axes = tuple(_axis(ax, a.ndim) for ax in axis)
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    keep = sorted(set(range(a.ndim)) - set(axes))
    dims = list(range(a.ndim))
    for i, k in enumerate(keep):
        dims[i], dims[k] = dims[k], dims[i]
    merged = int(np.prod([a.shape[i] for i in axes], dtype=np.int64))
    shape = tuple(a.shape[i] for i in range(a.ndim) if i not in axes) + (merged,)
    keep_shape = tuple(1 if i in axes else d for i, d in enumerate(a.shape))
    return st.reshape(a, shape, dimensions=tuple(dims)), a.ndim - len(axes), keep_shape


def _positions(q, n):
    """q's position among n sorted values: floor, ceiling and their weights."""
    q = ew.mul(q, ew.sub(n, _lax_scalar(q, 1)))
    low, high = ew.floor(q), ew.ceil(q)
    high_weight = ew.sub(q, low)
    return low, high, ew.sub(_lax_scalar(high_weight, 1), high_weight), high_weight


def _neighbours(a, q, axis, keepdims):
    """The sorted values either side of each q's position (NaN for a slice holding one)."""
    a = _where(any(isnan(a), axis=axis, keepdims=True), np.nan, a)
    a = lax.sort(a, dimension=axis)
    n = ew.convert_element_type(a.shape[axis], q.dtype)
    low, high, low_weight, high_weight = _positions(q, n)
    low, high = [ew.clamp(_lax_scalar(i, 0), i, n - 1) for i in (low, high)]
    low, high = (ew.convert_element_type(i, _dt.int32) for i in (low, high))
    sizes = tuple(1 if d == axis else s for d, s in enumerate(a.shape))
    kept = a.ndim if keepdims else a.ndim - 1
    dnums = ga.GatherDimensionNumbers(
        offset_dims=tuple(range(q.ndim, kept + q.ndim)),
        collapsed_slice_dims=() if keepdims else (axis,), start_index_map=(axis,))
    low, high = (ga.gather(a, i[..., None], dnums, sizes) for i in (low, high))
    if q.ndim == 1:
        low_weight, high_weight = (st.broadcast_in_dim(w, low.shape, (0,))
                                   for w in (low_weight, high_weight))
    return low, high, low_weight, high_weight


def _neighbours_of_nans(a, q, axis, keepdims):
    """_neighbours among each slice's values that are not NaN (sorted to its end), indexed
    with iotas over the other axes, as JAX's."""
    a = lax.sort(_where(isnan(a), np.nan, a), dimension=axis)
    counts = sum(logical_not(isnan(a)), axis=axis, dtype=q.dtype, keepdims=keepdims)
    reduced, nq = counts.shape, q.ndim
    q = st.expand_dims(q, tuple(range(nq, len(reduced) + nq)))
    counts = st.expand_dims(counts, tuple(range(nq)))
    low, high, low_weight, high_weight = _positions(q, counts)
    low, high = [ew.max(_lax_scalar(i, 0), ew.min(i, counts - 1)) for i in (low, high)]
    low, high = (ew.convert_element_type(i, _dt.int32) for i in (low, high))
    index = [st.broadcasted_iota(_dt.int32, q.shape[:nq] + reduced, d + nq)
             for d in range(len(reduced))]
    if keepdims:
        index[axis] = low
    else:
        index.insert(axis, low)
    low_value = a[tuple(index)]
    index[axis] = high
    return low_value, a[tuple(index)], low_weight, high_weight


def _combine(method, low, high, low_weight, high_weight, q):
    if method == "linear":
        return ew.add(ew.mul(low.astype(q.dtype), low_weight),
                      ew.mul(high.astype(q.dtype), high_weight))
    if method == "lower":
        return low
    if method == "higher":
        return high
    if method == "nearest":
        return ew.select_n(ew.le(high_weight, _lax_scalar(high_weight, 0.5)), high, low)
    return ew.mul(ew.add(low, high), _lax_scalar(low, 0.5))


def _by_inverted_cdf(name, a, q, axis, keepdims, weights, squash_nans):
    """inverted_cdf on the reduced axes merged into a last one (refjax's own staging)."""
    a, keep_shape = _reduce_to_last_axis(a, axis, keepdims)
    if a.shape[-1] == 0:
        raise ValueError(f"jnp.{name}: cannot compute quantiles of an empty axis")
    weights = lax_full(a.shape, 1, a.dtype) if weights is None else \
        _reduce_to_last_axis(weights, axis, False)[0]
    result = _inverted_cdf(a, weights, q, squash_nans)
    if keep_shape is not None:
        result = reshape(result, q.shape + keep_shape)
    return ew.convert_element_type(result, a.dtype)


def _quantile_weights(name, a, weights, axis, method):
    """a and weights promoted to one inexact dtype, weights broadcast to a's shape (given
    for the reduced axes only, or for all); JAX's errors."""
    if weights is None:
        return _promote_to_inexact(a)[0], None
    weights, = _arrays(name, weights)
    if _dt.kind(weights.dtype) == "c":
        raise ValueError("Weights cannot be complex types.")
    if method != "inverted_cdf":
        raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                  "'inverted_cdf' supports weights.")
    a, weights = _promote_to_inexact(a, weights)
    if weights.shape == a.shape:
        return a, weights
    if axis is None:
        raise ValueError("Weights shape must match 'a' shape when axis is None.")
    axes = tuple(_axis(ax, a.ndim) for ax in (axis if isinstance(axis, tuple) else (axis,)))
    if weights.shape != tuple(a.shape[ax] for ax in axes):
        raise ValueError(f"Weights shape {weights.shape} must match reduction axes "
                         f"{tuple(a.shape[ax] for ax in axes)}")
    return a, st.broadcast_in_dim(weights, a.shape, axes)


def _inverted_cdf(a, weights, q, squash_nans):
    """The first sorted value whose cumulative weight reaches q of the total (negative and
    NaN weights make the slice NaN; NaN values count nothing, and, unless squashed, make it
    NaN too); q's dimensions lead the result."""
    nan_data, bad = isnan(a), logical_or(less(weights, 0), isnan(weights))
    clean = lax_select(logical_or(bad, nan_data), _const_like(weights, 0), weights)
    a, clean = lax.sort_key_val(lax_select(nan_data, _const_like(a, np.nan), a), clean, -1)
    cum = cumsum(clean, -1)
    target = multiply(reshape(q, q.shape + (1,) * a.ndim), cum[..., -1:])
    idx = sum(astype(less(cum, target), _dt.int32), -1, keepdims=True)
    valid = sum(logical_not(nan_data), -1, keepdims=True, dtype=_dt.int32) if squash_nans \
        else lax_full((1,) * a.ndim, a.shape[-1], _dt.int32)
    result = _take_last(a, maximum(0, minimum(idx, subtract(valid, 1))))
    nan_out = any(bad, -1) | (equal(squeeze(valid, -1), 0) if squash_nans else
                              any(nan_data, -1))
    return where(nan_out, _const_like(result, np.nan), result)


def _reduce_to_last_axis(a, axis, keepdims):
    """a with the reduced axes merged into a last one, and the keepdims shape (or None)."""
    axes = _axes(axis, a.ndim)
    kept = tuple(i for i in range(a.ndim) if i not in axes)
    keep_shape = tuple(1 if i in axes else d for i, d in enumerate(a.shape)) if keepdims \
        else None
    n = int(np.prod([a.shape[i] for i in axes], dtype=np.int64))
    merged = st.reshape(a, tuple(a.shape[i] for i in kept) + (n,), dimensions=kept + axes)
    return merged, keep_shape


def _take_last(a, idx):
    """a[..., idx] where idx has shape q.shape + (..., 1) broadcasting against a's batch."""
    nq = idx.ndim - a.ndim
    batch = broadcast_shapes(idx.shape[nq:-1], a.shape[:-1])
    idx = broadcast_to(idx, idx.shape[:nq] + batch + (1,))
    a_b = broadcast_to(a, idx.shape[:nq] + batch + a.shape[-1:])
    return st.squeeze(take_along_axis(a_b, idx, -1), (idx.ndim - 1,))
