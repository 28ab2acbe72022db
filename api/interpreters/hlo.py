"""The StableHLO op builders of `jax._src.lib.mlir.dialects.hlo` that refjax can honour: in a
lowering rule (refjax.interpreters.mlir) each builder stages the lax primitive the op is, on
the refjax values the rule receives in place of MLIR values, so the jaxpr the backend runs
computes exactly what the rule builds. A builder refjax does not know raises
NotImplementedError naming it and the primitive being lowered (refjax has no MLIR and never
substitutes another computation for the user's)."""
from .. import lax

BUILDERS = {
    "AddOp": lax.add, "SubtractOp": lax.sub, "MulOp": lax.mul, "DivOp": lax.div,
    "RemOp": lax.rem, "MaxOp": lax.max, "MinOp": lax.min, "PowOp": lax.pow,
    "Atan2Op": lax.atan2, "AndOp": lax.bitwise_and, "OrOp": lax.bitwise_or,
    "XorOp": lax.bitwise_xor, "NegOp": lax.neg, "AbsOp": lax.abs, "ExpOp": lax.exp,
    "Expm1Op": lax.expm1, "LogOp": lax.log, "Log1pOp": lax.log1p, "SqrtOp": lax.sqrt,
    "RsqrtOp": lax.rsqrt, "CbrtOp": lax.cbrt, "SineOp": lax.sin, "CosineOp": lax.cos,
    "TanOp": lax.tan, "TanhOp": lax.tanh, "LogisticOp": lax.logistic, "FloorOp": lax.floor,
    "CeilOp": lax.ceil, "SignOp": lax.sign, "NotOp": lax.bitwise_not,
}


def value(x):
    """An op with one result stands for that result, as in MLIR's Python bindings."""
    return x.result if isinstance(x, Op) else x


class Op:
    """A built op: `.result` (and `.results`) are the refjax values it computes."""

    def __init__(self, name, fn, *operands):
        self.name = name
        self.result = fn(*map(value, operands))
        self.results = [self.result]

    def __repr__(self):
        return f"hlo.{self.name}({self.result!r})"


def _builder(name, fn):
    def build(*operands):
        return Op(name, fn, *operands)
    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"stablehlo.{name}: stages lax.{fn.__name__} on its operands."
    return build


globals().update({name: _builder(name, fn) for name, fn in BUILDERS.items()})
LOWERING = [None]  # the primitive whose lowering is being traced (named in errors)


def __getattr__(name):
    if not name.endswith("Op"):
        raise AttributeError(f"module 'hlo' has no attribute {name!r}")

    def unsupported(*args, **kwargs):
        prim = LOWERING[0]
        raise NotImplementedError(
            f"the lowering of primitive '{prim}' builds hlo.{name}, which refjax cannot run: "
            "refjax has no MLIR, and its hlo module stages the elementwise StableHLO ops "
            f"only ({', '.join(sorted(BUILDERS))}); write the lowering with "
            "mlir.lower_fun(f) instead")
    return unsupported

