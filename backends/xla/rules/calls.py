"""xla lowerings of the call-like primitives of core/transforms: jit and the custom_* calls
(their sub-jaxprs interpreted inline), stop_gradient, and shard_map as jax.shard_map."""
import jax
import numpy as np

from ....core.transforms import checkpoint, composite, custom, custom_vjp, custom_vmap
from ....core.transforms import jit as jit_mod
from ....core.transforms import jvp as jvp_mod
from ....core.transforms.linear_call import linear_call_p
from ....core.transforms import shard_map as sm
from ...base import get_backend
from ..backend import jax_spec
from ._common import rule


@rule(jit_mod.jit_p)
def _jit(*args, jaxpr, **_):
    # inline, under JAX's name for a nested jit's ops (`jit(f)/jit(inner)/cos`, opened with
    # the equation's names by the backend)
    return get_backend("xla").interpret(jaxpr, args)


@rule(checkpoint.remat_p)
def _remat(*args, jaxpr, **_):
    return get_backend("xla").interpret(jaxpr, args)


@rule(custom.custom_jvp_call_p, custom_vjp.custom_vjp_call_p)
def _custom_call(*args, call_jaxpr, **_):
    return get_backend("xla").interpret(call_jaxpr, args)


@rule(custom_vmap.custom_vmap_call_p)
def _custom_vmap_call(*args, call, **_):
    return get_backend("xla").interpret(call, args)


@rule(composite.composite_p)
def _composite(*args, jaxpr, **_):
    return get_backend("xla").interpret(jaxpr, args)


@rule(custom_vjp.custom_lin_p)
def _custom_lin(*args, **_):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


@rule(checkpoint.name_p)
def _name(x, *, name):
    return x


@rule(jvp_mod.stop_gradient_p)
def _stop_gradient(x):
    return x


@rule(sm.shard_map_p)
def _shard_map(*args, jaxpr, mesh, in_specs, out_specs, check_vma, axis_names, **_):
    """refjax checks replication itself (statically), so JAX's check is off; refjax's
    derived shard_maps (transposes, residuals) need not satisfy JAX's vma typing."""
    backend = get_backend("xla")
    consts = [np.asarray(c) for c in jaxpr.consts]

    def body(*xs):
        return tuple(backend.interpret(jaxpr, list(xs), consts))

    mapped = jax.shard_map(body, mesh=_jax_mesh(backend, mesh),
                           in_specs=tuple(map(jax_spec, in_specs)),
                           out_specs=tuple(map(jax_spec, out_specs)),
                           axis_names=set(axis_names), check_vma=False)
    return list(mapped(*args))


def _jax_mesh(backend, mesh):
    """The JAX mesh of a shard_map: inside another shard_map's body, JAX's context mesh (whose
    outer axes are Manual), which JAX requires a nested shard_map's mesh to be."""
    context = jax.sharding.get_abstract_mesh()
    if context.manual_axes and context.shape_tuple == mesh.shape_tuple:
        return context
    return backend._devmap.jax_mesh(mesh)


@rule(linear_call_p)
def _linear_call(*args, callee, **_):
    return get_backend("xla").interpret(callee, args)
