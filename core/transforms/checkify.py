"""checkify: an interpreter over a staged jaxpr threading an Error value through it; checks
(check_p, and the automatic ones of checkify_rules) update it; jit, remat, cond, while, scan,
custom_jvp/custom_vjp and shard_map run checkified bodies that take and return it."""
import numpy as np

from .. import jaxpr as jx
from .. import pytree
from ..primitives import elementwise as ew
from ..primitives import structural as st
from ..primitives.parallel import extend_axis_env
from ..sharding import P
from ..primitives.checkify import check_p
from ..primitives.control_flow.common import split
from ..primitives.control_flow.cond import cond_p
from ..primitives.control_flow.loops import running_lanes_bodies, scan_p, while_p
from ..trace import as_value, get_aval
from .checkify_errors import code_constant, constant, init_error, next_code
from .ad import Zero
from .checkpoint import remat_p
from .custom import custom_jvp_call_p
from .custom_vjp import custom_vjp_call_p
from .jit import jit_p
from .shard_map import _axis_sizes, shard_map_p
from .staging import stage_closed, trace_to_jaxpr

# primitive -> rule(error, enabled, *ins, **params) -> (error, outs); outs a list for
# multiple-result primitives. Primitives without one are bound unchanged.
error_checks = {}


def checkify(fun, errors):
    """fun as a function returning (Error, out), its checks in `errors` functionalized."""
    def checked(*args, **kwargs):
        out_tree = []

        def flat():  # the arguments are closed over, as JAX's: Python scalars stay Python
            leaves, tree = pytree.tree_flatten(fun(*args, **kwargs))
            out_tree.append(tree)
            return leaves
        jaxpr, consts = trace_to_jaxpr(flat, [])
        error, outs = checkify_jaxpr(jaxpr, consts, errors, init_error)
        return error, pytree.tree_unflatten(out_tree[0], [as_value(o) for o in outs])
    return checked


def checkify_jaxpr(jaxpr, consts, enabled, error, *args):
    """Evaluate jaxpr on the current trace, checking what `enabled` asks: (error, outs)."""
    state = [error]

    def apply(eqn, ins):
        rule = error_checks.get(eqn.primitive)
        if rule is None:
            return jx.bind_eqn(eqn, ins)
        state[0], outs = rule(state[0], enabled, *ins, **eqn.params)
        return outs if eqn.primitive.multiple_results else [outs]
    outs = jx.eval_jaxpr(jaxpr, consts, *args, apply=apply)
    return state[0], outs


def update_error(error, pred, code, metadata, payload, effect):
    """error with `pred`'s failure recorded in slot `effect`, unless that slot already
    failed (the first failure of each slot is kept). A new slot starts from False and code
    -1, as JAX's (so jaxprs show the same `or` and `select_n`)."""
    old = error._pred.get(effect)
    if old is None:
        old_pred, old_code = constant(np.False_), code_constant(-1)
        return error.updated(effect, ew.bitwise_or(old_pred, pred),
                             ew.select_n(old_pred, code, old_code), metadata, payload)
    if np.ndim(old) > np.ndim(pred):  # a slot batched by a shard_map, a check after it
        lead = np.shape(old)[:np.ndim(old) - np.ndim(pred)]
        pred, code = _lead(pred, lead), _lead(code, lead)
        payload = [_lead(x, lead) for x in payload]
    pred, code = ew.bitwise_or(old, pred), ew.select_n(old, code, error._code[effect])
    payload = [ew.select_n(old, new, cur) for new, cur in zip(payload, error._payload[effect])]
    return error.updated(effect, pred, code, metadata, payload)


def _lead(x, lead):
    """x broadcast to leading dimensions `lead`."""
    n, shape = len(lead), np.shape(x)
    return st.broadcast_in_dim(x, tuple(lead) + shape, tuple(range(n, n + len(shape))))


def assert_func(error, pred, exc):
    """Record a new check (failing where `pred`) with exception `exc`'s static data."""
    code = next_code()
    return update_error(error, pred, code_constant(code), {code: (type(exc), exc.static)},
                        exc.payload, exc.effect())


# ---------------------------------------------------------------- checkified bodies

def stage_checked(run, err_tree, in_avals, prefix=0):
    """A ClosedJaxpr (*first `prefix` inputs, *error leaves, *rest) -> (*error leaves, *outs)
    of run(error, head, rest) -> (error, outs), and the output error's tree."""
    out_tree = []

    def fun(*flat):
        head, err_leaves, rest = split(flat, [prefix, err_tree.num_leaves])
        err, outs = run(pytree.tree_unflatten(err_tree, err_leaves), head, rest)
        leaves, tree = pytree.tree_flatten(err)
        out_tree.append(tree)
        return leaves + list(outs)
    return stage_closed(fun, in_avals), out_tree[0]


def checked_closed(closed, enabled, err_tree, in_avals, prefix=0):
    """closed checkified by stage_checked (its first `prefix` inputs before the error)."""
    def run(err, head, rest):
        return checkify_jaxpr(closed.jaxpr, closed.consts, enabled, err, *head, *rest)
    return stage_checked(run, err_tree, in_avals, prefix)


def _effects(staged_tree):
    return set(pytree.tree_unflatten(staged_tree, [None] * staged_tree.num_leaves)._pred)


def _avals(xs):
    return [get_aval(x) for x in xs]


def _with_body_effects(error, stage):
    """error with placeholder slots for everything the bodies stage(leaves, tree) (a list of
    (closed, out_tree)) may record, so that they take and return errors of one type; returns
    (error, its leaves, the bodies staged on it)."""
    leaves, tree = pytree.tree_flatten(error)
    effects = set().union(*(_effects(t) for _, t in stage(leaves, tree)))
    error = error.with_placeholders(effects)
    leaves, tree = pytree.tree_flatten(error)
    return error, leaves, stage(leaves, tree)


def _split_error(outs, out_tree):
    """(Error, outs) from a call's outputs, the error leaves first."""
    err, outs = split(outs, [out_tree.num_leaves])
    return pytree.tree_unflatten(out_tree, err), outs


def _call_rule(prim):
    """jit and remat: the call of the checkified jaxpr, taking and returning the error."""
    def rule(error, enabled, *ins, jaxpr, **params):
        leaves, tree = pytree.tree_flatten(error)
        checked, out_tree = checked_closed(jaxpr, enabled, tree, _avals(leaves) + _avals(ins))
        outs = prim.bind(*leaves, *ins, jaxpr=checked, **params)
        return _split_error(outs, out_tree)
    return rule


def _custom_rule(prim, rule_param, wrap):
    """custom_jvp/custom_vjp calls: the function checkified (errors after the consts, in and
    out of one type); the user's rule, wrapped, passes the errors through unchanged."""
    def rule(error, enabled, *ins, call_jaxpr, num_consts, **params):
        consts, args = split(ins, [num_consts])

        def stage(leaves, tree):
            avals = _avals(consts) + _avals(leaves) + _avals(args)
            return [checked_closed(call_jaxpr, enabled, tree, avals, prefix=num_consts)]
        error, leaves, [(closed, out_tree)] = _with_body_effects(error, stage)
        params[rule_param] = wrap(params[rule_param], len(leaves))
        outs = prim.bind(*consts, *leaves, *args, call_jaxpr=closed, num_consts=num_consts,
                         **params)
        return _split_error(outs, out_tree)
    return rule


def _shard_map_rule(error, enabled, *ins, jaxpr, in_specs, out_specs, **params):
    """Each shard checks its part, taking the error replicated; the errors come out stacked
    along a new leading dimension split over the manual axes, one per shard (as JAX's: a
    batched Error whose messages say "at mapped index i")."""
    leaves, tree = pytree.tree_flatten(error)
    order = params["axis_names"]

    def run(err, head, rest):
        err, outs = checkify_jaxpr(jaxpr.jaxpr, jaxpr.consts, enabled, err, *rest)
        err_leaves, err_tree = pytree.tree_flatten(err)
        stacked = [st.expand_dims(x, (0,)) for x in err_leaves]
        return pytree.tree_unflatten(err_tree, stacked), outs
    with extend_axis_env(_axis_sizes(params["mesh"], order), params["check_vma"]):
        body, out_tree = stage_checked(run, tree, _avals(leaves) + list(jaxpr.in_avals))
    outs = shard_map_p.bind(*leaves, *ins, jaxpr=body, in_specs=(P(),) * len(leaves) + in_specs,
                            out_specs=(P(order),) * out_tree.num_leaves + out_specs, **params)
    return _split_error(outs, out_tree)


def _zero_tangents(xs):
    return [Zero(get_aval(x).to_tangent_aval()) for x in xs]


class _JvpPassingErrors:
    """A custom_jvp rule taking and returning the error leaves first (zero tangents)."""

    def __init__(self, jvp, n_err):
        self.jvp, self.n_err = jvp, n_err

    def __call__(self, primals, tangents):
        errs, primals = split(primals, [self.n_err])
        outs, out_tangents = self.jvp(primals, tangents[self.n_err:])
        return errs + list(outs), _zero_tangents(errs) + list(out_tangents)


class _VjpRulePassingErrors:
    """A custom_vjp rule (fwd, linear) taking and returning the error leaves first."""

    def __init__(self, rule, n_err):
        self.rule, self.n_err = rule, n_err

    def fwd(self, primals, perturbed):
        errs, primals = split(primals, [self.n_err])
        outs, residuals = self.rule.fwd(primals, perturbed[self.n_err:])
        return errs + list(outs), residuals

    def linear(self, residuals, tangents, out_avals):
        outs = self.rule.linear(residuals, tangents[self.n_err:], out_avals[self.n_err:])
        return [Zero(a) for a in out_avals[:self.n_err]] + list(outs)


def _cond_rule(error, enabled, index, *ops, branches):
    """Every branch takes and returns the error with the slots of all of them; the output
    error knows every branch's checks."""
    def stage(leaves, tree):
        return [checked_closed(b, enabled, tree, _avals(leaves) + _avals(ops)) for b in branches]

    error, leaves, staged = _with_body_effects(error, stage)
    outs = cond_p.bind(index, *leaves, *ops, branches=tuple(c for c, _ in staged))
    err, outs = _split_error(outs, staged[0][1])
    metadata = {}
    for _, t in staged:
        metadata.update(pytree.tree_unflatten(t, [None] * t.num_leaves)._metadata)
    return err.with_metadata(metadata), outs


def _scan_rule(error, enabled, *ins, jaxpr, num_consts, num_carry, length, **params):
    """The error is carried, after the consts."""
    consts, carry, xs = split(ins, [num_consts, num_carry])
    x_avals = [a.update(shape=a.shape[1:]) for a in _avals(xs)]

    def stage(leaves, tree):
        avals = _avals(consts) + _avals(leaves) + _avals(carry) + x_avals
        return [checked_closed(jaxpr, enabled, tree, avals, prefix=num_consts)]

    error, leaves, [(body, out_tree)] = _with_body_effects(error, stage)
    outs = scan_p.bind(*consts, *leaves, *carry, *xs, jaxpr=body, num_consts=num_consts,
                       num_carry=num_carry + len(leaves), length=length, **params)
    return _split_error(outs, out_tree)


BATCHED_WHILE = ("Checkify does not support batched while-loops (checkify-of-vmap-of-while). "
                 "\nHint: if possible, move the vmap to the outer level to get "
                 "vmap-of-checkify-of-while.")


def _while_rule(error, enabled, *ins, cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts):
    """The cond is checked on the initial carry, then after each body (as JAX does)."""
    if cond_jaxpr.out_avals[0].shape or body_jaxpr in running_lanes_bodies:
        raise ValueError(BATCHED_WHILE)
    cconsts, bconsts, carry = split(ins, [cond_nconsts, body_nconsts])
    error, _ = checkify_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, enabled, error,
                              *cconsts, *carry)

    def run(err, head, rest):
        cc, bc = split(head, [cond_nconsts])
        err, outs = checkify_jaxpr(body_jaxpr.jaxpr, body_jaxpr.consts, enabled, err, *bc, *rest)
        err, _ = checkify_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, enabled, err, *cc, *outs)
        return err, outs

    def stage(leaves, tree):
        avals = _avals(cconsts) + _avals(bconsts) + _avals(leaves) + _avals(carry)
        return [stage_checked(run, tree, avals, prefix=len(cconsts) + len(bconsts))]

    error, leaves, [(body, out_tree)] = _with_body_effects(error, stage)
    cond = stage_closed(lambda *flat: _unchecked_cond(cond_jaxpr, cond_nconsts, len(leaves), flat),
                        _avals(cconsts) + _avals(leaves) + _avals(carry))
    outs = while_p.bind(*cconsts, *cconsts, *bconsts, *leaves, *carry, cond_jaxpr=cond,
                        cond_nconsts=cond_nconsts, body_jaxpr=body,
                        body_nconsts=cond_nconsts + body_nconsts)
    return _split_error(outs, out_tree)


def _unchecked_cond(cond_jaxpr, nconsts, n_err, flat):
    consts, _, carry = split(flat, [nconsts, n_err])
    return jx.eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *consts, *carry)


def _check_rule(error, enabled, *args, err_tree, debug):
    """A check's error joins checkify's when its kind is enabled (else it is dropped, as in
    JAX 0.10.2)."""
    new = pytree.tree_unflatten(err_tree, args)
    for e, pred in new._pred.items():
        if e.error_type in enabled:
            error = update_error(error, pred, new._code[e], {}, new._payload[e], e)
    return error.with_metadata(new._metadata), []


error_checks[jit_p] = _call_rule(jit_p)
error_checks[remat_p] = _call_rule(remat_p)
error_checks[shard_map_p] = _shard_map_rule
error_checks[custom_jvp_call_p] = _custom_rule(custom_jvp_call_p, "jvp", _JvpPassingErrors)
error_checks[custom_vjp_call_p] = _custom_rule(custom_vjp_call_p, "rule", _VjpRulePassingErrors)
error_checks[while_p] = _while_rule
error_checks[check_p] = _check_rule
error_checks[cond_p] = _cond_rule
error_checks[scan_p] = _scan_rule
