"""The xla rule decorator and the dtype helpers several families share."""
import functools
import math

import jax
import jax.sharding as jsh
import numpy as np
from jax import lax

from ....core import dtypes
from ...base import register_rule
from ..backend import XlaBackend, jax_spec
from ..unreduced import keeps_sets

LOW_FLOATS = (dtypes.float16, dtypes.bfloat16)


def rule(*prims):
    """Decorator: register `fn(*values, **params)` as the xla backend's lowering of prims."""
    return register_rule(XlaBackend, *prims)


def convert(x, new_dtype):
    """numpy_ref's conversion: to bool is real(x) != 0 (as JAX); complex to real
    keeps the real part; float to int truncates, saturates, NaN to 0 (as XLA does)."""
    new_dtype = np.dtype(new_dtype)
    if new_dtype == x.dtype:
        return x
    if new_dtype == np.bool_:
        x = lax.real(x) if dtypes.kind(x.dtype) == "c" else x
        return lax.ne(x, lax.full_like(x, 0))
    if dtypes.kind(x.dtype) == "c" and dtypes.kind(new_dtype) != "c":
        x = lax.real(x)
    return lax.convert_element_type(x, new_dtype)


def computed_whole(fn, x, *rest, typed=None):
    """fn(x, *rest) on x made whole over its mesh, for operations XLA's SPMD partitioner
    mishandles when split. On Auto axes the result is constrained whole too, so that what
    follows cannot move its layout back onto fn; on Explicit axes it is resharded, behind a
    barrier for the same reason, to JAX's type of it: `typed`, by default x's."""
    sharding = jax.typeof(x).sharding
    out = fn(whole(x), *rest)
    if not sharding.mesh.explicit_axes:
        return whole_on_auto_mesh(out) if on_auto_mesh(x) else out
    return jsh.reshard(lax.optimization_barrier(out), typed or sharding)


def whole(x):
    """x replicated over its mesh: a constraint on Auto axes, a reshard of its type on
    Explicit ones; as it is on no mesh."""
    mesh = jax.typeof(x).sharding.mesh
    if mesh.explicit_axes:
        return jsh.reshard(x, jsh.NamedSharding(mesh, jsh.PartitionSpec()))
    return whole_on_auto_mesh(x)


def pad(x, padding_value, padding_config):
    """lax.pad, computed whole on a mesh where it crops (negative low or high padding): on a
    split dimension XLA's SPMD partitioner aborts the process there (in JAX too:
    spmd_partitioner.cc's checks of the dilated shard's offset, of shard_count > 1)."""
    if all(lo >= 0 and hi >= 0 for lo, hi, _ in padding_config):
        return lax.pad(x, padding_value, padding_config)
    return computed_whole(lambda v: lax.pad(v, padding_value, padding_config), x)


def whole_on_auto_mesh(x):
    """x constrained replicated over its mesh of Auto axes; as it is on no mesh or typed on
    Explicit axes (whose type decides its layout)."""
    if not on_auto_mesh(x):
        return x
    whole = jsh.NamedSharding(jax.typeof(x).sharding.mesh, jsh.PartitionSpec())
    return lax.with_sharding_constraint(x, whole)


def on_mesh(*xs):
    """Whether any of these traced values is on a mesh."""
    return any(not jax.typeof(x).sharding.mesh.empty for x in xs)


def on_auto_mesh(*xs):
    """Whether a traced value is on a mesh of Auto axes alone (the partitioner lays it out)."""
    meshes = [jax.typeof(x).sharding.mesh for x in xs]
    return any(not m.empty and not m.explicit_axes for m in meshes)


def type_param(s):
    """A primitive's result-type param as JAX's out_sharding=, but None for a type of values
    on a mesh of Auto axes (nothing laid out: refjax's propagation places them), which JAX
    would hold against operands typed on another mesh in the backend's program."""
    if s is not None and s.mesh.are_all_axes_auto and not any(s.spec.partitions):
        return None
    return out_sharding(s)


def out_sharding(s):
    """A primitive's result-type param (a refjax NamedSharding on an abstract mesh) as JAX's
    out_sharding= (None stays None): JAX types the traced program on Explicit axes too."""
    if s is None:
        return None
    mesh = s.mesh
    types = _in_context(mesh, tuple(getattr(jsh.AxisType, t.name) for t in mesh.axis_types))
    # in the backend's programs on Auto axes an unreduced type is a label (JAX computes the
    # reduced value); eager operations on unreduced values run on JAX's Explicit mesh
    spec = s.spec if keeps_sets() else s.spec.update(unreduced=frozenset(), reduced=frozenset())
    return jsh.NamedSharding(_abstract_mesh(tuple(mesh.axis_sizes), tuple(mesh.axis_names),
                                            types), jax_spec(spec))


def _in_context(mesh, types):
    """The axis types of a type's mesh inside a shard_map body, whose context mesh has the
    manual axes Manual: a type staged outside the outer body of nested ones (a transpose's
    residual, cotangent) names its axis Explicit, where JAX requires the context's types."""
    context = jax.sharding.get_abstract_mesh()
    if context.axis_names != tuple(mesh.axis_names) or not context.manual_axes:
        return types
    return tuple(jsh.AxisType.Manual if n in context.manual_axes else t
                 for n, t in zip(mesh.axis_names, types))


@functools.lru_cache(maxsize=64)
def _abstract_mesh(sizes, names, types):
    """JAX's abstract mesh of that shape on its CPU devices (their kind is part of it: the
    operands' types, from jit's shardings, carry it, and JAX compares meshes whole)."""
    devices = jax.devices("cpu")[:math.prod(sizes)]
    if len(devices) < math.prod(sizes):  # (no program of it can run; its types can be made)
        return jsh.AbstractMesh(sizes, names, axis_types=types)
    return jsh.Mesh(np.array(devices).reshape(sizes), names, axis_types=types).abstract_mesh
