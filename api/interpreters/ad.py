"""refjax.interpreters.ad (jax.interpreters.ad): `primitive_jvps[p] = rule` and
`primitive_transposes[p] = rule` give a primitive its jvp and transpose rules (JAX's
signatures are refjax's: `(primals, tangents, **params)` and `(ct, *args, **params)`), with
the values those rules meet: `Zero`, `UndefinedPrimal`, `is_undefined_primal`."""
from ...core.transforms.ad import UndefinedPrimal, Zero, is_undefined_primal
from .registry import RuleTable

primitive_jvps = RuleTable("jvp")
primitive_transposes = RuleTable("transpose")

__all__ = ["UndefinedPrimal", "Zero", "is_undefined_primal", "primitive_jvps",
           "primitive_transposes"]
