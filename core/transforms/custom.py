"""custom_jvp: a function with a user-defined JVP rule. Calling it asks the current trace what
to do, as JAX does: evaluation runs the function, JVP (and grad, through linearize) runs the
rule on the primal values without running the function, and any other trace (staging, vmap)
stages the function as a `custom_jvp_call` equation whose rules call the user's rule later.
What custom_jvp and custom_vjp (custom_vjp.py) share is here too."""
import functools
import inspect

from .. import pytree
from ..avals import ShapedArray
from ..primitive import make_primitive
from ..trace import Tracer, current_trace, get_aval
from .ad import instantiate
from .batching import moveaxis
from .dce import dce_closed, def_dce, has_effects, pruned
from .staging import stage
from .vmap import batch_jaxpr, vmap_flat

custom_jvp_call_p = make_primitive("custom_jvp_call", multiple_results=True)
custom_jvp_call_p.def_abstract_eval(lambda *avals, call_jaxpr, **_: call_jaxpr.out_avals)


# ---------------------------------------------------------------- what both share

def split_nondiff(args, nondiff_argnums):
    nondiff = tuple(args[i] for i in nondiff_argnums)
    diff = tuple(a for i, a in enumerate(args) if i not in nondiff_argnums)
    return nondiff, diff


def merge_nondiff(nondiff_argnums, nondiff, diff):
    args, nd, d = [], iter(nondiff), iter(diff)
    for i in range(len(nondiff_argnums) + len(diff)):
        args.append(next(nd) if i in nondiff_argnums else next(d))
    return args


def check_nondiff(nondiff, name):
    for x in pytree.tree_leaves(nondiff):
        if isinstance(x, Tracer):
            raise TypeError(f"{name}: nondiff_argnums arguments must not be traced values (got "
                            f"{x!r}); pass arrays as differentiable arguments instead.")


def resolve_kwargs(fun, args, kwargs, kind="custom_jvp"):
    """args and kwargs as positional arguments of fun (TypeError in JAX's words when they do
    not bind, or when a keyword-only argument is passed)."""
    where = (f"The input arguments to the {kind}-decorated function {fun_name(fun)} could not "
             "be resolved to positional-only arguments. Binding failed with the error:\n")
    try:
        ba = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as err:
        raise TypeError(where + str(err)) from None
    ba.apply_defaults()
    passed = [k for k in ba.kwargs if k in kwargs]
    if passed:
        raise TypeError(where + "The following keyword arguments could not be resolved to "
                        f"positions: {', '.join(passed)}")
    return ba.args


def fun_name(fun):
    return getattr(fun, "__name__", type(fun).__name__)


class FlatFun:
    """The decorated function over the flat differentiable leaves (the nondiff arguments
    fixed). It records its output structure and types the first time it runs, so that the
    rules' outputs can be checked against them (as JAX does when the function ran)."""

    def __init__(self, f, nondiff, in_tree):
        self.f, self.nondiff, self.in_tree = f, nondiff, in_tree
        self.out_tree = self.out_avals = None

    def __call__(self, *leaves):
        args = merge_nondiff(self.f.nondiff_argnums, self.nondiff,
                             pytree.tree_unflatten(self.in_tree, leaves))
        out_leaves, out_tree = pytree.tree_flatten(self.f.fun(*args))
        self.record(out_tree, out_leaves)
        return out_leaves

    def record(self, out_tree, out_leaves):
        if self.out_tree is None:
            self.out_tree = out_tree
            self.out_avals = [get_aval(x) for x in out_leaves]

    def py_args(self, leaves):
        return merge_nondiff(self.f.nondiff_argnums, self.nondiff,
                             pytree.tree_unflatten(self.in_tree, leaves))

    def check_primal_out(self, rule, kind, out_tree, out_leaves):
        """TypeError (JAX's) when the primal output a rule (kind "JVP" or "fwd") returns
        differs in structure or type from the function's, if the function ran."""
        if self.out_tree is None:
            return
        got = pytree.tree_unflatten(out_tree, [_str(get_aval(x)) for x in out_leaves])
        want = pytree.tree_unflatten(self.out_tree, [_str(a) for a in self.out_avals])
        if out_tree != self.out_tree:
            raise TypeError(f"{_pair_intro(rule, kind, self.name, False)} container/pytree "
                            f"structure:\n    {_types(got)}\nwhile the {self.decorated} function "
                            f"{self.name} had output container/pytree structure:\n"
                            f"    {_types(want)}.")
        if any(not _typematch(get_aval(x), a) for x, a in zip(out_leaves, self.out_avals)):
            raise TypeError(f"{_pair_intro(rule, kind, self.name, True)} shapes/dtypes of:\n"
                            f"    {_types(got)}\nwhile the {self.decorated} function {self.name} "
                            f"had output shapes/dtypes of:\n    {_types(want)}")

    @property
    def name(self):
        return fun_name(self.f.fun)

    @property
    def decorated(self):
        return f"{type(self.f).__name__}-decorated"


def _pair_intro(rule, kind, name, leaves):
    """The start of JAX's message about a rule's primal output, up to "had"."""
    if kind == "JVP":
        same = "with leaves of the same shape/dtype" if leaves else \
            "of the same container/pytree structure"
        return (f"{rule} must produce a pair (list or tuple of length two) where the first "
                "element represents the primal output (equal in value to the output of the "
                f"custom_jvp-decorated function {name}, and in particular {same}), but instead "
                "the JVP rule output's first element had")
    return (f"{rule} must produce a pair (list or tuple of length two) where the first element "
            "represents the primal output (equal to the output of the custom_vjp-decorated "
            f"function {name}) and the second element represents residuals (i.e. values stored "
            "from the forward pass for use on the backward pass), but instead the fwd rule "
            "output's first element had")


def _str(aval):
    return aval.str_short(short_dtypes=False)


def _types(tree):
    return str(tree).replace("'", "")


def _typematch(a, b):
    return a.shape == b.shape and a.dtype == b.dtype


def stage_call(fun, leaves):
    """Stage `fun` over the leaves' avals: (ClosedJaxpr, captured tracers)."""
    return stage(fun, [get_aval(x) for x in leaves])


def batched_aval(aval, d, size):
    if d is None:
        return aval
    return ShapedArray((size,) + aval.shape, aval.dtype, aval.weak_type)


def process_or_stage(name, stage_and_bind, *args):
    """Let the current trace handle a custom_jvp/custom_vjp call if it has a rule for it
    (`process_custom_jvp_call` / `process_custom_vjp_call`: evaluation and JVP do), else
    stage the function and bind the call primitive (staging, vmap, shard_map...)."""
    process = getattr(current_trace(), f"process_{name}_call", None)
    if process is not None:
        return process(functools.partial(process_or_stage, name, stage_and_bind), *args)
    return stage_and_bind(*args)


# ---------------------------------------------------------------- custom_jvp

class custom_jvp:
    """A function with a custom JVP rule: `f.defjvp(rule)` with rule(primals, tangents) ->
    (primal_out, tangent_out), or `f.defjvps(*per_arg)`. Under jvp and grad the rule runs (on
    concrete primals outside jit) and f does not; evaluation runs f."""

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
        args = resolve_kwargs(self.fun, args, kwargs)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {self.__name__} using "
                                 "defjvp.")
        nondiff, diff = split_nondiff(args, self.nondiff_argnums)
        check_nondiff(nondiff, "custom_jvp")
        leaves, in_tree = pytree.tree_flatten(diff)  # as given: evaluation passes them as is
        fun = FlatFun(self, nondiff, in_tree)
        jvp = FlatJvp(self.jvp, fun)
        outs = process_or_stage("custom_jvp", _stage_custom_jvp, fun, jvp, leaves,
                                self.symbolic_zeros)
        return pytree.tree_unflatten(fun.out_tree, outs)


def _stage_custom_jvp(fun, jvp, leaves, symbolic_zeros):
    closed, consts = stage_call(fun, leaves)
    return custom_jvp_call_p.bind(*consts, *leaves, call_jaxpr=closed, jvp=jvp,
                                  num_consts=len(consts), symbolic_zeros=symbolic_zeros)


class FlatJvp:
    """The user's JVP rule over flat lists, with JAX's checks of what it returns (a param of
    custom_jvp_call; hashed by identity)."""

    def __init__(self, rule, fun):
        self.rule, self.fun = rule, fun

    def __call__(self, primals, tangents):
        p = tuple(pytree.tree_unflatten(self.fun.in_tree, primals))
        t = tuple(pytree.tree_unflatten(self.fun.in_tree, tangents))
        nondiff = self.fun.nondiff
        res = self.rule(*nondiff, p, t) if self.fun.f.nondiff_argnums else self.rule(p, t)
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise TypeError(f"{self.what} must produce a pair (list or tuple of length two) "
                            f"representing primal and tangent outputs, but got {res}.")
        out_leaves, out_tree = pytree.tree_flatten(res[0])
        t_leaves, t_tree = pytree.tree_flatten(res[1])
        if t_tree != out_tree:
            raise TypeError(f"{self.what} must produce primal and tangent outputs with equal "
                            f"container (pytree) structures, but got {out_tree} and {t_tree} "
                            "respectively.")
        self.fun.check_primal_out(self.what, "JVP", out_tree, out_leaves)
        self.fun.record(out_tree, out_leaves)
        return out_leaves, _checked_tangents(out_leaves, t_leaves)

    @property
    def what(self):
        return f"Custom JVP rule {fun_name(self.rule)} for function {self.fun.name}"

    def __repr__(self):
        return fun_name(self.rule)


def _checked_tangents(outs, tangents):
    """JAX's check: each tangent output has the tangent type of its primal output."""
    want = [get_aval(o).strip_weak_type().to_tangent_aval() for o in outs]
    got = [get_aval(t).strip_weak_type() for t in tangents]
    if all(_typematch(w, g) for w, g in zip(want, got)):
        return tangents
    prims = [get_aval(o).strip_weak_type() for o in outs]
    if len(want) == 1:
        raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                        f"corresponding shapes and dtypes. Expected {_str(want[0])} "
                        f"(tangent type of {_str(prims[0])}) but got {_str(got[0])}.")
    lines = [f"  primal {_str(p)} with tangent {_str(g)}, expecting tangent {_str(w)}"
             for p, w, g in zip(prims, want, got) if not _typematch(w, g)]
    raise TypeError("Custom JVP rule must produce primal and tangent outputs with corresponding "
                    "shapes and dtypes, but got:\n" + "\n".join(lines))


# ---------------------------------------------------------------- custom_jvp_call's rules

def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts, symbolic_zeros):
    primals, tangents = primals[num_consts:], tangents[num_consts:]
    if not symbolic_zeros:
        tangents = [instantiate(t) for t in tangents]
    # closed-over values enter the user's rule through its own closure
    return jvp(list(primals), list(tangents))


def _custom_jvp_call_batch(axis_data, vals, dims, *, call_jaxpr, jvp, num_consts, symbolic_zeros):
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    in_dims = [None if d is None else 0 for d in dims]
    closed, _ = batch_jaxpr(call_jaxpr, axis_data, [d is not None for d in dims], True)
    outs = custom_jvp_call_p.bind(*vals, call_jaxpr=closed,
                                  jvp=_BatchedJvp(jvp, in_dims[num_consts:], axis_data),
                                  num_consts=num_consts, symbolic_zeros=False)
    return outs, [0] * len(outs)


class _BatchedJvp:
    """A custom JVP rule under vmap: the rule vmapped over primals and tangents, which are
    batched alike (outputs at 0)."""

    def __init__(self, jvp, dims, axis_data):
        self.jvp, self.dims, self.axis_data = jvp, dims, axis_data

    def __call__(self, primals, tangents):
        n = len(primals)

        def both(*pt):
            outs, t_outs = self.jvp(list(pt[:n]), list(pt[n:]))
            return list(outs) + [instantiate(t) for t in t_outs]
        flat = vmap_flat(both, list(primals) + list(tangents), self.dims + self.dims,
                         self.axis_data)
        return flat[:len(flat) // 2], flat[len(flat) // 2:]

    def __repr__(self):
        return repr(self.jvp)


custom_jvp_call_p.def_call("call_jaxpr")


@def_dce(custom_jvp_call_p)
def _custom_jvp_call_dce(used_outputs, eqn):
    """As JAX's: the function computes only the used outputs, and the rule gives only those
    (every operand stays: the rule may read what the function no longer does)."""
    if not any(used_outputs) and not has_effects(eqn):
        return [False] * len(eqn.invars), None
    body, used_inputs = dce_closed(eqn.params["call_jaxpr"], used_outputs, True)
    jvp = eqn.params["jvp"]
    jvp = jvp if all(used_outputs) else _UsedOutputsJvp(jvp, used_outputs)
    params = dict(eqn.params, call_jaxpr=body, jvp=jvp)
    return used_inputs, pruned(eqn, used_inputs, used_outputs, params)


class _UsedOutputsJvp:
    """A custom JVP rule whose results DCE pruned: the used outputs and their tangents."""

    def __init__(self, jvp, used):
        self.jvp, self.used = jvp, used

    def __call__(self, primals, tangents):
        outs, t_outs = self.jvp(primals, tangents)
        return ([o for o, u in zip(outs, self.used) if u],
                [t for t, u in zip(t_outs, self.used) if u])

    def __repr__(self):
        return repr(self.jvp)


def _unbatched(rule, attr):
    """The user's rule object under any vmap wrappers (each keeps what it wraps in `attr`)."""
    while hasattr(rule, attr) and not hasattr(rule, "fun"):
        rule = getattr(rule, attr)
    return rule


def _pp_custom_jvp_call(eqn, context):
    """As JAX prints it: the function's name first, then the params but num_consts."""
    jvp = _unbatched(eqn.params["jvp"], "jvp")
    rest = sorted((k, v) for k, v in eqn.params.items() if k != "num_consts")
    return [("name", jvp.fun.name)] + rest


custom_jvp_call_p.def_pp(_pp_custom_jvp_call)
custom_jvp_call_p.def_jvp(_custom_jvp_call_jvp)
custom_jvp_call_p.def_batch(_custom_jvp_call_batch)
