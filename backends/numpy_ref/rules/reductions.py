"""NumPy rules of the reductions: reduce_*, argmax/argmin, the cumulative reductions, the
generic reduce (a fold of the user's computation) and reduce_precision (bit-exact)."""
import functools

import ml_dtypes
import numpy as np

from ....core import dtypes
from ....core.primitives import reductions as red
from ....core.transforms.batching import AxisData
from ....core.transforms.vmap import batch_jaxpr
from ..backend import interpret_jaxpr
from ._common import BLAS_TYPES, rule, wide_dtype


def _exact_dtype(dtype):
    """float64 for floats (exact for every float dtype), so NumPy handles half precision."""
    return np.dtype(np.float64) if dtypes.kind(dtype) == "f" else dtype


def _exact(x):
    return x.astype(_exact_dtype(x.dtype))


def _accumulate(fn, x, **kwargs):
    """fn (a sum or product) of x: float32/64 and complex accumulate in their own type (NumPy's
    pairwise sums; XLA on CPU does not widen them either), the others widened."""
    with np.errstate(all="ignore"):
        if x.dtype in BLAS_TYPES:
            return np.asarray(fn(x, **kwargs))
        return np.asarray(fn(x.astype(wide_dtype(x.dtype)), **kwargs)).astype(x.dtype)


# ---------------------------------------------------------------- reduce_*

@rule(red.reduce_sum_p)
def _reduce_sum(x, *, axes, out_sharding=None):
    return _accumulate(np.sum, x, axis=axes)


@rule(red.reduce_prod_p)
def _reduce_prod(x, *, axes):
    return _accumulate(np.prod, x, axis=axes)


def _lowest(dtype):
    if dtypes.kind(dtype) in "fc":
        return -np.inf
    return False if dtype == np.bool_ else dtypes.iinfo(dtype).min


def _highest(dtype):
    if dtypes.kind(dtype) in "fc":
        return np.inf
    return True if dtype == np.bool_ else dtypes.iinfo(dtype).max


@rule(red.reduce_max_p)
def _reduce_max(x, *, axes):
    out = np.max(_exact(x), axis=axes, initial=_lowest(x.dtype))
    if x.dtype.kind == "f" or x.dtype == dtypes.bfloat16:
        pos_zero = np.any((x == 0) & ~np.signbit(x), axis=axes)
        out = np.where((out == 0) & pos_zero, np.abs(out), out)
    return np.asarray(out).astype(x.dtype)


@rule(red.reduce_min_p)
def _reduce_min(x, *, axes):
    out = np.min(_exact(x), axis=axes, initial=_highest(x.dtype))
    if x.dtype.kind == "f" or x.dtype == dtypes.bfloat16:
        neg_zero = np.any((x == 0) & np.signbit(x), axis=axes)
        out = np.where((out == 0) & neg_zero, -np.abs(out), out)
    return np.asarray(out).astype(x.dtype)


@rule(red.reduce_and_p)
def _reduce_and(x, *, axes):
    all_ones = np.invert(np.zeros((), x.dtype))
    return np.bitwise_and.reduce(x, axis=axes, initial=all_ones)


@rule(red.reduce_or_p)
def _reduce_or(x, *, axes):
    return np.bitwise_or.reduce(x, axis=axes, initial=np.zeros((), x.dtype))


@rule(red.reduce_xor_p)
def _reduce_xor(x, *, axes):
    return np.bitwise_xor.reduce(x, axis=axes, initial=np.zeros((), x.dtype))


# NumPy's argmax/argmin return the first extremum, and the first NaN if any, as XLA does.
@rule(red.argmax_p)
def _argmax(x, *, axes, index_dtype):
    return np.argmax(_exact(x), axis=axes[0]).astype(index_dtype)


@rule(red.argmin_p)
def _argmin(x, *, axes, index_dtype):
    return np.argmin(_exact(x), axis=axes[0]).astype(index_dtype)


# ---------------------------------------------------------------- cumulative reductions

_BLOCK = 1 << 16


def _cumulative(fn, x, axis, reverse, wide, combine=None):
    """fn (an accumulate along `axis`) of x computed in `wide` and rounded to x's dtype. With
    `combine` (how a running result continues, e.g. np.add for cumsum), the wide values are
    made block by block along the axis, so the temporaries stay small."""
    out = np.empty(x.shape, x.dtype)
    src, dst = np.moveaxis(x, axis, 0), np.moveaxis(out, axis, 0)
    if reverse:
        src, dst = src[::-1], dst[::-1]
    n = src.shape[0]
    step = max(1, n) if combine is None or n == 0 else max(1, _BLOCK // max(1, src[0].size))
    carry = None
    with np.errstate(all="ignore"):
        for start in range(0, n, step):
            block = fn(src[start:start + step].astype(wide), axis=0)
            if carry is not None:
                block = combine(block, carry)
            dst[start:start + step] = block
            carry = block[-1]
    return out


@rule(red.cumsum_p)
def _cumsum(x, *, axis, reverse):
    """Widened sums; +0.0 where every term so far is a zero (XLA adds from a +0.0 start)."""
    out = _cumulative(np.cumsum, x, axis, reverse, wide_dtype(x.dtype), np.add)
    if dtypes.kind(x.dtype) in "fc":
        out += np.zeros((), x.dtype)
    return out


@rule(red.cumprod_p)
def _cumprod(x, *, axis, reverse):
    return _cumulative(np.cumprod, x, axis, reverse, wide_dtype(x.dtype), np.multiply)


@rule(red.cummax_p)
def _cummax(x, *, axis, reverse):
    out = _cumulative(np.maximum.accumulate, x, axis, reverse, _exact_dtype(x.dtype), np.maximum)
    return _signed_zeros(out, x, axis, reverse, positive=True)


@rule(red.cummin_p)
def _cummin(x, *, axis, reverse):
    out = _cumulative(np.minimum.accumulate, x, axis, reverse, _exact_dtype(x.dtype), np.minimum)
    return _signed_zeros(out, x, axis, reverse, positive=False)


def _signed_zeros(out, x, axis, reverse, positive):
    """XLA orders -0.0 below +0.0 in max/min (np.maximum keeps whichever zero came first): a
    zero running max is +0.0 once any +0.0 was seen, a zero running min -0.0 once any -0.0."""
    if dtypes.kind(x.dtype) != "f":
        return out
    zero = out == 0
    if not zero.any():
        return out
    wanted = x == 0
    sign = np.signbit(x)
    wanted &= np.invert(sign, out=sign) if positive else sign
    del sign
    zero &= _cumulative(np.logical_or.accumulate, wanted, axis, reverse, bool, np.logical_or)
    out[zero] = np.zeros((), x.dtype) if positive else -np.zeros((), x.dtype)
    return out


@rule(red.cumlogsumexp_p)
def _cumlogsumexp(x, *, axis, reverse):
    """A running logaddexp in float64 (JAX's formula: where x1 - x2 is NaN, x1 + x2)."""
    return _cumulative(np.frompyfunc(_logaddexp, 2, 1).accumulate, x, axis, reverse,
                       np.float64)


def _logaddexp(a, b):
    delta = a - b
    if delta != delta:
        return a + b
    return max(a, b) + np.log1p(np.exp(-abs(delta)))


# ---------------------------------------------------------------- reduce (generic)

def fold(step, init, elements, valid):
    """acc = init, then acc = step(acc, element) over the valid elements of each row in
    order: the order XLA's reductions apply a user's computation in. `init` holds one scalar
    per operand, `elements` one (rows, elements) array per operand, `valid` is boolean
    (rows, elements)."""
    acc = [np.broadcast_to(i, valid.shape[:1]) for i in init]
    for k in range(valid.shape[1]):
        new = step(acc, [e[:, k] for e in elements])
        acc = [np.where(valid[:, k], b, a) for a, b in zip(acc, new)]
    return acc


@functools.lru_cache(maxsize=64)
def _vectorized(closed, size):
    """The computation (on scalars) vmapped over `size` positions at once."""
    batched, _ = batch_jaxpr(closed, AxisData(None, size), [True] * len(closed.in_avals), True)
    return batched


def apply_computation(closed, acc, elements):
    """closed applied at each position of the 1-d arrays acc and elements (lists)."""
    size = len(acc[0])
    if size == 0:
        return acc
    args = [np.ascontiguousarray(np.broadcast_to(v, (size,)), a.dtype)
            for v, a in zip(list(acc) + list(elements), closed.in_avals)]
    return interpret_jaxpr(_vectorized(closed, size), args)


@rule(red.reduce_p)
def _reduce(*args, computation, jaxpr, dimensions):
    """The reduced dimensions (row-major) folded by the computation, from the init values."""
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    kept = [d for d in range(operands[0].ndim) if d not in dimensions]
    shape = tuple(operands[0].shape[d] for d in kept)
    size = int(np.prod([operands[0].shape[d] for d in dimensions], dtype=np.int64))
    rows = [np.transpose(x, kept + list(dimensions)).reshape((-1, size)) if size else
            np.zeros((int(np.prod(shape, dtype=np.int64)), 0), x.dtype) for x in operands]
    with np.errstate(all="ignore"):
        outs = fold(lambda acc, e: apply_computation(jaxpr, acc, e), list(inits), rows,
                    np.ones(rows[0].shape, bool))
    return [np.asarray(o, x.dtype).reshape(shape) for o, x in zip(outs, operands)]


# ---------------------------------------------------------------- reduce_precision

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


@rule(red.reduce_precision_p)
def _reduce_precision(x, *, exponent_bits, mantissa_bits):
    """XLA's ReducePrecision on the bits: the mantissa rounded to nearest even at
    mantissa_bits, then exponents beyond the narrower range to +-inf (overflow) or +-0
    (underflow, subnormals included); NaNs stay as they are (also with no mantissa bit left,
    as XLA on CPU does)."""
    info = ml_dtypes.finfo(x.dtype)
    uint = _UINT[x.dtype.itemsize]
    bits = np.array(x).view(uint).astype(np.uint64)
    nmant, nexp = int(info.nmant), int(info.bits) - int(info.nmant) - 1
    if mantissa_bits < nmant:
        bits = _round_mantissa(bits, nmant - mantissa_bits)
    if exponent_bits < nexp:
        bits = _clamp_exponent(bits, nmant, nexp, exponent_bits, int(info.bits))
    out = bits.astype(uint).view(x.dtype)
    with np.errstate(invalid="ignore"):  # NaN tests on half floats warn in NumPy
        return np.where(np.isnan(x), x, out)


def _round_mantissa(bits, dropped):
    """The low `dropped` mantissa bits rounded away, to nearest, ties to even."""
    last_kept = (bits >> np.uint64(dropped)) & np.uint64(1)
    bias = np.uint64((1 << (dropped - 1)) - 1) + last_kept
    return (bits + bias) & ~np.uint64((1 << dropped) - 1)


def _clamp_exponent(bits, nmant, nexp, exponent_bits, width):
    """Exponents above the narrow format's range become infinities, those at or below its
    smallest normal exponent (subnormals of the narrow format) signed zeros."""
    exp_mask = np.uint64(((1 << nexp) - 1) << nmant)
    sign = bits & np.uint64(1 << (width - 1))
    bias, narrow_bias = (1 << (nexp - 1)) - 1, (1 << (exponent_bits - 1)) - 1
    exponent = bits & exp_mask
    overflow = exponent > np.uint64((bias + narrow_bias) << nmant)
    underflow = exponent <= np.uint64((bias - narrow_bias) << nmant)
    return np.where(overflow, sign | exp_mask, np.where(underflow, sign, bits))
