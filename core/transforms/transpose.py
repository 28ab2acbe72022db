"""Reverse mode: transpose a linear jaxpr by running its equations backwards (backward_pass)."""
from .. import jaxpr as jx
from .. import source_info
from ..state import is_ref_type
from .ad import UndefinedPrimal, Zero, add_tangents, zero_ref


def backward_pass(jaxpr, consts, linear_in, cts_out, wanted=None, accumulated=None,
                  transform=None):
    """Cotangents of jaxpr's inputs. `linear_in[i]` says invar i is linear (an UndefinedPrimal);
    the others take values from `args` passed as consts+known inputs. Returns a list (Zero for
    inputs that get no cotangent). With `wanted` (a bool per invar), equations that cannot
    reach a wanted input's cotangent are not transposed (the others' cotangents are partial).
    `accumulated` ({invar index: cotangent}) starts inputs' sums (a loop's running sums, which
    each cotangent is added to as it is made, as JAX's ValAccum). Each equation is transposed
    under the names it was staged in, after `transform` (jax.vjp's "transpose") as JAX's."""
    known = dict(zip(jaxpr.constvars, consts))
    linear_vars = set()
    for v, lin in zip(jaxpr.invars, linear_in):
        if lin is True:
            linear_vars.add(v)
        else:
            known[v] = lin
    linear_eqns = _forward_known(jaxpr, known, linear_vars)
    if wanted is not None:
        linear_eqns = _reaching(linear_eqns, jaxpr.invars, wanted)
    ct_env = {jaxpr.invars[i]: ct for i, ct in (accumulated or {}).items()}
    for v, ct in zip(jaxpr.outvars, cts_out):
        _write_ct(ct_env, v, ct)
    for eqn in reversed(linear_eqns):
        cts = [_pop_ct(ct_env, v) for v in eqn.outvars]
        ins = [_linear_in(ct_env, v) if v in linear_vars else _read(known, v)
               for v in eqn.invars]
        rule = eqn.primitive.transpose
        if rule is None:
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                      f"'{eqn.primitive.name}' not implemented")
        with source_info.stack_of(eqn.source_info, transform):  # sums too, as JAX's
            cts_in = rule(cts if eqn.primitive.multiple_results else cts[0], *ins,
                          **eqn.params)
            for v, ct in zip(eqn.invars, cts_in):
                if v in linear_vars and ct is not None:
                    _write_ct(ct_env, v, ct)
    return [ct_env.get(v, Zero(v.aval.to_tangent_aval())) if lin is True else None
            for v, lin in zip(jaxpr.invars, linear_in)]


def _reaching(linear_eqns, invars, wanted):
    """The linear equations reading a value that depends on a wanted input (only their
    transposes send cotangent to it), and, to be safe, every one touching a reference."""
    live = {v for v, w in zip(invars, wanted) if w}
    kept = []
    for eqn in linear_eqns:
        if any(is_ref_type(v.aval) for v in (*eqn.invars, *eqn.outvars)) or \
                any(type(v) is not jx.Literal and v in live for v in eqn.invars):
            live.update(eqn.outvars)
            kept.append(eqn)
    return kept


def _linear_in(ct_env, v):
    """A linear input as its transpose rule sees it: UndefinedPrimal, or for a reference the
    reference accumulating its cotangent (made, zero, on first use), which the reference
    primitives' rules read and write."""
    if not is_ref_type(v.aval):
        return UndefinedPrimal(v.aval)
    ct = ct_env.get(v)
    if ct is None:
        ct = ct_env[v] = zero_ref(v.aval.to_tangent_aval())
    return ct


def _pop_ct(env, v):
    ct = env.pop(v, None)
    return Zero(v.aval.to_tangent_aval()) if ct is None else ct


def _read(env, v):
    if type(v) is jx.Literal:
        return jx.literal_value(v)
    return env[v]


def _write_ct(env, v, ct):
    if type(v) is jx.Literal or type(ct) is Zero or ct is None:
        return
    env[v] = add_tangents(env[v], ct) if v in env else ct


def _forward_known(jaxpr, known, linear_vars):
    """Evaluate equations that do not depend on linear inputs; return the linear ones."""
    linear_eqns = []
    for eqn in jaxpr.eqns:
        # a reference made in a linear jaxpr holds tangents: it is linear too
        if any(type(v) is not jx.Literal and v in linear_vars for v in eqn.invars) or \
                any(is_ref_type(v.aval) for v in eqn.outvars):
            linear_vars.update(eqn.outvars)
            linear_eqns.append(eqn)
            continue
        with source_info.stack_of(eqn.source_info):
            outs = eqn.primitive.bind(*[_read(known, v) for v in eqn.invars], **eqn.params)
        known.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
    return linear_eqns


def transpose_linear(jaxpr, residuals, cts_out):
    """Cotangents of every input of a linear jaxpr (all its invars linear)."""
    return backward_pass(jaxpr, residuals, [True] * len(jaxpr.invars), cts_out)
