"""Reduction primitives (reduce_*, argmax/argmin, cumulative reductions, the generic reduce
with a user's computation, reduce_precision) with all their rules."""
import functools
import inspect
import math
import operator

import numpy as np

from .. import dtypes, pytree
from .. import sharding_propagation as sp
from ..avals import ShapedArray
from ..primitive import make_primitive, named
from ..sharding_types import cotangent_sharding, out_type, param_spec
from ..trace import Tracer, get_aval
from ..transforms import staging
from ..transforms.ad import Zero, defjvp_with_output, deflinear, defnondiff, instantiate
from ..transforms.batching import bdim_at_front, defvectorized, not_mapped
from ..transforms.jvp import jvp
from . import elementwise as ew
from . import structural as st
from .sharding_ops import constrain, with_sharding_constraint  # noqa: F401 (constrain re-exported)

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
    """The batch dim stays where it is; the reduced axes shift past it (NumPy ints, as JAX's
    reducer_batcher makes them and prints them)."""
    def rule(axis_data, vals, dims, *, axes, **params):
        (x,), (d,) = vals, dims
        moved = tuple(np.where(np.less(axes, d), axes, np.add(axes, 1))) if axes else ()
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


def _reduction_sharding(in_specs, in_avals, out_avals, *, axes, out_sharding=None, **_):
    """The reduced dimensions' entries are dropped; the others keep theirs (the result type
    out_sharding= gives, if any, decides)."""
    if out_sharding is not None:
        return [param_spec(out_sharding, out_avals[0].ndim)]
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
reduce_xor_p = reducer("reduce_xor", _check_logical, keep_weak=False)


def reduce_sum(operand, axes, *, out_sharding=None):
    """Sum of operand over `axes` (non-negative ints), accumulated in operand's dtype;
    laid out as `out_sharding` when given (its type, on Explicit axes)."""
    typed_as = out_type(out_sharding, "reduce_sum")
    out = reduce_sum_p.bind(operand, axes=_as_axes(axes), out_sharding=typed_as)
    return out if typed_as is not None else constrain(out, out_sharding)


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


def reduce_xor(operand, axes):
    """Logical (bool) or bitwise (int) XOR of operand over `axes`."""
    return reduce_xor_p.bind(operand, axes=_as_axes(axes))


def _kept_dims(ndim, axes):
    return tuple(i for i in range(ndim) if i not in axes)


def _reduce_sum_transpose(ct, x, *, axes, out_sharding):
    shape = x.aval.shape
    return [st.broadcast_in_dim(ct, shape, _kept_dims(len(shape), axes),
                                out_sharding=cotangent_sharding(x.aval))]


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
defnondiff(reduce_xor_p)


# ---------------------------------------------------------------- argmax / argmin

def _argminmax_abstract_eval(name):
    def abstract_eval(x, *, axes, index_dtype):
        axis, = axes
        if not 0 <= axis < x.ndim:
            raise ValueError(f"{name}: Invalid axis {axis} for operand shape {x.shape}; lax "
                             f"axes must be in [0, {x.ndim}).")
        if x.shape[axis] < 1:
            raise ValueError(f"{name}: argmin and argmax require non-empty reduced dimension. "
                             f"operand.shape={x.shape} axis={axis}")
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

def _check_float(name, dtype):
    if not dtypes.is_float(dtype):
        raise TypeError(f"{name} does not accept dtype {_dtype_name(dtype)}. Accepted dtypes are "
                        "subtypes of floating (JAX accepts integers and complex numbers here but "
                        "fails computing on integers; complex inputs are not supported).")


def _cumulative_abstract_eval(name, check_dtype):
    def abstract_eval(x, *, axis, reverse):
        check_dtype(name, x.dtype)
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


def _cumulative(name, check_dtype=_check_number):
    prim = make_primitive(name)
    prim.def_abstract_eval(_cumulative_abstract_eval(name, check_dtype))
    _cumulative_batch(prim)
    prim.def_sharding(_cumulative_sharding)
    return prim


@sp.typed_only
def _cumulative_sharding(in_specs, in_avals, out_avals, *, axis, reverse):
    """The operand's spec; the scanned axis may not be sharded (JAX's refusal)."""
    if in_specs[0][axis] is not None:
        raise sp.reject("Input should be unsharded over the axis being reduced. Got input "
                        f"type={in_avals[0].str_short(short_dtypes=False)} and axis={axis}")
    return [in_specs[0]]


cumsum_p = _cumulative("cumsum")
cumprod_p = _cumulative("cumprod")
cummax_p = _cumulative("cummax")
cummin_p = _cumulative("cummin")
cumlogsumexp_p = _cumulative("cumlogsumexp", _check_float)


def _lax_cumulative(prim, what):
    def fn(operand, axis=0, reverse=False):
        return prim.bind(operand, axis=operator.index(axis), reverse=bool(reverse))
    return named(fn, prim.name, f"Cumulative {what} along `axis` (from the end when "
                                f"reverse=True); binds `{prim.name}`.")


cumsum = _lax_cumulative(cumsum_p, "sum")
cumprod = _lax_cumulative(cumprod_p, "product")
cummax = _lax_cumulative(cummax_p, "maximum")
cummin = _lax_cumulative(cummin_p, "minimum")
cumlogsumexp = _lax_cumulative(cumlogsumexp_p, "log-sum-exp (real floats)")

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
    """JVP as in JAX: differentiate the prefix scan written with differentiable ops. The
    primal is the primitive's own result (the scan's may differ by an ulp, as JAX's does on
    XLA), so that jvp's primal output equals the function's."""
    def rule(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axis=axis, reverse=reverse)
        if type(t) is Zero or not dtypes.is_inexact(get_aval(x).dtype):
            return out, Zero(get_aval(out).to_tangent_aval())
        return out, jvp(lambda v: associative_scan(combine, v, reverse, axis), (x,), (t,))[1]
    prim.def_jvp(rule)


_scan_jvp(cumprod_p, ew.mul)
_scan_jvp(cummax_p, ew.max)
_scan_jvp(cummin_p, ew.min)


def _logaddexp(x1, x2):
    """log(exp(x1) + exp(x2)) of real floats without overflow, as lax's logaddexp (where
    x1 - x2 is NaN, from a NaN or equal infinities: x1 + x2)."""
    delta = ew.sub(x1, x2)
    softplus = ew.log1p(ew.exp(ew.neg(ew.abs(delta))))
    return ew.select_n(ew.ne(delta, delta), ew.add(ew.max(x1, x2), softplus), ew.add(x1, x2))


def _without_inf(x):
    """+inf replaced by 0, so that the JVP weight exp(x - out) of x = out = inf is 1."""
    return ew.select_n(ew.eq(x, ew._const(x, np.inf)), x, ew.full_like(x, 0))


def _logaddexp_with_tangent(a, b):
    """The combine of cumlogsumexp's JVP scan: logaddexp of the primals and its tangent,
    ta exp(ya - y) + tb exp(yb - y) (the JVP JAX gives lax's logaddexp)."""
    (ya, ta), (yb, tb) = a, b
    y = _logaddexp(ya, yb)

    def weight(v):
        return ew.exp(ew.sub(_without_inf(v), _without_inf(y)))
    return y, ew.add(ew.mul(ta, weight(ya)), ew.mul(tb, weight(yb)))


def _cumlogsumexp_jvp(primals, tangents, *, axis, reverse):
    """As JAX's: a prefix scan of (value, tangent) pairs combined by logaddexp's JVP."""
    (x,), (t,) = primals, tangents
    out = cumlogsumexp_p.bind(x, axis=axis, reverse=reverse)
    if type(t) is Zero:
        return out, Zero(get_aval(out).to_tangent_aval())
    _, t_out = associative_scan(_logaddexp_with_tangent, (x, t), reverse, axis)
    return out, t_out


cumlogsumexp_p.def_jvp(_cumlogsumexp_jvp)


# ---------------------------------------------------------------- reduce_precision

reduce_precision_p = make_primitive("reduce_precision")


@reduce_precision_p.def_abstract_eval
def _reduce_precision_abstract_eval(x, *, exponent_bits, mantissa_bits):
    exponent_bits, mantissa_bits = operator.index(exponent_bits), operator.index(mantissa_bits)
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative; got "
                         f"{mantissa_bits}")
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"reduce_precision does not accept dtype {_dtype_name(x.dtype)}. Accepted "
                        "dtypes are subtypes of floating.")
    return x


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """operand rounded (to nearest even) to a float format with `mantissa_bits` explicit
    mantissa bits and `exponent_bits` exponent bits (out of range: +-inf or +-0)."""
    exponent_bits = operator.index(exponent_bits)
    mantissa_bits = operator.index(mantissa_bits)
    return reduce_precision_p.bind(operand, exponent_bits=exponent_bits,
                                   mantissa_bits=mantissa_bits)


deflinear(reduce_precision_p, lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)])
defvectorized(reduce_precision_p)
reduce_precision_p.def_sharding(sp.elementwise)


# ---------------------------------------------------------------- the computations of lax.reduce and reduce_window

def check_computation(name, closed, init_avals):
    """A reduction computation maps two tuples of scalars typed as the init values to one."""
    want = [(a.dtype, ()) for a in init_avals]
    if [(a.dtype, a.shape) for a in closed.in_avals] != want + want or \
            [(a.dtype, a.shape) for a in closed.out_avals] != want:
        raise TypeError(f"{name}: the computation must map two tuples of scalars of the init "
                        f"values' types ({', '.join(a.str_short() for a in init_avals)}) to "
                        f"one; its jaxpr takes ({', '.join(a.str_short() for a in closed.in_avals)})"
                        f" and returns ({', '.join(a.str_short() for a in closed.out_avals)})")


def stage_computation(name, computation, init_avals, tree):
    """computation(xs, ys), xs and ys pytrees of structure `tree` of scalars typed
    `init_avals`, staged to a ClosedJaxpr on the flat leaves of xs then ys."""
    def flat(*leaves):
        n = len(init_avals)
        xs, ys = (pytree.tree_unflatten(tree, leaves[i:i + n]) for i in (0, n))
        out, out_tree = pytree.tree_flatten(computation(xs, ys))
        if out_tree != tree:
            raise ValueError(f"{name} output must have the same tree structure as the operands "
                             f"{tree} vs. {out_tree}")
        return out

    closed, tracer_consts = staging.stage(flat, list(init_avals) * 2)
    if tracer_consts:
        raise NotImplementedError(f"{name}: reduction computations can't close over values "
                                  "traced by an enclosing transformation; pass them as operands")
    check_computation(name, closed, init_avals)
    return closed


# A user's computation is staged once per (computation, types), as JAX caches it, so that
# repeated calls bind the same jaxpr (and hit the backends' caches).
reduction_jaxpr = functools.lru_cache(maxsize=256)(stage_computation)


def split_operands(name, operands, init_values):
    """Flat operands and init values of one tree structure (ValueError naming `name`)."""
    flat_ops, op_tree = pytree.tree_flatten(operands)
    flat_inits, init_tree = pytree.tree_flatten(init_values)
    if op_tree != init_tree:
        raise ValueError(f"{name}: Operands must have the same tree structure as init_values: "
                         f"{op_tree} vs. {init_tree}")
    if not flat_ops:
        raise ValueError(f"{name} must have at least one operand.")
    shapes = [get_aval(x).shape for x in flat_inits]
    if any(shapes) and name == "reduce_window":  # JAX's class and wording for each
        raise TypeError(f"reduce_window expected init_values to be scalars but init_values have "
                        f"shapes {shapes}.")
    if any(shapes):
        raise ValueError(f"{name} found non-scalar initial value: {shapes}")
    return flat_ops, flat_inits, op_tree


def concrete_scalar(x):
    """The NumPy value of a concrete scalar (Python number, NumPy or refjax scalar, or a
    tracer of a concrete one), else None."""
    if isinstance(x, Tracer):
        x = x.to_concrete_value()
    if x is None or get_aval(x).shape != ():
        return None
    return np.asarray(x)


def max_identity(dtype):
    """The identity of max over `dtype`: -inf, the least integer, or False."""
    if dtypes.is_inexact(dtype):
        return np.array(-np.inf, dtype)
    return np.array(False if dtype == dtypes.bool_ else dtypes.iinfo(dtype).min, dtype)


def min_identity(dtype):
    """The identity of min over `dtype`: +inf, the greatest integer, or True."""
    if dtypes.is_inexact(dtype):
        return np.array(np.inf, dtype)
    return np.array(True if dtype == dtypes.bool_ else dtypes.iinfo(dtype).max, dtype)


def _intlike(dtype):
    return dtypes.kind(dtype) in "biu"


# (computation, identity of the init value's dtype, applies to the dtype, reduction)
_MONOIDS = (
    (ew.add, lambda d: 0, lambda d: True, reduce_sum),
    (ew.mul, lambda d: 1, lambda d: True, reduce_prod),
    (ew.max, max_identity, lambda d: True, reduce_max),
    (ew.min, min_identity, lambda d: True, reduce_min),
    (ew.bitwise_or, lambda d: 0, _intlike, reduce_or),
    (ew.bitwise_and, lambda d: np.array(-1).astype(d), _intlike, reduce_and),
    (ew.bitwise_xor, lambda d: 0, _intlike, reduce_xor),
)


def monoid_reduction(computation, init_values, table):
    """The specialised reduction of `table` when `computation` is one of its lax operations
    and the only init value a concrete identity of it (as JAX recognises them), else None."""
    if len(init_values) != 1:
        return None
    value = concrete_scalar(init_values[0])
    if value is None:
        return None
    dtype = get_aval(init_values[0]).dtype
    # lax's public functions wrap the core ones (refusing implicit promotion, naming errors)
    ops = [row[0] for row in table]
    computation = inspect.unwrap(computation, stop=lambda f: any(f is op for op in ops))
    for op, identity, applies, reduction in table:
        if computation is op and applies(dtype) and np.equal(value, identity(dtype)):
            return reduction
    return None


def _weak_as(x, weak_type):
    aval = get_aval(x)
    if aval.weak_type == weak_type:
        return x
    return ew.convert_element_type(x, aval.dtype, weak_type=weak_type)


# ---------------------------------------------------------------- reduce (generic)

reduce_p = make_primitive("reduce", multiple_results=True)


@reduce_p.def_abstract_eval
def _reduce_abstract_eval(*avals, computation, jaxpr, dimensions):
    operands, inits = avals[:len(avals) // 2], avals[len(avals) // 2:]
    if any(a.shape != () for a in inits):
        raise ValueError(f"reduce found non-scalar initial value: {[a.shape for a in inits]}")
    if [a.dtype for a in operands] != [a.dtype for a in inits]:
        raise TypeError(f"reduce operand dtypes should match corresponding initial value dtypes, "
                        f"got operands={[a.str_short() for a in operands]} and "
                        f"initial_values={[a.str_short() for a in inits]}")
    if len({a.shape for a in operands}) != 1:
        raise ValueError(f"reduce operands must have one shape, got "
                         f"{[a.str_short() for a in operands]}")
    _check_axes("reduce", operands[0], dimensions)
    check_computation("reduce", jaxpr, inits)
    return [ShapedArray(_reduced_shape(op.shape, dimensions), op.dtype,
                        weak_type=op.weak_type and init.weak_type)
            for op, init in zip(operands, inits)]


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    """XLA's Reduce: the pytree `operands` reduced over `dimensions` by computation(xs, ys)
    (xs, ys of the structure of operands, of scalars) from `init_values` (scalars), which
    must form a monoid with it. lax.add / mul / max / min / bitwise ops with their identity
    bind the specialised reductions (reduce_sum, ...), as JAX does."""
    flat_ops, flat_inits, tree = split_operands("reduce", operands, init_values)
    dimensions = _as_axes(dimensions)
    special = monoid_reduction(computation, flat_inits, _MONOIDS)
    if special is not None:
        weak = get_aval(flat_ops[0]).weak_type and get_aval(flat_inits[0]).weak_type
        if special is reduce_sum:
            return _weak_as(reduce_sum(flat_ops[0], dimensions, out_sharding=out_sharding), weak)
        if out_sharding is not None:
            raise NotImplementedError("lax.reduce: out_sharding is supported for sums only")
        return _weak_as(special(flat_ops[0], dimensions), weak)
    init_avals = tuple(get_aval(x) for x in flat_inits)
    closed = reduction_jaxpr("reduce", computation, init_avals, tree)
    outs = reduce_p.bind(*flat_ops, *flat_inits, computation=computation, jaxpr=closed,
                         dimensions=dimensions)
    return pytree.tree_unflatten(tree, [constrain(o, out_sharding) for o in outs])


def _halves(xs, inits):
    """xs (along axis 0) cut in two halves, the second padded with the init values when odd."""
    n = get_aval(xs[0]).shape[0]
    first = [st.slice_in_dim(x, 0, (n + 1) // 2, 1, 0) for x in xs]
    second = [st.slice_in_dim(x, (n + 1) // 2, n, 1, 0) for x in xs]
    if n % 2:
        rest = [(0, 0, 0)] * (len(get_aval(xs[0]).shape) - 1)
        second = [st.pad(x, i, [(0, 1, 0)] + rest) for x, i in zip(second, inits)]
    return first, second


def _reduce_tree(fn, inits, xs, out_shape):
    """xs reduced along axis 0 by halving: fn (vmapped over every dimension) combines the two
    halves until one row is left."""
    while get_aval(xs[0]).shape[0] > 1:
        first, second = _halves(xs, inits)
        xs = fn(*first, *second)
    if get_aval(xs[0]).shape[0] == 0:
        return [st.broadcast_in_dim(i, out_shape, ()) for i in inits]
    return [st.squeeze(x, (0,)) for x in xs]


def _reduce_jvp(primals, tangents, *, computation, jaxpr, dimensions):
    """JAX's JVP: the reduction rewritten as a tree of the computation vmapped over the kept
    dimensions, differentiated. The primal output is the primitive's own."""
    from ..jaxpr import jaxpr_as_fun
    from ..transforms.vmap import vmap
    n = len(primals) // 2
    outs = reduce_p.bind(*primals, computation=computation, jaxpr=jaxpr, dimensions=dimensions)
    if any(type(t) is not Zero for t in tangents[n:]):
        raise NotImplementedError("Gradient of general lax.reduce with non-zero tangents for "
                                  "initial values to reduction not implemented")
    if all(type(t) is Zero for t in tangents[:n]):
        return outs, [Zero(get_aval(o).to_tangent_aval()) for o in outs]
    fn = jaxpr_as_fun(jaxpr)
    for _ in range(len(get_aval(primals[0]).shape) - len(dimensions) + 1):
        fn = vmap(fn)
    out_shape = get_aval(outs[0]).shape
    xs = [_axes_to_front(x, dimensions) for x in primals[:n]]
    ts = [instantiate(Zero.from_primal(x)) if type(t) is Zero else _axes_to_front(t, dimensions)
          for x, t in zip(xs, tangents[:n])]
    _, t_outs = jvp(lambda *a: _reduce_tree(fn, primals[n:], a, out_shape), xs, ts)
    return outs, [t if dtypes.is_inexact(get_aval(o).dtype) else
                  Zero(get_aval(o).to_tangent_aval()) for o, t in zip(outs, t_outs)]


reduce_p.def_jvp(_reduce_jvp)


def unrolled_batch(prim, axis_data, vals, dims, **params):
    """Apply a multiple-results primitive to each batch member and stack the results: for
    operands the primitive cannot batch otherwise (JAX raises NotImplementedError there)."""
    members = []
    for b in range(axis_data.size):
        args = [v if d is not_mapped else st.index_in_dim(v, b, d) for v, d in zip(vals, dims)]
        members.append(prim.bind(*args, **params))
    if not members:
        outs = prim.abstract_eval(*[_unbatched_aval(v, d) for v, d in zip(vals, dims)], **params)
        return [ew.full((0,) + a.shape, 0, a.dtype) for a in outs], [0] * len(outs)
    return [st.concatenate([st.expand_dims(m[k], (0,)) for m in members], 0)
            for k in range(len(members[0]))], [0] * len(members[0])


def _unbatched_aval(x, d):
    aval = get_aval(x)
    if d is not_mapped:
        return aval
    return ShapedArray(aval.shape[:d] + aval.shape[d + 1:], aval.dtype, aval.weak_type)


def _reduce_batch(axis_data, vals, dims, *, computation, jaxpr, dimensions):
    n = len(vals) // 2
    if any(d is not not_mapped for d in dims[n:]):
        return unrolled_batch(reduce_p, axis_data, vals, dims, computation=computation,
                              jaxpr=jaxpr, dimensions=dimensions)
    ops = [bdim_at_front(x, d, axis_data.size) for x, d in zip(vals[:n], dims[:n])]
    outs = reduce_p.bind(*ops, *vals[n:], computation=computation, jaxpr=jaxpr,
                         dimensions=tuple(d + 1 for d in dimensions))
    return outs, [0] * n


reduce_p.def_batch(_reduce_batch)


@reduce_p.def_sharding
def _reduce_sharding(in_specs, in_avals, out_avals, *, dimensions, **_):
    n = len(in_specs) // 2
    return [tuple(e for i, e in enumerate(spec) if i not in dimensions) for spec in in_specs[:n]]
