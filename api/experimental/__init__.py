"""refjax.experimental: JAX's experimental namespace (shard_map, pjit, mesh_utils,
key_reuse, ode, checkify, xla_metadata, layout, io_callback)."""
from . import key_reuse  # noqa: F401
from . import shard_map  # noqa: F401
from . import pjit  # noqa: F401
from . import mesh_utils  # noqa: F401
from . import ode  # noqa: F401
from . import checkify  # noqa: F401
from . import xla_metadata  # noqa: F401
from . import layout  # noqa: F401
from ...core.primitives.callbacks import io_callback  # noqa: F401
