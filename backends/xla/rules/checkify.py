"""XLA rule of check: a check staged without checkify cannot be lowered (JAX's error)."""
from ....core.primitives import checkify as checks
from ._common import rule

rule(checks.check_p)(checks.staged_check_rule)
