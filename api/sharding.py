"""refjax.sharding: Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding, AxisType."""
from ..core.sharding import (  # noqa: F401
    AxisType, Device, Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding, Sharding,
    get_mesh, set_mesh)
