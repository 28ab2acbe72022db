"""reshape's sharding type on Explicit mesh axes: one dimension split, or several merged, carry
their mesh axes over (JAX's rule); other reshapes of sharded values need out_sharding."""
from .. import sharding_propagation as sp
from ..sharding.mesh import axes_of


def reshape_type(aval, spec, new_sizes):
    """The spec of `aval` (laid out as `spec`) reshaped to `new_sizes`, or ShardingTypeError
    where JAX asks for the result's sharding."""
    if all(e is None for e in spec):
        return (None,) * len(new_sizes)
    kept = [i for i, d in enumerate(aval.shape) if d != 1]
    old1 = [aval.shape[i] for i in kept]
    new1 = [d for d in new_sizes if d != 1]
    spec1 = [spec[i] for i in kept]
    if old1 == new1:
        entries = spec1
    else:
        entries = _regroup(aval, spec1, old1, new1, new_sizes)
    it = iter(entries)
    return tuple(next(it) if d != 1 else (spec[i] if i < aval.ndim and aval.shape[i] == 1
                                          else None)
                 for i, d in enumerate(new_sizes))


def _groups(old, new):
    """The non-1 dimensions of both shapes paired into minimal runs of equal product."""
    groups, i, j = [], 0, 0
    while i < len(old) and j < len(new):
        gi, gj, po, pn = [i], [j], old[i], new[j]
        i, j = i + 1, j + 1
        while po != pn:
            if po < pn:
                gi, po, i = gi + [i], po * old[i], i + 1
            else:
                gj, pn, j = gj + [j], pn * new[j], j + 1
        groups.append((gi, gj))
    return groups


def _regroup(aval, spec1, old1, new1, new_sizes):
    if 0 in old1:
        _refuse(aval, new_sizes)
    groups = _groups(old1, new1)
    changed = [g for g in groups if len(g[0]) != 1 or len(g[1]) != 1]
    if len(changed) != 1 or (len(changed[0][0]) > 1 and len(changed[0][1]) > 1):
        _refuse(aval, new_sizes)
    out = []
    for gi, gj in groups:
        if len(gi) == len(gj) == 1:
            out.append(spec1[gi[0]])
        else:
            axes = _merged_axes(aval, [spec1[i] for i in gi], new_sizes)
            out += _distribute(aval, axes, [new1[j] for j in gj], new_sizes)
    return out


def _merged_axes(aval, entries, new_sizes):
    """The mesh axes of the dimensions a group merges, major first (none may follow an
    unsharded dimension)."""
    flat = [a for e in entries for a in (axes_of(e) or (None,))]
    while flat and flat[-1] is None:
        flat.pop()
    if None in flat:
        _refuse(aval, new_sizes)
    return flat


def _distribute(aval, axes, sizes, new_sizes):
    """Each new dimension takes the next mesh axes that divide it, in order; every axis must
    be placed."""
    axis_sizes = dict(aval.sharding.mesh.shape_tuple)
    axes, out = list(axes), []
    for size in sizes:
        taken = []
        while size > 1 and axes:
            size, rest = divmod(size, axis_sizes[axes[0]])
            if rest:
                _refuse(aval, new_sizes)
            taken.append(axes.pop(0))
        out.append(None if not taken else taken[0] if len(taken) == 1 else tuple(taken))
    if axes:
        _refuse(aval, new_sizes)
    return out


def _refuse(aval, new_sizes):
    raise sp.reject("This reshape is not supported. Please specify the sharding of the output "
                    "via the `out_sharding` argument of jax.lax.reshape. Got operand type: "
                    f"{aval.str_short(short_dtypes=False)}, new sizes: {tuple(new_sizes)}")
