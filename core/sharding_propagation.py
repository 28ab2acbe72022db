"""Sharding propagation: a rule per primitive maps input partition specs to output specs.
These rules ARE the specification of layouts; both backends place outputs as they say."""
from . import jaxpr as jx
from .primitives import elementwise as ew
from .primitives import structural as st
from .sharding import NamedSharding, P, SingleDeviceSharding

# prim -> rule(in_specs, in_avals, out_avals, **params) -> [spec per output]
# A spec here is a tuple with one entry per dimension (None, a name, or a tuple of names).
sharding_rules = {}


def replicated(aval):
    return (None,) * len(aval.shape)


def _elementwise(in_specs, in_avals, out_avals, **_):
    """Consensus of the sharded operands (replicated ones fit any layout); operands that
    disagree give a replicated result."""
    specs = {s for s, a in zip(in_specs, in_avals) if a.shape and any(e is not None for e in s)}
    if len(specs) == 1:
        return [specs.pop()] * len(out_avals)
    return [replicated(a) for a in out_avals]


def _broadcast_in_dim(in_specs, in_avals, out_avals, *, shape, broadcast_dimensions, **_):
    out = [None] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        if in_avals[0].shape[i] == shape[d]:
            out[d] = in_specs[0][i]
    return [tuple(out)]


def _reshape(in_specs, in_avals, out_avals, *, new_sizes, **_):
    """Dimensions that survive unsplit and unmerged (same size at the same prefix) keep
    their entry; every other dimension is replicated."""
    old, spec = in_avals[0].shape, in_specs[0]
    out, i, j, po, pn = [None] * len(new_sizes), 0, 0, 1, 1
    while i < len(old) and j < len(new_sizes):
        if po == pn and old[i] == new_sizes[j]:
            out[j] = spec[i]
            po, pn, i, j = po * old[i], pn * new_sizes[j], i + 1, j + 1
        elif po * old[i] <= pn * new_sizes[j]:
            po, i = po * old[i], i + 1
        else:
            pn, j = pn * new_sizes[j], j + 1
    return [tuple(out)]


def _squeeze(in_specs, in_avals, out_avals, *, dimensions):
    return [tuple(e for i, e in enumerate(in_specs[0]) if i not in dimensions)]


def _transpose(in_specs, in_avals, out_avals, *, permutation):
    return [tuple(in_specs[0][p] for p in permutation)]


def _reduction(in_specs, in_avals, out_avals, *, axes, **_):
    return [tuple(e for i, e in enumerate(in_specs[0]) if i not in axes)]


def _dot_general(in_specs, in_avals, out_avals, *, dimension_numbers, **_):
    (lc, rc), (lb, rb) = dimension_numbers
    ls, rs = in_specs
    lfree = [i for i in range(len(ls)) if i not in lc and i not in lb]
    rfree = [i for i in range(len(rs)) if i not in rc and i not in rb]
    out = [ls[i] if ls[i] == rs[j] or rs[j] is None else None for i, j in zip(lb, rb)]
    out += [ls[i] for i in lfree] + [rs[i] for i in rfree]
    return [_dedupe(out)]


def _dedupe(entries):
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


def _register():
    for prim in _ELEMENTWISE_PRIMS():
        sharding_rules[prim] = _elementwise
    sharding_rules[st.broadcast_in_dim_p] = _broadcast_in_dim
    sharding_rules[st.reshape_p] = _reshape
    sharding_rules[st.squeeze_p] = _squeeze
    sharding_rules[st.transpose_p] = _transpose
    sharding_rules[st.copy_p] = _elementwise


def _ELEMENTWISE_PRIMS():
    from .primitive import Primitive
    from .transforms.jvp import stop_gradient_p
    return [p for p in vars(ew).values() if isinstance(p, Primitive)] + [stop_gradient_p]


def register_optional(module_name, names_to_rules):
    """Rules for families defined in modules that may be written later (reductions, linalg)."""
    import importlib
    try:
        mod = importlib.import_module(f".primitives.{module_name}", __package__)
    except ModuleNotFoundError:
        return
    for name, rule in names_to_rules.items():
        prim = getattr(mod, name, None)
        if prim is not None:
            sharding_rules[prim] = rule


_register()
register_optional("reductions", {f"{n}_p": _reduction for n in (
    "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or",
    "argmax", "argmin")})
register_optional("linalg", {"dot_general_p": _dot_general})


# ---------------------------------------------------------------- specs <-> shardings

def spec_of(sharding, ndim):
    """The per-dimension spec tuple of a sharding (single-device: replicated)."""
    if isinstance(sharding, NamedSharding):
        parts = tuple(sharding.spec)
        return parts + (None,) * (ndim - len(parts))
    return (None,) * ndim


def to_sharding(spec, mesh, memory_kind=None):
    entries = list(spec)
    while entries and entries[-1] is None:
        entries.pop()
    return NamedSharding(mesh, P(*entries), memory_kind=memory_kind)


def _mesh_of(shardings):
    for s in shardings:
        if isinstance(s, NamedSharding):
            return s.mesh
    return None


def propagate_eqn(prim, in_shardings, in_avals, out_avals, params):
    """Output shardings of one primitive application (None: the default single device)."""
    if prim.name == "sharding_constraint":
        return [params["sharding"]]
    inner = call_jaxpr(prim, params)
    if inner is not None:
        return propagate_jaxpr(inner, in_shardings)
    mesh = _param_mesh(prim, params) or _mesh_of(in_shardings)
    if mesh is None:
        return [single_device(in_shardings)] * len(out_avals)
    specs = [spec_of(s, len(a.shape)) if _on(s, mesh) else replicated(a)
             for s, a in zip(in_shardings, in_avals)]
    out_specs = _apply_rule(prim, specs, in_avals, out_avals, params)
    kind = _memory_kind(in_shardings)
    return [to_sharding(s, mesh, kind) for s in out_specs]


# Call-like primitives: their outputs are laid out as their inner jaxpr's are.
_CALL_JAXPR_PARAM = {"jit": "jaxpr", "custom_jvp_call": "call_jaxpr",
                     "custom_vjp_call": "call_jaxpr"}


def call_jaxpr(prim, params):
    """The ClosedJaxpr a call-like primitive runs (jit, custom_jvp/vjp calls), else None."""
    name = _CALL_JAXPR_PARAM.get(prim.name)
    return None if name is None else params[name]


def _param_mesh(prim, params):
    """The mesh a primitive's params name: a constraint's NamedSharding or shard_map's mesh
    (whose outputs are laid out on it whatever the operands' layout)."""
    if prim.name == "sharding_constraint":
        s = params["sharding"]
        return s.mesh if isinstance(s, NamedSharding) else None
    return params.get("mesh") if prim.name == "shard_map" else None


# The backends' default device: their device 0, as JAX's.
DEFAULT_DEVICE_ID = 0


def single_device(shardings):
    """Where a computation on single-device values puts its results: the one device other
    than the default among them (JAX's uncommitted arrays follow a committed one), with its
    memory kind; None (the default device) if there is none, or several."""
    others = {s for s in shardings if isinstance(s, SingleDeviceSharding)
              and s._device.id != DEFAULT_DEVICE_ID}
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


def _apply_rule(prim, specs, in_avals, out_avals, params):
    rule = sharding_rules.get(prim)
    if rule is None:
        return [replicated(a) for a in out_avals]
    return [_strip(s, a) for s, a in zip(rule(specs, in_avals, out_avals, **params), out_avals)]


def _strip(spec, aval):
    spec = tuple(spec)[:len(aval.shape)]
    return spec + (None,) * (len(aval.shape) - len(spec))


def propagate_jaxpr(closed, in_shardings):
    """Output shardings of a closed jaxpr given its inputs' shardings: equation by equation,
    as eager execution would lay them out (values may move between meshes at constraints
    and shard_maps). The computation runs on one device assignment, as in JAX: the mesh of
    its inputs or of the first constraint (or shard_map) in it, where outputs that no
    sharded value reaches are replicated; without a mesh, the single device its inputs
    and single-device constraints pick."""
    jaxpr = closed.jaxpr
    mesh = _mesh_of(in_shardings) or _first_param_mesh(jaxpr)
    if mesh is None:
        device = single_device(list(in_shardings) + list(_constraints(jaxpr)))
        return [_single_device_constraint_of(jaxpr, v) or device for v in jaxpr.outvars]
    env = dict.fromkeys(jaxpr.constvars)
    env.update((v, s if isinstance(s, NamedSharding) else None)
               for v, s in zip(jaxpr.invars, in_shardings))

    def read(v):
        return None if type(v) is jx.Literal else env[v]

    for eqn in jaxpr.eqns:
        outs = propagate_eqn(eqn.primitive, [read(v) for v in eqn.invars],
                             [v.aval for v in eqn.invars], [v.aval for v in eqn.outvars],
                             eqn.params)
        # single-device values inside a computation on a mesh count as unsharded
        env.update((v, o if isinstance(o, NamedSharding) else None)
                   for v, o in zip(eqn.outvars, outs))
    kind = _memory_kind(in_shardings)
    return [_single_device_constraint_of(jaxpr, v) or read(v)
            or NamedSharding(mesh, P(), memory_kind=kind) for v in jaxpr.outvars]


def _single_device_constraint_of(jaxpr, var):
    """The SingleDeviceSharding of the constraint producing an output directly, if any."""
    for eqn in jaxpr.eqns:
        if var in eqn.outvars:
            if eqn.primitive.name == "sharding_constraint":
                s = eqn.params["sharding"]
                return s if isinstance(s, SingleDeviceSharding) else None
            inner = call_jaxpr(eqn.primitive, eqn.params)
            if inner is not None:
                inner = inner.jaxpr
                return _single_device_constraint_of(inner,
                                                    inner.outvars[eqn.outvars.index(var)])
    return None


def _nested(eqn):
    inner = call_jaxpr(eqn.primitive, eqn.params)
    return () if inner is None else (inner.jaxpr,)


def _first_param_mesh(jaxpr):
    for eqn in jaxpr.eqns:
        m = _param_mesh(eqn.primitive, eqn.params)
        if m is not None:
            return m
        for inner in _nested(eqn):
            m = _first_param_mesh(inner)
            if m is not None:
                return m
    return None


# Primitives whose outputs' layout is set by their params, not by their inputs.
LAYOUT_PRIMS = frozenset({"sharding_constraint", "shard_map"})


def sets_layout(jaxpr):
    """Whether a layout-setting primitive appears in the jaxpr or a jaxpr nested in it
    (without one, values on the default device give outputs on the default device)."""
    return any(eqn.primitive.name in LAYOUT_PRIMS
               or any(map(sets_layout, jx.subjaxprs(eqn.params.values())))
               for eqn in jaxpr.eqns)


def param_meshes(jaxpr):
    """The meshes the jaxpr's constraints and shard_maps name (call-like primitives'
    included), in order, without repeats."""
    seen = []
    for eqn in jaxpr.eqns:
        found = [_param_mesh(eqn.primitive, eqn.params)]
        for inner in _nested(eqn):
            found += param_meshes(inner)
        seen += [m for m in found if m is not None and m not in seen]
    return seen


def _constraints(jaxpr):
    """The shardings of every constraint in the jaxpr (call-like primitives' included)."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "sharding_constraint":
            yield eqn.params["sharding"]
        for inner in _nested(eqn):
            yield from _constraints(inner)


__all__ = ["propagate_eqn", "propagate_jaxpr", "sharding_rules", "single_device", "call_jaxpr",
           "param_meshes", "DEFAULT_DEVICE_ID", "LAYOUT_PRIMS", "sets_layout"]
