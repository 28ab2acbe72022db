"""Control flow primitives cond, while and scan with all their rules, and the lax functions
cond, switch, while_loop, fori_loop, scan and map that bind them.

Parameters (what a backend receives; every ClosedJaxpr may carry consts of its own):

  cond_p.bind(index, *operands, branches)
      index     int32[] scalar; an out-of-range index runs the nearest branch (clamped).
      branches  tuple of ClosedJaxprs, each (*operands) -> (*outs), all of identical type.
      results   branches[index](*operands).

  while_p.bind(*cond_consts, *body_consts, *init,
               body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts)
      cond_jaxpr   ClosedJaxpr (*cond_consts, *carry) -> bool[]
      body_jaxpr   ClosedJaxpr (*body_consts, *carry) -> (*carry)
      cond_nconsts, body_nconsts   ints: how many leading operands are each one's consts.
      results      the carry once cond_jaxpr returns False.

  scan_p.bind(*consts, *init, *xs,
              jaxpr, length, linear, num_carry, num_consts, reverse, unroll)
      jaxpr        ClosedJaxpr (*consts, *carry, *x_slices) -> (*carry, *y_slices)
      length       int: every x has leading dimension `length`; ys get one.
      reverse      bool: run i = length-1 .. 0 (ys[i] still comes from xs[i]).
      num_consts, num_carry   ints splitting the operands into consts, carry, xs.
      linear       tuple of bools, one per operand (informational, as in JAX).
      unroll       int >= 0, a performance hint without semantic effect.
      results      (*final carry, *stacked ys).

Params are bound in alphabetical order, so make_jaxpr prints them as JAX does.
"""
import numpy as np

from .. import dtypes, errors, pytree, runtime
from .. import jaxpr as jx
from ..avals import ShapedArray, same_type
from ..config import config
from ..primitive import make_primitive
from ..trace import Tracer, as_value, get_aval
from ..transforms import partial_eval as pe
from ..transforms import staging
from ..transforms.ad import (Zero, add_tangents, instantiate, is_undefined_primal,
                             zeros_like_aval)
from ..transforms.batching import bdim_at_front, moveaxis
from ..transforms.jvp import jvp_flat, stop_gradient
from ..transforms.transpose import backward_pass
from ..transforms.vmap import vmap_flat, vmap_flat_dims
from . import elementwise as ew
from . import structural as st

cond_p = make_primitive("cond", multiple_results=True)
while_p = make_primitive("while", multiple_results=True)
scan_p = make_primitive("scan", multiple_results=True)


# ---------------------------------------------------------------- small list helpers

def _split(xs, sizes):
    """xs cut into consecutive pieces of the given sizes, plus the rest as a last piece."""
    out, start = [], 0
    for n in sizes:
        out.append(list(xs[start:start + n]))
        start += n
    return out + [list(xs[start:])]


def _pick(xs, flags, want=True):
    return [x for x, f in zip(xs, flags) if bool(f) == want]


def _merge(flags, trues, falses):
    """Interleave two lists back into one: position i comes from `trues` where flags[i]."""
    trues, falses = iter(trues), iter(falses)
    return [next(trues) if f else next(falses) for f in flags]


def _or(xs, ys):
    return [bool(x or y) for x, y in zip(xs, ys)]


def _any_columns(rows):
    return [any(col) for col in zip(*rows)]


def _fixpoint(step, flags):
    """Grow `flags` (which carries are nonzero / unknown / batched) until one more pass of the
    loop body marks no new carry: a carry is flagged if its initial value or its update is."""
    while True:
        grown = _or(flags, step(flags))
        if grown == flags:
            return flags
        flags = grown


# ---------------------------------------------------------------- avals and values

def _stacked(aval, n):
    return ShapedArray((n,) + tuple(aval.shape), aval.dtype, aval.weak_type)


def _unstacked(aval):
    return ShapedArray(tuple(aval.shape[1:]), aval.dtype, aval.weak_type)


def _as_array(x):
    """Python scalars (how jaxpr literals come back) as weakly-typed arrays, for shape ops."""
    if dtypes.is_python_scalar(x):
        return ew.weak_scalar(x, dtypes.python_scalar_dtype(x))
    return x


def _nonzero(t):
    return type(t) is not Zero and get_aval(t).dtype != dtypes.float0


def _tangents_out(primals_out, out_nz, nz_tangents):
    nz_tangents = iter(nz_tangents)
    return [next(nz_tangents) if nz else Zero.from_primal(p) for p, nz in zip(primals_out, out_nz)]


def _short(avals):
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _check_inputs(what, expected, got):
    if len(expected) != len(got) or not all(same_type(a, b) for a, b in zip(expected, got)):
        raise jx.JaxprTypeError(f"{what} takes inputs of types {_short(expected)} but is "
                                f"applied to {_short(got)}")


def _is_concrete(x):
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None


# ---------------------------------------------------------------- jaxpr helpers

def _stage(fun, in_avals):
    """Trace a user function: (ClosedJaxpr whose captured values are leading inputs, those
    values). Captured values become operands so every transformation sees them."""
    jaxpr, consts = staging.trace_to_jaxpr(fun, in_avals)
    moved = jx.Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns)
    return jx.ClosedJaxpr(moved, []), consts


def _stage_closed(fun, in_avals):
    """Trace a rule's helper function to a ClosedJaxpr (concrete captured values stay consts)."""
    closed, tracer_consts = pe.stage(fun, in_avals)
    if tracer_consts:
        raise RuntimeError("internal error: a control-flow rule captured a traced value")
    return closed


def _rebuild(closed, invars=None, outvars=None):
    j = closed.jaxpr
    new = jx.Jaxpr(j.constvars, list(j.invars if invars is None else invars),
                   list(j.outvars if outvars is None else outvars), j.eqns)
    jx.typecheck_jaxpr(new)
    return jx.ClosedJaxpr(new, closed.consts)


def _eval_jaxpr(jaxpr, consts, *args):
    """Bind jaxpr's equations on the current trace. Literals are passed as arrays of their
    exact (weak) type rather than Python scalars, which some batching rules cannot take."""
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    read = lambda v: _literal_array(v) if type(v) is jx.Literal else env[v]  # noqa: E731
    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*[read(v) for v in eqn.invars], **eqn.params)
        env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
    return [read(v) for v in jaxpr.outvars]


def _literal_array(lit):
    return runtime.make_array(lit.val, lit.aval)


def _fun_of(closed):
    """closed as a function on the current trace."""
    return lambda *args: _eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _trace_fun(fun, in_tree, in_avals):
    """Stage fun(value) for a value of structure in_tree: (ClosedJaxpr taking the captured
    values and then the leaves, the captured values, the output tree)."""
    box = []

    def flat(*leaves):
        out_leaves, out_tree = pytree.tree_flatten(fun(pytree.tree_unflatten(in_tree, leaves)))
        box.append(out_tree)
        return out_leaves

    closed, consts = _stage(flat, in_avals)
    return closed, consts, box[0]


# ---------------------------------------------------------------- transformations of jaxprs

def _layout(groups, nonzeros):
    """[(index, is_tangent)] of a JVP jaxpr's binders: group by group, the primals and then
    that group's nonzero tangents (so a scan's consts, carry and xs each keep their tangents)."""
    layout, start = [], 0
    for n in groups:
        idx = range(start, start + n)
        layout += [(i, False) for i in idx] + [(i, True) for i in idx if nonzeros[i]]
        start += n
    return layout


def _jvp_jaxpr(closed, nonzeros, instantiate_out, in_groups, out_groups):
    """The JVP of a closed jaxpr with binders laid out by `_layout`. Output tangents are
    emitted where nonzero or asked by `instantiate_out`. Returns (ClosedJaxpr, out_nonzeros)."""
    avals = closed.in_avals
    in_layout = _layout(in_groups, nonzeros)
    box = []

    def fun(*args):
        primals = [None] * len(avals)
        tangents = [Zero(a.to_tangent_aval()) for a in avals]
        for (i, is_tangent), x in zip(in_layout, args):
            (tangents if is_tangent else primals)[i] = x
        outs, out_t = jvp_flat(_fun_of(closed), primals, tangents)
        out_nz = [type(t) is not Zero or bool(inst) for t, inst in zip(out_t, instantiate_out)]
        box.append(out_nz)
        return [instantiate(out_t[i]) if t else outs[i] for i, t in _layout(out_groups, out_nz)]

    in_avals = [avals[i].to_tangent_aval() if t else avals[i] for i, t in in_layout]
    return _stage_closed(fun, in_avals), box[0]


def _batch_jaxpr(closed, axis_data, in_batched, instantiate_out):
    """closed vmapped along axis 0 of its batched inputs; an output is batched (at 0) where the
    body makes it so or `instantiate_out` asks. Returns (ClosedJaxpr, out_batched)."""
    size = axis_data.size
    in_avals = [_stacked(a, size) if b else a for a, b in zip(closed.in_avals, in_batched)]
    box = []

    def fun(*args):
        in_dims = [0 if b else None for b in in_batched]
        outs, dims = vmap_flat_dims(_fun_of(closed), args, in_dims, axis_data)
        out_b = [d is not None or bool(inst) for d, inst in zip(dims, instantiate_out)]
        box.append(out_b)
        return [bdim_at_front(_as_array(o), d, size) if b else o
                for o, d, b in zip(outs, dims, out_b)]

    return _stage_closed(fun, in_avals), box[0]


def _partial_eval(closed, unknowns, instantiate_out):
    """pe.partial_eval_jaxpr, with the outputs marked in `instantiate_out` made unknown: a
    known value forced unknown travels to the unknown side as one more residual."""
    known, unknown, out_uk, n_res = pe.partial_eval_jaxpr(closed, unknowns)
    force = [bool(inst) and not uk for inst, uk in zip(instantiate_out, out_uk)]
    if not any(force):
        return known, unknown, out_uk, n_res
    kj, uj = known.jaxpr, unknown.jaxpr
    n_known = len(kj.outvars) - n_res
    known_pos = [i for i, uk in enumerate(out_uk) if not uk]
    moved = {i: atom for i, atom in zip(known_pos, kj.outvars[:n_known]) if force[i]}
    fresh = {i: jx.Var(atom.aval) for i, atom in moved.items()}
    still_known = [a for i, a in zip(known_pos, kj.outvars[:n_known]) if not force[i]]
    known = _rebuild(known, outvars=still_known + list(kj.outvars[n_known:])
                     + list(moved.values()))
    uk_outs = iter(uj.outvars)
    new_out = [fresh[i] if force[i] else next(uk_outs) for i, uk in enumerate(out_uk)
               if uk or force[i]]
    unknown = _rebuild(unknown, invars=list(uj.invars[:n_res]) + list(fresh.values())
                       + list(uj.invars[n_res:]), outvars=new_out)
    return known, unknown, _or(out_uk, force), n_res + len(moved)


def _linearize_rule(prim):
    """prim.linearize for a loop or branch primitive: stage the JVP of this one application,
    split it with primals known and tangents unknown (the primitive's partial-eval rule does
    the work), run the known part now on the parent trace and stage the unknown part."""
    def rule(primals, tangents, **params):
        nz = [_nonzero(t) for t in tangents]
        n, box = len(primals), []

        def jvp_of_prim(*args):
            nz_t = iter(args[n:])
            tans = [next(nz_t) if z else Zero.from_primal(p) for p, z in zip(primals, nz)]
            outs, out_t = jvp_flat(lambda *xs: prim.bind(*xs, **params), args[:n], tans)
            box.append([type(t) is not Zero for t in out_t])
            return list(outs) + [t for t in out_t if type(t) is not Zero]

        in_avals = [get_aval(p) for p in primals] + [get_aval(t) for t in _pick(tangents, nz)]
        closed = _stage_closed(jvp_of_prim, in_avals)
        unknowns = [False] * n + [True] * sum(nz)
        known, unknown, out_uk, n_res = pe.partial_eval_jaxpr(closed, unknowns)
        known_outs = _eval_jaxpr(known.jaxpr, known.consts, *primals)
        n_known = len(known_outs) - n_res
        unknown_outs = _eval_jaxpr(unknown.jaxpr, unknown.consts, *known_outs[n_known:],
                                   *_pick(tangents, nz))
        outs = _merge(out_uk, unknown_outs, known_outs[:n_known])
        n_out = len(box[0])
        return outs[:n_out], _tangents_out(outs[:n_out], box[0], outs[n_out:])
    return rule


# ================================================================ cond

@cond_p.def_abstract_eval
def _cond_abstract_eval(index, *ops, branches):
    if not branches:
        raise jx.JaxprTypeError("cond requires at least one branch")
    if index.shape != () or index.dtype != np.int32:
        raise jx.JaxprTypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    for i, br in enumerate(branches):
        _check_inputs(f"cond branch {i}", br.in_avals, ops)
        out0, out = branches[0].out_avals, br.out_avals
        if len(out) != len(out0) or not all(same_type(a, b) for a, b in zip(out0, out)):
            raise jx.JaxprTypeError(f"cond branches must have equal output types, got branch 0 "
                                    f"{_short(out0)} and branch {i} {_short(out)}")
    return list(branches[0].out_avals)


def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    nz = [_nonzero(t) for t in tangents[1:]]
    n_in, n_out = len(ops), len(branches[0].out_avals)
    out_nz = _any_columns(_jvp_jaxpr(b, nz, [False] * n_out, [n_in], [n_out])[1] for b in branches)
    jvps = tuple(_jvp_jaxpr(b, nz, out_nz, [n_in], [n_out])[0] for b in branches)
    outs = cond_p.bind(index, *ops, *_pick(tangents[1:], nz), branches=jvps)
    return outs[:n_out], _tangents_out(outs[:n_out], out_nz, outs[n_out:])


def _cond_partial_eval(eqn, unknowns):
    """Known cond: known operands -> known outputs and every branch's residuals (a branch
    fills the other branches' residual slots with zeros); unknown cond: those -> the rest."""
    index_uk, ops_uk = unknowns[0], unknowns[1:]
    branches, n_out = eqn.params["branches"], len(eqn.outvars)
    if index_uk:
        return [], [eqn], [True] * n_out
    out_uk = _any_columns(pe.partial_eval_jaxpr(b, ops_uk)[2] for b in branches)
    splits = [_partial_eval(b, ops_uk, out_uk) for b in branches]
    res_avals = [k.out_avals[len(k.out_avals) - n_res:] for k, _, _, n_res in splits]
    n_known = n_out - sum(out_uk)
    known = tuple(_with_residual_slots(s[0], i, res_avals, n_known) for i, s in enumerate(splits))
    unknown = tuple(_with_residual_inputs(s[1], i, res_avals) for i, s in enumerate(splits))
    res_vars = [jx.Var(a) for avals in res_avals for a in avals]
    index, ops = eqn.invars[0], eqn.invars[1:]
    k_outs = _pick(eqn.outvars, out_uk, False) + res_vars
    k_eqn = jx.JaxprEqn(cond_p, [index] + _pick(ops, ops_uk, False), k_outs, dict(branches=known))
    u_eqn = jx.JaxprEqn(cond_p, [index] + res_vars + _pick(ops, ops_uk), _pick(eqn.outvars, out_uk),
                        dict(branches=unknown))
    return [k_eqn] if k_outs else [], [u_eqn] if any(out_uk) else [], out_uk


def _with_residual_slots(known, i, res_avals, n_known):
    def fun(*args):
        outs = _fun_of(known)(*args)
        own = iter(outs[n_known:])
        res = [next(own) if j == i else zeros_like_aval(a)
               for j, avals in enumerate(res_avals) for a in avals]
        return outs[:n_known] + res
    return _stage_closed(fun, known.in_avals)


def _with_residual_inputs(unknown, i, res_avals):
    invars = unknown.jaxpr.invars
    own, rest = invars[:len(res_avals[i])], invars[len(res_avals[i]):]
    res = [v for j, avals in enumerate(res_avals)
           for v in (own if j == i else [jx.Var(a) for a in avals])]
    return _rebuild(unknown, invars=res + list(rest))


def _cond_transpose(cts, index, *ops, branches):
    if is_undefined_primal(index):
        raise ValueError("cond is not linear in its branch index")
    linear = [is_undefined_primal(x) for x in ops]
    if all(type(c) is Zero for c in cts):
        return [None] + [Zero(x.aval) if lin else None for x, lin in zip(ops, linear)]
    res = _pick(ops, linear, False)
    ct_nz = [type(c) is not Zero for c in cts]
    in_avals = [get_aval(x) for x in res + _pick(cts, ct_nz)]
    transposed = tuple(_transpose_branch(b, linear, ct_nz, in_avals, len(res)) for b in branches)
    outs = cond_p.bind(index, *res, *_pick(cts, ct_nz), branches=transposed)
    return [None] + _merge(linear, outs, [None] * len(res))


def _transpose_branch(closed, linear, ct_nz, in_avals, n_res):
    def fun(*args):
        res, cts = iter(args[:n_res]), iter(args[n_res:])
        lin_in = [True if lin else next(res) for lin in linear]
        cts_out = [next(cts) if nz else Zero(a.to_tangent_aval())
                   for a, nz in zip(closed.out_avals, ct_nz)]
        cts_in = backward_pass(closed.jaxpr, closed.consts, lin_in, cts_out)
        return [instantiate(c) for c in _pick(cts_in, linear)]
    return _stage_closed(fun, in_avals)


def _cond_batch(axis_data, vals, dims, *, branches):
    vals = [_as_array(v) for v in vals]
    if dims[0] is not None:
        return _cond_batched_index(axis_data, vals, dims, branches)
    index, ops, op_b = vals[0], vals[1:], [d is not None for d in dims[1:]]
    ops = [moveaxis(x, d, 0) if d is not None else x for x, d in zip(ops, dims[1:])]
    n_out = len(branches[0].out_avals)
    out_b = _any_columns(_batch_jaxpr(b, axis_data, op_b, [False] * n_out)[1] for b in branches)
    batched = tuple(_batch_jaxpr(b, axis_data, op_b, out_b)[0] for b in branches)
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
        ops_i = [ew.select_n(_bcast(owned, x), stop_gradient(x), x) for x in ops]
        branch_outs.append(vmap_flat(_fun_of(br), ops_i, [0] * len(ops), axis_data))
    outs = [ew.select_n(_bcast(index, col[0]), *col) for col in zip(*branch_outs)]
    return outs, [0] * len(outs)


def _bcast(which, like):
    shape = get_aval(like).shape
    return st.broadcast_in_dim(which, shape, (0,)) if len(shape) > 1 else which


def _register_cond_rules():
    cond_p.def_jvp(_cond_jvp)
    cond_p.linearize = _linearize_rule(cond_p)
    cond_p.def_transpose(_cond_transpose)
    cond_p.def_batch(_cond_batch)
    pe.partial_eval_rules[cond_p] = _cond_partial_eval


_register_cond_rules()


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
    if isinstance(pred, (list, tuple)):
        raise TypeError(f"Pred must be a scalar, got {pred} of type {type(pred)}")
    pred = as_value(pred)
    aval = get_aval(pred)
    if aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {aval.shape}.")
    if aval.dtype == np.bool_:
        return pred
    if dtypes.kind(aval.dtype) in "iuf":
        return ew.ne(pred, 0)
    raise TypeError(f"Pred type must be either boolean or number, got {aval.dtype.name}.")


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
    pred = _predicate(pred)
    if config.read("jax_disable_jit") and _is_concrete(pred):
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
    index = as_value(index)
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
    if config.read("jax_disable_jit") and _is_concrete(index):
        return branches[int(index)](*operands)
    names = tuple(f"branch {i}" for i in range(len(branches)))
    return _bind_cond(index, branches, operands, "switch", names, range(len(branches)))


def _bind_cond(index, funs, operands, api_name, names, compare):
    """Bind cond_p on funs traced at the operands; branch compare[0] is checked against the
    others, as JAX does (true_fun first for cond), and `names` label them in errors."""
    leaves, in_tree = pytree.tree_flatten(operands)
    in_avals = [get_aval(x) for x in leaves]
    traced = [_trace_fun(lambda ops, f=f: f(*ops), in_tree, in_avals) for f in funs]
    first, *rest = compare
    for i in rest:
        _check_branch_outputs(api_name, names[first], traced[first], names[i], traced[i])
    consts, const_avals, positions = _common_consts(traced)
    branches = tuple(_with_const_inputs(closed, pos, const_avals)
                     for (closed, _, _), pos in zip(traced, positions))
    outs = cond_p.bind(index, *consts, *leaves, branches=branches)
    return pytree.tree_unflatten(traced[0][2], outs)


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
    return _rebuild(closed, invars=const_vars + list(invars[len(positions):]))


def _check_branch_outputs(api_name, name0, traced0, name, traced):
    (closed0, consts0, tree0), (closed, consts, tree) = traced0, traced
    if tree0 != tree:
        raise TypeError(f"{api_name} branch outputs must have the same pytree structure, but "
                        f"they differ:\n\n{name0} output is {tree0}\n{name} output is {tree}\n\n"
                        f"Revise {name0} and/or {name} so that they have the same pytree "
                        "structure.")
    outs0, outs = closed0.out_avals, closed.out_avals
    diffs = [f"the output of {name0}{_path(tree0, i)} has type {_type(a)} but the "
             f"corresponding output of {name} has type {_type(b)}{_why(a, b)}"
             for i, (a, b) in enumerate(zip(outs0, outs)) if not same_type(a, b)]
    if diffs:
        raise TypeError(f"{api_name} branches must have equal output types but they differ.\n\n"
                        + "".join(f"  * {d};\n" for d in diffs)
                        + f"\nRevise {name0} and/or {name} so that all output types match.")


def _type(aval):
    return f"{aval.dtype.name}[{','.join(str(d) for d in aval.shape)}]"


def _why(a, b):
    what = "shapes" if a.shape != b.shape else "dtypes"
    return f", so the {what} do not match"


def _path(tree, i):
    """' at path ...' naming leaf i of a tree (empty for a single leaf)."""
    if tree.num_leaves == 1 and pytree.treedef_is_leaf(tree):
        return ""
    paths = pytree.tree_flatten_with_path(pytree.tree_unflatten(tree, range(tree.num_leaves)))[0]
    return f" at path {pytree.keystr(paths[i][0])}"


# ================================================================ while

def _while_params(cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    return dict(body_jaxpr=body_jaxpr, body_nconsts=body_nconsts, cond_jaxpr=cond_jaxpr,
                cond_nconsts=cond_nconsts)


@while_p.def_abstract_eval
def _while_abstract_eval(*avals, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    cconsts, bconsts, init = _split(avals, [cond_nconsts, body_nconsts])
    _check_inputs("while cond_jaxpr", cond_jaxpr.in_avals, cconsts + init)
    _check_inputs("while body_jaxpr", body_jaxpr.in_avals, bconsts + init)
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != np.bool_:
        raise jx.JaxprTypeError(f"while cond_jaxpr must return one bool[], got {_short(pred)}")
    if len(body_jaxpr.out_avals) != len(init) or not all(
            same_type(a, b) for a, b in zip(body_jaxpr.out_avals, init)):
        raise jx.JaxprTypeError(f"while body_jaxpr returns {_short(body_jaxpr.out_avals)} for "
                                f"a carry of types {_short(init)}")
    return list(body_jaxpr.out_avals)


def _while_jvp(primals, tangents, *, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    nz = [_nonzero(t) for t in tangents]
    _, bconst_nz, init_nz = _split(nz, [cond_nconsts, body_nconsts])
    n_carry, groups = len(init_nz), [body_nconsts, len(init_nz)]
    carry_nz = _fixpoint(
        lambda c_nz: _jvp_jaxpr(body_jaxpr, bconst_nz + c_nz, c_nz, groups, [n_carry])[1], init_nz)
    body_jvp, _ = _jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, carry_nz, groups, [n_carry])
    cconsts, bconsts, init = _split(primals, [cond_nconsts, body_nconsts])
    _, bconst_t, init_t = _split(tangents, [cond_nconsts, body_nconsts])
    bconst_dot = _pick(bconst_t, bconst_nz)
    init_dot = [instantiate(t) for t in _pick(init_t, carry_nz)]
    outs = while_p.bind(*cconsts, *bconsts, *bconst_dot, *init, *init_dot, **_while_params(
        _ignoring_tangents(cond_jaxpr, init_dot), body_jvp, cond_nconsts,
        body_nconsts + len(bconst_dot)))
    return outs[:n_carry], _tangents_out(outs[:n_carry], carry_nz, outs[n_carry:])


def _ignoring_tangents(cond_jaxpr, init_dot):
    extra = [jx.Var(get_aval(t)) for t in init_dot]
    return _rebuild(cond_jaxpr, invars=list(cond_jaxpr.jaxpr.invars) + extra)


def _while_partial_eval(eqn, unknowns):
    """The known carries come from a while over the known part of the body; the unknown ones
    from the whole loop again (a while loop cannot save per-iteration residuals)."""
    p = eqn.params
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cond_uk, body_uk, init_uk = _split(unknowns, [cn, bn])
    body = p["body_jaxpr"]
    carry_uk = _fixpoint(lambda uk: pe.partial_eval_jaxpr(body, body_uk + uk)[2], init_uk)
    cond_known, _, pred_uk, _ = pe.partial_eval_jaxpr(p["cond_jaxpr"], cond_uk + carry_uk)
    if pred_uk[0] or all(carry_uk):
        return [], [eqn], [True] * len(eqn.outvars)
    body_known = _partial_eval(body, body_uk + carry_uk, carry_uk)[0]
    n_known = len(carry_uk) - sum(carry_uk)
    body_known = _rebuild(body_known, outvars=body_known.jaxpr.outvars[:n_known])
    cond_known = _rebuild(cond_known, outvars=cond_known.jaxpr.outvars[:1])
    k_eqn = jx.JaxprEqn(while_p, _pick(eqn.invars, cond_uk + body_uk + carry_uk, False),
                        _pick(eqn.outvars, carry_uk, False), _while_params(
                            cond_known, body_known, cn - sum(cond_uk), bn - sum(body_uk)))
    u_outs = [v if uk else jx.DropVar(v.aval) for v, uk in zip(eqn.outvars, carry_uk)]
    u_eqn = jx.JaxprEqn(while_p, list(eqn.invars), u_outs, dict(p))
    return [k_eqn], [u_eqn] if any(carry_uk) else [], carry_uk


def _while_transpose(cts, *args, **params):
    raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or "
                     "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or "
                     "using fori_loop with static start/stop.")


def _while_batch(axis_data, vals, dims, *, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    vals = [_as_array(v) for v in vals]
    size = axis_data.size
    cc_b, bc_b, init_b = _split([d is not None for d in dims], [cond_nconsts, body_nconsts])
    carry_b = _fixpoint(lambda cb: _batch_jaxpr(body_jaxpr, axis_data, bc_b + cb, cb)[1], init_b)
    pred_b = _batch_jaxpr(cond_jaxpr, axis_data, cc_b + carry_b, [False])[1][0]
    if pred_b:
        carry_b = [True] * len(carry_b)
    vals = [moveaxis(v, d, 0) if d is not None else v for v, d in zip(vals, dims)]
    cconsts, bconsts, init = _split(vals, [cond_nconsts, body_nconsts])
    init = [bdim_at_front(x, None, size) if b and not was else x
            for x, was, b in zip(init, init_b, carry_b)]
    cond_b = _batch_jaxpr(cond_jaxpr, axis_data, cc_b + carry_b, [False])[0]
    body_b = _batch_jaxpr(body_jaxpr, axis_data, bc_b + carry_b, carry_b)[0]
    if not pred_b:
        outs = while_p.bind(*cconsts, *bconsts, *init, **_while_params(
            cond_b, body_b, cond_nconsts, body_nconsts))
    else:
        outs = while_p.bind(*cconsts, *cconsts, *bconsts, *init, **_while_params(
            _any_lane(cond_b), _only_running_lanes(cond_b, body_b, cond_nconsts, body_nconsts),
            cond_nconsts, cond_nconsts + body_nconsts))
    return outs, [0 if b else None for b in carry_b]


def _any_lane(cond_b):
    """A batched predicate: the loop runs while any lane's predicate holds."""
    from .reductions import reduce_or
    return _stage_closed(lambda *args: [reduce_or(_fun_of(cond_b)(*args)[0], (0,))],
                         cond_b.in_avals)


def _only_running_lanes(cond_b, body_b, cond_nconsts, body_nconsts):
    """The body under a batched predicate: lanes whose predicate is False keep their carry."""
    def fun(*args):
        cconsts, bconsts, carry = _split(args, [cond_nconsts, body_nconsts])
        pred = _fun_of(cond_b)(*cconsts, *carry)[0]
        new = _fun_of(body_b)(*bconsts, *carry)
        return [ew.select_n(_bcast(pred, old), old, upd) for old, upd in zip(carry, new)]
    return _stage_closed(fun, cond_b.in_avals[:cond_nconsts] + body_b.in_avals)


def _register_while_rules():
    while_p.def_jvp(_while_jvp)
    while_p.linearize = _linearize_rule(while_p)
    while_p.def_transpose(_while_transpose)
    while_p.def_batch(_while_batch)
    pe.partial_eval_rules[while_p] = _while_partial_eval


_register_while_rules()


# ---------------------------------------------------------------- carry typing (while and scan)

def _promote_weak_carry(init, in_avals, out_avals):
    """Weakly-typed initial carries (Python scalars) take the dtype the body gives them, as JAX
    does; returns (new init, whether anything changed)."""
    new, changed = [], False
    for x, a, b in zip(init, in_avals, out_avals):
        if a.weak_type and not same_type(a, b):
            dtype = dtypes.result_type_of([(a.dtype, True), (b.dtype, b.weak_type)])[0]
            x, changed = ew.convert_element_type(x, dtype), True
        new.append(x)
    return new, changed


def _check_carry(name, in_tree, in_avals, out_tree, out_avals):
    if in_tree != out_tree:
        raise TypeError(f"{name} function carry input and carry output must have the same "
                        f"pytree structure, but they differ:\n\nthe input tree structure is:\n"
                        f"{in_tree}\nthe output tree structure is:\n{out_tree}\n\nRevise the "
                        "function so that the carry output has the same pytree structure as the "
                        "carry input.")
    diffs = [f"the input carry{_path(in_tree, i)} has type {_type(a)} but the "
             f"corresponding output carry component has type {_type(b)}{_why(a, b)}"
             for i, (a, b) in enumerate(zip(in_avals, out_avals)) if not same_type(a, b)]
    if diffs:
        raise TypeError(f"{name} function carry input and carry output must have equal types, "
                        "but they differ:\n\n" + "".join(f"  * {d};\n" for d in diffs)
                        + "\nRevise the function so that all output types match the "
                        "corresponding input types.")


def _trace_carried(trace, init, name, in_tree):
    """trace(carry_avals) -> (traced..., carry out tree, carry out avals); retraced once when
    weakly-typed initial carries must be promoted. Returns (traced, init)."""
    in_avals = [get_aval(x) for x in init]
    traced = trace(in_avals)
    out_tree, out_avals = traced[-2], traced[-1]
    if out_tree == in_tree:
        init, changed = _promote_weak_carry(init, in_avals, out_avals)
        if changed:
            in_avals = [get_aval(x) for x in init]
            traced = trace(in_avals)
            out_tree, out_avals = traced[-2], traced[-1]
    _check_carry(name, in_tree, in_avals, out_tree, out_avals)
    return traced, init


# ---------------------------------------------------------------- lax.while_loop

def while_loop(cond_fun, body_fun, init_val):
    """Repeat val = body_fun(val) while cond_fun(val); returns the final val.

    The carry keeps one pytree structure and one type throughout. Forward-mode and vmap work
    (a batched predicate runs until every lane is done); reverse mode raises a ValueError,
    as in JAX: use lax.scan or fori_loop with static bounds instead."""
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    if config.read("jax_disable_jit"):
        try:
            return _python_while(cond_fun, body_fun, init_val)
        except errors.ConcretizationTypeError:
            pass  # a traced carry: fall back to the primitive
    init, in_tree = pytree.tree_flatten(init_val)
    init = [as_value(x) for x in init]
    (cond_closed, cond_consts, body_closed, body_consts, _, _), init = _trace_carried(
        lambda avals: _trace_while(cond_fun, body_fun, in_tree, avals), init,
        "while_loop body", in_tree)
    outs = while_p.bind(*cond_consts, *body_consts, *init, **_while_params(
        cond_closed, body_closed, len(cond_consts), len(body_consts)))
    return pytree.tree_unflatten(in_tree, outs)


def _python_while(cond_fun, body_fun, init_val):
    val = pytree.tree_map(as_value, init_val)
    while cond_fun(val):
        val = pytree.tree_map(as_value, body_fun(val))
    return val


def _trace_while(cond_fun, body_fun, in_tree, avals):
    cond_closed, cond_consts, pred_tree = _trace_fun(cond_fun, in_tree, avals)
    _check_predicate(pred_tree, cond_closed.out_avals)
    body_closed, body_consts, out_tree = _trace_fun(body_fun, in_tree, avals)
    return (cond_closed, cond_consts, body_closed, body_consts, out_tree,
            list(body_closed.out_avals))


def _check_predicate(pred_tree, out_avals):
    if len(out_avals) != 1 or not pytree.treedef_is_leaf(pred_tree):
        raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {pred_tree}.")
    if out_avals[0].shape != () or out_avals[0].dtype != np.bool_:
        raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                        f"[{out_avals[0]!r}].")


# ================================================================ scan

def _scan_params(jaxpr, length, linear, num_carry, num_consts, reverse, unroll):
    return dict(jaxpr=jaxpr, length=length, linear=tuple(linear), num_carry=num_carry,
                num_consts=num_consts, reverse=reverse, unroll=unroll)


@scan_p.def_abstract_eval
def _scan_abstract_eval(*avals, jaxpr, length, linear, num_carry, num_consts, reverse, unroll,
                        _split_transpose=False):
    consts, init, xs = _split(avals, [num_consts, num_carry])
    if any(x.shape[:1] != (length,) for x in xs):
        raise jx.JaxprTypeError(f"scan of length {length} got xs of types {_short(xs)}")
    if len(linear) != len(avals):
        raise jx.JaxprTypeError(f"scan linear has {len(linear)} entries for {len(avals)} operands")
    _check_inputs("scan jaxpr", jaxpr.in_avals, consts + init + [_unstacked(x) for x in xs])
    carry_out, ys = _split(jaxpr.out_avals, [num_carry])
    if not all(same_type(a, b) for a, b in zip(carry_out, init)):
        raise jx.JaxprTypeError(f"scan jaxpr returns carry {_short(carry_out)} for a carry of "
                                f"types {_short(init)}")
    return carry_out + [_stacked(y, length) for y in ys]


def _scan_jvp(primals, tangents, *, jaxpr, length, linear, num_carry, num_consts, reverse,
              unroll, _split_transpose=False):
    nz = [_nonzero(t) for t in tangents]
    const_nz, init_nz, xs_nz = _split(nz, [num_consts, num_carry])
    n_ys = len(jaxpr.out_avals) - num_carry
    groups, out_groups = [num_consts, num_carry, len(xs_nz)], [num_carry, n_ys]

    def jvp(carry_nz):
        return _jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * n_ys,
                          groups, out_groups)

    carry_nz = _fixpoint(lambda c_nz: jvp(c_nz)[1][:num_carry], init_nz)
    body, out_nz = jvp(carry_nz)
    consts, init, xs = _split(primals, [num_consts, num_carry])
    c_t, i_t, x_t = _split(tangents, [num_consts, num_carry])
    c_dot, x_dot = _pick(c_t, const_nz), _pick(x_t, xs_nz)
    i_dot = [instantiate(t) for t in _pick(i_t, carry_nz)]
    lin_c, lin_i, lin_x = _split(linear, [num_consts, num_carry])
    new_linear = (lin_c + [True] * len(c_dot) + lin_i + [True] * len(i_dot) + lin_x
                  + [True] * len(x_dot))
    outs = scan_p.bind(*consts, *c_dot, *init, *i_dot, *xs, *x_dot, **_scan_params(
        body, length, new_linear, num_carry + len(i_dot), num_consts + len(c_dot), reverse, unroll))
    carry, carry_dot, ys, ys_dot = _split(outs, [num_carry, len(i_dot), n_ys])
    return carry + ys, _tangents_out(carry + ys, out_nz, carry_dot + ys_dot)


def _scan_partial_eval(eqn, unknowns):
    """Split a scan into a known scan (known carries and ys, plus the residuals the unknown
    side needs, stacked per iteration) and an unknown scan consuming them. A carry is unknown
    if its initial value or its update is (a fixpoint). Residuals that are known consts or xs
    of the body are passed along as they are rather than stacked."""
    p = eqn.params
    body, nc, nk, length = p["jaxpr"], p["num_consts"], p["num_carry"], p["length"]
    n_ys = len(body.out_avals) - nk
    const_uk, init_uk, xs_uk = _split(unknowns, [nc, nk])
    carry_uk = _fixpoint(
        lambda uk: pe.partial_eval_jaxpr(body, const_uk + uk + xs_uk)[2][:nk], init_uk)
    body_uk = const_uk + carry_uk + xs_uk
    known, unknown, out_uk, n_res = _partial_eval(body, body_uk, carry_uk + [False] * n_ys)
    res_kind, res_outer = _classify_residuals(eqn, known, body_uk, nc, nk, n_res)
    k_eqn = _known_scan(eqn, known, body_uk, out_uk, res_kind, res_outer, n_res)
    u_eqn = _unknown_scan(eqn, unknown, body_uk, out_uk, res_kind, res_outer, n_res)
    return [k_eqn] if k_eqn.outvars else [], [u_eqn] if any(out_uk) else [], out_uk


def _classify_residuals(eqn, known, body_uk, nc, nk, n_res):
    """Per residual: 'const' or 'xs' (a known input of the body, forwarded as the outer
    operand) or 'stacked' (an extra output of the known scan). Returns (kinds, outer atoms)."""
    kj = known.jaxpr
    consts_in, _, xs_in = _split(eqn.invars, [nc, nk])
    const_uk, _, xs_uk = _split(body_uk, [nc, nk])
    n_kc, n_kk = nc - sum(const_uk), nk - sum(body_uk[nc:nc + nk])
    forward = {}
    for v, outer in zip(kj.invars[:n_kc], _pick(consts_in, const_uk, False)):
        forward[v] = ("const", outer)
    for v, outer in zip(kj.invars[n_kc + n_kk:], _pick(xs_in, xs_uk, False)):
        forward[v] = ("xs", outer)
    kinds, outers = [], []
    length = eqn.params["length"]
    for atom in kj.outvars[len(kj.outvars) - n_res:]:
        kind, outer = forward.get(atom, ("stacked", None)) if type(atom) is not jx.Literal \
            else ("stacked", None)
        kinds.append(kind)
        outers.append(outer if outer is not None else jx.Var(_stacked(atom.aval, length)))
    return kinds, outers


def _known_scan(eqn, known, body_uk, out_uk, res_kind, res_outer, n_res):
    p = eqn.params
    nc, nk = p["num_consts"], p["num_carry"]
    kj = known.jaxpr
    n_known_out = len(kj.outvars) - n_res
    stacked = [k == "stacked" for k in res_kind]
    body = _rebuild(known, outvars=list(kj.outvars[:n_known_out])
                    + _pick(kj.outvars[n_known_out:], stacked))
    const_uk, carry_uk, _ = _split(body_uk, [nc, nk])
    outvars = _pick(eqn.outvars, out_uk, False) + _pick(res_outer, stacked)
    params = _scan_params(body, p["length"], _pick(p["linear"], body_uk, False),
                          nk - sum(carry_uk), nc - sum(const_uk), p["reverse"], p["unroll"])
    return jx.JaxprEqn(scan_p, _pick(eqn.invars, body_uk, False), outvars, params)


def _unknown_scan(eqn, unknown, body_uk, out_uk, res_kind, res_outer, n_res):
    """Operands: const residuals and unknown consts | unknown carries | unknown xs, forwarded
    xs residuals and stacked residuals."""
    p = eqn.params
    nc, nk = p["num_consts"], p["num_carry"]
    res_in, uk_in = unknown.jaxpr.invars[:n_res], unknown.jaxpr.invars[n_res:]
    const_res = [i for i, k in enumerate(res_kind) if k == "const"]
    ext_res = ([i for i, k in enumerate(res_kind) if k == "xs"]
               + [i for i, k in enumerate(res_kind) if k == "stacked"])
    invars = [res_in[i] for i in const_res] + list(uk_in) + [res_in[i] for i in ext_res]
    operands = ([res_outer[i] for i in const_res] + _pick(eqn.invars, body_uk)
                + [res_outer[i] for i in ext_res])
    linear = [False] * len(const_res) + _pick(p["linear"], body_uk) + [False] * len(ext_res)
    params = _scan_params(_rebuild(unknown, invars=invars), p["length"], linear,
                          sum(body_uk[nc:nc + nk]), len(const_res) + sum(body_uk[:nc]),
                          p["reverse"], p["unroll"])
    return jx.JaxprEqn(scan_p, operands, _pick(eqn.outvars, out_uk), params)


def _scan_transpose(cts, *args, jaxpr, length, linear, num_carry, num_consts, reverse, unroll,
                    _split_transpose=False):
    """A reverse scan of the transposed body. Its carry holds the cotangents of the carry and
    the running sums of the consts' cotangents; it scans the ys' cotangents (and known xs)
    and emits the xs' cotangents. Known consts and xs (residuals) are read, not transposed."""
    consts, init, xs = _split(args, [num_consts, num_carry])
    const_lin = [is_undefined_primal(x) for x in consts]
    xs_lin = [is_undefined_primal(x) for x in xs]
    if all(type(c) is Zero for c in cts):
        return [Zero(x.aval) if is_undefined_primal(x) else None for x in args]
    ct_carry, ct_ys = _split(cts, [num_carry])
    ys_nz = [type(c) is not Zero for c in ct_ys]
    ires, eres = _pick(consts, const_lin, False), _pick(xs, xs_lin, False)
    acc0 = [zeros_like_aval(x.aval) for x in _pick(consts, const_lin)]
    ct_carry = [instantiate(c) for c in ct_carry]
    ct_ys = _pick(ct_ys, ys_nz)
    in_avals = [get_aval(v) for v in ires + acc0 + ct_carry] + [
        _unstacked(get_aval(v)) for v in ct_ys + eres]
    body = _transposed_body(jaxpr, const_lin, num_carry, xs_lin, ys_nz, in_avals)
    n_ct = len(acc0) + num_carry + len(ct_ys)
    outs = scan_p.bind(*ires, *acc0, *ct_carry, *ct_ys, *eres, **_scan_params(
        body, length, [False] * len(ires) + [True] * n_ct + [False] * len(eres),
        len(acc0) + num_carry, len(ires), not reverse, unroll))
    ct_consts, ct_init, ct_xs = _split(outs, [len(acc0), num_carry])
    return (_merge(const_lin, ct_consts, [None] * len(ires))
            + [c if is_undefined_primal(x) else None for c, x in zip(ct_init, init)]
            + _merge(xs_lin, ct_xs, [None] * len(eres)))


def _transposed_body(jaxpr, const_lin, num_carry, xs_lin, ys_nz, in_avals):
    n_ires, n_acc = const_lin.count(False), const_lin.count(True)
    n_ys = sum(ys_nz)
    y_avals = jaxpr.out_avals[num_carry:]

    def fun(*args):
        ires, acc, ct_carry, ct_ys, eres = _split(args, [n_ires, n_acc, num_carry, n_ys])
        ires, eres, ct_ys = iter(ires), iter(eres), iter(ct_ys)
        # The carry is linear in an unknown scan even when its initial value is a known zero.
        lin_in = ([True if lin else next(ires) for lin in const_lin] + [True] * num_carry
                  + [True if lin else next(eres) for lin in xs_lin])
        cts_out = ct_carry + [next(ct_ys) if nz else Zero(a.to_tangent_aval())
                              for a, nz in zip(y_avals, ys_nz)]
        cts_in = backward_pass(jaxpr.jaxpr, jaxpr.consts, lin_in, cts_out)
        c_cts, k_cts, x_cts = _split(cts_in, [len(const_lin), num_carry])
        new_acc = [add_tangents(a, c) for a, c in zip(acc, _pick(c_cts, const_lin))]
        return (new_acc + [instantiate(c) for c in k_cts]
                + [instantiate(c) for c in _pick(x_cts, xs_lin)])

    return _stage_closed(fun, in_avals)


def _scan_batch(axis_data, vals, dims, *, jaxpr, length, linear, num_carry, num_consts, reverse,
                unroll, _split_transpose=False):
    """Consts and carries are batched at 0, xs and ys at 1 (0 is the scanned axis); a carry is
    batched if its initial value or its update is (a fixpoint)."""
    vals = [_as_array(v) for v in vals]
    size, n_ys = axis_data.size, len(jaxpr.out_avals) - num_carry
    const_b, init_b, xs_b = _split([d is not None for d in dims], [num_consts, num_carry])

    def batch(carry_b):
        return _batch_jaxpr(jaxpr, axis_data, const_b + carry_b + xs_b, carry_b + [False] * n_ys)

    carry_b = _fixpoint(lambda cb: batch(cb)[1][:num_carry], init_b)
    body, out_b = batch(carry_b)
    consts, init, xs = _split(vals, [num_consts, num_carry])
    c_dims, i_dims, x_dims = _split(dims, [num_consts, num_carry])
    consts = [moveaxis(x, d, 0) if d is not None else x for x, d in zip(consts, c_dims)]
    init = [bdim_at_front(x, d, size) if b else x for x, d, b in zip(init, i_dims, carry_b)]
    xs = [moveaxis(x, d, 1) if d is not None else x for x, d in zip(xs, x_dims)]
    outs = scan_p.bind(*consts, *init, *xs, **_scan_params(
        body, length, linear, num_carry, num_consts, reverse, unroll))
    return outs, [0 if b else None for b in carry_b] + [1 if b else None for b in out_b[num_carry:]]


def _register_scan_rules():
    scan_p.def_jvp(_scan_jvp)
    scan_p.linearize = _linearize_rule(scan_p)
    scan_p.def_transpose(_scan_transpose)
    scan_p.def_batch(_scan_batch)
    pe.partial_eval_rules[scan_p] = _scan_partial_eval


_register_scan_rules()


# ---------------------------------------------------------------- lax.scan

def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Loop carry, y = f(carry, x) over the leading axis of xs; returns (carry, stacked ys).

    init and xs are pytrees (xs may be None with `length` given); the carry keeps one
    structure and type. `reverse` runs from the end (ys stay aligned with xs); `unroll` is
    accepted as a hint. The body is traced once, whatever the length."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    init_leaves, init_tree = pytree.tree_flatten(init)
    xs_leaves, xs_tree = pytree.tree_flatten(xs)
    init_leaves = [as_value(x) for x in init_leaves]
    xs_leaves = [as_value(x) for x in xs_leaves]
    length = _scan_length(xs_leaves, length)
    if config.read("jax_disable_jit"):
        return _python_scan(f, init, xs_leaves, xs_tree, length, reverse)
    unroll = _canonical_unroll(unroll, length)
    x_avals = [_unstacked(get_aval(x)) for x in xs_leaves]
    (closed, consts, y_tree, _, _), init_leaves = _trace_carried(
        lambda avals: _trace_scan_body(f, init_tree, xs_tree, avals, x_avals), init_leaves,
        "scan body", init_tree)
    n = len(consts) + len(init_leaves) + len(xs_leaves)
    outs = scan_p.bind(*consts, *init_leaves, *xs_leaves, **_scan_params(
        closed, length, [False] * n, len(init_leaves), len(consts), bool(reverse), unroll))
    carry, ys = _split(outs, [len(init_leaves)])
    return pytree.tree_unflatten(init_tree, carry), pytree.tree_unflatten(y_tree, ys)


def _trace_scan_body(f, init_tree, xs_tree, carry_avals, x_avals):
    n_carry, box = len(carry_avals), []

    def flat(*leaves):
        carry = pytree.tree_unflatten(init_tree, leaves[:n_carry])
        out = f(carry, pytree.tree_unflatten(xs_tree, leaves[n_carry:]))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"scan body output must be a pair, got {out}.")
        c_leaves, c_tree = pytree.tree_flatten(out[0])
        y_leaves, y_tree = pytree.tree_flatten(out[1])
        box.append((c_tree, y_tree, len(c_leaves)))
        return c_leaves + y_leaves

    closed, consts = _stage(flat, list(carry_avals) + list(x_avals))
    c_tree, y_tree, n_c = box[0]
    return closed, consts, y_tree, c_tree, list(closed.out_avals[:n_c])


def _scan_length(xs_leaves, length):
    lengths = []
    for x in xs_leaves:
        shape = get_aval(x).shape
        if not shape:
            raise ValueError(f"scan got value with no leading axis to scan over: {x}.")
        lengths.append(shape[0])
    if length is not None:
        try:
            length = int(length)
        except TypeError:
            raise errors.ConcretizationTypeError(
                length, "The `length` argument to `scan` expects a concrete `int` value. For "
                "scan-like iteration with a dynamic length, use `while_loop` or "
                "`fori_loop`.") from None
        if any(n != length for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {lengths}.")
        return length
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    if len(set(lengths)) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         f"{', '.join(str(n) for n in lengths)}.")
    return lengths[0]


def _canonical_unroll(unroll, length):
    if isinstance(unroll, bool):
        return max(length, 1) if unroll else 1
    unroll = int(unroll)
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    return unroll


def _python_scan(f, init, xs_leaves, xs_tree, length, reverse):
    """jax_disable_jit: the loop in Python, as JAX runs it."""
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because the "
                         "output type is unknown.")
    carry, ys = init, []
    for i in (reversed(range(length)) if reverse else range(length)):
        x = pytree.tree_unflatten(xs_tree, [st.index_in_dim(v, i, 0)
                                            for v in xs_leaves])
        carry, y = f(carry, x)
        ys.append(y)
    ys = ys[::-1] if reverse else ys
    return carry, pytree.tree_map(lambda *y: _stack(y), *ys)


def _stack(arrays):
    return st.concatenate([st.expand_dims(as_value(a), (0,)) for a in arrays], 0)


# ================================================================ fori_loop, map

def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """val = body_fun(i, val) for i in range(lower, upper); returns the final val.

    With concrete bounds it is a scan of upper - lower steps (so reverse mode works, as in
    JAX); with traced bounds it is a while_loop (forward mode only)."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    lower, upper = as_value(lower), as_value(upper)
    dtype = _bounds_dtype(lower, upper)
    if _is_concrete(lower) and _is_concrete(upper):
        length = max(int(upper) - int(lower), 0)
        (_, result), _ = scan(_fori_scan_body(body_fun), (int(lower), init_val), None,
                              length=length, unroll=1 if unroll is None else unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         "statically known.")
    lower = ew.convert_element_type(lower, dtype) if lower.dtype != dtype else lower
    upper = ew.convert_element_type(upper, dtype) if upper.dtype != dtype else upper
    _, _, result = while_loop(_fori_cond, _fori_while_body(body_fun), (lower, upper, init_val))
    return result


def _bounds_dtype(lower, upper):
    """Equal dtypes, or a weak (Python) integer bound taking the other's integer dtype."""
    a, b = get_aval(lower), get_aval(upper)
    if a.dtype == b.dtype:
        return a.dtype
    if dtypes.kind(a.dtype) == "i" and dtypes.kind(b.dtype) == "i" and a.weak_type != b.weak_type:
        return b.dtype if a.weak_type else a.dtype
    raise TypeError("lower and upper arguments to fori_loop must have equal types, got "
                    f"{a.dtype.name} and {b.dtype.name}")


def _fori_scan_body(body_fun):
    def scanned(carry, _):
        i, x = carry
        return (ew.add(i, 1), body_fun(i, x)), None
    return scanned


def _fori_cond(carry):
    i, upper, _ = carry
    return ew.lt(i, upper)


def _fori_while_body(body_fun):
    def body(carry):
        i, upper, x = carry
        return ew.add(i, 1), upper, body_fun(i, x)
    return body


def map(f, xs, *, batch_size=None):  # noqa: A001  (lax.map, as JAX names it)
    """[f(x) for x in xs] stacked, as a scan over the leading axis of the pytree xs.

    With batch_size, f is vmapped over batches of that many elements (the remainder in one
    more vmap); batch_size=0 is one vmap over everything."""
    if batch_size is None:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    from ..transforms.vmap import vmap
    leaves, tree = pytree.tree_flatten(xs)
    n = get_aval(leaves[0]).shape[0] if leaves else 0
    num_batches = n // batch_size if batch_size else 0
    done = num_batches * batch_size
    parts = []
    if num_batches:
        batched = pytree.tree_unflatten(tree, [_batches(x, num_batches, batch_size)
                                               for x in leaves])
        ys = scan(lambda _, x: ((), vmap(f)(x)), (), batched)[1]
        parts.append(pytree.tree_map(_unbatch, ys))
    if done < n:
        rest = pytree.tree_unflatten(tree, [st.slice_in_dim(as_value(x), done, n) for x in leaves])
        parts.append(vmap(f)(rest))
    if len(parts) == 1:
        return parts[0]
    return pytree.tree_map(lambda a, b: st.concatenate([a, b], 0), *parts)


def _batches(x, num_batches, batch_size):
    x = st.slice_in_dim(as_value(x), 0, num_batches * batch_size)
    return st.reshape(x, (num_batches, batch_size) + tuple(get_aval(x).shape[1:]))


def _unbatch(y):
    shape = get_aval(y).shape
    return st.reshape(y, (shape[0] * shape[1],) + tuple(shape[2:]))
