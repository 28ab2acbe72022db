"""refjax.experimental: JAX's experimental namespace (shard_map, pjit)."""
from . import shard_map  # noqa: F401
from . import pjit  # noqa: F401
