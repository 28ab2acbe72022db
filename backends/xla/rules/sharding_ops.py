"""jax.lax lowering of sharding_constraint: with_sharding_constraint for a mesh layout."""
from jax import lax

from ....core.primitives import sharding_ops
from ....core.sharding import AxisType, NamedSharding
from ...base import get_backend
from ._common import rule


@rule(sharding_ops.sharding_constraint_p)
def _sharding_constraint(x, *, sharding):
    """Inside jax.jit, a mesh layout constrains the partitioner; a single device is only where
    the value ends up, which the outputs' out_shardings decide."""
    if isinstance(sharding, NamedSharding):
        return lax.with_sharding_constraint(x, get_backend("xla").jax_sharding(_auto(sharding)))
    return x


def _auto(sharding):
    """The layout with the mesh's axes Auto: refjax lays values out by its propagation rules
    (passed to JAX as constraints, which JAX accepts on Auto axes only)."""
    mesh = sharding.mesh
    if mesh.are_all_axes_auto:
        return sharding
    return sharding.update(mesh=mesh.update(axis_types=(AxisType.Auto,) * len(mesh.axis_names)))
