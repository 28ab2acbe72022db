"""Functional edits and assembly: insert, place, put, put_along_axis, choose, block,
partition/argpartition, apply_along_axis, apply_over_axes."""
import numpy as np

from ...core import dtypes as _dt
from ...core.primitives import elementwise as ew
from ...core.transforms.vmap import vmap
from .. import lax
from .promotion import (array, asarray, broadcast_arrays, broadcast_to, concrete_value, moveaxis,
                        ravel, reshape, _arrays, _axis, staged_as)
from .ufuncs import negative, remainder
from .creation import arange, indices, ones, zeros
from .indexing import clip, nonzero, unravel_index, where
from .sorting import argsort, sort
from .manipulation import concatenate, expand_dims, swapaxes

_IMMUTABLE = ("jax.numpy.{} cannot modify arrays in-place, because JAX arrays are immutable. "
              "Pass inplace=False to instead return an updated array.")


# ---------------------------------------------------------------- insert and friends

def insert(arr, obj, values, axis=None):
    """arr with values inserted before the indices obj (a scalar, a 1-d integer array or a
    slice) along axis (into the flattened array when None)."""
    a, = _arrays("insert", arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, a.ndim)
    idx = arange(*obj.indices(a.shape[axis])) if isinstance(obj, slice) else asarray(obj)
    if idx.ndim > 1:
        raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                         "scalar")
    if idx.ndim == 1 and not _dt.is_int(idx.dtype):
        if idx.shape[0]:
            raise ValueError("jnp.insert(): index array must be integer typed")
        idx = idx.astype(_dt.default_int())
    vals = moveaxis(array(values, dtype=a.dtype, ndmin=a.ndim), 0, axis) if idx.ndim == 0 \
        else array(values, dtype=a.dtype, ndmin=a.ndim)
    n_new = vals.shape[axis] if idx.ndim == 0 else idx.shape[0]
    idx = broadcast_to(idx, (n_new,))
    return _insert_at(a, idx, vals, axis, n_new)


def _insert_at(a, idx, vals, axis, n_new):
    """Scatter a's slices and vals' slices into an array n_new longer along axis."""
    n = a.shape[axis]
    idx = clip(where(idx < 0, idx + n, idx), 0, n)
    new_pos = idx.at[argsort(idx)].add(arange(n_new, dtype=idx.dtype))
    old_pos, = nonzero(ones(n + n_new, bool).at[new_pos].set(False), size=n)
    front = moveaxis(a, axis, 0)
    vals = broadcast_to(moveaxis(vals, axis, 0), (n_new,) + front.shape[1:])
    out = zeros((n + n_new,) + front.shape[1:], a.dtype)
    return moveaxis(out.at[new_pos].set(vals).at[old_pos].set(front), 0, axis)


def _cycled(values, size):
    """values (flat) repeated cyclically to `size` entries, as NumPy's place and put."""
    reps = -(-size // values.shape[0])
    return concatenate([values] * reps)[:size] if reps else values[:0]


def place(arr, mask, vals, *, inplace=True):
    """arr with the positions where mask holds set from vals, cycled (inplace=False only)."""
    data, mask, vals = _arrays("place", arr, mask, vals)
    if inplace:
        raise ValueError(_IMMUTABLE.format("place"))
    vals = ravel(vals)
    if vals.shape[0] == 0:
        return data
    idx, = nonzero(ravel(mask), size=mask.size, fill_value=mask.size)
    return reshape(ravel(data).at[idx].set(_cycled(vals, idx.shape[0]), mode="drop"),
                   data.shape)


def put(a, ind, v, mode=None, *, inplace=True):
    """a with the flat positions ind set from v, cycled (inplace=False only); mode "clip" or
    "wrap" folds out-of-range indices in, None drops them."""
    arr, ind, v = _arrays("put", a, ind, v)
    if inplace:
        raise ValueError(_IMMUTABLE.format("put"))
    ind, v = ravel(ind), ravel(v)
    if not arr.size or not ind.size or not v.size:
        return arr
    ind, scatter_mode = _put_indices(ind, arr.size, mode)
    return arr.at[unravel_index(ind, arr.shape)].set(_cycled(v, ind.shape[0]), mode=scatter_mode)


def _put_indices(ind, size, mode):
    if mode is None:
        return ind, "drop"
    if mode == "clip":
        return clip(ind, 0, size - 1), "promise_in_bounds"
    if mode == "wrap":
        return remainder(ind, size), "promise_in_bounds"
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """arr with values put at `indices` along axis (take_along_axis's inverse;
    inplace=False only)."""
    arr, idx = _arrays("put_along_axis", arr, indices)
    if inplace:
        raise ValueError(_IMMUTABLE.format("put_along_axis"))
    if axis is None:
        return reshape(put_along_axis(ravel(arr), ravel(idx), values, 0, False, mode=mode),
                       arr.shape)
    axis = _axis(axis, arr.ndim)
    if idx.ndim != arr.ndim:
        raise ValueError("indices and arr must have the same number of dimensions; "
                         f"{idx.ndim} vs. {arr.ndim}")
    grid = [reshape(arange(n), tuple(n if d == i else 1 for d in range(arr.ndim)))
            for i, n in enumerate(arr.shape)]
    grid[axis] = idx
    return arr.at[tuple(broadcast_arrays(*grid))].set(values, mode=mode)


def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i] for each position i (a, choices broadcast); mode "raise" (a must be
    concrete), "wrap" or "clip"."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a, *choices = _arrays("choose", a, *choices)
    if not _dt.is_int(a.dtype):
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        value = np.asarray(concrete_value(a, "The error occurred because jnp.choose was "
                                             "jit-compiled with mode='raise'. Use mode='wrap' "
                                             "or mode='clip' instead."))
        if ((value < 0) | (value >= n)).any():
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = remainder(a, n)
    elif mode == "clip":
        a = clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    a, *choices = broadcast_arrays(a, *choices)
    return asarray(choices)[(a,) + indices(a.shape, sparse=True)]


def block(arrays):
    """An array assembled from nested lists of blocks (the innermost lists joined along the
    last axis, their parents along the one before, ...)."""
    out, _ = _block(arrays)
    return out


def _block(xs):
    if isinstance(xs, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
    if not isinstance(xs, list):
        return asarray(xs), 1
    if not xs:
        raise ValueError("jax.numpy.block does not allow empty list arguments")
    parts, depths = zip(*(_block(x) for x in xs))
    if any(d != depths[0] for d in depths[1:]):
        raise ValueError("Mismatched list depths in jax.numpy.block")
    rank = max(depths[0], max(p.ndim for p in parts))
    parts = [array(p, copy=False, ndmin=rank) for p in parts]
    return concatenate(parts, axis=-depths[0]), depths[0] + 1


# ---------------------------------------------------------------- partition

def _partition_setup(name, a, kth, axis):
    arr, = _arrays(name, a)
    axis = _axis(axis, arr.ndim)
    kth = _axis(kth, arr.shape[axis], name="kth")
    return swapaxes(arr, axis, -1), kth, axis


def _negated(arr):
    """An order-reversing map of arr (for unsigned ints: ~x, as -x wraps around 0)."""
    return ew.bitwise_not(arr) if _dt.kind(arr.dtype) in "ub" else negative(arr)


@staged_as("partition", static_argnames=("kth", "axis"))
def partition(a, kth, axis=-1):
    """a along axis with the kth smallest in place, the smaller ones (sorted) before it and
    the larger ones after (as JAX's: in descending order; complex: fully sorted)."""
    arr, kth, axis = _partition_setup("partition", a, kth, axis)
    if _dt.kind(arr.dtype) == "c":
        return swapaxes(sort(arr, axis=-1), -1, axis)
    bottom = _negated(lax.top_k(_negated(arr), kth + 1)[0])
    top = lax.top_k(arr, arr.shape[-1] - kth - 1)[0]
    return swapaxes(concatenate([bottom, top], axis=-1), -1, axis)


def argpartition(a, kth, axis=-1):
    """The indices that partition a along axis (see partition)."""
    arr, kth, axis = _partition_setup("argpartition", a, kth, axis)
    if _dt.kind(arr.dtype) == "c":
        return swapaxes(argsort(arr, axis=-1), -1, axis)
    bottom = lax.top_k(_negated(arr), kth + 1)[1]
    rest = ones(arr.shape, np.int32)
    mark = lambda r, i: r.at[i].set(0)  # noqa: E731
    for _ in range(arr.ndim - 1):
        mark = vmap(mark)
    top = lax.top_k(mark(rest, bottom), arr.shape[-1] - kth - 1)[1]
    return swapaxes(concatenate([bottom, top], axis=-1), -1, axis)


# ---------------------------------------------------------------- applying functions

def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to every 1-d slice of arr along axis, by vmap over the other axes."""
    arr, = _arrays("apply_along_axis", arr)
    axis = _axis(axis, arr.ndim)

    def func(x):
        return func1d(x, *args, **kwargs)
    for i in range(1, arr.ndim - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each axis in turn, the reduced axis kept (size 1)."""
    a, = _arrays("apply_over_axes", a)
    for axis in axes:
        b = func(a, axis)
        if b.ndim == a.ndim - 1:
            b = expand_dims(b, axis)
        elif b.ndim != a.ndim:
            raise ValueError("function is not returning an array of the correct shape")
        a = b
    return a

