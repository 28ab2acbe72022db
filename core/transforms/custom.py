"""custom_jvp and custom_vjp: user-defined derivative rules, as call primitives whose JVP
(or linearization) runs the user's rule; they compose with jit and vmap."""
import functools
import inspect

from .. import pytree
from ..avals import ShapedArray
from ..primitive import make_primitive
from ..trace import Tracer, as_value, get_aval
from .ad import Zero, instantiate
from .batching import bdim_at_front, moveaxis
from .staging import stage
from .vmap import batch_jaxpr, vmap_flat

custom_jvp_call_p = make_primitive("custom_jvp_call", multiple_results=True)
custom_vjp_call_p = make_primitive("custom_vjp_call", multiple_results=True)
custom_lin_p = make_primitive("custom_lin", multiple_results=True)

custom_jvp_call_p.def_abstract_eval(lambda *avals, call_jaxpr, **_: call_jaxpr.out_avals)
custom_vjp_call_p.def_abstract_eval(lambda *avals, call_jaxpr, **_: call_jaxpr.out_avals)
custom_lin_p.def_abstract_eval(lambda *avals, out_avals, **_: list(out_avals))


def _split_nondiff(args, nondiff_argnums):
    nondiff = tuple(args[i] for i in nondiff_argnums)
    diff = tuple(a for i, a in enumerate(args) if i not in nondiff_argnums)
    return nondiff, diff


def _merge(nondiff_argnums, nondiff, diff):
    args, nd, d = [], iter(nondiff), iter(diff)
    for i in range(len(nondiff_argnums) + len(diff)):
        args.append(next(nd) if i in nondiff_argnums else next(d))
    return args


def _check_nondiff(nondiff, name):
    for x in pytree.tree_leaves(nondiff):
        if isinstance(x, Tracer):
            raise TypeError(f"{name}: nondiff_argnums arguments must not be traced values (got "
                            f"{x!r}); pass arrays as differentiable arguments instead.")


class custom_jvp:
    """A function with a custom JVP rule: `f.defjvp(rule)` with rule(primals, tangents) ->
    (primal_out, tangent_out), or `f.defjvps(*per_arg)`."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None
        self.symbolic_zeros = False

    def defjvp(self, jvp, symbolic_zeros=False):
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *tangent_fns):
        def jvp(primals, tangents):
            out = self(*primals)
            total = None
            for fn, t in zip(tangent_fns, tangents):
                if fn is None:
                    continue
                contrib = fn(t, out, *primals)
                total = contrib if total is None else pytree.tree_map(
                    lambda a, b: a + b, total, contrib)
            if total is None:
                total = pytree.tree_map(lambda o: o * 0, out)
            return out, total
        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = _resolve_kwargs(self.fun, args, kwargs)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {self.__name__} using "
                                 "defjvp.")
        nondiff, leaves, in_tree, out_box, closed, consts = _stage_call(self, args, "custom_jvp")
        flat_jvp = _flat_jvp(self.jvp, self.nondiff_argnums, nondiff, in_tree, out_box)
        outs = custom_jvp_call_p.bind(*consts, *leaves, call_jaxpr=closed, jvp=flat_jvp,
                                      num_consts=len(consts), symbolic_zeros=self.symbolic_zeros)
        return pytree.tree_unflatten(out_box["tree"], outs)


def _stage_call(f, args, name):
    """Split off nondiff args, flatten the rest and stage f.fun over the flat leaves.
    Returns (nondiff, leaves, in_tree, out_box, closed jaxpr, tracer consts); out_box["tree"]
    receives the output structure."""
    nondiff, diff = _split_nondiff(args, f.nondiff_argnums)
    _check_nondiff(nondiff, name)
    leaves, in_tree = pytree.tree_flatten(diff)
    leaves = [as_value(x) for x in leaves]
    out_box = {}

    def flat_fun(*flat):
        out = f.fun(*_merge(f.nondiff_argnums, nondiff, pytree.tree_unflatten(in_tree, flat)))
        out_leaves, out_box["tree"] = pytree.tree_flatten(out)
        return out_leaves

    closed, consts = stage(flat_fun, [get_aval(x) for x in leaves])
    return nondiff, leaves, in_tree, out_box, closed, consts


def _resolve_kwargs(fun, args, kwargs):
    ba = inspect.signature(fun).bind(*args, **kwargs)
    ba.apply_defaults()
    return ba.args


class _FlatJvp:
    """The user's JVP rule over flat lists (a param of custom_jvp_call; hashed by identity)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, primals, tangents):
        return self.fn(primals, tangents)

    def __repr__(self):
        return "jvp"


def _flat_jvp(user_jvp, nondiff_argnums, nondiff, in_tree, out_box):
    def flat(primals, tangents):
        p = pytree.tree_unflatten(in_tree, primals)
        t = pytree.tree_unflatten(in_tree, tangents)
        res = user_jvp(*nondiff, tuple(p), tuple(t)) if nondiff_argnums else user_jvp(tuple(p), tuple(t))
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise TypeError("custom_jvp rule must return a pair (primal_out, tangent_out), got "
                            f"{type(res).__name__}")
        out, t_out = res
        out_leaves, out_tree = pytree.tree_flatten(out)
        t_leaves, t_tree = pytree.tree_flatten(t_out)
        if t_tree != out_tree:
            raise TypeError(f"Custom JVP rule must produce primal and tangent outputs with equal "
                            f"container (pytree) structures, but got {out_tree} and {t_tree}.")
        for o, t in zip(out_leaves, t_leaves):
            if get_aval(as_value(o)).shape != get_aval(as_value(t)).shape:
                raise ValueError(f"Custom JVP rule must produce primal and tangent outputs with "
                                 f"equal shapes, got {get_aval(o).shape} and {get_aval(t).shape}")
        return out_leaves, [as_value(t) for t in t_leaves]
    return _FlatJvp(flat)


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts, symbolic_zeros):
    consts, primals = primals[:num_consts], primals[num_consts:]
    tangents = tangents[num_consts:]
    if not symbolic_zeros:
        tangents = [instantiate(t) for t in tangents]
    del consts  # closed-over values enter the user's rule through its own closure
    outs, t_outs = jvp(list(primals), list(tangents))
    return outs, t_outs


def _custom_jvp_call_batch(axis_data, vals, dims, *, call_jaxpr, jvp, num_consts, symbolic_zeros):
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    in_dims = [None if d is None else 0 for d in dims]
    closed, _ = batch_jaxpr(call_jaxpr, axis_data, [d is not None for d in dims], True)
    p_dims = in_dims[num_consts:]

    def batched_jvp(primals, tangents):
        n = len(primals)
        return _split2(vmap_flat(lambda *pt: _concat(*jvp(list(pt[:n]), list(pt[n:]))),
                                 list(primals) + list(tangents), p_dims + p_dims, axis_data), n)

    outs = custom_jvp_call_p.bind(*vals, call_jaxpr=closed, jvp=_FlatJvp(batched_jvp),
                                  num_consts=num_consts, symbolic_zeros=False)
    return outs, [0] * len(outs)


def _split2(outs, _):
    k = len(outs) // 2
    return outs[:k], outs[k:]


def _concat(a, b):
    return list(a) + [instantiate(t) for t in b]


def _batched_aval(aval, d, size):
    if d is None:
        return aval
    return ShapedArray((size,) + aval.shape, aval.dtype, aval.weak_type)


custom_jvp_call_p.def_call("call_jaxpr")
custom_jvp_call_p.def_jvp(_custom_jvp_call_jvp)
custom_jvp_call_p.def_batch(_custom_jvp_call_batch)


# ---------------------------------------------------------------- custom_vjp

class custom_vjp:
    """A function with a custom VJP: `f.defvjp(fwd, bwd)`; fwd(*args) -> (out, residuals),
    bwd(residuals, cotangent_out) -> tuple of cotangents (one per differentiable argument)."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = _resolve_kwargs(self.fun, args, kwargs)
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {self.__name__} using "
                                 "defvjp.")
        nondiff, leaves, in_tree, out_box, closed, consts = _stage_call(self, args, "custom_vjp")
        rule = _VjpRule(self, nondiff, in_tree, out_box, [get_aval(x) for x in leaves])
        outs = custom_vjp_call_p.bind(*consts, *leaves, call_jaxpr=closed, rule=rule,
                                      num_consts=len(consts))
        return pytree.tree_unflatten(out_box["tree"], outs)


class _VjpRule:
    """fwd and bwd over flat lists (a param of custom_vjp_call; hashed by identity)."""

    def __init__(self, f, nondiff, in_tree, out_box, in_avals):
        self.f, self.nondiff, self.in_tree, self.out_box = f, nondiff, in_tree, out_box
        self.in_avals = in_avals

    def __repr__(self):
        return f"{self.f.__name__}_vjp"

    def fwd(self, primals):
        args = _merge(self.f.nondiff_argnums, self.nondiff, pytree.tree_unflatten(self.in_tree, primals))
        res = self.f.fwd(*args)
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise TypeError("custom_vjp fwd must return a pair (output, residuals), got "
                            f"{type(res).__name__}")
        out, residuals = res
        out_leaves, out_tree = pytree.tree_flatten(out)
        self.out_box.setdefault("tree", out_tree)
        res_leaves, self.res_tree = pytree.tree_flatten(residuals)
        return out_leaves, [as_value(r) for r in res_leaves]

    def bwd(self, res_leaves, cts):
        residuals = pytree.tree_unflatten(self.res_tree, res_leaves)
        ct_tree = pytree.tree_unflatten(self.out_box["tree"], cts)
        args = (*self.nondiff, residuals, ct_tree) if self.f.nondiff_argnums else (residuals, ct_tree)
        grads = self.f.bwd(*args)
        if not isinstance(grads, (tuple, list)):
            raise TypeError(f"Custom VJP bwd rule must produce a tuple of cotangents, one per "
                            f"differentiable argument, got {type(grads).__name__}")
        diff = pytree.tree_unflatten(self.in_tree, [None] * self.in_tree.num_leaves)
        if len(grads) != len(diff):
            raise TypeError(f"Custom VJP bwd rule must produce an output with the same container "
                            f"(pytree) structure as the args tuple of the primal function: "
                            f"expected {len(diff)} cotangents, got {len(grads)}")
        flat = []
        for g, sub in zip(grads, diff):
            n = len(pytree.tree_leaves(sub, is_leaf=lambda x: x is None)) if sub is not None else 1
            leaves = pytree.tree_leaves(g) if g is not None else [None] * n
            flat.extend(leaves)
        return [Zero(a.to_tangent_aval()) if g is None else as_value(g)
                for g, a in zip(flat, self.in_avals)]


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, rule, num_consts):
    primals, tangents = primals[num_consts:], tangents[num_consts:]
    outs, residuals = rule.fwd(list(primals))
    nz = [instantiate(t) for t in tangents]
    out_avals = tuple(get_aval(o).to_tangent_aval() for o in outs)
    t_outs = custom_lin_p.bind(*residuals, *nz, num_res=len(residuals), rule=rule,
                               out_avals=out_avals)
    return outs, t_outs


def _custom_lin_transpose(cts, *args, num_res, rule, out_avals):
    residuals = args[:num_res]
    cts = [instantiate(c) for c in cts]
    grads = rule.bwd(list(residuals), cts)
    return [None] * num_res + list(grads)


def _custom_vjp_call_batch(axis_data, vals, dims, *, call_jaxpr, rule, num_consts):
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    in_dims = [None if d is None else 0 for d in dims]
    closed, _ = batch_jaxpr(call_jaxpr, axis_data, [d is not None for d in dims], True)
    batched = _BatchedVjpRule(rule, in_dims[num_consts:], axis_data)
    outs = custom_vjp_call_p.bind(*vals, call_jaxpr=closed, rule=batched, num_consts=num_consts)
    return outs, [0] * len(outs)


class _BatchedVjpRule:
    """fwd/bwd of a custom_vjp function under vmap: both vmapped, residuals batched at 0."""

    def __init__(self, rule, in_dims, axis_data):
        self.rule, self.in_dims, self.axis_data = rule, in_dims, axis_data

    def __repr__(self):
        return f"batched_{self.rule!r}"

    def fwd(self, primals):
        box = {}

        def f(*p):
            outs, res = self.rule.fwd(list(p))
            box["n_out"] = len(outs)
            return list(outs) + list(res)

        flat = vmap_flat(f, list(primals), self.in_dims, self.axis_data)
        return flat[:box["n_out"]], flat[box["n_out"]:]

    def bwd(self, residuals, cts):
        n_res = len(residuals)
        grads = vmap_flat(
            lambda *rc: [instantiate(g) for g in self.rule.bwd(list(rc[:n_res]), list(rc[n_res:]))],
            list(residuals) + list(cts), [0] * (n_res + len(cts)), self.axis_data)
        return grads


def _custom_lin_batch(axis_data, vals, dims, *, num_res, rule, out_avals):
    vals = [bdim_at_front(v, d, axis_data.size) for v, d in zip(vals, dims)]
    batched = _BatchedVjpRule(rule, None, axis_data)
    new_avals = tuple(_batched_aval(a, 0, axis_data.size) for a in out_avals)
    outs = custom_lin_p.bind(*vals, num_res=num_res, rule=batched, out_avals=new_avals)
    return outs, [0] * len(outs)


custom_vjp_call_p.def_call("call_jaxpr")
custom_vjp_call_p.def_jvp(_custom_vjp_call_jvp)
custom_vjp_call_p.def_batch(_custom_vjp_call_batch)
custom_lin_p.def_transpose(_custom_lin_transpose)
custom_lin_p.def_batch(_custom_lin_batch)
custom_lin_p.nondiff_reason = "it is the linearized part of a custom_vjp function"
