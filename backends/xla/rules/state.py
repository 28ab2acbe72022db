"""xla lowerings of the reference primitives: a reference is JAX's own (jax.new_ref), read
and written with jax.ref's functions, eagerly and inside the jax.jit of a jaxpr alike."""
import jax
import numpy as np
from jax import lax

from ....core.primitives import state
from ....core.state import is_int_entry
from ._common import rule


def jax_index(indexer, idx, shape):
    """JAX's index of a reference indexer and its integer operands, negative integers counted
    from the end and out-of-range ones clamped (numpy_ref's rule)."""
    if indexer is None:
        return ...
    idx = iter(idx)
    return tuple(_jax_entry(e, dim, idx) for e, dim in zip(indexer, shape))


def _jax_entry(entry, dim, idx):
    if is_int_entry(entry):
        i = lax.convert_element_type(next(idx), np.int32)  # int32 constants too, under x64
        return lax.clamp(np.int32(0), lax.select(i < 0, i + np.int32(dim), i), np.int32(dim - 1))
    start, size, stride = entry
    if not size:  # JAX fails on empty strided slices (a negative slice limit)
        return slice(start, start)
    return slice(start, start + (size - 1) * stride + 1, stride)


@rule(state.new_ref_p)
def _new_ref(x, *, kind, memory_space):
    return jax.new_ref(x)


@rule(state.empty_ref_p)
def _empty_ref(*, ty, memory_space):
    # unspecified contents (numpy_ref's zeros); jax.empty_ref has no eager evaluation
    return jax.new_ref(lax.full(ty.shape, 0, ty.dtype))


@rule(state.get_p)
def _get(ref, *idx, indexer):
    return jax.ref.get(ref, jax_index(indexer, idx, ref.shape))


@rule(state.swap_p)
def _swap(ref, val, *idx, indexer):
    return jax.ref.swap(ref, jax_index(indexer, idx, ref.shape), val)


@rule(state.addupdate_p)
def _addupdate(ref, val, *idx, indexer):
    jax.ref.addupdate(ref, jax_index(indexer, idx, ref.shape), val)
    return []


@rule(state.freeze_p)
def _freeze(ref):
    return jax.freeze(ref)


@rule(state.free_ref_p)
def _free_ref(ref):
    # JAX's free_ref has no evaluation rule outside its own jit; the reference is dropped
    return []
