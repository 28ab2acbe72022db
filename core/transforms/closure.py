"""closure_convert (a function's captured traced values made explicit arguments) and
custom_gradient (TensorFlow-style custom gradients, built on custom_vjp), as JAX's
jax.custom_derivatives has them; SymbolicZero and zero_from_primal for symbolic_zeros rules."""
import numpy as np

from .. import dtypes, pytree, runtime
from ..jaxpr import eval_jaxpr
from ..trace import Tracer, get_aval
from .ad import Zero
from .custom_vjp import custom_vjp
from .staging import closure_convert as _split_consts
from .staging import trace_to_jaxpr


def trace_flat(fun, in_tree, avals):
    """(jaxpr, consts, out tree) of fun staged on arguments of the given types, whose tuple
    has the tree `in_tree`."""
    out_tree = []

    def flat(*leaves):
        out_leaves, tree = pytree.tree_flatten(fun(*pytree.tree_unflatten(in_tree, leaves)))
        out_tree.append(tree)
        return out_leaves
    jaxpr, consts = trace_to_jaxpr(flat, avals)
    return jaxpr, consts, out_tree[0]


def stage_closed_call(fun, in_tree, leaves, what):
    """(ClosedJaxpr, out tree) of fun staged on the leaves' types (their tuple has tree
    in_tree); TypeError naming `what` when fun closes over traced values."""
    jaxpr, consts, out_tree = trace_flat(fun, in_tree, [get_aval(x) for x in leaves])
    closed, tracer_consts = _split_consts(jaxpr, consts)
    if tracer_consts:
        raise TypeError(f"{what} closes over traced values; pass them as arguments")
    return closed, out_tree


def _maybe_perturbed(x):
    """Whether a captured value may carry a derivative: a traced value of inexact type (as
    JAX's heuristic: integer and boolean values have no tangents)."""
    return isinstance(x, Tracer) and dtypes.is_inexact(get_aval(x).dtype)


def closure_convert(fun, *example_args):
    """(converted, hoisted): `converted(*args, *hoisted)` computes fun(*args) for arguments
    of the example arguments' types, with the traced values fun captures (which a custom
    derivative rule could not otherwise see) passed explicitly as `hoisted`."""
    flat_args, in_tree = pytree.tree_flatten(example_args)
    jaxpr, consts, out_tree = trace_flat(fun, in_tree, [get_aval(x) for x in flat_args])
    hoist = [_maybe_perturbed(c) for c in consts]
    hoisted = [c for c, h in zip(consts, hoist) if h]

    def converted_fun(*args_hconsts):
        num_args = len(args_hconsts) - len(hoisted)
        args, extra = args_hconsts[:num_args], iter(args_hconsts[num_args:])
        all_args, in_tree2 = pytree.tree_flatten(tuple(args))
        if in_tree != in_tree2:
            raise TypeError("The inputs to the closure produced by closure_convert must have "
                            "the same Pytree structure as the example arguments passed when "
                            f"closure_convert was called. Expected {in_tree}, but got "
                            f"{in_tree2}")
        merged = [next(extra) if h else c for c, h in zip(consts, hoist)]
        return pytree.tree_unflatten(out_tree, eval_jaxpr(jaxpr, merged, *all_args))
    return converted_fun, hoisted


class _Residuals:
    """A staged gradient rule and the values it captured (its pytree leaves)."""

    def __init__(self, jaxpr, in_tree, out_tree, consts):
        self.jaxpr, self.in_tree, self.out_tree, self.consts = jaxpr, in_tree, out_tree, consts


pytree.register_pytree_node(
    _Residuals, lambda r: (r.consts, (r.jaxpr, r.in_tree, r.out_tree)),
    lambda aux, consts: _Residuals(*aux, list(consts)))


def custom_gradient(fun):
    """`fun(*args) -> (value, vjp)` as a function of args returning value whose reverse-mode
    derivative is `vjp(cotangent) -> tuple of cotangents, one per argument` (TensorFlow's
    tf.custom_gradient). vjp may close over values fun computed; it is staged when fun runs,
    so it cannot branch on them in Python."""
    def wrapped_fun(*args, **kwargs):
        ans, _ = fun(*args, **kwargs)
        return ans
    wrapped = custom_vjp(wrapped_fun)

    def fwd(*args, **kwargs):
        ans, rule = fun(*args, **kwargs)
        ans_flat, out_tree = pytree.tree_flatten((ans,))
        avals = [get_aval(x).to_tangent_aval() for x in ans_flat]
        jaxpr, consts, rule_tree = trace_flat(rule, out_tree, avals)
        return ans, _Residuals(jaxpr, rule_tree, out_tree, consts)

    def bwd(res, cts):
        cts_flat, out_tree = pytree.tree_flatten((cts,))
        if out_tree != res.out_tree:
            raise TypeError(f"{res.out_tree}\n!=\n{out_tree}")
        cts_out = pytree.tree_unflatten(res.in_tree, eval_jaxpr(res.jaxpr, res.consts,
                                                                *cts_flat))
        return (cts_out,) if pytree.treedef_is_leaf(res.in_tree) else cts_out
    wrapped.defvjp(fwd, bwd)
    return wrapped


class _SymbolicZeroType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Zero)


class SymbolicZero(metaclass=_SymbolicZeroType):
    """A zero tangent known to be zero, as a custom_jvp rule with symbolic_zeros=True receives
    it (refjax's symbolic Zero: `isinstance(t, SymbolicZero)` holds for it)."""

    def __new__(cls, aval):
        return Zero(aval)

    @staticmethod
    def from_primal_value(val):
        """The symbolic zero tangent of the value `val`."""
        return Zero.from_primal(val)


def zero_from_primal(val, symbolic_zeros=False):
    """Zero tangents for the pytree `val`: symbolic (SymbolicZero) or as arrays."""
    def zero(x):
        aval = get_aval(x).to_tangent_aval()  # weak types kept, as JAX's
        return Zero(aval) if symbolic_zeros else runtime.make_array(
            np.zeros(aval.shape, aval.dtype), aval)
    return pytree.tree_map(zero, val)


__all__ = ["closure_convert", "custom_gradient", "SymbolicZero", "zero_from_primal"]
