"""Varying manual axes (vma): for each value inside a shard_map body, the mesh axes along which
it may differ from device to device. The static check behind shard_map's check_vma runs
each primitive's `vma` rule (collectives, control flow) over the body; call-like primitives
are looked through; every other primitive varies where one of its operands does."""
from .config import config
from .jaxpr import Literal


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
