"""jax.lax lowerings of sharding_constraint and device_put: with_sharding_constraint for a
mesh layout."""
import jax
from jax import lax

from ....core.primitives import sharding_ops
from ....core.sharding import AbstractMesh, AxisType, NamedSharding, keep_axes
from ....core.sharding.mesh import axes_of
from ....core.sharding.device_sets import is_reshard
from ...base import get_backend
from ._common import out_sharding, rule


@rule(sharding_ops.sharding_constraint_p)
def _sharding_constraint(x, *, sharding, auto=False, **_):  # **_: what JAX prints
    """Inside jax.jit, a mesh layout constrains the partitioner; a single device is only where
    the value ends up, which the outputs' out_shardings decide. A reshard to Auto axes
    (`auto`) asks the partitioner for nothing, as JAX's lowering of it."""
    if isinstance(sharding, NamedSharding) and not auto:
        if not jax.typeof(x).ndim and not _explicitly_typed(x):
            # a scalar is whole on every device; constrained, JAX's constant would get an Auto
            # mesh that operands typed on Explicit axes refuse (a cotangent's `reshard 1.0`)
            return x
        auto = _auto_part(sharding)
        if auto is not None and _explicitly_typed(x):
            # with_sharding_constraint on Auto axes of a mixed mesh (refjax's spec holds the
            # value's type beside them): JAX's own, which keeps the type
            return lax.with_sharding_constraint(x, out_sharding(auto))
        if sharding.mesh.explicit_axes and _explicitly_typed(x):
            # a value JAX typed on Explicit axes (a dot_general's out_sharding=) is resharded,
            # so that what it meets next is on the same mesh
            typed = out_sharding(sharding)
            with jax.sharding.use_abstract_mesh(typed.mesh):  # the context may be Auto
                return jax.sharding.reshard(x, typed)
        # a reshard's, an AbstractMesh's: on the computation's devices, whichever (as JAX's)
        target = out_sharding(_auto(sharding)) if is_reshard(sharding) or isinstance(
            sharding.mesh, AbstractMesh) else get_backend("xla").jax_sharding(_auto(sharding))
        return lax.with_sharding_constraint(x, target)
    return x


@rule(sharding_ops.device_put_p)
def _device_put(x, *, sharding, devices):
    return _sharding_constraint(x, sharding=sharding)


def _explicitly_typed(x):
    mesh = getattr(jax.typeof(x).sharding, "mesh", None)
    return mesh is not None and bool(mesh.explicit_axes)


def _auto_part(sharding):
    """On a mesh of Explicit and Auto axes, a spec naming Auto ones: that spec without its
    Explicit axes (None otherwise)."""
    mesh = sharding.mesh
    auto = set(mesh.axis_names) - set(mesh.explicit_axes)
    entries = sharding.spec.partitions
    if not mesh.explicit_axes or not any(set(axes_of(e)) & auto for e in entries):
        return None
    return sharding.update(spec=sharding.spec.update(
        partitions=[keep_axes(e, auto) for e in entries]))


def _auto(sharding):
    """The layout with the mesh's axes Auto: refjax lays values out by its propagation rules
    (passed to JAX as constraints, which JAX accepts on Auto axes only)."""
    mesh = sharding.mesh
    if mesh.are_all_axes_auto:
        return sharding
    # reduced/unreduced axes are types on Explicit axes (refjax's values are reduced: a
    # reduced value is laid out as a replicated one)
    spec = sharding.spec.update(unreduced=frozenset(), reduced=frozenset())
    return sharding.update(mesh=mesh.update(axis_types=(AxisType.Auto,) * len(mesh.axis_names)),
                           spec=spec)
