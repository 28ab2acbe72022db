"""Linearize: JVP with tangents staged into a linear jaxpr while primals run on the parent."""
from .. import dtypes, source_info
from .. import jaxpr as jx
from ..sharding_types import typed_aval
from ..trace import Trace, current_trace, get_aval, set_current_trace
from .ad import Zero, zeros_like_aval
from .jvp import jvp_flat
from .dce import dce_consts
from .partial_eval import not_forwarded, partial_eval_jaxpr
from .staging import StagingTrace, StagingTracer, stage_closed


class TangentDispatchTrace(Trace):
    """Current while a JVP rule runs under linearize: an operation touching a tangent (a tracer
    of the tangent staging trace) is staged into the linear jaxpr; anything else runs on the
    parent trace, so primal values stay concrete (Python control flow on them works)."""

    def __init__(self, parent, tangent_trace):
        self.parent = parent
        self.tangent_trace = tangent_trace

    def process_primitive(self, prim, args, params):
        return self._target(args).process_primitive(prim, args, params)

    def _target(self, args):
        s = self.tangent_trace
        return s if any(type(a) is StagingTracer and a._trace is s for a in args) \
            else self.parent

    def process_custom_jvp_call(self, call, fun, jvp, args, symbolic_zeros):
        """A custom_jvp function called inside a JVP rule runs where its operands live."""
        with set_current_trace(self._target(args)):
            return call(fun, jvp, args, symbolic_zeros)

    def process_custom_vjp_call(self, call, fun, rule, args):
        with set_current_trace(self._target(args)):
            return call(fun, rule, args)


def linearize_flat(fun, primals):
    """Returns (out primals, linear jaxpr, residuals, out tangent avals): the jaxpr maps input
    tangents to output tangents; its constvars are the residuals (values of the parent trace)."""
    parent = current_trace()
    tangent_trace = StagingTrace(record_source=False, inline_arrays=False)
    tangents = [tangent_trace.new_arg(typed_aval(p).to_tangent_aval()) for p in primals]
    # Integer and boolean primals have float0 tangents: inputs of the linear jaxpr, but
    # symbolic zeros for the rules (as in jvp), which never compute with float0 values.
    tangents = [Zero(t.aval) if t.aval.dtype == dtypes.float0 else t for t in tangents]
    dispatch = TangentDispatchTrace(parent, tangent_trace)
    with source_info.transformed("jvp"):  # the user's function's equations, as JAX names them
        out_p, out_t = jvp_flat(fun, primals, tangents, parent=parent, rule_trace=dispatch)
    out_t = [_instantiate_in(tangent_trace, t) for t in out_t]
    jaxpr, residuals = tangent_trace.to_jaxpr(out_t)
    # as JAX's linearize (its tangent trace drops dead code): only what the outputs need,
    # and only the residuals that reads
    jaxpr, residuals = dce_consts(jaxpr, residuals)
    return out_p, jaxpr, residuals


def _instantiate_in(trace, t):
    """Output tangents that are symbolic zeros become zeros staged into the linear jaxpr."""
    if type(t) is not Zero:
        return t
    with set_current_trace(trace):
        return zeros_like_aval(t.aval)


def linearize_by_partial_eval(prim, tangent_constants=False, forwardable=None):
    """A `linearize` rule for a loop or branch primitive: stage the JVP of this one
    application, split it with primals known and tangents unknown (the primitive's
    partial_eval rule does the work), run the known part now on the parent trace and stage
    the unknown part. `tangent_constants`: residuals made of literals alone (the zeros its JVP
    instantiates for tangents) are made on the unknown side, as JAX's scan linearization
    instantiates them in its tangent function. `forwardable(primal)`: whether a residual that
    is that operand may be passed on as it is (default: all may). Returns the rule."""
    def rule(primals, tangents, **params):
        nz = [_nonzero(t) for t in tangents]
        n, box = len(primals), []

        def jvp_of_prim(*args):
            nz_t = iter(args[n:])
            tans = [next(nz_t) if z else Zero.from_primal(p) for p, z in zip(primals, nz)]
            outs, out_t = jvp_flat(lambda *xs: prim.bind(*xs, **params), args[:n], tans)
            box.append([type(t) is not Zero for t in out_t])
            return list(outs) + [t for t in out_t if type(t) is not Zero]

        nz_tangents = [t for t, z in zip(tangents, nz) if z]
        closed = stage_closed(jvp_of_prim, [typed_aval(x) for x in list(primals) + nz_tangents])
        pinned = [v for v, p in zip(closed.jaxpr.invars, primals)
                  if forwardable is not None and not forwardable(p)]
        with not_forwarded(pinned):
            known, unknown, out_uk, n_res = partial_eval_jaxpr(closed, [False] * n + [True] * sum(nz))
        if tangent_constants:
            known, unknown, n_res = _constants_to_unknown(known, unknown, n_res)
        known_outs = jx.jaxpr_as_fun(known, jx.literal_array)(*primals)
        n_known = len(known_outs) - n_res
        with set_current_trace(_tangent_side(current_trace())):
            unknown_outs = iter(jx.jaxpr_as_fun(unknown, jx.literal_array)(
                *known_outs[n_known:], *nz_tangents))
        known_outs = iter(known_outs[:n_known])
        outs = [next(unknown_outs) if uk else next(known_outs) for uk in out_uk]
        n_out = len(box[0])
        out_t = iter(outs[n_out:])
        return outs[:n_out], [next(out_t) if z else Zero.from_primal(p)
                              for p, z in zip(outs[:n_out], box[0])]
    return rule


def _tangent_side(trace):
    """Where the unknown part is staged: the linear jaxpr under linearize (even its
    equations reading no tangent: instantiated zeros), else the current trace."""
    return trace.tangent_trace if isinstance(trace, TangentDispatchTrace) else trace


def _nonzero(t):
    return type(t) is not Zero and get_aval(t).dtype != dtypes.float0


def _constants_to_unknown(known, unknown, n_res):
    """Move the known equations computing residuals from literals alone (and nothing else
    the known side uses) to the start of the unknown side. Returns (known, unknown, n_res)."""
    kj, uj = known.jaxpr, unknown.jaxpr
    n_out = len(kj.outvars) - n_res
    res_in = dict(zip(kj.outvars[n_out:], uj.invars[:n_res]))
    used = {a for e in kj.eqns for a in e.invars if type(a) is not jx.Literal}
    used.update(a for a in kj.outvars[:n_out] if type(a) is not jx.Literal)
    moved = [e for e in kj.eqns if e.outvars and all(type(a) is jx.Literal for a in e.invars)
             and all(v in res_in and v not in used for v in e.outvars)]
    if not moved:
        return known, unknown, n_res
    gone = {v for e in moved for v in e.outvars}
    keep = [v not in gone for v in kj.outvars[n_out:]]
    known = jx.ClosedJaxpr(kj._replace(
        outvars=list(kj.outvars[:n_out]) + [v for v, k in zip(kj.outvars[n_out:], keep) if k],
        eqns=[e for e in kj.eqns if not any(v in gone for v in e.outvars)]), known.consts)
    remade = [e._replace(outvars=[res_in[v] for v in e.outvars]) for e in moved]
    unknown = jx.ClosedJaxpr(uj._replace(
        invars=[v for v, k in zip(uj.invars[:n_res], keep) if k] + list(uj.invars[n_res:]),
        eqns=remade + list(uj.eqns)), unknown.consts)
    return known, unknown, sum(keep)
