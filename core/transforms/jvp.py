"""Forward mode: JVPTrace and JVPTracer (primal, tangent) with symbolic-zero tangents; jvp()."""
from .. import jaxpr as jx
from .. import pytree, source_info
from .. import sharding_propagation as sp
from ..avals import ShapedArray
from ..primitive import make_primitive
from ..sharding_types import typed_aval
from ..trace import (Trace, Tracer, as_value, current_trace, get_aval, set_current_trace,
                     short_repr)
from .. import dtypes
from . import ad
from ..state import is_ref, uses_refs
from .ad import JVP_OF_ZEROS, LINEARIZE_BY_ITERATIONS, Zero, instantiate
from .staging import stage_closed
from .batching import defvectorized


class JVPTracer(Tracer):
    """A primal value and its tangent (a value of the parent trace, or a symbolic Zero)."""

    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return typed_aval(self.primal)  # an Array's sharding type too (what jit stages)

    def to_concrete_value(self):
        p = self.primal
        return p.to_concrete_value() if hasattr(p, "to_concrete_value") else p

    def short_repr(self):
        primal = short_repr(self.primal)
        if self._trace.linearizing:  # the tangent is staged: JAX shows its type
            return f"GradTracer(primal={primal}, typeof(tangent)={get_aval(self.tangent).str_short()})"
        return f"JVPTracer(primal={primal}, tangent={short_repr(self.tangent)})"


class JVPTrace(Trace):
    """Runs each primitive's JVP rule with `rule_trace` current (the parent, or for
    linearize a dispatcher sending tangent computations to a staging trace)."""

    def __init__(self, parent, rule_trace=None):
        self.parent = parent
        self.rule_trace = rule_trace or parent
        self.linearizing = rule_trace is not None

    def lift(self, x):
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.from_primal(x)

    def process_primitive(self, prim, args, params):
        primals, tangents = zip(*map(self.lift, args)) if args else ((), ())
        if all(type(t) is Zero for t in tangents) and prim not in JVP_OF_ZEROS:
            with set_current_trace(self.parent):
                return prim.bind(*primals, **params)
        rule = prim.linearize if self.linearizing and prim.linearize else prim.jvp
        if rule is prim.linearize and (any(is_ref(p) for p in primals) or uses_refs(params)):
            return self._linearize_with_refs(prim, args, params)
        if rule is None:
            raise NotImplementedError(_no_jvp_message(prim))
        with set_current_trace(self.rule_trace):
            out, out_t = rule(primals, tangents, **params)
        if prim.multiple_results:
            return [self._maybe_tracer(o, t) for o, t in zip(out, out_t)]
        return self._maybe_tracer(out, out_t)

    def _linearize_with_refs(self, prim, args, params):
        """A jit using references, under linearize, is inlined: its equations are linearized
        one by one, so the reference primitives' rules follow the writes (its own linearize
        rule would lose them). A loop or a branch runs iteration by iteration the same way
        (ad.LINEARIZE_BY_ITERATIONS); other primitives using references are refused."""
        if prim.name == "jit":
            closed = params["jaxpr"]
            return jx.eval_jaxpr(closed.jaxpr, closed.consts, *args)
        by_iterations = LINEARIZE_BY_ITERATIONS.get(prim)
        if by_iterations is None:
            raise NotImplementedError(
                f"refjax cannot differentiate in reverse mode (grad, vjp, linearize) a "
                f"{prim.name} using mutable array references (jax.Ref); forward mode (jvp, "
                "jacfwd) can")
        return by_iterations(args, **params)

    def _maybe_tracer(self, primal, tangent):
        # As JAX: a value whose tangent is a symbolic zero is no longer traced by this trace.
        return primal if type(tangent) is Zero else JVPTracer(self, primal, tangent)


    def process_custom_jvp_call(self, call, fun, jvp, args, symbolic_zeros):
        """A custom_jvp function under JVP: its rule runs on the primals (values of the parent
        trace: concrete outside jit) and the function does not, as in JAX."""
        primals, tangents = self._split(args)
        if all(type(t) is Zero for t in tangents):
            with set_current_trace(self.parent):
                return call(fun, jvp, primals, symbolic_zeros)
        with set_current_trace(self.rule_trace):
            if not symbolic_zeros:
                tangents = [instantiate(t) for t in tangents]
            outs, out_t = jvp(primals, tangents)
        return [JVPTracer(self, o, t) for o, t in zip(outs, out_t)]

    def process_custom_vjp_call(self, call, fun, rule, args):
        """A custom_vjp function under JVP: fwd runs on the primals; the tangents go through a
        custom_lin equation, whose transpose runs bwd (forward mode raises, as in JAX)."""
        primals, tangents = self._split(args)
        if all(type(t) is Zero for t in tangents):
            with set_current_trace(self.parent):
                return call(fun, rule, primals)
        with set_current_trace(self.parent):
            outs, residuals = rule.fwd(primals, [type(t) is not Zero for t in tangents])
        out_avals = [get_aval(o).to_tangent_aval() for o in outs]
        with set_current_trace(self.rule_trace):
            out_t = rule.linear(residuals, [instantiate(t) for t in tangents], out_avals)
        return [JVPTracer(self, o, t) for o, t in zip(outs, out_t)]

    def _split(self, args):
        pairs = [self.lift(x) for x in args]
        return [p for p, _ in pairs], [t for _, t in pairs]


def _no_jvp_message(prim):
    why = f": {prim.nondiff_reason}" if prim.nondiff_reason else ""
    return f"Differentiation rule for '{prim.name}' not implemented{why}"


def jvp_flat(fun, primals, tangents, parent=None, rule_trace=None):
    """Run fun on JVP tracers; returns (out primals, out tangents) with tangents possibly Zero."""
    trace = JVPTrace(parent or current_trace(), rule_trace)
    tracers = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
    with set_current_trace(trace):
        outs = fun(*tracers)
    pairs = [trace.lift(o) for o in outs]
    return [p for p, _ in pairs], [t for _, t in pairs]


def check_tangent(p, t):
    pa, ta = get_aval(p), get_aval(t)
    expected = pa.to_tangent_aval()
    if ta.dtype != expected.dtype:
        raise TypeError(
            f"primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in "
            f"case of int/bool primal dtype the tangent dtype must be float0. Got primal dtype "
            f"{pa.dtype.name} and so expected tangent dtype {expected.dtype.name}, but got "
            f"tangent dtype {ta.dtype.name} instead.")
    if ta.shape != pa.shape:
        raise ValueError(f"jvp called with different primal and tangent shapes; got primal shape "
                         f"{pa.shape} and tangent shape {ta.shape}")


def jvp(fun, primals, tangents, has_aux=False):
    """(fun(*primals), J·tangents): forward-mode derivative, as jax.jvp."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = pytree.tree_flatten(tuple(primals))
    t_leaves, t_tree = pytree.tree_flatten(tuple(tangents))
    if pytree.tree_structure(primals) != pytree.tree_structure(tangents):  # as given, as JAX
        raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure "
                        f"{pytree.tree_structure(primals)} whereas tangents have tree structure "
                        f"{pytree.tree_structure(tangents)}.")
    p_leaves = [as_value(p) for p in p_leaves]
    t_leaves = [as_value(t) for t in t_leaves]
    for p, t in zip(p_leaves, t_leaves):
        check_tangent(p, t)
    aux_box = []

    def flat_fun(*args):
        out = fun(*pytree.tree_unflatten(p_tree, args))
        if has_aux:
            out, aux = split_aux(out)
            aux_box.append(aux)
        leaves, tree = pytree.tree_flatten(out)
        aux_box.insert(0, tree)
        return leaves

    t_leaves = [Zero(get_aval(t)) if get_aval(t).dtype == dtypes.float0 else t for t in t_leaves]
    with source_info.transformed("jvp"):  # the user's function's equations, as JAX names them
        out_p, out_t = jvp_flat(flat_fun, p_leaves, t_leaves)
    out_tree = aux_box[0]
    out_t = [instantiate(t) for t in out_t]
    result = (pytree.tree_unflatten(out_tree, out_p), pytree.tree_unflatten(out_tree, out_t))
    return result + (aux_box[1],) if has_aux else result


def split_aux(out, name="jvp"):
    """(output, aux) of a has_aux function's result, the aux lowered out of the current JVP
    trace; TypeError naming `name` otherwise."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"{name} with has_aux=True: expected function with aux output to return "
                        f"a two-element tuple (output, aux), but got type {type(out)}")
    out, aux = out
    # aux is not differentiated: values of the trace fun ran on leave it as their primals
    # (JAX does the same), so no tracer escapes with the aux.
    trace = current_trace()
    return out, pytree.tree_map(
        lambda x: x.primal if type(x) is JVPTracer and x._trace is trace else x, aux)


# ---------------------------------------------------------------- JVP of a jaxpr

def _layout(groups, nonzeros):
    """[(index, is_tangent)] of a JVP jaxpr's binders: group by group, the primals and then
    that group's nonzero tangents (so a scan's consts, carry and xs each keep their tangents)."""
    layout, start = [], 0
    for n in groups:
        idx = range(start, start + n)
        layout += [(i, False) for i in idx] + [(i, True) for i in idx if nonzeros[i]]
        start += n
    return layout


def jvp_jaxpr(closed, nonzeros, instantiate=True, in_groups=None, out_groups=None):
    """The JVP of a closed jaxpr as a closed jaxpr. Its inputs are the primals and the tangents
    of the inputs marked in `nonzeros`; its outputs the primal outputs and the output
    tangents that are nonzero or asked for by `instantiate` (a bool or one per output). With
    `in_groups`/`out_groups` (sizes), binders are laid out group by group, each group's
    primals followed by its tangents (default: one group). Returns (ClosedJaxpr,
    out_nonzeros)."""
    avals = closed.in_avals
    n_out = len(closed.out_avals)
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * n_out
    in_layout = _layout(in_groups or [len(avals)], nonzeros)
    box = []

    def fun(*args):
        primals = [None] * len(avals)
        tangents = [Zero(a.to_tangent_aval()) for a in avals]
        for (i, is_tangent), x in zip(in_layout, args):
            (tangents if is_tangent else primals)[i] = x
        outs, out_t = jvp_flat(jx.jaxpr_as_fun(closed, jx.literal_array), primals, tangents)
        out_nz = [type(t) is not Zero or bool(inst) for t, inst in zip(out_t, instantiate)]
        box.append(out_nz)
        return [ad.instantiate(out_t[i]) if t else outs[i]
                for i, t in _layout(out_groups or [n_out], out_nz)]

    in_avals = [avals[i].to_tangent_aval() if t else avals[i] for i, t in in_layout]
    return stage_closed(fun, in_avals), box[0]


# ---------------------------------------------------------------- stop_gradient

stop_gradient_p = make_primitive("stop_gradient")
stop_gradient_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype, x.weak_type))


def _stop_gradient_jvp(primals, tangents):
    out = stop_gradient_p.bind(*primals)
    return out, Zero(get_aval(out).to_tangent_aval())


stop_gradient_p.def_jvp(_stop_gradient_jvp)
defvectorized(stop_gradient_p)
stop_gradient_p.def_sharding(sp.elementwise)


def stop_gradient(x):
    """x with a zero derivative, for every leaf of a pytree."""
    def one(leaf):
        leaf = as_value(leaf)
        if not dtypes.is_inexact(get_aval(leaf).dtype):
            return leaf
        return stop_gradient_p.bind(leaf)
    return pytree.tree_map(one, x)
