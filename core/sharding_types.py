"""Sharding in types: on Explicit mesh axes an aval carries its layout, typed at trace time by
each primitive's `sharding` rule (the rule Auto propagation runs after staging)."""
import contextlib
import math
import threading
import types

from .array import Array
from .errors import ShardingTypeError
from .sharding import NamedSharding, P, get_abstract_mesh, keep_axes, resolve_spec, type_spec
from .dtypes import is_python_scalar
from .sharding.abstract_mesh import EMPTY_ABSTRACT_MESH, AbstractMesh
from .sharding.mesh import get_current_mesh
from .sharding.context import typed_axes
from .sharding.mesh import axes_of
from .sharding_unreduced import out_sets_each, sets_of, swapped_sets
from .trace import get_aval


class UnknownSharding:
    """The type of a value on Explicit axes that a primitive without a sharding rule made
    from sharded operands: refjax does not know JAX's type for it (it prints without one;
    jax.typeof refuses it rather than guess)."""

    __slots__ = ("mesh",)

    def __init__(self, mesh):
        self.mesh = mesh

    def __eq__(self, other):
        return isinstance(other, UnknownSharding) and other.mesh == self.mesh

    def __hash__(self):
        return hash(("unknown", self.mesh))

    def __repr__(self):
        return f"UnknownSharding({self.mesh})"


# ---------------------------------------------------------------- typing mode for the rules

class _Mode(threading.local):
    prim = None  # the primitive being typed (None: Auto propagation, rules fall back)
    off = False  # inside machinery over a shard_map's global values (its axes are Manual)


_MODE = _Mode()


@contextlib.contextmanager
def typing(prim):
    """Run sharding rules as types: their conflicts raise ShardingTypeError (naming `prim`)."""
    prev, _MODE.prim = _MODE.prim, prim
    try:
        yield
    finally:
        _MODE.prim = prev


@contextlib.contextmanager
def untyped(off=True):
    """Values made in the block get no sharding types: shard_map's own splitting and
    assembling of global values, whose mesh axes are Manual inside it (off=False: typed
    again, for the unreduced results assembled there)."""
    prev, _MODE.off = _MODE.off, off
    try:
        yield
    finally:
        _MODE.off = prev


def strict():
    """Whether the sharding rule running is typing Explicit axes (not propagating Auto ones)."""
    return _MODE.prim is not None


def reject(message):
    """A sharding rule's refusal of a program on Explicit axes, naming the primitive."""
    # (not str.format: messages print types and sets, whose braces would be read as fields)
    return ShardingTypeError(message.replace("{name}", str(_MODE.prim)))


# ---------------------------------------------------------------- typed avals

def is_typed(aval):
    """Whether an aval carries a sharding type on a mesh with Explicit axes."""
    s = aval.sharding
    return s is not None and bool(s.mesh.explicit_axes)


def auto_mesh_of(aval):
    """The mesh of Auto axes an aval is typed on (JAX's Auto avals carry their mesh, spec all
    None), or None: untyped, or typed on Explicit axes."""
    s = aval.sharding
    if not isinstance(s, NamedSharding) or s.mesh.empty or not s.mesh.are_all_axes_auto:
        return None
    return s.mesh


def auto_typed(aval, mesh):
    """aval typed on the Auto mesh `mesh`: every dimension None, as JAX's Auto types."""
    return aval.update(sharding=NamedSharding(mesh, P(*[None] * aval.ndim)))


def typed(aval, mesh, spec):
    """aval typed as laid out by `spec` (per-dimension entries) on `mesh`, kept to the
    mesh's Explicit axes."""
    explicit = typed_axes(mesh)
    entries = [keep_axes(e, explicit) for e in tuple(spec)[:aval.ndim]]
    entries += [None] * (aval.ndim - len(entries))
    sharding = NamedSharding(mesh.abstract_mesh, P(*entries))
    _check_divisible(sharding, aval.shape)
    return aval.update(sharding=sharding)


def _check_divisible(sharding, shape):
    """A type's mesh axes must tile its dimensions evenly (JAX's ValueError when a type is
    made, whichever operation made it)."""
    for dim, (entry, size) in enumerate(zip(sharding.spec.partitions, shape)):
        axes = axes_of(entry)
        parts = math.prod(sharding.mesh.shape[a] for a in axes)
        if size % parts:
            raise ValueError(
                f"Sharding spec {axes} implies that array axis {dim} is partitioned {parts} "
                f"times, but does not evenly divide the dimension size {size}. Got shape: "
                f"{tuple(shape)} and sharding {sharding}")


def typed_aval(x):
    """The aval of x with its sharding type: a concrete Array laid out on a mesh with
    Explicit axes is typed by its layout; tracers carry theirs."""
    aval = get_aval(x)
    if is_python_scalar(x) and not get_abstract_mesh().empty:
        return aval.update(sharding=_NO_MESH_SCALAR)  # as JAX's: on no mesh, not the context's
    if type(x) is not Array or aval.sharding is not None:
        return aval
    sharding = x.sharding
    if not isinstance(sharding, NamedSharding) and not get_abstract_mesh().empty:
        # as JAX's: on one device, on no mesh (not the context's, which its results take)
        return aval.update(sharding=NamedSharding(EMPTY_ABSTRACT_MESH, P(*[None] * aval.ndim)))
    if not isinstance(sharding, NamedSharding) or sharding.mesh.empty:
        return aval
    return layout_type(aval, sharding)  # on Auto axes too: the mesh, spec all None


_NO_MESH_SCALAR = NamedSharding(EMPTY_ABSTRACT_MESH, P())


def layout_type(aval, sharding):
    """aval typed as laid out by a NamedSharding: its spec reduced to the Explicit axes, on
    the abstract mesh."""
    return aval.update(sharding=NamedSharding(sharding.mesh.abstract_mesh,
                                              type_spec(sharding, aval.ndim)))


def spec_of(aval):
    """The per-dimension entries of an aval's type (replicated when untyped)."""
    spec = getattr(aval.sharding, "spec", None)
    return (None,) * aval.ndim if spec is None else tuple(spec.partitions)


def type_outputs(prim, in_avals, out_avals, params):
    """The primitive's output avals with their sharding types, computed from its operands'
    by its sharding rule; out_avals unchanged when no operand is typed."""
    if _MODE.off:
        return out_avals
    if _constrains(prim, params):
        if params.get("auto"):  # a reshard to Auto axes: typed on that mesh, as JAX's
            return [auto_typed(a, params[prim.layout_param].mesh) for a in out_avals]
        return [type_constraint(a, params[prim.layout_param]) for a in out_avals]
    typed_in = [a for a in in_avals if is_typed(a)]
    given = _given_type(params)
    if prim.call_param is not None:
        return out_avals  # call-like primitives' avals come typed from jaxprs
    if not (typed_in or given):
        return _auto_outputs(prim, in_avals, out_avals)
    mesh = typed_in[0].sharding.mesh if typed_in else given.mesh.abstract_mesh
    if getattr(prim.sharding, "types_from_jaxprs", False):
        # cond's and loops' results keep the types (and meshes) their jaxprs give them; one
        # a jaxpr left untyped (a shard_map's P() result) is replicated, as JAX's join types it
        return [a if _meshed(a) else typed(a, mesh, spec_of(a)) for a in out_avals]
    meshed = [a for a in in_avals if _meshed(a)]
    _check_one_mesh(prim, meshed, meshed[0].sharding.mesh if meshed else mesh)
    if any(isinstance(a.sharding, UnknownSharding) for a in typed_in):
        return [a.update(sharding=UnknownSharding(mesh)) for a in out_avals]
    sets = out_sets_each(prim, in_avals, out_avals, params, given)  # JAX checks these first
    specs = _out_specs(prim, [spec_of(a) for a in in_avals], in_avals, out_avals, params)
    if specs is None:
        return [a.update(sharding=UnknownSharding(mesh)) for a in out_avals]
    for a, s in zip(out_avals, specs):
        _check_legal(prim, in_avals, a, s)
    return [_with_sets(typed(a, mesh, s), *ur) for a, s, ur in zip(out_avals, specs, sets)]


def _meshed(aval):
    return is_typed(aval) or auto_mesh_of(aval) is not None


def _auto_outputs(prim, in_avals, out_avals):
    """Results of operands on a mesh of Auto axes are typed on it, as JAX's (its abstract
    eval's common mesh; none for operands on different such meshes); the jaxprs of cond and
    loops type theirs."""
    meshed = [a for a in in_avals if auto_mesh_of(a) is not None]
    if not meshed or getattr(prim.sharding, "types_from_jaxprs", False):
        return out_avals
    mesh = meshed[0].sharding.mesh
    if any(a.sharding.mesh != mesh for a in meshed):  # on two meshes of Auto axes: none
        return [auto_typed(a, EMPTY_ABSTRACT_MESH) if a.sharding is None else a
                for a in out_avals]
    return [auto_typed(a, mesh) if a.sharding is None else a for a in out_avals]


def _with_sets(aval, unreduced, reduced):
    if not (unreduced or reduced):
        return aval
    spec = aval.sharding.spec.update(unreduced=unreduced, reduced=reduced)
    return aval.update(sharding=aval.sharding.update(spec=spec))


def _check_legal(prim, in_avals, out_aval, spec):
    """A result may use each mesh axis once (JAX's error names the operation and types)."""
    axes = [a for e in spec for a in axes_of(e)]
    if len(axes) != len(set(axes)):
        shown = out_aval.update(sharding=types.SimpleNamespace(spec=P(*spec)))
        raise ShardingTypeError(
            f"{prim.name} operation with inputs: "
            f"{', '.join(a.str_short() for a in in_avals)} produces an illegally sharded "
            f"result: {shown.str_short()}")


def _given_type(params):
    """The result type a primitive's out_sharding/sharding param names (None if none)."""
    given = params.get("out_sharding", params.get("sharding"))
    return given if isinstance(given, NamedSharding) else None


def _constrains(prim, params):
    return prim.layout_param is not None and hasattr(params[prim.layout_param], "spec")


def _out_specs(prim, specs, in_avals, out_avals, params):
    """The rule's output specs (None: no rule, and an operand is sharded)."""
    if prim.sharding is None:
        sharded = any(e is not None for s in specs for e in s)
        return None if sharded else [(None,) * a.ndim for a in out_avals]
    with typing(prim.name):
        return list(prim.sharding(specs, in_avals, out_avals, **params))


def _check_one_mesh(prim, avals, mesh):
    """JAX's ValueError (its abstract eval's, before any sharding rule) for operands typed on
    different meshes."""
    for a in avals:
        if a.sharding.mesh != mesh:
            raise ValueError(
                f"Mesh for all inputs should be equal. Got one mesh: {mesh} and another "
                f"mesh: {a.sharding.mesh}")


def type_constraint(aval, sharding):
    """The type of a value laid out as `sharding` (reshard's, a constraint's result)."""
    if not isinstance(sharding, NamedSharding) or not sharding.mesh.explicit_axes:
        return aval.update(sharding=None)
    return layout_type(aval, sharding)


def drop_dim(aval, dim):
    """The type of aval without dimension `dim` (a vmapped value seen inside the map)."""
    if not hasattr(aval.sharding, "spec") or isinstance(aval.sharding, UnknownSharding):
        return aval.sharding
    entries = list(spec_of(aval))
    del entries[dim]
    return NamedSharding(aval.sharding.mesh, aval.sharding.spec.update(partitions=entries))


def vmapped_mesh_axes(values, dims, spmd_axis_name=None):
    """The Explicit mesh axes vmap's mapped dimension is sharded over (None: unsharded),
    checked as JAX checks them: mapped inputs sharded alike along it, unmapped ones not
    sharded over those axes, and spmd_axis_name, if given, naming the same axes."""
    entries = [_entry(x, d) for x, d in zip(values, dims) if d is not None]
    for first, other in zip(entries, entries[1:]):
        if other != first:
            raise ValueError("Mapped away dimension of inputs passed to vmap should be sharded "
                             f"the same. Got inconsistent axis specs: {first} vs {other}")
    axes = axes_of(entries[0]) if entries else ()
    for x, d in zip(values, dims):
        if d is None and axes:
            _check_unmapped(x, axes)
    return _with_spmd_axis_name(axes, spmd_axis_name) or None


def _entry(x, dim):
    try:
        return spec_of(typed_aval(x))[dim]
    except (TypeError, IndexError):  # not an array (vmap's own errors name it)
        return None


def _check_unmapped(x, axes):
    try:
        aval = typed_aval(x)
    except TypeError:
        return
    used = {a for e in spec_of(aval) for a in axes_of(e)}
    if used & set(axes):
        raise ValueError(
            "Unmapped values passed to vmap cannot be sharded along the mesh axis you are "
            f"vmapping over. Got type: {aval.str_short()}, in_axes: None and vmapped mesh "
            f"axis: {axes}")


def _with_spmd_axis_name(axes, spmd_axis_name):
    names = spmd_axis_name if isinstance(spmd_axis_name, tuple) else (spmd_axis_name,)
    if spmd_axis_name is not None and axes and names != axes:
        raise ValueError("Only one of spmd_axis_name or arrays sharded on `Explicit` mesh axis "
                         f"type is allowed. Got spmd_axis_name={names} and arrays sharded on "
                         f"explicit_mesh_axis={axes}")
    return axes


def insert_reduced_reshard(x, y):
    """JAX's lax binary functions on a mesh whose axes are all Explicit: a scalar operand
    replicated over the axes the other is reduced over is resharded to reduced over them (so
    that the operation's reduced rule holds, and its transpose meets a reduced value)."""
    mesh = get_abstract_mesh()
    if mesh.empty or not mesh.are_all_axes_explicit or _in_manual_body():
        return x, y
    avals = [typed_aval(v) for v in (x, y)]
    reduced = frozenset().union(*(getattr(a.sharding, "spec", P()).reduced for a in avals))
    if not reduced:
        return x, y
    return tuple(_reduced_scalar(v, a, reduced) for v, a in zip((x, y), avals))


def _in_manual_body():
    from .primitives.axis_env import vma_checked  # the primitives build on this module
    return vma_checked() is not None


def _reduced_scalar(x, aval, reduced):
    spec = spec_of(aval) if aval.sharding is not None else ()
    used = {a for e in spec for a in axes_of(e)} | set().union(*sets_of(aval))
    if aval.ndim or used & reduced:
        return x
    from .primitives.sharding_ops import reshard  # the primitives build on this module
    return reshard(x, NamedSharding(get_current_mesh(), P(reduced=reduced)))


def cotangent_sharding(aval):
    """The sharding type a cotangent of a value of type `aval` has (JAX's: a function of the
    primal's type, with its reduced and unreduced sets swapped; on a mesh of Auto axes that
    mesh, as JAX's transposes name it), None when `aval` is untyped."""
    s = aval.sharding
    if not _meshed(aval) or not isinstance(s, NamedSharding):
        return None
    return swapped_sets(s)


def concrete_sharding(s):
    """A NamedSharding on a concrete mesh: one on an abstract mesh (a type's) placed on the
    context mesh's devices, None when the context has no such mesh."""
    if not isinstance(s.mesh, AbstractMesh):
        return s
    mesh = get_current_mesh()
    if mesh is None or mesh.abstract_mesh != s.mesh:
        return None
    return NamedSharding(mesh, s.spec)


def out_type(out_sharding, who):
    """The NamedSharding a lax function's `out_sharding=` gives its primitive's result type
    (a PartitionSpec names axes of the context mesh), or None where it names no Explicit
    axes (then the function constrains its result's layout instead)."""
    if out_sharding is None:
        return None
    s = resolve_spec(out_sharding, who, "out_sharding")
    if _auto_type(s):
        return s  # a type of Auto avals (a transpose's cotangent's): JAX's param, as given
    if not isinstance(s, NamedSharding) or not s.mesh.explicit_axes:
        return None
    return s


def _auto_type(s):
    """Whether `s` is the sharding type of values on a mesh of Auto axes (an abstract mesh,
    nothing laid out), rather than a layout asked for."""
    return isinstance(s, NamedSharding) and isinstance(s.mesh, AbstractMesh) and \
        not s.mesh.empty and s.mesh.are_all_axes_auto and not any(s.spec.partitions)


def param_spec(sharding, ndim):
    """The per-dimension entries a primitive's out_sharding param gives its result."""
    return tuple(sharding.spec._normalized_spec_for_aval(ndim).partitions)


def insert_dim(sharding, dim):
    """A result-type param (or None) with a replicated dimension inserted (vmap's)."""
    if sharding is None:
        return None
    entries = list(sharding.spec.partitions)
    entries += [None] * (dim - len(entries))
    entries.insert(dim, None)
    return sharding.update(spec=P(*entries))


__all__ = ["vmapped_mesh_axes", "cotangent_sharding", "concrete_sharding",
           "layout_type", "untyped", "out_type", "param_spec", "insert_dim", "UnknownSharding", "typing", "strict",
           "reject", "is_typed", "typed", "typed_aval", "spec_of", "type_outputs",
           "type_constraint", "drop_dim"]
