"""Varying manual axes (vma): for each value inside a shard_map body, the mesh axes along which
it may differ from device to device. The static check behind shard_map's check_vma runs
each primitive's `vma` rule (collectives, control flow) over the body; call-like primitives
are looked through; every other primitive varies where one of its operands does."""
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
    return [frozenset().union(*in_vmas)] * len(eqn.outvars)
