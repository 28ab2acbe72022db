"""The windowed reductions and pooling's derivatives: the operand padded and base-dilated, then
one strided slice per window element (a "tap"), combined in row-major window order as XLA
folds a window: sum/max/min pooling, a user's reduce_window computation, and the selections
of select_and_gather_add and select_and_scatter(_add). A scatter back into the operand writes
one tap at a time (one tap's windows meet distinct elements), taps in reverse row-major order:
that is row-major window order at every element, the order XLA applies them in."""
import itertools

from . import computations
from .indexing import _pad


def _out_size(n, lo, hi, base, k, dilation, stride):
    padded = (n - 1) * base + 1 + lo + hi if n else lo + hi
    span = (k - 1) * dilation + 1
    return (padded - span) // stride + 1 if padded >= span else 0


def _geometry(shape, window_dimensions, window_strides, padding, base_dilation=None,
              window_dilation=None, **_):
    """(output shape, padding config, [(tap, index tuple)] in row-major window order)."""
    n = len(shape)
    base, dil = base_dilation or (1,) * n, window_dilation or (1,) * n
    out = tuple(_out_size(*a) for a in zip(shape, *zip(*padding), base, window_dimensions, dil,
                                           window_strides))
    config = [(lo, hi, d - 1) for (lo, hi), d in zip(padding, base)]
    taps = [(k, tuple(slice(i * r, i * r + (m - 1) * s + 1, s)
                      for i, r, m, s in zip(k, dil, out, window_strides)))
            for k in itertools.product(*map(range, window_dimensions))]
    return out, config, taps


def _windowed(combine, identity):
    def rule(b, x, **params):
        """acc starts at the identity (so an all -0.0 window sums to +0.0, as XLA)."""
        xp = b.xp
        out, config, taps = _geometry(x.shape, **params)
        fill = identity(b, x.dtype)
        acc = xp.full(out, fill, dtype=x.dtype)
        if 0 in out:
            return acc
        padded = _pad(b, x, xp.asarray(fill, dtype=x.dtype), padding_config=config)
        for _, index in taps:
            acc = combine(b, acc, padded[index])
        return acc
    return rule


def _real(b, dtype, name):
    """NotImplementedError for complex max/min pooling (the standard orders only reals)."""
    if b.xp.isdtype(dtype, "complex floating"):
        raise NotImplementedError(f"the {b.name} backend has no complex {name} (the standard "
                                  "orders only real numbers)")


def _lowest(b, dtype):
    xp = b.xp
    _real(b, dtype, "reduce_window_max")
    if dtype == xp.bool:
        return False
    return -float("inf") if xp.isdtype(dtype, "real floating") else xp.iinfo(dtype).min


def _highest(b, dtype):
    xp = b.xp
    _real(b, dtype, "reduce_window_min")
    if dtype == xp.bool:
        return True
    return float("inf") if xp.isdtype(dtype, "real floating") else xp.iinfo(dtype).max


# ---------------------------------------------------------------- a user's computation

def _columns(b, x, fill, out, config, taps):
    """Per tap, the window elements of x (padded with `fill`) as a 1-d buffer."""
    padded = _pad(b, x, fill, padding_config=config)
    return [b.xp.reshape(padded[index], (computations.size(out),)) for _, index in taps]


def _valid(b, shape, out, config, taps):
    """Per tap, which windows meet an element of the operand (not padding, not a hole)."""
    xp = b.xp
    return _columns(b, xp.ones(shape, dtype=xp.bool), xp.asarray(False), out, config, taps)


def _reduce_window(b, *args, jaxpr, consts, **params):
    """The computation folded over each window's elements from the init values, skipping
    padding and dilation holes (as XLA)."""
    xp, n = b.xp, len(args) // 2
    operands, inits = args[:n], args[n:]
    out, config, taps = _geometry(operands[0].shape, **params)
    if 0 in out:
        return [xp.full(out, 0, dtype=x.dtype) for x in operands]
    per_operand = [_columns(b, x, i, out, config, taps) for x, i in zip(operands, inits)]
    valid = _valid(b, operands[0].shape, out, config, taps)
    outs = computations.fold(b, (jaxpr, consts), inits, list(zip(*per_operand)), computations.size(out),
                             valid)
    return [xp.reshape(o, out) for o in outs]


# ---------------------------------------------------------------- selections

def _compare(select_prim):
    """select_prim (ge or le) on buffers; booleans as 0/1 (the standard orders only numbers)."""
    def select(b, x, y):
        if x.dtype == b.xp.bool:
            x, y = b.xp.astype(x, b.xp.int8), b.xp.astype(y, b.xp.int8)
        return (b.xp.greater_equal if select_prim.name == "ge" else b.xp.less_equal)(x, y)
    return select


def _selection_identity(b, select_prim, dtype):
    return (_lowest if select_prim.name == "ge" else _highest)(b, dtype)


def _select_and_gather_add(b, t, x, *, select_prim, **params):
    """The tangent at the element each window selects: a fold from (-+inf, 0) keeping the
    accumulator where select_prim(accumulator, element) holds (so the first of ties)."""
    xp, select = b.xp, _compare(select_prim)
    out, config, taps = _geometry(x.shape, **params)
    if 0 in out:
        return xp.zeros(out, dtype=t.dtype)
    xs = _columns(b, x, xp.zeros((), dtype=x.dtype), out, config, taps)
    ts = _columns(b, t, xp.zeros((), dtype=t.dtype), out, config, taps)
    valid = _valid(b, x.shape, out, config, taps)
    chosen = xp.full(xs[0].shape, _selection_identity(b, select_prim, x.dtype), dtype=x.dtype)
    tangent = xp.zeros(xs[0].shape, dtype=t.dtype)
    for xk, tk, ok in zip(xs, ts, valid):
        take = ok & ~select(b, chosen, xk)
        chosen, tangent = xp.where(take, xk, chosen), xp.where(take, tk, tangent)
    return xp.reshape(tangent, out)


def _choose(b, select, values, valid):
    """Per window, the tap it selects (-1: only padding): the first valid element, replaced
    by each next valid one where select(chosen, next) is false."""
    xp = b.xp
    which = xp.where(valid[0], xp.zeros(values[0].shape, dtype=xp.int64),
                     xp.full(values[0].shape, -1, dtype=xp.int64))
    chosen = values[0]
    for k in range(1, len(values)):
        take = valid[k] & ((which < 0) | ~select(b, chosen, values[k]))
        chosen = xp.where(take, values[k], chosen)
        which = xp.where(take, xp.full_like(which, k), which)
    return which


def _scatter_taps(b, out, which, source, taps, combine):
    """out with each source value combined into the element its window selected (`which`),
    tap by tap in reverse order (row-major window order at every element)."""
    xp = b.xp
    source = xp.reshape(source, which.shape)
    for k in range(len(taps) - 1, -1, -1):
        index = taps[k][1]
        hit = which == k
        if bool(xp.any(hit)):
            old = out[index]
            out[index] = xp.where(hit, combine(old, source), old)
    return out


def _add(b):
    return lambda old, new: b.xp.logical_or(old, new) if old.dtype == b.xp.bool else old + new


def _select_and_scatter_add(b, source, operand, *, select_prim, window_dimensions,
                            window_strides, padding):
    """Each source value added at the element its window selects; the operand is padded with
    the selection's identity first (padding can be selected, its sums dropped), as JAX on
    CPU."""
    xp = b.xp
    fill = xp.asarray(_selection_identity(b, select_prim, operand.dtype), dtype=operand.dtype)
    padded = _pad(b, operand, fill, padding_config=[(lo, hi, 0) for lo, hi in padding])
    out, config, taps = _geometry(padded.shape, window_dimensions, window_strides,
                                  [(0, 0)] * operand.ndim)
    acc = xp.zeros(padded.shape, dtype=source.dtype)
    if 0 not in out:
        values = [padded[index] for _, index in taps]
        which = _choose(b, _compare(select_prim), values, [xp.asarray(True)] * len(taps))
        acc = _scatter_taps(b, acc, which, source, taps, _add(b))
    return _pad(b, acc, xp.zeros((), dtype=source.dtype),
                padding_config=[(-lo, -hi, 0) for lo, hi in padding])


def _select_and_scatter(b, operand, source, init_value, *, select_jaxpr, select_consts,
                        scatter_jaxpr, scatter_consts, window_dimensions, window_strides,
                        padding):
    """XLA's SelectAndScatter: each window's selection by the user's select computation
    (padding skipped), then each source value combined by the scatter computation into the
    init_value-filled output at its window's selection."""
    xp = b.xp
    out, config, taps = _geometry(operand.shape, window_dimensions, window_strides, padding)
    padded_shape = tuple(n + lo + hi for n, (lo, hi) in zip(operand.shape, padding))
    init = xp.astype(init_value, operand.dtype)
    acc = xp.asarray(xp.broadcast_to(init, padded_shape), copy=True)
    if 0 not in out:
        values = _columns(b, operand, xp.zeros((), dtype=operand.dtype), out, config, taps)
        valid = _valid(b, operand.shape, out, config, taps)
        which = _choose(b, _user_select(b, select_jaxpr, select_consts), values, valid)
        scatter = _user_combine(b, scatter_jaxpr, scatter_consts)
        acc = _scatter_taps(b, acc, xp.reshape(which, out), source, taps, scatter)
    return _pad(b, acc, init,
                padding_config=[(-lo, -hi, 0) for lo, hi in padding])


def _user_select(b, jaxpr, consts):
    def select(b_, chosen, value):
        out = computations.apply(b, (jaxpr, consts), [chosen], [value])[0]
        return b.xp.astype(out, b.xp.bool)
    return select


def _user_combine(b, jaxpr, consts):
    def combine(old, new):
        shape = old.shape
        flat = [b.xp.reshape(v, (computations.size(shape),)) for v in (old, new)]
        return b.xp.reshape(computations.apply(b, (jaxpr, consts), flat[:1], flat[1:])[0],
                            shape)
    return combine


def rules(max_rule, min_rule):
    """This module's rules by primitive name (max/min pooling reuse rules.py's NaN- and
    signed-zero-aware max and min)."""
    return {"reduce_window_sum": _windowed(lambda b, acc, x: acc + x, lambda b, dtype: 0),
            "reduce_window_max": _windowed(max_rule, _lowest),
            "reduce_window_min": _windowed(min_rule, _highest),
            "reduce_window": _reduce_window, "select_and_gather_add": _select_and_gather_add,
            "select_and_scatter_add": _select_and_scatter_add,
            "select_and_scatter": _select_and_scatter}
