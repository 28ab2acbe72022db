"""refjax: a reference implementation of JAX. `import refjax as jax` runs JAX programs on a
NumPy oracle backend (default) or on XLA (`refjax.set_backend("xla")`)."""
import sys as _sys

from .core.config import config, disable_jit, enable_x64, numpy_dtype_promotion
from .core.config import (  # noqa: F401
    debug_nans, debug_infs, numpy_rank_promotion, default_matmul_precision, check_tracer_leaks,
    checking_leaks, default_prng_impl, threefry_partitionable, legacy_prng_key,
    enable_custom_prng)
from .core.config import (  # noqa: F401
    enable_checks, log_compiles, explain_cache_misses, no_tracing, no_execution, thread_guard,
    debug_key_reuse)
from .core.config import default_device  # noqa: F401
from .core.config import auto_pcast, remove_size_one_mesh_axis_from_type  # noqa: F401
from .core.array import BaseArray as Array
from .core.avals import ShapeDtypeStruct, ShapedArray
from .core.shard import Shard
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
_sys.modules[f"{__name__}.nn.initializers"] = nn.initializers
_sys.modules[f"{__name__}.numpy.linalg"] = numpy.linalg
_sys.modules[f"{__name__}.numpy.fft"] = numpy.fft
from .api import scipy  # noqa: E402

_sys.modules[f"{__name__}.scipy"] = scipy
for _name in scipy.__all__:
    _sys.modules[f"{__name__}.scipy.{_name}"] = getattr(scipy, _name)
_sys.modules[f"{__name__}.scipy.cluster.vq"] = scipy.cluster.vq
_sys.modules[f"{__name__}.scipy.optimize"] = scipy.optimize
_sys.modules[f"{__name__}.scipy.sparse.linalg"] = scipy.sparse.linalg

from .api.devices import (  # noqa: E402
    devices, local_devices, device_count, local_device_count, process_count, process_index,
    host_count, host_id, make_mesh, device_put, device_get, block_until_ready,
    make_array_from_callback, make_array_from_single_device_arrays,
    make_array_from_process_local_data, device_put_replicated, device_put_sharded)
from .api.devices import (  # noqa: E402
    process_indices, host_ids, live_arrays, copy_to_host_async)
from .api.placement import (  # noqa: E402
    transfer_guard, transfer_guard_host_to_device,
    transfer_guard_device_to_host, transfer_guard_device_to_device)
from .api.typeof import typeof  # noqa: E402
from .api.sharding import reshard  # noqa: E402
from .core.sharding import (  # noqa: E402
    AxisType, Device, Mesh, NamedSharding, P, PartitionSpec, SingleDeviceSharding, set_mesh)
from .core.transforms.jvp import jvp, stop_gradient  # noqa: E402
from .core.transforms.vmap import vmap  # noqa: E402
from .core.transforms.custom import custom_jvp  # noqa: E402
from .core.transforms.custom_vjp import custom_vjp  # noqa: E402
from .core.transforms.autodiff import (  # noqa: E402
    vjp, linearize, grad, value_and_grad, jacfwd, jacrev, jacobian, hessian, linear_transpose)
from .core.transforms.fwd_and_bwd import fwd_and_bwd  # noqa: E402
from .core.transforms.checkpoint import checkpoint, remat, checkpoint_policies  # noqa: E402
from .core.transforms.shard_map import shard_map, smap, pmap  # noqa: E402
from .api import experimental  # noqa: E402
from .core.primitives.callbacks import pure_callback  # noqa: E402
from .api import custom_derivatives  # noqa: E402
from .core.transforms.closure import closure_convert, custom_gradient  # noqa: E402

from .api import stages, image, custom_batching  # noqa: E402
from .core.transforms.compile_time import ensure_compile_time_eval  # noqa: E402
from .core.source_info import named_call, named_scope  # noqa: E402
from .core.dtypes import float0  # noqa: E402
from .api.devices import print_environment_info  # noqa: E402
from .api import ref  # noqa: E402
from .api import ad  # noqa: E402
from .api.ref import Ref, empty_ref, free_ref, freeze, new_ref  # noqa: E402

_sys.modules[f"{__name__}.custom_derivatives"] = custom_derivatives
_sys.modules[f"{__name__}.stages"] = stages
_sys.modules[f"{__name__}.image"] = image
_sys.modules[f"{__name__}.custom_batching"] = custom_batching
_sys.modules[f"{__name__}.ref"] = ref
_sys.modules[f"{__name__}.ad"] = ad

_sys.modules[f"{__name__}.experimental"] = experimental
_sys.modules[f"{__name__}.experimental.shard_map"] = experimental.shard_map
_sys.modules[f"{__name__}.experimental.pjit"] = experimental.pjit
_sys.modules[f"{__name__}.experimental.mesh_utils"] = experimental.mesh_utils

from .api import typing, flatten_util  # noqa: E402

_sys.modules[f"{__name__}.errors"] = errors
_sys.modules[f"{__name__}.typing"] = typing
_sys.modules[f"{__name__}.flatten_util"] = flatten_util
_sys.modules[f"{__name__}.experimental.key_reuse"] = experimental.key_reuse

_sys.modules[f"{__name__}.experimental.ode"] = experimental.ode

from .api import example_libraries  # noqa: E402

_sys.modules[f"{__name__}.example_libraries"] = example_libraries
_sys.modules[f"{__name__}.example_libraries.optimizers"] = example_libraries.optimizers
_sys.modules[f"{__name__}.example_libraries.stax"] = example_libraries.stax
_sys.modules[f"{__name__}.experimental.checkify"] = experimental.checkify
_sys.modules[f"{__name__}.experimental.xla_metadata"] = experimental.xla_metadata
_sys.modules[f"{__name__}.experimental.layout"] = experimental.layout

from .api import extend  # noqa: E402

_sys.modules[f"{__name__}.extend"] = extend
_sys.modules[f"{__name__}.extend.core"] = extend.core
_sys.modules[f"{__name__}.extend.core.primitives"] = extend.core.primitives

from .api import interpreters  # noqa: E402

_sys.modules[f"{__name__}.interpreters"] = interpreters
for _name in ("ad", "batching", "mlir"):
    _sys.modules[f"{__name__}.interpreters.{_name}"] = getattr(interpreters, _name)

__version__ = "0.1.0"
