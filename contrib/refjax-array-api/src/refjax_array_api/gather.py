"""The gather and scatter rules: the operand position of every element is integer bookkeeping on
the (host) indices; elements are read with the standard's `take` on the flattened operand and
written by taking from [operand, updates] (one round per repeat of a target, in update order,
as XLA applies them), so every gather and scatter form XLA has is expressed."""
import numpy as np

from refjax.lax import GatherScatterMode


def _starts(idx, rank, index_map, operand_bdims, indices_bdims):
    """Per index vector, the start of its window in each operand dim (batching dims start at
    the index vector's own coordinate)."""
    batch = idx.shape[:-1]
    starts = np.zeros(batch + (rank,), np.int64)
    starts[..., list(index_map)] = idx
    grid = np.indices(batch, dtype=np.int64)
    for o, i in zip(operand_bdims, indices_bdims):
        starts[..., o] = grid[i]
    return starts


def _bounded(starts, shape, sizes):
    """(whether each window is inside the operand, the starts clamped so it is)."""
    hi = np.asarray(shape, np.int64) - np.asarray(sizes, np.int64)
    keep = np.all((starts >= 0) & (starts <= hi), axis=-1)
    return keep, np.clip(starts, 0, np.maximum(hi, 0))


def _flat(pos, shape):
    """Row-major positions in the flattened operand of coordinates `pos` (..., rank)."""
    strides = np.cumprod((tuple(shape) + (1,))[:0:-1])[::-1].astype(np.int64)
    return pos @ strides if len(shape) else np.zeros(pos.shape[:-1], np.int64)


def _positions(starts, window, sizes):
    """Operand coordinates (batch + window shape + (rank,)) of every gathered element."""
    wshape = tuple(sizes[d] for d in window)
    offsets = np.zeros(wshape + (starts.shape[-1],), np.int64)
    grid = np.indices(wshape, dtype=np.int64)
    for p, d in enumerate(window):
        offsets[..., d] = grid[p]
    batch = starts.shape[:-1]
    return starts.reshape(batch + (1,) * len(wshape) + starts.shape[-1:]) + offsets


def _fill(xp, dtype, fill_value):
    """JAX's FILL_OR_DROP default: NaN (inexact), the minimum (signed), the maximum
    (unsigned), True (bool)."""
    if fill_value is not None:
        return fill_value
    if xp.isdtype(dtype, ("real floating", "complex floating")):
        return np.nan
    if dtype == xp.bool:
        return True
    info = xp.iinfo(dtype)
    return info.min if xp.isdtype(dtype, "signed integer") else info.max


def _gather(b, x, indices, *, dimension_numbers, slice_sizes, mode, fill_value, **_):
    xp, dn = b.xp, dimension_numbers
    idx = np.asarray(b.to_numpy(indices, None)).astype(np.int64)
    window = [d for d in range(x.ndim)
              if d not in dn.collapsed_slice_dims + dn.operand_batching_dims]
    starts = _starts(idx, x.ndim, dn.start_index_map, dn.operand_batching_dims,
                     dn.start_indices_batching_dims)
    keep, starts = _bounded(starts, x.shape, slice_sizes)
    flat = _flat(_positions(starts, window, slice_sizes), x.shape)
    out = xp.reshape(xp.take(xp.reshape(x, (-1,)), xp.asarray(flat.reshape(-1)), axis=0),
                     flat.shape)
    if mode is GatherScatterMode.FILL_OR_DROP:
        mask = xp.asarray(keep.reshape(keep.shape + (1,) * len(window)))
        out = xp.where(mask, out, xp.asarray(_fill(xp, x.dtype, fill_value), dtype=x.dtype))
    return xp.permute_dims(out, _output_order(idx.ndim - 1, dn.offset_dims))


def _output_order(nb, offset_dims):
    """The permutation taking (batch dims, window dims) to the output's order (offset_dims
    are sorted: the p-th is window dim p)."""
    rest = iter(range(nb))
    return tuple(nb + offset_dims.index(i) if i in offset_dims else next(rest)
                 for i in range(nb + len(offset_dims)))


def _scatter_targets(b, x, indices, updates, dn, mode):
    """(flat operand positions, update values as a 1-D array) of the elements a scatter
    writes, in update order; windows out of bounds are dropped (clamped in CLIP mode)."""
    xp = b.xp
    idx = np.asarray(b.to_numpy(indices, None)).astype(np.int64)
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    values = xp.permute_dims(updates, tuple(scatter_dims) + tuple(dn.update_window_dims))
    window = [d for d in range(x.ndim)
              if d not in dn.inserted_window_dims + dn.operand_batching_dims]
    sizes = [1] * x.ndim
    for d, n in zip(window, values.shape[len(scatter_dims):]):
        sizes[d] = n
    starts = _starts(idx, x.ndim, dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
                     dn.scatter_indices_batching_dims)
    keep, clamped = _bounded(starts, x.shape, sizes)
    keep = np.ones_like(keep) if mode is GatherScatterMode.CLIP else keep
    flat = _flat(_positions(clamped, window, sizes), x.shape)
    keep = np.broadcast_to(keep.reshape(keep.shape + (1,) * len(window)), flat.shape)
    chosen = xp.asarray(np.flatnonzero(keep))
    return flat[keep], xp.take(xp.reshape(values, (-1,)), chosen, axis=0)


def _rounds(targets):
    """For each target, how many earlier elements hit the same position (its round)."""
    order = np.argsort(targets, kind="stable")
    ranked = targets[order]
    first = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    counts = np.diff(np.r_[first, len(ranked)])
    occurrence = np.empty(len(targets), np.int64)
    occurrence[order] = np.arange(len(ranked)) - np.repeat(first, counts)
    return occurrence


def _write(b, flat, targets, values):
    """flat with flat[targets] = values (targets unique), by taking from [flat, values]."""
    pick = np.arange(flat.shape[0], dtype=np.int64)
    pick[targets] = flat.shape[0] + np.arange(len(targets))
    return b.xp.take(b.xp.concat([flat, values]), b.xp.asarray(pick), axis=0)


def _scatter(combine):
    def rule(b, x, indices, updates, *, dimension_numbers, mode, **_):
        """Each round updates distinct positions, rounds in update order: the result of
        applying the updates one by one."""
        xp = b.xp
        targets, values = _scatter_targets(b, x, indices, updates, dimension_numbers, mode)
        flat, occurrence = xp.reshape(x, (-1,)), _rounds(targets)
        for r in range(int(occurrence.max(initial=-1)) + 1):
            now = np.flatnonzero(occurrence == r)
            new = xp.take(values, xp.asarray(now), axis=0)
            if combine is not None:
                new = combine(b, xp.take(flat, xp.asarray(targets[now]), axis=0), new)
            flat = _write(b, flat, targets[now], new)
        return xp.reshape(flat, x.shape)
    return rule


def rules(max_rule, min_rule):
    """This module's rules by primitive name (scatter-max/min reuse rules.py's NaN- and
    signed-zero-aware max and min)."""
    return {"gather": _gather, "scatter": _scatter(None),
            "scatter-add": _scatter(lambda b, old, new: old + new),
            "scatter-sub": _scatter(lambda b, old, new: old - new),
            "scatter-mul": _scatter(lambda b, old, new: old * new),
            "scatter-max": _scatter(max_rule), "scatter-min": _scatter(min_rule)}
