"""jax.lax lowerings of the elementwise primitives, matching numpy_ref's values."""
import numpy as np
from jax import lax

from ....core import dtypes
from ....core.primitives import elementwise as ew
from ._common import convert, rule
from .structural import broadcast_in_dim


def _broadcast(*xs):
    """lax's n-ary ops want equal shapes; refjax's (as JAX's lax) let rank-0 operands and
    size-1 dimensions broadcast: spelled out as broadcast_in_dim (JAX's implicit broadcast of
    an unreduced operand is a NotImplementedError)."""
    ranked = [np.shape(x) for x in xs if np.ndim(x)]
    shape = tuple(next((n for n in sizes if n != 1), 1) for sizes in zip(*ranked)) \
        if ranked else ()
    return [x if np.shape(x) == shape else broadcast_in_dim(x, shape, tuple(range(np.ndim(x))))
            for x in xs]


def _nary(fn):
    def lowered(*xs, **params):
        return fn(*_broadcast(*xs), **params)
    return lowered


_UNARY = {
    ew.neg_p: lax.neg, ew.sign_p: lax.sign, ew.floor_p: lax.floor, ew.ceil_p: lax.ceil,
    ew.is_finite_p: lax.is_finite, ew.exp_p: lax.exp, ew.exp2_p: lax.exp2, ew.log_p: lax.log,
    ew.log1p_p: lax.log1p, ew.expm1_p: lax.expm1, ew.tanh_p: lax.tanh,
    ew.logistic_p: lax.logistic, ew.sin_p: lax.sin, ew.cos_p: lax.cos, ew.tan_p: lax.tan,
    ew.asin_p: lax.asin, ew.acos_p: lax.acos, ew.atan_p: lax.atan, ew.sinh_p: lax.sinh,
    ew.cosh_p: lax.cosh, ew.asinh_p: lax.asinh, ew.acosh_p: lax.acosh, ew.atanh_p: lax.atanh,
    ew.sqrt_p: lax.sqrt, ew.rsqrt_p: lax.rsqrt, ew.cbrt_p: lax.cbrt, ew.square_p: lax.square,
    ew.real_p: lax.real, ew.imag_p: lax.imag, ew.not_p: lax.bitwise_not,
    ew.erf_p: lax.erf, ew.erf_inv_p: lax.erf_inv, ew.lgamma_p: lax.lgamma,
    ew.digamma_p: lax.digamma,
}
for _p, _f in _UNARY.items():
    rule(_p)(_f)


@rule(ew.abs_p)
def _abs(x):
    return x if dtypes.kind(x.dtype) == "u" else lax.abs(x)  # lax.abs rejects unsigned


@rule(ew.conj_p)
def _conj(x):
    return lax.conj(x)  # complex for a float32/float64 operand, as refjax's conj


@rule(ew.round_p)
def _round(x, *, rounding_method):
    return lax.round(x, lax.RoundingMethod(rounding_method))


@rule(ew.integer_pow_p)
def _integer_pow(x, *, y):
    if y < 0 and dtypes.is_int(x.dtype):
        # lax rejects it; numpy_ref truncates 1/x**-y, i.e. integer division.
        return lax.div(lax.full_like(x, 1), lax.integer_pow(x, -y))
    return lax.integer_pow(x, y)


_BINARY = {
    ew.add_p: lax.add, ew.sub_p: lax.sub, ew.add_any_p: lax.add, ew.mul_p: lax.mul,
    ew.pow_p: lax.pow, ew.max_p: lax.max, ew.min_p: lax.min,
    ew.atan2_p: lax.atan2, ew.nextafter_p: lax.nextafter, ew.and_p: lax.bitwise_and,
    ew.or_p: lax.bitwise_or, ew.xor_p: lax.bitwise_xor, ew.shift_left_p: lax.shift_left,
    ew.shift_right_logical_p: lax.shift_right_logical,
    ew.shift_right_arithmetic_p: lax.shift_right_arithmetic, ew.eq_p: lax.eq, ew.ne_p: lax.ne,
    ew.polygamma_p: lax.polygamma,
}
for _p, _f in _BINARY.items():
    rule(_p)(_nary(_f))


def _guarded(fn, at_zero):
    """fn (integer division or remainder) with the divisor made 1 where it is 0, or -1 under
    INT_MIN: XLA folds constant operands with the host's division, whose trap (SIGFPE) kills
    the process (JAX 0.10.2 crashes on `jit(lambda: lax.div(jnp.int32(3), 0))()`); the results
    there are XLA's own: x / 0 and x % 0 are `at_zero(x)`, INT_MIN / -1 is INT_MIN."""
    def lowered(x, y):
        x, y = _broadcast(x, y)
        dtype = np.dtype(x.dtype)
        if dtype.kind not in "iu":
            return fn(x, y)
        zero = lax.eq(y, lax.full_like(y, 0))
        unsafe = zero
        if dtype.kind == "i":
            lowest = lax.eq(x, lax.full_like(x, np.iinfo(dtype).min))
            unsafe = lax.bitwise_or(zero, lax.bitwise_and(lowest, lax.eq(y, lax.full_like(y, -1))))
        out = fn(x, lax.select(unsafe, lax.full_like(y, 1), y))
        return lax.select(zero, at_zero(x), out)
    return lowered


rule(ew.div_p)(_guarded(lax.div, lambda x: lax.bitwise_not(lax.full_like(x, 0))))
rule(ew.rem_p)(_guarded(lax.rem, lambda x: x))


def _ordering(compare):
    """lax orders no complex numbers; numpy_ref (NumPy) orders them lexicographically."""
    def lowered(x, y):
        if dtypes.kind(x.dtype) != "c":
            return compare(x, y)
        xr, yr = lax.real(x), lax.real(y)
        return lax.bitwise_or(lax.lt(xr, yr) if compare in (lax.lt, lax.le) else lax.gt(xr, yr),
                              lax.bitwise_and(lax.eq(xr, yr), compare(lax.imag(x), lax.imag(y))))
    return _nary(lowered)


for _p, _f in ((ew.lt_p, lax.lt), (ew.le_p, lax.le), (ew.gt_p, lax.gt), (ew.ge_p, lax.ge)):
    rule(_p)(_ordering(_f))


@rule(ew.select_n_p)
def _select_n(which, *cases):
    return lax.select_n(which, *cases)


@rule(ew.clamp_p)
def _clamp(lo, x, hi):
    return lax.clamp(lo, x, hi)


@rule(ew.convert_element_type_p)
def _convert(x, *, new_dtype, weak_type=False, sharding=None):
    return convert(x, new_dtype)
