"""scan's partial evaluation (a known scan and an unknown scan joined by residuals, as JAX's
_scan_partial_eval) and its transpose (a reverse scan of the transposed body)."""
from ... import jaxpr as jx
from ...sharding_types import typed_aval
from ...transforms import partial_eval as pe
from ...transforms.dce import dce_closed, def_dce, has_effects, pruned
from ...transforms.ad import Zero, instantiate, is_undefined_primal, zeros_like_aval
from ...transforms.staging import stage_closed
from ...transforms.transpose import backward_pass
from .common import fixpoint, merge, pick, split, stacked, unstacked
from .hoisting import fresh_residuals, hoist_invariants
from .loops import _scan_params, scan_p


def _scan_partial_eval(eqn, unknowns):
    """Split a scan into a known scan (known carries and ys, plus the residuals the unknown
    side needs, stacked per iteration) and an unknown scan consuming them. A carry is unknown
    if its initial value or its update is (a fixpoint). Residuals that are known consts or xs
    of the body are passed along as they are rather than stacked."""
    p = eqn.params
    body, nc, nk = p["jaxpr"], p["num_consts"], p["num_carry"]
    n_ys = len(body.out_avals) - nk
    const_uk, init_uk, xs_uk = split(unknowns, [nc, nk])
    carry_uk = fixpoint(
        lambda uk: pe.partial_eval_jaxpr(body, const_uk + uk + xs_uk)[2][:nk], init_uk)
    body_uk = const_uk + carry_uk + xs_uk
    known, unknown, out_uk, n_res = pe.partial_eval_jaxpr(body, body_uk, carry_uk + [False] * n_ys,
                                                      dce=True)
    n_kc = nc - sum(const_uk)
    hoisted, known, k_consts, invariant = hoist_invariants(
        known, n_kc, pick(eqn.invars[:nc], const_uk, False), n_res)
    res_kind, res_outer = _classify_residuals(eqn, known, body_uk, invariant, len(k_consts), n_res)
    k_eqn = _known_scan(eqn, known, k_consts, body_uk, out_uk, res_kind, res_outer, n_res)
    u_eqn = _unknown_scan(eqn, fresh_residuals(unknown, n_res), body_uk, out_uk, res_kind,
                          res_outer, n_res)
    return hoisted + ([k_eqn] if k_eqn.outvars else []), [u_eqn] if any(out_uk) else [], out_uk


def _classify_residuals(eqn, known, body_uk, invariant, n_kc, n_res):
    """Per residual: 'const' (loop-invariant: a known const or hoisted, see hoisting.py) or
    'xs' (a known xs of the body), passed as its outer atom, or 'stacked' (an extra output of
    the known scan). Returns (kinds, outer atoms)."""
    kj = known.jaxpr
    nc, nk = eqn.params["num_consts"], eqn.params["num_carry"]
    xs_in, xs_uk = eqn.invars[nc + nk:], body_uk[nc + nk:]
    n_kk = nk - sum(body_uk[nc:nc + nk])
    forward = {v: ("const", outer) for v, outer in invariant.items()}
    for v, outer in zip(kj.invars[n_kc + n_kk:], pick(xs_in, xs_uk, False)):
        if pe.forwardable(outer):
            forward[v] = ("xs", outer)
    kinds, outers = [], []
    length = eqn.params["length"]
    for atom in kj.outvars[len(kj.outvars) - n_res:]:
        kind, outer = forward.get(atom, ("stacked", None)) if type(atom) is not jx.Literal \
            else ("stacked", None)
        kinds.append(kind)
        outers.append(outer if outer is not None else jx.Var(stacked(atom.aval, length)))
    return kinds, outers


def _known_scan(eqn, known, consts, body_uk, out_uk, res_kind, res_outer, n_res):
    p = eqn.params
    nc, nk = p["num_consts"], p["num_carry"]
    kj = known.jaxpr
    n_known_out = len(kj.outvars) - n_res
    stacked = [k == "stacked" for k in res_kind]
    body = jx.with_binders(known, outvars=list(kj.outvars[:n_known_out])
                    + pick(kj.outvars[n_known_out:], stacked))
    carry_uk = body_uk[nc:nc + nk]
    outvars = pick(eqn.outvars, out_uk, False) + pick(res_outer, stacked)
    params = _scan_params(body, p["length"], nk - sum(carry_uk), len(consts), p["reverse"], p["unroll"])
    operands = consts + pick(eqn.invars[nc:], body_uk[nc:], False)
    return jx.JaxprEqn(scan_p, operands, outvars, params)


def _unknown_scan(eqn, unknown, body_uk, out_uk, res_kind, res_outer, n_res):
    """Operands: const residuals and unknown consts | unknown carries | unknown xs, then the
    forwarded xs and stacked residuals in the order the body made them (as JAX's)."""
    p = eqn.params
    nc, nk = p["num_consts"], p["num_carry"]
    res_in, uk_in = unknown.jaxpr.invars[:n_res], unknown.jaxpr.invars[n_res:]
    const_res = [i for i, k in enumerate(res_kind) if k == "const"]
    ext_res = [i for i, k in enumerate(res_kind) if k != "const"]  # in order, as JAX's
    invars = [res_in[i] for i in const_res] + list(uk_in) + [res_in[i] for i in ext_res]
    operands = ([res_outer[i] for i in const_res] + pick(eqn.invars, body_uk)
                + [res_outer[i] for i in ext_res])
    params = _scan_params(jx.with_binders(unknown, invars=invars), p["length"],
                          sum(body_uk[nc:nc + nk]), len(const_res) + sum(body_uk[:nc]),
                          p["reverse"], p["unroll"])
    return jx.JaxprEqn(scan_p, operands, pick(eqn.outvars, out_uk), params)


def _scan_transpose(cts, *args, jaxpr, length, num_carry, num_consts, reverse, unroll,
                    _split_transpose=False):
    """A reverse scan of the transposed body. Its carry holds the cotangents of the carry and
    the running sums of the consts' cotangents; it scans the ys' cotangents (and known xs)
    and emits the xs' cotangents. Known consts and xs (residuals) are read, not transposed."""
    consts, init, xs = split(args, [num_consts, num_carry])
    const_lin = [is_undefined_primal(x) for x in consts]
    xs_lin = [is_undefined_primal(x) for x in xs]
    if all(type(c) is Zero for c in cts):
        return [Zero(x.aval) if is_undefined_primal(x) else None for x in args]
    ct_carry, ct_ys = split(cts, [num_carry])
    ys_nz = [type(c) is not Zero for c in ct_ys]
    ires, eres = pick(consts, const_lin, False), pick(xs, xs_lin, False)
    acc0 = [zeros_like_aval(x.aval) for x in pick(consts, const_lin)]
    ct_carry = [instantiate(c) for c in ct_carry]
    ct_ys = pick(ct_ys, ys_nz)
    in_avals = [typed_aval(v) for v in ires + acc0 + ct_carry] + [
        unstacked(typed_aval(v)) for v in ct_ys + eres]
    body = _transposed_body(jaxpr, const_lin, num_carry, xs_lin, ys_nz, in_avals)
    outs = scan_p.bind(*ires, *acc0, *ct_carry, *ct_ys, *eres, **_scan_params(
        body, length, len(acc0) + num_carry, len(ires), not reverse, unroll))
    ct_consts, ct_init, ct_xs = split(outs, [len(acc0), num_carry])
    return (merge(const_lin, ct_consts, [None] * len(ires))
            + [c if is_undefined_primal(x) else None for c, x in zip(ct_init, init)]
            + merge(xs_lin, ct_xs, [None] * len(eres)))


def _transposed_body(jaxpr, const_lin, num_carry, xs_lin, ys_nz, in_avals):
    n_ires, n_acc = const_lin.count(False), const_lin.count(True)
    n_ys = sum(ys_nz)
    y_avals = jaxpr.out_avals[num_carry:]

    def fun(*args):
        ires, acc, ct_carry, ct_ys, eres = split(args, [n_ires, n_acc, num_carry, n_ys])
        ires, eres, ct_ys = iter(ires), iter(eres), iter(ct_ys)
        # The carry is linear in an unknown scan even when its initial value is a known zero.
        lin_in = ([True if lin else next(ires) for lin in const_lin] + [True] * num_carry
                  + [True if lin else next(eres) for lin in xs_lin])
        cts_out = ct_carry + [next(ct_ys) if nz else Zero(a.to_tangent_aval())
                              for a, nz in zip(y_avals, ys_nz)]
        const_at = [i for i, lin in enumerate(const_lin) if lin]
        cts_in = backward_pass(jaxpr.jaxpr, jaxpr.consts, lin_in, cts_out,
                               accumulated=dict(zip(const_at, acc)))
        c_cts, k_cts, x_cts = split(cts_in, [len(const_lin), num_carry])
        new_acc = pick(c_cts, const_lin)
        return (new_acc + [instantiate(c) for c in k_cts]
                + [instantiate(c) for c in pick(x_cts, xs_lin)])

    return stage_closed(fun, in_avals)


scan_p.def_transpose(_scan_transpose)
scan_p.def_partial_eval(_scan_partial_eval)


@def_dce(scan_p)
def _scan_dce(used_outputs, eqn):
    """As JAX's _scan_dce_rule: a carry is kept when its result is used or a kept output
    reads it (a fixpoint); the body computes only what the kept outputs need."""
    if not any(used_outputs) and not has_effects(eqn):
        return [False] * len(eqn.invars), None
    p = eqn.params
    body, nc, nk = p["jaxpr"], p["num_consts"], p["num_carry"]
    used_carry, used_ys = split(used_outputs, [nk])
    n_xs = len(body.in_avals) - nc - nk

    def dce(carry):
        return dce_closed(body, carry + used_ys, [False] * nc + carry + [False] * n_xs)
    used_carry = fixpoint(lambda carry: dce(carry)[1][nc:nc + nk], used_carry)
    new_body, used_inputs = dce(used_carry)
    params = dict(p, jaxpr=new_body, num_consts=sum(used_inputs[:nc]), num_carry=sum(used_carry))
    return used_inputs, pruned(eqn, used_inputs, used_carry + used_ys, params)
