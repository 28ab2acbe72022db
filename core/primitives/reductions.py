"""Reduction primitives (reduce_*, argmax/argmin, cumulative reductions) with all their rules."""
import math
import operator

from .. import dtypes, pytree
from ..avals import ShapedArray
from ..primitive import make_primitive, named
from ..trace import get_aval
from ..transforms.ad import Zero, defjvp_with_output, deflinear, defnondiff
from ..transforms.jvp import jvp
from . import elementwise as ew
from . import structural as st
from .sharding_ops import with_sharding_constraint

def _dtype_name(dtype):
    return "float0" if dtype == dtypes.float0 else dtype.name


def _check_number(name, dtype):
    if dtypes.kind(dtype) not in "iufc":
        raise TypeError(f"{name} does not accept dtype {_dtype_name(dtype)}. Accepted dtypes "
                        "are subtypes of number.")


def _check_not_float0(name, dtype):
    if dtype == dtypes.float0:
        raise TypeError(f"{name} does not accept dtype float0 (the tangent type of integer "
                        "values); reduce the primal value instead.")


def _check_axes(name, x, axes):
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: duplicate value in 'axes' of reduction: {axes}")
    if not all(0 <= a < x.ndim for a in axes):
        raise ValueError(f"{name}: reduction axes {axes} contains out-of-bounds indices for "
                         f"operand {x.str_short()}; lax axes must be in [0, {x.ndim}) "
                         "(negative axes are not accepted).")


def _reduced_shape(shape, axes):
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _as_axes(axes):
    return tuple(operator.index(a) for a in axes)


# ---------------------------------------------------------------- reduce_*

def _reducer_abstract_eval(name, check_dtype, keep_weak):
    def abstract_eval(x, *, axes, out_sharding=None):
        check_dtype(name, x.dtype)
        _check_axes(name, x, axes)
        return ShapedArray(_reduced_shape(x.shape, axes), x.dtype,
                           weak_type=keep_weak and x.weak_type)
    return abstract_eval


def _reducer_batch(prim):
    """The batch dim stays where it is; the reduced axes shift past it."""
    def rule(axis_data, vals, dims, *, axes, **params):
        (x,), (d,) = vals, dims
        moved = tuple(a + (a >= d) for a in axes)
        return prim.bind(x, axes=moved, **params), d - sum(a < d for a in axes)
    prim.def_batch(rule)
    return rule


def reducer(name, check_dtype, keep_weak=True):
    """A reduction over `axes`: abstract eval (dtype and axes checks) and batching rule."""
    prim = make_primitive(name)
    prim.def_abstract_eval(_reducer_abstract_eval(name, check_dtype, keep_weak))
    _reducer_batch(prim)
    prim.def_sharding(_reduction_sharding)
    return prim


def _reduction_sharding(in_specs, in_avals, out_avals, *, axes, **_):
    """The reduced dimensions' entries are dropped; the others keep theirs."""
    return [tuple(e for i, e in enumerate(in_specs[0]) if i not in axes)]


def _check_logical(name, dtype):
    if dtypes.kind(dtype) not in "biu":
        raise TypeError(f"{name}: logical reduction requires operand dtype bool or int, got "
                        f"{_dtype_name(dtype)}.")


reduce_sum_p = reducer("reduce_sum", _check_number)
reduce_prod_p = reducer("reduce_prod", _check_number)
reduce_max_p = reducer("reduce_max", _check_not_float0)
reduce_min_p = reducer("reduce_min", _check_not_float0)
reduce_and_p = reducer("reduce_and", _check_logical, keep_weak=False)
reduce_or_p = reducer("reduce_or", _check_logical, keep_weak=False)


def reduce_sum(operand, axes, *, out_sharding=None):
    """Sum of operand over `axes` (non-negative ints), accumulated in operand's dtype;
    laid out as `out_sharding` when given."""
    out = reduce_sum_p.bind(operand, axes=_as_axes(axes), out_sharding=None)
    return constrain(out, out_sharding)


def constrain(x, sharding):
    """x laid out as `sharding` (a lax function's out_sharding argument), or x when None."""
    if sharding is None:
        return x
    return with_sharding_constraint(x, sharding)


def reduce_prod(operand, axes):
    """Product of operand over `axes`."""
    return reduce_prod_p.bind(operand, axes=_as_axes(axes))


def reduce_max(operand, axes):
    """Maximum of operand over `axes` (NaN propagates; -inf / the dtype's min when empty)."""
    return reduce_max_p.bind(operand, axes=_as_axes(axes))


def reduce_min(operand, axes):
    """Minimum of operand over `axes` (NaN propagates; +inf / the dtype's max when empty)."""
    return reduce_min_p.bind(operand, axes=_as_axes(axes))


def reduce_and(operand, axes):
    """Logical (bool) or bitwise (int) AND of operand over `axes`."""
    return reduce_and_p.bind(operand, axes=_as_axes(axes))


def reduce_or(operand, axes):
    """Logical (bool) or bitwise (int) OR of operand over `axes`."""
    return reduce_or_p.bind(operand, axes=_as_axes(axes))


def _kept_dims(ndim, axes):
    return tuple(i for i in range(ndim) if i not in axes)


def _reduce_sum_transpose(ct, x, *, axes, out_sharding):
    shape = x.aval.shape
    return [st.broadcast_in_dim(ct, shape, _kept_dims(len(shape), axes))]


deflinear(reduce_sum_p, _reduce_sum_transpose)


def _chooser_jvp(t, out, x, *, axes):
    """The tangent averaged over the positions that attain the max (min), as in JAX."""
    if not dtypes.is_inexact(get_aval(x).dtype):
        return Zero(get_aval(out).to_tangent_aval())
    shape = get_aval(x).shape
    chosen = ew.eq(x, st.broadcast_in_dim(out, shape, _kept_dims(len(shape), axes)))
    where = ew.convert_element_type(chosen, get_aval(t).dtype)
    counts = reduce_sum(where, axes)
    return ew.div(reduce_sum(ew.mul(t, where), axes), counts)


defjvp_with_output(reduce_max_p, _chooser_jvp)
defjvp_with_output(reduce_min_p, _chooser_jvp)


def _axes_to_front(x, axes):
    """x with `axes` moved to the front and merged into one dimension."""
    shape = get_aval(x).shape
    kept = _kept_dims(len(shape), axes)
    n = math.prod(shape[a] for a in axes)
    return st.reshape(x, (n,) + tuple(shape[i] for i in kept), dimensions=tuple(axes) + kept)


def _product_of_others(y):
    """Along axis 0: the product of every element but the one at each position.
    Exclusive products from both sides, so no division (zeros in y are fine)."""
    rest = [(0, 0, 0)] * (len(get_aval(y).shape) - 1)
    one = ew.weak_scalar(1, get_aval(y).dtype)
    before = cumprod(st.pad(y, one, [(1, -1, 0)] + rest), 0)
    after = cumprod(st.pad(y, one, [(-1, 1, 0)] + rest), 0, reverse=True)
    return ew.mul(before, after)


def _reduce_prod_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    out = reduce_prod_p.bind(x, axes=axes)
    if type(t) is Zero or not dtypes.is_inexact(get_aval(x).dtype):
        return out, Zero(get_aval(out).to_tangent_aval())
    others = _product_of_others(_axes_to_front(x, axes))
    return out, reduce_sum(ew.mul(others, _axes_to_front(t, axes)), (0,))


reduce_prod_p.def_jvp(_reduce_prod_jvp)
defnondiff(reduce_and_p)
defnondiff(reduce_or_p)


# ---------------------------------------------------------------- argmax / argmin

def _argminmax_abstract_eval(name):
    def abstract_eval(x, *, axes, index_dtype):
        axis, = axes
        if not 0 <= axis < x.ndim:
            raise ValueError(f"{name}: invalid axis {axis} for operand shape {x.shape}; lax "
                             f"axes must be in [0, {x.ndim}).")
        if x.shape[axis] < 1:
            raise ValueError(f"{name} requires a non-empty reduced dimension, got operand shape "
                             f"{x.shape} and axis={axis}.")
        if not dtypes.is_int(index_dtype):
            raise TypeError(f"{name}: index_dtype must be an integer type, but got "
                            f"{index_dtype.name}")
        if dtypes.kind(x.dtype) not in "iufb":
            raise TypeError(f"{name} does not accept dtype {_dtype_name(x.dtype)}. Accepted "
                            "dtypes are subtypes of integer, floating, bool.")
        return ShapedArray(_reduced_shape(x.shape, axes), index_dtype)
    return abstract_eval


def _argminmax(name):
    prim = make_primitive(name)
    prim.def_abstract_eval(_argminmax_abstract_eval(name))
    _reducer_batch(prim)
    defnondiff(prim)
    prim.def_sharding(_reduction_sharding)
    return prim


argmax_p = _argminmax("argmax")
argmin_p = _argminmax("argmin")


def argmax(operand, axis, index_dtype):
    """Index of the first maximum along `axis` (a NaN counts as the maximum)."""
    return argmax_p.bind(operand, axes=(operator.index(axis),),
                         index_dtype=dtypes.canonicalize_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    """Index of the first minimum along `axis` (a NaN counts as the minimum)."""
    return argmin_p.bind(operand, axes=(operator.index(axis),),
                         index_dtype=dtypes.canonicalize_dtype(index_dtype))


# ---------------------------------------------------------------- cumulative reductions

def _cumulative_abstract_eval(name):
    def abstract_eval(x, *, axis, reverse):
        _check_number(name, x.dtype)
        if not 0 <= axis < x.ndim:
            raise ValueError(f"{name}: axis {axis} is out of bounds for array of shape "
                             f"{x.shape}; lax axes must be in [0, {x.ndim}) (negative axes "
                             "are not accepted).")
        return x
    return abstract_eval


def _cumulative_batch(prim):
    def rule(axis_data, vals, dims, *, axis, reverse):
        (x,), (d,) = vals, dims
        return prim.bind(x, axis=axis + (axis >= d), reverse=reverse), d
    prim.def_batch(rule)


def _cumulative(name):
    prim = make_primitive(name)
    prim.def_abstract_eval(_cumulative_abstract_eval(name))
    _cumulative_batch(prim)
    return prim


cumsum_p = _cumulative("cumsum")
cumprod_p = _cumulative("cumprod")
cummax_p = _cumulative("cummax")
cummin_p = _cumulative("cummin")


def _lax_cumulative(prim, what):
    def fn(operand, axis=0, reverse=False):
        return prim.bind(operand, axis=operator.index(axis), reverse=bool(reverse))
    return named(fn, prim.name, f"Cumulative {what} along `axis` (from the end when "
                                f"reverse=True); binds `{prim.name}`.")


cumsum = _lax_cumulative(cumsum_p, "sum")
cumprod = _lax_cumulative(cumprod_p, "product")
cummax = _lax_cumulative(cummax_p, "maximum")
cummin = _lax_cumulative(cummin_p, "minimum")

deflinear(cumsum_p, lambda ct, x, *, axis, reverse: [cumsum(ct, axis, not reverse)])


def associative_scan(fn, elems, reverse=False, axis=0):
    """lax.associative_scan: inclusive prefix scan of a pytree of arrays along `axis` with an
    associative fn(a, b) (a before b), by JAX's log-depth odd/even recursion (so results and
    derivatives at ties match JAX's). With reverse=True: [..., f(f(z, y), x), f(z, y), z]."""
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    leaves, tree = pytree.tree_flatten(elems)
    if not leaves:
        return elems
    shapes = [get_aval(x).shape for x in leaves]
    axis = _canonical_scan_axis(axis, len(shapes[0]))
    if any(len(s) != len(shapes[0]) or s[axis] != shapes[0][axis] for s in shapes):
        raise ValueError(f"Array inputs to associative_scan must have the same size along axis "
                         f"{axis}, got shapes {shapes}")

    def combine(a, b):
        out = fn(pytree.tree_unflatten(tree, a), pytree.tree_unflatten(tree, b))
        return pytree.tree_leaves(out)

    flip = (lambda xs: [st.rev(x, (axis,)) for x in xs]) if reverse else (lambda xs: xs)
    return pytree.tree_unflatten(tree, flip(_odd_even_scan(combine, flip(leaves), axis)))


def _odd_even_scan(combine, elems, axis):
    """Scan pairs (the odd outputs) recursively, then combine them with the even inputs."""
    n = get_aval(elems[0]).shape[axis]
    if n < 2:
        return elems

    def take(x, start, limit, stride=1):
        return st.slice_in_dim(x, start, limit, stride, axis)

    odd = _odd_even_scan(combine, combine([take(x, 0, n - 1, 2) for x in elems],
                                          [take(x, 1, n, 2) for x in elems]), axis)
    m = get_aval(odd[0]).shape[axis]
    prev = odd if n % 2 else [take(x, 0, m - 1) for x in odd]
    even = combine(prev, [take(x, 2, n, 2) for x in elems])
    even = [st.concatenate([take(x, 0, 1), e], axis) for x, e in zip(elems, even)]
    return [_interleave(e, o, axis) for e, o in zip(even, odd)]


def _interleave(a, b, axis):
    """[a0, b0, a1, b1, ...] along axis (a has as many elements as b, or one more)."""
    ndim = len(get_aval(a).shape)
    same = get_aval(a).shape[axis] == get_aval(b).shape[axis]
    a_pad, b_pad = [(0, 0, 0)] * ndim, [(0, 0, 0)] * ndim
    a_pad[axis], b_pad[axis] = (0, 1 if same else 0, 1), (1, 0 if same else 1, 1)
    join = ew.bitwise_or if get_aval(a).dtype == dtypes.bool_ else ew.add
    zero = ew.weak_scalar(0, get_aval(a).dtype)
    return join(st.pad(a, zero, a_pad), st.pad(b, zero, b_pad))


def _canonical_scan_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"associative_scan: axis {axis} is out of bounds for array of "
                         f"dimension {ndim}")
    return axis % ndim


def _scan_jvp(prim, combine):
    """JVP as in JAX: differentiate the prefix scan written with differentiable ops."""
    def rule(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        if type(t) is Zero or not dtypes.is_inexact(get_aval(x).dtype):
            out = prim.bind(x, axis=axis, reverse=reverse)
            return out, Zero(get_aval(out).to_tangent_aval())
        return jvp(lambda v: associative_scan(combine, v, reverse, axis), (x,), (t,))
    prim.def_jvp(rule)


_scan_jvp(cumprod_p, ew.mul)
_scan_jvp(cummax_p, ew.max)
_scan_jvp(cummin_p, ew.min)
