"""refjax.interpreters.batching (jax.interpreters.batching): `primitive_batchers[p] = rule`
gives a primitive its batching rule; JAX's rule `(args, dims, **params) -> (out, out_dim)`
is refjax's without the axis data (unbatched operands have dim None, as in JAX)."""
from .registry import RuleTable


def _from_jax(rule):
    def batch(axis_data, vals, dims, **params):
        return rule(vals, dims, **params)
    return batch


primitive_batchers = RuleTable("batch", _from_jax)

__all__ = ["primitive_batchers"]
