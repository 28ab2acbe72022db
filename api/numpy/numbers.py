"""Number-theoretic and floating-point ufuncs: gcd, lcm, frexp, ldexp, spacing, i0, fabs,
bitwise_count, and the array API's aliases of existing ufuncs."""
import numpy as np

from ...core import dtypes as _dt
from ...core.primitives import elementwise as ew
from ...core.transforms.custom import custom_jvp
from .. import lax
from .promotion import (asarray, astype, broadcast_arrays, promote_dtypes, _arrays, _lax_const,
                        _promote_to_numeric, _promote_to_inexact, staged_as)
from .ufuncs import (absolute, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh,
                     floor_divide, isinf, isnan, left_shift, logical_or, multiply, right_shift)
from .reductions import any
from .indexing import where
from .maths import copysign

_INT_OF_BITS = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}

# The array API's names for NumPy's ufuncs (jax.numpy has both).
acos, acosh, asin, asinh, atan, atan2, atanh = (arccos, arccosh, arcsin, arcsinh, arctan, arctan2,
                                                arctanh)
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def _integers(name, x1, x2):
    x1, x2 = promote_dtypes(*_arrays(name, x1, x2))
    if not _dt.is_int(x1.dtype):
        raise ValueError(f"Arguments to jax.numpy.{name} must be integers.")
    return broadcast_arrays(absolute(x1), absolute(x2))


def _gcd_step(xs):
    """One Euclid step on the pairs whose second element is non-zero, keeping x1 >= x2."""
    x1, x2 = xs
    live = ew.ne(x2, _lax_const(x2, 0))
    safe = where(live, x2, _lax_const(x2, 1))
    x1, x2 = where(live, x2, x1), where(live, ew.rem(x1, safe), _lax_const(x2, 0))
    swap = ew.lt(x1, x2)
    return where(swap, x2, x1), where(swap, x1, x2)


def gcd(x1, x2):
    """The greatest common divisor of |x1| and |x2| (0 for gcd(0, 0)), by Euclid's algorithm
    in a while_loop."""
    x1, x2 = _integers("gcd", x1, x2)
    out, _ = lax.while_loop(lambda xs: any(ew.ne(xs[1], _lax_const(xs[1], 0))), _gcd_step,
                            (x1, x2))
    return out


def lcm(x1, x2):
    """The least common multiple of |x1| and |x2| (0 when either is 0)."""
    x1, x2 = _integers("lcm", x1, x2)
    d = gcd(x1, x2)
    zero = ew.eq(d, _lax_const(d, 0))
    return where(zero, _lax_const(d, 0), multiply(x1, floor_divide(x2, where(zero, 1, d))))


def _float_arg(name, x):
    x, = _promote_to_inexact(*_arrays(name, x))
    return asarray(x)


def frexp(x, /):
    """(mantissa, exponent) with x = mantissa * 2**exponent, 0.5 <= |mantissa| < 1 (int32
    exponents; x itself and 0 for zeros, infinities and NaNs)."""
    x = _float_arg("frexp", x)
    if _dt.kind(x.dtype) == "c":
        raise TypeError("frexp does not support complex-valued inputs")
    info = _dt.finfo(x.dtype)
    int_type = np.dtype(_INT_OF_BITS[info.bits])
    bits, exp = _normalized_bits(x, info, int_type)
    mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    field = ew.bitwise_and(ew.shift_right_logical(bits, _lax_const(bits, info.nmant)),
                           _lax_const(bits, mask))
    exp = ew.add(exp, ew.sub(field, _lax_const(field, bias - 1)))
    exp = where(special := _special(x), _lax_const(exp, 0), exp)
    return where(special, x, _scale_by_power_of_two(x, ew.neg(exp))), astype(exp, np.int32)


def _special(x):
    return logical_or(logical_or(isinf(x), isnan(x)), ew.eq(x, _lax_const(x, 0)))


def _scale_by_power_of_two(x, k):
    """x * 2**k, exact (and differentiable in x); 2**k in two halves, as it may overflow."""
    half = ew.div(k, _lax_const(k, 2))
    for part in (half, ew.sub(k, half)):
        x = ew.mul(x, _power_of_two(part, x.dtype))
    return x


def _power_of_two(k, dtype):
    """2**k for integers k in the normal range, built from its exponent bits (exact)."""
    info = _dt.finfo(dtype)
    biased = astype(ew.add(k, _lax_const(k, 1 - info.minexp)), _INT_OF_BITS[info.bits])
    return lax.bitcast_convert_type(ew.shift_left(biased, _lax_const(biased, info.nmant)),
                                    dtype)


def _normalized_bits(x, info, int_type):
    """x's bits with subnormals scaled up by 2**nmant, and the exponent that undoes it."""
    tiny = ew.lt(ew.abs(x), _lax_const(x, info.tiny))
    x = where(tiny, ew.mul(x, _lax_const(x, 1 << info.nmant)), x)
    exp = where(tiny, asarray(-info.nmant, dtype=int_type), asarray(0, dtype=int_type))
    return lax.bitcast_convert_type(x, int_type), exp


def ldexp(x1, x2, /):
    """x1 * 2**x2 (x2 integer), without overflowing where the result is finite."""
    x1, x2 = _arrays("ldexp", x1, x2)
    if _dt.kind(x1.dtype) == "c" or _dt.is_inexact(x2.dtype):
        raise ValueError(f"ldexp not supported for input types {(x1.dtype, x2.dtype)}")
    x1 = _float_arg("ldexp", x1)
    x2 = astype(x2, x1.dtype)
    m, e = frexp(x1)
    e = astype(ew.add(astype(e, x2.dtype), x2), x1.dtype)
    positive = ew.gt(e, _lax_const(e, 0))
    m = where(positive, ew.mul(m, _lax_const(m, 2)), m)
    e = where(positive, ew.sub(e, _lax_const(e, 1)), e)
    out = ew.mul(m, ew.pow(_lax_const(e, 2), e))
    return where(logical_or(isinf(x1), ew.eq(x1, _lax_const(x1, 0))), x1, out)


def spacing(x, /):
    """The distance from x to the next float away from zero (NumPy's; float16 towards +inf)."""
    x = _float_arg("spacing", x)
    if _dt.kind(x.dtype) == "c":
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = _lax_const(x, np.inf)
    if x.dtype == np.float16:
        return ew.sub(ew.nextafter(x, inf), x)
    out = ew.sub(ew.nextafter(x, copysign(inf, x)), x)
    smallest = _dt.finfo(x.dtype).smallest_subnormal
    return where(ew.eq(out, _lax_const(out, 0)), copysign(_lax_const(x, smallest), x), out)


@staged_as("i0")
def i0(x):
    """The modified Bessel function of the first kind, order 0 (real x): exp|x| i0e(|x|)."""
    x = _float_arg("i0", x)
    if _dt.kind(x.dtype) != "f":
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {x.dtype}")
    return _i0(x)


@custom_jvp
def _i0(x):
    ax = ew.abs(x)
    return ew.mul(ew.exp(ax), lax.bessel_i0e(ax))


@_i0.defjvp
def _i0_jvp(primals, tangents):
    """I0' = I1 (odd): sign(x) exp|x| i1e(|x|), exactly 0 at 0 where |x| has no derivative."""
    x, = primals
    ax = ew.abs(x)
    slope = ew.mul(ew.sign(x), ew.mul(ew.exp(ax), lax.bessel_i1e(ax)))
    return _i0(x), ew.mul(slope, tangents[0])


def fabs(x, /):
    """|x| as a float (real inputs only)."""
    x, = _arrays("fabs", x)
    if _dt.kind(x.dtype) == "c":
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return ew.abs(_float_arg("fabs", x))


def bitwise_count(x, /):
    """The number of one bits in |x|, as uint8 (NumPy's)."""
    x, = _arrays("bitwise_count", x)
    if _dt.is_inexact(x.dtype):
        raise TypeError(f"bitwise_count requires an integer or boolean input; got {x.dtype}")
    x, = _promote_to_numeric(x)
    return astype(lax.population_count(absolute(x)), np.uint8)
