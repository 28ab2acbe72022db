"""refjax: a reference implementation of JAX. `import refjax as jax` runs JAX programs on a
NumPy oracle backend (default) or on XLA (`refjax.set_backend("xla")`)."""
import sys as _sys

from .core.config import config, disable_jit, enable_x64, numpy_dtype_promotion
from .core.array import Array
from .core.avals import ShapeDtypeStruct, ShapedArray
from .core import errors
from .core.transforms.jit import jit, make_jaxpr, eval_shape, clear_caches
from .backends.base import (set_backend, get_backend, default_backend, backend,
                            current_backend_name)
from .backends import numpy_ref as _numpy_ref  # noqa: F401  (registers the oracle)
from .api import array_methods as _array_methods
from .api import numpy, lax, tree_util, tree, nn, sharding, debug, random, dtypes, ops

_array_methods.install()

for _name, _mod in (("numpy", numpy), ("lax", lax), ("tree_util", tree_util), ("tree", tree),
                   ("nn", nn), ("sharding", sharding), ("debug", debug), ("random", random),
                   ("dtypes", dtypes), ("ops", ops)):
    _sys.modules[f"{__name__}.{_name}"] = _mod

from .api.devices import *  # noqa: E402,F401,F403
from .core.sharding import NamedSharding, PartitionSpec  # noqa: E402,F401
from .core.transforms.api import *  # noqa: E402,F401,F403

from .core.transforms.shard_map import shard_map, smap, pmap  # noqa: E402,F401
from .api import experimental  # noqa: E402

_sys.modules[f"{__name__}.experimental"] = experimental
_sys.modules[f"{__name__}.experimental.shard_map"] = experimental.shard_map

__version__ = "0.1.0"
