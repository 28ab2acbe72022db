"""refjax.experimental: JAX's experimental namespace (shard_map, pjit, io_callback, ode)."""
from . import shard_map  # noqa: F401
from . import pjit  # noqa: F401
from . import ode  # noqa: F401
from ...core.primitives.callbacks import io_callback  # noqa: F401
