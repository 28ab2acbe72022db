"""custom_vjp: a function with user-defined forward and backward passes. Evaluation runs the
function; differentiation runs `fwd` on the primal values (concrete outside jit) and stages a
`custom_lin` equation into the tangent computation, whose transpose runs `bwd`; other traces
stage the function as a `custom_vjp_call` equation."""
import dataclasses
import functools

from .. import pytree
from ..avals import mismatch_extra
from ..primitive import make_primitive
from ..state import REF_PRIMITIVES
from ..trace import as_value, get_aval
from .ad import Zero, instantiate
from .batching import bdim_at_front, moveaxis
from .dce import dce_closed, def_dce, has_effects, pruned
from .custom import (FlatFun, batched_aval, check_nondiff, fun_name, process_or_stage,
                     resolve_kwargs, split_nondiff, stage_call)
from .vmap import batch_jaxpr, vmap_flat

custom_vjp_call_p = make_primitive("custom_vjp_call", multiple_results=True)
custom_lin_p = make_primitive("custom_lin", multiple_results=True)

custom_vjp_call_p.def_abstract_eval(lambda *avals, call_jaxpr, **_: call_jaxpr.out_avals)
custom_lin_p.def_abstract_eval(lambda *avals, out_avals, **_: list(out_avals))
REF_PRIMITIVES.add(custom_lin_p)  # its residuals may be references the bwd rule writes to


class custom_vjp:
    """A function with a custom VJP: `f.defvjp(fwd, bwd)`; fwd(*args) -> (out, residuals),
    bwd(residuals, cotangent_out) -> tuple of cotangents (one per differentiable argument,
    None for a zero cotangent). Forward-mode differentiation raises TypeError, as in JAX."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None
        self.symbolic_zeros = False

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        """Set the rules: fwd(*args) -> (out, residuals), bwd(residuals, ct) -> input cts.
        With symbolic_zeros, fwd gets each differentiable leaf as a CustomVJPPrimal (its
        value and whether it is perturbed) and bwd gets zero cotangents as SymbolicZeros."""
        self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, bool(symbolic_zeros)

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = resolve_kwargs(self.fun, args, kwargs, "custom_vjp")
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {self.__name__} using "
                                 "defvjp.")
        nondiff, diff = split_nondiff(args, self.nondiff_argnums)
        check_nondiff(nondiff, "custom_vjp")
        leaves, in_tree = pytree.tree_flatten(diff)  # as given: evaluation passes them as is
        fun = FlatFun(self, nondiff, in_tree)
        rule = VjpRule(fun, [get_aval(x) for x in leaves])
        outs = process_or_stage("custom_vjp", _stage_custom_vjp, fun, rule, leaves)
        return pytree.tree_unflatten(fun.out_tree, outs)


@dataclasses.dataclass(slots=True)
class CustomVJPPrimal:
    """A primal argument of a custom_vjp's fwd rule under symbolic_zeros: its value, and
    whether it is perturbed (has a nonzero tangent)."""
    value: object
    perturbed: bool


def custom_vjp_primal_tree_values(tree):
    """The values of a tree of CustomVJPPrimal leaves (TypeError for any other leaf)."""
    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return pytree.tree_map(value, tree)


def _stage_custom_vjp(fun, rule, leaves):
    closed, consts = stage_call(fun, leaves)
    return custom_vjp_call_p.bind(*consts, *leaves, call_jaxpr=closed, rule=rule,
                                  num_consts=len(consts))


class VjpRule:
    """fwd and bwd over flat lists, with JAX's checks (a param of custom_vjp_call and
    custom_lin; hashed by identity). `linear` binds the custom_lin equation JVPTrace stages
    for the tangents."""

    def __init__(self, fun, in_avals):
        self.fun, self.in_avals = fun, in_avals
        self.res_tree = None

    @property
    def f(self):
        return self.fun.f

    def __repr__(self):
        return f"{self.fun.name}_vjp"

    def fwd(self, primals, perturbed):
        """fwd on the primals (`perturbed`: whether each has a nonzero tangent)."""
        if self.f.symbolic_zeros:
            primals = [CustomVJPPrimal(p, bool(b)) for p, b in zip(primals, perturbed)]
        res = self.f.fwd(*self.fun.py_args(primals))
        what = f"Custom VJP fwd rule {fun_name(self.f.fwd)} for function {self.fun.name}"
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise TypeError(f"{what} must produce a pair (list or tuple of length two) where the "
                            "first element represents the primal output (equal to those of the "
                            f"custom_vjp-decorated function {self.fun.name}) and the second "
                            "element represents residuals (i.e. values stored from the forward "
                            "pass for use on the backward pass), but instead of a pair the fwd "
                            f"rule {fun_name(self.f.fwd)} produced {res}.")
        out_leaves, out_tree = pytree.tree_flatten(res[0])
        out_leaves = [as_value(x) for x in out_leaves]
        self.fun.check_primal_out(what, "fwd", out_tree, out_leaves)
        self.fun.record(out_tree, out_leaves)
        res_leaves, self.res_tree = pytree.tree_flatten(res[1])
        return out_leaves, [as_value(r) for r in res_leaves]

    def linear(self, residuals, tangents, out_avals):
        return custom_lin_p.bind(*residuals, *tangents, num_res=len(residuals), rule=self,
                                 out_avals=tuple(out_avals))

    def bwd(self, res_leaves, cts):
        """bwd on the residuals and output cotangents (zeros symbolic for symbolic_zeros)."""
        cts = cts if self.f.symbolic_zeros else [instantiate(c) for c in cts]
        residuals = pytree.tree_unflatten(self.res_tree, res_leaves)
        ct_tree = pytree.tree_unflatten(self.fun.out_tree, cts)
        nondiff = self.fun.nondiff
        grads = self.f.bwd(*nondiff, residuals, ct_tree) if self.f.nondiff_argnums \
            else self.f.bwd(residuals, ct_tree)
        return _checked_cotangents(grads, self.fun.in_tree, self.in_avals)


def _checked_cotangents(grads, in_tree, in_avals):
    """The bwd rule's output as flat cotangents: a tuple matching the differentiable
    arguments' structure (None for zeros), each of its input's cotangent type (JAX's
    errors otherwise)."""
    args_tree = pytree.tree_unflatten(in_tree, [object()] * in_tree.num_leaves)
    if isinstance(grads, list) and len(grads) == len(args_tree):
        grads = tuple(grads)
    flat, zero = [], object()
    try:
        if not isinstance(grads, tuple):
            raise ValueError
        pytree.tree_map(lambda g, d: flat.extend([zero if g is None else g] *
                                                 len(pytree.tree_leaves(d))),
                        grads, args_tree, is_leaf=lambda x: x is None)
    except ValueError:
        raise TypeError("Custom VJP bwd rule must produce an output with the same container "
                        "(pytree) structure as the args tuple of the primal function, and in "
                        "particular must produce a tuple of length equal to the number of "
                        "arguments to the primal function, but got bwd output structure "
                        f"{pytree.tree_structure(grads)} for primal input structure {in_tree}."
                        ) from None
    paths = [pytree.keystr(p) for p, _ in pytree.tree_flatten_with_path(args_tree)[0]]
    return [_cotangent(g, a, p, zero) for g, a, p in zip(flat, in_avals, paths)]


def _cotangent(g, aval, path, zero):
    ct_aval = aval.to_tangent_aval()
    if g is zero or type(g) is Zero or ct_aval.dtype.name == "float0":
        return Zero(ct_aval)
    g = as_value(g)
    got = get_aval(g)
    if got.shape != ct_aval.shape or got.vma != ct_aval.vma or (
            got.dtype != ct_aval.dtype and not _inexact(ct_aval.dtype)):
        raise ValueError("Custom VJP bwd rule must produce an output with the same type as the "
                         f"args tuple of the primal function, but at output{path} the bwd rule "
                         f"produced an output of type {got.str_short(False)} corresponding to "
                         f"an input of type {aval.str_short(False)}"
                         f"{mismatch_extra(ct_aval, got)}")
    if got.dtype != ct_aval.dtype:  # JAX lets inexact cotangents differ in dtype
        from ..primitives.elementwise import convert_element_type
        g = convert_element_type(g, ct_aval.dtype)
    return g


def _inexact(dtype):
    return dtype.kind in "fc" or dtype.name == "bfloat16"


# ---------------------------------------------------------------- custom_vjp_call's rules

def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, rule, num_consts):
    primals, tangents = primals[num_consts:], tangents[num_consts:]
    outs, residuals = rule.fwd(list(primals), [type(t) is not Zero for t in tangents])
    out_avals = [get_aval(o).to_tangent_aval() for o in outs]
    return outs, rule.linear(residuals, [instantiate(t) for t in tangents], out_avals)


def _custom_lin_transpose(cts, *args, num_res, rule, out_avals):
    residuals = args[:num_res]
    return [None] * num_res + list(rule.bwd(list(residuals), list(cts)))


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

    def fwd(self, primals, perturbed):
        box = {}

        def f(*p):
            outs, res = self.rule.fwd(list(p), perturbed)
            box["n_out"] = len(outs)
            return list(outs) + list(res)

        flat = vmap_flat(f, list(primals), self.in_dims, self.axis_data)
        return flat[:box["n_out"]], flat[box["n_out"]:]

    def linear(self, residuals, tangents, out_avals):
        return custom_lin_p.bind(*residuals, *tangents, num_res=len(residuals), rule=self,
                                 out_avals=tuple(out_avals))

    def bwd(self, residuals, cts):
        n_res = len(residuals)
        cts = [instantiate(c) for c in cts]  # batched: zeros materialized, as JAX's vmap does
        return vmap_flat(
            lambda *rc: [instantiate(g) for g in self.rule.bwd(list(rc[:n_res]), list(rc[n_res:]))],
            list(residuals) + list(cts), [0] * (n_res + len(cts)), self.axis_data)


def _custom_lin_batch(axis_data, vals, dims, *, num_res, rule, out_avals):
    vals = [bdim_at_front(v, d, axis_data.size) for v, d in zip(vals, dims)]
    batched = _BatchedVjpRule(rule, None, axis_data)
    new_avals = tuple(batched_aval(a, 0, axis_data.size) for a in out_avals)
    outs = custom_lin_p.bind(*vals, num_res=num_res, rule=batched, out_avals=new_avals)
    return outs, [0] * len(outs)


custom_vjp_call_p.def_call("call_jaxpr")


@def_dce(custom_vjp_call_p)
def _custom_vjp_call_dce(used_outputs, eqn):
    """As JAX's: the function and fwd give only the used outputs (fwd every residual), bwd
    gets zero cotangents for the others; every operand stays."""
    if not any(used_outputs) and not has_effects(eqn):
        return [False] * len(eqn.invars), None
    closed = eqn.params["call_jaxpr"]
    body, used_inputs = dce_closed(closed, used_outputs, True)
    rule = eqn.params["rule"]
    if not all(used_outputs):
        rule = _UsedOutputsRule(rule, used_outputs, closed.out_avals)
    params = dict(eqn.params, call_jaxpr=body, rule=rule)
    return used_inputs, pruned(eqn, used_inputs, used_outputs, params)


class _UsedOutputsRule:
    """A custom_vjp rule whose results DCE pruned: fwd's used outputs, bwd's cotangents of
    the others zeros."""

    def __init__(self, rule, used, out_avals):
        self.rule, self.used, self.out_avals = rule, used, out_avals

    def __repr__(self):
        return repr(self.rule)

    def fwd(self, primals, perturbed):
        outs, residuals = self.rule.fwd(primals, perturbed)
        return [o for o, u in zip(outs, self.used) if u], residuals

    def linear(self, residuals, tangents, out_avals):
        return custom_lin_p.bind(*residuals, *tangents, num_res=len(residuals), rule=self,
                                 out_avals=tuple(out_avals))

    def bwd(self, residuals, cts):
        given = iter(cts)
        return self.rule.bwd(residuals, [next(given) if u else Zero(a.to_tangent_aval())
                                         for a, u in zip(self.out_avals, self.used)])


def _pp_custom_vjp_call(eqn, context):
    """As JAX prints it: name, then bwd, call_jaxpr, fwd and symbolic_zeros (sorted)."""
    rule = eqn.params["rule"]
    while not isinstance(rule, VjpRule):
        rule = rule.rule
    params = dict(call_jaxpr=eqn.params["call_jaxpr"], fwd=fun_name(rule.f.fwd),
                  bwd=fun_name(rule.f.bwd), symbolic_zeros=rule.f.symbolic_zeros)
    return [("name", rule.fun.name)] + sorted(params.items())


custom_vjp_call_p.def_pp(_pp_custom_vjp_call)
custom_vjp_call_p.def_jvp(_custom_vjp_call_jvp)
custom_vjp_call_p.def_batch(_custom_vjp_call_batch)
custom_lin_p.def_transpose(_custom_lin_transpose)
custom_lin_p.def_batch(_custom_lin_batch)
custom_lin_p.nondiff_reason = "it is the linearized part of a custom_vjp function"
