"""Unreduced and reduced mesh axes in sharding types (`P(..., unreduced=, reduced=)` on Explicit
axes): a result's sets by JAX's rules where refjax has them (add, mul, dot_general's
out_sharding, reshard), refused elsewhere rather than typed wrongly."""
from .errors import ShardingTypeError
from .sharding.mesh import axes_of

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
    return _reduced_only(xu, "add", x, y)


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
    return _reduced_only(xu or yu, "mul", x, y)


def _reduced_only(unreduced, name, *avals):
    """The result's sets when only unreduced operands are handled: (unreduced, none)."""
    if not unreduced and any(sets_of(a)[1] for a in avals):
        _refuse_reduced(name)
    return unreduced, _NONE


def _dot_general(lhs, rhs):
    raise ShardingTypeError(f"lhs or rhs passed to dot_general cannot be unreduced. Got "
                            f"lhs={lhs!r} and rhs={rhs!r}")


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


_RULES = {"add": _add, "mul": _mul, "dot_general": _dot_general}
# rules that read params and the out_sharding= type too (they run whatever the operands')
_PARAM_RULES = {"reduce_sum": lambda x, *, axes, given, **_: _reduce_sum(x, axes=axes,
                                                                         given=given),
                "convert_element_type": lambda x, *, given, **_: _convert(x, given=given)}


def _refuse_reduced(name):
    raise NotImplementedError(f"{name} of an operand with reduced mesh axes: refjax types "
                              "reduced axes through reshard, unary elementwise operations and "
                              "mul by an unreduced value only")


def _is_elementwise(prim):
    from . import sharding_propagation  # it builds on the sharding types
    return prim.sharding is sharding_propagation.elementwise


def out_sets(prim, in_avals, params, given):
    """(unreduced, reduced) of prim's result: by its rule when an operand has either set;
    else the unreduced axes of its out_sharding= type (`given`; dot_general checks them)."""
    if prim.name in _PARAM_RULES and is_typed_aval(in_avals[0]):
        return _PARAM_RULES[prim.name](*in_avals, given=given, **params)
    sets = [sets_of(a) for a in in_avals]
    if any(u or r for u, r in sets):
        rule = _RULES.get(prim.name)
        if rule is not None:
            return rule(*in_avals)
        if any(u for u, _ in sets):
            raise NotImplementedError(f"unreduced rule for {prim.name} is not implemented. "
                                      "Please file an issue at https://github.com/jax-ml/jax/issues")
        if len(in_avals) == 1 and _is_elementwise(prim):
            return _NONE, sets[0][1]  # JAX's unary ops keep their operand's reduced axes
        _refuse_reduced(prim.name)
    return (given.spec.unreduced if given is not None else _NONE), _NONE


def check_reduced_values(prim, out_avals):
    """Refuse a concrete result of unreduced type: JAX keeps each device's partial sum in it,
    refjax holds the reduced value only (so its shards could not be JAX's)."""
    for aval in out_avals:
        if sets_of(aval)[0]:
            raise NotImplementedError(
                f"{prim.name} computed a value of unreduced type {aval.str_short(False)} "
                "outside jit: refjax holds reduced values only, not each device's partial "
                "sum; reshard it (jax.reshard(x, P(...))) inside jit before it leaves")
    return out_avals
