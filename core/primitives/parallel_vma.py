"""pvary and pcast: the lax functions casting values among JAX's manual-axis types (varying,
invarying, unreduced, reduced), binding `pvary` (parallel.py) and the free casts between
varying and unreduced or reduced values (`vary_unreduced_cast_p`, `reduced_vary_cast_p`);
`unreduced_psum_p`, lax.psum of an unreduced value, and `unreduced_reduce_scatter_p`, its
psum_scatter (transposed to `all_gather_reduced_p`)."""
from .. import pytree
from ..primitive import make_primitive
from ..sharding_unreduced import sets_of, with_manual_sets
from ..trace import EvalTrace, as_value, current_trace, get_aval
from ..transforms.ad import deflinear
from ..vma import axis_state
from .axis_env import _axis_names, axis_scope, binding_order, check_axis_names, vma_checked
from . import parallel_lanes as lanes
from .parallel import (_reduced_vma, _varying_over_axis_name, all_gather_p, psum_invariant_p,
                       psum_scatter_p, pvary_p)


def pvary(x, axis_name):
    """x marked as varying over the named axes (the values are unchanged): shard_map's
    replication check then treats it as device-varying. A no-op in a shard_map body with
    check_vma=False, as JAX's; JAX's ValueError for a value already varying over them."""
    axes = _axis_names(axis_name)
    if isinstance(current_trace(), EvalTrace) and not axis_scope()[0]:
        raise ValueError("pvary should be called under jax.shard_map.")  # JAX's, eagerly
    check_axis_names(axes, "pvary")
    if vma_checked() is False:
        return x
    return pytree.tree_map(lambda leaf: _pvary_leaf(as_value(leaf), axes), x)


def _pvary_leaf(x, axes):
    aval = get_aval(x)
    if set(axes) & aval.vma:
        raise ValueError(
            "pvary is a invariant->variant collective. This means that the axis names "
            "mentioned in `axes` passed to `pvary` must not be present in "
            f"`jax.typeof(inp).mat.varying`. Got axes={tuple(axes)} and "
            f"jax.typeof(inp)={aval.str_short(short_dtypes=False)}")
    return pvary_p.bind(x, axes=binding_order(axes))


# ---------------------------------------------------------------- the free casts

def _cast(name, src, dst):
    """A free cast of a value from one manual-axis state to another over `axes` (varying is
    the vma, unreduced and reduced the type's sets): the identity on each device's value,
    so on the lanes shard_map runs its body as. Printed as JAX's, `name` with `_p`."""
    prim = make_primitive(f"{name}_p")
    prim.def_uses_axis_env()
    prim.def_abstract_eval(lambda x, *, axes: _cast_type(name, x, axes, src, dst))
    prim.def_batch(lambda axis_data, vals, dims, *, axes: (vals[0], dims[0]))
    prim.def_vma(lambda eqn, ins, strict: [_cast_vma(ins[0], eqn.params["axes"], dst)])
    return prim


def _cast_vma(vma, axes, dst):
    return vma | set(axes) if dst == "varying" else vma - set(axes)


def _cast_type(name, aval, axes, src, dst):
    """JAX's checks and result type of a cast from state `src` to `dst` over `axes`."""
    unreduced, reduced = sets_of(aval)
    held = {"varying": aval.vma, "reduced": reduced, "unreduced": unreduced}
    if not held[src]:
        raise ValueError(f"{name} only accepts inputs that are {src}. Got "
                         f"{aval.str_short(True)}")
    if not held[src] & set(axes):
        raise ValueError(
            f"{name} is a {src.capitalize()}->{dst.capitalize()} collective. This means that "
            f"the axis names mentioned in `axes` passed to `{name}` must be present in "
            f"`jax.typeof(x).mat.{src}`. Got axes={tuple(axes)} and "
            f"jax.typeof(x).mat.{src}={frozenset(held[src])}")
    if held[dst] & set(axes):
        raise ValueError(f"{name} input cannot be {dst} across the axis_name provided. Got "
                         f"x={aval.str_short(True)} and axis_name={tuple(axes)}")
    out = aval.update(vma=frozenset(_cast_vma(aval.vma, axes, dst)))
    if dst == "unreduced":
        return with_manual_sets(out, unreduced | set(axes), reduced)
    return with_manual_sets(out, unreduced, reduced - set(axes))


vary_unreduced_cast_p = _cast("vary_unreduced_cast", "varying", "unreduced")
reduced_vary_cast_p = _cast("reduced_vary_cast", "reduced", "varying")
deflinear(vary_unreduced_cast_p,
          lambda ct, x, *, axes: [reduced_vary_cast_p.bind(ct, axes=axes)])
deflinear(reduced_vary_cast_p,
          lambda ct, x, *, axes: [vary_unreduced_cast_p.bind(ct, axes=axes)])

# invarying -> reduced: free; transposed to the psum its cotangent's partial sums need
preduced_p = make_primitive("preduced")
preduced_p.def_uses_axis_env()
preduced_p.def_batch(lambda axis_data, vals, dims, *, axes: (vals[0], dims[0]))
preduced_p.def_vma(lambda eqn, ins, strict: [ins[0]])
deflinear(preduced_p, lambda ct, x, *, axes: [unreduced_psum_p.bind(ct, axes=axes)])


@preduced_p.def_abstract_eval
def _preduced_type(aval, *, axes):
    unreduced, reduced = sets_of(aval)
    if aval.vma & set(axes):
        raise ValueError(
            "preduced is a Invariant->Reduced collective. This means that the axis names "
            "mentioned in `axes` passed to `preduced` must not be present in "
            f"`jax.typeof(inp).mat.varying`. Got axes={tuple(axes)} and "
            f"jax.typeof(inp).mat.varying={set(aval.vma)}")
    if reduced & set(axes):
        raise ValueError("preduced input cannot be reduced across the axis_name provided. Got "
                         f"x={aval.str_short(True)} and axis_name={tuple(axes)}")
    return with_manual_sets(aval, unreduced, reduced | set(axes))


# ---------------------------------------------------------------- psum of an unreduced value

# lax.psum of a value unreduced over its axes, as JAX 0.10 binds it in a check_vma body: each
# device's partial value summed, the result invariant over the axes; transposed to preduced
unreduced_psum_p = make_primitive("unreduced_psum")
unreduced_psum_p.def_uses_axis_env()
unreduced_psum_p.def_vma(_reduced_vma)
# psum_invariant's lanes: on other axes it binds psum_invariant, as under vmap the free casts
# leave each lane's (varying) value itself
unreduced_psum_p.def_batch(psum_invariant_p.batch)
deflinear(unreduced_psum_p, lambda ct, x, *, axes: [preduced_p.bind(ct, axes=axes)])


@unreduced_psum_p.def_abstract_eval
def _unreduced_psum_type(aval, *, axes):
    """JAX's checks: the value is unreduced over some of the axes and varies over none."""
    unreduced, reduced = sets_of(aval)
    if not unreduced:
        raise ValueError(f"unreduced_psum only accepts inputs that are unreduced. Got "
                         f"{aval.str_short(True)}")
    if not unreduced & set(axes):
        raise ValueError(
            "unreduced_psum is a Unreduced -> Invariant collective. This means that the "
            f"axes={tuple(axes)} passed to `unreduced_psum` must be present in "
            f"jax.typeof(x).mat.unreduced={set(unreduced)}")
    if aval.vma & set(axes):
        raise ValueError("unreduced_psum's input cannot be varying across the  axis_name "
                         f"provided. Got x={aval.str_short(True)} and axes={tuple(axes)}")
    return with_manual_sets(aval, unreduced - set(axes), reduced)


def _like(name, base, sets, vma):
    """A collective computing what `base` computes (its shape rule and lanes), typed by
    `sets(in_aval, axes)` -> its result's (unreduced, reduced) axes and its `vma` rule."""
    prim = make_primitive(name)
    prim.def_uses_axis_env()
    prim.def_batch(base.batch)
    prim.def_vma(vma)

    @prim.def_abstract_eval
    def _type(x, **params):
        axes = set(lanes.names_of(params["axis_name"]))
        try:
            out = base.abstract_eval(x, **params)
        except (TypeError, ValueError) as e:  # named as this primitive, not the one it is like
            raise type(e)(f"{name}: {e}") from None
        return with_manual_sets(out, *sets(x, axes), getattr(x.sharding, "mesh", None))
    return prim


def _not_varying(eqn, ins, strict):
    return [frozenset().union(*ins) - set(lanes.names_of(eqn.params["axis_name"]))]


# lax.psum_scatter of an unreduced value (unreduced -> varying) and its transpose, the
# all_gather of varying chunks into a reduced value (varying -> reduced), as JAX 0.10's
unreduced_reduce_scatter_p = _like(
    "unreduced_reduce_scatter", psum_scatter_p,
    lambda x, axes: (sets_of(x)[0] - axes, sets_of(x)[1]), _varying_over_axis_name)
all_gather_reduced_p = _like(
    "all_gather_reduced", all_gather_p,
    lambda x, axes: (sets_of(x)[0], sets_of(x)[1] | axes), _not_varying)
unreduced_reduce_scatter_p.def_pp(lambda eqn, context: sorted(
    dict(eqn.params, axis_name=lanes.names_of(eqn.params["axis_name"])).items()))
all_gather_reduced_p.def_pp(lambda eqn, context: [
    ("all_gather_dimension", eqn.params["axis"]),
    ("axis_name", lanes.names_of(eqn.params["axis_name"])),
    ("axis_size", eqn.params["axis_size"]), ("tiled", eqn.params["tiled"])])
deflinear(unreduced_reduce_scatter_p, lambda ct, x, *, scatter_dimension, **params: [
    all_gather_reduced_p.bind(ct, axis=scatter_dimension, **params)])
deflinear(all_gather_reduced_p, lambda ct, x, *, axis, **params: [
    unreduced_reduce_scatter_p.bind(ct, scatter_dimension=axis, **params)])


_PCAST_TARGETS = ("varying", "reduced", "unreduced")
# (from, to) -> the cast's primitive; invarying -> varying is pvary
_CASTS = {("varying", "unreduced"): vary_unreduced_cast_p,
          ("reduced", "varying"): reduced_vary_cast_p, ("invarying", "reduced"): preduced_p}


def pcast(x, axis_name, *, to):
    """JAX 0.10's casts among manual-axis types, all free (no communication): invarying or
    reduced to varying, varying to unreduced; JAX's ValueError for the others."""
    if isinstance(axis_name, (set, frozenset)):  # JAX's: an unordered set names no order
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    if to not in _PCAST_TARGETS:
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: "
                         f"{set(_PCAST_TARGETS)}")
    axes = _axis_names(axis_name)
    return pytree.tree_map(lambda leaf: _pcast_leaf(as_value(leaf), axes, to), x)


def _pcast_leaf(x, axes, to):
    if vma_checked() is False:  # a check_vma=False body has no manual types: every value is
        if to == "unreduced":    # invarying, cast (for nothing) to varying or reduced, as JAX's
            raise ValueError(f"Unsupported pcast from=invarying, to={to!r}")
        return x
    from_ = axis_state(get_aval(x), axes, "jax.lax.pcast") if vma_checked() else "invarying"
    if (from_, to) == ("invarying", "varying"):
        return pvary(x, axes)
    if (from_, to) not in _CASTS:
        raise ValueError(f"Unsupported pcast from={from_}, to={to!r}")
    check_axis_names(axes, "pcast")
    return _CASTS[from_, to].bind(x, axes=binding_order(axes))

