"""refjax.interpreters (jax.interpreters): the rule registries JAX's "JAX primitives" page
uses to give a primitive defined outside refjax its transformation rules (`ad`, `batching`)
and its lowering (`mlir`); each entry becomes a rule of refjax's own Primitive."""
from . import ad, batching, mlir

__all__ = ["ad", "batching", "mlir"]
