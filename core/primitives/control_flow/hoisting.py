"""Loop-invariant code motion for the known part of a partially evaluated scan, as JAX's
_scan_known_hoisting: equations of the known body reading only its consts (and literals) run
once before the loop, their results become consts of the known loop, and residuals among them
reach the unknown loop as consts rather than stacked per iteration."""
from ... import jaxpr as jx
from ...state import AbstractRef

# Primitives whose known part JAX's retrace of the known body splits off and hoists even when
# some of their inputs vary per iteration (shard_map: its partial evaluation always binds the
# known shard_map on the parent trace, an empty one when no input is loop-invariant).
_SPLIT_WHEN_HOISTED = set()


def split_when_hoisted(primitive):
    """Have hoist_invariants split `primitive`'s equations by their partial_eval rule."""
    _SPLIT_WHEN_HOISTED.add(primitive)

def hoist_invariants(known, n_consts, consts_outer, n_res):
    """Split `known` (a ClosedJaxpr: consts | carries, xs -> outputs | n_res residuals) into
    the equations to run before the loop (on the outer atoms `consts_outer` of its consts) and
    the loop's body (which still outputs every residual: the invariant ones go unstacked).
    Returns (hoisted equations, the body: its consts the invariant values it reads, their
    outer atoms, {body variable: outer atom} for every loop-invariant variable and
    reference)."""
    kj = known.jaxpr
    pairs = list(zip(kj.invars[:n_consts], consts_outer))
    # references stay in the loop (what they hold changes), as JAX's mutable consts do
    refs = {v: o for v, o in pairs if isinstance(v.aval, AbstractRef)}
    outer = {v: o for v, o in pairs if v not in refs}
    hoisted, kept = [], []
    for eqn in kj.eqns:
        if _invariant(eqn, outer):
            _hoist(eqn, outer, hoisted)
        elif eqn.primitive in _SPLIT_WHEN_HOISTED:
            known_part, unknown_part = _split_variant(eqn, outer)
            for e in known_part:
                _hoist(e, outer, hoisted)
            kept.extend(unknown_part)
        else:
            kept.append(eqn)
    args = list(refs) + list(kj.invars[n_consts:])
    consts = jax_const_order(kept, args, kj.outvars, n_res, outer) + list(refs)
    body = jx.Jaxpr(kj.constvars, consts + list(kj.invars[n_consts:]), kj.outvars, kept)
    outer.update(refs)
    return hoisted, jx.ClosedJaxpr(body, known.consts), [outer[v] for v in consts], outer


def _hoist(eqn, outer, hoisted):
    """Append `eqn` to the hoisted equations, on outer atoms, its results fresh outer ones."""
    fresh = [jx.Var(v.aval) for v in eqn.outvars]
    hoisted.append(eqn._replace(invars=[_outer_atom(a, outer) for a in eqn.invars],
                                outvars=fresh))
    outer.update(zip(eqn.outvars, fresh))


def _split_variant(eqn, outer):
    """(known equations, unknown ones): `eqn` split by its partial_eval rule, the inputs that
    vary per iteration unknown."""
    unknowns = [type(a) is not jx.Literal and a not in outer for a in eqn.invars]
    known_part, unknown_part, _ = eqn.primitive.partial_eval(eqn, unknowns)
    return known_part, unknown_part


def _invariant(eqn, outer):
    # as JAX's, effects too run once (JAX evaluates every known equation there)
    if any(isinstance(v.aval, AbstractRef) for v in eqn.outvars):
        return False
    return all(type(a) is jx.Literal or a in outer for a in eqn.invars)


def _outer_atom(atom, outer):
    return atom if type(atom) is jx.Literal else outer[atom]


class _Node:
    """A tracer of JAX's partial evaluation: the consts' order follows their graph."""
    __slots__ = ("parents", "const")

    def __init__(self, parents=(), const=None):
        self.parents, self.const = parents, const


def jax_const_order(eqns, args, outvars, n_res, outer):
    """The invariant variables the loop body reads, in the order JAX's retrace of the body
    (trace_to_jaxpr_nounits) makes them constvars: a fresh const tracer per use, the
    tracers put in JAX's topological order and then sorted by equation."""
    env = {v: _Node() for v in args}
    rank, effects = {}, []

    def use(atom):
        if type(atom) is jx.Literal or atom in outer:
            return _Node(const=None if type(atom) is jx.Literal else atom)
        return env[atom]
    for i, eqn in enumerate(eqns):
        ins = [use(a) for a in eqn.invars]
        if not eqn.outvars:  # reached as JAX reaches its effects' handles
            effects.append(_Node(ins))
        for v in eqn.outvars:
            env[v] = _Node(ins)
            rank[id(env[v])] = i
    n_out = len(outvars) - n_res
    outs = [use(v) for v in outvars[:n_out]] + [
        env[v] for v in outvars[n_out:] if type(v) is not jx.Literal and v not in outer]
    nodes = sorted(toposort([env[v] for v in args] + outs + effects),
                   key=lambda n: rank.get(id(n), -1))
    order = dict.fromkeys(n.const for n in nodes if n.const is not None)
    # what JAX's graph does not reach (an equation whose results are unused) still runs here
    order.update(dict.fromkeys(a for e in eqns for a in e.invars
                               if type(a) is not jx.Literal and a in outer))
    return list(order)


def toposort(end_nodes):
    """JAX's topological sort of tracers (jaxlib's topological_sort on `parents`): from the
    end nodes, a node once all its children are placed, last ones first, then reversed."""
    ends = list({id(n): n for n in end_nodes}.values())
    counts, stack = {}, list(ends)
    while stack:
        n = stack.pop()
        counts[id(n)] = counts.get(id(n), 0) + 1
        if counts[id(n)] == 1:
            stack.extend(n.parents)
    for n in ends:
        counts[id(n)] -= 1
    out, ready = [], [n for n in ends if counts[id(n)] == 0]
    while ready:
        n = ready.pop()
        out.append(n)
        for p in n.parents:
            counts[id(p)] -= 1
            if counts[id(p)] == 0:
                ready.append(p)
    return out[::-1]


def fresh_residuals(unknown, n_res):
    """`unknown` (a ClosedJaxpr whose first n_res invars are residuals, the same variables
    the known body outputs) with residual binders of its own, so that a jaxpr printing
    both loops names each once, as JAX's."""
    j = unknown.jaxpr
    fresh = {v: jx.Var(v.aval) for v in j.invars[:n_res]}

    def sub(atom):
        return atom if type(atom) is jx.Literal else fresh.get(atom, atom)
    eqns = [e._replace(invars=[sub(a) for a in e.invars]) for e in j.eqns]
    new = j._replace(invars=[sub(v) for v in j.invars], outvars=[sub(v) for v in j.outvars],
                     eqns=eqns)
    return jx.ClosedJaxpr(new, unknown.consts)


def renamed(closed):
    """`closed` with variables of its own, its sub-jaxprs' too (the same program): a known
    loop body partial evaluation made from the variables of a body the unknown loop also
    prints then names each once, as JAX's."""
    j = closed.jaxpr
    fresh = {}

    def sub(v):
        if type(v) is jx.Literal or isinstance(v, jx.DropVar):
            return v
        return fresh.setdefault(v, jx.Var(v.aval))
    eqns = [e._replace(invars=[sub(a) for a in e.invars], outvars=[sub(v) for v in e.outvars],
                       params={k: _renamed_param(p) for k, p in e.params.items()})
            for e in j.eqns]
    new = j._replace(constvars=[sub(v) for v in j.constvars], invars=[sub(v) for v in j.invars],
                     outvars=[sub(v) for v in j.outvars], eqns=eqns)
    return jx.ClosedJaxpr(new, closed.consts)


def _renamed_param(p):
    if isinstance(p, jx.ClosedJaxpr):
        return renamed(p)
    if type(p) is tuple and p and all(isinstance(q, jx.ClosedJaxpr) for q in p):
        return tuple(map(renamed, p))
    return p
