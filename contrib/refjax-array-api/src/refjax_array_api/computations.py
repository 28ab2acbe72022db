"""A user's computation (the scalar jaxpr of reduce, reduce_window, select_and_scatter) applied
to whole columns at once: vmapped once with refjax's public vmap and make_jaxpr, then run by
this backend's own rules; the fold that applies it in XLA's order; and the generic reduce."""
import refjax
from refjax.backends import eval_jaxpr

_BATCHED = {}


def _batched(jaxpr, consts, size):
    """The computation vmapped over `size` positions (one per jaxpr, consts and size; the
    entry holds both objects, so an id is not reused while it is cached)."""
    key = (id(jaxpr), id(consts), size)
    entry = _BATCHED.get(key)
    if entry is None or entry[0] is not jaxpr or entry[1] is not consts:
        if len(_BATCHED) > 256:
            _BATCHED.clear()
        avals = [refjax.ShapeDtypeStruct((size,), v.aval.dtype) for v in jaxpr.invars]
        fn = refjax.vmap(lambda *args: eval_jaxpr(jaxpr, list(consts), *args))
        entry = _BATCHED[key] = (jaxpr, consts, refjax.make_jaxpr(fn)(*avals))
    return entry[2]


def apply(b, computation, acc, elements):
    """computation = (jaxpr, consts) applied at each position of the 1-d buffers acc and
    elements (lists, one per operand)."""
    size = acc[0].shape[0]
    if size == 0:
        return list(acc)
    return b.interpret(_batched(*computation, size), list(acc) + list(elements))


def fold(b, computation, inits, columns, size, valid=None):
    """acc = inits (broadcast to `size` positions), then acc = computation(acc, column k) for
    k in order, kept only where valid[k] (a boolean buffer per column, None: everywhere):
    XLA's order of a reduction."""
    xp = b.xp
    acc = [xp.broadcast_to(i, (size,)) for i in inits]
    for k, column in enumerate(columns):
        new = apply(b, computation, acc, column)
        acc = new if valid is None else [xp.where(valid[k], n, a) for n, a in zip(new, acc)]
    return acc


def reduce(b, *args, jaxpr, dimensions, **_):
    """The reduced dimensions (row-major) folded by the computation from the init values."""
    xp, n = b.xp, len(args) // 2
    operands, inits = args[:n], args[n:]
    kept = [d for d in range(operands[0].ndim) if d not in dimensions]
    shape = tuple(operands[0].shape[d] for d in kept)
    rows = size(shape)
    count = size(operands[0].shape[d] for d in dimensions)
    flat = [xp.reshape(xp.permute_dims(x, tuple(kept) + tuple(dimensions)), (rows, count))
            for x in operands]
    columns = [[x[:, k] for x in flat] for k in range(count)] if rows else []
    outs = fold(b, (jaxpr.jaxpr, jaxpr.consts), inits, columns, rows)
    return [xp.reshape(o, shape) for o in outs]


def size(dims):
    """The number of elements of a shape."""
    out = 1
    for d in dims:
        out *= d
    return out
