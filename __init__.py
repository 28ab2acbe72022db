"""refjax: a reference implementation of JAX. `import refjax as jax` runs JAX programs on a
NumPy oracle backend (default) or on XLA (`refjax.set_backend("xla")`)."""
import sys as _sys

from .core.config import config, disable_jit, enable_x64, numpy_dtype_promotion
from .core.array import BaseArray as Array
from .core.avals import ShapeDtypeStruct, ShapedArray
from .core import errors
from .core.transforms.jit import jit, make_jaxpr, eval_shape, clear_caches
from .backends.base import (set_backend, get_backend, default_backend, backend,
                            current_backend_name, effects_barrier)
from .backends import numpy_ref as _numpy_ref  # noqa: F401  (registers the oracle)
from .api import array_methods as _array_methods
from .api import (numpy, lax, tree_util, tree, nn, sharding, debug, random, dtypes, ops,
                  test_util, ad_checkpoint)

_array_methods.install()

for _name, _mod in (("numpy", numpy), ("lax", lax), ("tree_util", tree_util), ("tree", tree),
                   ("nn", nn), ("sharding", sharding), ("debug", debug), ("random", random),
                   ("dtypes", dtypes), ("ops", ops), ("test_util", test_util),
                   ("ad_checkpoint", ad_checkpoint)):
    _sys.modules[f"{__name__}.{_name}"] = _mod
_sys.modules[f"{__name__}.lax.linalg"] = lax.linalg
_sys.modules[f"{__name__}.numpy.fft"] = numpy.fft

from .api.devices import (  # noqa: E402
    devices, local_devices, device_count, local_device_count, process_count, process_index,
    host_count, host_id, make_mesh, device_put, device_get, block_until_ready,
    make_array_from_callback, make_array_from_single_device_arrays,
    make_array_from_process_local_data, device_put_replicated, device_put_sharded)
from .core.sharding import (  # noqa: E402
    AxisType, Device, Mesh, NamedSharding, P, PartitionSpec, SingleDeviceSharding, set_mesh)
from .core.transforms.jvp import jvp, stop_gradient  # noqa: E402
from .core.transforms.vmap import vmap  # noqa: E402
from .core.transforms.custom import custom_jvp  # noqa: E402
from .core.transforms.custom_vjp import custom_vjp  # noqa: E402
from .core.transforms.autodiff import (  # noqa: E402
    vjp, linearize, grad, value_and_grad, jacfwd, jacrev, jacobian, hessian, linear_transpose)
from .core.transforms.checkpoint import checkpoint, remat, checkpoint_policies  # noqa: E402
from .core.transforms.shard_map import shard_map, smap, pmap  # noqa: E402
from .api import experimental  # noqa: E402

_sys.modules[f"{__name__}.experimental"] = experimental
_sys.modules[f"{__name__}.experimental.shard_map"] = experimental.shard_map

__version__ = "0.1.0"
