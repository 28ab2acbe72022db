"""Sorting and searching: sort, argsort, lexsort, searchsorted, digitize, isin, bincount."""
import builtins

import numpy as np

from ...core import dtypes as _dt
from ...core.trace import get_aval
from ...core.primitives import elementwise as ew
from ...core.primitives import structural as st
from .. import lax
from .promotion import (astype, concrete_value, lax_full, promote_dtypes, ravel, staged_as,
                        _arrays, _axis, _static_int, _user_dtype)
from .ufuncs import (equal, greater_equal, isnan, less, less_equal, logical_and, logical_not,
                     logical_or, subtract)
from .creation import zeros, zeros_like
from .indexing import clip, take, where
from .reductions import any, sum
from .manipulation import flip, _sequence


# ---------------------------------------------------------------- sorting and searching

def _sort_axis(name, a, axis, kind, order):
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")
    if axis is None:
        return ravel(a), 0
    return a, _axis(axis, a.ndim)


@staged_as("sort", static_argnames=("axis", "kind", "order", "stable", "descending"))
def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """a sorted along axis (flattened when None); NaNs last."""
    a, = _arrays("sort", a)
    a, axis = _sort_axis("sort", a, axis, kind, order)
    out = lax.sort(a, axis, is_stable=stable)
    return st.rev(out, (axis,)) if descending else out


@staged_as("argsort", static_argnames=("axis", "kind", "order", "stable", "descending", "dtype"))
def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    """The indices that sort a along axis (a stable sort of (a, iota) pairs)."""
    a, = _arrays("argsort", a)
    a, axis = _sort_axis("argsort", a, axis, kind, order)
    idx_dtype = _dt.default_int() if dtype is None else _user_dtype(dtype, "argsort")
    iota = st.broadcasted_iota(idx_dtype, a.shape, axis)
    if descending and stable:
        a, iota = st.rev(a, (axis,)), st.rev(iota, (axis,))
    _, indices = lax.sort_key_val(a, iota, axis, is_stable=stable)
    return st.rev(indices, (axis,)) if descending else indices


@staged_as("lexsort", static_argnames=("axis",))
def lexsort(keys, axis=-1):
    """Indices sorting by the last key, then the one before, ... (stable)."""
    keys = _arrays("lexsort", *_sequence(keys, "lexsort"))
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({k.shape for k in keys}) > 1:
        raise ValueError("all keys need to be the same shape")
    if keys[0].ndim == 0:
        return lax_full((), 0, _dt.default_int())
    axis = _axis(axis, keys[0].ndim)
    iota = st.broadcasted_iota(_dt.default_int(), keys[0].shape, axis)
    return lax.sort((*keys[::-1], iota), axis, num_keys=len(keys))[-1]


def msort(a):
    """a sorted along axis 0."""
    return sort(a, axis=0)


@staged_as("sort_complex")
def sort_complex(a):
    """a sorted (lexicographically by real, then imaginary part) as complex."""
    a, = _arrays("sort_complex", a)
    return astype(lax.sort(a), _dt.default_complex() if _dt.kind(a.dtype) != "c" else a.dtype)


def _nan_last_less(x, y, inclusive):
    """x < y (x <= y) in sort order: NaNs after every number."""
    if not _dt.is_inexact(x.dtype):
        return (less_equal if inclusive else less)(x, y)
    x_nan, y_nan = isnan(x), isnan(y)
    base = (less_equal if inclusive else less)(x, y)
    if inclusive:
        return logical_or(base, y_nan)
    return logical_or(base, logical_and(logical_not(x_nan), y_nan))


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion indices of v into the sorted 1-d a (counting a's elements before each v:
    an all-pairs comparison, any method argument)."""
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"invalid argument method={method!r}, expected one of 'scan', "
                         "'scan_unrolled', 'sort' or 'compare_all'")
    a, v = _arrays("searchsorted", a, v)
    if a.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        a = take(a, sorter)
    a, v = promote_dtypes(a, v)
    n = a.shape[0]
    a_b = st.broadcast_in_dim(a, v.shape + (n,), (v.ndim,))
    v_b = st.broadcast_in_dim(v, v.shape + (n,), tuple(range(v.ndim)))
    before = _nan_last_less(a_b, v_b, inclusive=side == "right")
    return sum(before, -1, dtype=_dt.default_int()) if n else zeros(v.shape, _dt.default_int())


def digitize(x, bins, right=False, *, method=None):
    """The indices of the bins (monotonic 1-d) to which each x belongs."""
    x, bins = _arrays("digitize", x, bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if bins.shape[0] == 0:
        return zeros_like(x, dtype=_dt.int32)
    side = "left" if right else "right"
    increasing = searchsorted(bins, x, side=side)
    decreasing = subtract(bins.shape[0], searchsorted(flip(bins), x,
                                                      side="right" if right else "left"))
    return where(greater_equal(bins[-1], bins[0]), increasing, decreasing)


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each element is in test_elements (an all-pairs comparison)."""
    element, test_elements = _arrays("isin", element, test_elements)
    tests = ravel(test_elements)
    e_b = st.broadcast_in_dim(element, element.shape + tests.shape, tuple(range(element.ndim)))
    t_b = st.broadcast_in_dim(tests, element.shape + tests.shape, (element.ndim,))
    found = any(equal(e_b, t_b), -1)
    return logical_not(found) if invert else found


def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed weights) of each non-negative int in x; `length` makes it
    traceable, else x must be concrete."""
    x, = _arrays("bincount", x)
    x = ew.convert_element_type(x, _dt.int32) if x.dtype == _dt.bool_ else x
    if not _dt.is_int(x.dtype):
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    if length is None:
        value = concrete_value(x, "The error occurred because of argument 'x' of "
                                   "jnp.bincount. To avoid this error, pass a static `length`.")
        length = builtins.max(int(minlength), int(value.max(initial=-1)) + 1)
    length = _static_int(length, "length argument of jnp.bincount")
    if weights is None:
        weights = np.array(1, _dt.default_int())
    else:
        weights, = _arrays("bincount", weights)
        if weights.shape != x.shape:
            raise ValueError(f"type of weights must match type of x. Got typeof(x)="
                             f"{x.dtype.name}{list(x.shape)} and typeof(weights)="
                             f"{weights.dtype.name}{list(weights.shape)}")
    # as JAX's: the weights added at x (clipped below at 0) into zeros, dropping past length
    return zeros(length, get_aval(weights).dtype).at[clip(x, 0)].add(weights, mode="drop")
