"""NumPy rule of check: reached only when a check was staged without checkify."""
from ....core.primitives import checkify as checks
from ._common import rule

rule(checks.check_p)(checks.staged_check_rule)
