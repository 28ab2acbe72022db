"""refjax.experimental: JAX's experimental namespace (shard_map, pjit, checkify, io_callback)."""
from . import shard_map  # noqa: F401
from . import pjit  # noqa: F401
from . import checkify  # noqa: F401
from ...core.primitives.callbacks import io_callback  # noqa: F401
