"""refjax._src: the few private JAX helpers JAX's own documentation imports (the custom
interpreters notebook's `from jax._src.util import safe_map`; the "JAX primitives" page's
`jax._src.api`, `jax._src.lax.lax` and `jax._src.lib.mlir.dialects.hlo`), so its code runs
unchanged."""
