"""jax.lax lowerings of the collectives, and of shard_map as jax.shard_map over the same mesh."""
import jax
import numpy as np
from jax import lax

from ...core.primitives import parallel as par
from ...core.transforms import shard_map as sm
from ..base import get_backend, register_rule
from .backend import XlaBackend, jax_spec

rule = lambda *prims: register_rule(XlaBackend, *prims)  # noqa: E731


@rule(par.psum_p)
def _psum(x, *, axes):
    return lax.psum(x, axes)


@rule(par.pmax_p)
def _pmax(x, *, axes):
    return lax.pmax(x, axes)


@rule(par.pmin_p)
def _pmin(x, *, axes):
    return lax.pmin(x, axes)


@rule(par.all_gather_p)
def _all_gather(x, *, axis_name, axis, tiled, axis_size):
    return lax.all_gather(x, axis_name, axis=axis, tiled=tiled)


@rule(par.psum_scatter_p)
def _psum_scatter(x, *, axis_name, scatter_dimension, tiled, axis_size):
    return lax.psum_scatter(x, axis_name, scatter_dimension=scatter_dimension, tiled=tiled)


@rule(par.ppermute_p)
def _ppermute(x, *, axis_name, perm):
    return lax.ppermute(x, axis_name, perm)


@rule(par.all_to_all_p)
def _all_to_all(x, *, axis_name, split_axis, concat_axis, tiled, axis_size):
    return lax.all_to_all(x, axis_name, split_axis, concat_axis, tiled=tiled)


@rule(par.axis_index_p)
def _axis_index(*, axis_name):
    return lax.axis_index(axis_name)


@rule(par.pvary_p)
def _pvary(x, *, axes):
    return x  # shard_map is lowered with check_vma=False: varying-ness needs no marking


@rule(sm.shard_map_p)
def _shard_map(*args, jaxpr, mesh, in_specs, out_specs, check_vma, axis_names):
    """refjax checks replication itself (statically), so JAX's check is off; refjax's
    derived shard_maps (transposes, residuals) need not satisfy JAX's vma typing."""
    backend = get_backend("xla")
    consts = [np.asarray(c) for c in jaxpr.consts]

    def body(*xs):
        return tuple(backend.interpret(jaxpr, list(xs), consts))

    mapped = jax.shard_map(body, mesh=backend._devmap.jax_mesh(mesh),
                           in_specs=tuple(map(jax_spec, in_specs)),
                           out_specs=tuple(map(jax_spec, out_specs)),
                           axis_names=set(axis_names), check_vma=False)
    return list(mapped(*args))
