"""Rules of the slicing, padding, splitting, cumulative and sorting primitives, written with the
Array API standard's indexing, concat, stable argsort and take_along_axis."""
import numpy as np


def _index(b, i):
    """A scalar index buffer as a Python int (dynamic indices are data in refjax)."""
    return int(np.asarray(b.to_numpy(i, None)))


def _along(ndim, axis, s):
    """An indexing tuple taking slice `s` on `axis`, everything elsewhere."""
    return tuple(s if d == axis else slice(None) for d in range(ndim))


def _copy(b, x):
    return b.xp.asarray(x, copy=True)


# ---------------------------------------------------------------- slices

def _slice(b, x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    return x[tuple(slice(*bounds) for bounds in zip(start_indices, limit_indices, strides))]


def _clamped_starts(b, shape, sizes, idx):
    """XLA clamps dynamic starts so the window stays inside the operand."""
    return [min(max(_index(b, i), 0), d - s) for i, d, s in zip(idx, shape, sizes)]


def _dynamic_slice(b, x, *idx, slice_sizes):
    starts = _clamped_starts(b, x.shape, slice_sizes, idx)
    return x[tuple(slice(s, s + n) for s, n in zip(starts, slice_sizes))]


def _dynamic_update_slice(b, x, update, *idx):
    starts = _clamped_starts(b, x.shape, update.shape, idx)
    out = _copy(b, x)
    out[tuple(slice(s, s + n) for s, n in zip(starts, update.shape))] = update
    return out


def _pad(b, x, value, *, padding_config):
    """Interior padding first, then lo/hi (negative values crop), axis by axis."""
    for axis, (lo, hi, interior) in enumerate(padding_config):
        x = _pad_axis(b, x, value, axis, lo, hi, interior)
    return x


def _pad_axis(b, x, value, axis, lo, hi, interior):
    xp, n = b.xp, x.shape[axis]
    size = n + max(n - 1, 0) * interior
    spread = _filled(b, x, axis, size, value)
    spread[_along(x.ndim, axis, slice(None, None, interior + 1))] = x
    parts = [_filled(b, x, axis, max(lo, 0), value), spread, _filled(b, x, axis, max(hi, 0), value)]
    padded = xp.concat(parts, axis=axis)
    return padded[_along(x.ndim, axis, slice(max(-lo, 0), padded.shape[axis] - max(-hi, 0)))]


def _filled(b, x, axis, n, value):
    shape = tuple(n if d == axis else s for d, s in enumerate(x.shape))
    return _copy(b, b.xp.broadcast_to(b.xp.astype(value, x.dtype), shape))


# ---------------------------------------------------------------- split, stack, tile

def _split(b, x, *, sizes, axis):
    ends = np.cumsum(sizes)
    return [x[_along(x.ndim, axis, slice(int(e - s), int(e)))] for s, e in zip(sizes, ends)]


def _stack(b, *xs, axis):
    return b.xp.stack(list(xs), axis=axis)


def _unstack(b, x, *, axis):
    return list(b.xp.unstack(x, axis=axis))


def _tile(b, x, *, reps):
    return b.xp.tile(x, tuple(reps))


# ---------------------------------------------------------------- cumulative reductions

def _scan(combine):
    def rule(b, x, *, axis, reverse):
        """An inclusive scan by doubling (Hillis-Steele): log2(n) shifted combines, for the
        running reductions the standard lacks."""
        xp = b.xp
        x = xp.flip(x, axis=axis) if reverse else x
        step, n = 1, x.shape[axis]
        while step < n:
            head = x[_along(x.ndim, axis, slice(0, step))]
            tail = combine(b, x[_along(x.ndim, axis, slice(step, None))],
                           x[_along(x.ndim, axis, slice(0, n - step))])
            x, step = xp.concat([head, tail], axis=axis), step * 2
        return xp.flip(x, axis=axis) if reverse else x
    return rule


def _cumulative(fn):
    def rule(b, x, *, axis, reverse):
        """The standard's cumulative_sum / cumulative_prod in x's dtype, flipped for reverse."""
        xp = b.xp
        x = xp.flip(x, axis=axis) if reverse else x
        out = getattr(xp, fn)(x, axis=axis, dtype=x.dtype)
        return xp.flip(out, axis=axis) if reverse else out
    return rule


def _logaddexp(b, x, y):
    """JAX's formula: the larger plus log1p(exp(-|x - y|)); where x - y is NaN, x + y."""
    xp = b.xp
    delta = x - y
    out = xp.maximum(x, y) + xp.log1p(xp.exp(-xp.abs(delta)))
    return xp.where(xp.isnan(delta), x + y, out)


# ---------------------------------------------------------------- sort

def _sort_keys(b, x):
    """Keys whose lexicographic order is XLA's: NaNs last (all NaNs tie), -0.0 == 0.0,
    complex numbers by real part then imaginary part, False < True."""
    xp = b.xp
    if xp.isdtype(x.dtype, "complex floating"):
        return _sort_keys(b, xp.real(x)) + _sort_keys(b, xp.imag(x))
    if xp.isdtype(x.dtype, "real floating"):
        nan = xp.isnan(x)
        return [xp.astype(nan, xp.int8), xp.where(nan, xp.zeros_like(x), x + 0.0)]
    return [xp.astype(x, xp.int8) if x.dtype == xp.bool else x]


def _lexsort(b, keys, axis, descending=False):
    """The stable order of `keys` (primary first) along `axis`: stable argsorts from the least
    significant key to the primary one."""
    xp, order = b.xp, None
    for key in reversed(keys):
        key = key if order is None else xp.take_along_axis(key, order, axis=axis)
        step = xp.argsort(key, axis=axis, stable=True, descending=descending)
        order = step if order is None else xp.take_along_axis(order, step, axis=axis)
    return order


def _sort(b, *operands, dimension, is_stable, num_keys):
    keys = [k for x in operands[:num_keys] for k in _sort_keys(b, x)]
    order = _lexsort(b, keys, dimension)
    return [b.xp.take_along_axis(x, order, axis=dimension) for x in operands]


def _total_order_keys(b, x):
    """Keys ordering floats as IEEE's total order (-NaN < -inf < ... < -0.0 < +0.0 < ... <
    +inf < +NaN), as XLA's TopK compares them; the standard's signbit reads a NaN's sign."""
    xp = b.xp
    if not xp.isdtype(x.dtype, "real floating"):
        return [xp.astype(x, xp.int8) if x.dtype == xp.bool else x]
    nan, sign = xp.isnan(x), xp.signbit(x)
    one = xp.ones(x.shape, dtype=xp.int8)
    nan_class = xp.where(nan, xp.where(sign, -one, one), 0 * one)
    zero_sign = xp.where((x == 0) & ~sign, one, 0 * one)
    return [nan_class, xp.where(nan, xp.zeros_like(x), x), zero_sign]


def _top(b, x, order, k, axis):
    """The first k of x in `order` along `axis`, with their int32 indices."""
    xp = b.xp
    idx = xp.astype(order[_along(x.ndim, axis, slice(0, k))], xp.int32)
    return [xp.take_along_axis(x, idx, axis=axis), idx]


def _top_k(b, x, *, k, axis):
    return _top(b, x, _lexsort(b, _total_order_keys(b, x), axis, descending=True), k, axis)


def _approx_top_k(b, x, *, k, reduction_dimension, is_max_k, aggregate_to_topk, **_):
    """Exact: -0.0 == +0.0, ties in index order, NaNs last (XLA leaves the order with NaNs
    unspecified)."""
    xp, axis = b.xp, reduction_dimension % x.ndim
    nan = xp.isnan(x)
    value = xp.where(nan, xp.zeros_like(x), -x if is_max_k else x) + 0.0
    order = _lexsort(b, [xp.astype(nan, xp.int8), value], axis)
    return _top(b, x, order, k if aggregate_to_topk else x.shape[axis], axis)


def rules(max_rule, min_rule):
    """This module's rules by primitive name (the running max/min reuse rules.py's NaN-aware
    max and min)."""
    return dict(
        slice=_slice, dynamic_slice=_dynamic_slice, dynamic_update_slice=_dynamic_update_slice,
        pad=_pad, split=_split, stack=_stack, unstack=_unstack, tile=_tile,
        cumsum=_cumulative("cumulative_sum"), cumprod=_cumulative("cumulative_prod"),
        cummax=_scan(max_rule), cummin=_scan(min_rule), cumlogsumexp=_scan(_logaddexp),
        sort=_sort, top_k=_top_k, approx_top_k=_approx_top_k)
