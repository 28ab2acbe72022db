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

    outer = {a for s in (*in_specs, *out_specs) for e in s.partitions
             for a in _names(e)} - set(axis_names)
    mapped = jax.shard_map(body, mesh=_jax_mesh(backend, mesh),
                           in_specs=tuple(jax_spec(_lane_spec(s, outer)) for s in in_specs),
                           out_specs=tuple(jax_spec(_lane_spec(s, outer)) for s in out_specs),
                           axis_names=set(axis_names), check_vma=False)
    args = [_untile(x, s, outer, mesh) for x, s in zip(args, in_specs)]
    return [_tile(y, s, outer, mesh) for y, s in zip(mapped(*args), out_specs)]


# A residual's spec may name an axis an enclosing shard_map made manual (as JAX's do), which
# JAX's shard_map API refuses: it is dropped from the spec, the value tiled along it on the
# way out (every block this lane's) and its first block read on the way in, as numpy_ref's.

def _names(entry):
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def _lane_spec(spec, outer):
    if not outer:
        return spec
    entries = [tuple(a for a in _names(e) if a not in outer) for e in spec.partitions]
    return type(spec)(*[e if len(e) > 1 else e[0] if e else None for e in entries],
                      unreduced=spec.unreduced, reduced=spec.reduced)


def _untile(x, spec, outer, mesh):
    return _each_outer_dim(x, spec, outer, mesh, _first_blocks)


def _each_outer_dim(x, spec, outer, mesh, fn):
    """x after fn(x, d, names, outer, mesh) on each dimension d whose spec names outer axes."""
    for d, e in enumerate(spec.partitions):
        if outer & set(_names(e)):
            x = _unsplit(x, d, lambda x, d=d, e=e: fn(x, d, _names(e), outer, mesh))
    return x


def _first_blocks(x, d, names, outer, mesh):
    full = int(np.prod([mesh.shape[a] for a in names]))
    y = x.reshape(x.shape[:d] + tuple(mesh.shape[a] for a in names)
                  + (x.shape[d] // full,) + x.shape[d + 1:])
    y = y[(slice(None),) * d + tuple(0 if a in outer else slice(None) for a in names)]
    return y.reshape(x.shape[:d] + (-1,) + x.shape[d + 1:])


def _tile(x, spec, outer, mesh):
    return _each_outer_dim(x, spec, outer, mesh, _blocks_repeated)


def _blocks_repeated(x, d, names, outer, mesh):
    lanes = [a for a in names if a not in outer]
    blocks = x.shape[d] // int(np.prod([mesh.shape[a] for a in lanes]))
    y = x.reshape(x.shape[:d] + tuple(mesh.shape[a] for a in lanes) + (blocks,) + x.shape[d + 1:])
    full = x.shape[:d] + tuple(mesh.shape[a] for a in names) + (blocks,) + x.shape[d + 1:]
    k = len(names)
    dims = (tuple(range(d)) + tuple(d + i for i, a in enumerate(names) if a not in outer)
            + tuple(range(d + k, len(full))))
    return jax.lax.broadcast_in_dim(y, full, dims).reshape(x.shape[:d] + (-1,) + x.shape[d + 1:])


def _unsplit(x, d, fn):
    """fn(x) reshaping dimension d, which JAX refuses while an Explicit axis splits it: x is
    resharded whole along d first and the result back to x's spec."""
    spec = jax.typeof(x).sharding.spec
    if d >= len(spec.partitions) or spec.partitions[d] is None or spec.unreduced or spec.reduced:
        return fn(x)
    parts = spec.partitions
    whole = jax.sharding.PartitionSpec(*parts[:d], None, *parts[d + 1:])
    return jax.sharding.reshard(fn(jax.sharding.reshard(x, whole)), spec)


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
