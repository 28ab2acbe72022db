"""refjax.custom_batching: custom_vmap and sequential_vmap (jax.custom_batching)."""
from ..core.transforms.custom_vmap import custom_vmap, sequential_vmap  # noqa: F401
