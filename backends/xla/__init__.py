"""xla: the fast path; jax.lax lowering per primitive, jax.jit compilation, JAX's CPU devices."""
from .backend import XlaBackend  # noqa: F401
from .rules import missing_rules  # noqa: F401  (importing rules registers the lowerings)
from . import rules_control_flow  # noqa: F401
from . import rules_parallel  # noqa: F401
from . import rules_gather  # noqa: F401
