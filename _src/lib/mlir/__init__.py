"""refjax._src.lib.mlir: only `dialects.hlo`, which JAX's "JAX primitives" page imports."""
