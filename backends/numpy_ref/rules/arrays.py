"""NumPy rules of split, stack, unstack, tile, optimization_barrier, xla_metadata_value and
empty (exact)."""
import numpy as np

from ....core.primitives import arrays
from ._common import rule


@rule(arrays.split_p)
def _split(x, *, sizes, axis):
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


@rule(arrays.stack_p)
def _stack(*xs, axis):
    return np.stack(xs, axis=axis)


@rule(arrays.unstack_p)
def _unstack(x, *, axis):
    return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]


@rule(arrays.tile_p)
def _tile(x, *, reps):
    return np.tile(x, reps)


@rule(arrays.optimization_barrier_p)
def _optimization_barrier(*xs):
    return list(xs)


@rule(arrays.empty_p)
def _empty(*, shape, dtype, out_sharding):
    return np.zeros(shape, dtype)  # XLA's values on CPU


@rule(arrays.empty2_p)
def _empty2(*, dtype, memory_space):
    return np.zeros((), dtype)  # XLA's value on CPU


@rule(arrays.xla_metadata_value_p)
def _xla_metadata_value(x, *, xla_metadata_kvs):
    return x  # XLA's frontend attributes: nothing to compute
