"""PartitionSpecs given where JAX accepts them under a mesh context (jit and pjit shardings,
with_sharding_constraint, device_put): the mesh each one resolves against, and JAX's errors
without one."""
import contextlib

from ..config import config

from .mesh import _RESOURCE_MESH, P, get_current_mesh, get_resource_mesh, use_concrete_mesh
from .shardings import NamedSharding


def context_mesh(who):
    """The mesh `who` resolves PartitionSpecs against, as JAX 0.10: pjit's is the `with mesh:`
    one (the resource environment) alone; with_sharding_constraint's is set_mesh's, else the
    `with mesh:` one; the others' is set_mesh's."""
    current, resource = get_current_mesh(), _RESOURCE_MESH.get()
    if who == "pjit":
        _check_same_size(resource, current)
        return resource
    if who == "with_sharding_constraint":
        return get_resource_mesh() if current is None else current
    return current


def _check_same_size(resource, current):
    if resource is not None and current is not None and resource.size != current.size:
        new, prev = resource.abstract_mesh, current.abstract_mesh
        raise ValueError(f"use_abstract_mesh cannot change the size of the mesh. Got new mesh: "
                         f"{new} with size={new.size} and prev mesh: {prev} with "
                         f"size={prev.size}")


def mesh_context_key():
    """What of the mesh contexts a trace may depend on (jit's cache key holds it, as JAX's)."""
    return get_current_mesh(), _RESOURCE_MESH.get()


def resolve_spec(s, who, what):
    """s itself, or for a PartitionSpec its NamedSharding on `who`'s context mesh
    (RuntimeError, as JAX's, without one)."""
    if not isinstance(s, P):
        return s
    mesh = context_mesh(who)
    if mesh is None:
        raise RuntimeError(
            f"{who} requires a non-empty mesh in context if you are passing `PartitionSpec`s "
            f"to {what}. You can define a context mesh via `jax.set_mesh(mesh)`. Alternatively,"
            f" provide `Sharding`s to {what} and then the mesh context manager is not required.")
    return NamedSharding(mesh, s)


def device_put_target(s):
    """device_put's target: a PartitionSpec needs set_mesh's mesh (ValueError, as JAX's)."""
    if not isinstance(s, P):
        return s
    mesh = get_current_mesh()
    if mesh is None:
        raise ValueError("Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to "
                         "device_put")
    return NamedSharding(mesh, s)


def placement_mesh(who):
    """The context in which `who`'s computation runs: jit's is set_mesh's mesh; pjit's is the
    `with mesh:` one alone (JAX 0.10's pjit ignores set_mesh's for placement)."""
    if who != "pjit":
        return contextlib.nullcontext()
    return use_concrete_mesh(_RESOURCE_MESH.get())


def type_spec(sharding, ndim):
    """The spec a value laid out by `sharding` has in its type (JAX's sharding in types): the
    NamedSharding's entries reduced to the mesh's Explicit axes; replicated otherwise."""
    if not isinstance(sharding, NamedSharding):
        return P(*[None] * ndim)
    explicit = typed_axes(sharding.mesh)
    spec = sharding.spec
    entries = spec._normalized_spec_for_aval(ndim).partitions
    return P(*[keep_axes(e, explicit) for e in entries], unreduced=spec.unreduced & explicit,
             reduced=spec.reduced & explicit)


def typed_axes(mesh):
    """The mesh axes sharding types name: the Explicit ones, but those of size 1 under
    jax_remove_size_one_mesh_axis_from_type (as JAX's types, not its layouts, drop them)."""
    axes = set(mesh.explicit_axes)
    if config.read("jax_remove_size_one_mesh_axis_from_type"):
        axes = {a for a in axes if mesh.shape[a] != 1}
    return axes


def keep_axes(entry, axes):
    """A spec entry reduced to the given mesh axes (None, one name, or a tuple)."""
    kept = tuple(a for a in (entry if isinstance(entry, tuple) else (entry,)) if a in axes)
    return None if not kept else kept[0] if len(kept) == 1 else kept
