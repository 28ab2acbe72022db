"""Histograms: histogram_bin_edges, histogram, histogram2d, histogramdd (traceable for integer
or explicit bins; NumPy's named bin estimators, e.g. bins="auto", on concrete data)."""
import builtins
import math

import numpy as np

from ...core import dtypes as _dt
from .promotion import (asarray, concrete_value, promote_dtypes, ravel, reshape, transpose,
                        _arrays, _promote_to_inexact, _static_int)
from .ufuncs import divide, equal, subtract
from .creation import linspace, ones_like, zeros
from .indexing import ravel_multi_index, where
from .reductions import max, min, ptp, sum
from .sorting import bincount, searchsorted
from .maths import diff


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges of the bins: `bins` itself (1-d), bins + 1 evenly spaced edges over range
    (the data's, widened by 0.5 each way when empty), or a NumPy estimator's ("auto", "fd",
    ...: a needs to be concrete)."""
    arr, = _arrays("histogram_bin_edges", a)
    dtype = _dt.to_inexact_dtype(arr.dtype)
    if isinstance(bins, str):
        return _named_bin_edges(arr, bins, range, weights, dtype)
    if np.ndim(bins) == 1:
        return asarray(bins, dtype=dtype)
    n = _static_int(bins, "bins argument of histogram_bin_edges")
    lo_hi = asarray([min(arr), max(arr)] if range is None else range, dtype=dtype)
    if lo_hi.shape != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    # the range's ptp taken for each edge, as JAX's
    lo = where(equal(ptp(lo_hi), 0), subtract(lo_hi[0], 0.5), lo_hi[0])
    hi = where(equal(ptp(lo_hi), 0), lo_hi[1] + 0.5, lo_hi[1])
    return linspace(lo, hi, n + 1, dtype=dtype)


def _named_bin_edges(arr, bins, range, weights, dtype):
    """NumPy's estimator `bins` on the concrete data (JAX refuses string bins)."""
    value = np.asarray(concrete_value(arr, f"bins={bins!r} in jnp.histogram_bin_edges needs "
                                           "concrete data; pass an integer or the edges"))
    w = None if weights is None else np.asarray(concrete_value(weights, "weights"))
    edges = np.histogram_bin_edges(value, bins, range, w)
    return asarray(edges, dtype=dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """(counts or summed weights per bin, bin edges); the last bin includes its right edge,
    values outside are ignored; density normalises to unit integral."""
    edges_arg = [] if isinstance(bins, str) else [bins]  # promoted with a, as in JAX
    given = weights
    if weights is None:
        a = _promote_to_inexact(*_arrays("histogram", a, *edges_arg))[0]
        weights = ones_like(a)
    else:
        a, *_, weights = _promote_to_inexact(*_arrays("histogram", a, *edges_arg, weights))
    if np.shape(a) != np.shape(weights):
        raise ValueError("weights should have the same shape as a.")
    a, weights = ravel(a), ravel(weights)
    edges = histogram_bin_edges(a, bins, range, None if given is None else weights)
    n = edges.shape[0]
    idx = where(equal(a, edges[-1]), n - 1, searchsorted(edges, a, side="right"))
    counts = zeros(n, weights.dtype).at[idx].add(weights, mode="drop")[1:]
    if density:
        counts = divide(divide(counts, diff(edges)), sum(counts))
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """The two-dimensional histogram of points (x, y): (counts, x edges, y edges)."""
    x, y = promote_dtypes(*_arrays("histogram2d", x, y))
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):
        bins = [asarray(bins), asarray(bins)]
    hist, edges = histogramdd(transpose(asarray([x, y])), bins, range, weights, density)
    return hist, edges[0], edges[1]


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """The histogram of N points in D dimensions (sample of shape (N, D)): (counts of shape
    (bins_1, ..., bins_D), [edges per dimension])."""
    sample, = _arrays("histogramdd", sample)
    if weights is not None:
        weights, = _arrays("histogramdd", weights)
        if weights.shape != sample.shape[:1]:
            raise ValueError("should have one weight for each sample.")
    n_dims = sample.shape[1]
    _check_ranges(sample, range)
    bins = _bins_per_dim(bins, n_dims)
    indices, edges = [], []
    for i in builtins.range(n_dims):
        column = sample[:, i]
        e = histogram_bin_edges(column, bins[i], None if range is None else range[i], weights)
        idx = searchsorted(e, column, side="right")
        indices.append(where(equal(column, e[-1]), idx - 1, idx))
        edges.append(e)
    shape = tuple(e.shape[0] + 1 for e in edges)
    flat = ravel_multi_index(tuple(indices), shape, mode="clip")
    hist = reshape(bincount(flat, weights, length=math.prod(shape)), shape)
    hist = hist[(slice(1, -1),) * n_dims]
    return (_density(hist, edges, sample.dtype) if density else hist), edges


def _check_ranges(sample, range):
    if range is not None and (len(range) != sample.shape[1] or builtins.any(
            r is not None and np.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"For sample.shape={sample.shape}, range must be a sequence of "
                         f"{sample.shape[1]} pairs or Nones; got range={range}")


def _bins_per_dim(bins, n_dims):
    try:
        if len(bins) != n_dims:
            raise ValueError("should be a bin for each dimension.")
        return list(bins)
    except TypeError:
        return n_dims * [bins]


def _density(hist, edges, dtype):
    hist = asarray(hist).astype(dtype)
    hist = divide(hist, sum(hist))
    for d, e in enumerate(edges):
        shape = [1] * len(edges)
        shape[d] = e.shape[0] - 1
        hist = divide(hist, reshape(diff(e), tuple(shape)))
    return hist
