"""jax.typeof: a value's type, with the sharding it carries (Explicit mesh axes)."""
from ..core.array import Array
from ..core.sharding import NamedSharding, P, get_abstract_mesh, type_spec
from ..core.primitives.parallel import axis_scope
from ..core.trace import get_aval


def typeof(x):
    """The type of x as jax.typeof gives it: shape, dtype, weak type and the sharding in the
    type (the spec's Explicit mesh axes: `float32[8@x,4]` on an Explicit mesh)."""
    aval = get_aval(x)
    if not isinstance(x, Array):
        _check_untyped_tracer(x)
        return aval.update(sharding=_replicated_type(get_abstract_mesh(), aval.ndim))
    sharding = x.sharding
    if not isinstance(sharding, NamedSharding):
        return aval.update(sharding=_replicated_type(get_abstract_mesh(), aval.ndim))
    spec = type_spec(sharding, aval.ndim)
    return aval.update(sharding=NamedSharding(sharding.mesh.abstract_mesh, spec))


def _replicated_type(mesh, ndim):
    return NamedSharding(mesh, P(*[None] * ndim))


def _check_untyped_tracer(x):
    """Traced values carry no sharding in refjax's types: under Explicit mesh axes their JAX
    type would, so refjax refuses rather than print a type without it."""
    manual = set(axis_scope()[0])  # inside shard_map its mesh axes are Manual, not Explicit
    if hasattr(x, "aval") and set(get_abstract_mesh().explicit_axes) - manual:
        raise NotImplementedError(
            "jax.typeof of a traced value under a mesh with Explicit axes: refjax does not "
            "carry shardings in traced types (sharding in types); use Auto axes")
