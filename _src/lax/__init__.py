"""refjax._src.lax: `lax`, the module JAX's private `jax._src.lax.lax` is (refjax.lax); only
here because JAX's "JAX primitives" page imports it (`from jax._src.lax import lax`)."""
from ...api import lax

__all__ = ["lax"]
