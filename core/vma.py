"""Varying manual axes (vma): for each value inside a shard_map body, the mesh axes along which
it may differ from device to device. The static check behind shard_map's check_vma runs
each primitive's `vma` rule (collectives, control flow) over the body; call-like primitives
are looked through; every other primitive varies where one of its operands does. Inside a
check_vma body the same rules type each staged equation's outputs (`typed_outputs`), and an
operation mixing operands of different vma gets `pvary`s first (`match_operands`), as JAX's."""
from .config import config
from .jaxpr import JaxprEqn, Literal, Var
from .primitives.axis_env import binding_order, vma_checked
from .sharding.mesh import P
from .sharding_unreduced import ManualSets, out_sets_each, sets_of, with_manual_sets


def jaxpr_vma(jaxpr, in_vmas, strict=False):
    """The vma of each output of `jaxpr` given its inputs'; `strict` (check_vma) rejects what
    JAX's type system rejects (a rule raises naming the operation)."""
    env = var_vmas(jaxpr, in_vmas, strict)
    return [_read(env, v) for v in jaxpr.outvars]


def var_vmas(jaxpr, in_vmas, strict=False):
    """The vma of every variable of `jaxpr` (its own, not its inner jaxprs') given its
    inputs'."""
    env = dict(zip(jaxpr.invars, in_vmas))
    for eqn in jaxpr.eqns:
        env.update(zip(eqn.outvars, eqn_vma(eqn, [_read(env, v) for v in eqn.invars], strict)))
    return env


def _read(env, v):
    return frozenset() if type(v) is Literal else env.get(v, frozenset())


def eqn_vma(eqn, in_vmas, strict):
    """The vma of each output of one equation."""
    prim = eqn.primitive
    if prim.vma is not None:
        return prim.vma(eqn, in_vmas, strict)
    inner = prim.call_jaxpr(eqn.params)
    if inner is not None:
        return jaxpr_vma(inner.jaxpr, in_vmas, strict)
    if strict and in_vmas and not config.read("jax_auto_pcast"):
        _check_match(prim, in_vmas)
    return [frozenset().union(*in_vmas)] * len(eqn.outvars)


def _check_match(prim, in_vmas):
    """jax_auto_pcast off: operands varying over different axes are an error (JAX inserts
    no pvary then)."""
    if any(v != in_vmas[0] for v in in_vmas[1:]):
        raise ValueError(
            f"Primitive {prim.name} requires varying manual axes to match, but got "
            f"{list(in_vmas)}. Please open an issue at https://github.com/jax-ml/jax/issues "
            "and as a temporary workaround pass the check_vma=False argument to "
            "`jax.shard_map`")


def typed_outputs(prim, invars, out_avals, params):
    """The outputs' avals with their vma (inside a check_vma shard_map body; unchanged
    elsewhere): the primitive's rule applied to its operands' types."""
    if not vma_checked():
        return out_avals
    eqn = JaxprEqn(prim, invars, [Var(a) for a in out_avals], params)
    vmas = eqn_vma(eqn, [_vma_of(v) for v in invars], True)
    outs = [a if a.vma == m else a.update(vma=frozenset(m)) for a, m in zip(out_avals, vmas)]
    return manual_sets_out(prim, [v.aval for v in invars], outs, params)


def manual_sets_out(prim, in_avals, out_avals, params):
    """The outputs' unreduced and reduced manual axes (in a shard_map body), by JAX's rules
    from their operands' (`sharding_unreduced`); a call's as its jaxpr's results; the casts
    and collectives type their own (their abstract evaluation)."""
    typed = [a.sharding for a in in_avals if type(a.sharding) is ManualSets]
    if not typed or prim.vma is not None:
        return out_avals
    inner, mesh = prim.call_jaxpr(params), typed[0].mesh
    # JAX's rules see the other operands as invarying (replicated) over the manual axes
    in_avals = [a if type(a.sharding) is ManualSets else a.update(sharding=ManualSets(mesh, P()))
                for a in in_avals]
    sets = [sets_of(a) for a in inner.out_avals] if inner is not None else \
        out_sets_each(prim, in_avals, out_avals, params, None)
    return [with_manual_sets(a, u, r, mesh) for a, (u, r) in zip(out_avals, sets)]


def _vma_of(atom):
    return getattr(atom.aval, "vma", frozenset())


def match_operands(prim, args, avals, params):
    """JAX's implicit pvary (jax_auto_pcast, on by default): inside a check_vma body, operands
    of an operation with the default (union) rule that vary over fewer axes than the others are
    made varying over the rest by a staged `pvary` (literals included)."""
    if (len(args) < 2 or prim.vma is not None or not vma_checked()
            or prim.call_jaxpr(params) is not None or not config.read("jax_auto_pcast")):
        return args
    vmas = [getattr(a, "vma", frozenset()) for a in avals]
    union = frozenset().union(*vmas)
    if all(v == union for v in vmas):
        return args
    return [_pvary(x, union - v, a) if union - v else x for x, v, a in zip(args, vmas, avals)]


def vary_like(out, vma):
    """JAX's full_like: inside a check_vma body (with jax_auto_pcast), the filled value is
    made varying, by a staged `pvary`, over the axes `vma` (its model's)."""
    if not vma_checked() or not config.read("jax_auto_pcast"):
        return out
    from .trace import get_aval  # trace imports the primitives, which import this module
    aval = get_aval(out)
    missing = vma - aval.vma
    return _pvary(out, missing, aval) if missing else out


def _pvary(x, axes, aval):
    """x made varying over `axes`: a reduced value by the free reduced_vary_cast when it is
    reduced over exactly those axes (JAX's), else by pvary."""
    from .primitives.parallel import pvary_p  # the collectives build on staging, which uses this
    from .primitives.parallel_vma import reduced_vary_cast_p
    prim = reduced_vary_cast_p if sets_of(aval)[1] == axes else pvary_p
    return prim.bind(x, axes=binding_order(axes))


def axis_state(aval, axes, api, hint=""):
    """'varying', 'unreduced', 'reduced' or 'invarying': what a value is over a collective's
    axes; JAX's ValueError (its text, the set built as JAX's so that it prints in JAX's order,
    then refjax's `hint`) for a mix, which no one cast or psum can take."""
    unreduced, reduced = sets_of(aval)
    states = {"varying" if a in aval.vma else "unreduced" if a in unreduced else
              "reduced" if a in reduced else "invarying" for a in axes}
    if len(states) > 1:
        raise ValueError(
            f"{api} can only accept axis_name which corresponds to one of varying, unreduced, "
            f"reduced or invarying state of the input. Got input type: "
            f"{aval.str_short(short_dtypes=False)}, axes: {tuple(axes)} and input state: "
            f"{states}{hint}")
    return states.pop()


def mix_hint(axes, aval):
    """What refjax adds to JAX's error for a reduction over a mix of varying and invariant
    axes: which axes are which, and the ways out."""
    varying = tuple(a for a in axes if a in aval.vma)
    invariant = tuple(a for a in axes if a not in aval.vma)
    return (f". The value varies over {varying} but not over {invariant}: reduce over "
            f"{varying} only, make it vary over all of them first (jax.lax.pcast(x, "
            f"{invariant}, to='varying')), or pass check_vma=False to shard_map.")
