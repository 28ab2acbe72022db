"""The transformation API users call: grad, value_and_grad, vjp, jvp, linearize, jacfwd,
jacrev, jacobian, hessian, vmap, stop_gradient."""
import functools

import numpy as np

from .. import dtypes, pytree
from ..trace import current_trace, get_aval, set_current_trace
from .ad import Zero, instantiate, zeros_like_aval
from .jvp import _as_value, _check_tangent, jvp, stop_gradient  # noqa: F401
from .linearize import linearize_flat
from .transpose import backward_pass
from .vmap import vmap  # noqa: F401
from .custom import custom_jvp, custom_vjp  # noqa: F401

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "jacobian",
           "hessian", "vmap", "stop_gradient", "custom_jvp", "custom_vjp"]


def _flatten_fun(fun, in_tree, has_aux=False):
    """fun over flat leaves; the output tree (and aux) are stored in the returned box."""
    box = {}

    def flat(*leaves):
        out = fun(*pytree.tree_unflatten(in_tree, leaves))
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("has_aux=True requires the function to return a pair "
                                f"(output, aux), got {type(out).__name__}")
            out, box["aux"] = out
        leaves_out, box["tree"] = pytree.tree_flatten(out)
        return leaves_out
    return flat, box


def vjp(fun, *primals, has_aux=False, reduce_axes=()):
    """(fun(*primals), pullback): the pullback maps output cotangents to input cotangents."""
    leaves, in_tree = pytree.tree_flatten(primals)
    leaves = [_as_value(x) for x in leaves]
    flat, box = _flatten_fun(fun, in_tree, has_aux)
    out_p, jaxpr, residuals = linearize_flat(flat, leaves)
    out_tree = box["tree"]
    in_avals = [get_aval(x) for x in leaves]

    def pullback(cotangents):
        ct_leaves, ct_tree = pytree.tree_flatten(cotangents)
        if ct_tree != out_tree:
            raise TypeError(f"Tree structure of cotangent input {ct_tree}, does not match "
                            f"structure of primal output {out_tree}.")
        for ct, o in zip(ct_leaves, out_p):
            _check_ct(ct, o)
        ct_leaves = [_as_value(c) for c in ct_leaves]
        cts = backward_pass(jaxpr, residuals, [True] * len(jaxpr.invars), ct_leaves)
        cts = [_materialize(c, a) for c, a in zip(cts, in_avals)]
        return pytree.tree_unflatten(in_tree, cts)

    out = pytree.tree_unflatten(out_tree, out_p)
    return (out, pullback, box["aux"]) if has_aux else (out, pullback)


def _check_ct(ct, out):
    expected = get_aval(out).to_tangent_aval()
    got = get_aval(_as_value(ct))
    if got.shape != expected.shape:
        raise ValueError(f"vjp: cotangent of shape {got.shape} does not match the primal output "
                         f"of shape {expected.shape}")
    if got.dtype != expected.dtype and not (dtypes.is_inexact(got.dtype)
                                            and dtypes.is_inexact(expected.dtype)):
        raise TypeError(f"vjp: cotangent dtype {got.dtype.name} does not match the primal output "
                        f"dtype {get_aval(out).dtype.name} (expected {expected.dtype.name})")


def _materialize(ct, aval):
    tangent_aval = aval.to_tangent_aval()
    if type(ct) is Zero or ct is None:
        return zeros_like_aval(tangent_aval.update(weak_type=False))
    return ct


def linearize(fun, *primals):
    """(fun(*primals), f_jvp) where f_jvp evaluates the linear map of tangents."""
    leaves, in_tree = pytree.tree_flatten(primals)
    leaves = [_as_value(x) for x in leaves]
    flat, box = _flatten_fun(fun, in_tree)
    out_p, jaxpr, residuals = linearize_flat(flat, leaves)
    out_tree = box["tree"]

    def f_jvp(*tangents):
        t_leaves, t_tree = pytree.tree_flatten(tangents)
        if t_tree != in_tree:
            raise TypeError(f"linearized function called with tangent structure {t_tree}, "
                            f"expected {in_tree}")
        for p, t in zip(leaves, t_leaves):
            _check_tangent(p, _as_value(t))
        from ..jaxpr import eval_jaxpr
        outs = eval_jaxpr(jaxpr, residuals, *[_as_value(t) for t in t_leaves])
        return pytree.tree_unflatten(out_tree, outs)

    return pytree.tree_unflatten(out_tree, out_p), f_jvp


# ---------------------------------------------------------------- grad family

def _check_argnums(argnums, nargs, name):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise TypeError(f"differentiating with respect to argnums={argnums} requires at least "
                            f"{(i if i >= 0 else -i - 1) + 1} positional arguments to be passed by "
                            f"the caller, but got only {nargs} positional arguments.")
    return nums


def _check_input_dtype(x, allow_int, holomorphic, name):
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


def _check_scalar_output(out, holomorphic, name):
    aval = get_aval(out)
    if aval.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: "
                        f"{aval.shape}.")
    if holomorphic and dtypes.kind(aval.dtype) != "c":
        raise TypeError(f"{name} with holomorphic=True requires outputs with complex dtype, but "
                        f"got {aval.dtype.name}.")
    if not holomorphic and not dtypes.is_float(aval.dtype):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype "
                        f"of np.floating), but got {aval.dtype.name}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiating non-"
                        "holomorphic functions involving complex outputs, use jax.vjp directly.")


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """A function returning (fun(*args), gradient w.r.t. args[argnums])."""
    name = "value_and_grad"

    @functools.wraps(fun)
    def vg(*args, **kwargs):
        nums = _check_argnums(argnums, len(args), name)
        nums = tuple(i % len(args) for i in nums)
        diff = tuple(args[i] for i in nums)
        for leaf in pytree.tree_leaves(diff):
            _check_input_dtype(_as_value(leaf), allow_int, holomorphic, name.replace("value_and_", ""))

        def partial_fun(*d):
            full = list(args)
            for i, v in zip(nums, d):
                full[i] = v
            return fun(*full, **kwargs)

        res = vjp(partial_fun, *diff, has_aux=has_aux)
        out, pullback = res[0], res[1]
        _check_scalar_output(out, holomorphic, "grad")
        one = _ones_like(out)
        grads = pullback(one)
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        if has_aux:
            return (out, res[2]), g
        return out, g

    return vg


def _ones_like(x):
    from ..primitives.elementwise import full
    aval = get_aval(x)
    return full(aval.shape, 1, aval.dtype)


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """A function computing the gradient of the scalar function fun w.r.t. args[argnums]."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def g(*args, **kwargs):
        (out, aux), grads = vg(*args, **kwargs) if has_aux else ((None, None), vg(*args, **kwargs)[1])
        return (grads, aux) if has_aux else grads

    return g


# ---------------------------------------------------------------- Jacobians

def _std_basis(leaves):
    """An identity matrix over the flattened inputs, split per leaf: [(n, *leaf.shape)]."""
    sizes = [int(np.prod(get_aval(x).shape, dtype=np.int64)) for x in leaves]
    total = sum(sizes)
    from ...api import numpy as jnp
    dtype = dtypes.result_type_of([(get_aval(x).dtype, False) for x in leaves])[0] if leaves else \
        dtypes.default_float()
    eye = jnp.eye(total, dtype=dtype)
    out, start = [], 0
    for x, n in zip(leaves, sizes):
        block = eye[:, start:start + n]
        out.append(jnp.reshape(jnp.astype(block, get_aval(x).dtype), (total,) + get_aval(x).shape))
        start += n
    return out, total


def _unravel_jac(out_leaf, in_leaves, jac_flat, in_first):
    """Split a Jacobian with one flattened input axis into one block per input leaf."""
    from ...api import numpy as jnp
    blocks, start = [], 0
    out_shape = get_aval(out_leaf).shape
    for x in in_leaves:
        shape = get_aval(x).shape
        n = int(np.prod(shape, dtype=np.int64))
        if in_first:
            block = jac_flat[start:start + n]
            block = jnp.moveaxis(jnp.reshape(block, (n,) + out_shape), 0, -1) if out_shape else block
            blocks.append(jnp.reshape(block, out_shape + shape))
        else:
            blocks.append(jnp.reshape(jac_flat[..., start:start + n], out_shape + shape))
        start += n
    return blocks


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian by forward mode: jvp of each basis vector, vmapped."""
    def jac(*args, **kwargs):
        nums = _check_argnums(argnums, len(args), "jacfwd")
        diff = tuple(args[i] for i in nums)
        for leaf in pytree.tree_leaves(diff):
            _check_input_dtype(_as_value(leaf), False, holomorphic, "jacfwd")
        leaves, in_tree = pytree.tree_flatten(diff)
        leaves = [_as_value(x) for x in leaves]

        def partial_fun(*flat):
            full = list(args)
            for i, v in zip(nums, pytree.tree_unflatten(in_tree, flat)):
                full[i] = v
            return fun(*full, **kwargs)

        basis, _ = _std_basis(leaves)
        aux_box = []

        def push(*t):
            res = jvp(partial_fun, tuple(leaves), tuple(t), has_aux=has_aux)
            if has_aux:
                aux_box.append(res[2])
            return res[1]

        out = partial_fun(*leaves)
        if has_aux:
            out, aux = out
        jac_tangents = vmap(push, in_axes=0, out_axes=-1)(*basis)
        result = pytree.tree_map(
            lambda o, j: _assemble(o, leaves, in_tree, j, in_first=False, single=isinstance(argnums, int)),
            out, jac_tangents)
        return (result, aux) if has_aux else result
    return jac


def _assemble(out_leaf, in_leaves, in_tree, jac_flat, in_first, single):
    blocks = _unravel_jac(out_leaf, in_leaves, jac_flat, in_first)
    tree = pytree.tree_unflatten(in_tree, blocks)
    return tree[0] if single else tree


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Jacobian by reverse mode: the pullback of each output basis vector, vmapped."""
    def jac(*args, **kwargs):
        nums = _check_argnums(argnums, len(args), "jacrev")
        diff = tuple(args[i] for i in nums)
        for leaf in pytree.tree_leaves(diff):
            _check_input_dtype(_as_value(leaf), allow_int, holomorphic, "jacrev")
        leaves, in_tree = pytree.tree_flatten(diff)
        leaves = [_as_value(x) for x in leaves]

        def partial_fun(*flat):
            full = list(args)
            for i, v in zip(nums, pytree.tree_unflatten(in_tree, flat)):
                full[i] = v
            return fun(*full, **kwargs)

        res = vjp(partial_fun, *leaves, has_aux=has_aux)
        out, pullback = res[0], res[1]
        out_leaves, out_tree = pytree.tree_flatten(out)
        basis, _ = _std_basis(out_leaves)
        cts = vmap(lambda *b: pullback(pytree.tree_unflatten(out_tree, b)))(*basis)
        # cts: per input leaf, shape (n_out_total, *in_shape); split per output leaf.
        per_out, start = [], 0
        for o in out_leaves:
            n = int(np.prod(get_aval(o).shape, dtype=np.int64))
            blocks = [_reshape_rev(c[start:start + n], get_aval(o).shape, get_aval(x).shape)
                      for c, x in zip(cts, leaves)]
            tree = pytree.tree_unflatten(in_tree, blocks)
            per_out.append(tree[0] if isinstance(argnums, int) else tree)
            start += n
        result = pytree.tree_unflatten(out_tree, per_out)
        return (result, res[2]) if has_aux else result
    return jac


def _reshape_rev(block, out_shape, in_shape):
    from ...api import numpy as jnp
    return jnp.reshape(block, tuple(out_shape) + tuple(in_shape))


jacobian = jacrev


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """Matrix of second derivatives: jacfwd(jacrev(fun))."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)
