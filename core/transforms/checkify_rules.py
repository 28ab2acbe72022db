"""checkify's automatic checks, as JAX 0.10.2's: NaNs produced by the primitives that can
produce them, integer or floating division by zero, out-of-bounds gather, scatter and
dynamic slice indices. Each is a rule of checkify.error_checks."""
import numpy as np

from .. import runtime
from ..avals import ShapedArray
from ..primitive import all_primitives
from ..primitives import elementwise as ew
from ..primitives import gather as ga
from ..primitives import reductions as red
from ..primitives import structural as st
from ..trace import get_aval
from .checkify import assert_func, error_checks
from .checkify_errors import DivisionByZeroError, NaNError, OOBError

# JAX's list of the primitives that can produce a NaN (those refjax has)
NAN_PRIMITIVES = (
    "acos acosh add asin asinh atan2 atan atanh bessel_i0e bessel_i1e cbrt conv_general_dilated "
    "cos cosh cumlogsumexp cummax cummin cumprod cumsum digamma dot_general erf_inv erf erfc "
    "exp expm1 fft igamma_grad_a igamma igammac integer_pow lgamma custom_linear_solve log1p "
    "log logistic mul pad pow psum reduce reduce_prod reduce_sum reduce_window "
    "reduce_window_sum regularized_incomplete_beta rem rng_uniform rsqrt sin sinh sqrt sub tan "
    "tanh").split()


def _any(x):
    return red.reduce_or(x, tuple(range(np.ndim(x))))


def _any_nan(outs):
    """Whether any float or complex output holds a NaN (a bool[] value), or None."""
    found = [_any(ew.ne(x, x)) for x in outs
             if np.dtype(get_aval(x).dtype).kind in "fc" or get_aval(x).dtype.name == "bfloat16"]
    if not found:
        return None
    out = found[0]
    for f in found[1:]:
        out = ew.bitwise_or(out, f)
    return out


def check_nans(prim, error, enabled, outs):
    """error with a NaN check of prim's outputs, when nan_checks are enabled."""
    any_nan = _any_nan(outs if prim.multiple_results else [outs]) if NaNError in enabled else None
    if any_nan is None:
        return error
    return assert_func(error, any_nan, NaNError(prim.name))


def _nan_rule(prim):
    def rule(error, enabled, *ins, **params):
        outs = prim.bind(*ins, **params)
        return check_nans(prim, error, enabled, outs), outs
    return rule


def _div_rule(error, enabled, x, y):
    if DivisionByZeroError in enabled:
        zero = ew.weak_scalar(0, get_aval(y).dtype)
        error = assert_func(error, _any(ew.eq(y, zero)), DivisionByZeroError())
    return _nan_rule(ew.div_p)(error, enabled, x, y)


# ---------------------------------------------------------------- out-of-bounds indices

def _int32(x):
    return ew.convert_element_type(x, np.int32)


def _size(x):
    return int(np.prod(get_aval(x).shape, dtype=int))


def _table(values):
    values = np.asarray(values, np.int32)
    return runtime.make_array(values, ShapedArray(values.shape, np.dtype(np.int32)))


def _at(table, i):
    return st.reshape(st.dynamic_slice(table, (i,), (1,)), ())


def oob_payload(mask, indices, dims_map, operand_shape):
    """int32[3]: the first out-of-bounds index (in row-major order), its operand axis and
    that axis's size (index 0 of axis dims_map[0] when none is out of bounds)."""
    flat = red.argmax(_int32(st.reshape(mask, (_size(mask),))), 0, np.int32)
    last = ew.rem(flat, ew.weak_scalar(np.shape(indices)[-1], np.int32))
    axis = _at(_table(dims_map), last)
    size = _at(_table(operand_shape), axis)
    index = _at(_int32(st.reshape(indices, (_size(indices),))), flat)
    return st.concatenate([st.reshape(v, (1,)) for v in (index, axis, size)], 0)


def _oob_check(error, enabled, operand, indices, upper, dims_map):
    """The OOB check of `indices` (int, last axis along dims_map) against [0, upper]."""
    if OOBError not in enabled:
        return error
    indices = _int32(indices)
    upper = st.broadcast_in_dim(_table(upper), np.shape(indices), (np.ndim(indices) - 1,))
    mask = ew.bitwise_or(ew.lt(indices, ew.weak_scalar(0, np.int32)), ew.gt(indices, upper))
    payload = oob_payload(mask, indices, dims_map, np.shape(operand))
    return assert_func(error, _any(mask), OOBError(tuple(np.shape(operand)), [payload]))


def _stacked(scalars):
    return st.concatenate([st.reshape(_int32(i), (1,)) for i in scalars], 0)


def _dynamic_slice_rule(error, enabled, operand, *starts, slice_sizes):
    out = st.dynamic_slice_p.bind(operand, *starts, slice_sizes=slice_sizes)
    upper = np.subtract(np.shape(operand), slice_sizes)
    dims = range(np.ndim(operand))
    return _oob_check(error, enabled, operand, _stacked(starts), upper, dims), out


def _dynamic_update_slice_rule(error, enabled, operand, update, *starts):
    out = st.dynamic_update_slice_p.bind(operand, update, *starts)
    upper = np.subtract(np.shape(operand), np.shape(update))
    dims = range(np.ndim(operand))
    return _oob_check(error, enabled, operand, _stacked(starts), upper,
                      dims), out


def _gather_rule(error, enabled, operand, indices, *, dimension_numbers, slice_sizes, **params):
    out = ga.gather_p.bind(operand, indices, dimension_numbers=dimension_numbers,
                           slice_sizes=slice_sizes, **params)
    dims = tuple(dimension_numbers.start_index_map)
    upper = [np.shape(operand)[d] - slice_sizes[d] for d in dims]
    return _oob_check(error, enabled, operand, indices, upper, dims), out


def _scatter_rule(prim):
    def rule(error, enabled, operand, indices, updates, *, dimension_numbers, **params):
        out = prim.bind(operand, indices, updates, dimension_numbers=dimension_numbers, **params)
        dn = dimension_numbers
        dims = tuple(dn.scatter_dims_to_operand_dims)
        sizes = _scatter_window(np.shape(operand), np.shape(updates), dn)
        upper = [np.shape(operand)[d] - sizes[d] for d in dims]
        error = _oob_check(error, enabled, operand, indices, upper, dims)
        return check_nans(prim, error, enabled, out), out
    return rule


def _scatter_window(operand_shape, updates_shape, dn):
    """The size of the window each scatter index writes, per operand axis."""
    windows = iter(updates_shape[d] for d in dn.update_window_dims)
    skipped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    return [1 if i in skipped else next(windows) for i in range(len(operand_shape))]


def _register():
    prims = all_primitives()
    for name in NAN_PRIMITIVES:
        if name in prims:
            error_checks[prims[name]] = _nan_rule(prims[name])
    error_checks[ew.div_p] = _div_rule
    error_checks[st.dynamic_slice_p] = _dynamic_slice_rule
    error_checks[st.dynamic_update_slice_p] = _dynamic_update_slice_rule
    error_checks[ga.gather_p] = _gather_rule
    for prim in (ga.scatter_p, ga.scatter_add_p, ga.scatter_mul_p, ga.scatter_min_p,
                 ga.scatter_max_p):
        error_checks[prim] = _scatter_rule(prim)


_register()
