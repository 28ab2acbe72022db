"""linear_call: a call of a function linear in some of its arguments, transposed by the user's
transpose function (jax.custom_derivatives.linear_call)."""
from .. import pytree
from ..primitive import make_primitive
from ..trace import as_value, get_aval
from .ad import Zero, instantiate, is_undefined_primal
from .batching import bdim_at_front, moveaxis
from .staging import stage
from .vmap import batch_jaxpr

linear_call_p = make_primitive("linear_call", multiple_results=True)
linear_call_p.def_abstract_eval(lambda *avals, callee, **_: callee.out_avals)
linear_call_p.def_call("callee")


class _Thunk:
    """The transpose of a linear_call's callee, staged when first asked: (ClosedJaxpr,
    tracer consts). Hashed by identity; printed as JAX prints its memoized thunk."""

    def __init__(self, make):
        self._make, self._value = make, None

    def __call__(self):
        if self._value is None:
            self._value = self._make()
        return self._value

    def __repr__(self):
        return f"<function _memoize.<locals>.memoized at {id(self):#x}>"


def _flat(fun, trees, out_box):
    """fun of pytrees as a function of flat leaves (the output tree goes to out_box)."""
    def flat(*leaves):
        args, start = [], 0
        for tree in trees:
            args.append(pytree.tree_unflatten(tree, leaves[start:start + tree.num_leaves]))
            start += tree.num_leaves
        out, out_box[0] = pytree.tree_flatten(fun(*args))
        return out
    return flat


def linear_call(fun, fun_transpose, residual_args, linear_args):
    """fun(residual_args, linear_args), where fun is linear in linear_args and
    fun_transpose(residual_args, cotangents) is its transpose: differentiation and
    transposition use fun_transpose instead of transposing fun's operations."""
    res, res_tree = pytree.tree_flatten(residual_args)
    lin, lin_tree = pytree.tree_flatten(linear_args)
    res, lin = [as_value(x) for x in res], [as_value(x) for x in lin]
    out_box = [None]
    callee, consts = stage(_flat(fun, (res_tree, lin_tree), out_box),
                           [get_aval(x) for x in res + lin])

    def transposed():
        t_box = [None]
        closed = stage(_flat(fun_transpose, (res_tree, out_box[0]), t_box),
                       [get_aval(x) for x in res] + list(callee.out_avals))
        if t_box[0] != lin_tree:
            raise TypeError("transpose output pytree structure must match that of linear "
                            f"inputs, got output structure {t_box[0]} and input structure "
                            f"{lin_tree}.")
        return closed
    outs = linear_call_p.bind(*consts, *res, *lin, callee=callee,
                              transpose_thunk=_Thunk(transposed), num_callee_consts=len(consts),
                              num_res=len(res))
    return pytree.tree_unflatten(out_box[0], outs)


def _split(args, num_callee_consts, num_res):
    k = num_callee_consts + num_res
    return args[:k], args[k:]


def _linear_call_jvp(primals, tangents, **params):
    fixed, lin_t = _split(tangents, params["num_callee_consts"], params["num_res"])
    if any(type(t) is not Zero for t in fixed):  # JAX: a bare AssertionError
        raise ValueError("linear_call: differentiating with respect to residual_args is not "
                         "supported; fun is linear in linear_args only (pass what it is "
                         "differentiated in as linear_args, or stop_gradient the residuals)")
    outs = linear_call_p.bind(*primals, **params)
    if all(type(t) is Zero for t in lin_t):
        return outs, [Zero(get_aval(o).to_tangent_aval()) for o in outs]
    fixed_p, _ = _split(primals, params["num_callee_consts"], params["num_res"])
    return outs, linear_call_p.bind(*fixed_p, *[instantiate(t) for t in lin_t], **params)


def _linear_call_transpose(cts, *args, callee, transpose_thunk, num_callee_consts, num_res):
    fixed, lin = _split(args, num_callee_consts, num_res)
    if any(is_undefined_primal(x) for x in fixed):
        raise ValueError("linear_call: transposing with respect to residual_args is not "
                         "supported; fun is linear in linear_args only")
    transpose, t_consts = transpose_thunk()
    cts = [instantiate(c) for c in cts]
    cts_out = linear_call_p.bind(
        *t_consts, *fixed[num_callee_consts:], *cts, callee=transpose,
        transpose_thunk=_Thunk(lambda: (callee, list(fixed[:num_callee_consts]))),
        num_callee_consts=len(t_consts), num_res=num_res)
    return [None] * len(fixed) + list(cts_out)


linear_call_p.def_jvp(_linear_call_jvp)
linear_call_p.def_transpose(_linear_call_transpose)


def _linear_call_batch(axis_data, vals, dims, *, callee, transpose_thunk, num_callee_consts,
                       num_res):
    """vmap (JAX has none: NotImplementedError): callee and transpose both batched, the
    linear arguments all batched (an unbatched one broadcast: the broadcast's own transpose,
    a sum, then reduces its cotangent)."""
    k, size = num_callee_consts + num_res, axis_data.size
    fixed = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals[:k], dims[:k])]
    lin = [bdim_at_front(v, d, size) for v, d in zip(vals[k:], dims[k:])]
    fixed_b = [d is not None for d in dims[:k]]
    batched, _ = batch_jaxpr(callee, axis_data, fixed_b + [True] * len(lin), True)

    def transpose():
        t_jaxpr, t_consts = transpose_thunk()
        flags = [False] * len(t_consts) + fixed_b[num_callee_consts:] + \
            [True] * len(callee.out_avals)
        return batch_jaxpr(t_jaxpr, axis_data, flags, True)[0], t_consts
    outs = linear_call_p.bind(*fixed, *lin, callee=batched, transpose_thunk=_Thunk(transpose),
                              num_callee_consts=num_callee_consts, num_res=num_res)
    return outs, [0] * len(outs)


linear_call_p.def_batch(_linear_call_batch)
