"""shard_map's in_specs read from its arguments' types: inferred when omitted, checked against
the types when every mesh axis goes manual (both as JAX 0.10 does); the types of the blocks and
results of a partial-manual shard_map, which keep the Explicit axes that stay automatic."""
from ..sharding import AxisType, NamedSharding, P, type_spec
from ..sharding.context import keep_axes
from ..sharding.mesh import axes_of
from ..sharding_types import UnknownSharding, auto_typed, is_typed, spec_of, typed, typed_aval
from ..trace import Tracer, get_aval
from .shard_map_types import check_spec_sets, type_of


def infer_in_specs(mesh, order, leaves, axis_names=None):
    """in_specs omitted: each argument's spec in its type, as JAX infers them, which needs every
    manual axis Explicit (TypeError, as JAX's, otherwise)."""
    if any(mesh._name_to_type[a] != AxisType.Explicit for a in order):
        # the set built as JAX builds it, so that it prints its names in JAX's order
        shown = frozenset(axis_names) if axis_names else frozenset(mesh.axis_names) - frozenset()
        raise TypeError(
            "shard_map in_specs argument must be a pytree of `jax.sharding.PartitionSpec` "
            f"instances, but it was `None` when axis_names={shown} are of type "
            f"{', '.join(str(mesh._name_to_type[a]) for a in shown)}")
    specs = [_manual_spec(order, _type_spec_of(x)) for x in leaves]
    check_spec_sets(mesh, order, specs, ())
    return specs


def _manual_spec(manual, spec):
    """An inferred spec reduced to the manual axes (the others stay in the value's type), as
    JAX's: a tuple entry may lose trailing axes only (ValueError otherwise); its unreduced
    and reduced axes kept."""
    out = []
    for entry in spec.partitions:
        kept = [a if a in manual else None for a in (entry if isinstance(entry, tuple)
                                                     else (entry,))]
        while kept and kept[-1] is None:
            kept.pop()
        if None in kept:
            raise ValueError(f"Invalid spec: {spec}")
        out.append(None if not kept else kept[0] if not isinstance(entry, tuple)
                   else tuple(kept))
    return P(*out, unreduced=spec.unreduced, reduced=spec.reduced)


def check_typed_specs(mesh, order, leaves, specs):
    """When every mesh axis goes manual and they are all Explicit, an argument's type fixes
    its spec: a different in_spec is a ValueError, as JAX's (which checks nothing when only
    some axes go manual)."""
    if set(order) != set(mesh.axis_names) or \
            any(mesh._name_to_type[a] != AxisType.Explicit for a in order):
        return specs
    for x, spec in zip(leaves, specs):
        if _untyped(x) or spec is None:
            continue
        want, got = _type_spec_of(x), spec._normalized_spec_for_aval(x.ndim)
        if want != got:
            raise ValueError(
                f"in_specs passed to shard_map: {got} does not match the specs of the input: "
                f"{want} for arg: {typed_aval(x).str_short(short_dtypes=False)}. `in_specs` is an "
                "optional argument so you can omit specifying it and shard_map will infer the "
                "in_specs from the arguments. If you want to reshard your inputs, you can use "
                "`jax.reshard` on the arguments and then pass those args to shard_map.")
    return specs


def _untyped(x):
    """A traced value whose type carries no sharding (one staged before sharding in types)."""
    return isinstance(x, Tracer) and not isinstance(get_aval(x).sharding, NamedSharding)


def _type_spec_of(x):
    """The spec x's type carries, as jax.typeof gives it: a concrete Array's from its layout,
    a traced value's from its aval's sharding, a grad or vmap tracer of concrete arrays' from
    theirs (less the mapped dimension)."""
    sharding = type_of(x).sharding
    # (a staged value typed with no sharding may be replicated, as JAX types a value made in
    # a trace, or an argument whose type a trace dropped: no guess)
    if sharding is None and isinstance(x, Tracer) or isinstance(sharding, UnknownSharding):
        raise NotImplementedError(
            "shard_map without in_specs on a traced value whose type carries no sharding: "
            "the spec cannot be inferred; pass in_specs")
    return type_spec(sharding, x.ndim)


def _free_axes(mesh, order):
    """The Explicit mesh axes a shard_map over `order` leaves automatic."""
    return set(mesh.explicit_axes) - set(order)


def block_type(x, local, mesh, order):
    """A block's aval typed as JAX types it: the argument's entries on the Explicit axes that
    stay automatic, on the mesh whose manual axes are Manual (untyped when none stay)."""
    free, aval = _free_axes(mesh, order), typed_aval(x)
    if not free or not is_typed(aval):
        return local
    inner = mesh.abstract_mesh.update_axis_types({a: AxisType.Manual for a in order})
    entries = [keep_axes(e, free) for e in spec_of(aval)]
    return local.update(sharding=NamedSharding(inner, P(*entries)))


def result_type(block, global_aval, spec, mesh):
    """A result's aval typed as JAX types it: the out spec's axes, then the block's automatic
    ones, per dimension (untyped when the block is; on a mesh of Auto axes typed on it)."""
    if not is_typed(block):
        return global_aval if mesh.explicit_axes else auto_typed(global_aval, mesh.abstract_mesh)
    return typed(global_aval, mesh.abstract_mesh, result_entries(spec, block))


def result_entries(spec, aval):
    """Per dimension, the out spec's mesh axes followed by those of aval's type not among
    them (None for none; a name alone; else a tuple)."""
    spec = spec._normalized_spec_for_aval(aval.ndim).partitions
    entries = [axes_of(s) + tuple(a for a in axes_of(t) if a not in axes_of(s))
               for s, t in zip(spec, spec_of(aval))]
    return tuple(None if not e else e[0] if len(e) == 1 else e for e in entries)
