"""Set operations: unique (with a static size, traceable), the array API's unique_* functions,
union1d, intersect1d, setdiff1d, setxor1d."""
import collections

import numpy as np

from ...core import dtypes as _dt
from ...core.primitives import elementwise as ew
from .promotion import (asarray, astype, concrete_value, moveaxis, promote_dtypes,
                        ravel, reshape, _arrays, _axis, _static_int)
from .ufuncs import isnan, logical_and, logical_not, not_equal
from .creation import arange, full, zeros
from .indexing import nonzero, take, where
from .reductions import any, argmax, cumsum, max, min, sum
from .manipulation import concatenate
from .sorting import isin, lexsort

UNIQUE_SIZE_HINT = ("To make jnp.unique() compatible with JIT and other transforms, you can "
                    "specify a concrete value for the size argument, which will determine the "
                    "output size.")

UniqueAllResult = collections.namedtuple(
    "UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = collections.namedtuple("UniqueInverseResult",
                                             ["values", "inverse_indices"])


# ---------------------------------------------------------------- unique

def _sorted_with_mask(ar, equal_nan):
    """ar's slices along axis 0 sorted lexicographically, the permutation, and the mask of the
    first of each run of equal slices (NaNs equal when equal_nan)."""
    n = ar.shape[0]
    rows = reshape(ar, (n, -1))
    if _dt.kind(ar.dtype) == "c":  # one NaN: JAX's, so that all complex NaNs compare equal
        rows = where(isnan(rows), asarray(complex(np.nan, np.nan), dtype=ar.dtype), rows)
    perm = (lexsort([rows[:, j] for j in reversed(range(rows.shape[1]))]) if rows.shape[1]
            else zeros(n, _dt.default_int()))
    aux = take(rows, perm, axis=0)
    differ = not_equal(aux[1:], aux[:-1])
    if equal_nan and _dt.is_inexact(ar.dtype):
        differ = logical_and(differ, logical_not(logical_and(isnan(aux[1:]), isnan(aux[:-1]))))
    mask = concatenate([asarray([True]), any(differ, 1)]) if n else zeros(0, bool)
    return reshape(aux, ar.shape), perm, mask


def _select_padded(values, mask, size, fill):
    """The slices of values where mask holds, the first `size` of them, the rest `fill`."""
    idx, = nonzero(mask, size=size)
    out = take(values, idx, axis=0)
    if fill is None:
        return out
    valid = ew.lt(arange(size), sum(mask, dtype=_dt.default_int()))
    valid = reshape(valid, (size,) + (1,) * (values.ndim - 1))
    return where(valid, out, astype(asarray(fill), values.dtype))


def _result_size(mask, size, hint):
    if size is not None:
        return _static_int(size, "size argument of jnp.unique")
    return int(np.sum(concrete_value(mask, hint)))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):
    """The sorted unique elements (or slices along axis), with the first indices, the inverse
    and the counts on request. A static `size` makes it traceable: the first `size` uniques,
    padded with fill_value (default: the smallest), first indices of the smallest, counts 0."""
    ar, = _arrays("unique", ar)
    if size is None:  # JAX names the argument (not the mask computed from it)
        concrete_value(ar, "The error arose for the first argument of jnp.unique(). " +
                       UNIQUE_SIZE_HINT)
    flat = axis is None
    arr = ravel(ar) if flat else moveaxis(ar, _axis(axis, ar.ndim), 0)
    if arr.shape[0] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    if arr.shape[0] == 0:
        return _empty_unique(ar, arr, flat, size, fill_value, return_index, return_inverse,
                             return_counts)
    aux, perm, mask = _sorted_with_mask(arr, equal_nan)
    size = _result_size(mask, size, "The error arose in jnp.unique(). " + UNIQUE_SIZE_HINT)
    values = _select_padded(aux, mask, size, fill_value)
    out = [values if flat else moveaxis(values, 0, _axis(axis, ar.ndim))]
    if return_index:
        out.append(take(perm, nonzero(mask, size=size)[0]))
    if return_inverse:
        inverse = zeros(mask.shape, _dt.default_int()).at[perm].set(
            ew.sub(cumsum(mask, dtype=_dt.default_int()), asarray(1, _dt.default_int())))
        out.append(reshape(inverse, ar.shape) if flat else inverse)
    if return_counts:
        out.append(_counts(mask, size))
    return out[0] if len(out) == 1 else tuple(out)


def _counts(mask, size):
    """The length of each run the mask starts, 0 past the last."""
    n = mask.shape[0]
    starts, = nonzero(concatenate([mask, asarray([True])]), size=size + 1, fill_value=n)
    return ew.sub(starts[1:], starts[:-1])


def _empty_unique(ar, arr, flat, size, fill_value, return_index, return_inverse,
                  return_counts):
    int_t = _dt.default_int()
    n = size or 0
    values = full((n,) + arr.shape[1:], fill_value, ar.dtype) if n else arr
    out = [values if flat else moveaxis(values, 0, 0)]
    if return_index:
        out.append(zeros(n, int_t))
    if return_inverse:
        out.append(zeros(ar.shape if flat else (0,), int_t))
    if return_counts:
        out.append(zeros(n, int_t))
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x, /, *, size=None, fill_value=None):
    """The array API's unique_values: sorted uniques, NaNs distinct."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """The array API's unique_counts: (values, counts), NaNs distinct."""
    return UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size,
                                      fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    """The array API's unique_inverse: (values, inverse_indices of x's shape)."""
    return UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size,
                                       fill_value=fill_value))


def unique_all(x, /, *, size=None, fill_value=None):
    """The array API's unique_all: (values, indices, inverse_indices, counts)."""
    return UniqueAllResult(*unique(x, return_index=True, return_inverse=True,
                                   return_counts=True, equal_nan=False, size=size,
                                   fill_value=fill_value))


# ---------------------------------------------------------------- set operations

def _flat_pair(name, ar1, ar2):
    ar1, ar2 = promote_dtypes(*_arrays(name, ar1, ar2))
    return ravel(ar1), ravel(ar2)


def _needs_concrete(name, size, *arrays):
    if size is None:
        for a in arrays:
            concrete_value(a, f"The error arose in {name}()")
        return None
    return _static_int(size, f"size argument of jnp.{name}")


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique elements of both arrays."""
    ar1, ar2 = _arrays("union1d", ar1, ar2)
    size = _needs_concrete("union1d", size, ar1, ar2)
    return unique(concatenate([ravel(ar1), ravel(ar2)]), size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique elements of ar1 not in ar2 (padded with fill_value, default 0)."""
    arr1, arr2 = _arrays("setdiff1d", ar1, ar2)
    arr1, arr2 = ravel(arr1), ravel(arr2)
    size = _needs_concrete("setdiff1d", size, arr1)
    fill = 0 if fill_value is None else fill_value
    if arr1.shape[0] == 0:
        return full((size or 0,), fill, arr1.dtype)
    mask = full(arr1.shape, True, bool)
    if not assume_unique:
        arr1, _, mask = _sorted_with_mask(arr1, True)
    mask = logical_and(mask, isin(arr1, arr2, invert=True))
    size = _result_size(mask, size, "The error arose in setdiff1d()")
    return _select_padded(arr1, mask, size, fill)


def _pad_with_smallest(values, valid_count, fill_value):
    """JAX's padding of intersect1d and setxor1d: fill_value, else the smallest result (0
    when there is none)."""
    size = values.shape[0]
    valid = ew.lt(arange(size), valid_count)
    if fill_value is not None:
        return where(valid, values, astype(asarray(fill_value), values.dtype))
    if not size:
        return values
    zero = astype(asarray(0), values.dtype)
    top = max(where(valid, values, zero))
    return where(valid, values, min(where(valid, values, top)))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted elements in both arrays (and, on request, where each first occurs in
    each: the array's size in the padding)."""
    arr1, arr2 = _flat_pair("intersect1d", ar1, ar2)
    size = _needs_concrete("intersect1d", size, arr1, arr2)
    if arr1.shape[0] == 0 or arr2.shape[0] == 0:
        values, hit = zeros(size or 0, arr1.dtype), zeros(size or 0, bool)
    else:
        u1, _, m1 = _sorted_with_mask(arr1, True)
        hit = logical_and(m1, isin(u1, arr2))
        size = _result_size(hit, size, "The error arose in intersect1d()")
        values = take(u1, nonzero(hit, size=size)[0])
    count = sum(hit, dtype=_dt.default_int())
    values = _pad_with_smallest(values, count, fill_value)
    if not return_indices:
        return values
    return values, *(_first_index(values, count, arr) for arr in (arr1, arr2))


def _first_index(values, count, arr):
    """Where each of the first `count` values first occurs in arr (arr's size after them)."""
    n = arr.shape[0]
    valid = ew.lt(arange(values.shape[0]), count)
    if not n:
        return where(valid, 0, n)
    first = argmax(ew.eq(values[:, None], arr[None, :]), axis=1)
    return where(valid, astype(first, _dt.default_int()), n)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted elements in exactly one of the arrays."""
    arr1, arr2 = _flat_pair("setxor1d", ar1, ar2)
    size = _needs_concrete("setxor1d", size, arr1, arr2)
    both = concatenate([arr1, arr2])
    if both.shape[0] == 0:
        return zeros(size or 0, both.dtype)
    aux, _, mask = _sorted_with_mask(both, True)
    in1, in2 = isin(aux, arr1), isin(aux, arr2)
    mask = logical_and(mask, ew.ne(in1, in2))
    size = _result_size(mask, size, "The error arose in setxor1d()")
    idx, = nonzero(mask, size=size, fill_value=0)
    return _pad_with_smallest(take(aux, idx), sum(mask, dtype=_dt.default_int()), fill_value)

