"""Sharding types of gather and the scatters on Explicit mesh axes (JAX 0.10.2's rules): the
result spec when it follows from the operands' without collectives, else ShardingTypeError."""
from .. import sharding_propagation as sp


def _ambiguous(what, avals):
    names = ("operand", "indices", "updates")
    shown = ", ".join(f"{n}={a!r}" for n, a in zip(names, avals))
    return sp.reject(f"Use `{what}(out_sharding=)` to provide output PartitionSpec for the "
                     f"{'gather indexing' if 'get' in what else 'scatter update'} as out "
                     f"sharding could not be resolved unambiguously (or would require "
                     f"collectives on inputs). Got {shown}")


@sp.typed_only
def gather_rule(in_specs, in_avals, out_avals, *, dimension_numbers, slice_sizes, **_):
    """The offset dims keep the operand's entries, the others the indices'; refused where a
    sliced operand dim is sharded, the indices' query or index-vector dims are, or batching
    dims disagree."""
    (op, idx), dn = in_specs, dimension_numbers
    if not any(op) and not any(idx):
        return [sp.replicated(out_avals[0])]
    batch = list(zip(dn.operand_batching_dims, dn.start_indices_batching_dims))
    if not (all(slice_sizes[i] == in_avals[0].shape[i] or op[i] is None
                for i in dn.start_index_map)
            and all(_resolvable(op[o], idx[i]) for o, i in batch)
            and all(e is None for i, e in enumerate(idx) if i not in dn.start_indices_batching_dims)):
        raise _ambiguous(".at[...].get", in_avals)
    return [_gathered(op, idx, dn, out_avals[0].ndim)]


def _gathered(op, idx, dn, ndim, window_entry=lambda op, i: op[i]):
    """The result's entries: each offset dim `window_entry` of its operand dim, each other
    the indices' (batching dims: the indices' or else the operand's)."""
    idx = list(idx)
    for o, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
        idx[i] = idx[i] or op[o]
    window = iter(i for i in range(len(op))
                  if i not in dn.collapsed_slice_dims and i not in dn.operand_batching_dims)
    queries = iter(idx)
    return tuple(window_entry(op, next(window)) if d in dn.offset_dims else next(queries)
                 for d in range(ndim))


def gather_auto(in_specs, in_avals, out_avals, *, dimension_numbers, slice_sizes, **_):
    """Auto propagation, as XLA lays a gather out: an offset dim keeps its operand dim's
    axes when the window takes the whole dimension, the others take the indices' axes but
    those the offset dims use."""
    (op, idx), dn, shape = in_specs, dimension_numbers, in_avals[0].shape
    out = _gathered(op, idx, dn, out_avals[0].ndim,
                    lambda op, i: op[i] if slice_sizes[i] == shape[i] else None)
    used = {a for d in dn.offset_dims for a in sp.axes_of(out[d])}
    return [tuple(e if d in dn.offset_dims or not used & set(sp.axes_of(e)) else None
                  for d, e in enumerate(out))]


def _resolvable(*entries):
    return len({e for e in entries if e is not None}) <= 1


def _updates_batching_dims(dn, index_vector_dim, ndim):
    """The updates' dims matching the indices' batching dims."""
    query_dims = list(range(index_vector_dim))
    for i in dn.update_window_dims:
        query_dims.insert(i, None)
    assert len(query_dims) == ndim
    return tuple(query_dims.index(i) for i in dn.scatter_indices_batching_dims)


@sp.typed_only
def scatter_rule(in_specs, in_avals, out_avals, *, dimension_numbers, **_):
    """The operand's entries, completed by the batching dims' and the updates' window dims';
    refused where they would need collectives (JAX's five conditions)."""
    (op, idx, upd), dn = in_specs, dimension_numbers
    if not any(op) and not any(idx) and not any(upd):
        return [sp.replicated(out_avals[0])]
    operand, _, updates = in_avals
    vector_dim = len(idx) - 1
    upd_batch = _updates_batching_dims(dn, vector_dim, updates.ndim)
    batch = list(zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, upd_batch))
    window = list(zip(dn.update_window_dims,
                      [i for i in range(operand.ndim) if i not in dn.inserted_window_dims
                       and i not in dn.operand_batching_dims]))
    if not (all(_resolvable(op[o], idx[i], upd[u]) for o, i, u in batch)
            and all((updates.shape[u] == operand.shape[o] and upd[u] == op[o])
                    or (upd[u] is None and op[o] is None) for u, o in window)
            and all(op[i] is None for i in dn.inserted_window_dims)
            and all(e is None for i, e in enumerate(upd)
                    if i not in upd_batch and i not in dn.update_window_dims)
            and all(e is None for i, e in enumerate(idx[:vector_dim])
                    if i not in dn.scatter_indices_batching_dims)
            and idx[vector_dim] is None):
        raise _ambiguous(".at[...].set/add/mul/...", in_avals)
    out = list(op)
    for o, i, u in batch:
        out[o] = out[o] or idx[i] or upd[u]
    for u, o in window:
        out[o] = out[o] or upd[u]
    return [tuple(out)]
