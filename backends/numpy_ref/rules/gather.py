"""NumPy rules of gather, the scatters and scatter: every window's operand indices are built
as integer arrays, then read with fancy indexing or written with np.add.at (np.multiply.at,
np.minimum.at, np.maximum.at) / assignment."""
import numpy as np

from ....core import dtypes
from ....core.primitives import gather as g
from ._common import rule


def _starts(indices, operand_shape, index_map, operand_bdims, indices_bdims):
    """Per index vector (shape batch + (operand rank,)): the start of its window in each
    operand dim; batching dims start at the index vector's own coordinate."""
    batch = indices.shape[:-1]
    starts = np.zeros(batch + (len(operand_shape),), np.int64)
    for k, d in enumerate(index_map):
        starts[..., d] = indices[..., k].astype(np.int64)
    coords = np.indices(batch, dtype=np.int64) if batch else np.zeros((0,), np.int64)
    for o, i in zip(operand_bdims, indices_bdims):
        starts[..., o] = coords[i]
    return starts


def _in_bounds(starts, operand_shape, sizes):
    """Whether each window lies entirely inside the operand."""
    hi = np.asarray(operand_shape, np.int64) - np.asarray(sizes, np.int64)
    return np.all((starts >= 0) & (starts <= hi), axis=-1)


def _clamped(starts, operand_shape, sizes):
    hi = np.asarray(operand_shape, np.int64) - np.asarray(sizes, np.int64)
    return np.clip(starts, 0, np.maximum(hi, 0))


def _window_index(starts, window_dims, window_shape):
    """Operand indices of every window element, each of shape batch + window_shape."""
    nb, nw = starts.ndim - 1, len(window_shape)
    index = []
    for d in range(starts.shape[-1]):
        base = starts[..., d].reshape(starts.shape[:-1] + (1,) * nw)
        if d in window_dims:
            p = window_dims.index(d)
            offsets = np.arange(window_shape[p]).reshape((1,) * (nb + p) + (-1,) +
                                                         (1,) * (nw - p - 1))
            base = base + offsets
        index.append(base)
    full = starts.shape[:-1] + tuple(window_shape)
    return tuple(np.broadcast_to(i, full) for i in index)


def _window_dims(rank, dropped):
    return [d for d in range(rank) if d not in dropped]


@rule(g.gather_p)
def _gather(x, indices, *, dimension_numbers, slice_sizes, indices_are_sorted, unique_indices,
            mode, fill_value):
    dn = dimension_numbers
    window_dims = _window_dims(x.ndim, dn.collapsed_slice_dims + dn.operand_batching_dims)
    window_shape = [slice_sizes[d] for d in window_dims]
    starts = _starts(indices, x.shape, dn.start_index_map, dn.operand_batching_dims,
                     dn.start_indices_batching_dims)
    index = _window_index(_clamped(starts, x.shape, slice_sizes), window_dims, window_shape)
    batch = indices.shape[:-1]
    out = x[index] if index else np.broadcast_to(x, batch + tuple(window_shape)).copy()
    if mode is g.GatherScatterMode.FILL_OR_DROP:
        fill = g.default_fill_value(x.dtype) if fill_value is None else fill_value
        keep = _in_bounds(starts, x.shape, slice_sizes).reshape(batch + (1,) * len(window_shape))
        out = np.where(keep, out, np.asarray(fill).astype(x.dtype))
    return np.transpose(out, _output_order(len(batch), dn.offset_dims)).astype(x.dtype, copy=False)


def _output_order(nb, offset_dims):
    """The permutation taking (batch dims, window dims) to the output's order."""
    batch, window = iter(range(nb)), iter(range(nb, nb + len(offset_dims)))
    return [next(window) if i in offset_dims else next(batch)
            for i in range(nb + len(offset_dims))]


def _scatter_targets(x, indices, updates, dn, mode):
    """(operand index arrays, update values) of the elements a scatter writes, dropping the
    windows that are out of bounds (or clamping them, in CLIP mode)."""
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    values = np.transpose(updates, scatter_dims + list(dn.update_window_dims))
    nb = len(scatter_dims)
    window_dims = _window_dims(x.ndim, dn.inserted_window_dims + dn.operand_batching_dims)
    window_shape = values.shape[nb:]
    sizes = [1] * x.ndim
    for d, s in zip(window_dims, window_shape):
        sizes[d] = s
    starts = _starts(indices, x.shape, dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
                     dn.scatter_indices_batching_dims)
    if mode is g.GatherScatterMode.CLIP:
        keep = np.ones(indices.shape[:-1], bool)
        starts = _clamped(starts, x.shape, sizes)
    else:
        keep = _in_bounds(starts, x.shape, sizes)
        starts = np.where(keep[..., None], starts, 0)
    index = _window_index(starts, window_dims, window_shape)
    keep = np.broadcast_to(keep.reshape(keep.shape + (1,) * len(window_shape)), values.shape)
    return tuple(i[keep] for i in index), values[keep]


@rule(g.scatter_sub_p)
def _scatter_sub(x, indices, updates, **params):
    """x + (-u) for each update u in turn: IEEE subtraction, and wrapping for integers."""
    return _scatter_add(x, indices, -updates, **params)


@rule(g.scatter_add_p)
def _scatter_add(x, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices,
                 mode):
    index, values = _scatter_targets(x, indices, updates, dimension_numbers, mode)
    # Half floats accumulate in float32 (as XLA on CPU computes them); others in their type
    # (integers wrap).
    acc = np.float32 if x.dtype in (dtypes.float16, dtypes.bfloat16) else x.dtype
    out = x.astype(acc)
    if x.ndim == 0:
        return (out + values.astype(acc).sum(dtype=acc)).astype(x.dtype)
    with np.errstate(all="ignore"):
        np.add.at(out, index, values.astype(acc))
    return out.astype(x.dtype)


def _at(ufunc, out, index, values):
    """ufunc.at(out, index, values), a rank-0 out seen as one element hit by every value."""
    if out.ndim == 0:
        flat = out.reshape(1)
        ufunc.at(flat, (np.zeros(values.shape, np.intp),), values)
        return flat.reshape(())
    ufunc.at(out, index, values)
    return out


@rule(g.scatter_mul_p)
def _scatter_mul(x, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices,
                 mode):
    # Every product is rounded to x's dtype, half floats included (as XLA does: a float16
    # product that overflows stays inf); integers wrap.
    index, values = _scatter_targets(x, indices, updates, dimension_numbers, mode)
    with np.errstate(all="ignore"):
        return _at(np.multiply, x.copy(), index, values)


def _scatter_extremum(ufunc, wins_zero):
    """np.minimum.at / np.maximum.at (NaN propagates, as in XLA), then the zeros fixed as
    XLA orders them (-0.0 < +0.0): where the result is a zero, it is -0.0 for min if any
    contender is -0.0, +0.0 for max if any contender is +0.0 (`wins_zero`: the sign bit the
    winning zero has)."""
    def extremum(x, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices,
                 mode):
        index, values = _scatter_targets(x, indices, updates, dimension_numbers, mode)
        half = x.dtype in (dtypes.float16, dtypes.bfloat16)   # exact in float32
        acc = np.float32 if half else x.dtype
        with np.errstate(invalid="ignore"):   # NaN contenders
            out = _at(ufunc, x.astype(acc), index, values.astype(acc))
        if out.dtype.kind == "f":
            winning = lambda a: np.asarray((a == 0) & (np.signbit(a) == wins_zero))  # noqa: E731
            found = _at(np.logical_or, winning(x.astype(acc)), index, winning(values.astype(acc)))
            zero = np.where(found, -0.0 if wins_zero else 0.0, 0.0 if wins_zero else -0.0)
            out = np.where(out == 0, zero.astype(acc), out)
        return np.asarray(out).astype(x.dtype)
    return extremum


rule(g.scatter_min_p)(_scatter_extremum(np.minimum, True))
rule(g.scatter_max_p)(_scatter_extremum(np.maximum, False))


@rule(g.scatter_p)
def _scatter(x, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices, mode):
    index, values = _scatter_targets(x, indices, updates, dimension_numbers, mode)
    out = x.copy()
    if x.ndim == 0:
        return values[-1].copy() if values.size else out
    out[index] = values   # of repeated indices the last update wins
    return out
