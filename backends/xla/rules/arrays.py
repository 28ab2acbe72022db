"""jax.lax lowerings of split, stack, unstack, tile, optimization_barrier and
xla_metadata_value."""
from jax import lax
from jax.experimental.xla_metadata import set_xla_metadata

from ....core.primitives import arrays
from ._common import rule


@rule(arrays.split_p)
def _split(x, *, sizes, axis):
    return list(lax.split(x, sizes, axis=axis))


@rule(arrays.stack_p)
def _stack(*xs, axis):
    return lax.stack(xs, axis=axis)


@rule(arrays.unstack_p)
def _unstack(x, *, axis):
    return list(lax.unstack(x, axis=axis))


@rule(arrays.tile_p)
def _tile(x, *, reps):
    return lax.tile(x, reps)


@rule(arrays.optimization_barrier_p)
def _optimization_barrier(*xs):
    return list(lax.optimization_barrier(xs))


@rule(arrays.empty_p)
def _empty(*, shape, dtype, out_sharding):
    return lax.empty(shape, dtype)


@rule(arrays.empty2_p)
def _empty2(*, dtype, memory_space):
    return lax.empty((), dtype)


@rule(arrays.xla_metadata_value_p)
def _xla_metadata_value(x, *, xla_metadata_kvs):
    return set_xla_metadata(x, **dict(xla_metadata_kvs))
