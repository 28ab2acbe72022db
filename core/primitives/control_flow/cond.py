"""cond, with all of its rules, and the lax functions cond and switch that bind it.

  cond_p.bind(index, *operands, branches)
      index     int32[] scalar; an out-of-range index runs the nearest branch (clamped).
      branches  tuple of ClosedJaxprs, each (*operands) -> (*outs), all of identical type.
      results   branches[index](*operands).
"""
import collections

import numpy as np

from ... import dtypes, key_reuse, pytree
from ... import jaxpr as jx
from ...avals import same_type
from ...config import config
from ...errors import JAXTypeError
from ...primitive import make_primitive
from ...pytree_prefix import structure_differences
from ...sharding_types import typed_aval
from ...trace import as_value, get_aval
from ...transforms import partial_eval as pe
from ...transforms.dce import dce_closed, def_dce, has_effects, pruned
from ...transforms.ad import Zero, instantiate, is_undefined_primal
from ...transforms.batching import bdim_at_front, moveaxis
from ...transforms.jit_diagnostics import fun_sourceinfo
from ...transforms.jvp import jvp_jaxpr, stop_gradient
from ...transforms.linearize import linearize_by_partial_eval
from ...transforms.staging import stage_closed
from ...transforms.transpose import backward_pass
from ...transforms.vmap import batch_jaxpr, vmap_flat
from ...vma import jaxpr_vma
from .. import elementwise as ew
from ..arrays import empty_like_aval
from . import trace_cache
from .common import (any_columns, as_array, broadcast_pred, check_arity, check_inputs, fun_of,
                     is_concrete, listed, merge, nonzero, path_str, pick, short, tangents_out, trace_fun,
                     pcast_hint, same_typed, type_str, typed_as, why, cond_layouts)

cond_p = make_primitive("cond", multiple_results=True)


@cond_p.def_abstract_eval
def _cond_abstract_eval(index, *ops, branches):
    if not branches:
        raise jx.JaxprTypeError("cond requires at least one branch")
    if index.shape != () or index.dtype != np.int32:
        raise jx.JaxprTypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    for i, br in enumerate(branches):
        check_inputs(f"cond branch {i}", br.in_avals, ops)
        out0, out = branches[0].out_avals, br.out_avals
        if len(out) != len(out0) or not all(same_type(a, b) for a, b in zip(out0, out)):
            raise jx.JaxprTypeError(f"cond branches must have equal output types, got branch 0 "
                                    f"{short(out0)} and branch {i} {short(out)}")
    return list(branches[0].out_avals)


def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    nz = [nonzero(t) for t in tangents[1:]]
    n_in, n_out = len(ops), len(branches[0].out_avals)
    out_nz = any_columns(jvp_jaxpr(b, nz, [False] * n_out, [n_in], [n_out])[1] for b in branches)
    jvps = tuple(jvp_jaxpr(b, nz, out_nz, [n_in], [n_out])[0] for b in branches)
    outs = cond_p.bind(index, *ops, *pick(tangents[1:], nz), branches=jvps)
    return outs[:n_out], tangents_out(outs[:n_out], out_nz, outs[n_out:])


def _cond_partial_eval(eqn, unknowns):
    """Known cond: known operands -> known outputs and residuals; unknown cond: those -> the
    rest. The branches share residual slots as JAX's _merge_branch_residuals shares them: a
    branch's k-th residual of a type goes in that type's k-th slot, and a branch fills the
    slots it does not use with empty values."""
    index_uk, ops_uk = unknowns[0], unknowns[1:]
    branches, n_out = eqn.params["branches"], len(eqn.outvars)
    if index_uk:
        return [], [eqn], [True] * n_out
    out_uk = any_columns(pe.partial_eval_jaxpr(b, ops_uk)[2] for b in branches)
    splits = [pe.partial_eval_jaxpr(b, ops_uk, out_uk, dce=True) for b in branches]
    res_avals = [k.out_avals[len(k.out_avals) - n_res:] for k, _, _, n_res in splits]
    slots, places = _residual_slots(res_avals)
    n_known = n_out - sum(out_uk)
    known = tuple(_with_residual_slots(s[0], p, slots, n_known) for s, p in zip(splits, places))
    unknown = tuple(_with_residual_inputs(s[1], p, slots) for s, p in zip(splits, places))
    res_vars = [jx.Var(a) for a in slots]
    index, ops = eqn.invars[0], eqn.invars[1:]
    k_outs = pick(eqn.outvars, out_uk, False) + res_vars
    k_eqn = jx.JaxprEqn(cond_p, [index] + pick(ops, ops_uk, False), k_outs, dict(branches=known))
    u_eqn = jx.JaxprEqn(cond_p, [index] + res_vars + pick(ops, ops_uk), pick(eqn.outvars, out_uk),
                        dict(branches=unknown))
    return [k_eqn] if k_outs else [], [u_eqn] if any(out_uk) else [], out_uk


def _residual_slots(res_avals):
    """(the slots' types, each branch's slot per residual): the k-th residual of a type in a
    branch takes that type's k-th slot."""
    tagged = [_numbered(avals) for avals in res_avals]
    order = list(dict.fromkeys(t for branch in tagged for t in branch))
    slot_of = {t: i for i, t in enumerate(order)}
    return [a for a, _ in order], [[slot_of[t] for t in branch] for branch in tagged]


def _numbered(avals):
    """Each aval with the number of equal ones before it."""
    counts = collections.Counter()
    out = []
    for a in avals:
        out.append((a, counts[a]))
        counts[a] += 1
    return out


def _with_residual_slots(known, places, slots, n_known):
    def fun(*args):
        outs = fun_of(known)(*args)
        res = [empty_like_aval(a) for a in slots]
        for place, r in zip(places, outs[n_known:]):
            res[place] = r
        return outs[:n_known] + res
    return stage_closed(fun, known.in_avals)


def _with_residual_inputs(unknown, places, slots):
    invars = unknown.jaxpr.invars
    res = [jx.Var(a) for a in slots]
    for place, v in zip(places, invars[:len(places)]):
        res[place] = v
    return jx.with_binders(unknown, invars=res + list(invars[len(places):]))


@def_dce(cond_p)
def _cond_dce(used_outputs, eqn):
    """As JAX's _cond_dce_rule: every branch computes only the used outputs and reads the
    operands any branch needs; the index is always read."""
    if not any(used_outputs) and not has_effects(eqn):
        return [False] * len(eqn.invars), None
    branches = eqn.params["branches"]
    used = any_columns(dce_closed(b, used_outputs, False)[1] for b in branches)
    new = tuple(dce_closed(b, used_outputs, used)[0] for b in branches)
    used_inputs = [True] + used
    return used_inputs, pruned(eqn, used_inputs, used_outputs, dict(eqn.params, branches=new))


def _cond_transpose(cts, index, *ops, branches):
    if is_undefined_primal(index):
        raise ValueError("cond is not linear in its branch index")
    linear = [is_undefined_primal(x) for x in ops]
    if all(type(c) is Zero for c in cts):
        return [None] + [Zero(x.aval) if lin else None for x, lin in zip(ops, linear)]
    res = pick(ops, linear, False)
    ct_nz = [type(c) is not Zero for c in cts]
    in_avals = [typed_aval(x) for x in res + pick(cts, ct_nz)]
    transposed = tuple(_transpose_branch(b, linear, ct_nz, in_avals, len(res)) for b in branches)
    outs = cond_p.bind(index, *res, *pick(cts, ct_nz), branches=transposed)
    return [None] + merge(linear, outs, [None] * len(res))


def _transpose_branch(closed, linear, ct_nz, in_avals, n_res):
    def fun(*args):
        res, cts = iter(args[:n_res]), iter(args[n_res:])
        lin_in = [True if lin else next(res) for lin in linear]
        cts_out = [next(cts) if nz else Zero(a.to_tangent_aval())
                   for a, nz in zip(closed.out_avals, ct_nz)]
        cts_in = backward_pass(closed.jaxpr, closed.consts, lin_in, cts_out)
        return [instantiate(c) for c in pick(cts_in, linear)]
    return stage_closed(fun, in_avals)


def _cond_batch(axis_data, vals, dims, *, branches):
    vals = [as_array(v) for v in vals]
    if dims[0] is not None:
        return _cond_batched_index(axis_data, vals, dims, branches)
    index, ops, op_b = vals[0], vals[1:], [d is not None for d in dims[1:]]
    ops = [moveaxis(x, d, 0) if d is not None else x for x, d in zip(ops, dims[1:])]
    n_out = len(branches[0].out_avals)
    out_b = any_columns(batch_jaxpr(b, axis_data, op_b, [False] * n_out)[1] for b in branches)
    batched = tuple(batch_jaxpr(b, axis_data, op_b, out_b)[0] for b in branches)
    outs = cond_p.bind(index, *ops, branches=batched)
    return outs, [0 if b else None for b in out_b]


def _cond_batched_index(axis_data, vals, dims, branches):
    """A batched index runs every branch on every lane and selects, as JAX does. Each branch
    sees its operands through stop_gradient on lanes it does not own, so the gradient of a
    branch that was not taken (possibly inf or nan) cannot leak into them."""
    size = axis_data.size
    index, *ops = [bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    index = ew.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    branch_outs = []
    for i, br in enumerate(branches):
        owned = ew.eq(index, i)
        ops_i = [ew.select_n(broadcast_pred(owned, x), stop_gradient(x), x) for x in ops]
        branch_outs.append(vmap_flat(fun_of(br), ops_i, [0] * len(ops), axis_data))
    outs = [ew.select_n(broadcast_pred(index, col[0]), *col) for col in zip(*branch_outs)]
    return outs, [0] * len(outs)


def _cond_vma(eqn, ins, strict):
    """Outputs vary where any branch's do, and everywhere the index varies."""
    branches = [jaxpr_vma(b.jaxpr, ins[1:], strict) for b in eqn.params["branches"]]
    return [ins[0].union(*outs) for outs in zip(*branches)]


cond_p.def_jvp(_cond_jvp)
cond_p.def_linearize(linearize_by_partial_eval(cond_p))
cond_p.def_transpose(_cond_transpose)
cond_p.def_batch(_cond_batch)
cond_p.def_partial_eval(_cond_partial_eval)
cond_p.def_vma(_cond_vma)
cond_p.def_sharding(typed_as(lambda branches, **_: branches[0].out_avals, cond_layouts))


@cond_p.def_key_reuse
def _cond_key_reuse(avals, keys, *, branches):
    """As JAX: what any branch consumes is consumed, what every branch passes on is passed on,
    and an output is fresh where the branches making it fresh all make it so."""
    sigs = [key_reuse.closed_signature(b, keys[1:]) for b in branches]
    sinks, sources = {}, {}
    for sig in sigs:
        for s in sig.sinks:
            sinks[s.idx] = np.logical_or(sinks.get(s.idx, False), s.mask)
        for s in sig.sources:
            sources[s.idx] = np.logical_and(sources.get(s.idx, True), s.mask)
    forwards = set.intersection(*(set(sig.forwards) for sig in sigs))
    return key_reuse.Signature(
        *(key_reuse.Sink(i + 1, m) for i, m in sinks.items()),
        *(key_reuse.Source(i, m) for i, m in sources.items()),
        *(key_reuse.Forward(f.in_idx + 1, f.out_idx) for f in forwards),
        keys_out=tuple(sorted(set().union(*(sig.keys_out for sig in sigs)))))


# ---------------------------------------------------------------- lax.cond, lax.switch

_NO_OPERAND = object()


def _operands(operands, operand):
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                        f"passed, got operand={operand} and positional operands {operands}")
    return (operand,)


def _predicate(pred):
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, (list, tuple, str)):
        raise TypeError(f"Pred must be a scalar, got {pred} of type {type(pred)}")
    pred = _as_value_or(pred, f"Pred type must be either boolean or number, got {pred}.")
    aval = get_aval(pred)
    if aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {aval.shape}.")
    if aval.dtype == np.bool_:
        return pred
    if dtypes.kind(aval.dtype) in "iuf":
        return ew.ne(pred, 0)
    raise TypeError(f"Pred type must be either boolean or number, got {aval.dtype.name}.")


def _as_value_or(x, message):
    """as_value(x), or a TypeError with JAX's `message` for what is no JAX value."""
    try:
        return as_value(x)
    except TypeError as err:
        if isinstance(err, JAXTypeError):
            raise
        raise TypeError(message) from None


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """true_fun(*operands) if pred else false_fun(*operands), as one `cond` primitive.

    Both branches are traced; they must return the same pytree of the same types. pred is a
    boolean (or number, compared with 0) scalar. Under vmap with a batched pred both branches
    run and the results are selected."""
    if not (callable(true_fun) and callable(false_fun)):
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            # JAX's deprecated form cond(pred, true_operand, true_fun, false_operand, false_fun)
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    operands = _operands(operands, operand)
    check_arity("cond", (true_fun, false_fun), ("true_fun", "false_fun"), operands)
    pred = _predicate(pred)
    if config.read("jax_disable_jit") and is_concrete(pred):
        return true_fun(*operands) if bool(pred) else false_fun(*operands)
    index = ew.convert_element_type(pred, np.int32)
    return _bind_cond(index, (false_fun, true_fun), operands, "cond", ("false_fun", "true_fun"),
                      compare=(1, 0))


def switch(index, branches, *operands, operand=_NO_OPERAND):
    """branches[clamp(0, index, len(branches) - 1)](*operands), as one `cond` primitive."""
    branches = tuple(branches)
    if not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    operands = _operands(operands, operand)
    check_arity("switch", branches, [f"branch {i}" for i in range(len(branches))], operands)
    if isinstance(index, (list, tuple)):
        raise TypeError(f"Branch index must be scalar, got {index} of shape {np.shape(index)}.")
    index = _as_value_or(index, f"Index type must be an integer, got {index}.")
    aval = get_aval(index)
    if aval.shape != ():
        raise TypeError(f"Branch index must be scalar, got {index} of shape {aval.shape}.")
    if dtypes.kind(aval.dtype) not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {aval.dtype.name}")
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    index = ew.convert_element_type(index, np.int32)
    index = ew.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    if config.read("jax_disable_jit") and is_concrete(index):
        return branches[int(index)](*operands)
    # JAX's names of the branches in its output checks (the second and later without a space)
    names = ("branch 0",) + tuple(f"branch{i}" for i in range(1, len(branches)))
    return _bind_cond(index, branches, operands, "switch", names, range(len(branches)))


def _bind_cond(index, funs, operands, api_name, names, compare):
    """Bind cond_p on funs traced at the operands; branch compare[0] is checked against the
    others, as JAX does (true_fun first for cond), and `names` label them in errors."""
    leaves, in_tree = pytree.tree_flatten(operands)
    in_avals = [typed_aval(x) for x in leaves]  # concrete values on Explicit axes: typed
    branches, consts, out_tree = trace_cache.cached(
        funs, (api_name, in_tree, tuple(in_avals)),
        lambda: _trace_branches(funs, in_tree, in_avals, api_name, names, compare),
        lambda traced: traced[1])
    outs = cond_p.bind(index, *consts, *leaves, branches=branches)
    return pytree.tree_unflatten(out_tree, outs)


def _trace_branches(funs, in_tree, in_avals, api_name, names, compare):
    """(branch jaxprs taking the captured values first, those values, the output tree)."""
    by_fun = {}  # a function given for several branches is traced once (as JAX's cache)
    traced = [by_fun[f] if f in by_fun else by_fun.setdefault(
        f, trace_fun(lambda ops, f=f: f(*ops), in_tree, in_avals)) for f in funs]
    first, *rest = compare
    for i in rest:
        _check_branch_outputs(api_name, (names[first], funs[first]), traced[first],
                              (names[i], funs[i]), traced[i])
    consts, const_avals, positions = _common_consts(traced)
    branches = tuple(_with_const_inputs(closed, pos, const_avals)
                     for (closed, _, _), pos in zip(traced, positions))
    return branches, consts, traced[0][2]


def _common_consts(traced):
    """The values captured by any branch, once each: (values, avals, per-branch positions)."""
    values, avals, where = [], [], {}
    positions = []
    for closed, consts, _ in traced:
        for c, a in zip(consts, closed.in_avals):
            if id(c) not in where:
                where[id(c)] = len(values)
                values.append(c)
                avals.append(a)
        positions.append([where[id(c)] for c in consts])
    return values, avals, positions


def _with_const_inputs(closed, positions, const_avals):
    """A branch taking every branch's captured values first (ignoring the others')."""
    invars = closed.jaxpr.invars
    own = dict(zip(positions, invars[:len(positions)]))
    const_vars = [own[k] if k in own else jx.Var(a) for k, a in enumerate(const_avals)]
    return jx.with_binders(closed, invars=const_vars + list(invars[len(positions):]))


def _check_branch_outputs(api_name, named0, traced0, named, traced):
    """JAX's TypeError for branches of other output structures or types; `named0`, `named`:
    (name, function) of the two branches."""
    (closed0, _, tree0), (closed, _, tree) = traced0, traced
    (name0, fun0), (name, fun) = named0, named
    where = f"{name0} is {fun_sourceinfo(fun0)}\n{name} is {fun_sourceinfo(fun)}\n\n"
    if tree0 != tree:
        diffs = structure_differences(tree0, tree, name0, name)
        raise TypeError(f"{api_name} branch outputs must have the same pytree structure, but "
                        "they differ:\n\n" + where + "".join(d + "\n\n" for d in diffs) +
                        f"Revise {name0} and/or {name} so that they have the same pytree "
                        "structure.")
    outs0, outs = closed0.out_avals, closed.out_avals
    diffs = [f"the output of {name0}{path_str(tree0, i)} has type {type_str(a)} but the "
             f"corresponding output of {name} has type {type_str(b)}{why(a, b)}"
             for i, (a, b) in enumerate(zip(outs0, outs)) if not same_typed(a, b)]
    if diffs:
        hint = pcast_hint([  # JAX's hint, whose tuple is the other branch's extra axes
            f"applying `jax.lax.pcast(..., {tuple(a1.vma - a2.vma)}, to='varying')` to the "
            f"output of {n}{path_str(tree0, i)}"
            for i, (a, b) in enumerate(zip(outs0, outs)) if not same_typed(a, b)
            for n, a1, a2 in ((name0, b, a), (name, a, b)) if a2.vma - a1.vma], loop=False)
        raise TypeError(f"{api_name} branches must have equal output types but they differ.\n\n"
                        + where + listed(diffs) + f"\n{hint}Revise {name0} and/or {name} so that all "
                        "output types match.")
