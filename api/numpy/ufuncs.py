"""Elementwise maths: arithmetic, powers, exp/log/trig, rounding, complex parts, NaN/inf tests."""
import operator

import numpy as np

from ...core import dtypes as _dt
from ...core.primitive import named
from ...core.trace import get_aval
from ...core.primitives import elementwise as ew
from .. import lax
from .promotion import (asarray, astype, is_traced, lax_select, promote_dtypes, _arrays,
                        _broadcast_all, _broadcast_args, _check_args, _const_like, _no_out,
                        _ones_of, _promote_to_inexact, _promote_to_numeric, _static_int,
                        _lax_scalar, _strong_const, _where, _zeros_of, staged_as)


# ---------------------------------------------------------------- elementwise maths

def _binary(lax_fn, name, promote=promote_dtypes):
    def fn(x, y, /):
        x, y = promote(*_check_args(name, x, y))
        x, y = _broadcast_args(x, y, name=name)
        return lax_fn(x, y)
    return named(fn, name, f"Elementwise {name} with NumPy broadcasting and JAX type promotion.")


def _unary(lax_fn, name, promote=promote_dtypes):
    def fn(x, /):
        x, = promote(*_check_args(name, x))
        return lax_fn(asarray(x))
    return named(fn, name, f"Elementwise {name}.")


def _complex_from_parts(re, im, dtype):
    """re + i*im as dtype (exact for finite im; refjax has no lax.complex)."""
    i = ew.weak_scalar(1j, dtype)
    return ew.add(ew.convert_element_type(re, dtype, weak_type=re.weak_type),
                  ew.mul(ew.convert_element_type(im, dtype, weak_type=im.weak_type), i))


def _complex_ordered(lax_op):
    """lax_op, lexicographic (real part, then imaginary part) on complex operands, as jnp."""
    def op(x, y):
        if _dt.kind(get_aval(x).dtype) != "c":
            return lax_op(x, y)
        re_x, re_y = ew.real(x), ew.real(y)
        return ew.select_n(ew.eq(re_x, re_y), lax_op(re_x, re_y),
                           lax_op(ew.imag(x), ew.imag(y)))
    return op


def _add(x, y):
    return ew.bitwise_or(x, y) if get_aval(x).dtype == _dt.bool_ else ew.add(x, y)


def _mul(x, y):
    return ew.bitwise_and(x, y) if get_aval(x).dtype == _dt.bool_ else ew.mul(x, y)


add = _binary(_add, "add")
subtract = _binary(ew.sub, "subtract")
multiply = _binary(_mul, "multiply")
maximum = _binary(ew.max, "maximum")
minimum = _binary(ew.min, "minimum")
equal = _binary(ew.eq, "equal")
not_equal = _binary(ew.ne, "not_equal")
less = _binary(_complex_ordered(ew.lt), "less")
less_equal = _binary(_complex_ordered(ew.le), "less_equal")
greater = _binary(_complex_ordered(ew.gt), "greater")
greater_equal = _binary(_complex_ordered(ew.ge), "greater_equal")
arctan2 = _binary(ew.atan2, "arctan2", _promote_to_inexact)
nextafter = _binary(ew.nextafter, "nextafter", _promote_to_inexact)
true_divide = _binary(ew.div, "true_divide", _promote_to_inexact)
divide = _binary(ew.div, "divide", _promote_to_inexact)  # JAX's calls true_divide, named so
float_power = _binary(ew.pow, "float_power", _promote_to_inexact)
left_shift = _binary(ew.shift_left, "left_shift", _promote_to_numeric)
bitwise_and = _binary(ew.bitwise_and, "bitwise_and")
bitwise_or = _binary(ew.bitwise_or, "bitwise_or")
bitwise_xor = _binary(ew.bitwise_xor, "bitwise_xor")


def _right_shift(x, y):
    if _dt.kind(get_aval(x).dtype) == "u":
        return ew.shift_right_logical(x, y)
    return ew.shift_right_arithmetic(x, y)


right_shift = _binary(_right_shift, "right_shift", _promote_to_numeric)


def _to_bool(x):
    return x if x.dtype == _dt.bool_ else ew.ne(x, _lax_scalar(x, 0))


def _logical(lax_fn, name):
    def fn(x, y, /):
        x, y = _broadcast_args(*promote_dtypes(*_check_args(name, x, y)), name=name)
        return lax_fn(_to_bool(asarray(x)), _to_bool(asarray(y)))
    return named(fn, name, f"Elementwise {name} of the truth values.")


logical_and = _logical(ew.bitwise_and, "logical_and")
logical_or = _logical(ew.bitwise_or, "logical_or")
logical_xor = _logical(ew.bitwise_xor, "logical_xor")


def logical_not(x, /):
    """Elementwise logical negation of the truth values."""
    x, = promote_dtypes(*_check_args("logical_not", x))
    return ew.bitwise_not(_to_bool(asarray(x)))


@staged_as("floor_divide")
def floor_divide(x1, x2, /):
    """x1 // x2, rounded towards negative infinity (NumPy's floor_divide; as JAX's, never
    trapping on integer division by zero)."""
    x1, x2 = _broadcast_args(*_promote_to_numeric(*_check_args("floor_divide", x1, x2)))
    dtype = get_aval(x1).dtype
    if _dt.kind(dtype) == "u":
        return ew.div(x1, x2)
    if _dt.is_int(dtype):
        quotient = ew.div(x1, x2)
        select = logical_and(not_equal(ew.sign(x1), ew.sign(x2)), not_equal(ew.rem(x1, x2), 0))
        return _where(select, subtract(quotient, 1), quotient)
    if _dt.kind(dtype) == "c":
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)[0]


def _float_divmod(x, y):
    """NumPy's floating divmod (CPython's float_divmod): the quotient from
    (x - fmod(x, y)) / y, then corrected."""
    mod = ew.rem(x, y)
    div = ew.div(_where(equal(y, 0), x, ew.sub(x, mod)), y)
    fix = ew.bitwise_and(not_equal(mod, 0), not_equal(ew.sign(y), ew.sign(mod)))
    mod = lax_select(fix, add(mod, y), mod)
    div = lax_select(fix, subtract(div, 1.0), div)
    return ew.round(div, ew.RoundingMethod.AWAY_FROM_ZERO), mod  # lax.round's default


def _nonzero_divisor(y):
    """Integer divisors with zeros replaced by ones (JAX's remainder and fmod never trap)."""
    if not _dt.is_int(get_aval(y).dtype):
        return y
    return _where(equal(y, 0), _const_like(y, 1), y)  # y's weak type kept


@staged_as("remainder")
def remainder(x1, x2, /):
    """The remainder of x1 / x2 with the sign of x2 (NumPy's remainder, Python's %)."""
    x1, x2 = _broadcast_args(*_promote_to_numeric(*_check_args("remainder", x1, x2)))
    zero = _strong_const(x1, 0)
    x2 = _nonzero_divisor(x2)
    trunc_mod = ew.rem(x1, x2)
    not_zero = ew.ne(trunc_mod, zero)
    do_plus = ew.bitwise_and(ew.ne(ew.lt(trunc_mod, zero), ew.lt(x2, zero)), not_zero)
    return lax_select(do_plus, ew.add(trunc_mod, x2), trunc_mod)


def mod(x1, x2, /):
    """x1 % x2 (jnp.remainder, whose name its errors give, as JAX's)."""
    return remainder(x1, x2)


@staged_as("fmod")
def fmod(x1, x2, /):
    """Elementwise remainder with the sign of the dividend (C's fmod); an integer divisor of
    0 counts as 1, as JAX's."""
    x1, x2 = _promote_to_numeric(*(asarray(x) for x in _check_args("fmod", x1, x2)))
    return ew.rem(*_broadcast_args(x1, _nonzero_divisor(x2), name="fmod"))


def _int_power(x, y):
    """Integer power by squaring over the 6 bits that cannot overflow (as JAX)."""
    x, y = _broadcast_all(x, y)
    one = _ones_of(y)
    zero_base = ew.bitwise_and(ew.eq(x, _zeros_of(x)), ew.ne(y, _zeros_of(y)))
    acc = lax_select(zero_base, _zeros_of(x), _ones_of(x))
    for _ in range(6):
        acc = lax_select(ew.ne(ew.bitwise_and(y, one), _zeros_of(y)), ew.mul(acc, x), acc)
        x = ew.mul(x, x)
        y = ew.shift_right_logical(y, one)
    return acc


def _power(x, y):
    if _dt.is_int(get_aval(x).dtype):
        return _int_power(x, y)
    return ew.pow(x, y)


def power(x1, x2, /):
    """x1 ** x2; a concrete integer exponent uses lax.integer_pow, as jnp does."""
    # a Python int exponent is static (integer_pow), never converted to an array
    (x1,), (x2,) = _check_args("power", x1), _check_args("power", x2, checked_ints=False)
    if not is_traced(x2) and np.ndim(x2) == 0 and _is_integer_like(x2):
        x1, = _promote_to_numeric(x1)
        return ew.integer_pow(asarray(x1), int(x2))
    a1, a2 = asarray(x1), asarray(x2)
    if _dt.is_inexact(a1.dtype) and _dt.is_int(a2.dtype):
        # As JAX's: the promoted operands are staged first (JAX tests their dtypes) and left
        # unused; lax.pow takes the integer exponent itself, which does not promote the base.
        _promote_to_numeric(a1, a2)
        return ew.pow(*_broadcast_args(a1, a2, name="power"))
    return _binary(_power, "power", _promote_to_numeric)(x1, x2)


def _is_integer_like(x):
    try:
        operator.index(x)
    except TypeError:
        return False
    return True


pow = power


def _floor_or_ceil(name, lax_fn):
    def fn(x, /):
        x, = _arrays(name, x)
        if _dt.kind(x.dtype) in "iub":
            return x
        return lax_fn(x)
    return named(fn, name, f"Elementwise {name} (integers and booleans pass through).")


negative = _unary(ew.neg, "negative")
sign = _unary(ew.sign, "sign")
floor = _floor_or_ceil("floor", ew.floor)
ceil = _floor_or_ceil("ceil", ew.ceil)
exp = _unary(ew.exp, "exp", _promote_to_inexact)
exp2 = _unary(ew.exp2, "exp2", _promote_to_inexact)
log = _unary(ew.log, "log", _promote_to_inexact)
log1p = _unary(ew.log1p, "log1p", _promote_to_inexact)
expm1 = _unary(ew.expm1, "expm1", _promote_to_inexact)
tanh = _unary(ew.tanh, "tanh", _promote_to_inexact)
sin = _unary(ew.sin, "sin", _promote_to_inexact)
cos = _unary(ew.cos, "cos", _promote_to_inexact)
tan = _unary(ew.tan, "tan", _promote_to_inexact)
arcsin = _unary(ew.asin, "arcsin", _promote_to_inexact)
arccos = _unary(ew.acos, "arccos", _promote_to_inexact)
arctan = _unary(ew.atan, "arctan", _promote_to_inexact)
sinh = _unary(ew.sinh, "sinh", _promote_to_inexact)
cosh = _unary(ew.cosh, "cosh", _promote_to_inexact)
arcsinh = _unary(ew.asinh, "arcsinh", _promote_to_inexact)
arccosh = staged_as("arccosh")(_unary(ew.acosh, "arccosh", _promote_to_inexact))  # JAX's jit
arctanh = _unary(ew.atanh, "arctanh", _promote_to_inexact)
sqrt = _unary(ew.sqrt, "sqrt", _promote_to_inexact)
cbrt = _unary(ew.cbrt, "cbrt", _promote_to_inexact)
square = _unary(ew.square, "square", _promote_to_numeric)
reciprocal = _unary(lambda x: ew.integer_pow(x, -1), "reciprocal", _promote_to_inexact)
# the factor a 0-d constant (JAX's lax._const), written inline when staged
_to_radians = lambda x: ew.mul(x, _lax_scalar(x, np.pi / 180))  # noqa: E731
_to_degrees = lambda x: ew.mul(x, _lax_scalar(x, 180 / np.pi))  # noqa: E731
deg2rad = _unary(_to_radians, "deg2rad", _promote_to_inexact)
radians = _unary(_to_radians, "radians", _promote_to_inexact)  # JAX's calls deg2rad
rad2deg = _unary(_to_degrees, "rad2deg", _promote_to_inexact)
degrees = _unary(_to_degrees, "degrees", _promote_to_inexact)


def _log_base(name, scale):
    """log(x) scaled by `scale(part)`'s (operation, constant) (per part for complex x)."""
    def fn(x, /):
        x, = _promote_to_inexact(*_check_args(name, x))
        r = ew.log(asarray(x))
        if _dt.kind(r.dtype) != "c":
            op, constant = scale(r)
            return op(r, constant)
        re, im = ew.real(r), ew.imag(r)
        op, constant = scale(re)
        return _complex_from_parts(op(re, constant), op(im, constant), r.dtype)
    return named(fn, name, f"Elementwise {name} (jnp.{name}).")


# as JAX's: log2 divides by a staged log(2); log10 multiplies by 1/log(10) rounded once
log2 = _log_base("log2", lambda r: (ew.div, ew.log(_strong_const(r, 2))))
log10 = _log_base("log10", lambda r: (ew.mul, _strong_const(r, 0.4342944819032518)))


def conjugate(x, /):
    """Complex conjugate (real inputs pass through)."""
    x, = _arrays("conjugate", x)
    return ew.conj(x) if _dt.kind(x.dtype) == "c" else x


def conj(x, /):
    """Complex conjugate (jnp.conjugate under JAX's other name)."""
    return conjugate(x)


def real(val, /):
    """The real part (real inputs pass through)."""
    val, = _arrays("real", val)
    return ew.real(val) if _dt.kind(val.dtype) == "c" else val


def imag(val, /):
    """The imaginary part (zeros, with the input's weak type, for real inputs)."""
    # zeros_like lives in creation, which builds on ufuncs (logspace, geomspace): imported
    # here, not at the top, to keep the module graph acyclic.
    from .creation import zeros_like
    val, = _arrays("imag", val)
    return ew.imag(val) if _dt.kind(val.dtype) == "c" else zeros_like(val)


def _full_bool(x, value):
    return ew.full(get_aval(x).shape, value, _dt.bool_)


def absolute(x, /):
    """|x| (unsigned and bool pass through)."""
    x, = _arrays("absolute", x)
    if _dt.kind(x.dtype) in "ub":
        return x
    return ew.abs(x)


def abs(x, /):  # noqa: A001  (jnp.abs, a function of its own name in JAX)
    """|x| (jnp.absolute, whose name its errors give, as JAX's)."""
    return absolute(x)


def positive(x, /):
    """x (after promotion)."""
    x, = promote_dtypes(*_check_args("positive", x))
    return asarray(x)


def invert(x, /):
    """Bitwise (logical, for bool) NOT."""
    x, = promote_dtypes(*_check_args("invert", x))
    return ew.bitwise_not(asarray(x))


bitwise_not = bitwise_invert = invert


def _round_parts(x, round_real):
    """round_real applied to the real and imaginary parts of complex x: x plus the (finite)
    corrections, which keeps infinite parts infinite."""
    # zeros_like lives in creation, which builds on ufuncs (logspace, geomspace): imported
    # here, not at the top, to keep the module graph acyclic.
    from .creation import zeros_like
    re, im = ew.real(x), ew.imag(x)
    deltas = [lax_select(ew.is_finite(p), ew.sub(round_real(p), p), zeros_like(p))
              for p in (re, im)]
    return ew.add(x, _complex_from_parts(deltas[0], deltas[1], x.dtype))


@staged_as("rint")
def rint(x, /):
    """Round to the nearest integer, ties to even (integers become float32)."""
    x, = _arrays("rint", x)
    if _dt.kind(x.dtype) in "iub":
        return astype(x, _dt.default_float())
    to_even = lambda v: ew.round(v, ew.RoundingMethod.TO_NEAREST_EVEN)  # noqa: E731
    return _round_parts(x, to_even) if _dt.kind(x.dtype) == "c" else to_even(x)


def round(a, decimals=0, out=None):
    """Round half to even, at `decimals` digits (jnp.round)."""
    _no_out("round", out)
    return _round(a, _static_int(decimals, "'decimals' argument of jnp.round"))


@staged_as("round", static_argnames=("decimals",))
def _round(a, decimals):
    a, = _arrays("round", a)
    if _dt.is_int(a.dtype):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a
    if a.dtype == _dt.bool_:
        raise ValueError(f"jnp.round is not defined for dtype {a.dtype}")
    if decimals > np.log10(float(_dt.finfo(a.dtype).max)):
        return a
    rounder = lambda v: _round_float(v, decimals)  # noqa: E731
    return _round_parts(a, rounder) if _dt.kind(a.dtype) == "c" else rounder(a)


def _round_float(x, decimals):
    if decimals == 0:
        return ew.round(x, ew.RoundingMethod.TO_NEAREST_EVEN)
    dtype = x.dtype
    x = ew.convert_element_type(x, _dt.float32, weak_type=x.weak_type) if dtype == _dt.float16 \
        else x
    factor = _strong_const(x, 10.0 ** decimals)
    out = ew.div(ew.round(ew.mul(x, factor), ew.RoundingMethod.TO_NEAREST_EVEN), factor)
    return ew.convert_element_type(out, dtype, weak_type=out.weak_type) if dtype == _dt.float16 \
        else out


def around(a, decimals=0, out=None):
    """jnp.round under NumPy's other name: a jit of its own holding round's, as JAX's."""
    _no_out("around", out)
    return _around(a, _static_int(decimals, "'decimals' argument of jnp.around"))


@staged_as("around", static_argnames=("decimals",))
def _around(a, decimals):
    return round(a, decimals)


@staged_as("trunc")
def trunc(x, /):
    """Round towards zero (integers and booleans pass through)."""
    x, = _arrays("trunc", x)
    if not _dt.is_inexact(x.dtype):
        return x
    return _where(ew.lt(x, _lax_scalar(x, 0)), ceil(x), floor(x))


fix = trunc


def isnan(x, /):
    """Elementwise x != x."""
    x, = _arrays("isnan", x)
    return ew.ne(x, x)


def isfinite(x, /):
    """Elementwise: neither infinite nor NaN (always true for integers)."""
    x, = _arrays("isfinite", x)
    if _dt.kind(x.dtype) == "f":
        return ew.is_finite(x)
    if _dt.kind(x.dtype) == "c":
        return ew.bitwise_and(ew.is_finite(ew.real(x)), ew.is_finite(ew.imag(x)))
    return _full_bool(x, True)


@staged_as("isinf")
def isinf(x, /):
    """Elementwise: +inf or -inf (in either part of complex x)."""
    x, = _arrays("isinf", x)
    if _dt.kind(x.dtype) == "f":
        return ew.eq(ew.abs(x), _strong_const(x, np.inf))
    if _dt.kind(x.dtype) == "c":
        re, im = ew.real(x), ew.imag(x)
        return ew.bitwise_or(ew.eq(ew.abs(re), _strong_const(re, np.inf)),
                             ew.eq(ew.abs(im), _strong_const(im, np.inf)))
    return _full_bool(x, False)


def _isposneginf(name, infinity, x):
    x, = _arrays(name, x)
    if _dt.kind(x.dtype) == "c":
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    if _dt.kind(x.dtype) == "f":
        return ew.eq(x, _strong_const(x, infinity))
    return _full_bool(x, False)


def isposinf(x, /, out=None):
    """Elementwise x == +inf."""
    _no_out("isposinf", out)
    return _isposneginf("isposinf", np.inf, x)


def isneginf(x, /, out=None):
    """Elementwise x == -inf."""
    _no_out("isneginf", out)
    return _isposneginf("isneginf", -np.inf, x)


@staged_as("signbit")
def signbit(x, /):
    """Elementwise: the sign bit is set (true for -0.0 and negative NaNs)."""
    x, = promote_dtypes(*_check_args("signbit", x))
    x = asarray(x)
    if _dt.kind(x.dtype) in "ub":
        return _full_bool(x, False)
    if _dt.is_int(x.dtype):
        return ew.lt(x, _strong_const(x, 0))
    if _dt.kind(x.dtype) != "f":
        raise ValueError(f"jax.numpy.signbit is not well defined for {x.dtype}")
    int_type = np.dtype(f"int{x.dtype.itemsize * 8}")
    bits = lax.bitcast_convert_type(x, int_type)  # the sign bit shifted over the rest, as JAX
    top = ew.shift_right_arithmetic(bits, np.array(x.dtype.itemsize * 8 - 1, int_type))
    return ew.convert_element_type(top, _dt.bool_, weak_type=False)
