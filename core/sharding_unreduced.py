"""Unreduced and reduced mesh axes in sharding types (`P(..., unreduced=, reduced=)` on Explicit
axes): a result's sets by JAX's rules where refjax has them (add, mul, dot_general's
out_sharding, reshard), refused elsewhere rather than typed wrongly."""
from .errors import ShardingTypeError, in_jax_words
from .sharding.mesh import P, axes_of, plain_spec_error

_NONE = frozenset()


def is_typed_aval(aval):
    return getattr(getattr(aval.sharding, "spec", None), "partitions", None) is not None


def sets_of(aval):
    """(unreduced, reduced) axes of an aval's type."""
    spec = getattr(aval.sharding, "spec", None)
    return (getattr(spec, "unreduced", _NONE), getattr(spec, "reduced", _NONE))


def _add(x, y):
    (xu, _), (yu, _) = sets_of(x), sets_of(y)
    if xu and yu and xu != yu:
        raise ShardingTypeError(f"lhs and rhs to `add` must be unreduced along the same mesh "
                                f"axes. Got lhs={xu}, rhs={yu}")
    if bool(xu) != bool(yu):
        lhs, rhs = ("lhs", "rhs") if xu else ("rhs", "lhs")
        raise ShardingTypeError(
            f"{lhs} is unreduced while {rhs} is not. `add` operation does not allow this "
            f"because there will be implicit communication. Please reduce {lhs} via `reshard` "
            f"before calling `add`.")
    return xu, _nary_reduced(x, y)


def _mul(x, y):
    (xu, xr), (yu, yr) = sets_of(x), sets_of(y)
    if xu and yu:
        raise ShardingTypeError("lhs and rhs to `mul` cannot be unreduced since mul is "
                                f"bilinear. Got lhs={xu}, rhs={yu}")
    if xu and xu != yr:
        raise ShardingTypeError("RHS should be reduced along the same axes LHS is unreduced "
                                f"on. Got lhs={x.str_short(False)} and rhs={y.str_short(False)}")
    if yu and yu != xr:
        raise ShardingTypeError("LHS should be reduced along the same axes RHS is unreduced "
                                f"on. Got lhs={x.str_short(False)} and rhs={y.str_short(False)}")
    reduced = _nary_reduced(x, y)
    return (xu or yu, _NONE) if xu or yu else (_NONE, reduced)  # reduced meets unreduced


def _nary_reduced(*avals):
    """JAX's reduced axes of an elementwise result: those of its reduced operands, which must
    agree; no other operand may be replicated or sharded over them."""
    found = {r for a in avals if (r := sets_of(a)[1])}
    if len(found) > 1:
        raise ShardingTypeError("All inputs should be reduced across the same mesh axes. Got "
                                f"specs: {found}")
    reduced = next(iter(found), _NONE)
    for a in [a for a in avals if is_typed_aval(a)] if reduced else ():
        spec = a.sharding.spec
        used = {x for e in spec.partitions for x in axes_of(e)} | a.vma  # varying: manual
        if (frozenset(a.sharding.mesh.axis_names) - used - spec.unreduced - spec.reduced) \
                & reduced:
            raise ShardingTypeError("Inputs cannot be replicated on the same axes that another "
                                    f"input is reduced on. Got input type: {a.str_short(False)} "
                                    f"and reduced spec: {reduced}")
        if used & reduced:
            raise ShardingTypeError(
                "Inputs cannot be sharded/varying on the same axes that another input is "
                "reduced on. Reshard the input which is reduced to be sharded on the mesh axes "
                "it is reduced on via `jax.sharding.reshard(inp, jax.P(...))`. Got input type: "
                f"{a.str_short(False)} and reduced spec: {reduced}")
    return reduced


def _dot_general(lhs, rhs, given):
    """Unreduced operands are refused; the result is unreduced as its out_sharding= says
    (checked by its sharding rule) and, as JAX's, not reduced."""
    if sets_of(lhs)[0] or sets_of(rhs)[0]:
        raise ShardingTypeError(f"lhs or rhs passed to dot_general cannot be unreduced. Got "
                                f"lhs={lhs!r} and rhs={rhs!r}")
    return (given.spec.unreduced if given is not None else _NONE), _NONE


def _reduce_sum(x, *, axes, given):
    """A sum keeps its operand's sets; an unreduced out_sharding= names axes the summed
    dimensions were sharded over (or the operand was unreduced over)."""
    if given is None or not given.spec.unreduced:
        return sets_of(x)
    spec = x.sharding.spec
    used = {a for i in axes for a in axes_of(spec.partitions[i])} | spec.unreduced
    if not given.spec.unreduced <= used:
        raise ShardingTypeError(
            "out_sharding's unreduced axes should be in operand's specs that were summed "
            f"over. Got operand={x!r}, axes={tuple(axes)}, "
            f"unreduced_spec={given.spec.unreduced}")
    return given.spec.unreduced, sets_of(x)[1]


def _convert(x, *, given):
    """A conversion keeps its operand's sets, or takes its sharding= type's."""
    u, r = sets_of(x)
    g = given.spec if given is not None else None
    return (g.unreduced if g is not None and g.unreduced else u,
            g.reduced if g is not None and g.reduced else r)


def _broadcast(x, given):
    """A broadcast's result has its sharding= type, sets included, or its operand's sets."""
    return (given.spec.unreduced, given.spec.reduced) if given is not None else sets_of(x)


def _one_set(avals, which, kind):
    """The one unreduced (which=0) or reduced (1) set of the operands that have one."""
    found = {x for a in avals if (x := sets_of(a)[which])}
    if len(found) > 1:
        raise ShardingTypeError(f"All operands should be {kind} along the same mesh axes. Got "
                                f"{kind} specs: {found}")
    return next(iter(found), _NONE)


def _concatenate(*avals):
    return _one_set(avals, 0, "unreduced"), _one_set(avals, 1, "reduced")


def _dynamic_slice(x, *_):
    if sets_of(x)[0]:
        raise NotImplementedError("unreduced rule for dynamic_slice is not implemented. Please "
                                  "file an issue at https://github.com/jax-ml/jax/issues")
    return _NONE, sets_of(x)[1]


def _operands_sets(x, *_):
    """The first operand's sets (slices, splits, pads, squeezes of each device's partial value)."""
    return sets_of(x)


def _reshape(x, *, new_sizes, given):
    """A reshape keeps its operand's sets, where JAX's shape rule gets there: on an out_sharding
    type with the same sets; with a sharded dimension only by splitting one dimension (its
    other paths read the spec as a plain tuple, JAX's ValueError, or find no rule, its
    ShardingTypeError); with none, to no fewer dimensions (JAX cuts the spec as a tuple)."""
    sets = sets_of(x)
    if not any(sets):
        return _broadcast(x, given) if given is not None else sets
    if given is not None:
        for kind, mine, theirs in zip(("unreduced", "reduced"), sets, _broadcast(x, given)):
            if mine != theirs:
                raise ValueError(f"out_sharding passed to reshape must be {kind} over the same "
                                 f"mesh axes as operand. Got out_sharding: {given.spec} and "
                                 f"operand type: {x.str_short()}")
        return sets
    spec = x.sharding.spec.partitions
    if any(e is not None for e in spec):
        if [d for d in x.shape if d != 1] == [d for d in new_sizes if d != 1]:
            raise _read_plain("*pspec", "*spec.partitions")
        if len(new_sizes) < x.ndim:
            from .primitives.reshape_types import reshape_type  # (it builds on the types)
            reshape_type(x, spec, new_sizes)  # JAX's ShardingTypeError unless one merge
            raise _read_plain("*pspec", "*spec.partitions")
    elif len(new_sizes) < len(spec):
        raise _read_plain("pspec[...]", "spec.partitions[...]")
    return sets


def _read_plain(what, instead):
    """JAX's ValueError where its rule reads a spec as a plain tuple, in JAX's words (jnp
    functions do not prefix their names: JAX raises it from the primitive)."""
    return in_jax_words(ValueError(plain_spec_error(what, instead)))


def _read_as_tuple(what, instead):
    """JAX refuses these by reading the operand's spec as a plain tuple (its ValueError)."""
    def rule(*_, **__):
        raise _read_plain(what, instead)
    return rule


_RULES = {"add": _add, "add_any": _add, "mul": _mul, "concatenate": _concatenate,
          "dynamic_slice": _dynamic_slice, "select_n": lambda _, *cases: sets_of(cases[0]),
          "stack": _concatenate,
          "tile": _read_as_tuple("*pspec", "*spec.partitions"),
          **dict.fromkeys(("transpose", "slice", "split", "squeeze", "pad"), _operands_sets)}
# rules that read params and the out_sharding= type too (they run whatever the operands')
_PARAM_RULES = {"reduce_sum": lambda x, *, axes, given, **_: _reduce_sum(x, axes=axes,
                                                                         given=given),
                "convert_element_type": lambda x, *, given, **_: _convert(x, given=given),
                "broadcast_in_dim": lambda x, *, given, **_: _broadcast(x, given),
                "dot_general": lambda x, y, *, given, **_: _dot_general(x, y, given),
                "reshape": lambda x, *, new_sizes, given, **_: _reshape(x, new_sizes=new_sizes,
                                                                      given=given)}


def _is_elementwise(prim):
    from . import sharding_propagation  # it builds on the sharding types
    return prim.sharding is sharding_propagation.elementwise


# the sets of control-flow primitives' results, their jaxprs' results' (typed when traced),
# and of shard_map's, its out_specs'
_OUT_SETS = {"cond": lambda p: map(sets_of, p["branches"][0].out_avals),
             "while": lambda p: map(sets_of, p["body_jaxpr"].out_avals),
             "scan": lambda p: map(sets_of, p["jaxpr"].out_avals),
             "shard_map": lambda p: [(s.unreduced, s.reduced) for s in p["out_specs"]]}


def out_sets_each(prim, in_avals, out_avals, params, given):
    """(unreduced, reduced) of each of prim's results: control flow's and shard_map's by
    `_OUT_SETS`, others' all alike (`out_sets`)."""
    if prim.name in _OUT_SETS:
        return list(_OUT_SETS[prim.name](params))
    return [out_sets(prim, in_avals, params, given)] * len(out_avals)


def out_sets(prim, in_avals, params, given):
    """(unreduced, reduced) of prim's result: by its rule when an operand has either set;
    else the unreduced axes of its out_sharding= type (`given`; dot_general checks them)."""
    if prim.name in _PARAM_RULES and any(map(is_typed_aval, in_avals)):
        return _PARAM_RULES[prim.name](*in_avals, given=given, **params)
    sets = [sets_of(a) for a in in_avals]
    if any(u or r for u, r in sets):
        rule = _RULES.get(prim.name)
        if rule is not None:
            return rule(*in_avals)
        if _is_elementwise(prim):
            if any(u for u, _ in sets):
                raise NotImplementedError(f"unreduced rule for {prim.name} is not implemented. "
                                          "Please file an issue at "
                                          "https://github.com/jax-ml/jax/issues")
            return _NONE, _nary_reduced(*in_avals)
        raise NotImplementedError(f"unreduced/reduced rule for {prim.name} is not implemented. "
                                  "Please file an issue at https://github.com/jax-ml/jax/issues")
    return (given.spec.unreduced, given.spec.reduced) if given is not None else (_NONE, _NONE)


def swapped_spec(spec):
    """A spec with its unreduced and reduced axes swapped (a cotangent's, as JAX's: the
    cotangent of an unreduced value is reduced and vice versa)."""
    if not (spec.unreduced or spec.reduced):
        return spec
    return spec.update(unreduced=spec.reduced, reduced=spec.unreduced)


def swapped_sets(sharding):
    """A NamedSharding (or a body's ManualSets) with its unreduced and reduced axes swapped."""
    spec = swapped_spec(sharding.spec)
    if spec is sharding.spec:
        return sharding
    if type(sharding) is ManualSets:
        return ManualSets(sharding.mesh, spec)
    return sharding.update(spec=spec)


def cotangent_aval(aval):
    """The aval of a cotangent of a value of type `aval` inside a shard_map body."""
    t = aval.to_tangent_aval()
    return t.update(sharding=swapped_sets(t.sharding)) if type(t.sharding) is ManualSets else t


def manual_mesh():
    """The abstract mesh of the manual axes bound now (a shard_map body's), whose types'
    unreduced and reduced sets are printed in its order."""
    from .primitives.axis_env import axis_scope  # the primitives build on this module
    from .sharding import AbstractMesh, AxisType
    sizes = axis_scope()[0]
    return AbstractMesh(tuple(sizes.values()), tuple(sizes), (AxisType.Manual,) * len(sizes))


class ManualSets:
    """The sharding of a value's type inside a shard_map body whose manual axes include
    unreduced or reduced ones (JAX's `mat.unreduced`/`mat.reduced`; its varying axes are the
    aval's vma): printed `{U:x}`/`{R:x}`, read as `typeof(x).sharding.spec.unreduced`."""

    __slots__ = ("mesh", "spec")

    def __init__(self, mesh, spec):
        self.mesh, self.spec = mesh, spec

    def __eq__(self, other):
        return type(other) is ManualSets and (self.mesh, self.spec) == (other.mesh, other.spec)

    def __hash__(self):
        return hash((self.mesh, self.spec))

    def __repr__(self):
        return f"ManualSets({self.spec})"


def with_manual_sets(aval, unreduced, reduced, mesh=None):
    """aval with these unreduced and reduced manual axes in its type (inside a shard_map
    body)."""
    s = aval.sharding
    if not (unreduced or reduced or type(s) is ManualSets):
        return aval
    if s is not None and type(s) is not ManualSets:
        raise NotImplementedError(
            f"unreduced/reduced manual axes of {aval.str_short()} in a shard_map leaving some "
            "Explicit mesh axes automatic: refjax types them only when every axis is manual")
    if not (unreduced or reduced):
        return aval.update(sharding=None)
    spec = P(unreduced=unreduced, reduced=reduced)
    return aval.update(sharding=ManualSets(s.mesh if s is not None else mesh or manual_mesh(),
                                           spec))


def check_reduced_values(prim, out_avals):
    """Refuse a concrete result of unreduced type on a backend holding reduced values only
    (not `partial_values`): JAX keeps each device's partial sum in it, so its shards could
    not be JAX's."""
    for aval in out_avals:
        if sets_of(aval)[0]:
            raise NotImplementedError(
                f"{prim.name} computed a value of unreduced type {aval.str_short(False)} "
                "outside jit: this backend holds reduced values only, not each device's partial "
                "sum; reshard it (jax.reshard(x, P(...))) inside jit before it leaves")
    return out_avals
