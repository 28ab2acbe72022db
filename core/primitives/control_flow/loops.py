"""while and scan, with their rules (scan's partial evaluation, transpose and DCE rule are in
scan_ad.py), and the lax functions while_loop, fori_loop, scan and map that bind them.

  while_p.bind(*cond_consts, *body_consts, *init,
               body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts)
      cond_jaxpr   ClosedJaxpr (*cond_consts, *carry) -> bool[]
      body_jaxpr   ClosedJaxpr (*body_consts, *carry) -> (*carry)
      cond_nconsts, body_nconsts   ints: how many leading operands are each one's consts.
      results      the carry once cond_jaxpr returns False.

  scan_p.bind(*consts, *init, *xs,
              jaxpr, length, num_carry, num_consts, reverse, unroll)
      jaxpr        ClosedJaxpr (*consts, *carry, *x_slices) -> (*carry, *y_slices)
      length       int: every x has leading dimension `length`; ys get one.
      reverse      bool: run i = length-1 .. 0 (ys[i] still comes from xs[i]).
      num_consts, num_carry   ints splitting the operands into consts, carry, xs.
      unroll       int >= 0, a performance hint without semantic effect.
      results      (*final carry, *stacked ys).

Params are bound in alphabetical order, so make_jaxpr prints them as JAX does.
"""
import inspect
import weakref

import numpy as np

from ... import dtypes, errors, key_reuse, pytree
from ...key_reuse import Forward, Signature, Sink
from ... import jaxpr as jx
from ...avals import same_type
from ...config import config
from ...primitive import make_primitive
from ...sharding import NamedSharding, P, get_abstract_mesh
from ...sharding_types import spec_of, typed_aval
from ...trace import Tracer, as_value, get_aval
from ...transforms import partial_eval as pe
from ...transforms.ad import instantiate
from ...transforms.batching import bdim_at_front, moveaxis
from ...transforms.jvp import jvp_jaxpr
from ...transforms.linearize import linearize_by_partial_eval
from ...transforms.partial_eval_style import as_jaxpr_trace
from ...transforms.staging import stage_closed, stage_with_const_inputs
from ...transforms.vmap import batch_jaxpr, vmap
from ...vma import jaxpr_vma
from .. import elementwise as ew
from .. import structural as st
from ..reductions import reduce_or
from . import trace_cache
from .hoisting import renamed
from .common import (as_array, broadcast_pred, check_inputs, fixpoint, fun_of, is_concrete,
                     leaf_path, listed, nonzero, pick, short, split, stacked, tangents_out,
                     pcast_hint, same_typed, scan_types, trace_fun, type_str, typed_as, unstacked, why,
                     while_layouts)

while_p = make_primitive("while", multiple_results=True)
scan_p = make_primitive("scan", multiple_results=True)


# ---------------------------------------------------------------- while

def _while_params(cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    return dict(body_jaxpr=body_jaxpr, body_nconsts=body_nconsts, cond_jaxpr=cond_jaxpr,
                cond_nconsts=cond_nconsts)


@while_p.def_abstract_eval
def _while_abstract_eval(*avals, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    cconsts, bconsts, init = split(avals, [cond_nconsts, body_nconsts])
    check_inputs("while cond_jaxpr", cond_jaxpr.in_avals, cconsts + init)
    check_inputs("while body_jaxpr", body_jaxpr.in_avals, bconsts + init)
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != np.bool_:
        raise jx.JaxprTypeError(f"while cond_jaxpr must return one bool[], got {short(pred)}")
    if len(body_jaxpr.out_avals) != len(init) or not all(
            same_type(a, b) for a, b in zip(body_jaxpr.out_avals, init)):
        raise jx.JaxprTypeError(f"while body_jaxpr returns {short(body_jaxpr.out_avals)} for "
                                f"a carry of types {short(init)}")
    return list(body_jaxpr.out_avals)


def _while_jvp(primals, tangents, *, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    nz = [nonzero(t) for t in tangents]
    _, bconst_nz, init_nz = split(nz, [cond_nconsts, body_nconsts])
    n_carry, groups = len(init_nz), [body_nconsts, len(init_nz)]
    carry_nz = fixpoint(
        lambda c_nz: jvp_jaxpr(body_jaxpr, bconst_nz + c_nz, c_nz, groups, [n_carry])[1], init_nz)
    body_jvp, _ = jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, carry_nz, groups, [n_carry])
    cconsts, bconsts, init = split(primals, [cond_nconsts, body_nconsts])
    _, bconst_t, init_t = split(tangents, [cond_nconsts, body_nconsts])
    bconst_dot = pick(bconst_t, bconst_nz)
    init_dot = [instantiate(t) for t in pick(init_t, carry_nz)]
    outs = while_p.bind(*cconsts, *bconsts, *bconst_dot, *init, *init_dot, **_while_params(
        _ignoring_tangents(cond_jaxpr, init_dot), body_jvp, cond_nconsts,
        body_nconsts + len(bconst_dot)))
    return outs[:n_carry], tangents_out(outs[:n_carry], carry_nz, outs[n_carry:])


def _ignoring_tangents(cond_jaxpr, init_dot):
    extra = [jx.Var(typed_aval(t)) for t in init_dot]
    return jx.with_binders(cond_jaxpr, invars=list(cond_jaxpr.jaxpr.invars) + extra)


def _while_partial_eval(eqn, unknowns):
    """The known carries come from a while over the known part of the body; the unknown ones
    from the whole loop again (a while loop cannot save per-iteration residuals)."""
    p = eqn.params
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cond_uk, body_uk, init_uk = split(unknowns, [cn, bn])
    body = p["body_jaxpr"]
    carry_uk = fixpoint(lambda uk: pe.partial_eval_jaxpr(body, body_uk + uk)[2], init_uk)
    cond_known, _, pred_uk, _ = pe.partial_eval_jaxpr(p["cond_jaxpr"], cond_uk + carry_uk)
    if pred_uk[0] or all(carry_uk):
        return [], [eqn], [True] * len(eqn.outvars)
    body_known = pe.partial_eval_jaxpr(body, body_uk + carry_uk, carry_uk)[0]
    n_known = len(carry_uk) - sum(carry_uk)
    body_known = renamed(jx.with_binders(body_known, outvars=body_known.jaxpr.outvars[:n_known]))
    cond_known = renamed(jx.with_binders(cond_known, outvars=cond_known.jaxpr.outvars[:1]))
    k_eqn = jx.JaxprEqn(while_p, pick(eqn.invars, cond_uk + body_uk + carry_uk, False),
                        pick(eqn.outvars, carry_uk, False), _while_params(
                            cond_known, body_known, cn - sum(cond_uk), bn - sum(body_uk)))
    u_outs = [v if uk else jx.DropVar(v.aval) for v, uk in zip(eqn.outvars, carry_uk)]
    u_eqn = jx.JaxprEqn(while_p, list(eqn.invars), u_outs, dict(p))
    return [k_eqn], [u_eqn] if any(carry_uk) else [], carry_uk


def _while_transpose(cts, *args, **params):
    raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or "
                     "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or "
                     "using fori_loop with static start/stop.")


def _while_batch(axis_data, vals, dims, *, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    vals = [as_array(v) for v in vals]
    size = axis_data.size
    cc_b, bc_b, init_b = split([d is not None for d in dims], [cond_nconsts, body_nconsts])
    carry_b = fixpoint(lambda cb: batch_jaxpr(body_jaxpr, axis_data, bc_b + cb, cb)[1], init_b)
    pred_b = batch_jaxpr(cond_jaxpr, axis_data, cc_b + carry_b, [False])[1][0]
    if pred_b:
        carry_b = [True] * len(carry_b)
    vals = [moveaxis(v, d, 0) if d is not None else v for v, d in zip(vals, dims)]
    cconsts, bconsts, init = split(vals, [cond_nconsts, body_nconsts])
    init = [bdim_at_front(x, None, size) if b and not was else x
            for x, was, b in zip(init, init_b, carry_b)]
    cond_b = batch_jaxpr(cond_jaxpr, axis_data, cc_b + carry_b, [False])[0]
    body_b = batch_jaxpr(body_jaxpr, axis_data, bc_b + carry_b, carry_b)[0]
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
    return stage_closed(lambda *args: [reduce_or(fun_of(cond_b)(*args)[0], (0,))],
                         cond_b.in_avals)


def _only_running_lanes(cond_b, body_b, cond_nconsts, body_nconsts):
    """The body under a batched predicate: lanes whose predicate is False keep their carry."""
    def fun(*args):
        cconsts, bconsts, carry = split(args, [cond_nconsts, body_nconsts])
        pred = fun_of(cond_b)(*cconsts, *carry)[0]
        new = fun_of(body_b)(*bconsts, *carry)
        return [ew.select_n(broadcast_pred(pred, old), old, upd) for old, upd in zip(carry, new)]
    body = stage_closed(fun, cond_b.in_avals[:cond_nconsts] + body_b.in_avals)
    running_lanes_bodies.add(body)
    return body


# Bodies of whiles batched over their predicate, which run every lane each iteration (so
# checkify refuses them, as JAX: a check would see lanes that have finished).
running_lanes_bodies = weakref.WeakSet()


def _while_vma(eqn, ins, strict):
    """Carries vary over the axes they vary over after any number of iterations, and over
    those the predicate varies over."""
    params = eqn.params
    cn, bn = params["cond_nconsts"], params["body_nconsts"]
    cconsts, bconsts, init = split(ins, [cn, bn])
    cond, body = params["cond_jaxpr"].jaxpr, params["body_jaxpr"].jaxpr

    def step(carry):
        pred = jaxpr_vma(cond, cconsts + carry)[0]
        return [o | pred for o in jaxpr_vma(body, bconsts + carry)]
    carry = fixpoint(step, list(init))
    if strict:  # the fixpoint's types, checked once
        jaxpr_vma(cond, cconsts + carry, strict)
        jaxpr_vma(body, bconsts + carry, strict)
    return carry


while_p.def_jvp(_while_jvp)
while_p.def_linearize(linearize_by_partial_eval(while_p))
while_p.def_transpose(_while_transpose)
while_p.def_batch(_while_batch)
while_p.def_sharding(typed_as(lambda body_jaxpr, **_: body_jaxpr.out_avals, while_layouts))
while_p.def_partial_eval(as_jaxpr_trace(_while_partial_eval))
while_p.def_vma(_while_vma)


def _const_sinks(sig, nconsts, n_in):
    """Whether a loop body's signature consumes one of its consts (leading or closed over),
    which every iteration would consume again."""
    return any(np.any(s.mask) for s in sig.sinks if s.idx < nconsts or s.idx >= n_in)


def _carry_sinks(sig, nconsts, n_in):
    return {s.idx - nconsts for s in sig.sinks if nconsts <= s.idx < n_in}


@while_p.def_key_reuse
def _while_key_reuse(avals, keys, *, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    """JAX's rule: neither function may consume a const, nor a carry the body does not make
    afresh, and the two may not consume the same carry."""
    cn, bn = cond_nconsts, body_nconsts
    carry = keys[cn + bn:]
    csig = key_reuse.closed_signature(cond_jaxpr, keys[:cn] + carry)
    bsig = key_reuse.closed_signature(body_jaxpr, keys[cn:cn + bn] + carry)
    ccarry = _carry_sinks(csig, cn, cn + len(carry))
    bcarry = _carry_sinks(bsig, bn, bn + len(carry))
    made = {s.idx for s in bsig.sources}
    what = "cond function" if _const_sinks(csig, cn, cn + len(carry)) or not ccarry <= made \
        else "body function" if _const_sinks(bsig, bn, bn + len(carry)) or not bcarry <= made \
        else None
    if what:
        name, sig = ("cond", csig) if what[0] == "c" else ("body", bsig)
        raise errors.KeyReuseError(f"while_loop {what} leads to key reuse when repeatedly "
                                   f"executed:   {name}_signature={sig}")
    if ccarry & bcarry:
        raise errors.KeyReuseError("while_loop cond and body functions both use the same "
                                   f"key:   cond_signature={csig}\n  body_signature={bsig}")
    return Signature(*(Sink(cn + bn + i) for i in bcarry | ccarry), *bsig.sources,
                     *(Forward(cn + f.in_idx, f.out_idx) for f in bsig.forwards
                       if f.in_idx == bn + f.out_idx), keys_out=bsig.keys_out)


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


def _carry_component(fun, tree, i):
    """JAX's name of carry leaf i: by the body's first parameter ("the input carry component
    c[1]") when it has one."""
    try:
        carry_name = next(iter(inspect.signature(fun).parameters), None)
    except (TypeError, ValueError):
        carry_name = None
    path = leaf_path(tree, i)
    if carry_name is None:
        return f"the input carry at path {path}" if path else "the input carry"
    return f"the input carry component {carry_name}{path}" if path else \
        f"the input carry {carry_name}"


def _check_carry(name, fun, in_tree, in_avals, out_tree, out_avals):
    if in_tree != out_tree:
        raise TypeError(f"{name} function carry input and carry output must have the same "
                        f"pytree structure, but they differ:\n\nthe input tree structure is:\n"
                        f"{in_tree}\nthe output tree structure is:\n{out_tree}\n\nRevise the "
                        "function so that the carry output has the same pytree structure as the "
                        "carry input.")
    diffs = [f"{_carry_component(fun, in_tree, i)} has type {type_str(a)} but the "
             f"corresponding output carry component has type {type_str(b)}{why(a, b)}"
             for i, (a, b) in enumerate(zip(in_avals, out_avals)) if not same_typed(a, b)]
    if diffs:
        hint = pcast_hint([
            f"applying `jax.lax.pcast(..., {tuple(b.vma - a.vma)}, to='varying')`, to the "
            f"initial carry value corresponding to {_carry_component(fun, in_tree, i)}"
            for i, (a, b) in enumerate(zip(in_avals, out_avals))
            if not same_typed(a, b) and b.vma - a.vma], loop=True)
        raise TypeError(f"{name} function carry input and carry output must have equal types, "
                        "but they differ:\n\n" + listed(diffs, loop=True) + f"\n{hint}Revise the function "
                        "so that all output types match the corresponding input types.")


def _trace_carried(trace, init, name, in_tree, fun):
    """trace(carry_avals) -> (traced..., carry out tree, carry out avals); retraced once when
    weakly-typed initial carries must be promoted. Returns (traced, init)."""
    in_avals = [typed_aval(x) for x in init]  # concrete values on Explicit axes: typed
    traced = trace(in_avals)
    out_tree, out_avals = traced[-2], traced[-1]
    if out_tree == in_tree:
        init, changed = _promote_weak_carry(init, in_avals, out_avals)
        if changed:
            in_avals = [typed_aval(x) for x in init]
            traced = trace(in_avals)
            out_tree, out_avals = traced[-2], traced[-1]
    _check_carry(name, fun, in_tree, [_made_in_trace(x, a) for x, a in zip(init, in_avals)],
                 out_tree, out_avals)
    return traced, init


def _made_in_trace(x, aval):
    """A carry made inside the trace from constants, which refjax leaves untyped, as JAX's
    type: replicated on the context mesh (a body making it sharded changes its type)."""
    mesh = get_abstract_mesh()
    if not isinstance(x, Tracer) or aval.sharding is not None or not mesh.explicit_axes:
        return aval
    return aval.update(sharding=NamedSharding(mesh, P(*(None,) * aval.ndim)))


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
        "while_loop body", in_tree, body_fun)
    outs = while_p.bind(*cond_consts, *body_consts, *init, **_while_params(
        cond_closed, body_closed, len(cond_consts), len(body_consts)))
    return pytree.tree_unflatten(in_tree, outs)


def _python_while(cond_fun, body_fun, init_val):
    val = pytree.tree_map(as_value, init_val)
    while cond_fun(val):
        val = pytree.tree_map(as_value, body_fun(val))
    return val


def _trace_while(cond_fun, body_fun, in_tree, avals):
    cond_closed, cond_consts, pred_tree = trace_fun(cond_fun, in_tree, avals)
    _check_predicate(pred_tree, cond_closed.out_avals)
    body_closed, body_consts, out_tree = trace_fun(body_fun, in_tree, avals)
    return (cond_closed, cond_consts, body_closed, body_consts, out_tree,
            list(body_closed.out_avals))


def _check_predicate(pred_tree, out_avals):
    if len(out_avals) != 1 or not pytree.treedef_is_leaf(pred_tree):
        raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {pred_tree}.")
    if out_avals[0].shape != () or out_avals[0].dtype != np.bool_:
        raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                        f"[{out_avals[0]!r}].")


# ---------------------------------------------------------------- scan

# xs given as NumPy arrays: JAX's scan linearization stacks them as residuals of its own
_FROM_NUMPY = weakref.WeakValueDictionary()  # id -> the Array (Arrays are unhashable)


def _as_xs(x):
    value = as_value(x)
    if isinstance(x, np.ndarray):
        _FROM_NUMPY[id(value)] = value
    return value


def _not_from_numpy(x):
    return _FROM_NUMPY.get(id(x)) is not x


def _scan_params(jaxpr, length, num_carry, num_consts, reverse, unroll):
    return dict(jaxpr=jaxpr, length=length, num_carry=num_carry,
                num_consts=num_consts, reverse=reverse, unroll=unroll)


@scan_p.def_abstract_eval
def _scan_abstract_eval(*avals, jaxpr, length, num_carry, num_consts, reverse, unroll,
                        _split_transpose=False):
    consts, init, xs = split(avals, [num_consts, num_carry])
    if any(x.shape[:1] != (length,) for x in xs):
        raise jx.JaxprTypeError(f"scan of length {length} got xs of types {short(xs)}")
    check_inputs("scan jaxpr", jaxpr.in_avals, consts + init + [unstacked(x) for x in xs])
    carry_out, ys = split(jaxpr.out_avals, [num_carry])
    if not all(same_type(a, b) for a, b in zip(carry_out, init)):
        raise jx.JaxprTypeError(f"scan jaxpr returns carry {short(carry_out)} for a carry of "
                                f"types {short(init)}")
    return carry_out + [stacked(y, length) for y in ys]


def _scan_jvp(primals, tangents, *, jaxpr, length, num_carry, num_consts, reverse,
              unroll, _split_transpose=False):
    nz = [nonzero(t) for t in tangents]
    const_nz, init_nz, xs_nz = split(nz, [num_consts, num_carry])
    n_ys = len(jaxpr.out_avals) - num_carry
    groups, out_groups = [num_consts, num_carry, len(xs_nz)], [num_carry, n_ys]

    def jvp(carry_nz):
        return jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * n_ys,
                          groups, out_groups)

    carry_nz = fixpoint(lambda c_nz: jvp(c_nz)[1][:num_carry], init_nz)
    body, out_nz = jvp(carry_nz)
    consts, init, xs = split(primals, [num_consts, num_carry])
    c_t, i_t, x_t = split(tangents, [num_consts, num_carry])
    c_dot, x_dot = pick(c_t, const_nz), pick(x_t, xs_nz)
    i_dot = [instantiate(t) for t in pick(i_t, carry_nz)]
    outs = scan_p.bind(*consts, *c_dot, *init, *i_dot, *xs, *x_dot, **_scan_params(
        body, length, num_carry + len(i_dot), num_consts + len(c_dot), reverse, unroll))
    carry, carry_dot, ys, ys_dot = split(outs, [num_carry, len(i_dot), n_ys])
    return carry + ys, tangents_out(carry + ys, out_nz, carry_dot + ys_dot)


def _scan_batch(axis_data, vals, dims, *, jaxpr, length, num_carry, num_consts, reverse,
                unroll, _split_transpose=False):
    """Consts and carries are batched at 0, xs and ys at 1 (0 is the scanned axis); a carry is
    batched if its initial value or its update is (a fixpoint)."""
    vals = [as_array(v) for v in vals]
    size, n_ys = axis_data.size, len(jaxpr.out_avals) - num_carry
    const_b, init_b, xs_b = split([d is not None for d in dims], [num_consts, num_carry])

    def batch(carry_b):
        return batch_jaxpr(jaxpr, axis_data, const_b + carry_b + xs_b, carry_b + [False] * n_ys)

    carry_b = fixpoint(lambda cb: batch(cb)[1][:num_carry], init_b)
    body, out_b = batch(carry_b)
    consts, init, xs = split(vals, [num_consts, num_carry])
    c_dims, i_dims, x_dims = split(dims, [num_consts, num_carry])
    consts = [moveaxis(x, d, 0) if d is not None else x for x, d in zip(consts, c_dims)]
    init = [bdim_at_front(x, d, size) if b else x for x, d, b in zip(init, i_dims, carry_b)]
    xs = [moveaxis(x, d, 1) if d is not None else x for x, d in zip(xs, x_dims)]
    outs = scan_p.bind(*consts, *init, *xs, **_scan_params(
        body, length, num_carry, num_consts, reverse, unroll))
    return outs, [0 if b else None for b in carry_b] + [1 if b else None for b in out_b[num_carry:]]


def _scan_vma(eqn, ins, strict):
    """Carries vary over the axes they vary over after any number of iterations."""
    nc, nk = eqn.params["num_consts"], eqn.params["num_carry"]
    consts, init, xs = split(ins, [nc, nk])
    body = eqn.params["jaxpr"].jaxpr
    carry = fixpoint(lambda c: jaxpr_vma(body, consts + c + xs)[:nk], list(init))
    return carry + jaxpr_vma(body, consts + carry + xs, strict)[nk:]


scan_p.def_jvp(_scan_jvp)
scan_p.def_linearize(linearize_by_partial_eval(
    scan_p, tangent_constants=True, forwardable=_not_from_numpy))
scan_p.def_batch(_scan_batch)
scan_p.def_sharding(scan_types)
scan_p.def_vma(_scan_vma)


@scan_p.def_key_reuse
def _scan_key_reuse(avals, keys, *, jaxpr, num_consts, num_carry, **_):
    """JAX's rule: the body may consume no const, and only the carries it makes afresh."""
    sig = key_reuse.closed_signature(jaxpr, keys)
    # A carry the body passes on unchanged is a const to JAX, which hoists it out of the loop.
    invariant = {f.in_idx for f in sig.forwards if f.in_idx == num_consts + f.out_idx}
    if _const_sinks(sig, num_consts, len(keys)) or any(s.idx in invariant for s in sig.sinks):
        raise errors.KeyReuseError(
            "scan body function leads to key reuse when repeatedly executed, because key "
            f"constants are repeatedly consumed:\n  signature={sig}")
    made = {s.idx for s in sig.sources if s.idx < num_carry}
    if not {i for i in _carry_sinks(sig, num_consts, len(keys)) if i < num_carry} <= made:
        raise errors.KeyReuseError(
            "scan body function leads to key reuse when repeatedly executed, because consumed "
            f"inputs don't match sourced outputs:\n  signature={sig}")
    return sig


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
    xs_leaves = [_as_xs(x) for x in xs_leaves]
    length = _scan_length(xs_leaves, length)
    _check_xs_replicated(xs_leaves)
    if config.read("jax_disable_jit"):
        return _python_scan(f, init, xs_leaves, xs_tree, length, reverse)
    unroll = _canonical_unroll(unroll, length)
    x_avals = [unstacked(typed_aval(x)) for x in xs_leaves]  # concrete ones: typed by layout
    (closed, consts, y_tree, _, _), init_leaves = _trace_carried(
        lambda avals: _cached_scan_body(f, init_tree, xs_tree, avals, x_avals), init_leaves,
        "scan body", init_tree, f)
    outs = scan_p.bind(*consts, *init_leaves, *xs_leaves, **_scan_params(
        closed, length, len(init_leaves), len(consts), bool(reverse), unroll))
    carry, ys = split(outs, [len(init_leaves)])
    return pytree.tree_unflatten(init_tree, carry), pytree.tree_unflatten(y_tree, ys)


def _types_of(tree):
    """A pytree of values as JAX prints its types: float32[] for each array-like leaf."""
    return pytree.tree_map(lambda x: type_str(get_aval(x)) if hasattr(x, "dtype") or
                           dtypes.is_python_scalar(x) else x, tree)


def _cached_scan_body(f, init_tree, xs_tree, carry_avals, x_avals):
    """The scan body traced, at the top level once per function and types (trace_cache.py),
    so an eager scan run again reuses its compiled program and inspection callbacks."""
    return trace_cache.cached(
        (f,), (init_tree, xs_tree, tuple(carry_avals), tuple(x_avals)),
        lambda: _trace_scan_body(f, init_tree, xs_tree, carry_avals, x_avals),
        lambda traced: traced[1])


def _trace_scan_body(f, init_tree, xs_tree, carry_avals, x_avals):
    n_carry, box = len(carry_avals), []

    def flat(*leaves):
        carry = pytree.tree_unflatten(init_tree, leaves[:n_carry])
        out = f(carry, pytree.tree_unflatten(xs_tree, leaves[n_carry:]))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"scan body output must be a pair, got {_types_of(out)}.")
        c_leaves, c_tree = pytree.tree_flatten(out[0])
        y_leaves, y_tree = pytree.tree_flatten(out[1])
        box.append((c_tree, y_tree, len(c_leaves)))
        return c_leaves + y_leaves

    closed, consts = stage_with_const_inputs(flat, list(carry_avals) + list(x_avals))
    c_tree, y_tree, n_c = box[0]
    return closed, consts, y_tree, c_tree, list(closed.out_avals[:n_c])


def _check_xs_replicated(xs_leaves):
    """JAX's ValueError for xs whose type shards the scanned (leading) dimension over an
    Explicit mesh axis: each iteration would read another device's rows."""
    types = [typed_aval(x) for x in xs_leaves]
    if any(spec_of(a)[0] is not None for a in types):
        raise ValueError("0th dimension of all xs should be replicated. Got "
                         f"{', '.join(str(P(*spec_of(a))) for a in types)}")


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
    if is_concrete(lower) and is_concrete(upper):
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
    def scanned(loop_carry, _):  # JAX's errors name the carry by this parameter
        i, x = loop_carry
        return (ew.add(i, 1), body_fun(i, x)), None
    return scanned


def _fori_cond(carry):
    i, upper, _ = carry
    return ew.lt(i, upper)


def _fori_while_body(body_fun):
    def body(loop_carry):  # named as JAX's, whose errors name the carry by it
        i, upper, x = loop_carry
        return ew.add(i, 1), upper, body_fun(i, x)
    return body


def map(f, xs, *, batch_size=None):  # noqa: A001  (lax.map, as JAX names it)
    """[f(x) for x in xs] stacked, as a scan over the leading axis of the pytree xs.

    With batch_size, f is vmapped over batches of that many elements (the remainder in one
    more vmap); batch_size=0 is one vmap over everything."""
    if batch_size is None:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
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
