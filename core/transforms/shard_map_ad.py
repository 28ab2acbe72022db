"""shard_map's partial evaluation, linearization and transpose, staged as JAX stages them."""
from ..jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, jaxpr_as_fun, with_binders
from ..primitives import elementwise as ew
from ..primitives import parallel as par
from ..primitives import structural as st
from ..primitives.control_flow.hoisting import jax_const_order, split_when_hoisted
from ..sharding import P
from ..sharding_names import _live_vars
from ..sharding_types import type_outputs
from ..sharding_unreduced import cotangent_aval, sets_of, swapped_spec
from ..trace import get_aval
from ..vma import typed_outputs
from .ad import UndefinedPrimal, Zero, instantiate
from .compile_time import ensure_compile_time_eval
from .partial_eval import partial_eval_jaxpr
from .checkpoint import partial_eval_with_policy
from .partial_eval_style import in_jaxpr_trace_style, in_remat
from .shard_map_types import body_scope
from .shard_map import (_bind_derived, _blocks, _derived_params, _is_diff, _jvp_body, _jvp_specs,
                        _manual_order, _nonzero, _omitted, _split_tangents, _stage_local,
                        shard_map_p)
from .transpose import backward_pass

# ---------------------------------------------------------------- residuals
#
# As JAX's: a residual that is one of the body's known inputs or known outputs is forwarded
# (the shard_map consuming it reads that value, under its spec); the others are outputs of
# the known shard_map, before its known outputs, each split along its leading dimension over
# the manual axes it varies over (JAX's `nospec`; every manual axis without check_vma), a
# scalar one given a leading dimension of 1 first.


def _residual_spec(aval, params):
    """The out spec of a residual the known shard_map outputs (JAX's `nospec`)."""
    if not params["check_vma"]:
        order = _manual_order(params["mesh"], params["axis_names"])
        return P(order) if order else P()
    # every axis it varies over, those an enclosing shard_map made manual too (as JAX's)
    axes = tuple(a for a in params["mesh"].axis_names if a in aval.vma)
    unreduced, reduced = sets_of(aval)
    sets = {k: v for k, v in (("unreduced", unreduced), ("reduced", reduced)) if v}
    return P(axes, **sets) if axes else P(**sets)


def _forwarding(known, n_out):
    """Per residual of `known` (its outputs after the first n_out): ("in", i) when it is its
    input i, ("out", j) when it is its output j (the last such, as JAX's), else None."""
    kj = known.jaxpr
    ins = {v: i for i, v in enumerate(kj.invars)}
    outs = {v: j for j, v in enumerate(kj.outvars[:n_out]) if isinstance(v, Var)}
    return [("in", ins[v]) if v in ins else ("out", outs[v]) if v in outs else None
            for v in kj.outvars[n_out:]]


def _resolve(fwd, known_in, known_out, own):
    """The residual values (or variables) in order: forwarded ones read from the known inputs
    and outputs, the others from the known shard_map's own residual outputs."""
    own = iter(own)
    return [known_in[f[1]] if f and f[0] == "in" else known_out[f[1]] if f else next(own)
            for f in fwd]


def _known_body(known, n_out, own, params, known_first):
    """The known body: (own residuals, scalars as [1]..., known outputs...), or the known
    outputs first (`known_first`)."""
    def fun(*args):
        outs = jaxpr_as_fun(known)(*args)
        res = [outs[n_out + i] for i in own]
        res = [st.expand_dims(r, (0,)) if not get_aval(r).shape else r for r in res]
        return list(outs[:n_out]) + res if known_first else res + list(outs[:n_out])
    return _stage_local(fun, known.in_avals, params)


def _unknown_body(unknown, promoted, params):
    """The unknown body, reading its promoted residuals as [1] (squeezed first)."""
    n = len(promoted)
    avals = [a.update(shape=(1,), sharding=None) if p else a
             for a, p in zip(unknown.in_avals[:n], promoted)] + list(unknown.in_avals[n:])

    def fun(*args):
        res = [st.squeeze(r, (0,)) if p else r for r, p in zip(args[:n], promoted)]
        return jaxpr_as_fun(unknown)(*res, *args[n:])
    return _stage_local(fun, avals, params)


def _jaxpr_trace_residuals(known, unknown, n_res):
    """(known, unknown) with their residuals in the order JAX's JaxprTrace makes them the
    unknown body's constvars (its tracers' topological order), not in first-use order."""
    uj = unknown.jaxpr
    res = uj.invars[:n_res]
    order = jax_const_order(uj.eqns, uj.invars[n_res:], uj.outvars, 0, dict.fromkeys(res))
    return _reordered(known, unknown, n_res, order + [v for v in res if v not in order])


def _custom_residuals(known, unknown, n_res):
    """(known, unknown) with their residuals as JAX's remat (partial_eval_jaxpr_custom)
    orders them: the known inputs it reads last, in input order (they are the staged
    shard_map's instantiated inputs there, not residuals)."""
    kj = known.jaxpr
    res = list(kj.outvars[len(kj.outvars) - n_res:])
    inputs = [v for v in kj.invars if v in res]
    return _reordered(known, unknown, n_res, [v for v in res if v not in inputs] + inputs)


def _reordered(known, unknown, n_res, order):
    """(known, unknown) with their residuals (the same variables on both sides) in `order`."""
    kj, uj = known.jaxpr, unknown.jaxpr
    n_out = len(kj.outvars) - n_res
    return (with_binders(known, outvars=list(kj.outvars[:n_out]) + order),
            with_binders(unknown, invars=order + list(uj.invars[n_res:])))


def _split_body(params, unknowns, instantiate, known_first):
    """The body partially evaluated (with its mesh axes bound: a nested shard_map's types) as
    JAX's partial evaluation on whose behalf it runs does it (see `_split`)."""
    order = _manual_order(params["mesh"], params["axis_names"])
    remat, policy = in_remat()
    with body_scope(params["mesh"], order, params["check_vma"]):
        known, unknown, out_uk, n_res = (
            partial_eval_with_policy(params["jaxpr"], unknowns, policy) if remat else
            partial_eval_jaxpr(params["jaxpr"], unknowns, instantiate))
    if remat:  # what remat recomputes is not computed in the known body (JAX's DCE there)
        kj = known.jaxpr
        known = ClosedJaxpr(kj._replace(eqns=_live_eqns(kj, _live_vars(kj))), known.consts)
        return (*_custom_residuals(known, unknown, n_res), out_uk, n_res)
    if known_first:
        return (*_jaxpr_trace_residuals(known, unknown, n_res), out_uk, n_res)
    return known, unknown, out_uk, n_res


def _split(params, unknowns, instantiate=False, known_first=False):
    """Split a shard_map into a known one (known inputs -> own residuals + known outputs, or
    the known outputs first) and an unknown one (residuals + unknown inputs -> unknown
    outputs). Returns (known params, unknown params, out_unknowns, forwarding of each
    residual)."""
    known, unknown, out_uk, n_res = _split_body(params, unknowns, instantiate, known_first)
    n_out = len(known.out_avals) - n_res
    fwd = _forwarding(known, n_out)
    own = [i for i, f in enumerate(fwd) if f is None]
    promoted = [f is None and not a.shape for f, a in zip(fwd, known.out_avals[n_out:])]
    known2, kc = _known_body(known, n_out, own, params, known_first)
    unknown2, uc = _unknown_body(unknown, promoted, params)
    k_in = [s for s, u in zip(params["in_specs"], unknowns) if not u]
    k_out = [s for s, u in zip(params["out_specs"], out_uk) if not u]
    own_avals = known2.out_avals[n_out:] if known_first else known2.out_avals[:len(own)]
    own_specs = [_residual_spec(a, params) for a in own_avals]
    res_specs = _resolve(fwd, k_in, k_out, own_specs)
    kp = _derived_params(params, known2, kc, k_in,
                         k_out + own_specs if known_first else own_specs + k_out)
    up = _derived_params(params, unknown2, uc, res_specs + [
        s for s, u in zip(params["in_specs"], unknowns) if u],
        [s for s, u in zip(params["out_specs"], out_uk) if u])
    return kp, up, out_uk, fwd


def _n_own(fwd):
    return sum(f is None for f in fwd)


# ---------------------------------------------------------------- linearize, partial eval

def _shard_map_linearize(primals, tangents, **params):
    """As JAX's: the known shard_map runs on the parent trace and outputs its own residuals
    then the primal outputs; the tangent one, staged into the linear jaxpr, reads the
    residuals (forwarded inputs and outputs among them) then the nonzero tangents."""
    nonzeros = [_nonzero(t) for t in tangents]
    new, consts, nz_out = _jvp_body(params, nonzeros)
    in_specs, out_specs = _jvp_specs(params, nonzeros, nz_out)
    full = dict(params, jaxpr=new, in_specs=(P(),) * len(consts) + in_specs,
                out_specs=out_specs)
    known_in, nz_t = [*consts, *primals], [t for t, nz in zip(tangents, nonzeros) if nz]
    n_out = len(params["out_specs"])
    kp, up, _, fwd = _split(full, [False] * len(known_in) + [True] * len(nz_t),
                            [False] * n_out + [True] * sum(nz_out))
    outs = shard_map_p.bind(*known_in, **kp)
    own, primal_out = outs[:_n_own(fwd)], outs[_n_own(fwd):]
    if not any(nz_out):
        return _split_tangents(primal_out, n_out, nz_out)
    res = _resolve(fwd, known_in, primal_out, own)
    tangent_out = shard_map_p.bind(*res, *nz_t, **up)
    return _split_tangents([*primal_out, *tangent_out], n_out, nz_out)


def _staged_out_avals(invars, params):
    """The output types of a shard_map equation on `invars`, as staging gives them."""
    in_avals = [v.aval for v in invars]
    out = type_outputs(shard_map_p, in_avals, shard_map_p.abstract_eval(*in_avals, **params),
                       params)
    return typed_outputs(shard_map_p, invars, out, params)


def _shard_map_partial_eval(eqn, unknowns_in):
    """One shard_map equation split as linearize splits it, or, on behalf of JAX's JaxprTrace
    (while loops, remat), with the known shard_map's known outputs before its residuals."""
    known_first = in_jaxpr_trace_style()
    kp, up, out_uk, fwd = _split(eqn.params, unknowns_in, known_first=known_first)
    k_in = [v for v, u in zip(eqn.invars, unknowns_in) if not u]
    u_in = [v for v, u in zip(eqn.invars, unknowns_in) if u]
    k_out = [v for v, u in zip(eqn.outvars, out_uk) if not u]
    u_out = [v for v, u in zip(eqn.outvars, out_uk) if u]
    avals = _staged_out_avals(k_in, kp)
    own = [Var(a) for a in (avals[len(k_out):] if known_first else avals[:_n_own(fwd)])]
    res = _resolve(fwd, k_in, k_out, own)
    return ([JaxprEqn(shard_map_p, k_in, k_out + own if known_first else own + k_out, kp)],
            [JaxprEqn(shard_map_p, res + u_in, u_out, up)], out_uk)


# ---------------------------------------------------------------- transpose

def _scale_replicated_ct(ct, spec, params):
    """Without check_vma, an output replicated over axes is one value seen as a copy per lane:
    each copy gets an equal share of its cotangent (psum's transpose sums the copies back),
    divided before the transposed shard_map as JAX divides it. With check_vma the types say
    where copies were made (pvary, whose transpose sums), so nothing is scaled."""
    if params["check_vma"]:
        return ct
    n = _blocks(_omitted(spec, _manual_order(params["mesh"], params["axis_names"])),
                params["mesh"])
    if n == 1:
        return ct
    with ensure_compile_time_eval():  # a cotangent known now is divided now (JAX: NumPy's)
        return ew.div(ct, ew.full((), n, get_aval(ct).dtype))


def _sum_replicated_ct(ct, spec, params):
    """An input replicated over axes was used by every lane: its cotangent is the lanes' sum.
    With check_vma, pvary's transpose has summed it where the types made copies; what still
    varies over an axis the input is replicated over is summed here."""
    axes = _omitted(spec, _manual_order(params["mesh"], params["axis_names"]))
    if params["check_vma"]:
        axes = tuple(a for a in axes if a in get_aval(ct).vma)
        return par.psum_invariant_p.bind(ct, axes=axes) if axes else ct
    return par.psum_p.bind(ct, axes=axes) if axes else ct


def _transpose_body(params, linear, nz_cts):
    """The transposed body: (nonzero cotangents..., known inputs...) -> the cotangents of the
    linear inputs that are not zeros; returns (closed, consts, which inputs get one)."""
    closed = params["jaxpr"]
    known_avals = [a for a, lin in zip(closed.in_avals, linear) if not lin]
    ct_avals = [cotangent_aval(closed.out_avals[i]) for i in nz_cts]
    box = {}

    def fun(*args):
        cts, known = iter(args[:len(ct_avals)]), iter(args[len(ct_avals):])
        ct_out = [Zero(a.to_tangent_aval()) for a in closed.out_avals]
        for i in nz_cts:
            ct_out[i] = next(cts)
        lin_in = [True if lin else next(known) for lin in linear]
        res = backward_pass(closed.jaxpr, closed.consts, lin_in, ct_out)
        box["nz"] = [lin and r is not None and type(r) is not Zero and _is_diff(a)
                     for r, lin, a in zip(res, linear, closed.in_avals)]
        return [_sum_replicated_ct(instantiate(r), s, params)
                for r, s, nz in zip(res, params["in_specs"], box["nz"]) if nz]

    new, consts = _stage_local(fun, ct_avals + known_avals, params)
    return new, consts, box["nz"]


def _live_eqns(jaxpr, live):
    return [e for e in jaxpr.eqns if not e.outvars or any(v in live for v in e.outvars)]


def _pruned(closed, n_cts):
    """The transposed body without the equations nothing reads and the known inputs only they
    (or nothing) read; returns (closed, which known inputs it keeps). JAX's linear shard_map
    was pruned so (dead-code elimination) of the outputs nothing reads and the residuals only
    they used, before it was transposed."""
    j = closed.jaxpr
    live = _live_vars(j)
    eqns = _live_eqns(j, live)
    used = [v in live for v in j.invars[n_cts:]]
    invars = j.invars[:n_cts] + [v for v, u in zip(j.invars[n_cts:], used) if u]
    return ClosedJaxpr(Jaxpr(j.constvars, invars, j.outvars, eqns), closed.consts), used


def _bind_transposed(params, body, cts, nz_cts, known, nz_in):
    """Bind the transposed shard_map on (nonzero cotangents..., the known operands it reads...);
    `known` pairs each known operand with its in spec."""
    new, used = _pruned(body[0], len(nz_cts))
    known = [k for k, u in zip(known, used) if u]
    out_specs = params["out_specs"]
    ct_vals = [_scale_replicated_ct(cts[i], out_specs[i], params) for i in nz_cts]
    in_specs = [swapped_spec(out_specs[i]) for i in nz_cts] + [s for _, s in known]
    new_out = [swapped_spec(s) for s, nz in zip(params["in_specs"], nz_in) if nz]
    return _bind_derived(params, new, body[1], ct_vals + [a for a, _ in known], in_specs,
                         new_out)


def _shard_map_transpose(cts, *args, **params):
    """As JAX's: the transposed shard_map reads the nonzero cotangents, then the known
    operands (the residuals); none is bound when no input gets a nonzero cotangent."""
    linear = [type(a) is UndefinedPrimal for a in args]
    nz_cts = [i for i, (ct, a) in enumerate(zip(cts, params["jaxpr"].out_avals))
              if type(ct) is not Zero and _is_diff(a)]
    new, consts, nz_in = _transpose_body(params, linear, nz_cts)
    known = [(a, s) for a, s, lin in zip(args, params["in_specs"], linear) if not lin]
    outs = iter(_bind_transposed(params, (new, consts), cts, nz_cts, known, nz_in)
                if any(nz_in) else [])
    return [next(outs) if nz else Zero(a.aval.to_tangent_aval()) if lin else None
            for a, lin, nz in zip(args, linear, nz_in)]


shard_map_p.def_linearize(_shard_map_linearize)
shard_map_p.def_transpose(_shard_map_transpose)
shard_map_p.def_partial_eval(_shard_map_partial_eval)
split_when_hoisted(shard_map_p)
