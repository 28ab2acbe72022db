"""Comparisons (isclose, array_equal) and maths built on the rest: logaddexp, diff, interp, cov."""
import builtins

import numpy as np

from ...core import dtypes as _dt
from ...core.primitives import elementwise as ew
from ...core.transforms.custom import custom_jvp
from ...core.primitives import structural as st
from .. import lax
from .promotion import (_index_in_dim, asarray, astype, atleast_2d, broadcast_shapes, broadcast_to,
                        lax_full, lax_select, promote_dtypes, ravel, reshape, squeeze, _arrays,
                        _axis, _broadcast_all, _broadcast_args, _check_args, _lax_const,
                        _move_to_end, _no_out, _promote_to_inexact, _real_dtype, _lax_scalar,
                        _scalar_like, _static_int, _with, _where, _user_dtype, staged_as)
from .ufuncs import (absolute, add, ceil, conj, divide, equal, floor, floor_divide, greater, imag,
                     isfinite, isnan, isneginf, isposinf, less, less_equal, logical_and,
                     logical_or, multiply, not_equal, rad2deg, real, remainder, signbit, sqrt,
                     subtract, true_divide, _complex_ordered)
from .creation import diagonal, zeros_like
from .indexing import clip, take, where
from .reductions import all, average, sum
from .manipulation import concatenate, flip
from .sorting import searchsorted
from .products import dot


# ---------------------------------------------------------------- comparisons and misc maths

@staged_as("isclose", static_argnames=("equal_nan",))
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b| elementwise (equal infinities are close); integers are
    compared as floats, as JAX 0.10's."""
    a, b = _promote_to_inexact(*promote_dtypes(*_check_args("isclose", a, b)))
    a, b = _broadcast_args(asarray(a), asarray(b), name="isclose")
    real = _real_dtype(a.dtype)
    rtol, atol = _tolerance(rtol, real), _tolerance(atol, real)
    both_nan = logical_and(isnan(a), isnan(b))
    check_fin = isfinite(b)
    in_range = ew.le(ew.abs(ew.sub(a, b)), ew.add(atol, ew.mul(rtol, ew.abs(b))))
    out = logical_or(ew.eq(a, b), logical_and(check_fin, in_range))
    return logical_or(out, both_nan) if equal_nan else out


def _tolerance(value, dtype):
    """A tolerance as dtype: a constant written inline when it is one (JAX converts it with
    lax.convert_element_type, which folds constants)."""
    if isinstance(value, (int, float, np.ndarray, np.generic)):
        return np.array(value, dtype)
    return ew.convert_element_type(value, dtype, weak_type=False)


@staged_as("allclose", static_argnames=("equal_nan",))
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether all elements are close (an Array, as in JAX)."""
    return all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Whether the arrays have one shape and equal elements."""
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return asarray(False)
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return all(eq)


def array_equiv(a1, a2):
    """Whether the arrays broadcast to one shape with equal elements."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        return all(equal(a1, a2))
    except ValueError:
        return asarray(False)


@staged_as("nan_to_num")
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """x with NaN, +inf and -inf replaced (by 0, the largest and the smallest finite)."""
    x, = _arrays("nan_to_num", x)
    if not _dt.is_inexact(x.dtype):
        return x
    if _dt.kind(x.dtype) == "c":
        parts = [nan_to_num(f(x), nan=nan, posinf=posinf, neginf=neginf)
                 for f in (ew.real, ew.imag)]
        return add(parts[0], multiply(parts[1], lax_full((), 1j, x.dtype)))
    info = _dt.finfo(x.dtype)
    out = where(isnan(x), astype(asarray(nan), x.dtype), x)
    out = where(isposinf(out), astype(asarray(info.max if posinf is None else posinf), x.dtype),
                out)
    return where(isneginf(out), astype(asarray(info.min if neginf is None else neginf), x.dtype),
                 out)


@staged_as("heaviside")
def heaviside(x1, x2, /):
    """0 where x1 < 0, 1 where x1 > 0, x2 where x1 == 0."""
    x1, x2 = (asarray(x) for x in _promote_to_inexact(*_check_args("heaviside", x1, x2)))
    # scalars (written inline when staged, as JAX's) of x1's type, weak type included
    zero, one = (ew.full((), v, x1.dtype, x1.weak_type) for v in (0, 1))
    return where(ew.lt(x1, zero), zero, where(ew.gt(x1, zero), one, where(isnan(x1), x1, x2)))


def _logaddexp_impl(x1, x2, exp_fn, scale):
    if _dt.kind(x1.dtype) == "c":
        return _logaddexp_complex(x1, x2, exp_fn, scale)
    if _dt.kind(x1.dtype) != "f":
        raise ValueError(f"logaddexp requires floating-point or complex inputs; got "
                         f"{x1.dtype}")
    amax = ew.max(x1, x2)
    delta = ew.sub(x1, x2)
    nan, total = isnan(delta), ew.add(x1, x2)  # staged first, as JAX's
    softplus = ew.log1p(exp_fn(ew.neg(ew.abs(delta))))
    if scale != 1:
        softplus = ew.mul(ew._const(softplus, scale), softplus)
    return lax_select(nan, total, ew.add(amax, softplus))


def _logaddexp_complex(x1, x2, exp_fn, scale):
    """The complex logaddexp (as JAX's): amax + log1p(exp(x1 + x2 - 2 amax)), its imaginary
    part wrapped into [-pi, pi) (scaled by 1/ln 2 in base 2)."""
    amax = ew.max(x1, x2)
    delta = ew.sub(ew.add(x1, x2), ew.mul(amax, _lax_const(amax, 2)))
    softplus = ew.log1p(exp_fn(delta))
    if scale != 1:
        softplus = ew.mul(_lax_const(softplus, scale), softplus)
    out = ew.add(amax, softplus)
    return lax.complex(ew.real(out), _wrap_between(ew.imag(out), np.pi * scale))


def _wrap_between(x, a):
    """x wrapped into [-a, a)."""
    two_a = _lax_const(x, 2 * a)
    rem = ew.rem(ew.add(x, _lax_const(x, a)), two_a)
    rem = lax_select(ew.lt(rem, _lax_const(rem, 0)), ew.add(rem, two_a), rem)
    return ew.sub(rem, _lax_const(rem, a))


def _replace_inf(x):
    return lax_select(isposinf(x), zeros_like(x), x)


def _logaddexp_rule(exp_fn, scale, name):
    """JAX's JVP of logaddexp: t1 * exp(x1 - out) + t2 * exp(x2 - out) (in base 2 for
    logaddexp2), with +inf replaced by 0 so that equal infinities give no NaN; the
    custom_jvp and its rule named as JAX's (`name`, `_name_jvp`) in printed jaxprs."""
    from ...core.transforms.custom import custom_jvp

    def fn(x1, x2):
        return _logaddexp_impl(x1, x2, exp_fn, scale)

    def jvp(primals, tangents):
        (x1, x2), (t1, t2) = primals, tangents
        out = fn(x1, x2)
        w1 = exp_fn(ew.sub(_replace_inf(x1), _replace_inf(out)))
        w2 = exp_fn(ew.sub(_replace_inf(x2), _replace_inf(out)))
        return out, ew.add(ew.mul(t1, w1), ew.mul(t2, w2))
    fn.__name__, jvp.__name__ = name, f"_{name}_jvp"
    fn = custom_jvp(fn)
    fn.defjvp(jvp)
    return fn


_logaddexp_e = _logaddexp_rule(ew.exp, 1, "logaddexp")
_logaddexp_2 = _logaddexp_rule(ew.exp2, 1 / np.log(2), "logaddexp2")


def logaddexp(x1, x2, /):
    """log(exp(x1) + exp(x2)) without overflow."""
    x1, x2 = _broadcast_args(*(asarray(x) for x in _promote_to_inexact(
        *_check_args("logaddexp", x1, x2))), name="logaddexp")  # ranks only, as JAX's
    return _logaddexp_e(x1, x2)


def logaddexp2(x1, x2, /):
    """log2(2**x1 + 2**x2) without overflow (weakly typed only when both inputs are, as
    JAX 0.10's)."""
    args = _check_args("logaddexp2", x1, x2)
    both_weak = builtins.all(getattr(asarray(a), "weak_type", False) for a in args)
    x1, x2 = _broadcast_args(*(asarray(x) for x in _promote_to_inexact(*args)),
                             name="logaddexp2")
    out = _logaddexp_2(x1, x2)
    return out if both_weak or not out.weak_type else ew.convert_element_type(
        out, out.dtype, weak_type=False)


@staged_as("hypot")
def hypot(x1, x2, /):
    """sqrt(x1**2 + x2**2) without intermediate overflow (JAX's equations)."""
    x1, x2 = _broadcast_args(*(asarray(x) for x in _promote_to_inexact(
        *_check_args("hypot", x1, x2))), name="hypot")
    if _dt.kind(x1.dtype) == "c":
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                         "convert to real values first, such as by using abs(x)")
    x1, x2 = ew.abs(x1), ew.abs(x2)
    is_inf = logical_or(isposinf(x1), isposinf(x2))
    big, small = ew.max(x1, x2), ew.min(x1, x2)
    at_zero = ew.eq(big, _scalar_like(big, 0))
    safe = _where(ew.eq(big, _scalar_like(big, 0)), lax.full_like(big, 1), big)
    r = _where(at_zero, big, ew.mul(big, ew.sqrt(add(1, ew.square(ew.div(small, safe))))))
    return _where(is_inf, _lax_scalar(r, np.inf), r)


@staged_as("copysign")
def copysign(x1, x2, /):
    """|x1| with the sign of x2."""
    x1, x2 = (asarray(x) for x in _promote_to_inexact(*_check_args("copysign", x1, x2)))
    if _dt.kind(x1.dtype) == "c":
        raise TypeError("copysign does not support complex-valued inputs")
    return _where(signbit(x2), ew.neg(ew.abs(x1)), ew.abs(x1))


@staged_as("sinc")
def sinc(x, /):
    """sin(pi x) / (pi x), 1 at 0 (where its derivatives of every order are JAX's: the Maclaurin
    series' terms)."""
    x, = _promote_to_inexact(*_check_args("sinc", x))
    x = asarray(x)
    eq_zero = ew.eq(x, _lax_scalar(x, 0))
    pi_x = ew.mul(_lax_scalar(x, np.pi), x)
    safe = _where(eq_zero, _lax_scalar(x, 1), pi_x)
    return _where(eq_zero, _sinc_maclaurin(0, pi_x), ew.div(ew.sin(safe), safe))


def _sinc_maclaurin(k, x):
    """The k-th derivative of sin(x)/x at 0, shaped as x."""
    zero = ew.mul(x, _scalar_like(x, 0))
    return zero if k % 2 else ew.add(zero, _lax_scalar(x, (-1) ** (k // 2) / (k + 1)))


def _sinc_maclaurin_jvp(k, primals, tangents):
    (x,), (t,) = primals, tangents
    return _sinc_maclaurin(k, x), ew.mul(_sinc_maclaurin(k + 1, x), t)


_sinc_maclaurin = custom_jvp(_sinc_maclaurin, nondiff_argnums=(0,))
_sinc_maclaurin.defjvp(_sinc_maclaurin_jvp)


@staged_as("fmax")
def fmax(x1, x2):
    """Elementwise maximum ignoring NaNs."""
    x1, x2 = _broadcast_all(*(asarray(x) for x in promote_dtypes(*_check_args("fmax", x1, x2))))
    return where(logical_or(_complex_ordered(ew.gt)(x1, x2), isnan(x2)), x1, x2)


@staged_as("fmin")
def fmin(x1, x2):
    """Elementwise minimum ignoring NaNs."""
    x1, x2 = _broadcast_all(*(asarray(x) for x in promote_dtypes(*_check_args("fmin", x1, x2))))
    return where(logical_or(_complex_ordered(ew.lt)(x1, x2), isnan(x2)), x1, x2)


def divmod(x1, x2, /):
    """(floor_divide(x1, x2), remainder(x1, x2))."""
    return floor_divide(x1, x2), remainder(x1, x2)


@staged_as("modf")
def modf(x, /, out=None):
    """The fractional and integral parts of x."""
    _no_out("modf", out)
    x = asarray(_promote_to_inexact(*_check_args("modf", x))[0])
    whole = _where(ew.ge(x, _scalar_like(x, 0)), floor(x), ceil(x))
    return subtract(x, whole), whole


@staged_as("angle", static_argnames=("deg",))
def angle(z, deg=False):
    """The argument of complex z (in degrees when deg); float32 for integer z."""
    z, = _arrays("angle", z)
    re, im = real(z), imag(z)
    if not _dt.is_inexact(re.dtype) or (_dt.kind(z.dtype) == "f" and z.ndim == 0):
        re, im = astype(re, _dt.default_float()), astype(im, _dt.default_float())
    out = ew.atan2(im, re)
    return rad2deg(out) if deg else out


@staged_as("diff", static_argnames=("n", "axis"))
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The n-th discrete difference along axis (not_equal for booleans)."""
    arr, = _arrays("diff", a)
    n = _static_int(n, "'n' argument of jnp.diff")
    axis = _static_int(axis, "'axis' argument of jnp.diff")
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if arr.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    axis = _axis(axis, arr.ndim)
    parts = [_diff_edge(prepend, arr, axis), arr, _diff_edge(append, arr, axis)]
    parts = [p for p in parts if p is not None]
    arr = concatenate(parts, axis) if len(parts) > 1 else arr
    op = not_equal if arr.dtype == _dt.bool_ else subtract
    for _ in range(n):
        size = arr.shape[axis]
        arr = op(_index_in_dim(arr, 1, builtins.max(size, 1), axis),
                 _index_in_dim(arr, 0, builtins.max(size - 1, 0), axis))
    return arr


def _diff_edge(value, arr, axis):
    if value is None:
        return None
    value, = _arrays("diff", value)
    return broadcast_to(value, _with(arr.shape, axis, 1)) if value.ndim == 0 else value


@staged_as("ediff1d")
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened array."""
    ary, = _arrays("ediff1d", ary)
    flat = ravel(ary)
    out = subtract(flat[1:], flat[:-1]) if flat.size else flat
    parts = [ravel(asarray(to_begin))] if to_begin is not None else []
    parts += [out] + ([ravel(asarray(to_end))] if to_end is not None else [])
    return concatenate(parts) if len(parts) > 1 else out


def _checked_conv(name, a, v, mode, precision, preferred_element_type):
    a, v = _arrays(name, a, v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{name}() only support 1-dimensional inputs.")
    if preferred_element_type is not None:  # warned of as JAX's: by the convolution it runs
        preferred_element_type = _user_dtype(preferred_element_type, "conv_general_dilated")
    return _conv(a, v, mode=mode, op=name, precision=precision,
                 preferred_element_type=preferred_element_type)


@staged_as("_conv", static_argnames=("mode", "op", "precision", "preferred_element_type"))
def _conv(x, y, *, mode, op, precision, preferred_element_type):
    """convolve's and correlate's jit: one conv_general_dilated of x and y (flipped to
    convolve, conjugated to correlate) with a batch and a feature dimension, as JAX's."""
    x, y = (_promote_to_inexact if preferred_element_type is None else promote_dtypes)(x, y)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {x.shape} and {y.shape}.")
    reverse = op == "correlate" and x.shape[0] < y.shape[0]
    y = conj(y) if op == "correlate" else y
    x, y = (y, x) if x.shape[0] < y.shape[0] else (x, y)
    y = flip(y) if op == "convolve" else y
    m = y.shape[0]
    pads = {"valid": (0, 0), "same": (m // 2, m - m // 2 - 1), "full": (m - 1, m - 1)}
    if mode not in pads:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    out = lax.conv_general_dilated(*(st.broadcast_in_dim(t, (1, 1, t.shape[0]), (2,))
                                     for t in (x, y)), (1,), [pads[mode]],
                                   precision=precision,
                                   preferred_element_type=preferred_element_type)
    return st.squeeze(st.rev(out, (2,)) if reverse else out, (0, 1))


@staged_as("convolve", static_argnames=("mode", "precision", "preferred_element_type"))
def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of 1-d arrays."""
    return _checked_conv("convolve", a, v, mode, precision, preferred_element_type)


@staged_as("correlate", static_argnames=("mode", "precision", "preferred_element_type"))
def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of 1-d arrays."""
    return _checked_conv("correlate", a, v, mode, precision, preferred_element_type)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of (xp, fp) at x."""
    x, xp, fp = _arrays("interp", x, xp, fp)
    if xp.shape != fp.shape or xp.ndim != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x, xp = _promote_to_inexact(x, xp)
    fp, = _promote_to_inexact(fp)
    if _dt.kind(x.dtype) == "c":
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = absolute(asarray(period))
        x, xp = remainder(x, period), remainder(xp, period)
        xp, fp = lax.sort_key_val(xp, fp, 0)
        xp = concatenate([subtract(xp[-1:], period), xp, add(xp[:1], period)])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    i = clip(searchsorted(xp, x, side="right"), 1, xp.shape[0] - 1)
    fp_hi, fp_lo = take(fp, i), take(fp, subtract(i, 1))
    xp_hi, xp_lo = take(xp, i), take(xp, subtract(i, 1))
    dx = subtract(xp_hi, xp_lo)
    dx0 = less_equal(absolute(dx), np.spacing(_dt.finfo(xp.dtype).eps))
    f = where(dx0, fp_lo, add(fp_lo, multiply(divide(subtract(x, xp_lo), where(dx0, 1, dx)),
                                              subtract(fp_hi, fp_lo))))
    return _interp_edges(f, x, xp, fp, left, right, period)


def _interp_edges(f, x, xp, fp, left, right, period):
    for value, side, edge, test in ((left, "left", 0, less), (right, "right", -1, greater)):
        if isinstance(value, str):
            if value != "extrapolate":
                raise ValueError(f"the only valid string value of `{side}` is 'extrapolate', "
                                 f"but got: {value!r}")
            continue
        if period is None:
            f = where(test(x, xp[edge]), fp[edge] if value is None else value, f)
    return f


@staged_as("trapezoid", static_argnames=("axis",))
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of y along axis by the trapezoidal rule."""
    if x is None:
        y, = _promote_to_inexact(*_arrays("trapezoid", y))
        dx_arr = asarray(dx)
        if dx_arr.ndim > 0:
            dx_arr = _move_to_end(reshape(dx_arr, (1,) * (y.ndim - dx_arr.ndim) + dx_arr.shape),
                                  axis)
    else:
        y, x = _promote_to_inexact(*_arrays("trapezoid", y, x))
        dx_arr = diff(x) if x.ndim == 1 else _move_to_end(diff(x, axis=axis), axis)
    y = _move_to_end(y, axis)
    if dx_arr.ndim == 0 or dx_arr.shape[-1] == 1:
        d = dx_arr if dx_arr.ndim == 0 else dx_arr[..., 0]
        return multiply(d, subtract(sum(y, -1), multiply(0.5, add(y[..., 0], y[..., -1]))))
    return multiply(0.5, sum(multiply(dx_arr, add(y[..., 1:], y[..., :-1])), -1))


def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients p (highest degree first) at x (Horner's rule)."""
    p, x = promote_dtypes(*_arrays("polyval", p, x))
    # A strongly typed start, as JAX's (lax.full_like with a dtype): the result is never weak.
    y = zeros_like(x, shape=broadcast_shapes(p.shape[1:], x.shape), dtype=x.dtype)
    for i in range(p.shape[0]):
        y = add(multiply(y, x), p[i])
    return y


@staged_as("iscomplex")
def iscomplex(x):
    """Elementwise: a non-zero imaginary part."""
    i = imag(*_arrays("iscomplex", x))
    return ew.ne(i, _lax_scalar(i, 0))


@staged_as("isreal")
def isreal(x):
    """Elementwise: a zero imaginary part."""
    i = imag(*_arrays("isreal", x))
    return ew.eq(i, _lax_scalar(i, 0))


# ---------------------------------------------------------------- covariance and correlation

@staged_as("cov", static_argnames=("rowvar", "bias", "ddof", "dtype"))
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """The covariance matrix of the variables in the rows (columns when not rowvar) of m,
    with optional integer frequency weights and observation weights (NumPy's formula),
    computed in `dtype` (an inexact dtype) when given; JAX's equations."""
    m, y = _cov_operands(m, y, dtype)
    x = atleast_2d(m)
    x = x.T if not rowvar and m.ndim != 1 else x
    if x.shape[0] == 0:
        return reshape(asarray([], dtype=x.dtype), (0, 0))
    if y is not None:
        y = atleast_2d(y)
        x = concatenate((x, y.T if not rowvar and y.shape[0] != 1 else y), axis=0)
    if x.shape[1] == 0:
        return lax_full(() if x.shape[0] == 1 else (x.shape[0],) * 2, np.nan, x.dtype)
    ddof = (0 if bias else 1) if ddof is None else ddof
    w, aweights = _cov_weights(fweights, aweights, x.shape[1])
    if dtype is not None:
        x, w = astype(x, dtype), None if w is None else astype(w, dtype)
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    f = _cov_dof(x, w, aweights, ddof, w_sum[0])
    x = subtract(x, avg[:, None])
    x_t = x.T if w is None else multiply(x, st.broadcast_in_dim(w, (1,) + w.shape, (1,))).T
    return squeeze(true_divide(dot(x, conj(x_t)), f))


def _cov_operands(m, y, dtype):
    m, = _arrays("cov", m)
    if y is not None:
        m, y = _promote_to_inexact(m, *_arrays("cov", y))
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        m, = _promote_to_inexact(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not np.issubdtype(dtype, np.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got {dtype=}")
    return m, y


def _cov_dof(x, w, aweights, ddof, w_sum):
    """The normalisation: NumPy's degrees of freedom, weighted."""
    if w is None:
        return x.shape[1] - ddof
    if ddof == 0:
        return w_sum
    if aweights is None:
        return subtract(w_sum, ddof)
    return subtract(w_sum, divide(multiply(ddof, sum(multiply(w, aweights))), w_sum))


def _cov_weights(fweights, aweights, n):
    """The product of the absolute frequency and observation weights (None without either)
    and the absolute observation weights, checked as JAX checks them."""
    w = None
    if fweights is not None:
        fweights, = _arrays("cov", fweights)
        _check_cov_weights("fweights", fweights, n)
        if not _dt.is_int(fweights.dtype):
            raise TypeError("fweights must be integer.")
        w = absolute(fweights)
    if aweights is not None:
        aweights, = _arrays("cov", aweights)
        _check_cov_weights("aweights", aweights, n)
        aweights = absolute(aweights)
        w = aweights if w is None else multiply(w, aweights)
    return w, aweights


def _check_cov_weights(name, weights, n):
    if weights.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if weights.shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")


def _in_inexact_dtype(x, dtype, name):
    """x cast to dtype (None: unchanged), which must be a float or complex dtype."""
    if dtype is None:
        return x
    if not np.issubdtype(dtype, np.inexact):
        raise ValueError(f"{name}: dtype must be a subclass of float or complex; got {dtype=}")
    return astype(x, dtype)


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients (cov normalised by the standard deviations), computed
    in `dtype` (an inexact dtype) when given."""
    c = cov(_in_inexact_dtype(asarray(x), dtype, "corrcoef"), y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return divide(c, c)
    d = diagonal(c)
    stddev = sqrt(real(d))
    c = divide(divide(c, stddev[:, None]), stddev[None, :])
    return clip(c, -1, 1) if _dt.kind(c.dtype) != "c" else c
