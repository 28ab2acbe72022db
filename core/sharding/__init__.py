"""Sharding types mirroring ``jax.sharding``: devices, partition specs and meshes (mesh.py),
and the shardings that lay arrays out over them (shardings.py)."""
from .mesh import (DEFAULT_MEMORY_KIND, MEMORY_KINDS, UNCONSTRAINED, AxisType, Device, Mesh, P,
                   PartitionSpec, get_current_mesh, get_mesh, get_resource_mesh, make_cpu_devices,
                   make_mesh, set_mesh)
from .abstract_mesh import AbstractDevice, AbstractMesh, get_abstract_mesh, use_abstract_mesh
from .context import (context_mesh, device_put_target, mesh_context_key, placement_mesh,
                      resolve_spec, type_spec, keep_axes)
from .shardings import (DuplicateSpecError, IndivisibleError, NamedSharding, Sharding,
                        SingleDeviceSharding, replica_groups, shard_indices)

__all__ = [
    "AxisType", "Device", "DuplicateSpecError", "IndivisibleError", "Mesh",
    "MEMORY_KINDS", "DEFAULT_MEMORY_KIND", "NamedSharding", "P", "PartitionSpec", "Sharding",
    "SingleDeviceSharding", "UNCONSTRAINED", "get_current_mesh", "get_mesh",
    "make_cpu_devices", "make_mesh", "replica_groups", "set_mesh", "shard_indices",
    "AbstractDevice", "AbstractMesh", "get_abstract_mesh", "use_abstract_mesh", "get_resource_mesh", "context_mesh",
    "device_put_target", "mesh_context_key", "placement_mesh", "resolve_spec", "type_spec", "keep_axes",
]
