"""The transformation API users call: grad, value_and_grad, vjp, jvp, linearize, jacfwd,
jacrev, jacobian, hessian, vmap, stop_gradient, linear_transpose, checkpoint (remat)."""
import functools
import types

import numpy as np

from .. import dtypes, pytree
from ..trace import current_trace, get_aval, set_current_trace
from .ad import Zero, instantiate, zeros_like_aval
from .jvp import _as_value, _check_tangent, jvp, stop_gradient  # noqa: F401
from .linearize import linearize_flat
from .transpose import backward_pass
from .vmap import vmap  # noqa: F401
from .custom import custom_jvp, custom_vjp  # noqa: F401
from .jit import JitWrapped
from .staging import trace_to_jaxpr

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "jacobian",
           "hessian", "vmap", "stop_gradient", "custom_jvp", "custom_vjp", "linear_transpose",
           "checkpoint", "remat", "checkpoint_policies"]


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
    """The seed cotangent, placed like the output when it is a concrete array (as JAX's
    ones_like is), so gradients of values living on some device come back there."""
    from ..array import Array
    from ..primitives.elementwise import full
    aval = get_aval(x)
    one = full(aval.shape, 1, aval.dtype)
    if isinstance(x, Array):
        from ...api.devices import device_put
        one = device_put(one, x.sharding)
    return one


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
        cts = [_as_value(c) for c in ct_leaves]
        if not all(_same_type(a, c) for a, c in zip(out_avals, cts)):
            raise TypeError("cotangent type does not match function output, expected "
                            f"{[a.str_short() for a in out_avals]} but got "
                            f"{[get_aval(c).str_short() for c in cts]}")
        _check_linear(jaxpr)
        in_cts = backward_pass(jaxpr, consts, [True] * len(in_avals), cts)
        return pytree.tree_unflatten(in_tree, [_zeros_if_zero(c, a)
                                               for c, a in zip(in_cts, in_avals)])

    return pytree.Partial(transposed, consts)


def _primal_aval(x):
    from ..avals import ShapeDtypeStruct
    from .jit import _arg_aval
    return _arg_aval(x) if isinstance(x, ShapeDtypeStruct) else get_aval(_as_value(x))


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
    from .. import jaxpr as jx
    linear = set(jaxpr.invars)
    for eqn in jaxpr.eqns:
        lin_in = [type(v) is not jx.Literal and v in linear for v in eqn.invars]
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
        from ..primitives.elementwise import convert_element_type
        zeros = convert_element_type(zeros, aval.dtype, weak_type=True)
    return zeros


# ---------------------------------------------------------------- checkpoint / remat

class _Checkpointed(JitWrapped):
    """checkpoint(fun): fun staged to a jaxpr per argument signature (so, as in JAX, Python
    control flow on traced arguments fails unless they are static) and run as the `jit`
    call primitive named "checkpoint"; the call primitive's rules give jit, grad, vmap and
    higher-order derivatives."""

    def __init__(self, fun, prevent_cse, policy, static_argnums, static_argnames):
        super().__init__(fun, static_argnums, static_argnames, None, None, None)
        self._name = "checkpoint"  # the name the staged call carries in jaxprs
        self.prevent_cse, self.policy = prevent_cse, policy

    def __call__(self, *args, **kwargs):
        # unlike jit, checkpoint stages its function even under jax.disable_jit, as in JAX
        return self._call_staged(args, kwargs)


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=(), static_argnames=()):
    """jax.checkpoint (alias remat): fun with the same values and derivatives.

    In JAX, checkpointing changes only what the backward pass stores: residuals of `fun` are
    recomputed rather than saved, except those `policy` (see `checkpoint_policies`) allows
    saving. refjax has no memory model, so `policy` and `prevent_cse` are accepted and
    recorded (as `.policy`, `.prevent_cse`) but change nothing: the computed values are
    those of fun. Like JAX, fun is traced to a jaxpr (make_jaxpr shows a call named
    `checkpoint`), so arguments that steer Python control flow must be in `static_argnums`
    (or `static_argnames`), and must be hashable."""
    return _Checkpointed(fun, prevent_cse, policy, static_argnums, static_argnames)


remat = checkpoint


def _everything_saveable(*_, **__):
    return True


def _nothing_saveable(*_, **__):
    return False


class _DotsSaveable:
    """Saves the outputs of dot_general (without batch dimensions when only_if_no_batch_dims)."""

    def __init__(self, only_if_no_batch_dims):
        self.only_if_no_batch_dims = only_if_no_batch_dims

    def __call__(self, prim, *_, **params):
        if getattr(prim, "name", None) != "dot_general":
            return False
        if not self.only_if_no_batch_dims:
            return True
        (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
        return not lhs_batch and not rhs_batch

    def __repr__(self):
        return f"DotsSaveable(only_if_no_batch_dims={self.only_if_no_batch_dims})"


def _save_only_these_names(*names):
    # refjax has no checkpoint_name primitive, so no value carries a name.
    return lambda prim, *_, **params: getattr(prim, "name", None) == "name" and \
        params.get("name") in names


def _save_anything_except_these_names(*names):
    return lambda prim, *_, **params: not (getattr(prim, "name", None) == "name" and
                                           params.get("name") in names)


def _save_from_both_policies(policy_1, policy_2):
    return lambda *args, **params: policy_1(*args, **params) or policy_2(*args, **params)


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=_everything_saveable, nothing_saveable=_nothing_saveable,
    dots_saveable=_DotsSaveable(False), checkpoint_dots=_DotsSaveable(False),
    dots_with_no_batch_dims_saveable=_DotsSaveable(True),
    checkpoint_dots_with_no_batch_dims=_DotsSaveable(True),
    save_only_these_names=_save_only_these_names,
    save_anything_except_these_names=_save_anything_except_these_names,
    save_any_names_but_these=_save_anything_except_these_names,
    save_from_both_policies=_save_from_both_policies)
checkpoint_policies.__doc__ = ("Residual-saving policies for checkpoint, with JAX's names and "
                               "signature policy(prim, *avals, **params) -> bool. refjax has no "
                               "memory model: they are accepted and change no value.")
