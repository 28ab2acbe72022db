"""Sharding propagation: each primitive's `sharding` rule maps its inputs' partition specs to
its outputs'. The rules ARE the specification of layouts; both backends place outputs as
they say. This module holds the pass over a jaxpr and the rule shapes families share."""
import math
import threading

from . import jaxpr as jx
from .config import config, default_device_id
from .sharding import NamedSharding, P, Sharding, SingleDeviceSharding, keep_axes
from .sharding.device_sets import is_reshard, on_devices_of
from .sharding.mesh import AxisType, Mesh, axes_of, get_current_mesh
from .sharding_names import GSPMDSharding, named_as_jax, named_as_jax_eqn
from .sharding_types import auto_mesh_of, is_typed, reject, strict
from .sharding_unreduced import sets_of

# A spec here is a tuple with one entry per dimension (None, a name, or a tuple of names).


def replicated(aval):
    return (None,) * len(aval.shape)


def elementwise(in_specs, in_avals, out_avals, **_):
    """The operands' layouts merged dimension by dimension, as JAX's partitioner merges them:
    a dimension takes the entry its sharded operands agree on (replicated where they
    disagree), and a mesh axis shards one dimension only, the one the earliest operand gives
    it (typing Explicit axes: a ShardingTypeError where they disagree, as JAX's broadcasting
    rule)."""
    if strict():
        return [_broadcast_types(in_specs, in_avals)] * len(out_avals)
    ranked = [s for s, a in zip(in_specs, in_avals) if a.shape]
    return [_merge(ranked) if ranked else ()] * len(out_avals)


def _merge(specs):
    """Specs of equal rank merged as `elementwise` says: first each dimension's agreed entry,
    then each mesh axis kept in the dimension whose entry the earliest operand gives."""
    picked = []
    for i in range(len(specs[0])):
        entries = {sp[i] for sp in specs} - {None}
        picked.append(entries.pop() if len(entries) == 1 else None)
    origin = [min((k for k, sp in enumerate(specs) if sp[i] == e), default=0)
              for i, e in enumerate(picked)]
    out, used = [None] * len(picked), set()
    for i in sorted(range(len(picked)), key=lambda i: (origin[i], i)):
        if picked[i] is not None and not used & _names(picked[i]):
            out[i] = picked[i]
            used.update(_names(picked[i]))
    return tuple(out)


def _names(entry):
    """The mesh axes of one spec entry."""
    return set(entry) if isinstance(entry, tuple) else {entry}


def typed_only(rule):
    """A rule for Explicit axes alone: Auto propagation keeps the outputs replicated (as
    for a primitive without a rule)."""
    def rule_or_replicated(in_specs, in_avals, out_avals, **params):
        if not strict():
            return [replicated(a) for a in out_avals]
        return rule(in_specs, in_avals, out_avals, **params)
    return rule_or_replicated


def replicated_outputs(in_specs, in_avals, out_avals, **_):
    """Results replicated whatever the operands' layouts (callbacks: the host computes each
    whole value; JAX types their results as the ShapeDtypeStructs given, on no mesh axis)."""
    return [replicated(a) for a in out_avals]


@typed_only
def like_operand(in_specs, in_avals, out_avals, **_):
    """The first operand's spec (rev: its elements move, its type stays)."""
    return [in_specs[0]]


def varying_shape(name):
    """slice/pad: the operand's spec, where each resized sharded dimension still divides
    by its mesh axes (else JAX's ShardingTypeError)."""
    @typed_only
    def rule(in_specs, in_avals, out_avals, **_):
        op, out = in_avals[0], out_avals[0]
        sizes = dict(op.sharding.mesh.shape_tuple)
        for d_in, d_out, e in zip(op.shape, out.shape, in_specs[0]):
            n = math.prod(sizes[a] for a in axes_of(e))
            if d_in != d_out and e is not None and d_out % n:
                raise reject(f"{name} on sharded dims where out dim ({d_out}) is not divisible "
                             f"by mesh axes ({n}) with spec ({e}) is not implemented. Got input "
                             f"type={op.str_short()} and output shape={out.shape}")
        return [in_specs[0]]
    return rule


def typed_or(typed, auto):
    """A rule that is `typed` when typing Explicit axes and `auto` in Auto propagation."""
    def rule(in_specs, in_avals, out_avals, **params):
        return (typed if strict() else auto)(in_specs, in_avals, out_avals, **params)
    return rule


def resized(keep):
    """slice/dynamic_slice in Auto propagation, as XLA lays the result out: a dimension of
    unchanged size keeps its entry, a resized one what `keep(entry, size)` leaves of it."""
    def rule(in_specs, in_avals, out_avals, **_):
        return [tuple(e if d_in == d_out else keep(e, d_out) for d_in, d_out, e in
                      zip(in_avals[0].shape, out_avals[0].shape, in_specs[0]))]
    return rule


def dividing_prefix(entry, size):
    """The longest prefix of an entry's mesh axes that still tiles `size` evenly (XLA's
    layout of a static slice: 6 rows of ('x', 'y') on a 2x4 mesh stay on 'x')."""
    axes, kept, parts = axes_of(entry), [], 1
    for a in axes:
        parts *= _RULE_MESH.stack[-1].shape[a]
        if size % parts:
            break
        kept.append(a)
    if len(kept) == len(axes):
        return entry
    return tuple(kept) if len(kept) > 1 else kept[0] if kept else None


class _RuleMesh(threading.local):
    """The meshes propagate_eqn runs rules on, innermost last (rules needing axis sizes on
    Auto axes read it); per thread, as two threads may propagate at once."""
    stack = ()


_RULE_MESH = _RuleMesh()


def jaxpr_specs(closed, in_specs):
    """Auto propagation through a control-flow primitive's jaxpr: its outputs' specs given
    its inputs', on the mesh being propagated (None for an output laid out elsewhere)."""
    mesh = _RULE_MESH.stack[-1]
    outs = propagate_jaxpr(closed, [to_sharding(s, mesh) for s in in_specs], mesh)
    outs = [_by_position(o, mesh) for o in outs]
    return [spec_of(o, a.ndim) if _on(o, mesh) else None
            for o, a in zip(outs, closed.out_avals)]


def _by_position(layout, mesh):
    """A layout on the devices of `mesh` in its shape but under other axis names or types (a
    reshard to Auto axes left the value where it is) named on `mesh`, axis by position."""
    if not isinstance(layout, NamedSharding) or layout.mesh == mesh or not _same_grid(
            layout.mesh, mesh):
        return layout
    names = dict(zip(layout.mesh.axis_names, mesh.axis_names))
    return NamedSharding(mesh, P(*(_renamed_entry(e, names) for e in layout.spec.partitions)),
                         memory_kind=layout.memory_kind)


def _same_grid(a, b):
    return isinstance(a, Mesh) and isinstance(b, Mesh) and a.axis_sizes == b.axis_sizes \
        and a._flat_devices_tuple == b._flat_devices_tuple


def merged(specs, ndim):
    """Layouts several paths give one value (a cond's branches, a loop's carry before and
    after the body) merged as XLA merges them: a dimension takes the axes the sharded ones
    agree on (replicated where one is laid out on another mesh)."""
    if any(s is None for s in specs):
        return (None,) * ndim
    return _merge(list(specs))


@typed_only
def all_alike(in_specs, in_avals, out_avals, **_):
    """concatenate: every typed operand has one sharding, the result's."""
    typed = [a.sharding for a in in_avals if is_typed(a)]
    if any(s != typed[0] for s in typed):
        raise reject("All operands should have the same sharding. Got shardings "
                     + ", ".join(map(str, typed)))
    return [tuple(typed[0].spec.partitions)]


@typed_only
def like_update(in_specs, in_avals, out_avals, **_):
    """dynamic_update_slice: the operand's type, which the update's must equal."""
    if in_specs[0] != in_specs[1]:
        raise reject("dynamic_update_slice operand sharding must be equal to update sharding, "
                     f"got operand sharding {_with_axis_types(in_avals[0], in_avals)} and "
                     f"update sharding {_with_axis_types(in_avals[1], in_avals)}.")
    return [in_specs[0]]


def _with_axis_types(aval, in_avals):
    """`float32[8@X,8]({Explicit: ('X', 'Y')})`: a type with its mesh's axis types, as JAX's
    errors print it (an untyped operand on the typed operands' mesh)."""
    mesh = next(a.sharding.mesh for a in in_avals if is_typed(a))
    by_type = {}
    for name, kind in zip(mesh.axis_names, mesh.axis_types):
        by_type.setdefault(kind, []).append(name)
    kinds = ", ".join(f"{k.name}: {tuple(names)}" for k, names in by_type.items())
    return f"{aval.str_short(short_dtypes=False)}({{{kinds}}})"


def unsharded_dim(param, message):
    """sort/top_k: the operands' common type, unsharded along the dimension `param` names
    (else JAX's ShardingTypeError, `message` formatted with `sharding`, `aval`, its `short`
    form and `dim`)."""
    @typed_only
    def rule(in_specs, in_avals, out_avals, **params):
        dim = params[param]
        typed = [a for a in in_avals if is_typed(a)]
        for a in typed:
            if a.sharding.spec.partitions[dim] is not None:
                raise reject(message.format(sharding=a.sharding, aval=a, dim=dim,
                                            short=a.str_short(short_dtypes=False)))
            if a.sharding != typed[0].sharding:
                raise reject("Arguments to sort must have equal shardings, got: "
                             + " ".join(str(t.sharding) for t in typed))
        return [tuple(typed[0].sharding.spec.partitions)] * len(out_avals)
    return rule


def _broadcast_types(in_specs, in_avals):
    ranked = [(s, a.shape) for s, a in zip(in_specs, in_avals) if a.shape]
    if not ranked:
        return ()
    return tuple(_broadcast_entry([(s[i], shape[i]) for s, shape in ranked], ranked)
                 for i in range(len(ranked[0][0])))


def _broadcast_entry(pairs, ranked):
    """One dimension's entry: the operands' common one, size-1 replicated ones aside."""
    entries = {e for e, d in pairs if not (d == 1 and e is None)}
    entries = entries or {None}
    if len(entries - {None}) > 1:
        raise reject("{name} got incompatible shardings for broadcasting: "
                     + ", ".join(str(tuple(s)) for s, _ in ranked) + ".")
    return (entries - {None} or {None}).pop()


def dedupe(entries):
    """A mesh axis may shard one dimension only: later uses are dropped."""
    seen, out = set(), []
    for e in entries:
        names = e if isinstance(e, tuple) else (e,) if e is not None else ()
        if any(n in seen for n in names):
            out.append(None)
            continue
        seen.update(names)
        out.append(e)
    return tuple(out)


# ---------------------------------------------------------------- specs <-> shardings

def spec_of(sharding, ndim):
    """The per-dimension spec tuple of a sharding (single-device: replicated)."""
    if isinstance(sharding, NamedSharding):
        parts = tuple(sharding.spec.partitions)
        return parts + (None,) * (ndim - len(parts))
    return (None,) * ndim


def to_sharding(spec, mesh, memory_kind=None, reduced=frozenset()):
    """The NamedSharding of a per-dimension spec; trailing replicated dimensions are dropped
    but on a mesh of Explicit axes, where (as in JAX) the spec is the type's, one per dim.
    `reduced`: the mesh axes the value's type says it is reduced over (a label: the value
    is replicated over them either way)."""
    entries = list(spec)
    while entries and entries[-1] is None and not mesh.are_all_axes_explicit:
        entries.pop()
    return NamedSharding(mesh, P(*entries, reduced=reduced), memory_kind=memory_kind)


def _mesh_of(shardings):
    for s in shardings:
        if isinstance(s, NamedSharding):
            return s.mesh
    return None


def propagate_eqn(prim, in_shardings, in_avals, out_avals, params, home=None, folded=False):
    """Output shardings of one primitive application (None: the default single device);
    `home`: the mesh whose devices the computation runs on, where reshards go; `folded`:
    its operands but the first are constants of the compiled program (`when_folded`)."""
    fixed = constraint_sharding(prim, params)
    if fixed is not None and params.get("auto"):
        return [_left_where_it_is(in_shardings[0], fixed.mesh, home or _mesh_of(in_shardings),
                                  out_avals[0].ndim)]
    if fixed is not None:
        return [_typed_constraint(on_devices_of(fixed, home), out_avals[0])]
    inner = prim.call_jaxpr(params)
    if inner is not None:
        return propagate_jaxpr(inner, in_shardings, home)
    mesh = _param_mesh(prim, params) or _mesh_of(in_shardings) or _result_type_mesh(params)
    if mesh is None:
        return [single_device(in_shardings)] * len(out_avals)
    specs = [spec_of(s, len(a.shape)) if _on(s, mesh) else replicated(a)
             for s, a in zip(in_shardings, in_avals)]
    outer, _RULE_MESH.stack = _RULE_MESH.stack, _RULE_MESH.stack + (mesh,)
    try:
        out_specs = [with_type(s, a) for s, a in
                     zip(_apply_rule(prim, specs, in_avals, out_avals, params, folded),
                         out_avals)]
    finally:
        _RULE_MESH.stack = outer
    kind = _memory_kind(in_shardings)
    return [_on_type_mesh(a, mesh, home) or
            _on_auto_mesh(to_sharding(s, mesh, kind, sets_of(a)[1]), a, home or mesh)
            for s, a in zip(out_specs, out_avals)]


def _on_auto_mesh(layout, aval, home):
    """A result typed on a mesh of Auto axes of the operands' shape but other axes (a cond
    whose branches reshard there) is named on that mesh, made of the computation's devices,
    as JAX names it."""
    mesh = auto_mesh_of(aval)
    if mesh is None or not isinstance(layout, NamedSharding) or mesh == \
            layout.mesh.abstract_mesh or mesh.axis_sizes != layout.mesh.axis_sizes:
        return layout
    return _by_position(layout, on_devices_of(NamedSharding(mesh, P()), home).mesh)


def _on_type_mesh(aval, mesh, home):
    """A result typed on a mesh of another shape or other axes than the operands' (a cond
    whose branches reshard there) is laid out as its type on that mesh, over the
    computation's devices (None: typed on the operands' mesh, or untyped)."""
    if not is_typed(aval) or aval.sharding.mesh.shape_tuple == mesh.abstract_mesh.shape_tuple:
        return None
    return on_devices_of(aval.sharding, home or mesh)


def propagate_eager(prim, in_shardings, in_avals, out_avals, params):
    """`propagate_eqn` for a primitive applied eagerly, its results named as JAX names them
    (a jaxpr's equations need no names: only its outputs are named, by `propagate_jaxpr`,
    which also names a call primitive's; a constraint keeps its own, as JAX's)."""
    outs = propagate_eqn(prim, in_shardings, in_avals, out_avals, params)
    if constraint_sharding(prim, params) is not None or prim.call_jaxpr(params) is not None:
        return outs
    return named_as_jax_eqn(in_shardings, in_avals, outs, out_avals)


def _layout(prim, params):
    """The Sharding or Mesh a primitive's params impose on its outputs (None: they follow
    its operands)."""
    return None if prim.layout_param is None else params[prim.layout_param]


def constraint_sharding(prim, params):
    """The sharding a constraint's output takes, whatever its operand's (None for every
    other primitive)."""
    layout = _layout(prim, params)
    return layout if isinstance(layout, Sharding) else None


def _left_where_it_is(layout, mesh, home, ndim):
    """A reshard to an (abstract) mesh of Auto axes: the value's layout, named as JAX names it
    on that mesh made of the computation's devices when it has their number (by position of
    the axes when the layout's mesh has that shape on those devices, replicated as P()),
    else by its HLO sharding (JAX's GSPMDSharding)."""
    if not isinstance(layout, NamedSharding):
        return layout
    if home is None or mesh.size != home.size:
        return GSPMDSharding.of(_untyped(layout), ndim)
    target = on_devices_of(NamedSharding(mesh, P()), home)
    if not any(layout.spec.partitions):
        return target
    if layout.mesh.axis_sizes != mesh.axis_sizes or \
            layout.mesh._flat_devices_tuple != target.mesh._flat_devices_tuple:
        return _untyped(layout)
    names = dict(zip(layout.mesh.axis_names, mesh.axis_names))
    return target.update(spec=P(*(_renamed_entry(e, names) for e in layout.spec.partitions)))


def _untyped(layout):
    """A layout JAX cannot name on the reshard's mesh (a GSPMDSharding there): the same
    layout on its mesh's devices with every axis Auto (its type has no Explicit axis)."""
    mesh = layout.mesh
    if not mesh.explicit_axes:
        return layout
    return layout.update(mesh=Mesh(mesh.devices, mesh.axis_names,
                                   axis_types=(AxisType.Auto,) * len(mesh.axis_names)))


def _renamed_entry(entry, names):
    axes = tuple(names[a] for a in axes_of(entry))
    return None if not axes else axes if isinstance(entry, tuple) else axes[0]


def _typed_constraint(fixed, aval):
    """A constraint's layout, but for the size-1 Explicit axes its type drops under
    jax_remove_size_one_mesh_axis_from_type (JAX lays the value out as typed)."""
    if not (isinstance(fixed, NamedSharding) and is_typed(aval)
            and config.read("jax_remove_size_one_mesh_axis_from_type")):
        return fixed
    spec = with_type(spec_of(fixed, aval.ndim), aval)
    return to_sharding(spec, fixed.mesh, fixed.memory_kind, sets_of(aval)[1])


def _param_mesh(prim, params):
    """The mesh a primitive's params lay its outputs out on (a constraint's NamedSharding,
    shard_map's mesh), else None."""
    layout = _layout(prim, params)
    if isinstance(layout, Sharding):
        return layout.mesh if isinstance(layout, NamedSharding) else None
    return layout


def _result_type_mesh(params):
    """The concrete mesh a result-type param (out_sharding=, a constant's zeros of a
    cotangent's type) names, else None: a value made from constants alone is laid out there."""
    given = params.get("out_sharding", params.get("sharding"))
    mesh = getattr(given, "mesh", None) if isinstance(given, NamedSharding) else None
    return mesh if isinstance(mesh, Mesh) else None


def single_device(shardings):
    """Where a computation on single-device values puts its results: the one device other
    than the default (jax_default_device) among them, with its memory kind; None (the default
    device) if there is none, or several. Backends pass None for uncommitted values, which
    follow committed ones or else go to the default device, wherever they are, as in JAX."""
    default = default_device_id()
    others = {s for s in shardings if isinstance(s, SingleDeviceSharding)
              and s._device.id != default}
    devices = {s._device for s in others}
    if len(devices) != 1:
        return None
    kinds = {s.memory_kind for s in others}
    return SingleDeviceSharding(devices.pop(), memory_kind=kinds.pop() if len(kinds) == 1
                                else None)


def _on(sharding, mesh):
    return isinstance(sharding, NamedSharding) and sharding.mesh == mesh


def _memory_kind(shardings):
    kinds = {s.memory_kind for s in shardings if isinstance(s, NamedSharding)}
    return kinds.pop() if len(kinds) == 1 else None


def _apply_rule(prim, specs, in_avals, out_avals, params, folded=False):
    rule = getattr(prim.sharding, "when_folded", prim.sharding) if folded else prim.sharding
    if rule is None:
        return [replicated(a) for a in out_avals]
    return [_strip(s, a) for s, a in zip(rule(specs, in_avals, out_avals, **params), out_avals)]


def with_type(spec, aval):
    """A propagated spec under an aval's sharding type: the type decides the Explicit axes
    (it was computed at trace time), propagation the others."""
    if not is_typed(aval) or not hasattr(aval.sharding, "spec"):
        return spec
    mesh = aval.sharding.mesh
    others = set(mesh.axis_names) - set(mesh.explicit_axes)
    return dedupe(t if t is not None else keep_axes(e, others)
                  for t, e in zip(aval.sharding.spec.partitions, spec))


def _strip(spec, aval):
    spec = tuple(spec)[:len(aval.shape)]
    return spec + (None,) * (len(aval.shape) - len(spec))


def propagate_jaxpr(closed, in_shardings, home=None):
    """Output shardings of a closed jaxpr given its inputs' shardings: equation by equation,
    as eager execution would lay them out (values may move between meshes at constraints
    and shard_maps). The computation runs on one device assignment, as in JAX: the mesh of
    its inputs or of the first constraint (or shard_map) in it, where outputs that no
    sharded value reaches are replicated; without a mesh, the single device its inputs
    and single-device constraints pick. Reshards go to the devices of `home` (an enclosing
    computation's mesh), else of that mesh (the context mesh's when only reshards name one:
    JAX refuses the computation otherwise)."""
    jaxpr = closed.jaxpr
    in_shardings = _used_only(jaxpr, in_shardings)
    home = home or _mesh_of(in_shardings) or _first_param_mesh(jaxpr, reshards=False) \
        or get_current_mesh()
    mesh = _mesh_of(in_shardings) or _first_param_mesh(jaxpr)
    if mesh is None:
        device = single_device(list(in_shardings) + list(_constraints(jaxpr)))
        return [_single_device_constraint_of(jaxpr, v) or device for v in jaxpr.outvars]
    env = dict.fromkeys(jaxpr.constvars)
    env.update((v, s if isinstance(s, NamedSharding) else None)
               for v, s in zip(jaxpr.invars, in_shardings))

    def read(v):
        return None if type(v) is jx.Literal else env[v]

    constant = set(jaxpr.constvars)  # what XLA folds: constants and what only they make
    for eqn in jaxpr.eqns:
        known = [type(v) is jx.Literal or v in constant for v in eqn.invars]
        if all(known):
            constant.update(eqn.outvars)
        outs = propagate_eqn(eqn.primitive, [read(v) for v in eqn.invars],
                             [v.aval for v in eqn.invars], [v.aval for v in eqn.outvars],
                             eqn.params, home, folded=len(known) > 1 and all(known[1:]))
        # single-device values inside a computation on a mesh count as unsharded
        env.update((v, o if isinstance(o, NamedSharding) else None)
                   for v, o in zip(eqn.outvars, outs))
        written = ref_writes.get(eqn.primitive)
        if written is not None and written(eqn.invars[0].aval, eqn.params):
            env[eqn.invars[0]] = read(eqn.invars[1])
    kind = _memory_kind(in_shardings)
    return named_as_jax(jaxpr, in_shardings, [
        _single_device_constraint_of(jaxpr, v) or _one_entry_per_dim(
            _named_off_type(read(v), v.aval, mesh), v.aval.ndim)
        or to_sharding((None,) * v.aval.ndim, mesh, kind) for v in jaxpr.outvars])


def _named_off_type(layout, aval, mesh):
    """A result typed on no mesh (of operands on two meshes of Auto axes) laid out on the
    computation's devices is named on its mesh, as JAX names what its type does not."""
    if getattr(getattr(aval.sharding, "mesh", None), "empty", False) is not True:
        return layout
    return _by_position(layout, mesh)


def _one_entry_per_dim(sharding, ndim):
    """A result on a mesh of Explicit axes is laid out as its type, one spec entry per
    dimension (as JAX's, an argument returned as it was too)."""
    if not isinstance(sharding, NamedSharding) or not sharding.mesh.are_all_axes_explicit \
            or len(sharding.spec.partitions) >= ndim:
        return sharding
    return sharding.update(spec=sharding.spec._normalized_spec_for_aval(ndim))


# Primitives writing their first operand (a reference) with their second: prim ->
# fn(ref_aval, params) saying whether the write replaces all of it, which then holds the
# written value's layout (as in JAX, where the reference's state becomes that value).
# core/primitives/state.py registers its rules.
ref_writes = {}


def _used_only(jaxpr, in_shardings):
    """The inputs' shardings, None for inputs the jaxpr does not use: JAX prunes them, so
    they decide nothing (nor are they checked against the others' devices)."""
    return [s if used else None for used, s in zip(used_inputs(jaxpr), in_shardings)]


def used_inputs(jaxpr):
    """Whether each input of a jaxpr is used (by an equation, or as an output)."""
    used = {id(v) for eqn in jaxpr.eqns for v in eqn.invars} | {id(v) for v in jaxpr.outvars}
    return [id(v) in used for v in jaxpr.invars]


def _single_device_constraint_of(jaxpr, var):
    """The SingleDeviceSharding of the constraint producing an output directly, if any."""
    for eqn in jaxpr.eqns:
        if var in eqn.outvars:
            fixed = constraint_sharding(eqn.primitive, eqn.params)
            if fixed is not None:
                return fixed if isinstance(fixed, SingleDeviceSharding) else None
            inner = eqn.primitive.call_jaxpr(eqn.params)
            if inner is not None:
                inner = inner.jaxpr
                return _single_device_constraint_of(inner,
                                                    inner.outvars[eqn.outvars.index(var)])
    return None


def _nested(eqn):
    inner = eqn.primitive.call_jaxpr(eqn.params)
    return () if inner is None else (inner.jaxpr,)


def _first_param_mesh(jaxpr, reshards=True):
    for eqn in jaxpr.eqns:
        m = _param_mesh(eqn.primitive, eqn.params)
        if isinstance(m, Mesh) and (reshards or not is_reshard(eqn.params.get("sharding"))):
            return m
        for inner in _nested(eqn):
            m = _first_param_mesh(inner, reshards)
            if m is not None:
                return m
    return None


def sets_layout(jaxpr):
    """Whether a layout-setting primitive (one with a `layout_param`) appears in the jaxpr or
    a jaxpr nested in it (without one, values on the default device give outputs on the
    default device)."""
    return any(eqn.primitive.layout_param is not None
               or any(map(sets_layout, jx.subjaxprs(eqn.params.values())))
               for eqn in jaxpr.eqns)


def may_change_layout(prim):
    """Whether a primitive's outputs may be laid out otherwise than its operands: it sets a
    layout, or it is call-like (its jaxpr may)."""
    return prim.layout_param is not None or prim.call_param is not None


def param_meshes(jaxpr):
    """The meshes the jaxpr's constraints and shard_maps name (call-like primitives'
    included), in order, without repeats."""
    seen = []
    for eqn in jaxpr.eqns:
        found = [_param_mesh(eqn.primitive, eqn.params)]
        for inner in _nested(eqn):
            found += param_meshes(inner)
        seen += [m for m in found if isinstance(m, Mesh) and m not in seen]
    return seen


def _constraints(jaxpr):
    """The shardings of every constraint in the jaxpr (call-like primitives' included)."""
    for eqn in jaxpr.eqns:
        fixed = constraint_sharding(eqn.primitive, eqn.params)
        if fixed is not None:
            yield fixed
        for inner in _nested(eqn):
            yield from _constraints(inner)


__all__ = ["propagate_eqn", "ref_writes", "propagate_eager", "propagate_jaxpr", "single_device",
           "param_meshes",
           "sets_layout", "constraint_sharding", "may_change_layout", "elementwise", "replicated",
           "dedupe", "strict", "reject", "typed_only", "like_operand", "varying_shape",
           "like_update", "unsharded_dim",
           "all_alike"]
