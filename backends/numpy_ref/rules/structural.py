"""NumPy rules of the structural primitives (shapes, slices, padding, iota, copy)."""
import numpy as np

from ....core.primitives import structural as st
from ._common import rule


@rule(st.broadcast_in_dim_p)
def _broadcast_in_dim(x, *, shape, broadcast_dimensions, sharding):
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    # a read-only view: buffers are never written after creation
    return np.broadcast_to(np.reshape(x, expanded), shape)


@rule(st.reshape_p)
def _reshape(x, *, new_sizes, dimensions, sharding):
    return np.reshape(x, new_sizes)


@rule(st.squeeze_p)
def _squeeze(x, *, dimensions):
    return np.squeeze(x, axis=dimensions)


@rule(st.transpose_p)
def _transpose(x, *, permutation):
    return np.transpose(x, permutation)  # a view: buffers are never written after creation


@rule(st.rev_p)
def _rev(x, *, dimensions):
    return np.flip(x, dimensions).copy() if dimensions else x


@rule(st.slice_p)
def _slice(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    return x[tuple(slice(*bounds) for bounds in zip(start_indices, limit_indices, strides))].copy()


def _clamped_starts(shape, sizes, idx):
    return [int(np.clip(int(i), 0, d - s)) for i, d, s in zip(idx, shape, sizes)]


@rule(st.dynamic_slice_p)
def _dynamic_slice(x, *idx, slice_sizes):
    starts = _clamped_starts(x.shape, slice_sizes, idx)
    return x[tuple(slice(s, s + n) for s, n in zip(starts, slice_sizes))].copy()


@rule(st.dynamic_update_slice_p)
def _dynamic_update_slice(x, update, *idx):
    starts = _clamped_starts(x.shape, update.shape, idx)
    out = x.copy()
    out[tuple(slice(s, s + n) for s, n in zip(starts, update.shape))] = update
    return out


@rule(st.pad_p)
def _pad(x, padding_value, *, padding_config):
    """Interior padding first, then lo/hi (negative values crop)."""
    out = x
    for axis, (lo, hi, interior) in enumerate(padding_config):
        out = _pad_axis(out, padding_value, axis, lo, hi, interior)
    return out


def _pad_axis(x, value, axis, lo, hi, interior):
    n = x.shape[axis]
    size = n + max(n - 1, 0) * interior
    shape = list(x.shape)
    shape[axis] = size
    spread = np.full(shape, value, x.dtype)
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(None, None, interior + 1)
    spread[tuple(idx)] = x
    shape[axis] = max(lo, 0) + size + max(hi, 0)
    padded = np.full(shape, value, x.dtype)
    idx[axis] = slice(max(lo, 0), max(lo, 0) + size)
    padded[tuple(idx)] = spread
    idx[axis] = slice(max(-lo, 0), shape[axis] - max(-hi, 0))
    return padded[tuple(idx)]


@rule(st.concatenate_p)
def _concatenate(*xs, dimension):
    return np.concatenate(xs, axis=dimension)


@rule(st.iota_p)
def _iota(*, dtype, shape, dimension, sharding):
    ramp = np.arange(shape[dimension]).astype(dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(ramp.reshape(expanded), shape).copy()


@rule(st.copy_p)
def _copy(x):
    return np.array(x, copy=True)
