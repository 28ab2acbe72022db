"""refjax.sharding: Mesh, AbstractMesh, NamedSharding, PartitionSpec, SingleDeviceSharding,
AxisType, the mesh contexts and reshard, as jax.sharding has them."""
from ..core.primitives.sharding_ops import reshard  # noqa: F401
from ..core.sharding import (  # noqa: F401
    AbstractMesh, AxisType, Device, Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding,
    Sharding, get_abstract_mesh, get_mesh, set_mesh)


def make_single_device_sharding(device, *, memory_kind=None):
    """A SingleDeviceSharding on `device`."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)
