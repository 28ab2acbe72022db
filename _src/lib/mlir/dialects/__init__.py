"""refjax._src.lib.mlir.dialects: `hlo`, the StableHLO builders a lowering rule may use
(refjax.interpreters.hlo: each stages its lax primitive), as JAX's "JAX primitives" page
imports them (`from jax._src.lib.mlir.dialects import hlo`)."""
from .....api.interpreters import hlo

__all__ = ["hlo"]
