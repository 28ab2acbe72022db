"""refjax.interpreters.mlir (jax.interpreters.mlir): `register_lowering(p, rule)` and
`lower_fun(f)`, the lowering of a primitive defined outside refjax.

refjax has no MLIR, so a lowering is honoured by tracing it: under jit the backend calls the
rule once per operand types with refjax values where JAX passes MLIR values, and runs the jaxpr
that results as it runs jit (on numpy_ref and xla alike). A rule from `lower_fun(f)` stages f;
a rule written with the builders of `jax._src.lib.mlir.dialects.hlo` stages the lax primitive
each builder is (`hlo.AddOp(x, y)` is `lax.add`), so the computation is the one the rule
builds; a builder refjax does not know (custom calls, ...) raises NotImplementedError naming
it and the primitive. refjax never runs the primitive's impl in place of its lowering: JAX
does not either, and the two may differ. Eager calls run the impl (`def_impl`), as JAX."""
from dataclasses import dataclass

import numpy as np

from ...core.avals import ShapedArray
from ...core.transforms.staging import stage_closed
from . import hlo


@dataclass(frozen=True)
class LoweringRuleContext:
    """What a lowering rule is told besides its operands: their types and its results'."""
    primitive: object
    avals_in: tuple
    avals_out: tuple


def register_lowering(prim, rule, platform=None, inline=True, cacheable=True):
    """Make `rule(ctx, *operands, **params) -> [results]` prim's lowering. refjax runs on
    CPU: a rule for another platform (cuda, rocm, tpu) is never used, as in JAX on CPU."""
    if platform in (None, "cpu"):
        prim.lowering = Lowering(prim, rule)


def lower_fun(fun, multiple_results=True):
    """A lowering rule computing fun(*operands, **params) (a list when multiple_results)."""
    def rule(ctx, *args, **params):
        out = fun(*args, **params)
        return out if multiple_results else [out]
    return rule


class Lowering:
    """prim's lowering as the backends call it: (operand values, params) -> the ClosedJaxpr
    the rule traces to, cached per operand types and params (the rule runs once for each,
    as JAX's runs once per compilation)."""

    def __init__(self, prim, rule):
        self.prim, self.rule, self.cache = prim, rule, {}

    def __call__(self, values, params):
        avals = tuple(ShapedArray(np.shape(v), np.dtype(v.dtype)) for v in values)
        try:
            key = (avals, tuple(sorted(params.items())))
            hash(key)
        except TypeError:  # unhashable params: trace each time
            return self.trace(avals, params)
        if key not in self.cache:
            self.cache[key] = self.trace(avals, params)
        return self.cache[key]

    def trace(self, avals, params):
        """Stage the rule on values of types `avals`; its results must have the types the
        primitive's abstract evaluation gives (ValueError otherwise, as JAX's verifier)."""
        out = self.prim.abstract_eval(*avals, **params)
        outs = tuple(out) if self.prim.multiple_results else (out,)
        ctx = LoweringRuleContext(self.prim, avals, outs)
        prev, hlo.LOWERING[0] = hlo.LOWERING[0], self.prim
        try:
            closed = stage_closed(lambda *xs: [hlo.value(r) for r in
                                               self.rule(ctx, *xs, **params)], list(avals))
        finally:
            hlo.LOWERING[0] = prev
        _check_types(self.prim, closed.out_avals, outs)
        return closed


def _check_types(prim, got, want):
    short = [(a.shape, a.dtype) for a in want]
    if [(a.shape, a.dtype) for a in got] != short:
        raise ValueError(  # JAX's class: its MLIR verifier refuses the module
            f"Cannot lower jaxpr with verifier errors: the lowering of primitive '{prim}' returned values of types "
            f"{[a.str_short(short_dtypes=False) for a in got]} where its abstract evaluation "
            f"gives {[a.str_short(short_dtypes=False) for a in want]}")


__all__ = ["LoweringRuleContext", "lower_fun", "register_lowering"]
