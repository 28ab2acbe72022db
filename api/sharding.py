"""refjax.sharding: Mesh, AbstractMesh (with AbstractDevice), ManualAxisType, NamedSharding,
PartitionSpec, SingleDeviceSharding, AxisType, the mesh contexts, reshard, and
auto_axes/explicit_axes, as jax.sharding has them."""
from ..core.primitives.sharding_ops import reshard  # noqa: F401
from ..core.sharding import (  # noqa: F401
    AbstractDevice, AbstractMesh, AxisType, Device, Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding,
    Sharding, get_abstract_mesh, get_mesh, set_mesh, use_abstract_mesh)
from ..core.avals import ManualAxisType  # noqa: F401
from .axis_types import auto_axes, explicit_axes  # noqa: F401


def make_single_device_sharding(device, *, memory_kind=None):
    """A SingleDeviceSharding on `device`."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)
