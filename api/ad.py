"""jax.ad: the cotangent targets `VJP.with_refs` takes and the markers pullbacks return."""
from ..core.transforms.vjp_object import DidntWant, DontWant, GradRef, GradValue

__all__ = ["DidntWant", "DontWant", "GradRef", "GradValue"]
