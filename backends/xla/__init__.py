"""xla: the fast path; jax.lax lowering per primitive, jax.jit compilation, JAX's CPU devices."""
from .backend import XlaBackend  # noqa: F401
from .rules import missing_rules  # noqa: F401  (importing rules registers the lowerings)
