"""Partial evaluation of a jaxpr: split it into a known part and an unknown part with residuals.
Used to linearize higher-order primitives (jit, and later cond/scan)."""
from .. import jaxpr as jx
from . import staging

# prim -> rule(eqn, unknowns_in) -> (known_eqns, unknown_eqns, residual vars) or None (default)
partial_eval_rules = {}


def partial_eval_jaxpr(closed, unknowns):
    """Split `closed` into known: known inputs -> (known outputs..., residuals...) and
    unknown: (residuals..., unknown inputs...) -> outputs marked unknown. Returns
    (known ClosedJaxpr, unknown ClosedJaxpr, out_unknowns, num_residuals)."""
    jaxpr = closed.jaxpr
    unknown_vars = {v for v, u in zip(jaxpr.invars, unknowns) if u}
    known_eqns, unknown_eqns = [], []
    for eqn in jaxpr.eqns:
        ins_unknown = [type(v) is not jx.Literal and v in unknown_vars for v in eqn.invars]
        if not any(ins_unknown):
            known_eqns.append(eqn)
            continue
        rule = partial_eval_rules.get(eqn.primitive)
        if rule is None:
            unknown_eqns.append(eqn)
            unknown_vars.update(eqn.outvars)
            continue
        k, u, outs_unknown = rule(eqn, ins_unknown)
        known_eqns.extend(k)
        unknown_eqns.extend(u)
        unknown_vars.update(v for v, uk in zip(eqn.outvars, outs_unknown) if uk)
    out_unknowns = [type(v) is not jx.Literal and v in unknown_vars for v in jaxpr.outvars]
    defined_unknown = set(v for v in jaxpr.invars if v in unknown_vars)
    for e in unknown_eqns:
        defined_unknown.update(e.outvars)
    residuals = _residuals(unknown_eqns, jaxpr.outvars, out_unknowns, defined_unknown)
    known_outs = [v for v, u in zip(jaxpr.outvars, out_unknowns) if not u]
    known = jx.Jaxpr(jaxpr.constvars, [v for v, u in zip(jaxpr.invars, unknowns) if not u],
                     known_outs + residuals, known_eqns)
    unknown = jx.Jaxpr([], residuals + [v for v, u in zip(jaxpr.invars, unknowns) if u],
                       [v for v, u in zip(jaxpr.outvars, out_unknowns) if u], unknown_eqns)
    jx.typecheck_jaxpr(known)
    jx.typecheck_jaxpr(unknown)
    return (jx.ClosedJaxpr(known, closed.consts), jx.ClosedJaxpr(unknown, []),
            out_unknowns, len(residuals))


def _residuals(unknown_eqns, outvars, out_unknowns, defined_unknown):
    """Known variables the unknown side reads, in first-use order, without duplicates."""
    seen, res = set(), []
    reads = [v for e in unknown_eqns for v in e.invars]
    for v in reads:
        if type(v) is jx.Literal or v in defined_unknown or v in seen:
            continue
        seen.add(v)
        res.append(v)
    return res


def stage(fun, in_avals):
    """Stage fun into (ClosedJaxpr, tracer consts), closure-converting captured tracers."""
    jaxpr, consts = staging.trace_to_jaxpr(fun, in_avals)
    return staging.closure_convert(jaxpr, consts)
