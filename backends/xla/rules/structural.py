"""jax.lax lowerings of the structural primitives (shapes, slices, padding, iota, copy)."""
from jax import lax

from ....core.primitives import structural as st
from ._common import pad, rule, type_param


@rule(st.broadcast_in_dim_p)
def _broadcast_in_dim(x, *, shape, broadcast_dimensions, sharding=None):
    return broadcast_in_dim(x, shape, broadcast_dimensions, type_param(sharding))


def broadcast_in_dim(x, shape, dims, sharding=None):
    """lax.broadcast_in_dim with the size-1 dimensions that grow squeezed first: JAX 0.10.2
    broadcasts those of an unreduced value from its reduced total (each device's partial
    value lost), while a new dimension keeps each device's own."""
    grown = [i for i, d in enumerate(dims) if x.shape[i] == 1 != shape[d]]
    if grown:
        x, dims = lax.squeeze(x, grown), tuple(d for i, d in enumerate(dims) if i not in grown)
    return lax.broadcast_in_dim(x, shape, dims, out_sharding=sharding)


@rule(st.reshape_p)
def _reshape(x, *, new_sizes, dimensions=None, sharding=None):
    return lax.reshape(x, new_sizes, dimensions, out_sharding=type_param(sharding))


@rule(st.squeeze_p)
def _squeeze(x, *, dimensions):
    return lax.squeeze(x, dimensions)


@rule(st.transpose_p)
def _transpose(x, *, permutation):
    return lax.transpose(x, permutation)


@rule(st.rev_p)
def _rev(x, *, dimensions):
    return lax.rev(x, dimensions)


@rule(st.slice_p)
def _slice(x, *, start_indices, limit_indices, strides):
    return lax.slice(x, start_indices, limit_indices, strides)


def _clamped_starts(shape, sizes, idx):
    """Start indices clamped into [0, dim - size], the primitive's (HLO's) semantics; the
    public lax functions would first wrap negative indices around, which refjax's don't. They
    are then given the widest of their dtypes: lax wants one, and refjax's batching rules put
    int32 indices beside the user's (int8, say)."""
    starts = [lax.clamp(lax.full_like(i, 0), i, lax.full_like(i, d - s))
              for i, d, s in zip(idx, shape, sizes)]
    widest = max((i.dtype for i in starts), key=lambda d: d.itemsize, default=None)
    return [lax.convert_element_type(i, widest) for i in starts]


@rule(st.dynamic_slice_p)
def _dynamic_slice(x, *idx, slice_sizes):
    return lax.dynamic_slice(x, _clamped_starts(x.shape, slice_sizes, idx), slice_sizes)


@rule(st.dynamic_update_slice_p)
def _dynamic_update_slice(x, update, *idx):
    return lax.dynamic_update_slice(x, update, _clamped_starts(x.shape, update.shape, idx))


@rule(st.pad_p)
def _pad(x, padding_value, *, padding_config):
    return pad(x, padding_value, padding_config)


@rule(st.concatenate_p)
def _concatenate(*xs, dimension):
    return lax.concatenate(xs, dimension)


@rule(st.iota_p)
def _iota(*, dtype, shape, dimension, sharding=None):
    return lax.broadcasted_iota(dtype, shape, dimension)


@rule(st.copy_p)
def _copy(x):
    return x  # JAX values are immutable: a copy is the value itself
