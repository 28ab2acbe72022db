"""refjax.experimental: JAX's experimental namespace (shard_map)."""
from . import shard_map  # noqa: F401
