"""Reductions (sum, mean, var, argmax, nan*) and cumulative reductions."""
import builtins
import operator

import numpy as np

from ...core import dtypes as _dt
from ...core.primitives import elementwise as ew
from ...core.primitives import structural as st
from .. import lax
from .promotion import (asarray, astype, broadcast_to, lax_full, ravel, reshape, _arrays, _axes,
                        _axis, _check_args, _const_like, _no_out, _promote_to_inexact, _real_dtype,
                        _to_inexact_dtype, _user_dtype, _lax_scalar, _scalar_like, _strong_const,
                        _where, _with, staged_as)
from .ufuncs import divide, isnan, logical_not, multiply, subtract


# ---------------------------------------------------------------- reductions

def _promote_integer_dtype(d):
    """Small integer (and bool) sums accumulate in the default int (uint) type, as in JAX."""
    if d == _dt.bool_:
        return _dt.default_int()
    if _dt.kind(d) == "u" and d.itemsize < _dt.canonicalize_dtype(_dt.uint64).itemsize:
        return _dt.canonicalize_dtype(_dt.uint64)
    if _dt.kind(d) == "i" and d.itemsize < _dt.default_int().itemsize:
        return _dt.default_int()
    return d


def _upcast_f16(d):
    return _dt.float32 if d in (_dt.float16, _dt.bfloat16) else d


def _check_where(name, where):
    if where is None:
        return None
    where, = _arrays(name, where)
    if where.dtype != _dt.bool_:
        raise ValueError(f"jnp.{name}: where must be None or a boolean array; got "
                         f"where.dtype={where.dtype}.")
    return where


def _init_value(identity, dtype):
    """The reduction's identity in dtype (inf saturating to the finite range of ints)."""
    if dtype == _dt.bool_:
        return identity > 0
    if np.isinf(identity) and _dt.is_int(dtype):
        info = _dt.iinfo(dtype)
        return int(info.min if identity < 0 else info.max)
    return identity


class _Monoid:
    """A reduction: its lax reducer, elementwise op and identity (with bool variants)."""

    def __init__(self, reduce, op, identity, bool_reduce=None, bool_op=None):
        self.reduce, self.op, self.identity = reduce, op, identity
        self.bool_reduce, self.bool_op = bool_reduce or reduce, bool_op or op

    def for_dtype(self, dtype):
        if dtype == _dt.bool_:
            return self.bool_reduce, self.bool_op
        return self.reduce, self.op


_SUM = _Monoid(lax.reduce_sum, ew.add, 0, lax.reduce_or, ew.bitwise_or)
_PROD = _Monoid(lax.reduce_prod, ew.mul, 1, lax.reduce_and, ew.bitwise_and)
_MAX = _Monoid(lax.reduce_max, ew.max, -np.inf, lax.reduce_or, ew.bitwise_or)
_MIN = _Monoid(lax.reduce_min, ew.min, np.inf, lax.reduce_and, ew.bitwise_and)
_ALL = _Monoid(lax.reduce_and, ew.bitwise_and, True)
_ANY = _Monoid(lax.reduce_or, ew.bitwise_or, False)


def _reduction(a, name, monoid, *, axis=None, dtype=None, out=None, keepdims=False,
               initial=None, where=None, has_identity=True, preproc=None,
               promote_integers=False, upcast_f16=False):
    """jnp's reductions: promotion, where-masking, initial and keepdims around a lax reducer.
    The result is never weakly typed (as in JAX)."""
    _no_out(name, out)
    a, = _arrays(name, a)
    where = _check_where(name, where)
    a = preproc(a) if preproc else a
    axes = _axes(axis, a.ndim, name=name, names_ok=True)
    if initial is None and not has_identity:
        _check_nonempty(name, a, axes, where)
    result_dtype, comp = _reduction_dtypes(name, a.dtype, dtype, promote_integers, upcast_f16)
    a = ew.convert_element_type(a, comp) if a.dtype != comp or a.weak_type else a
    reduce, op = monoid.for_dtype(comp)
    if where is not None:  # as JAX: _where with the identity as a NumPy scalar
        a = _where(where, a, np.array(_init_value(monoid.identity, comp), comp))
    result = reduce(a, axes)
    if initial is not None:
        result = op(_initial(initial, comp), result)
    if keepdims:
        result = st.expand_dims(result, axes)
    # as JAX's: the user's dtype itself, so a 64-bit one is warned about a second time
    return lax.convert_element_type(result, result_dtype if dtype is None else dtype)


def _reduction_dtypes(name, a_dtype, dtype, promote_integers, upcast_f16):
    """The result dtype and the (float16-upcast) computation dtype of a reduction."""
    if dtype is not None:
        result = _user_dtype(dtype, name)
    else:
        result = _promote_integer_dtype(a_dtype) if promote_integers else a_dtype
    return result, _upcast_f16(result) if upcast_f16 and _dt.is_inexact(result) else result


def _check_nonempty(name, a, axes, where):
    if where is not None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                         "where mask one has to specify 'initial'")
    if builtins.any(a.shape[d] == 0 for d in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")


def _initial(initial, dtype):
    init = _check_args("initial", initial)[0]
    if np.shape(init) != ():
        raise ValueError(f"initial value must be a scalar. Got array of shape {np.shape(init)}")
    return ew.convert_element_type(init, dtype)  # a Python scalar folds to a constant


def _cast_to_numeric(a):
    return astype(a, _dt.default_int()) if a.dtype == _dt.bool_ else a


def _cast_to_bool(a):
    if _dt.kind(a.dtype) == "c":
        a = ew.real(a)
    return astype(a, _dt.bool_)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
    """Sum over axis (small ints and bools accumulate in int32; float16 in float32)."""
    return _reduction(a, "sum", _SUM, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                      initial=initial, where=where, preproc=_cast_to_numeric,
                      promote_integers=promote_integers, upcast_f16=dtype is None)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    """Product over axis."""
    return _reduction(a, "prod", _PROD, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                      initial=initial, where=where, preproc=_cast_to_numeric,
                      promote_integers=promote_integers, upcast_f16=dtype is None)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Maximum over axis (NaN propagates; an empty reduction needs `initial`)."""
    return _reduction(a, "max", _MAX, axis=axis, out=out, keepdims=keepdims, initial=initial,
                      where=where, has_identity=False)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Minimum over axis (NaN propagates; an empty reduction needs `initial`)."""
    return _reduction(a, "min", _MIN, axis=axis, out=out, keepdims=keepdims, initial=initial,
                      where=where, has_identity=False)


def amax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """max under NumPy's other name (a function of its own, as JAX's)."""
    return max(a, axis, out, keepdims, initial, where)


def amin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """min under NumPy's other name (a function of its own, as JAX's)."""
    return min(a, axis, out, keepdims, initial, where)


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    """Whether all elements along axis are truthy."""
    return _reduction(a, "all", _ALL, axis=axis, out=out, keepdims=keepdims, where=where,
                      preproc=_cast_to_bool)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    """Whether any element along axis is truthy."""
    return _reduction(a, "any", _ANY, axis=axis, out=out, keepdims=keepdims, where=where,
                      preproc=_cast_to_bool)


def _count(a, axis, keepdims, where, dtype):
    """The number of elements each reduction combines, as an array of dtype."""
    if where is None:  # a constant, as JAX's (folded from the Python int)
        axes = _axes(axis, a.ndim)
        return ew.convert_element_type(int(np.prod([a.shape[d] for d in axes], dtype=np.int64)),
                                       dtype)
    return sum(broadcast_to(where, a.shape), axis, dtype=dtype, keepdims=keepdims)


def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean (integers give float32)."""
    _no_out("mean", out)
    a, = _arrays("mean", a)
    _axes(axis, a.ndim, name="mean", names_ok=True)
    where = _check_where("mean", where)
    result_dtype = _to_inexact_dtype(a.dtype) if dtype is None else _user_dtype(dtype, "mean")
    comp = _upcast_f16(result_dtype) if dtype is None and _dt.is_inexact(result_dtype) \
        else result_dtype
    total = sum(a, axis, dtype=comp, keepdims=keepdims, where=where)
    return astype(ew.div(total, _count(a, axis, keepdims, where, comp)), result_dtype)


def _var_dtypes(a_dtype, dtype):
    if dtype is not None:
        if _dt.kind(a_dtype) == "c" and _dt.kind(dtype) != "c":
            raise ValueError("jax.numpy.var does not support real dtype parameters when "
                             "computing the variance of an array of complex values.")
        return _upcast_f16(dtype), dtype
    if not _dt.is_inexact(a_dtype):
        d = _to_inexact_dtype(a_dtype)
        return _upcast_f16(d), d
    return _upcast_f16(a_dtype), _real_dtype(a_dtype)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    """Variance with `ddof` (or `correction`) degrees of freedom removed; NaN when none
    remain."""
    _no_out("var", out)
    a, = _arrays("var", a)
    return _var(a, correction=_correction(ddof, correction), where=where, a_mean=mean,
                axis=_static_axes(axis), dtype=dtype, keepdims=keepdims)


def _static_axes(axis):
    """axis as jit's static argument: a list becomes a tuple (JAX's _ensure_optional_axes)."""
    return tuple(axis) if isinstance(axis, list) else axis


@staged_as("_var", static_argnames=("axis", "dtype", "keepdims"))
def _var(a, *, correction, where, a_mean, axis, dtype, keepdims):
    """var's jit: its keyword operands flattened in name order, as JAX's."""
    where = _check_where("var", where)
    comp, dtype = _var_dtypes(a.dtype, None if dtype is None else _user_dtype(dtype, "var"))
    a = astype(a, comp)
    a_mean = _mean_fn(a, axis, dtype=comp, keepdims=True, where=where) if a_mean is None \
        else astype(asarray(a_mean), comp)
    centered = ew.sub(a, a_mean)
    if _dt.kind(comp) == "c":
        centered = ew.real(ew.mul(centered, ew.conj(centered)))
        comp = centered.dtype
    else:
        centered = ew.square(centered)
    normalizer = ew.sub(_count(a, axis, keepdims, where, comp),
                        ew.convert_element_type(correction, comp, weak_type=False))
    result = astype(ew.div(sum(centered, axis, dtype=comp, keepdims=keepdims, where=where),
                           normalizer), dtype)
    return _where(ew.gt(normalizer, _const_like(normalizer, 0)), result, np.nan)


_mean_fn = mean


def _correction(ddof, correction):
    if correction is None:
        return ddof
    if not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    """Standard deviation: the square root of var."""
    _no_out("std", out)
    a, = _arrays("std", a)
    dtype = None if dtype is None else _user_dtype(dtype, "std")
    return _std(a, correction=_correction(ddof, correction), where=where, mean=mean,
                axis=_static_axes(axis), dtype=dtype, keepdims=keepdims)


@staged_as("_std", static_argnames=("axis", "dtype", "keepdims"))
def _std(a, *, correction, where, mean, axis, dtype, keepdims):
    where = _check_where("std", where)  # named as std, not var
    if dtype is not None and not _dt.is_inexact(dtype):
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {np.dtype(dtype)}")
    return ew.sqrt(var(a, axis, dtype, None, keepdims=keepdims, where=where, mean=mean,
                       correction=correction))


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted mean; with returned=True also the sum of the weights."""
    a, = _arrays("average", a)
    axes = _axes(axis, a.ndim)
    if weights is None:
        a, = _promote_to_inexact(a)
        avg = mean(a, axis, keepdims=keepdims)
        n = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
        weights_sum = lax_full((), n, avg.dtype)
    else:
        a, weights = _promote_to_inexact(*_arrays("average", a, weights))
        weights = _average_weights(a, weights, axis, axes)
        weights_sum = sum(weights, axis, keepdims=keepdims)
        avg = divide(sum(multiply(a, weights), axis, keepdims=keepdims), weights_sum)
    if returned:
        return avg, broadcast_to(weights_sum, avg.shape)
    return avg


def _average_weights(a, weights, axis, axes):
    if a.shape == weights.shape:
        return weights
    if axis is None:
        raise ValueError("Axis must be specified when shapes of a and weights differ.")
    if weights.shape != tuple(a.shape[d] for d in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along specified "
                         "axis.")
    shape = tuple(d if i in axes else 1 for i, d in enumerate(a.shape))
    return st.reshape(weights, shape, dimensions=tuple(np.argsort(axes)))


def _argminmax(name, lax_name, a, axis, out, keepdims):
    _no_out(name, out)
    a, = _arrays(name, a)
    if axis is None:
        flat = ravel(a)
        if flat.size == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        result = getattr(lax, lax_name)(flat, 0, _dt.default_int())
        return reshape(result, (1,) * a.ndim) if keepdims else result
    ax = _axis(axis, a.ndim)
    if a.shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    result = getattr(lax, lax_name)(a, ax, _dt.default_int())
    return st.expand_dims(result, (ax,)) if keepdims else result


def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the first maximum (flattened when axis is None; NaN counts as maximal)."""
    return _argminmax("argmax", "argmax", a, axis, out, keepdims)


def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the first minimum (flattened when axis is None; NaN counts as minimal)."""
    return _argminmax("argmin", "argmin", a, axis, out, keepdims)


def _nan_arg(name, fn, fill, a, axis, out, keepdims):
    _no_out(name, out)
    return _NAN_ARG[name](a, axis=None if axis is None else operator.index(axis),
                          keepdims=bool(keepdims))


def _nan_arg_staged(name, fn, fill):
    """JAX's _nanargmax/_nanargmin: NaNs filled through _where, -1 where all are NaN."""
    def staged(a, axis, keepdims):
        a, = _arrays(name, a)
        if not _dt.is_inexact(a.dtype):
            return fn(a, axis, keepdims=keepdims)
        mask = isnan(a)
        res = fn(_where(mask, fill, a), axis, keepdims=keepdims)
        return _where(all(mask, axis, keepdims=keepdims), -1, res)
    return staged_as(f"_{name}", static_argnames=("axis", "keepdims"))(staged)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """argmax ignoring NaNs (-1 where all are NaN)."""
    return _nan_arg("nanargmax", argmax, -np.inf, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    """argmin ignoring NaNs (-1 where all are NaN)."""
    return _nan_arg("nanargmin", argmin, np.inf, a, axis, out, keepdims)


_NAN_ARG = {"nanargmax": _nan_arg_staged("nanargmax", argmax, -np.inf),
            "nanargmin": _nan_arg_staged("nanargmin", argmin, np.inf)}


def _nan_filled(name, a, fill):
    a, = _arrays(name, a)
    if not _dt.is_inexact(a.dtype):
        return a
    return _where(isnan(a), np.array(fill, a.dtype), a)  # as JAX's _nan_reduction


@staged_as("nansum", static_argnames=("axis", "dtype", "keepdims"))
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """sum treating NaNs as zero."""
    dtype = None if dtype is None else _user_dtype(dtype, "nansum")  # warned once, as nansum
    return sum(_nan_filled("nansum", a, 0), axis, dtype, out, keepdims, initial, where)


@staged_as("nanprod", static_argnames=("axis", "dtype", "keepdims"))
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """prod treating NaNs as one."""
    dtype = None if dtype is None else _user_dtype(dtype, "nanprod")  # warned once, as nanprod
    return prod(_nan_filled("nanprod", a, 1), axis, dtype, out, keepdims, initial, where)


@staged_as("nanmax", static_argnames=("axis", "keepdims"))
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """max ignoring NaNs (NaN where all are NaN, unless an initial value is given)."""
    a, = _arrays("nanmax", a)
    res = max(_nan_filled("nanmax", a, -np.inf), axis, out, keepdims, initial, where)
    return res if initial is not None else _nan_where_all_nan(a, res, axis, keepdims)


@staged_as("nanmin", static_argnames=("axis", "keepdims"))
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """min ignoring NaNs (NaN where all are NaN, unless an initial value is given)."""
    a, = _arrays("nanmin", a)
    res = min(_nan_filled("nanmin", a, np.inf), axis, out, keepdims, initial, where)
    return res if initial is not None else _nan_where_all_nan(a, res, axis, keepdims)


def _nan_where_all_nan(a, res, axis, keepdims):
    if not _dt.is_inexact(a.dtype):
        return res
    return _where(all(isnan(a), axis, keepdims=keepdims), np.array(np.nan, res.dtype), res)


@staged_as("nanmean", static_argnames=("axis", "dtype", "keepdims"))
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """mean of the non-NaN elements."""
    _no_out("nanmean", out)
    a, = _arrays("nanmean", a)
    where = _check_where("nanmean", where)
    if not _dt.is_inexact(a.dtype):
        return mean(a, axis, dtype, out, keepdims, where=where)
    dtype = _to_inexact_dtype(a.dtype) if dtype is None else _user_dtype(dtype, "nanmean")
    normalizer = sum(logical_not(isnan(a)), axis, dtype=dtype, keepdims=keepdims, where=where)
    total = nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    return divide(total, normalizer)


@staged_as("nanvar", static_argnames=("axis", "dtype", "keepdims"))
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """var of the non-NaN elements (JAX's equations: NaNs centred to 0 through _where, an
    integer count of the rest)."""
    _no_out("nanvar", out)
    a, = _arrays("nanvar", a)
    where = _check_where("nanvar", where)
    comp, dtype = _var_dtypes(a.dtype, None if dtype is None else _user_dtype(dtype, "nanvar"))
    a = astype(a, comp)
    a_mean = nanmean(a, axis, dtype=comp, keepdims=True, where=where) if mean is None else \
        astype(asarray(mean), comp)
    centered = _where(isnan(a), 0, ew.sub(a, a_mean))  # a second where, for gradients
    centered = ew.real(ew.mul(centered, ew.conj(centered))) if _dt.kind(comp) == "c" \
        else ew.square(centered)
    normalizer = subtract(sum(logical_not(isnan(a)), axis, keepdims=keepdims, where=where), ddof)
    empty = ew.le(normalizer, _scalar_like(normalizer, 0))
    result = _where(empty, np.nan, sum(centered, axis, keepdims=keepdims, where=where))
    divisor = _where(empty, 1, normalizer)
    return astype(ew.div(result, ew.convert_element_type(divisor, result.dtype)), dtype)


@staged_as("nanstd", static_argnames=("axis", "dtype", "keepdims"))
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """std of the non-NaN elements."""
    _no_out("nanstd", out)
    where = _check_where("nanstd", where)
    dtype = None if dtype is None else _user_dtype(dtype, "nanstd")
    return ew.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where,
                          mean=mean))


@staged_as("count_nonzero", static_argnames=("axis", "keepdims"))
def count_nonzero(a, axis=None, keepdims=False):
    """The number of non-zero elements along axis (int32)."""
    a, = _arrays("count_nonzero", a)
    return sum(ew.ne(a, _strong_const(a, 0)), axis, dtype=_dt.default_int(), keepdims=keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
    """max - min along axis."""
    _no_out("ptp", out)
    a, = _arrays("ptp", a)
    return _ptp(a, axis=_static_axes(axis), keepdims=keepdims)


@staged_as("_ptp", static_argnames=("axis", "keepdims"))
def _ptp(a, *, axis, keepdims):
    return ew.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


# ---------------------------------------------------------------- cumulative reductions

def _cumulative(name, lax_name, a, axis, dtype, out, fill_nan=False, fill_value=0,
                promote_integers=False):
    _no_out(name, out)
    a, = _arrays(name, a)
    if axis is None or a.ndim == 0:
        a = ravel(a)
    axis = _axis(0 if axis is None else axis, a.ndim)
    if fill_nan and _dt.is_inexact(a.dtype):
        a = _where(isnan(a), _lax_scalar(a, fill_value), a)
    if dtype is None:
        result = _promote_integer_dtype(a.dtype) if promote_integers or a.dtype == _dt.bool_ \
            else a.dtype
        comp = result
    else:
        result = _user_dtype(dtype, name)
        if result == _dt.bool_ and a.dtype != _dt.bool_:
            a = ew.ne(a, _const_like(a, 0))
        comp = _promote_integer_dtype(result) if result == _dt.bool_ else result
    a = ew.convert_element_type(a, comp)
    return astype(getattr(lax, lax_name)(a, axis), result)


@staged_as("cumsum", static_argnames=("axis", "dtype"))
def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along axis (flattened when axis is None; bools count as int32)."""
    return _cumulative("cumsum", "cumsum", a, axis, dtype, out)


@staged_as("_cumsum_with_promotion", static_argnames=("axis", "dtype"))
def _cumsum_with_promotion(a, axis=None, dtype=None, out=None):
    """cumsum accumulating small integers in the default int (cumulative_sum's, as JAX's)."""
    return _cumulative("cumulative_sum", "cumsum", a, axis, dtype, out, promote_integers=True)


@staged_as("cumprod", static_argnames=("axis", "dtype"))
def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along axis (flattened when axis is None)."""
    return _cumulative("cumprod", "cumprod", a, axis, dtype, out)


cumproduct = cumprod


@staged_as("nancumsum", static_argnames=("axis", "dtype"))
def nancumsum(a, axis=None, dtype=None, out=None):
    """cumsum treating NaNs as zero."""
    return _cumulative("nancumsum", "cumsum", a, axis, dtype, out, fill_nan=True)


@staged_as("nancumprod", static_argnames=("axis", "dtype"))
def nancumprod(a, axis=None, dtype=None, out=None):
    """cumprod treating NaNs as one."""
    return _cumulative("nancumprod", "cumprod", a, axis, dtype, out, fill_nan=True,
                       fill_value=1)


def _cumulative_api(name, fn, identity, x, axis, dtype, include_initial):
    x, = _arrays(name, x)
    if x.ndim == 0:
        raise ValueError(f"The input must be non-scalar to take a {name.replace('_', ' ')}, "
                         "however a scalar value or scalar array was given.")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"The array passed to {name} must be 0D or 1D when axis is "
                             f"not specified, got shape {x.shape}.")
        axis = 0
    if dtype is not None:  # JAX's warning of a 64-bit dtype names no function here
        dtype = _dt.explicit_dtype(dtype, None)
    out = fn(x, _axis(axis, x.ndim), dtype)
    if include_initial:
        ax = _axis(axis, out.ndim)
        out = st.concatenate([lax_full(_with(out.shape, ax, 1), identity, out.dtype), out], ax)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array-API cumulative sum (include_initial prepends a zero)."""
    return _cumulative_api("cumulative_sum", _widening_cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array-API cumulative product (include_initial prepends a one)."""
    return _cumulative_api("cumulative_prod", _bare_cumprod, 1, x, axis, dtype, include_initial)


def _widening_cumsum(x, axis, dtype):  # JAX widens sums only (cumulative_prod keeps uint8)
    return _cumsum_with_promotion(x, axis=axis, dtype=dtype)


def _bare_cumprod(x, axis, dtype):  # lax.cumprod itself, not in a jit (as JAX's)
    return _cumulative("cumulative_prod", "cumprod", x, axis, dtype, None)
