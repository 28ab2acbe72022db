"""The weak type of the array a concrete reference holds after an operation writes to it, as
JAX's (whose Ref prints its buffer: the value its write, discharged to array operations,
computed). The reference's own type, and so what reading it gives, keeps the weak type it was
made with; only its printed buffer changes."""
from .primitives.control_flow.cond import cond_p
from .primitives.control_flow.loops import scan_p, while_p
from .primitives.state import addupdate_p, swap_p
from .jaxpr import ClosedJaxpr
from .state import IntArray, Ref, is_ref_type


def written(prim, params, in_avals, position, weak):
    """The weak type of the buffer of the reference operand at `position` after `prim` ran
    on it, from the weak type `weak` it held before."""
    rule = _RULES.get(prim)
    if rule is not None:
        return rule(params, in_avals, position, weak)
    called = prim.call_jaxpr(params)
    if called is not None and len(called.jaxpr.invars) == len(in_avals):
        return through(called.jaxpr, position, weak)
    return weak


def through(jaxpr, position, weak):
    """The weak type of the reference given as the jaxpr's input `position` after its
    equations ran, one after another."""
    return _through_var(jaxpr, jaxpr.invars[position], weak)


def _through_var(jaxpr, ref, weak):
    for eqn in jaxpr.eqns:
        for k, v in enumerate(eqn.invars):
            if v is ref:
                weak = written(eqn.primitive, eqn.params, [x.aval for x in eqn.invars], k,
                               weak)
    return weak


def _discharged(indexer, shape):
    """How JAX's discharge writes at `indexer`: 'whole', 'slice' (dynamic_update_slice: its
    result is strong) or 'gather' (an indexed update, keeping the buffer's weak type)."""
    if indexer is None or all(type(e) is tuple and e[0] == 0 and e[1] == d and e[2] == 1
                              for e, d in zip(indexer, shape)):
        return "whole"
    if all(e is None or type(e) is tuple and e[2] == 1 or type(e) is IntArray and not e.shape
           for e in indexer):
        return "slice"
    return "gather"


def _swap(params, in_avals, position, weak):
    if position != 0:
        return weak
    how = _discharged(params["indexer"], in_avals[0].shape)
    return {"whole": in_avals[1].weak_type, "slice": False, "gather": weak}[how]


def _addupdate(params, in_avals, position, weak):
    if position != 0:
        return weak
    how = _discharged(params["indexer"], in_avals[0].shape)
    return {"whole": weak and in_avals[1].weak_type, "slice": False, "gather": weak}[how]


def _cond(params, in_avals, position, weak):
    """The first branch's (JAX's discharged cond takes its output types from it)."""
    return through(params["branches"][0].jaxpr, position - 1, weak) if position else weak


def _loop(body, position, weak):
    """A loop carries the buffer with its body's written type (strong if the body makes it
    strong, even for no iterations, as JAX's promoted carry)."""
    return weak and through(body, position, weak)


def _while(params, in_avals, position, weak):
    position -= params["cond_nconsts"]
    return weak if position < 0 else _loop(params["body_jaxpr"].jaxpr, position, weak)


def _scan(params, in_avals, position, weak):
    return _loop(params["jaxpr"].jaxpr, position, weak)


_RULES = {swap_p: _swap, addupdate_p: _addupdate, cond_p: _cond, while_p: _while,
          scan_p: _scan}


def after_eager(prim, params, args, avals, weak_before):
    """Record on each concrete reference among `args`, and among the constants of the
    jaxprs `params` hold, the weak type its buffer holds after the eager `prim` (given what
    `before_eager` gave)."""
    if weak_before is None:
        return
    for k, (x, a, w) in enumerate(zip(args, avals, weak_before)):
        if w is not None and is_ref_type(a):
            x.stored_weak = written(prim, params, avals, k, w)
    for closed in _closed_jaxprs(params.values()):
        for var, const in zip(closed.jaxpr.constvars, closed.consts):
            if type(const) is Ref:
                const.stored_weak = _through_var(closed.jaxpr, var, const.stored_weak)


def _closed_jaxprs(values):
    """The ClosedJaxprs among params' values (in tuples too, as cond's branches), and those
    of the equations inside them: the jaxprs that may hold references as constants."""
    for v in values:
        if type(v) is ClosedJaxpr:
            yield v
            yield from _closed_jaxprs(p for e in v.jaxpr.eqns for p in e.params.values())
        elif type(v) is tuple:
            yield from _closed_jaxprs(v)


def before_eager(args, params):
    """The weak types of the concrete references among `args` (None for the others), or
    None when the operation can write to no concrete reference (no reference operand, no
    jaxpr that could hold one): most operations, so this is checked first."""
    if Ref in map(type, args):
        return [x.stored_weak if type(x) is Ref else None for x in args]
    for v in params.values():  # (a loop: no generator to set up on every operation)
        if type(v) is ClosedJaxpr or type(v) is tuple and ClosedJaxpr in map(type, v):
            return [None] * len(args)
    return None
