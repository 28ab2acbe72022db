"""custom_vmap: a function with a user-defined batching rule (jax.custom_batching). It is
staged as a `custom_vmap_call` equation holding the function's jaxpr and the rule; vmap runs
the rule, everything else the function. Derivatives are the function's own (under vmap
batched by the rule where the primal is; JAX instead differentiates the rule, and has no
reverse mode for custom_vmap at all)."""
import functools
import re

from .. import pytree
from ..jaxpr import eval_jaxpr
from ..primitive import make_primitive
from .ad import Zero, instantiate
from .batching import moveaxis
from .closure import stage_closed_call
from .custom import fun_name
from .jvp import jvp_jaxpr

custom_vmap_call_p = make_primitive("custom_vmap_call", multiple_results=True)
custom_vmap_call_p.def_abstract_eval(lambda *avals, call, **_: call.out_avals)
custom_vmap_call_p.def_call("call")


class _Rule:
    """The user's rule (a param: hashed by identity, printed as JAX prints a function)."""

    def __init__(self, rule):
        self.rule = rule

    def __call__(self, *args):
        return self.rule(*args)

    def __repr__(self):
        return re.sub(r" at 0x[0-9a-fA-F]+>", " at 0xXXXXXXXXXXXX>", repr(self.rule))


class custom_vmap:
    """A function whose vmap is `rule(axis_size, in_batched, *args) -> (out, out_batched)`,
    set with `f.def_vmap(rule)`: batched arguments have their batch axis first, in_batched
    (one entry per argument, a pytree of bools like it) says which; out_batched is a pytree
    of bools with the structure of out."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    def def_vmap(self, vmap_rule):
        """Set the batching rule (usable as a decorator)."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"custom_vmap function {fun_name(self.fun)} takes positional "
                            "arguments only")
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function "
                                 f"{fun_name(self.fun)} using def_vmap.")
        leaves, in_tree = pytree.tree_flatten(([], args))
        closed, out_tree = stage_closed_call(lambda _, a: self.fun(*a), in_tree, leaves,
                                             f"custom_vmap function {fun_name(self.fun)}")
        outs = custom_vmap_call_p.bind(*leaves, call=closed, rule=_Rule(self.vmap_rule),
                                       in_tree=in_tree, out_tree=out_tree)
        return pytree.tree_unflatten(out_tree, outs)


def _batch(axis_data, vals, dims, *, call, rule, in_tree, out_tree):
    size = axis_data.size
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    args = pytree.tree_unflatten(in_tree, vals)[1]
    in_batched = list(pytree.tree_unflatten(in_tree, [d is not None for d in dims])[1])
    result = rule(size, in_batched, *args)
    out, out_batched = result
    out_leaves, tree = pytree.tree_flatten(out)
    flags, flags_tree = pytree.tree_flatten(out_batched)
    if tree != flags_tree:
        raise ValueError("structure of output value and output batching specification returned "
                         f"by custom vmap rule ({fun_name(rule.rule)}) do not match.\nOutput "
                         f"values: {tree}\nBatching spec: {flags_tree}")
    if tree != out_tree:
        raise ValueError(f"custom vmap rule {fun_name(rule.rule)} returned outputs of structure "
                         f"{tree}, but the function returns {out_tree}")
    return out_leaves, [0 if b else None for b in flags]


def _jvp(primals, tangents, *, call, rule, in_tree, out_tree):
    """The primal through the call (vmap keeps using the rule); tangents by differentiating
    the function's body inline."""
    outs = custom_vmap_call_p.bind(*primals, call=call, rule=rule, in_tree=in_tree,
                                   out_tree=out_tree)
    nonzeros = [type(t) is not Zero for t in tangents]
    closed, out_nz = jvp_jaxpr(call, nonzeros, instantiate=True)
    res = eval_jaxpr(closed.jaxpr, closed.consts, *primals,
                     *[t for t, nz in zip(tangents, nonzeros) if nz])
    return outs, [instantiate(t) for t in res[len(outs):]]


custom_vmap_call_p.def_batch(_batch)
custom_vmap_call_p.def_jvp(_jvp)


def sequential_vmap(f):
    """A custom_vmap of f whose batching rule calls f once per batch element (a loop over
    the batched arguments, the others passed whole), stacking the results."""
    from ..primitives.control_flow.loops import map as lax_map
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        flags, tree = pytree.tree_flatten(in_batched)
        leaves = pytree.tree_leaves(args)

        def one(batched):
            it = iter(batched)
            return f.fun(*pytree.tree_unflatten(tree, [next(it) if b else x for x, b in
                                                       zip(leaves, flags)]))
        out = lax_map(one, [x for x, b in zip(leaves, flags) if b])
        return out, pytree.tree_map(lambda _: True, out)
    return f


__all__ = ["custom_vmap", "sequential_vmap", "custom_vmap_call_p"]
