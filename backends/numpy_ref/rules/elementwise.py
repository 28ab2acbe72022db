"""NumPy rules of the elementwise primitives: the oracle's definitions."""
import numpy as np

from ....core import dtypes
from ....core.primitives import elementwise as ew
from .. import special
from ._common import convert, rule, rule_in_place

_LOW = (dtypes.float16, dtypes.bfloat16)


def _upcast(fn):
    """Half-precision floats are computed in float32 and rounded back, as XLA does on CPU."""
    def wrapped(*args, **params):
        dtype = args[-1].dtype
        if dtype in _LOW:
            args = [a.astype(np.float32) if a.dtype == dtype else a for a in args]
        with np.errstate(all="ignore"):
            return np.asarray(fn(*args, **params)).astype(dtype, copy=False) \
                if dtype in _LOW else fn(*args, **params)
    return wrapped


def _quiet(fn):
    def wrapped(*args, **params):
        with np.errstate(all="ignore"):
            return fn(*args, **params)
    return wrapped


# Transcendental functions of narrower operands are computed in float64 (complex128) and
# rounded once, so the oracle is correctly rounded (but for rare double roundings): NumPy's
# own float32 kernels are up to an ulp off (about 40% of exp's results, 13% of sin's), which
# finite differences amplify past their tolerances (JAX's test_jit_forwarding_correctness
# failed on numpy_ref for that reason alone). The wide temporaries are made block by block.
_WIDE = {np.dtype(np.float16): np.float64, np.dtype(dtypes.bfloat16): np.float64,
         np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}
_BLOCK = 1 << 16


def _widened(fn):
    """fn(*operands) computed in the wide type of the last operand's dtype, block by block,
    and rounded to that dtype (operands of other dtypes as they are)."""
    def wrapped(*args, **params):
        dtype = args[-1].dtype
        with np.errstate(all="ignore"):
            if dtype not in _WIDE:
                return fn(*args, **params)
            return _blockwise(lambda *xs: fn(*xs, **params), args, _WIDE[dtype], dtype)
    return wrapped


def _blockwise(fn, args, wide, dtype, out=None):
    """fn of args (broadcasting together) into `out` (default: a new array of `dtype`),
    computed on blocks of _BLOCK elements widened to `wide`. `out` may be one of args: each
    block is read whole before its result is written."""
    shape = np.broadcast_shapes(*(a.shape for a in args))
    out = np.empty(shape, dtype) if out is None else out
    flat_out = out.reshape(-1)
    flats = [a.reshape(-1) if a.shape == shape and a.ndim else
             np.broadcast_to(a, shape).reshape(-1) if a.ndim else a for a in args]
    for start in range(0, flat_out.size, _BLOCK):
        block = [f[start:start + _BLOCK] if f.ndim else f for f in flats]
        flat_out[start:start + _BLOCK] = fn(*(b.astype(wide) for b in block))
    return out


def _sign(x):
    """np.sign, except that zeros keep their sign (XLA's sign(-0.0) is -0.0)."""
    out = np.asarray(np.sign(x))
    if x.dtype.kind == "f" or x.dtype == dtypes.bfloat16:
        zero = out == 0
        out[zero] = x[zero]
    return out


_EXACT = {
    ew.neg_p: np.negative, ew.sign_p: _sign, ew.floor_p: np.floor, ew.ceil_p: np.ceil,
    ew.is_finite_p: np.isfinite, ew.sqrt_p: np.sqrt, ew.square_p: np.square, ew.real_p: np.real,
    ew.imag_p: np.imag,
}
_TRANSCENDENTAL = {
    ew.exp_p: np.exp, ew.exp2_p: np.exp2, ew.log_p: np.log, ew.log1p_p: np.log1p,
    ew.expm1_p: np.expm1, ew.tanh_p: np.tanh, ew.logistic_p: lambda x: 1 / (1 + np.exp(-x)),
    ew.sin_p: np.sin, ew.cos_p: np.cos, ew.tan_p: np.tan, ew.asin_p: np.arcsin,
    ew.acos_p: np.arccos, ew.atan_p: np.arctan, ew.sinh_p: np.sinh, ew.cosh_p: np.cosh,
    ew.asinh_p: np.arcsinh, ew.acosh_p: np.arccosh, ew.atanh_p: np.arctanh,
    ew.rsqrt_p: lambda x: 1 / np.sqrt(x), ew.cbrt_p: np.cbrt,
}
for _p, _f in _EXACT.items():
    rule(_p)(_upcast(_f))
for _p, _f in _TRANSCENDENTAL.items():
    rule(_p)(_widened(_f))


# ---------------------------------------------------------------- in place (buffer reuse)
#
# Where the interpreter hands over an input's memory (its last use, referenced by nothing
# else), float32/float64 results are written there, rounded exactly as the rules above round
# them. For other dtypes these decline (None) and the ordinary rule makes a new array.

def _into(prim, compute_into, dtypes_=(np.dtype(np.float32), np.dtype(np.float64))):
    def into(out, *args, **params):
        if out.dtype not in dtypes_ or not out.flags.c_contiguous:
            return None
        with np.errstate(all="ignore"):
            return compute_into(out, *args, **params)
    rule_in_place(prim)(into)


_IN_PLACE_UFUNCS = {ew.add_p: np.add, ew.sub_p: np.subtract, ew.mul_p: np.multiply,
                    ew.add_any_p: np.add, ew.div_p: np.divide, ew.neg_p: np.negative,
                    ew.sqrt_p: np.sqrt, ew.square_p: np.square}
for _p, _f in _IN_PLACE_UFUNCS.items():
    _into(_p, lambda out, *xs, _f=_f: _f(*xs, out=out))
for _p, _f in _TRANSCENDENTAL.items():  # float32 only: float64 ones have no wider type
    _into(_p, lambda out, *xs, _f=_f: _blockwise(_f, xs, np.float64, out.dtype, out),
          (np.dtype(np.float32),))


def _complex_branch_cuts(prim, fn):
    """Complex operands go through special.py's versions, which put the branch cuts' signed
    zeros where XLA on CPU does (NumPy follows C99 there)."""
    def wrapped(x):
        if x.dtype.kind != "c":
            return fn(x)
        with np.errstate(all="ignore"):
            return getattr(special, f"complex_{prim.name}")(x)
    rule(prim)(wrapped)


for _p in (ew.asin_p, ew.acos_p, ew.atan_p, ew.asinh_p, ew.acosh_p, ew.atanh_p):
    _complex_branch_cuts(_p, _widened(_TRANSCENDENTAL[_p]))
_complex_branch_cuts(ew.sqrt_p, _upcast(np.sqrt))


@rule(ew.conj_p)
def _conj(x):
    """conj of a float32/float64 operand is x + 0j (complex, imaginary part +0.0), as in JAX."""
    if x.dtype.kind != "c":
        return x.astype(np.result_type(x.dtype, np.complex64))
    return np.conj(x)


def special_rule(prim, name=None):
    """Register the special function `name` (default: the primitive's) of
    backends/numpy_ref/special.py, computed in float64 and rounded once to the operands'
    dtype, as prim's rule."""
    fn = getattr(special, name or prim.name)

    def wrapped(*args):
        return np.asarray(fn(*(np.asarray(a, np.float64) for a in args))).astype(args[-1].dtype)
    rule(prim)(_quiet(wrapped))


for _p in (ew.erf_p, ew.erf_inv_p, ew.lgamma_p, ew.digamma_p, ew.polygamma_p):
    special_rule(_p)


@rule(ew.abs_p)
def _abs(x):
    return np.abs(x)


@rule(ew.not_p)
def _not(x):
    return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


@rule(ew.round_p)
@_upcast
def _round(x, *, rounding_method):
    if rounding_method == ew.RoundingMethod.TO_NEAREST_EVEN:
        return np.round(x)
    halfway = np.abs(x) - np.floor(np.abs(x)) == 0.5
    return np.where(halfway, np.copysign(np.floor(np.abs(x)) + 1, x), np.round(x))


@rule(ew.integer_pow_p)
def _integer_pow(x, *, y):
    with np.errstate(all="ignore"):
        if y < 0:
            return _integer_pow_positive(1 / x.astype(x.dtype), -y)
        return _integer_pow_positive(x, y)


def _integer_pow_positive(x, y):
    """Exponentiation by squaring in x's dtype (XLA's expansion), the temporaries updated in
    place (at most two arrays besides x)."""
    if y <= 1:
        return x if y else np.ones_like(x)
    acc, base = None, x
    while y:
        if y & 1:
            if acc is None:  # base is squared in place later unless it is x or last
                acc = base if base is x or y == 1 else base.copy()
            else:
                acc = _times(acc, base, x, last=y == 1)
        y >>= 1
        if y:
            # (np.asarray: NumPy makes 0-d products scalars, which `out=` cannot take)
            base = np.asarray(base * base) if base is x else np.multiply(base, base, out=base)
    return acc


def _times(acc, base, x, last):
    """acc * base, written over a temporary this rule owns: acc's, or base's for the last
    factor (base is not needed afterwards); never over x."""
    if acc is not x:
        return np.multiply(acc, base, out=acc)
    return np.multiply(acc, base, out=base) if last and base is not x else np.asarray(acc * base)


_BINARY = {
    ew.add_p: np.add, ew.sub_p: np.subtract, ew.mul_p: np.multiply, ew.add_any_p: np.add,
    ew.and_p: np.bitwise_and, ew.or_p: np.bitwise_or, ew.xor_p: np.bitwise_xor,
    ew.eq_p: np.equal, ew.ne_p: np.not_equal, ew.lt_p: np.less, ew.le_p: np.less_equal,
    ew.gt_p: np.greater, ew.ge_p: np.greater_equal,
}
for _p, _f in _BINARY.items():
    rule(_p)(_upcast(_f))


def _ordered_zeros(np_fn, zero_of):
    """np.maximum/np.minimum, except that between two zeros XLA orders -0.0 below +0.0:
    zero_of(x, y) picks the zero (x + y is +0.0 unless both are -0.0; -(-x + -y) the
    reverse). Only the positions where both are zero are recomputed (a boolean mask)."""
    @_upcast
    def extremum(x, y):
        out = np.asarray(np_fn(x, y))
        if out.dtype.kind == "f" and out.ndim:
            both = np.equal(x, 0, out=np.empty(out.shape, np.bool_))  # x may broadcast
            both &= np.equal(y, 0)
            if both.any():
                out[both] = zero_of(np.broadcast_to(x, out.shape)[both],
                                    np.broadcast_to(y, out.shape)[both])
        elif out.dtype.kind == "f" and x == 0 and y == 0:
            out = np.asarray(zero_of(np.asarray(x), np.asarray(y)))
        return out
    return extremum


rule(ew.max_p)(_ordered_zeros(np.maximum, lambda x, y: x + y))
rule(ew.min_p)(_ordered_zeros(np.minimum, lambda x, y: -(-x + -y)))


@rule(ew.atan2_p)
def _atan2(x, y):
    if x.dtype.kind != "c":
        return _widened(np.arctan2)(x, y)
    with np.errstate(all="ignore"):
        return special.complex_atan2(x, y)


@rule(ew.pow_p)
def _pow(x, y):
    """An integer exponent is converted to the base's dtype first (as JAX lowers it)."""
    return _widened(np.power)(x, np.asarray(y).astype(x.dtype, copy=False))


@rule(ew.div_p)
@_quiet
def _div(x, y):
    """Integers: truncated toward zero; x / 0 is -1 (all bits set) and INT_MIN / -1 wraps to
    INT_MIN, as XLA on CPU computes them."""
    if not dtypes.is_int(x.dtype):
        return _upcast(np.divide)(x, y)
    safe = np.where(y == 0, np.ones_like(y), y)
    q = x // safe  # floored; NumPy gives INT_MIN // -1 == INT_MIN
    inexact = (np.fmod(x, safe) != 0) & ((x < 0) != (safe < 0))
    q = np.where(inexact, q + np.ones_like(q), q)  # floored -> truncated
    return np.where(y == 0, np.array(-1).astype(x.dtype), q).astype(x.dtype)


@rule(ew.rem_p)
@_quiet
def _rem(x, y):
    """fmod; for integers x % 0 is x and INT_MIN % -1 is 0, as XLA on CPU computes them."""
    if not dtypes.is_int(x.dtype):
        return _upcast(np.fmod)(x, y)
    safe = np.where(y == 0, np.ones_like(y), y)
    return np.where(y == 0, x, np.fmod(x, safe)).astype(x.dtype)


def _shift_amount(x, y):
    bits = x.dtype.itemsize * 8
    unsigned = y.astype(np.uint64) if y.dtype.kind == "i" else y.astype(np.uint64)
    return bits, unsigned


@rule(ew.shift_left_p)
def _shift_left(x, y):
    bits, s = _shift_amount(x, y)
    ok = s < bits
    return np.where(ok, np.left_shift(x, np.where(ok, s, 0).astype(x.dtype)), 0).astype(x.dtype)


@rule(ew.shift_right_logical_p)
def _shift_right_logical(x, y):
    bits, s = _shift_amount(x, y)
    ok = s < bits
    ux = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    out = np.right_shift(ux, np.where(ok, s, 0).astype(ux.dtype))
    return np.where(ok, out, 0).astype(ux.dtype).view(x.dtype)


@rule(ew.shift_right_arithmetic_p)
def _shift_right_arithmetic(x, y):
    bits, s = _shift_amount(x, y)
    signed = x.view(np.dtype(f"i{x.dtype.itemsize}"))
    amount = np.minimum(s, bits - 1).astype(signed.dtype)
    return np.right_shift(signed, amount).astype(signed.dtype).view(x.dtype)


@rule(ew.nextafter_p)
@np.errstate(invalid="ignore")  # NaN operands are handled at the end
def _nextafter(x, y):
    x, y = np.broadcast_arrays(x, y)
    bits = np.dtype(f"u{x.dtype.itemsize}")
    xb = np.array(x).view(bits)
    sign = np.array(1 << (8 * x.dtype.itemsize - 1), bits)
    toward_zero = (x > y) == (x > 0)
    step = np.where(toward_zero, xb - np.array(1, bits), xb + np.array(1, bits)).view(x.dtype)
    tiny = (np.where(y > 0, 1, 1 | sign).astype(bits)).view(x.dtype)
    out = np.where(x == 0, tiny, step)
    out = np.where(x == y, y, out)
    return np.where(np.isnan(x) | np.isnan(y), x + y, out).astype(x.dtype)


@rule(ew.select_n_p)
def _select_n(which, *cases):
    if which.dtype == np.bool_:
        return np.where(which, cases[-1], cases[0]) if len(cases) == 2 else np.array(cases[0])
    if which.shape == ():
        return np.array(cases[int(which)])
    return np.choose(which, cases)


@rule(ew.clamp_p)
@_quiet
def _clamp(lo, x, hi):
    out = np.asarray(np.maximum(x, lo))
    return np.minimum(out, hi, out=out)


@rule(ew.convert_element_type_p)
def _convert(x, *, new_dtype, weak_type, sharding):
    return convert(x, new_dtype)
