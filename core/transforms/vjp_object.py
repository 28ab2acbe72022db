"""The object jax.vjp returns (JAX's `VJP`): a callable pytree whose leaves are the saved
residuals, split into argument values saved verbatim (`args_res`) and values computed by the
forward pass (`opaque_residuals`); `with_refs` chooses where each input's cotangent goes."""
import dataclasses
import functools
from typing import Any, Callable

from .. import dtypes, pytree
from ..primitives import elementwise as ew
from ..primitives.state import addupdate
from ..state import is_ref, is_ref_type
from ..sharding_types import is_typed, spec_of, typed_aval
from ..sharding_unreduced import sets_of
from ..trace import as_value, get_aval
from .ad import Zero, zeros_like_aval
from .transpose import backward_pass

__all__ = ["VJP", "NotNeeded", "GradValue", "DontWant", "GradRef", "DidntWant", "make_vjp"]


@dataclasses.dataclass(frozen=True)
class NotNeeded:
    """In `args_res`: an argument value the backward pass does not use."""


@dataclasses.dataclass(frozen=True)
class GradValue:
    """Given to `with_refs`: return this input's cotangent as a value (the default)."""


@dataclasses.dataclass(frozen=True)
class DontWant:
    """Given to `with_refs`: this input's cotangent is not wanted (nor computed)."""


@dataclasses.dataclass(frozen=True)
class GradRef:
    """Returned by a pullback for an input whose cotangent went into a reference."""


@dataclasses.dataclass(frozen=True)
class DidntWant:
    """Returned by a pullback for an input given `DontWant()`."""


for _cls in (NotNeeded, GradRef, DidntWant):  # empty pytree nodes, as JAX registers them
    pytree.register_pytree_node(_cls, lambda _: ((), None), lambda _, __, c=_cls: c())


@dataclasses.dataclass(eq=False)
class VJP:
    """The pullback jax.vjp returns: called on output cotangents, it returns input
    cotangents. `args_res` (one entry per argument, tuples mirroring its containers) holds the
    argument values the backward pass reads, `NotNeeded()` for the others; assign into it to
    restore values. `fun(in_tree, out_tree, args_res, opaque_residuals)` builds the
    backward function; `jaxpr` is the linear program it transposes."""
    fun: Callable
    in_tree: Any
    out_tree: Any
    args_res: list
    opaque_residuals: list

    jaxpr = property(lambda self: self.fun.args[1])

    def __call__(self, out_ct, *extra_args):
        if extra_args:
            raise TypeError(_too_many_args(self.fun.args[4], len(extra_args) + 1))
        return self.with_refs()(out_ct)

    def with_refs(self, *maybe_ct_refs):
        """The backward function, each input's cotangent going where `maybe_ct_refs` (a tree
        like the arguments) says: `GradValue()` returns it, a reference accumulates it (the
        result shows `GradRef()`), `DontWant()` skips it (`DidntWant()`)."""
        return self.fun(self.in_tree, self.out_tree, self.args_res, self.opaque_residuals,
                        *maybe_ct_refs)


pytree.register_pytree_node(
    VJP, lambda f: ((f.args_res, f.opaque_residuals), (f.fun, f.in_tree, f.out_tree)),
    lambda meta, children: VJP(*meta, *children))


@dataclasses.dataclass(frozen=True)
class _Spec:
    """Where residual number k of the linear jaxpr is kept: argument leaf `idx` of
    `args_res` (primal=True) or `opaque_residuals[idx]`."""
    idx: int
    primal: bool


def make_vjp(leaves, in_tree, out_tree, out_avals, jaxpr, residuals, name):
    """The VJP object of a linearized function: residuals that are argument leaves (by
    identity, as JAX decides) go to `args_res`, the others to `opaque_residuals`."""
    position = {id(x): i for i, x in enumerate(leaves)}
    used, opaque, spec = set(), [], []
    for r in residuals:
        if id(r) in position:
            used.add(id(r))
            spec.append(_Spec(position[id(r)], True))
        else:
            spec.append(_Spec(len(opaque), False))
            opaque.append(r)
    kept = [x if id(x) in used else NotNeeded() for x in leaves]
    args_res = list(_tuple_tree(in_tree, kept))
    in_avals = tuple(typed_aval(x) for x in leaves)
    fun = functools.partial(_vjp_callable, tuple(spec), jaxpr, in_avals, tuple(out_avals), name)
    return VJP(fun, in_tree, out_tree, args_res, opaque)


def _tuple_tree(treedef, leaves):
    """The leaves arranged as `treedef` with every container a tuple (JAX's tuptree)."""
    it = iter(leaves)

    def build(node):
        if node.node_data() is None:
            return next(it)
        return tuple(build(c) for c in node.children())
    return build(treedef)


def _vjp_callable(spec, jaxpr, in_avals, out_avals, name, in_tree, out_tree, args_res,
                  opaque, *maybe_ct_refs):
    targets = _targets(maybe_ct_refs, in_tree, in_avals)
    residuals = _residuals(spec, args_res, opaque, len(in_avals))
    return functools.partial(_vjp_bwd, jaxpr, in_tree, out_tree, in_avals, out_avals, name,
                             residuals, targets)


def _targets(maybe_ct_refs, in_tree, in_avals):
    """One target per input leaf: GradValue(), DontWant() or a reference."""
    for aval in in_avals:
        _refuse_ref_input(aval)
    if not maybe_ct_refs:
        return [GradValue()] * len(in_avals)
    flat, tree = pytree.tree_flatten(maybe_ct_refs)
    if tree != in_tree:
        raise ValueError(f"VJP.with_refs: the targets have tree structure {tree}, but the "
                         f"differentiated function's arguments have {in_tree}")
    for t, aval in zip(flat, in_avals):
        _check_target(t, aval)
    return flat


def _refuse_ref_input(aval):
    """JAX 0.10.2 cannot deliver a reference-typed input's cotangent (its accumulators expect
    an array, whatever `with_refs` is given): refjax refuses it with JAX's error."""
    if is_ref_type(aval):
        raise ValueError(f"Expected cotangent type {aval.str_short(False)} but got "
                         f"{aval.inner_aval.to_tangent_aval().str_short(False)}")


def _check_target(target, aval):
    if isinstance(target, (GradValue, DontWant)):
        return
    if not is_ref(target):
        raise TypeError("VJP.with_refs takes GradValue(), DontWant() or a reference per "
                        f"argument, got {type(target).__name__}")
    expected = aval.to_tangent_aval()
    got = get_aval(target)
    if (got.shape, got.dtype) != (expected.shape, expected.dtype):
        raise ValueError(f"Accumulator aval mismatch: expected {expected.str_short()}, got "
                         f"{got.str_short()}")


def _residuals(spec, args_res, opaque, n_leaves):
    """The linear jaxpr's residuals, read from args_res (as restored by the user) and the
    opaque residuals."""
    arg_leaves = pytree.tree_leaves(args_res, is_leaf=lambda x: isinstance(x, NotNeeded))
    if len(arg_leaves) != n_leaves:  # JAX: a bare IndexError (too few), nothing (too many)
        raise ValueError(f"VJP: args_res has {len(arg_leaves)} leaves, but the differentiated "
                         f"function's arguments have {n_leaves}")
    missing = sorted({s.idx for s in spec if s.primal and isinstance(arg_leaves[s.idx],
                                                                     NotNeeded)})
    if missing:  # JAX's class (its message: NotNeeded given to the first primitive reading it)
        raise TypeError(f"VJP: the backward pass needs argument leaves {missing}, which "
                         "args_res holds as NotNeeded(); restore them before applying it")
    return [arg_leaves[s.idx] if s.primal else opaque[s.idx] for s in spec]


def _vjp_bwd(jaxpr, in_tree, out_tree, in_avals, out_avals, name, residuals, targets,
             out_ct):
    ct_leaves, ct_tree = pytree.tree_flatten(out_ct)
    if ct_tree != out_tree:
        raise ValueError(
            "unexpected tree structure.\n\nThe argument to a VJP function returned by "
            "`jax.vjp` must match the pytree\nstructure of the differentiated function "
            f"{name}.\n\nBut the tree structures differ: the cotangent has structure "
            f"{ct_tree}, the output had {out_tree}.")
    ct_leaves = [_check_ct(c, a) for c, a in zip(ct_leaves, out_avals)]
    wanted = [not isinstance(t, DontWant) for t in targets]
    cts = backward_pass(jaxpr, residuals, [True] * len(jaxpr.invars), ct_leaves,
                        wanted=wanted, transform="transpose")
    return pytree.tree_unflatten(in_tree, [_deliver(c, a, t) for c, a, t
                                           in zip(cts, in_avals, targets)])


def _deliver(ct, aval, target):
    """The cotangent returned (GradValue), dropped (DontWant) or added into a reference."""
    if isinstance(target, DontWant):
        return DidntWant()
    ct = _materialize(ct, aval)
    if isinstance(target, GradValue):
        return ct
    addupdate(target, (), ct)
    return GradRef()


def _check_ct(ct, out_aval):
    """The cotangent, if it has the tangent type of its output once canonicalized (so a
    float64 NumPy array passes for float32 without x64, as in JAX; ValueError otherwise).
    Where that type is float0 (integer outputs), JAX accepts any dtype of the right shape:
    the cotangent carries no information and becomes a zero."""
    expected = out_aval.to_tangent_aval()
    ct = as_value(ct)
    got = typed_aval(ct)
    if got.shape == expected.shape and expected.dtype == dtypes.float0:
        return Zero(expected)
    if got.shape == expected.shape and got.dtype == expected.dtype and _same_type(got, expected):
        return ct
    raise ValueError("unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
                     f"{got.str_short(False)}, but expected {expected.str_short(False)} because "
                     "the corresponding output of the differentiated function had JAX type "
                     f"{out_aval.strip_weak_type().str_short(False)}")


def _same_type(got, expected):
    """A cotangent typed on a mesh with Explicit axes must have its output's sharding type, as
    JAX's typecompat; an untyped one (a NumPy array, an array made off the mesh) is taken."""
    if not (is_typed(got) and is_typed(expected)):
        return True
    # (the cotangent of a reduced output is unreduced, and vice versa, as JAX's to_ct_aval)
    return spec_of(got) == spec_of(expected) and sets_of(got) == sets_of(expected)[::-1]


def _materialize(ct, aval):
    if type(ct) is Zero or ct is None:  # a zero cotangent of the input's type, weak if it is
        zeros = zeros_like_aval(aval.to_tangent_aval())
        weak = aval.weak_type and dtypes.is_inexact(aval.dtype)
        return ew.convert_element_type(zeros, zeros.dtype, weak_type=True) if weak else zeros
    return ct


def _too_many_args(name, n):
    """JAX's message, with its example."""
    return (f"\nThe function returned by `jax.vjp` applied to {name} was called with {n} "
            "arguments,\nbut functions returned by `jax.vjp` must be called with a single "
            "argument\ncorresponding to the single value returned by the function being "
            "differentiated\n(even if that returned value is a tuple or other container).\n\n"
            "For example, if we have:\n\n  def f(x):\n    return (x, x)\n  _, f_vjp = "
            "jax.vjp(f, 1.0)\n\nthe function `f` returns a single tuple as output, and so we "
            "call `f_vjp` with a\nsingle tuple as its argument:\n\n  x_bar, = f_vjp((2.0, "
            "2.0))\n\nIf we instead call `f_vjp(2.0, 2.0)`, with the values 'splatted out' as"
            "\narguments rather than in a tuple, this error can arise.\n")
