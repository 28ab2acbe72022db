"""Reverse-mode and Jacobian APIs built on linearize and transpose: vjp, linearize, grad,
value_and_grad, jacfwd, jacrev (jacobian), hessian, linear_transpose."""
import functools
import math

import numpy as np

from .. import dtypes, pytree, runtime
from ..errors import naming_errors
from ..array import Array
from ..avals import ShapeDtypeStruct, ShapedArray
from ..jaxpr import Literal, eval_jaxpr
from ..primitives import elementwise as ew
from ..primitives import structural as st
from ..primitives.sharding_ops import reshard
from ..sharding import P
from ..sharding_types import typed_aval
from ..sharding_unreduced import swapped_sets
from ..trace import as_value, get_aval
from .ad import Zero, seed_one, zeros_like_aval
from .jvp import check_tangent, jvp, split_aux
from .linearize import linearize_flat
from .staging import trace_to_jaxpr
from .transpose import backward_pass
from .vjp_object import make_vjp
from .vmap import vmap

__all__ = ["vjp", "linearize", "grad", "value_and_grad", "jacfwd", "jacrev", "jacobian",
           "hessian", "linear_transpose"]


def _flatten_fun(fun, in_tree, has_aux=False):
    """fun over flat leaves; the output tree (and aux) are stored in the returned box."""
    box = {}

    def flat(*leaves):
        out = fun(*pytree.tree_unflatten(in_tree, leaves))
        if has_aux:
            out, box["aux"] = split_aux(out, "vjp")
        leaves_out, box["tree"] = pytree.tree_flatten(out)
        return leaves_out
    return flat, box


def vjp(fun, *primals, has_aux=False, reduce_axes=()):
    """(fun(*primals), pullback): the pullback (a `VJP`, a pytree whose leaves are the
    residuals; see vjp_object.py) maps output cotangents to input cotangents."""
    leaves, in_tree = pytree.tree_flatten(primals)
    leaves = [as_value(x) for x in leaves]
    flat, box = _flatten_fun(fun, in_tree, has_aux)
    out_p, jaxpr, residuals = linearize_flat(flat, leaves)
    pullback = make_vjp(leaves, in_tree, box["tree"], [typed_aval(o) for o in out_p], jaxpr,
                        residuals, _fun_name(fun))
    out = pytree.tree_unflatten(box["tree"], out_p)
    return (out, pullback, box["aux"]) if has_aux else (out, pullback)


def _fun_name(fun):
    return getattr(fun, "__name__", type(fun).__name__)


def _check_linearized_tangent(p, t):
    try:
        check_tangent(p, t)
    except (TypeError, ValueError) as err:
        raise ValueError("linearized function called on tangent values inconsistent with the "
                         f"original primal values: {err}") from None
    pa, ta = get_aval(p), get_aval(t)
    if pa.vma != ta.vma:
        raise _vma_mismatch(pa, ta)


def _vma_mismatch(pa, ta):
    """JAX's error for a tangent varying over other manual axes than its primal, with the
    pcasts that would make them agree."""
    fixes = [f"  * applying `jax.lax.pcast(..., {tuple(extra)}, to='varying')` to {what};"
             for extra, what in ((ta.vma - pa.vma, "the primal value passed to "
                                  "`jax.linearize`"), (pa.vma - ta.vma, "the tangent value "
                                  "passed to the callable `f_jvp` returned by `jax.linearize`"))
             if extra]
    return ValueError(
        "linearized function called on tangent values inconsistent with the original primal "
        f"values:\nGot tangent aval {_long(ta)} for primal aval {_long(pa)} but expected "
        f"{_long(pa.to_tangent_aval())}. \nThis might be fixed by:\n" + "\n".join(fixes))


def _long(aval):
    return aval.str_short(short_dtypes=False)


def linearize(fun, *primals):
    """(fun(*primals), f_jvp) where f_jvp evaluates the linear map of tangents."""
    leaves, in_tree = pytree.tree_flatten(primals)
    leaves = [as_value(x) for x in leaves]
    flat, box = _flatten_fun(fun, in_tree)
    out_p, jaxpr, residuals = linearize_flat(flat, leaves)
    out_tree = box["tree"]

    def f_jvp(*tangents):
        t_leaves, t_tree = pytree.tree_flatten(tangents)
        if t_tree != in_tree:
            raise TypeError(f"linearized function called with tangent structure {t_tree}, "
                            f"expected {in_tree}")
        for p, t in zip(leaves, t_leaves):
            _check_linearized_tangent(p, as_value(t))
        outs = eval_jaxpr(jaxpr, residuals, *[as_value(t) for t in t_leaves])
        return pytree.tree_unflatten(out_tree, outs)

    return pytree.tree_unflatten(out_tree, out_p), f_jvp


# ---------------------------------------------------------------- grad family

def _check_argnums(argnums, nargs, name):
    """argnums as a tuple of non-negative positions. JAX fails on a repeated or empty argnums
    with a raw Python error (or, for some, a wrong gradient): refjax says which."""
    if not isinstance(argnums, (int, tuple, list)):
        raise TypeError(f"{name}: argnums must be an int or a tuple of ints, got {argnums!r}")
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise ValueError(f"{name}: argnums={argnums!r} selects no argument to differentiate")
    for i in nums:
        if not isinstance(i, int) or isinstance(i, bool):
            raise TypeError(f"{name}: argnums must be an int or a tuple of ints, got "
                            f"{argnums!r}")
        if i < -nargs:  # JAX's classes: ValueError below, TypeError above the range
            raise ValueError(f"{name}: positional argument indices such as argnums must be "
                             f"at least -len(args) and less than len(args), but got {i} for "
                             f"len(args) == {nargs}.")
        if not i < nargs:
            raise TypeError(f"differentiating with respect to argnums={argnums} requires at least "
                            f"{(i if i >= 0 else -i - 1) + 1} positional arguments to be passed by "
                            f"the caller, but got only {nargs} positional arguments.")
    nums = tuple(i % nargs for i in nums)
    if len(set(nums)) != len(nums):
        raise TypeError(f"{name}: argnums={argnums!r} names an argument more than once; each "
                        "argument can be differentiated with respect to once")
    return nums


def _check_input_dtype(x, allow_int, holomorphic, name):
    """JAX's checks of the inputs of reverse-mode derivatives (grad, jacrev)."""
    dtype = get_aval(x).dtype
    if holomorphic:
        if dtypes.kind(dtype) != "c":
            raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, "
                            f"but got {dtype.name}.")
        return
    if dtypes.is_inexact(dtype) or (allow_int and dtype != dtypes.float0):
        return
    raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype that is a "
                    f"sub-dtype of np.inexact), but got {dtype.name}. If you want to use "
                    "Boolean- or integer-valued inputs, use vjp or set allow_int to True.")


def _check_jacfwd_input(x, holomorphic):
    """jacfwd's inputs are real floats (complex ones with holomorphic=True), as in JAX."""
    dtype = get_aval(x).dtype
    if holomorphic:
        _check_input_dtype(x, False, True, "jacfwd")
    elif not dtypes.is_float(dtype):
        raise TypeError(f"jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
                        f"np.floating), but got {dtype.name}. For holomorphic differentiation, "
                        "pass holomorphic=True. For differentiation of non-holomorphic functions "
                        "involving complex inputs or integer inputs, use jax.jvp directly.")


def _check_output_dtype(out, holomorphic, name):
    """Reverse-mode derivatives need real float outputs (complex ones with holomorphic=True):
    a complex output would otherwise silently lose its imaginary part's derivative."""
    dtype = get_aval(out).dtype
    if holomorphic:
        if dtypes.kind(dtype) != "c":
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex dtype, "
                            f"but got {dtype.name}.")
    elif dtypes.kind(dtype) == "c":
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype "
                        f"of np.floating), but got {dtype.name}. For holomorphic differentiation, "
                        "pass holomorphic=True. For differentiation of non-holomorphic functions "
                        "involving complex outputs, use jax.vjp directly.")
    elif not dtypes.is_float(dtype):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype "
                        f"of np.floating), but got {dtype.name}. For differentiation of functions "
                        "with integer outputs, use jax.vjp directly.")


def _check_scalar_output(out, holomorphic, name):
    aval = get_aval(out)
    if aval.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: "
                        f"{aval.shape}.")
    _check_output_dtype(out, holomorphic, name)


def _diff_leaves(fun, args, kwargs, argnums, name, check):
    """The leaves of the arguments `argnums` selects (as values, each passed to `check`), their
    tree, and fun as a function of those leaves alone (the other arguments fixed). jacfwd
    and jacrev rebuild the arguments' trees with None leaves first, as JAX's input checks
    (a tree_map) do: a pytree class refusing None in its constructor raises there."""
    nums = _check_argnums(argnums, len(args), name)
    if name in ("jacfwd", "jacrev"):
        pytree.tree_map(lambda x: None, tuple(args[i] for i in nums))
    leaves, in_tree = pytree.tree_flatten(tuple(args[i] for i in nums))
    leaves = [naming_errors(as_value, name)(x) for x in leaves]
    for x in leaves:
        check(x)

    def fun_of_leaves(*flat):
        full = list(args)
        for i, v in zip(nums, pytree.tree_unflatten(in_tree, flat)):
            full[i] = v
        return fun(*full, **kwargs)
    return leaves, in_tree, fun_of_leaves


def _per_argnums(tree, argnums):
    """A tuple over argnums, or its one entry when argnums is an int."""
    return tree[0] if isinstance(argnums, int) else tuple(tree)


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """A function returning (fun(*args), gradient w.r.t. args[argnums])."""
    @functools.wraps(fun)
    def vg(*args, **kwargs):
        leaves, in_tree, f = _diff_leaves(
            fun, args, kwargs, argnums, "grad",
            lambda x: _check_input_dtype(x, allow_int, holomorphic, "grad"))
        res = vjp(f, *leaves, has_aux=has_aux)
        out, pullback = res[0], res[1]
        _check_scalar_output(out, holomorphic, "grad")
        g = _per_argnums(pytree.tree_unflatten(in_tree, pullback(_ones_like(out))), argnums)
        return ((out, res[2]), g) if has_aux else (out, g)

    return vg


def _ones_like(x):
    """The seed cotangent, of the output's type (weak if it is, so gradients at Python scalars
    are weak as JAX's) and placed like it when it is a concrete array (as JAX's ones_like),
    so gradients of values committed to some device come back there (uncommitted: on the
    default device, uncommitted, as JAX's)."""
    aval = get_aval(x)
    if isinstance(x, Array):
        layout = _seed_layout(x) if x.committed else None
        if getattr(getattr(layout, "spec", None), "unreduced", None):  # placed as JAX places it
            ones = runtime.make_array(np.ones(aval.shape, aval.dtype), aval,
                                      sharding=layout.update(spec=P()))
            return reshard(ones, layout)
        return runtime.make_array(np.ones(aval.shape, aval.dtype), aval, sharding=layout)
    one = seed_one(aval.update(weak_type=False))
    return ew.convert_element_type(one, aval.dtype, weak_type=True) if aval.weak_type else one


def _seed_layout(x):
    """The seed's layout: the output's, or, for an unreduced output, reduced (its
    cotangent's type)."""
    s = x.sharding
    return swapped_sets(s) if hasattr(s, "spec") else s


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """A function computing the gradient of the scalar function fun w.r.t. args[argnums]."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def g(*args, **kwargs):
        value, grads = vg(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return g


# ---------------------------------------------------------------- Jacobians

def _eye(n, dtype):
    rows = st.broadcasted_iota(dtypes.int32, (n, n), 0)
    cols = st.broadcasted_iota(dtypes.int32, (n, n), 1)
    return ew.convert_element_type(ew.eq(rows, cols), dtype)


def _size(x):
    return math.prod(get_aval(x).shape)


def _std_basis(leaves):
    """The identity over the flattened leaves, one block per leaf: [(total, *leaf.shape)]."""
    total = sum(map(_size, leaves))
    dtype = dtypes.result_type_of([(get_aval(x).dtype, False) for x in leaves])[0] \
        if leaves else dtypes.default_float()
    eye, out, start = _eye(total, dtype), [], 0
    for x in leaves:
        aval, n = get_aval(x), _size(x)
        block = st.slice(eye, (0, start), (total, start + n))
        out.append(_cast_like(st.reshape(block, (total,) + aval.shape), x))
        start += n
    return out


def _cast_like(block, example):
    """block with example's dtype and weak type (its real part for a real example), as JAX
    gives each Jacobian block the type of the leaf it belongs to."""
    aval, dtype = get_aval(example), get_aval(block).dtype
    if dtypes.kind(dtype) == "c" and dtypes.kind(aval.dtype) != "c":
        block = ew.real(block)
    if get_aval(block).dtype == aval.dtype and get_aval(block).weak_type == aval.weak_type:
        return block
    return ew.convert_element_type(block, aval.dtype, weak_type=aval.weak_type)


def _split_flat_axis(jac, axis, leaves, rest_shape, leaf_first, example=None):
    """Split `axis` of jac, which runs over the flattened `leaves`, into one block per leaf,
    each reshaped to leaf.shape + rest_shape (leaf_first) or rest_shape + leaf.shape and
    cast like `example` (default: like its leaf)."""
    blocks, start, shape = [], 0, get_aval(jac).shape
    for x in leaves:
        n, leaf_shape = _size(x), get_aval(x).shape
        lo, hi = [0] * len(shape), list(shape)
        lo[axis], hi[axis] = start, start + n
        block = st.slice(jac, lo, hi)
        block = st.reshape(block, leaf_shape + rest_shape if leaf_first
                           else rest_shape + leaf_shape)
        if get_aval(block).dtype != dtypes.float0:  # (float0 blocks: see _int_zeros)
            block = _cast_like(block, x if example is None else example)
        blocks.append(block)
        start += n
    return blocks


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian by forward mode: jvp of each basis vector, vmapped."""
    def jac(*args, **kwargs):
        leaves, in_tree, f = _diff_leaves(fun, args, kwargs, argnums, "jacfwd",
                                          lambda x: _check_jacfwd_input(x, holomorphic))

        def push(*t):
            return jvp(f, tuple(leaves), tuple(t), has_aux=has_aux)[1]

        out = f(*leaves)
        if has_aux:
            out, aux = split_aux(out, "jacfwd")
        if holomorphic:
            for o in pytree.tree_leaves(out):
                _check_output_dtype(o, True, "jacfwd")
        jac_tangents = vmap(push, in_axes=0, out_axes=-1)(*_std_basis(leaves))
        result = pytree.tree_map(
            lambda o, j: _per_argnums(pytree.tree_unflatten(in_tree, [
                _int_zeros(b, o) for b in _split_flat_axis(
                    j, get_aval(j).ndim - 1, leaves, get_aval(o).shape, False, example=o)]),
                argnums),
            out, jac_tangents)
        return (result, aux) if has_aux else result
    return jac


def _int_zeros(block, out):
    """A float0 block of the Jacobian of an integer output as zeros of that output's dtype
    (what JAX's jacfwd gives)."""
    aval = get_aval(block)
    if aval.dtype != dtypes.float0:
        return block
    return zeros_like_aval(ShapedArray(aval.shape, get_aval(out).dtype))


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Jacobian by reverse mode: the pullback of each output basis vector, vmapped."""
    def jac(*args, **kwargs):
        leaves, in_tree, f = _diff_leaves(
            fun, args, kwargs, argnums, "jacrev",
            lambda x: _check_input_dtype(x, allow_int, holomorphic, "jacrev"))
        res = vjp(f, *leaves, has_aux=has_aux)
        out, pullback = res[0], res[1]
        out_leaves, out_tree = pytree.tree_flatten(out)
        for o in out_leaves:
            _check_output_dtype(o, holomorphic, "jacrev")
        cts = vmap(lambda *b: pullback(pytree.tree_unflatten(out_tree, b)))(
            *_std_basis(out_leaves))
        # cts: per input leaf, (total outputs, *in_shape); split them per output leaf.
        per_in = [_split_flat_axis(c, 0, out_leaves, get_aval(c).shape[1:], True, example=x)
                  for c, x in zip(cts, leaves)]
        per_out = [_per_argnums(pytree.tree_unflatten(in_tree, list(blocks)), argnums)
                   for blocks in zip(*per_in)] if per_in else \
            [_per_argnums(pytree.tree_unflatten(in_tree, []), argnums) for _ in out_leaves]
        result = pytree.tree_unflatten(out_tree, per_out)
        return (result, res[2]) if has_aux else result
    return jac


jacobian = jacrev


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """Matrix of second derivatives: jacfwd(jacrev(fun))."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)


# ---------------------------------------------------------------- linear_transpose

def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of `fun`, a linear function, at the shapes and dtypes of `primals`
    (arrays or ShapeDtypeStructs; only their avals are used). Returns a function taking the
    output cotangent (a pytree like fun's output) to the tuple of input cotangents, as a
    `tree_util.Partial` (a pytree, so it can be passed through jit).

    fun is traced once to a jaxpr; the transposed function runs that jaxpr's equations
    backwards with the primitives' transpose rules (vjp's backward_pass). Equations that do
    not depend on the inputs are evaluated, so affine constants are ignored. Functions must map
    float/complex to float/complex or integers to integers (TypeError otherwise, as in JAX);
    a non-linear fun fails when the transpose is called, naming the offending operation."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    leaves, in_tree = pytree.tree_flatten(primals)
    in_avals = [_primal_aval(x) for x in leaves]
    flat, box = _flatten_fun(fun, in_tree)
    jaxpr, consts = trace_to_jaxpr(flat, in_avals)
    out_avals = [v.aval for v in jaxpr.outvars]
    _check_linear_dtypes(in_avals, out_avals)
    out_tree = box["tree"]

    def transposed(consts, out_cotangent):
        ct_leaves, ct_tree = pytree.tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError("cotangent tree does not match function output, expected "
                            f"{out_tree} but got {ct_tree}")
        cts = [as_value(c) for c in ct_leaves]
        if not all(_same_type(a, c) for a, c in zip(out_avals, cts)):
            raise TypeError("cotangent type does not match function output, expected "
                            f"{[a.str_short() for a in out_avals]} but got "
                            f"{[get_aval(c).str_short() for c in cts]}")
        _check_linear(jaxpr)
        in_cts = backward_pass(jaxpr, consts, [True] * len(in_avals), cts, transform="transpose")
        return pytree.tree_unflatten(in_tree, [_zeros_if_zero(c, a)
                                               for c, a in zip(in_cts, in_avals)])

    return pytree.Partial(transposed, consts)


def _primal_aval(x):
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), weak_type=x.weak_type)
    return typed_aval(as_value(x))


def _check_linear_dtypes(in_avals, out_avals):
    all_dtypes = [a.dtype for a in list(in_avals) + list(out_avals)]
    if all(dtypes.is_inexact(d) for d in all_dtypes) or all(dtypes.is_int(d) for d in all_dtypes):
        return
    raise TypeError("linear_transpose only supports [float or complex] -> [float or complex], "
                    "and integer -> integer functions, but got "
                    f"{[a.dtype for a in in_avals]} -> {[a.dtype for a in out_avals]}.")


def _same_type(aval, value):
    got = get_aval(value)
    return tuple(got.shape) == tuple(aval.shape) and got.dtype == aval.dtype


def _check_linear(jaxpr):
    """Name the first equation that makes the jaxpr non-linear in its inputs: one with no
    transpose rule, or a multiplication of two input-dependent values (JAX fails there with
    a bare AssertionError)."""
    linear = set(jaxpr.invars)
    for eqn in jaxpr.eqns:
        lin_in = [type(v) is not Literal and v in linear for v in eqn.invars]
        if not any(lin_in):
            continue
        name = eqn.primitive.name
        if eqn.primitive.transpose is None:
            raise NotImplementedError(
                f"Transpose rule (for reverse-mode differentiation) for '{name}' not "
                f"implemented: linear_transpose needs a function linear in its inputs, and "
                f"`{name}` is applied to a value that depends on them.")
        if name == "mul" and all(lin_in):
            raise ValueError("linear_transpose: the function is not linear in its inputs: "
                             "`mul` multiplies two values that both depend on them.")
        linear.update(eqn.outvars)


def _zeros_if_zero(ct, aval):
    """A symbolic zero cotangent as zeros of the input's own dtype and weak type."""
    if type(ct) is not Zero and ct is not None:
        return ct
    zeros = zeros_like_aval(aval.update(weak_type=False))
    if aval.weak_type:
        zeros = ew.convert_element_type(zeros, aval.dtype, weak_type=True)
    return zeros
