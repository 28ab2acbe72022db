"""refjax.sharding: Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding, AxisType."""
from ..core.sharding import (  # noqa: F401
    AxisType, Device, Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding, Sharding,
    get_mesh, set_mesh)


def make_single_device_sharding(device, *, memory_kind=None):
    """A SingleDeviceSharding placing arrays on `device` (jax.sharding's constructor)."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)
