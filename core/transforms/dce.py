"""Dead-code elimination of jaxprs, as JAX's `pe.dce_jaxpr`: drop the equations whose results
nothing uses and that have no effects; call-like and control-flow primitives prune their own
bodies (and unused outputs, carries and operands) through a per-primitive rule."""
from .. import jaxpr as jx

# Primitives whose equations are kept even when their results are unused (JAX's effects that
# are not `dceable_effects`: callbacks with side effects, checks, writes to references).
EFFECTFUL = {"debug_callback", "debug_print", "io_callback", "check", "inspect_sharding",
             "swap", "addupdate", "free_ref", "freeze"}

# {primitive: rule(used_outputs, eqn) -> (used_inputs, new eqn or None)}
DCE_RULES = {}


def def_dce(prim):
    """Register `prim`'s DCE rule (a decorator): rule(used_outputs, eqn) returns which
    operands the kept equation reads and the equation to keep (None: drop it)."""
    def register(rule):
        DCE_RULES[prim] = rule
        return rule
    return register


def has_effects(eqn):
    """Whether the equation must stay even when its results are unused: an effectful
    primitive, no results at all, or an effect anywhere in a jaxpr it holds."""
    if eqn.primitive.name in EFFECTFUL or not eqn.outvars:
        return True
    return any(jaxpr_has_effects(j) for j in jx.subjaxprs(eqn.params.values()))


def jaxpr_has_effects(jaxpr):
    """Whether any equation of `jaxpr` (or of the jaxprs it holds) has effects."""
    return any(has_effects(e) for e in jaxpr.eqns)


def dce_jaxpr(jaxpr, used_outputs, instantiate=False):
    """(the Jaxpr computing only the outputs marked in `used_outputs` (a bool or one per
    output), used_inputs): its invars are those used or marked in `instantiate` (a bool or
    one per input). Constvars are kept. Equations with effects are never dropped."""
    used_outputs = _per(used_outputs, jaxpr.outvars)
    instantiate = _per(instantiate, jaxpr.invars)
    used = set()
    _mark(used, jaxpr.outvars, used_outputs)
    kept = []
    for eqn in reversed(jaxpr.eqns):
        rule = DCE_RULES.get(eqn.primitive, default_rule)
        used_ins, new = rule([v in used for v in eqn.outvars], eqn)
        if new is not None:
            kept.append(new)
            _mark(used, eqn.invars, used_ins)
    used_inputs = [v in used or inst for v, inst in zip(jaxpr.invars, instantiate)]
    new = jx.Jaxpr(jaxpr.constvars, [v for v, u in zip(jaxpr.invars, used_inputs) if u],
                   [v for v, u in zip(jaxpr.outvars, used_outputs) if u], kept[::-1])
    return new, used_inputs


def dce_closed(closed, used_outputs=True, instantiate=True):
    """dce_jaxpr on a ClosedJaxpr (its consts kept): (ClosedJaxpr, used_inputs). By default
    every output is computed and every input kept: only dead equations go."""
    new, used_inputs = dce_jaxpr(closed.jaxpr, used_outputs, instantiate)
    return jx.ClosedJaxpr(new, closed.consts), used_inputs


def dce_consts(jaxpr, consts):
    """(jaxpr without dead equations and without the constvars nothing reads, their
    consts), as JAX's dce_jaxpr_consts on linearize's tangent jaxpr."""
    new, _ = dce_jaxpr(jaxpr, True, True)
    read = {a for e in new.eqns for a in e.invars} | set(new.outvars)
    keep = [v in read for v in new.constvars]
    return (new._replace(constvars=[v for v, k in zip(new.constvars, keep) if k]),
            [c for c, k in zip(consts, keep) if k])


def _per(flag, vs):
    return [flag] * len(vs) if isinstance(flag, bool) else list(flag)


def _mark(used, atoms, flags):
    used.update(a for a, f in zip(atoms, flags) if f and type(a) is not jx.Literal)


def default_rule(used_outputs, eqn):
    """Drop an equation whose results are unused and that has no effects; else keep it
    whole, reading every operand."""
    if not any(used_outputs) and not has_effects(eqn):
        return [False] * len(eqn.invars), None
    return [True] * len(eqn.invars), eqn


def call_rule(param="jaxpr", per_input=(), per_output=()):
    """The rule of a call-like primitive applying the ClosedJaxpr in `param`: its body keeps
    what the used outputs need; unused operands and outputs go, and with them the entries of
    the params holding one value per operand (`per_input`) or per output (`per_output`)."""
    def rule(used_outputs, eqn):
        if not any(used_outputs) and not has_effects(eqn):
            return [False] * len(eqn.invars), None
        body, used_inputs = dce_closed(eqn.params[param], used_outputs, False)
        params = dict(eqn.params, **{param: body})
        params.update({k: _kept(params[k], used_inputs) for k in per_input})
        params.update({k: _kept(params[k], used_outputs) for k in per_output})
        return used_inputs, pruned(eqn, used_inputs, used_outputs, params)
    return rule


def _kept(values, flags):
    return tuple(v for v, f in zip(values, flags) if f)


def pruned(eqn, used_inputs, used_outputs, params):
    """eqn with only the marked operands and results, and `params`."""
    return eqn._replace(invars=[v for v, u in zip(eqn.invars, used_inputs) if u],
                        outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
                        params=params)

