"""The windowed reductions (reduce_window_sum/max/min): the operand padded and base-dilated with
the reduction's identity, then one strided slice per window element, combined in row-major
window order (as XLA folds a window)."""
import itertools

from .indexing import _pad


def _out_size(n, lo, hi, base, k, dilation, stride):
    padded = (n - 1) * base + 1 + lo + hi if n else lo + hi
    span = (k - 1) * dilation + 1
    return (padded - span) // stride + 1 if padded >= span else 0


def _windowed(combine, identity):
    def rule(b, x, *, window_dimensions, window_strides, padding, base_dilation=None,
             window_dilation=None, **_):
        """acc starts at the identity (so an all -0.0 window sums to +0.0, as XLA)."""
        xp, n = b.xp, x.ndim
        base, dil = base_dilation or (1,) * n, window_dilation or (1,) * n
        out = tuple(_out_size(*a) for a in zip(x.shape, *zip(*padding), base,
                                               window_dimensions, dil, window_strides))
        fill = xp.asarray(identity(b, x.dtype), dtype=x.dtype)
        acc = xp.full(out, identity(b, x.dtype), dtype=x.dtype)
        if 0 in out:
            return acc
        config = [(lo, hi, d - 1) for (lo, hi), d in zip(padding, base)]
        padded = _pad(b, x, fill, padding_config=config)
        for k in itertools.product(*map(range, window_dimensions)):
            acc = combine(b, acc, padded[tuple(
                slice(i * r, i * r + (m - 1) * s + 1, s)
                for i, r, m, s in zip(k, dil, out, window_strides))])
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


def rules(max_rule, min_rule):
    """This module's rules by primitive name (max/min pooling reuse rules.py's NaN- and
    signed-zero-aware max and min)."""
    return {"reduce_window_sum": _windowed(lambda b, acc, x: acc + x, lambda b, dtype: 0),
            "reduce_window_max": _windowed(max_rule, _lowest),
            "reduce_window_min": _windowed(min_rule, _highest)}
