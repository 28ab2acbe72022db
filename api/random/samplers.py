"""Samplers on the random bits: uniform (with an emulated FMA), normal, randint, gumbel, choice."""
import math
import operator
from collections.abc import Sequence

import numpy as np

from ...core import dtypes as _dt
from ...core.array import Array
from ...core.primitive import named
from ...core.trace import Tracer
from .. import lax
from .. import numpy as jnp
from .prng import (_U32, _canonical_dtype, _canonical_shape, _check_key, _full_like,
                   _is_arraylike, _random_bits, _split2, _u32, _uint_dtype, _words64)


# ---------------------------------------------------------------- uniform floats

def _mantissa_halves(data, shape, dtype):
    """The nmant random mantissa bits JAX uses for a uniform float of `dtype`, as two uint32
    halves (hi, lo) and the bit count of lo. JAX draws as many random bits as the float has
    (but at least 8, for bfloat16) and keeps the top nmant; for float64 those are the top 52
    of the 64 bits formed by the two hash words."""
    info = _dt.finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    if nbits == 64:
        # The 52 mantissa bits are those of (b0 << 32 | b1) >> 12: b0 << 20 | b1 >> 12.
        b0, b1 = _words64(data, shape)
        hi = lax.shift_right_logical(b0, lax.full(shape, 6, _U32))
        lo = lax.bitwise_or(lax.shift_left(lax.bitwise_and(b0, lax.full(shape, 63, _U32)),
                                           lax.full(shape, 20, _U32)),
                            lax.shift_right_logical(b1, lax.full(shape, 12, _U32)))
        return hi, lo, 26
    rng_bits = nbits if nmant >= 8 else 8
    rbits = _u32(_random_bits(data, rng_bits, shape))
    m = lax.shift_right_logical(rbits, lax.full(shape, rng_bits - nmant, _U32))
    h = nmant // 2
    return (lax.shift_right_logical(m, lax.full(shape, h, _U32)),
            lax.bitwise_and(m, lax.full(shape, 2 ** h - 1, _U32)), h)


def _unit_float_halves(data, shape, dtype):
    """Uniform floats in [0, 1) as an exact sum hi + lo of two floats with half the bits each.

    JAX bitcasts the mantissa bits m under the exponent of 1.0 and subtracts 1, giving
    m * 2**-nmant. refjax has no bitcast_convert_type, so it computes that value directly: an
    integer of at most nmant bits converts exactly and scaling by a power of two is exact. The
    halves are what _fma needs to multiply exactly."""
    nmant = _dt.finfo(dtype).nmant
    hi, lo, h = _mantissa_halves(data, shape, dtype)

    def scaled(x, e):
        return lax.mul(lax.convert_element_type(x, dtype), lax.full(shape, 2.0 ** e, dtype))
    return scaled(hi, h - nmant), scaled(lo, -nmant)


# ---------------------------------------------------------------- an emulated fused multiply-add
#
# JAX computes uniform's `floats * (maxval - minval) + minval` under jit, and XLA on CPU
# contracts float32 and float64 multiply-adds into FMAs (one rounding; float16 and bfloat16 are
# computed per operation). refjax's primitives round every operation, so to give JAX's bits it
# emulates the FMA exactly: Dekker's exact product, then Boldo and Melquiond's FMA emulation with
# rounding to odd ("Emulation of FMA and correctly rounded sums", IEEE TC 2008). Every product
# below is exact, so a compiler that contracts them (refjax's xla backend under jit) changes
# nothing. Assumes no overflow (|maxval - minval| below ~1e34 in float32) and no underflow.

def _two_sum(a, b):
    """(s, e) with s = fl(a + b) and a + b = s + e exactly (Knuth's TwoSum)."""
    s = lax.add(a, b)
    bb = lax.sub(s, a)
    return s, lax.add(lax.sub(a, lax.sub(s, bb)), lax.sub(b, bb))


def _veltkamp_split(x):
    """(hi, lo) with x = hi + lo exactly, each with at most half of x's significand bits."""
    p = _dt.finfo(x.dtype).nmant + 1
    c = lax.mul(_full_like(x, 2.0 ** ((p + 1) // 2) + 1), x)
    hi = lax.sub(c, lax.sub(c, x))
    return hi, lax.sub(x, hi)


def _round_to_odd_sum(a, b):
    """a + b rounded to odd: the nearest float when exact, else of the two floats around
    a + b the one with an odd last bit (found as the one a tie does not round to)."""
    s, e = _two_sum(a, b)
    inf = _full_like(s, np.inf)
    n = lax.nextafter(s, lax.select(lax.gt(e, _full_like(e, 0)), inf, lax.neg(inf)))
    tie = lax.add(s, lax.mul(_full_like(s, 0.5), lax.sub(n, s)))  # ties go to the even one
    inexact = lax.ne(e, _full_like(e, 0))
    return lax.select(lax.bitwise_and(inexact, lax.eq(tie, s)), n, s)


def _fma(f_hi, f_lo, y, c):
    """(f_hi + f_lo) * y + c rounded once, f_hi and f_lo having half the bits of a float."""
    f = lax.add(f_hi, f_lo)
    y_hi, y_lo = _veltkamp_split(y)
    uh = lax.mul(f, y)  # Dekker: uh + ul == f * y exactly
    ul = lax.sub(lax.mul(f_hi, y_hi), uh)
    for a, b in ((f_hi, y_lo), (f_lo, y_hi), (f_lo, y_lo)):
        ul = lax.add(ul, lax.mul(a, b))
    th, tl = _two_sum(c, uh)
    # th carries the whole derivative (dc + f dy); the correction's is zero (and nextafter has
    # no derivative rule), so it is computed from stopped values.
    return lax.add(th, _round_to_odd_sum(lax.stop_gradient(tl), lax.stop_gradient(ul)))


def _exact_scale(minval, maxval, dtype):
    """Whether maxval - minval is a static power of two (or 0), so the product is exact and a
    plain multiply-add already rounds once: uniform's default range, normal's, and most
    samplers' skip the FMA emulation."""
    if isinstance(minval, (Array, Tracer)) or isinstance(maxval, (Array, Tracer)):
        return False
    span = np.asarray(np.asarray(maxval, dtype) - np.asarray(minval, dtype), np.float64)
    return span.ndim == 0 and (span == 0 or np.frexp(span)[0] == 0.5)


def _shape_error(name, shape, param_shapes):
    return (f"{name} parameter shapes must be broadcast-compatible with shape argument, and "
            "the result of broadcasting the shapes must equal the shape argument, but got "
            f"parameter shapes {param_shapes} for shape argument {shape}.")


def _check_shape(name, shape, *param_shapes, exc=ValueError):
    """JAX's _check_shape: broadcasting the parameter shapes with `shape` must give `shape`."""
    try:
        result = tuple(np.broadcast_shapes(shape, *param_shapes))
    except ValueError:
        result = None
    if result != tuple(shape):
        raise exc(_shape_error(name, tuple(shape), [tuple(s) for s in param_shapes]))


def _param(x, dtype, shape):
    """A sampler parameter converted to `dtype` and broadcast to `shape` (already checked)."""
    x = lax.convert_element_type(jnp.asarray(x), dtype)
    return jnp.broadcast_to(x, shape) if tuple(x.shape) != tuple(shape) else x


def _uniform(data, shape, dtype, minval, maxval):
    _check_shape("uniform", shape, np.shape(minval), np.shape(maxval), exc=TypeError)
    fused = np.dtype(dtype).itemsize >= 4 and not _exact_scale(minval, maxval, dtype)
    minval, maxval = _param(minval, dtype, shape), _param(maxval, dtype, shape)
    f_hi, f_lo = _unit_float_halves(data, shape, dtype)
    span = lax.sub(maxval, minval)
    if fused:
        scaled = _fma(f_hi, f_lo, span, minval)
    else:
        scaled = lax.add(lax.mul(lax.add(f_hi, f_lo), span), minval)
    # Rounding can push minval + f * (maxval - minval) below minval; JAX clamps it.
    return lax.max(minval, scaled)


def _float_dtype(name, dtype, kinds="f", what="a float"):
    dtype = _canonical_dtype(name, dtype, np.float64)
    if _dt.kind(dtype) not in kinds:
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")
    return dtype


def uniform(key, shape=(), dtype=None, minval=0., maxval=1.):
    """Uniform floats in [minval, maxval) of `shape` and float `dtype` (float64 under x64)."""
    data, _ = _check_key("uniform", key)
    dtype = _float_dtype("uniform", dtype)
    return _uniform(data, _canonical_shape(shape), dtype, minval, maxval)


# ---------------------------------------------------------------- normal family

def _sqrt2(dtype):
    return np.array(np.sqrt(2), dtype)


def _normal_real(data, shape, dtype):
    # (nextafter(-1, 0), 1) keeps erf_inv finite; -1 + epsneg is that neighbour, exactly.
    lo = -1.0 + float(_dt.finfo(dtype).epsneg)
    u = _uniform(data, shape, dtype, lo, 1.0)
    return lax.mul(lax.full(shape, _sqrt2(dtype), dtype), lax.erf_inv(u))


def _normal(data, shape, dtype):
    if _dt.kind(dtype) != "c":
        return _normal_real(data, shape, dtype)
    real_dtype = np.array(0, dtype).real.dtype
    k_re, k_im = _split2(data)
    re = _normal_real(k_re, shape, real_dtype).astype(dtype)
    im = _normal_real(k_im, shape, real_dtype).astype(dtype)
    return (re + 1j * im) / _sqrt2(dtype)


def normal(key, shape=(), dtype=None):
    """Standard normal samples: sqrt(2) * erf_inv(u), u uniform on (-1, 1).

    Bit-exact with JAX on the xla backend; the numpy_ref backend's erf_inv is more accurate
    than XLA's float32 polynomial, so values there agree with JAX to a few ulps."""
    data, _ = _check_key("normal", key)
    dtype = _float_dtype("normal", dtype, "fc", "a float or complex")
    return _normal(data, _canonical_shape(shape), dtype)


def _broadcast_param_shape(shape, *params):
    if shape is None:
        return tuple(np.broadcast_shapes(*(np.shape(p) for p in params)))
    return _canonical_shape(shape)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Normal samples conditioned on the open interval (lower, upper), by inverting the CDF."""
    data, _ = _check_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    shape = _broadcast_param_shape(shape, lower, upper)
    _check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    sqrt2 = jnp.asarray(_sqrt2(dtype))
    lower = lax.convert_element_type(jnp.asarray(lower), dtype)
    upper = lax.convert_element_type(jnp.asarray(upper), dtype)
    a, b = lax.erf(lower / sqrt2), lax.erf(upper / sqrt2)
    out = sqrt2 * lax.erf_inv(_uniform(data, shape, dtype, a, b))
    # Rounding (or u landing exactly on a) could leave the open interval: clamp into it.
    inf = np.array(np.inf, dtype)
    lo = lax.nextafter(lax.stop_gradient(lower), jnp.broadcast_to(inf, lower.shape))
    hi = lax.nextafter(lax.stop_gradient(upper), jnp.broadcast_to(-inf, upper.shape))
    return jnp.clip(out, lo, hi)


# ---------------------------------------------------------------- integers

def _clip_convert(x, dtype):
    """x (an integer array) converted to `dtype`, clipped to the range both types can hold
    rather than wrapped (JAX's _convert_and_clip_integer)."""
    src, dst = _dt.iinfo(x.dtype), _dt.iinfo(dtype)
    lo = _full_like(x, max(int(src.min), int(dst.min)))
    hi = _full_like(x, min(int(src.max), int(dst.max)))
    return lax.convert_element_type(lax.min(lax.max(x, lo), hi), dtype)


def _as_int_array(x):
    x = jnp.asarray(x)
    return x if _dt.is_int(x.dtype) else x.astype(int)


def _randint(data, shape, minval, maxval, dtype):
    """JAX's randint: 2 * nbits random bits per value reduced modulo the span."""
    _check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    minval, maxval = _as_int_array(minval), _as_int_array(maxval)
    info = _dt.iinfo(dtype)
    top = _clip_convert(jnp.asarray(np.array(info.max, dtype)), maxval.dtype)
    # maxval beyond dtype's range (e.g. 256 for uint8) means "up to and including the max".
    out_of_range = lax.gt(maxval, top)
    minval, maxval = _clip_convert(minval, dtype), _clip_convert(maxval, dtype)
    minval, maxval, out_of_range = (jnp.broadcast_to(v, shape)
                                    for v in (minval, maxval, out_of_range))
    nbits, udtype = info.bits, _uint_dtype(info.bits)
    k1, k2 = _split2(data)
    higher, lower = _random_bits(k1, nbits, shape), _random_bits(k2, nbits, shape)
    span = lax.convert_element_type(lax.sub(maxval, minval), udtype)
    empty = lax.le(maxval, minval)
    span = lax.select(empty, _full_like(span, 1), span)  # minval is returned when empty
    span = lax.select(lax.bitwise_and(out_of_range, lax.bitwise_not(empty)),
                      lax.add(span, _full_like(span, 1)), span)
    # (hi * 2**nbits + lo) % span without overflow, via multiplier = 2**nbits % span. A span
    # that wrapped to 0 (the full range) leaves values as they are: lax.rem(x, 0) == x.
    multiplier = lax.rem(_full_like(span, 2 ** (nbits // 2)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def randint(key, shape, minval, maxval, dtype=None):
    """Integers in [minval, maxval) (int64 by default under x64, else int32).

    As in JAX, the result is (2*nbits random bits) mod (maxval - minval), slightly biased when
    the span is not a power of two; 8- and 16-bit dtypes are drawn as int32."""
    data, _ = _check_key("randint", key)
    dtype = _canonical_dtype("randint", dtype, np.int64)
    shape = _canonical_shape(shape)
    if not _dt.is_int(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = _dt.iinfo(dtype)
    if info.bits < 32:
        i32 = np.dtype(np.int32)
        minval = jnp.clip(jnp.asarray(minval).astype(i32), int(info.min), int(info.max))
        maxval = jnp.clip(jnp.asarray(maxval).astype(i32), int(info.min), int(info.max) + 1)
        return _randint(data, shape, minval, maxval, i32).astype(dtype)
    return _randint(data, shape, minval, maxval, dtype)


# ---------------------------------------------------------------- discrete samplers

def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability p (mode='high' resolves p below 2**-nmant)."""
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    data, _ = _check_key("bernoulli", key)
    p = jnp.asarray(p)
    if not _dt.is_float(p.dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {p.dtype}.")
    shape = tuple(p.shape) if shape is None else _canonical_shape(shape)
    _check_shape("bernoulli", shape, np.shape(p))
    if mode == "low":
        return _uniform(data, shape, p.dtype, 0., 1.) < p
    u = _uniform(data, (2, *shape), p.dtype, 0., 1.)
    u1, u2 = lax.index_in_dim(u, 0, 0, keepdims=False), lax.index_in_dim(u, 1, 0, keepdims=False)
    u2 = u2 * (2.0 ** -_dt.finfo(p.dtype).nmant)  # resolution of one uniform sample
    return u2 < p - u1


def rademacher(key, shape=(), dtype=None):
    """-1 or +1 with equal probability, of integer (or any) `dtype`."""
    dtype = _canonical_dtype("rademacher", dtype, np.int64)
    b = bernoulli(key, 0.5, _canonical_shape(shape)).astype(dtype)
    return (2 * b - 1).astype(dtype)


def _top_k_indices(x, k):
    """Indices of the k largest entries along the last axis, ties to the lower index (as
    lax.top_k, which refjax lacks): a stable ascending sort of -x."""
    iota = lax.broadcasted_iota(np.dtype(np.int32), x.shape, x.ndim - 1)
    _, idx = lax.sort_key_val(lax.neg(x), iota, x.ndim - 1, is_stable=True)
    return lax.slice_in_dim(idx, 0, k, axis=x.ndim - 1)


# ---------------------------------------------------------------- continuous samplers

def _unary_sampler(name, transform, minval=0., maxval=1.):
    """A sampler `f(key, shape=(), dtype=None)` returning transform(uniform(minval, maxval))."""
    def sampler(key, shape=(), dtype=None):
        data, _ = _check_key(name, key)
        dtype = _float_dtype(name, dtype)
        lo = minval(dtype) if callable(minval) else minval
        return transform(_uniform(data, _canonical_shape(shape), dtype, lo, maxval))
    return named(sampler, name)


def _tiny(dtype):
    return float(_dt.finfo(dtype).tiny)


exponential = _unary_sampler("exponential", lambda u: lax.neg(lax.log1p(lax.neg(u))))
exponential.__doc__ = "Exponential(1) samples: -log(1 - u) (log1p keeps u = 0 finite)."

logistic = _unary_sampler("logistic", lambda x: lax.sub(lax.log(x), lax.log1p(lax.neg(x))),
                          minval=_tiny)
logistic.__doc__ = "Standard logistic samples: log(x) - log(1 - x), x uniform on [tiny, 1)."

laplace = _unary_sampler(
    "laplace", lambda u: lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u)))),
    minval=lambda dtype: -1.0 + float(_dt.finfo(dtype).epsneg))
laplace.__doc__ = "Laplace(0, 1) samples: sign(u) * log(1 - |u|), u uniform on (-1, 1)."


def _u32_const(value, shape):
    return lax.full(shape, value, _U32)


def _fixed_point_float32(hi, lo):
    """The float32 nearest below the 64-bit fixed-point fraction hi:lo in (0, 1), as JAX's
    _safe_int_to_float: the leading one found with clz, the next 23 bits its mantissa."""
    shape = tuple(hi.shape)
    hi_clz, lo_clz = lax.clz(hi), lax.clz(lo)
    no_hi = hi_clz == _u32_const(32, shape)
    # XLA shifts by 32 or more give 0: a zero high word takes its bits from lo alone.
    mantissa = lax.bitwise_or(lax.shift_left(hi, hi_clz), jnp.where(
        no_hi, lax.shift_left(lo, lo_clz),
        lax.shift_right_logical(lo, lax.sub(_u32_const(32, shape), hi_clz))))
    mantissa = lax.bitwise_and(lax.shift_right_logical(mantissa, _u32_const(8, shape)),
                               _u32_const(2 ** 23 - 1, shape))
    leading = jnp.where(no_hi, lax.add(lo_clz, _u32_const(32, shape)), hi_clz)
    exponent = lax.shift_left(lax.sub(_u32_const(126, shape), leading), _u32_const(23, shape))
    exponent = lax.bitwise_and(exponent, _u32_const(2 ** 30 - 2 ** 22, shape))
    return lax.bitcast_convert_type(lax.bitwise_or(exponent, mantissa), np.float32)


def _gumbel_highest(data, shape):
    """float32 mode 'highest': u from 64 random bits in fixed point, with 1 - u computed
    exactly in the integers, so that -log(-log(u)) has full precision at both tails."""
    bits = _random_bits(data, 32, (2, *shape))
    hi, lo = lax.index_in_dim(bits, 0, 0, keepdims=False), lax.index_in_dim(bits, 1, 0, keepdims=False)
    carry = lax.convert_element_type(lax.bitwise_not(lo) == _u32_const(2 ** 32 - 1, shape),
                                     _U32)
    neg_hi = lax.add(lax.bitwise_not(hi), carry)
    neg_lo = lax.add(lax.bitwise_not(lo), _u32_const(1, shape))
    flip = hi < _u32_const(2 ** 31, shape)  # u < 1/2: use log1p(-u) on u itself
    x = _fixed_point_float32(jnp.where(flip, hi, neg_hi), jnp.where(flip, lo, neg_lo))
    return jnp.where(flip, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))


def _gumbel(data, shape, dtype, mode):
    info = _dt.finfo(dtype)
    if mode == "highest" and dtype == np.float32:
        return _gumbel_highest(data, shape)
    if mode == "low":
        u = _uniform(data, shape, dtype, float(info.tiny), 1.)
        return lax.neg(lax.log(lax.neg(lax.log(u))))
    # 'high' (and 'highest' beyond float32): a second uniform refines the first below 1/2,
    # where -log(-log1p(-x)) needs it.
    u = _uniform(data, (2, *shape), dtype, 0., 1.)
    high, low = lax.index_in_dim(u, 0, 0, keepdims=False), lax.index_in_dim(u, 1, 0, keepdims=False)
    x = jnp.where(high >= 0.5, high, high + 2.0 ** -info.nmant * low + info.tiny)
    return lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel samples -log(-log(u)); mode 'low' (default), 'high' (two draws per
    value, for a wider tail) or 'highest' (float32: 64 random bits in fixed point)."""
    data, _ = _check_key("gumbel", key)
    dtype = _float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    if mode not in ("high", "low", "highest"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _gumbel(data, _canonical_shape(shape), dtype, mode)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Indices drawn with probabilities softmax(logits, axis), by the Gumbel-max trick (or
    Gumbel top-k without replacement); shape defaults to logits' shape without `axis`."""
    data, _ = _check_key("categorical", key)
    logits = jnp.asarray(logits)
    axis = _canonical_axis(axis, logits.ndim)
    batch_shape = tuple(np.delete(logits.shape, axis).tolist())
    shape = batch_shape if shape is None else _canonical_shape(shape)
    _check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        logits_shape = list(shape[len(prefix):])
        logits_shape.insert(axis, logits.shape[axis])
        g = gumbel(data, (*prefix, *logits_shape), logits.dtype, mode)
        noisy = g + lax.expand_dims(logits, tuple(range(len(prefix))))
        return jnp.argmax(noisy, axis=len(prefix) + axis)
    noisy = logits + gumbel(data, logits.shape, logits.dtype, mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits.shape[axis]}).")
    idx = _top_k_indices(jnp.moveaxis(noisy, axis, -1), k)
    # (*batch, k) -> (k, *batch) -> shape: the k draws lead, as in JAX.
    idx = lax.transpose(idx, (idx.ndim - 1, *range(idx.ndim - 1)))
    return lax.reshape(idx, shape)


def _canonical_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % max(ndim, 1)


def _shuffle(data, x, axis):
    """x shuffled along `axis` by sorting on fresh random 32-bit keys; JAX repeats the sort
    ceil(3 log n / log(2**32 - 1)) times so that key collisions are negligible."""
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(2.0 ** 32 - 1)))
    for _ in range(rounds):
        data, sub = _split2(data)
        _, x = lax.sort_key_val(_random_bits(sub, 32, tuple(x.shape)), x, axis)
    return x


def permutation(key, x, axis=0, independent=False):
    """A random permutation of arange(x) (integer x) or of x along `axis`; with
    independent=True each slice along `axis` is shuffled on its own."""
    data, _ = _check_key("permutation", key)
    if not _is_arraylike(x):
        raise TypeError(f"permutation requires an array-like x, got {type(x).__name__}")
    if not np.ndim(x):
        x = jnp.asarray(x)
        if not _dt.is_int(x.dtype):
            raise TypeError("x must be an integer or at least 1-dimensional")
        n = int(x)  # the size must be static: a traced x fails here, as in JAX
        return _shuffle(data, jnp.arange(n), 0)
    x = jnp.asarray(x)
    axis = _canonical_axis(axis, x.ndim)
    if independent or x.ndim == 1:
        return _shuffle(data, x, axis)
    ind = _shuffle(data, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, ind, axis, unique_indices=True)


def _choice_indices(data, n_inputs, shape, replace, p, mode):
    if p is None:
        if replace:
            return randint(data, shape, 0, n_inputs)
        return lax.slice_in_dim(_shuffle(data, jnp.arange(n_inputs), 0), 0, math.prod(shape))
    p = jnp.asarray(p)
    if not _dt.is_inexact(p.dtype):
        p = p.astype(_dt.default_float())
    if tuple(p.shape) != (n_inputs,):
        raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                         f"p has shape {tuple(p.shape)} and a.shape[axis] is {n_inputs}.")
    if replace:
        p_cuml = jnp.cumsum(p)
        r = p_cuml[-1] * (1 - _uniform(data, shape, p_cuml.dtype, 0., 1.))
        return jnp.searchsorted(p_cuml, r).astype(int)
    g = gumbel(data, (n_inputs,), p.dtype, mode) + jnp.log(p)
    return _top_k_indices(g, math.prod(shape)).astype(int)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """A random sample of `shape` from a (or arange(a) for an int), with or without
    replacement, uniformly or with probabilities p, taken along `axis`."""
    data, _ = _check_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    shape = _canonical_shape(shape)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(arr)  # static, as in JAX
    else:
        axis = _canonical_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None and not replace and arr.ndim:
        # JAX permutes the whole array (not just indices) and keeps the first n_draws.
        perm = permutation(data, arr, axis)
        result = lax.slice_in_dim(perm, 0, n_draws, axis=axis)
        return result.reshape(arr.shape[:axis] + shape + arr.shape[axis + 1:])
    ind = _choice_indices(data, n_inputs, shape, replace, p, mode)
    if arr.ndim == 0:
        return ind.reshape(shape)
    result = jnp.take(arr, ind, axis)
    return result.reshape(arr.shape[:axis] + shape + arr.shape[axis + 1:])
