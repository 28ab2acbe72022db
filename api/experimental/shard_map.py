"""refjax.experimental.shard_map: shard_map, as jax.experimental.shard_map exposes it."""
from ...core.transforms.shard_map import shard_map  # noqa: F401

__all__ = ["shard_map"]
