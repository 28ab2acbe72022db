"""Batching vocabulary shared by rules: not_mapped, moving and broadcasting batch dims."""
from typing import NamedTuple, Optional

import numpy as np

from ..trace import get_aval

not_mapped = None

# Primitives batched even when no operand is: new_ref, whose reference (one per batch element)
# later takes batched writes.
BATCH_OF_UNBATCHED = set()


class AxisData(NamedTuple):
    """The vmapped axis a batching rule works on."""
    name: object
    size: int
    spmd_name: Optional[object] = None
    per_device: bool = False  # shard_map's lanes: one per device, not a user's vmap


def moveaxis(x, src, dst):
    """Move axis src of x to dst (no-op when equal)."""
    from ..primitives import structural as st
    if src == dst:
        return x
    nd = len(_shape(x))
    src, dst = src % nd, dst % nd
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return st.transpose(x, tuple(perm))


def bdim_at_front(x, bdim, size):
    """x with its batch dim at 0, broadcasting unbatched x to size (its dimensions NumPy
    ints, printed as JAX prints them)."""
    from ..primitives import structural as st
    if bdim is not_mapped:
        shape = _shape(x)
        return st.broadcast_in_dim(x, (size,) + shape, tuple(np.arange(1, len(shape) + 1)))
    return moveaxis(x, bdim, 0)


def _shape(x):
    return tuple(get_aval(x).shape)


def vectorized_batcher(prim, full_args=lambda i: False):
    """Elementwise primitives (operands of one shape, or scalars): batch dims go to 0;
    unbatched non-scalars and batched scalars are broadcast to the batched full shape.
    Operands i with full_args(i) (select_n's cases, clamp's operand) are always broadcast to
    it, as only the others (the predicate, the bounds) may stay rank-0 beside arrays."""
    forced = any(map(full_args, range(3)))

    def rule(axis_data, vals, dims, **params):
        if len(vals) > 1 and not forced:
            return _broadcasting(prim, vals, dims, params)
        full = (axis_data.size,) + _unbatched_shape(vals, dims)
        moved = [_to_full(v, d, full, full_args(i)) for i, (v, d) in enumerate(zip(vals, dims))]
        return prim.bind(*moved, **params), 0
    prim.def_batch(rule)
    return rule


def _broadcasting(prim, vals, dims, params):
    """JAX's broadcast_batcher: operands of one shape batched alike (and scalars) are bound
    as they are; otherwise batch dims go to 0, unbatched arrays get a leading 1 and batched
    scalars trailing 1s, and the primitive broadcasts its size-1 dimensions."""
    shape, dim = next((_shape(v), d) for v, d in zip(vals, dims) if d is not None)
    if all(_shape(v) == shape and d == dim for v, d in zip(vals, dims) if _shape(v)):
        return prim.bind(*vals, **params), dim
    vals = [bdim_at_front(v, d, 1) if _shape(v) else v for v, d in zip(vals, dims)]
    nd = max(len(_shape(v)) for v in vals)
    return prim.bind(*(_trailing_ones(v, nd) if d is not None else v
                       for v, d in zip(vals, dims)), **params), 0


def _trailing_ones(x, nd):
    from ..primitives import structural as st
    shape = _shape(x)
    if len(shape) == nd:
        return x
    return st.broadcast_in_dim(x, shape + (1,) * (nd - len(shape)), tuple(range(len(shape))))


def _unbatched_shape(vals, dims):
    """The per-example shape of the operation: that of its non-scalar operands, whose
    size-1 dimensions broadcast against the others' (operands have one rank)."""
    shapes = [vs if d is None else vs[:d] + vs[d + 1:]
              for vs, d in ((_shape(v), d) for v, d in zip(vals, dims))]
    shapes = [s for s in shapes if s]
    return tuple(next((d for d in sizes if d != 1), 1) for sizes in zip(*shapes))


def _to_full(v, d, full, force):
    """v with its batch dim at 0, broadcast to `full` unless it may stay a rank-0 operand."""
    from ..primitives import structural as st
    if d is None:
        if _shape(v) or force:
            return st.broadcast_in_dim(v, full, tuple(range(len(full) - len(_shape(v)), len(full))))
        return v
    v = moveaxis(v, d, 0)
    if len(_shape(v)) == 1 and len(full) > 1:  # a batched scalar
        return st.broadcast_in_dim(v, full, (0,))
    return v


defvectorized = vectorized_batcher
