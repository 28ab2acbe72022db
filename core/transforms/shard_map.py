"""shard_map (nested vmap over mesh axes, staged as the `shard_map` primitive), smap and pmap."""
import functools
import math

from .. import dtypes, pytree, runtime
from ..avals import ShapedArray
from ..jaxpr import (ClosedJaxpr, bind_eqn, eval_jaxpr, jaxpr_as_fun,
                     literal_array, subjaxprs)
from ..primitive import make_primitive
from ..primitives import elementwise as ew
from ..primitives import parallel as par
from ..primitives import structural as st
from ..primitives.parallel_vma import vary_unreduced_cast_p
from ..sharding import UNCONSTRAINED, Mesh, P, get_abstract_mesh, get_current_mesh
from ..sharding_types import untyped
from ..sharding_unreduced import sets_of
from ..trace import Tracer, as_value, current_trace, get_aval
from .ad import Zero
from .batching import AxisData, moveaxis
from .dce import call_rule, def_dce
from .jit import jit, jit_p
from .jvp import jvp_flat
from .shard_map_types import (  # noqa: F401  (manual_mesh_of: the eager shard_map's)
    _body_avals, _check_name, _drop_lanes, _spec_vma, _unreduced_lanes, body_scope,
    check_arg_sets, check_spec_sets, contract_partials, manual_mesh_of, not_replicated)
from .shard_map_specs import (block_type, check_typed_specs, infer_in_specs, result_entries,
                              result_type)
from .shard_map_vma import check_out_vmas, spec_paths
from .shard_map_vma import omitted as _omitted
from .shard_map_vma import spec_axes as _spec_axes
from .staging import closure_convert, stage, trace_to_jaxpr
from .vmap import _flatten_axes, vmap, vmap_flat, vmap_flat_dims

__all__ = ["shard_map", "smap", "pmap"]

shard_map_p = make_primitive("shard_map", multiple_results=True)


# ---------------------------------------------------------------- specs

def _entries(spec, ndim):
    """One tuple of mesh axis names per dimension (major to minor)."""
    parts = tuple(spec.partitions) + (None,) * (ndim - len(spec.partitions))
    return tuple(() if p is None else p if isinstance(p, tuple) else (p,) for p in parts)


def _blocks(names, mesh):
    return math.prod(mesh.shape[a] for a in names)


def _check_spec(spec, aval, mesh, manual, what):
    if spec is None:
        spec = P()
    if not isinstance(spec, P):
        raise TypeError(f"shard_map {what}: expected a PartitionSpec, got {spec!r}")
    if len(spec.partitions) > aval.ndim:
        raise ValueError(f"shard_map {what}: spec {spec} has {len(spec.partitions)} entries but "
                         f"the value {aval.str_short()} has only {aval.ndim} dimensions")
    seen = []
    for p in spec.partitions:
        if p is UNCONSTRAINED:
            raise ValueError(f"shard_map {what}: P.UNCONSTRAINED is not allowed in {spec}")
        for a in () if p is None else p if isinstance(p, tuple) else (p,):
            _check_name(a, spec, mesh, manual, what)
            if a in seen:
                raise ValueError(f"shard_map {what}: spec {spec} uses mesh axis {a!r} twice")
            seen.append(a)
    return spec


def _names(axes):
    return ", ".join(repr(a) for a in axes)


def _local_aval(aval, spec, mesh, what):
    shape = []
    for d, (n, names) in enumerate(zip(aval.shape, _entries(spec, aval.ndim))):
        k = _blocks(names, mesh)
        if n % k:
            raise ValueError(
                f"shard_map: {what} of shape {aval.str_short()} has spec {spec}, which splits "
                f"dimension {d} (of size {n}) over mesh axes {_names(names)} of total size {k}, "
                f"but {k} does not divide {n}. Pad the array or choose other mesh axes for it.")
        shape.append(n // k)
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def _global_aval(aval, spec, mesh):
    shape = [n * _blocks(names, mesh) for n, names in zip(aval.shape, _entries(spec, aval.ndim))]
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def _manual_order(mesh, axis_names):
    return tuple(a for a in mesh.axis_names if a in axis_names)


def _axis_sizes(mesh, manual):
    return {a: mesh.shape[a] for a in manual}


@shard_map_p.def_abstract_eval
def _shard_map_abstract_eval(*avals, jaxpr, mesh, out_specs, **_):
    return [result_type(a, _global_aval(a, s, mesh), s, mesh)
            for a, s in zip(jaxpr.out_avals, out_specs)]


# ---------------------------------------------------------------- varying manual axes (vma)

def _check_vma(f, mesh, closed, out_specs, manual, spec_keys):
    """Each output's type (what it is not known to be replicated over) against its out spec."""
    check_out_vmas(f, mesh, manual, [(key, spec, not_replicated(aval)) for aval, spec, key
                                     in zip(closed.out_avals, out_specs, spec_keys)])


# ---------------------------------------------------------------- evaluation: nested vmap

def _split_input(x, spec, mesh, order):
    """Global x -> one leading lane dim per mesh axis its spec names (in mesh order), then
    the per-shard shape. Returns (value, the axes of the lane dims)."""
    if spec.unreduced:
        return _unreduced_lanes(x, spec, mesh, order)
    aval = get_aval(x)
    shape, lane_pos, local_pos = [], {}, []
    for n, names in zip(aval.shape, _entries(spec, aval.ndim)):
        for a in names:
            lane_pos[a] = len(shape)
            shape.append(mesh.shape[a])
        local_pos.append(len(shape))
        shape.append(n // _blocks(names, mesh))
    lanes = tuple(a for a in order if a in lane_pos)
    outer = tuple(a for a in lane_pos if a not in order)
    x = st.reshape(x, tuple(shape))
    x = st.transpose(x, tuple(lane_pos[a] for a in outer + lanes) + tuple(local_pos))
    for _ in outer:  # an axis an enclosing shard_map made manual: _assemble tiled it
        x = st.index_in_dim(x, 0, 0)
    return x, lanes


def _run_lanes(fun, args, arg_lanes, axes, mesh):
    """fun applied per lane of the mesh axes `axes` (outermost first). Returns (outs,
    out_lanes): each output has one leading dim per axis it is batched over (mesh order)."""
    if not axes:
        outs = fun(*args)
        return outs, [()] * len(outs)
    name, rest = axes[0], axes[1:]
    box = {}

    def inner(*xs):
        outs, box["lanes"] = _run_lanes(fun, xs, arg_lanes, rest, mesh)
        return outs

    dims = [0 if name in lanes else None for lanes in arg_lanes]
    axis = AxisData(name, mesh.shape[name], per_device=True)
    outs, out_dims = vmap_flat_dims(inner, list(args), dims, axis)
    results = [o if d is None else moveaxis(o, d, 0) for o, d in zip(outs, out_dims)]
    lanes = [ls if d is None else (name,) + ls for d, ls in zip(out_dims, box["lanes"])]
    return results, lanes


def _assemble(x, lanes, spec, local_aval, mesh, order, leading=()):
    """Per-lane output (lane dims `lanes` first) -> the global value its out spec describes,
    after one lane dim per axis of `leading` (kept unassembled)."""
    entries = _entries(spec, local_aval.ndim)
    used = {a for names in entries for a in names} | set(leading)
    x, lanes = _drop_lanes(x, lanes, used)
    # an axis an enclosing shard_map made manual (only a residual's spec names one, as JAX's
    # do): every block along it holds this lane's value, the one _split_input reads back
    target = tuple(a for a in mesh.axis_names if a in used)
    nl = len(target)
    shape = tuple(mesh.shape[a] for a in target) + local_aval.shape
    dims = tuple(target.index(a) for a in lanes) + tuple(range(nl, len(shape)))
    x = st.broadcast_in_dim(x, shape, dims)
    perm = [target.index(a) for a in leading] + [
        i for d, names in enumerate(entries) for i in [target.index(a) for a in names] + [nl + d]]
    x = st.transpose(x, tuple(perm))
    return st.reshape(x, tuple(mesh.shape[a] for a in leading) +
                      _global_aval(local_aval, spec, mesh).shape)


def _assemble_unreduced(x, lanes, spec, local_aval, mesh, order):
    """Per-lane partial values -> the unreduced global value holding them, each device its
    lane's (split over the spec's other axes as _assemble splits)."""
    axes = tuple(a for a in order if a in spec.unreduced)
    x = _assemble(x, lanes, spec, local_aval, mesh, order, leading=axes)
    return contract_partials(x, axes, spec, mesh)


def _as_traced_value(o, aval):
    """Literal outputs of a body come back as Python scalars: make them arrays."""
    if isinstance(o, Tracer) or hasattr(o, "aval"):
        return o
    return ew.convert_element_type(o, aval.dtype, weak_type=aval.weak_type)


def _uses_collectives(jaxpr):
    return any(eqn.primitive in par.COLLECTIVES or any(map(_uses_collectives,
                                                           subjaxprs(eqn.params.values())))
               for eqn in jaxpr.eqns)


def _eval_inlined(jaxpr, consts, args, axes):
    """Bind a jaxpr's equations (literals as arrays, as batching rules want). With mesh
    `axes`, jit equations are inlined, so that collectives inside them reach the mesh axes'
    batching rules even when their operands are replicated, and other equations holding
    collectives (cond, scan, ...) get an operand made varying over every mesh axis (pvary
    materializes it) for every axis' rule to see them."""
    def apply(eqn, ins):
        if eqn.primitive is jit_p:
            inner = eqn.params["jaxpr"]
            return _eval_inlined(inner.jaxpr, inner.consts, ins, axes)
        if ins and any(map(_uses_collectives, subjaxprs(eqn.params.values()))):
            ins = [par.pvary_p.bind(ins[0], axes=axes)] + ins[1:]
        return bind_eqn(eqn, ins)
    return eval_jaxpr(jaxpr, consts, *args, read_literal=literal_array,
                      apply=apply if axes else bind_eqn)


def _body_fun(closed):
    """closed as a function binding its equations (literals as arrays, as batching wants)."""
    return jaxpr_as_fun(closed, literal_array)


def shard_map_lanes(args, **params):
    """shard_map's evaluation (below), its global values untyped (its axes are Manual)."""
    with untyped():
        return _shard_map_lanes(args, **params)


def _shard_map_lanes(args, *, jaxpr, mesh, in_specs, out_specs, axis_names, **_):
    """Evaluate shard_map as nested vmap over its manual mesh axes on the current trace.
    Returns (outs, checks): checks lists (output index, lane axes, replicated axes, stacked
    per-lane value) for outputs that came out batched over an axis their out spec omits
    (their lanes must then be equal; numpy_ref verifies it on the data)."""
    order = _manual_order(mesh, axis_names)
    split = [_split_input(x, s, mesh, order) for x, s in zip(args, in_specs)]
    fun = lambda *xs: _eval_inlined(jaxpr.jaxpr, jaxpr.consts, xs, order)  # noqa: E731
    outs, lanes = _run_lanes(fun, [x for x, _ in split], [ls for _, ls in split], order, mesh)
    results, checks = [], []
    for i, (o, ls, spec, aval) in enumerate(zip(outs, lanes, out_specs, jaxpr.out_avals)):
        o = _as_traced_value(o, aval)
        replicated = tuple(a for a in ls if a in _omitted(spec, order))
        if replicated:
            checks.append((i, ls, replicated, o))
        assemble = _assemble_unreduced if spec.unreduced else _assemble
        results.append(assemble(o, ls, spec, aval, mesh, order))
    return results, checks


def global_in_avals(params):
    """The avals of a shard_map equation's operands (global values)."""
    return [_global_aval(a, s, params["mesh"]) for a, s in zip(params["jaxpr"].in_avals,
                                                              params["in_specs"])]


_LANES_CACHE = {}


def staged_lanes(params):
    """(ClosedJaxpr of shard_map_lanes over global inputs returning outs + check stacks,
    [(output index, lane axes, replicated axes)]), cached per equation parameters."""
    key = tuple(params[k] for k in ("jaxpr", "mesh", "in_specs", "out_specs", "axis_names"))
    hit = _LANES_CACHE.get(key)
    if hit is not None:
        return hit
    in_avals = global_in_avals(params)
    box = {}

    def fun(*args):
        outs, checks = shard_map_lanes(args, **params)
        box["checks"] = [c[:3] for c in checks]
        return list(outs) + [c[3] for c in checks]

    jaxpr, consts = trace_to_jaxpr(fun, in_avals)
    if len(_LANES_CACHE) > 256:
        _LANES_CACHE.clear()
    hit = _LANES_CACHE[key] = (ClosedJaxpr(jaxpr, consts), box["checks"])
    return hit


# ---------------------------------------------------------------- derived shard_maps

def _stage_local(fun, local_avals, params):
    """Stage a per-shard function (with the mesh axes bound); returns (closed, consts)."""
    order = _manual_order(params["mesh"], params["axis_names"])
    with body_scope(params["mesh"], order, params["check_vma"]):
        return stage(fun, list(local_avals))


def _bind_derived(params, closed, consts, args, in_specs, out_specs):
    """Bind a shard_map derived from `params` (by jvp, transpose, vmap, partial eval); captured
    tracer consts come first, replicated."""
    new = dict(params, jaxpr=closed, in_specs=(P(),) * len(consts) + tuple(in_specs),
               out_specs=tuple(out_specs))
    return shard_map_p.bind(*consts, *args, **new)


def _derived_params(params, closed, consts, in_specs, out_specs):
    """Params of a derived shard_map whose consts must already be among its inputs."""
    if consts:
        raise NotImplementedError("shard_map: a derived body captured traced values")
    return dict(params, jaxpr=closed, in_specs=tuple(in_specs), out_specs=tuple(out_specs))


def _is_diff(aval):
    return dtypes.is_inexact(aval.dtype)


def _nonzero(t):
    return type(t) is not Zero and get_aval(t).dtype != dtypes.float0


def _jvp_body(params, nonzeros):
    """A body (primals..., nonzero tangents...) -> (outs..., nonzero tangents...); returns
    (closed, consts, which outputs have a nonzero tangent)."""
    closed = params["jaxpr"]
    n = len(closed.in_avals)
    t_avals = [a.to_tangent_aval() for a, nz in zip(closed.in_avals, nonzeros) if nz]
    box = {}

    def fun(*args):
        nz = iter(args[n:])
        tangents = [next(nz) if z else Zero(a.to_tangent_aval())
                    for a, z in zip(closed.in_avals, nonzeros)]
        outs, out_t = jvp_flat(jaxpr_as_fun(closed), list(args[:n]), tangents)
        box["nz"] = [_nonzero(t) for t in out_t]
        return list(outs) + [t for t in out_t if _nonzero(t)]

    new, consts = _stage_local(fun, list(closed.in_avals) + t_avals, params)
    return new, consts, box["nz"]


def _jvp_specs(params, nonzeros, diff_out):
    ins, outs = params["in_specs"], params["out_specs"]
    return (tuple(ins) + tuple(s for s, nz in zip(ins, nonzeros) if nz),
            tuple(outs) + tuple(s for s, d in zip(outs, diff_out) if d))


def _split_tangents(outs, k, diff_out):
    primal, tangents = outs[:k], iter(outs[k:])
    return primal, [next(tangents) if d else Zero(get_aval(p).to_tangent_aval())
                    for p, d in zip(primal, diff_out)]


def _shard_map_jvp(primals, tangents, **params):
    nonzeros = [_nonzero(t) for t in tangents]
    new, consts, diff_out = _jvp_body(params, nonzeros)
    in_specs, out_specs = _jvp_specs(params, nonzeros, diff_out)
    outs = _bind_derived(params, new, consts, [*primals, *[t for t, nz in zip(tangents, nonzeros)
                                                           if nz]], in_specs, out_specs)
    return _split_tangents(outs, len(params["out_specs"]), diff_out)


# ---------------------------------------------------------------- batching (vmap of shard_map)

def _shard_map_batch(axis_data, vals, dims, **params):
    """The vmapped axis becomes a new leading, unsplit dimension of every shard."""
    closed = params["jaxpr"]
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    in_dims = [None if d is None else 0 for d in dims]
    # the body's values vary over the batched axis no more: an outer shard_map's lanes over
    # it are explicit now (else its auto-pvary would stage a pvary over an unbound axis)
    avals = [(a if d is None else a.update(shape=(axis_data.size,) + a.shape)).update(
        vma=a.vma - {axis_data.name}) for a, d in zip(closed.in_avals, dims)]

    def fun(*args):
        return vmap_flat(_body_fun(closed), list(args), in_dims, axis_data)

    new, consts = _stage_local(fun, avals, params)
    in_specs = [s if d is None else _leading_none(s) for s, d in zip(params["in_specs"], dims)]
    out_specs = [_leading_none(s) for s in params["out_specs"]]
    outs = _bind_derived(params, new, consts, vals, in_specs, out_specs)
    return outs, [0] * len(outs)


def _leading_none(spec):
    """spec with an unsplit leading dimension (its unreduced and reduced axes kept)."""
    return P(None, *spec.partitions, unreduced=spec.unreduced, reduced=spec.reduced)


def _shard_map_sharding(specs, in_avals, out_avals, *, out_specs, **_):
    """Outputs are laid out on the mesh as their out specs say, and on the automatic
    Explicit axes as their types say."""
    return [result_entries(s, a) for s, a in zip(out_specs, out_avals)]


shard_map_p.def_jvp(_shard_map_jvp)
shard_map_p.def_batch(_shard_map_batch)
shard_map_p.def_sharding(_shard_map_sharding)
shard_map_p.def_layout("mesh")
def_dce(shard_map_p)(call_rule(per_input=("in_specs",), per_output=("out_specs",)))


@shard_map_p.def_pp
def _shard_map_pp(eqn, context):
    """As JAX prints it: the manual axes as `newly_manual_axes` (with check_vma, the body's
    types carry the mesh axes its values vary over: `f32[2]{V:x}`)."""
    p = eqn.params
    params = {k: v for k, v in p.items() if k not in ("axis_names", "context_mesh")}
    params["newly_manual_axes"] = frozenset(p["axis_names"])
    if p.get("context_mesh") is not None:  # JAX's shard_map without mesh= holds the context's
        params["mesh"] = p["context_mesh"]  # abstract mesh (an enclosing one's axes Manual)
    return sorted(params.items())


# ---------------------------------------------------------------- the user API

def _flatten_specs(what, tree, specs):
    return pytree.broadcast_prefix(what, tree, specs, lambda x: x is None or isinstance(x, P))


def _paths(prefix, tree):
    return [f"{prefix}{pytree.keystr(p)}" for p, _ in pytree.tree_flatten_with_path(tree)[0]]


def _trace_body(f, in_tree, local_avals, mesh, order, check_vma, out_specs):
    """Stage f on per-shard avals; returns (closed body, captured tracers, outputs box)."""
    box = {}

    def flat(*xs):
        out = f(*pytree.tree_unflatten(in_tree, xs))
        leaves, box["tree"] = pytree.tree_flatten(out)
        box["out"] = out
        leaves = [_check_output(x) for x in leaves]
        if not check_vma:
            return leaves
        specs = _flatten_specs("shard_map out_specs", out, out_specs)
        return [_vary_as_spec(x, s, order) for x, s in zip(leaves, specs)]

    with body_scope(mesh, order, bool(check_vma)):
        jaxpr, consts = trace_to_jaxpr(flat, local_avals)
    closed, tracer_consts = closure_convert(jaxpr, consts)
    return closed, tracer_consts, box


def _vary_as_spec(x, spec, order):
    """An output split over axes it does not vary over is made varying over them (pvary), as
    JAX's: each device's block is its own value, whose cotangent comes back per device. One
    whose spec is unreduced over axes it is not unreduced over is cast to unreduced (free),
    JAX's ValueError where it does not vary over them."""
    if not isinstance(spec, P):
        return x
    vma = get_aval(x).vma
    missing = tuple(a for a in order if a in _spec_axes(spec) and a not in vma)
    par.check_not_partial(get_aval(x), missing)
    x = par.pvary_p.bind(as_value(x), axes=missing) if missing else x
    # every unreduced axis the value is not yet unreduced over: JAX's cast refuses the ones
    # it does not vary over (a replicated value is no partial sum)
    partial = tuple(a for a in order if a in spec.unreduced - sets_of(get_aval(x))[0])
    return vary_unreduced_cast_p.bind(x, axes=partial) if partial else x


def _check_output(x):
    if isinstance(x, Tracer) or hasattr(x, "aval"):
        return x
    try:
        get_aval(x)
    except TypeError:
        raise TypeError(f"shard_map: the function returned a value of type "
                        f"{type(x).__name__}, which is not a valid JAX type") from None
    return x


def _resolve_mesh(mesh):
    if mesh is None:
        mesh = get_current_mesh()
        if mesh is None:
            raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to "
                             "enter into a mesh context")
    if not isinstance(mesh, Mesh) or mesh.empty:
        raise ValueError(f"shard_map needs a mesh: pass mesh=... or set one with "
                         f"jax.set_mesh(mesh); got {mesh!r}")
    return mesh


def _resolve_axis_names(mesh, axis_names):
    if not axis_names:
        return tuple(mesh.axis_names)
    unknown = [a for a in axis_names if a not in mesh.shape]
    if unknown:
        raise ValueError(f"shard_map: axis_names {tuple(axis_names)} name {unknown[0]!r}, which "
                         f"is not an axis of {mesh}")
    return _manual_order(mesh, set(axis_names))


def _shard_map_call(f, mesh, in_specs, out_specs, check_vma, axis_names, args, kwargs):
    if kwargs:
        raise TypeError(f"shard_map'd functions take positional arguments only; got keyword "
                        f"arguments {sorted(kwargs)}")
    # printed as JAX prints it
    context = {"context_mesh": get_abstract_mesh()} if mesh is None else {}
    mesh = _resolve_mesh(mesh)
    order = _resolve_axis_names(mesh, axis_names)
    leaves, in_tree = pytree.tree_flatten(args)
    leaves = [as_value(x) for x in leaves]
    paths = _paths("args", args)
    check_spec_sets(mesh, order, in_specs, out_specs)
    specs = infer_in_specs(mesh, order, leaves, axis_names) if in_specs is None else \
        check_typed_specs(mesh, order, leaves, _flatten_specs("shard_map in_specs", args,
                                                              in_specs))
    specs = [_check_spec(s, get_aval(x), mesh, order, f"in_specs for {p}")
             for s, x, p in zip(specs, leaves, paths)]
    check_arg_sets(leaves, specs)
    local = [block_type(x, _local_aval(get_aval(x), s, mesh, f"argument {p}"), mesh,
                        order) for x, s, p in zip(leaves, specs, paths)]
    from .shard_map_eager import eager_shard_map, runs_eagerly  # it builds on this module
    if runs_eagerly(mesh, order):
        return eager_shard_map(f, mesh, order, leaves, in_tree, specs, out_specs, check_vma)
    local = _body_avals(local, specs, order, check_vma, mesh, [get_aval(x).vma for x in leaves])
    closed, tracer_consts, box = _trace_body(f, in_tree, local, mesh, order, check_vma,
                                             out_specs)
    out_paths = _paths("out", box["out"])
    outs_specs = _flatten_specs("shard_map out_specs", box["out"], out_specs)
    outs_specs = [_check_spec(s, a, mesh, order, f"out_specs for {p}")
                  for s, a, p in zip(outs_specs, closed.out_avals, out_paths)]
    in_all = (P(),) * len(tracer_consts) + tuple(specs)
    if check_vma:
        _check_vma(f, mesh, closed, outs_specs, order, spec_paths(box["out"], out_specs))
    outs = shard_map_p.bind(*tracer_consts, *leaves, axis_names=order, check_vma=bool(check_vma),
                            in_specs=in_all, jaxpr=closed, mesh=mesh,
                            out_specs=tuple(outs_specs), **context)
    return pytree.tree_unflatten(box["tree"], outs)


_NO_SPECS = object()


def shard_map(f=None, mesh=None, in_specs=_NO_SPECS, out_specs=_NO_SPECS, *, check_vma=True,
              check_rep=None, axis_names=None):
    """Map f over shards of its arguments: each mesh axis named in an input's spec splits that
    dimension in blocks, f runs on each device's block (collectives such as lax.psum talk across
    the named axes) and the outputs are reassembled as out_specs say. An out spec omitting a
    mesh axis asserts that the output is the same on every device along it (checked statically
    with check_vma, and on the data by the numpy_ref backend). Usable as a decorator:
    `@partial(shard_map, mesh=mesh, in_specs=P('x'), out_specs=P())`."""
    if f is None:
        return functools.partial(shard_map, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                                 check_vma=check_vma, check_rep=check_rep, axis_names=axis_names)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable, got {f!r}")
    if out_specs is _NO_SPECS:
        raise TypeError("shard_map requires out_specs")
    in_specs = None if in_specs is _NO_SPECS else in_specs
    check = check_vma if check_rep is None else check_rep

    @functools.wraps(f)
    def mapped(*args, **kwargs):
        return _shard_map_call(f, mesh, in_specs, out_specs, check, axis_names, args, kwargs)
    return mapped


def _axis_spec(axis, name, what):
    if axis is None:
        return P()
    if not isinstance(axis, int) or axis < 0:
        raise ValueError(f"smap {what} must be None or a non-negative int, got {axis!r}")
    return P(*([None] * axis), name)


def smap(f=None, *, in_axes=0, out_axes=0, axis_name):
    """shard_map over the single mesh axis `axis_name` of the current mesh, with vmap-style
    in_axes/out_axes saying which dimension of each argument/output is split over it."""
    if f is None:
        return functools.partial(smap, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)

    @functools.wraps(f)
    def mapped(*args):
        spec = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        flat = _flatten_axes("smap in_axes", args, spec)
        leaves, tree = pytree.tree_flatten(args)
        in_specs = pytree.tree_unflatten(tree, [_axis_spec(a, axis_name, "in_axes") for a in flat])
        out_specs = pytree.tree_map(lambda a: _axis_spec(a, axis_name, "out_axes"), out_axes,
                                    is_leaf=lambda x: x is None)
        return shard_map(f, in_specs=in_specs, out_specs=out_specs,
                         axis_names={axis_name})(*args)
    return mapped


# ---------------------------------------------------------------- pmap

def _pmap_body(fun, limit):
    """fun, checking the mapped size against the device count (the vmap running it binds the
    axis name)."""
    def body(*args, **kwargs):
        size = current_trace().axis_data.size
        if size > limit:
            raise ValueError(f"pmap: compiling computation that requires {size} logical devices, "
                             f"but only {limit} devices are available (the mapped axis has "
                             f"size {size})")
        return fun(*args, **kwargs)
    return body


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(), global_arg_shapes=None):
    """Map fun over the leading (in_axes) dimension, one slice per device, with collectives over
    axis_name: refjax runs it as jit(vmap(fun, axis_name=axis_name)); the mapped size must not
    exceed the number of devices. Outputs are ordinary Arrays."""
    if not callable(fun):
        raise TypeError(f"pmap requires a callable, got {fun!r}")
    limit = len(devices) if devices is not None else None
    static = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) \
        else tuple(static_broadcasted_argnums)

    @functools.wraps(fun)
    def run(*args):
        n = limit if limit is not None else runtime.device_count()
        body = _pmap_body(fun, n)
        if not static:
            return vmap(body, in_axes, out_axes, axis_name=axis_name, axis_size=axis_size)(*args)
        dyn = [a for i, a in enumerate(args) if i not in static]
        axes = in_axes if not isinstance(in_axes, (tuple, list)) else \
            tuple(a for i, a in enumerate(in_axes) if i not in static)

        def dyn_body(*dyn_args):
            it = iter(dyn_args)
            return body(*[args[i] if i in static else next(it) for i in range(len(args))])
        return vmap(dyn_body, axes, out_axes, axis_name=axis_name, axis_size=axis_size)(*dyn)

    return jit(run, static_argnums=static)


from . import shard_map_ad  # noqa: E402,F401  (its AD rules, which build on this module)
