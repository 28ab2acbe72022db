"""refjax.ops: jax.ops' segment reductions (segment_sum, segment_prod, segment_max, segment_min)."""
import numpy as np

from ..core import dtypes
from ..core.array import concrete_or_error
from ..core.primitive import named
from . import numpy as jnp


def _segment_update(name, op, identity, data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, mode):
    """out[k] combines (with `op`, an `.at` update) the rows of data whose segment id is k,
    starting from `identity`; ids outside [0, num_segments) are dropped, negative ones too
    (as JAX, which does not wrap them)."""
    data, segment_ids = jnp.asarray(data), jnp.asarray(segment_ids)
    if not dtypes.is_int(segment_ids.dtype):
        raise TypeError(f"jax.ops.{name}: segment_ids must be integers, got dtype "
                        f"{segment_ids.dtype}")
    if segment_ids.ndim != 1 or (data.ndim and data.shape[0] != segment_ids.shape[0]):
        raise ValueError(f"jax.ops.{name}: segment_ids of shape {segment_ids.shape} must be "
                         f"one-dimensional, one id per row of data (shape {data.shape})")
    if num_segments is None:
        ids = concrete_or_error(segment_ids, f"jax.ops.{name} without num_segments (pass "
                                             "num_segments when segment_ids are traced)")
        num_segments = int(np.max(np.asarray(ids), initial=-1)) + 1
    out = jnp.full((int(num_segments),) + data.shape[1:], identity(data.dtype), data.dtype)
    return getattr(out.at[segment_ids], op)(
        data, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
        mode="drop" if mode is None else mode, wrap_negative_indices=False)


def _lowest(dtype):
    if dtype == np.bool_:
        return False
    return -np.inf if dtypes.is_inexact(dtype) else int(dtypes.iinfo(dtype).min)


def _highest(dtype):
    if dtype == np.bool_:
        return True
    return np.inf if dtypes.is_inexact(dtype) else int(dtypes.iinfo(dtype).max)


def _segment(name, op, identity):
    def segment_reduction(data, segment_ids, num_segments=None, indices_are_sorted=False,
                          unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
        # bucket_size only changes how JAX splits the work; the result is the same.
        out = _segment_update(name, op, identity, data, segment_ids, num_segments,
                              indices_are_sorted, unique_indices, mode)
        if out_sharding is None:
            return out
        from ..core.primitives.sharding_ops import constrain
        return constrain(out, out_sharding)
    named(segment_reduction, name)
    segment_reduction.__doc__ = (
        f"jax.ops.{name}: the {op} over the rows of data sharing a segment id (rows with an id "
        f"outside [0, num_segments) are dropped; num_segments defaults to max(id) + 1 for "
        f"concrete ids).")
    return segment_reduction


segment_sum = _segment("segment_sum", "add", lambda dtype: 0)
segment_prod = _segment("segment_prod", "multiply", lambda dtype: 1)
segment_max = _segment("segment_max", "max", _lowest)
segment_min = _segment("segment_min", "min", _highest)

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]
