"""Batching vocabulary shared by rules: not_mapped, moving and broadcasting batch dims."""
from typing import NamedTuple, Optional

not_mapped = None


class AxisData(NamedTuple):
    """The vmapped axis a batching rule works on."""
    name: object
    size: int
    spmd_name: Optional[object] = None


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
    """x with its batch dim at 0, broadcasting unbatched x to size."""
    from ..primitives import structural as st
    if bdim is not_mapped:
        shape = _shape(x)
        return st.broadcast_in_dim(x, (size,) + shape, tuple(range(1, len(shape) + 1)))
    return moveaxis(x, bdim, 0)


def _shape(x):
    from ..trace import get_aval
    return tuple(get_aval(x).shape)


def vectorized_batcher(prim):
    """Elementwise primitives (operands of one shape, or scalars): batch dims go to 0;
    unbatched non-scalars and batched scalars are broadcast to the batched full shape."""
    def rule(axis_data, vals, dims, **params):
        from ..primitives import structural as st
        size = axis_data.size
        shape = ()
        for v, d in zip(vals, dims):
            vs = _shape(v)
            s = vs if d is None else vs[:d] + vs[d + 1:]
            shape = s or shape
        full = (size,) + shape
        moved = []
        for v, d in zip(vals, dims):
            if d is None:
                v = st.broadcast_in_dim(v, full, tuple(range(1, len(full)))) if _shape(v) else v
            else:
                v = moveaxis(v, d, 0)
                v = st.broadcast_in_dim(v, full, (0,)) if len(_shape(v)) == 1 and shape else v
            moved.append(v)
        return prim.bind(*moved, **params), 0
    prim.def_batch(rule)
    return rule


defvectorized = vectorized_batcher
