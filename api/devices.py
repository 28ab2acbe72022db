"""Devices and data placement: devices(), device_put/device_get, make_mesh, shardings."""
import warnings

import numpy as np

from .. import backends
from ..backends.base import current_backend, get_backend, make_array
from ..core import pytree
from ..core.config import config, explicit_transfers
from ..core import sharding as sh
from ..core.primitives.sharding_ops import sharding_constraint_p
from ..core.sharding.shardings import UNREDUCED_INDICES
from ..core import array as array_mod
from ..core.array import Array
from ..core.avals import ShapedArray
from ..core.primitives.sharding_ops import device_put_traced
from ..core.trace import Tracer

__all__ = ["devices", "local_devices", "device_count", "local_device_count", "process_count",
           "process_index", "host_count", "host_id", "device_put", "device_get", "make_mesh",
           "block_until_ready", "NamedSharding", "PartitionSpec", "P", "Mesh", "AxisType",
           "SingleDeviceSharding", "set_mesh", "Device"]

NamedSharding, PartitionSpec, Mesh = sh.NamedSharding, sh.P, sh.Mesh
P = sh.P
AxisType, SingleDeviceSharding, set_mesh, Device = (sh.AxisType, sh.SingleDeviceSharding,
                                                    sh.set_mesh, sh.Device)
del backends


def _backend_for(name):
    if name in (None, "cpu"):
        return current_backend()
    return get_backend(name)


def devices(backend=None):
    """The devices of the current backend (virtual CPU devices on numpy_ref)."""
    return list(_backend_for(backend).devices())


def local_devices(process_index=None, backend=None, host_id=None):
    return devices(backend)


def device_count(backend=None):
    return len(devices(backend))


def local_device_count(backend=None):
    return device_count(backend)


def process_count(backend=None):
    return 1


def process_index(backend=None):
    return 0


host_count, host_id = process_count, process_index


def process_indices(backend=None):
    """The indices of every process: refjax runs in one, so [0]."""
    return list(range(process_count(backend)))


def host_ids(backend=None):
    """Deprecated alias of process_indices (JAX warns with the same words)."""
    warnings.warn("jax.process_indexs has been renamed to jax.process_indices. This alias "
                  "will eventually be removed; please update your code.", UserWarning,
                  stacklevel=2)
    return process_indices(backend)


def live_arrays(platform=None):
    """Every Array alive on the backend for `platform` (the current one by default) that was
    not deleted."""
    return array_mod.live_arrays(_backend_for(platform))


def copy_to_host_async(x):
    """Start copying every Array of the pytree x to the host; returns x unchanged."""
    for leaf in pytree.tree_leaves(x):
        if isinstance(leaf, Array):
            leaf.copy_to_host_async()
    return x


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A Mesh over the current backend's devices; axes are Auto by default (as in the seed
    notebook), Explicit (JAX 0.10's default) with the option
    `refjax_make_mesh_axis_types="explicit"`."""
    try:
        axis_shapes = tuple(axis_shapes)
    except TypeError:
        raise TypeError(f"make_mesh: axis_shapes must be a sequence of ints, got "
                        f"{axis_shapes!r}") from None
    if axis_types is None:
        default = sh.AxisType.Explicit if config.read("refjax_make_mesh_axis_types") == \
            "explicit" else sh.AxisType.Auto
        axis_types = (default,) * len(axis_shapes)
    devs = list(devices) if devices is not None else globals()["devices"]()
    return sh.make_mesh(axis_shapes, axis_names, axis_types, devices=devs)


def _put_leaf(x, target):
    backend = current_backend()
    if target is None and (isinstance(x, Tracer) or isinstance(x, Array)
                           and x._backend is backend):
        return x
    if not _is_target(target):
        raise ValueError("`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, "
                         "`jax.Device` or a pytree of these values. Received invalid value: "
                         f"{target!r} of type {type(target).__name__}")
    target = sh.device_put_target(target)
    if isinstance(x, Tracer):
        return device_put_traced(x, target)  # staged, as JAX stages it
    value, aval = _value_and_aval(x)
    if target is None:
        return make_array(value, aval, backend)
    sharding = target if isinstance(target, sh.Sharding) else sh.SingleDeviceSharding(target)
    if _unreduced(sharding) or _unreduced(getattr(x, "sharding", None)):
        return _put_unreduced(x, sharding)
    if isinstance(sharding, sh.NamedSharding):
        if isinstance(sharding.mesh, sh.AbstractMesh):  # (JAX's words: no devices to put on)
            raise ValueError("is_fully_addressable is not implemented for "
                             "`jax.sharding.AbstractMesh`.")
        sharding.devices_indices_map(aval.shape)  # validates the spec against the shape
    return make_array(value, aval, backend, sharding, _transfer_kind(x, sharding))


def _unreduced(sharding):
    return bool(getattr(getattr(sharding, "spec", None), "unreduced", None))


def _put_unreduced(x, sharding):
    """x laid out unreduced as JAX does it: an Array's value on the first device of each
    unreduced group (zeros on the others), resharded on device; JAX places neither host
    data nor an unreduced Array's pieces so (its error)."""
    if not isinstance(x, Array) or _unreduced(x.sharding) and x.sharding != sharding:
        raise NotImplementedError(UNREDUCED_INDICES)
    return sharding_constraint_p.bind(x, sharding=sharding)


def _transfer_kind(x, sharding):
    """What the transfer guard sees in placing x on `sharding`: none for an Array already
    laid out so (JAX moves nothing)."""
    if not isinstance(x, Array):
        return "host_to_device"
    return None if x.sharding == sharding else "device_to_device"


def _value_and_aval(x):
    if isinstance(x, Array):
        return np.asarray(x), x.aval
    from . import numpy as jnp
    with config.override(jax_transfer_guard_host_to_device="allow"):
        arr = jnp.asarray(x)  # only for its value and type: the transfer is the caller's
    return np.asarray(arr), arr.aval


def _is_target(d):
    return d is None or isinstance(d, (sh.Sharding, sh.Device, sh.P))


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """x (a pytree) placed on a device or laid out by a sharding (or a pytree prefix of them),
    on the current backend; Arrays from another backend are moved explicitly."""
    if may_alias and donate:
        raise ValueError("may_alias and donate cannot be True at the same time.")
    leaves, tree = pytree.tree_flatten(x)
    if _is_target(device):
        targets = [device] * len(leaves)
    else:
        targets = pytree.broadcast_prefix("device_put", x, device, _is_target)
    with explicit_transfers():
        return pytree.tree_unflatten(tree, [_put_leaf(v, t) for v, t in zip(leaves, targets)])


def device_get(x):
    """x (a pytree) as NumPy arrays."""
    return pytree.tree_map(lambda v: np.asarray(v) if isinstance(v, Array) else v, x)


def block_until_ready(x):
    """Wait for every Array in the pytree x; returns x."""
    for leaf in pytree.tree_leaves(x):
        if isinstance(leaf, Array):
            leaf.block_until_ready()
    return x


def _assemble(shape, sharding, piece_of):
    """The global NumPy array whose block at each device's index is piece_of(device, index)."""
    blocks = [(idx, np.asarray(piece_of(d, idx))) for d, idx in
              sharding.devices_indices_map(tuple(shape)).items()]
    dtype = blocks[0][1].dtype if blocks else np.float32
    out = np.empty(tuple(shape), dtype)
    for idx, block in blocks:
        if block.shape != out[idx].shape:
            raise ValueError(f"the data for index {idx} has shape {block.shape}, expected "
                             f"{out[idx].shape} for global shape {tuple(shape)}")
        out[idx] = block
    return out


def _array_from_global(value, sharding):
    from . import numpy as jnp
    aval = jnp.asarray(value).aval
    return make_array(value.astype(aval.dtype), ShapedArray(aval.shape, aval.dtype),
                      current_backend(), sharding)


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """An Array laid out by `sharding` whose shards are data_callback(index) per device."""
    value = _assemble(shape, sharding, lambda d, idx: data_callback(idx))
    return _array_from_global(value if dtype is None else value.astype(dtype), sharding)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """An Array from one array per device, in the order of sharding's devices_indices_map."""
    arrays = list(arrays)
    order = list(sharding.devices_indices_map(tuple(shape)))
    if len(arrays) != len(order):
        raise ValueError(f"make_array_from_single_device_arrays: {len(arrays)} arrays given for "
                         f"a sharding over {len(order)} devices")
    by_device = dict(zip(order, arrays))
    return _array_from_global(_assemble(shape, sharding, lambda d, idx: by_device[d]), sharding)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """With one process, the local data is the global array."""
    local = np.asarray(local_data)
    if global_shape is not None and tuple(global_shape) != local.shape:
        raise ValueError(f"global_shape {tuple(global_shape)} differs from the local data's "
                         f"shape {local.shape}, but there is a single process")
    return _array_from_global(local, sharding)


def _stacked_sharding(devices):
    mesh = sh.Mesh(np.array(list(devices), dtype=object), ("_device",))
    return sh.NamedSharding(mesh, sh.P("_device"))


def device_put_sharded(shards, devices):
    """Stack `shards` (one per device, pytrees allowed) along a new leading axis, shard i on
    devices[i]."""
    if len(shards) != len(devices):
        raise ValueError(f"device_put_sharded: {len(shards)} shards for {len(devices)} devices")
    sharding = _stacked_sharding(devices)
    return pytree.tree_map(lambda *xs: _array_from_global(np.stack([np.asarray(x) for x in xs]),
                                                          sharding), *shards)


def device_put_replicated(x, devices):
    """Copies of x (a pytree) stacked along a new leading axis, one copy per device."""
    sharding = _stacked_sharding(devices)
    return pytree.tree_map(lambda v: _array_from_global(
        np.stack([np.asarray(v)] * len(devices)), sharding), x)


__all__ += ["process_indices", "host_ids", "live_arrays", "copy_to_host_async"]
__all__ += ["make_array_from_callback", "make_array_from_single_device_arrays",
            "make_array_from_process_local_data", "device_put_sharded", "device_put_replicated"]





def print_environment_info(return_string=False):
    """refjax's installation and environment (versions, backend and devices, process count,
    platform, REFJAX_/JAX_/XLA_ variables), printed or returned, as jax.print_environment_info."""
    import os
    import platform
    import sys

    from .. import __version__
    devices_ = devices()
    info = "\n".join([
        f"refjax: {__version__}", f"backend: {current_backend().name}",
        f"numpy:  {np.__version__}", f"python: {sys.version.replace(chr(10), ' ')}",
        f"device info: {devices_[0].device_kind}-{len(devices_)}, {local_device_count()} "
        "local devices", f"process_count: {process_count()}", f"platform: {platform.uname()}",
        *[f"{k}={v}" for k, v in os.environ.items() if k.startswith(("REFJAX_", "JAX_",
                                                                      "XLA_"))]])
    if return_string:
        return info
    print(info)
    return None


__all__ += ["print_environment_info"]
