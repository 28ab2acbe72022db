"""Partial evaluation of a jaxpr: split it into a known part and an unknown part joined by
residuals. linearize uses it for higher-order primitives (jit, cond, while, scan, shard_map),
whose `partial_eval` rules split one equation of theirs the same way."""
import contextlib
import threading

from .. import jaxpr as jx
from .dce import dce_closed

_pinned = threading.local()


@contextlib.contextmanager
def not_forwarded(atoms):
    """While partially evaluating: residuals that are these outer atoms are not forwarded
    but made by the known side (JAX's scan linearization forwards no NumPy array)."""
    before = getattr(_pinned, "atoms", frozenset())
    _pinned.atoms = before | set(atoms)
    try:
        yield
    finally:
        _pinned.atoms = before


def forwardable(atom):
    """Whether a residual that is the outer atom `atom` may be passed on as it is."""
    return atom not in getattr(_pinned, "atoms", ())


def partial_eval_jaxpr(closed, unknowns, instantiate=False, dce=False):
    """Split `closed` into known: known inputs -> (known outputs..., residuals...) and
    unknown: (residuals..., unknown inputs...) -> outputs marked unknown. Outputs marked in
    `instantiate` (a bool or one per output) are made unknown even when they could be known:
    the known value then travels to the unknown side as one more residual. Returns
    (known ClosedJaxpr, unknown ClosedJaxpr, out_unknowns, num_residuals). With `dce`, both
    sides lose the equations none of their outputs needs, as JAX's linearize_jaxpr leaves
    them (the primitives' rules partially evaluating their bodies ask for it)."""
    known, unknown, out_uk, n_res = _split(closed, unknowns)
    if dce:
        known, unknown = dce_closed(known)[0], dce_closed(unknown)[0]
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(out_uk)
    force = [bool(inst) and not uk for inst, uk in zip(instantiate, out_uk)]
    if not any(force):
        return known, unknown, out_uk, n_res
    return _force_unknown(known, unknown, out_uk, n_res, force)


def _split(closed, unknowns):
    jaxpr = closed.jaxpr
    unknown_vars = {v for v, u in zip(jaxpr.invars, unknowns) if u}
    known_eqns, unknown_eqns = [], []
    for eqn in jaxpr.eqns:
        ins_unknown = [type(v) is not jx.Literal and v in unknown_vars for v in eqn.invars]
        if not any(ins_unknown):
            known_eqns.append(eqn)
            continue
        rule = eqn.primitive.partial_eval
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
    residuals = _residuals(unknown_eqns, defined_unknown)
    known_outs = [v for v, u in zip(jaxpr.outvars, out_unknowns) if not u]
    known = jx.Jaxpr(jaxpr.constvars, [v for v, u in zip(jaxpr.invars, unknowns) if not u],
                     known_outs + residuals, known_eqns)
    unknown = jx.Jaxpr([], residuals + [v for v, u in zip(jaxpr.invars, unknowns) if u],
                       [v for v, u in zip(jaxpr.outvars, out_unknowns) if u], unknown_eqns)
    jx.typecheck_jaxpr(known)
    jx.typecheck_jaxpr(unknown)
    return (jx.ClosedJaxpr(known, closed.consts), jx.ClosedJaxpr(unknown, []),
            out_unknowns, len(residuals))


def _residuals(unknown_eqns, defined_unknown):
    """Known variables the unknown side reads, in first-use order, without duplicates."""
    seen, res = set(), []
    for v in (v for e in unknown_eqns for v in e.invars):
        if type(v) is jx.Literal or v in defined_unknown or v in seen:
            continue
        seen.add(v)
        res.append(v)
    return res


def _force_unknown(known, unknown, out_uk, n_res, force):
    """Known outputs marked in `force` become extra residuals passed straight through."""
    kj, uj = known.jaxpr, unknown.jaxpr
    n_known = len(kj.outvars) - n_res
    known_pos = [i for i, uk in enumerate(out_uk) if not uk]
    moved = {i: atom for i, atom in zip(known_pos, kj.outvars[:n_known]) if force[i]}
    fresh = {i: jx.Var(atom.aval) for i, atom in moved.items()}
    still_known = [a for i, a in zip(known_pos, kj.outvars[:n_known]) if not force[i]]
    known = jx.with_binders(known, outvars=still_known + list(kj.outvars[n_known:])
                            + list(moved.values()))
    uk_outs = iter(uj.outvars)
    new_out = [fresh[i] if force[i] else next(uk_outs) for i, uk in enumerate(out_uk)
               if uk or force[i]]
    unknown = jx.with_binders(unknown, invars=list(uj.invars[:n_res]) + list(fresh.values())
                              + list(uj.invars[n_res:]), outvars=new_out)
    return known, unknown, [a or b for a, b in zip(out_uk, force)], n_res + len(moved)
