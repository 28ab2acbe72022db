"""refjax._src.lib: only `mlir.dialects.hlo`, which JAX's "JAX primitives" page imports."""
