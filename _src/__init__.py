"""refjax._src: the few private JAX helpers JAX's own documentation imports (the custom
interpreters notebook's `from jax._src.util import safe_map`), so its code runs unchanged."""
