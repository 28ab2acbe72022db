"""The rules: each refjax primitive written with the Array API standard's functions, with XLA's
semantics where the standard leaves a choice (NaN propagation, -0.0, integer division by zero,
float-to-integer conversion), and the primitives the standard cannot express, with the reason."""
import numpy as np

from refjax.backends import register_rule, run_callback
from refjax.extend.core import primitives

from . import computations, convolution, gather, indexing, windows

# Primitives the standard has no way to compute; the conformance kit reports them as not
# implemented with this reason.
UNEXPRESSIBLE = {
    **{name: "no special functions in the Array API standard" for name in (
        "erf", "erfc", "erf_inv", "lgamma", "digamma", "igamma", "igammac", "igamma_grad_a",
        "random_gamma_grad", "bessel_i0e", "bessel_i1e", "zeta", "polygamma",
        "regularized_incomplete_beta")},
    **{name: "no LAPACK routine in the Array API standard (linalg is an optional extension "
             "without it)" for name in (
        "cholesky", "cholesky_update", "lu", "lu_pivots_to_permutation", "qr", "geqrf",
        "householder_product", "ormqr", "eig", "eigh", "svd", "schur", "hessenberg",
        "tridiagonal", "triangular_solve", "tridiagonal_solve", "symmetric_product")},
    "fft": "fft is an optional extension; this backend does not lower XLA's fft_type to it",
    "bitcast_convert_type": "the standard has no bit reinterpretation of arrays",
    "complex": "the standard has no complex number from its parts (x + 1j * y turns an "
               "infinite y into a NaN real part)",
    "population_count": "the standard has no bit counting",
    "clz": "the standard has no bit counting",
    "reduce_precision": "the standard cannot round to an arbitrary exponent/mantissa width",
    "rng_bit_generator": "the standard has no random number generation",
    "rng_uniform": "the standard has no random number generation",
    "sharding_constraint": "this backend has a single device: no layout to constrain",
}


def xp_dtype(backend, dtype):
    """The namespace's dtype of a NumPy dtype; NotImplementedError if it has none."""
    name = "bool" if np.dtype(dtype) == np.bool_ else np.dtype(dtype).name
    found = getattr(backend.xp, name, None)
    if found is None:
        raise NotImplementedError(f"the {backend.name} backend has no {name} arrays (the Array "
                                  f"API standard has no {name})")
    return found


def _is_float(b, x):
    return b.xp.isdtype(x.dtype, ("real floating", "complex floating"))


def _is_bool(b, x):
    return x.dtype == b.xp.bool


# ---------------------------------------------------------------- elementwise

_UNARY = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
          "atanh", "exp", "expm1", "log", "log1p", "sqrt", "floor", "ceil", "abs", "real",
          "imag", "conj")
_XP_NAME = {"neg": "negative"}
_BINARY = {"add": "add", "add_any": "add", "sub": "subtract", "mul": "multiply",
           "nextafter": "nextafter", "eq": "equal", "ne": "not_equal"}
_COMPARE = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}


def _unary(name):
    return lambda b, x, **_: getattr(b.xp, _XP_NAME.get(name, name))(x)


def _binary(xp_name):
    return lambda b, x, y, **_: getattr(b.xp, xp_name)(x, y)


def _atan2(b, x, y, **_):
    if b.xp.isdtype(x.dtype, "complex floating"):
        raise NotImplementedError(f"the {b.name} backend has no {dtype_np(x.dtype).name} atan2 "
                                  "(the standard's atan2 takes real operands only)")
    return b.xp.atan2(x, y)


def _compare(xp_name):
    def rule(b, x, y, **_):
        """Booleans are ordered False < True (the standard orders only numbers)."""
        if _is_bool(b, x):
            x, y = b.xp.astype(x, b.xp.int8), b.xp.astype(y, b.xp.int8)
        return getattr(b.xp, xp_name)(x, y)
    return rule


def _neg(b, x, **_):
    return b.xp.negative(x)


def _sign(b, x, **_):
    """XLA keeps the sign of zeros and gives NaN for NaN."""
    return b.xp.where(x == 0, x, b.xp.sign(x)) if _is_float(b, x) else b.xp.sign(x)


def _max_min(fn):
    def rule(b, x, y, **_):
        """NaN wins and -0.0 < +0.0, as in XLA (the standard leaves both unspecified)."""
        if b.xp.isdtype(x.dtype, "complex floating"):
            raise NotImplementedError(f"the {b.name} backend has no {dtype_np(x.dtype).name} "
                                      f"{fn} (the standard orders only real numbers)")
        if _is_bool(b, x):  # max of booleans is `or`, min `and`
            return (b.xp.logical_or if fn == "maximum" else b.xp.logical_and)(x, y)
        out = getattr(b.xp, fn)(x, y)
        if not _is_float(b, x):
            return out
        out = b.xp.where((x == 0) & (y == 0), _signed_zero(b, fn, x, y), out)
        return b.xp.where(b.xp.isnan(x), x, b.xp.where(b.xp.isnan(y), y, out))
    return rule


def _signed_zero(b, fn, x, y):
    """Of two zeros, max is +0.0 unless both are -0.0 (x + y), min -0.0 unless both are
    +0.0 (-(-x + -y))."""
    return x + y if fn == "maximum" else -(-x + -y)


def _bool_or_bitwise(logical, bitwise):
    def rule(b, x, y):
        return getattr(b.xp, logical if _is_bool(b, x) else bitwise)(x, y)
    return rule


def _not(b, x):
    return b.xp.logical_not(x) if _is_bool(b, x) else b.xp.bitwise_invert(x)


def _div(b, x, y):
    """Integers: truncated toward zero, x / 0 == -1 (XLA on CPU)."""
    xp = b.xp
    if _is_float(b, x):
        return xp.divide(x, y)
    safe = xp.where(y == 0, xp.ones_like(y), y)
    q = xp.abs(x) // xp.abs(safe) if xp.isdtype(x.dtype, "unsigned integer") else \
        xp.floor_divide(xp.abs(x), xp.abs(safe))
    q = xp.where((x < 0) != (safe < 0), -q, q)
    return xp.where(y == 0, xp.full_like(x, -1), q)


def _rem(b, x, y):
    """fmod (sign of x); for integers x % 0 == x (XLA on CPU)."""
    xp = b.xp
    if _is_float(b, x):
        r = xp.remainder(x, y)
        fixed = xp.where((r != 0) & ((r < 0) != (x < 0)), r - y, r)
        return xp.where(fixed == 0, xp.abs(fixed) * xp.sign(x + 0.0 * y) + 0.0 * x, fixed)
    safe = xp.where(y == 0, xp.ones_like(y), y)
    r = xp.remainder(x, safe)
    r = xp.where((r != 0) & ((r < 0) != (x < 0)), r - safe, r)
    return xp.where(y == 0, x, r)


def _pow(b, x, y):
    return b.xp.pow(x, b.xp.astype(y, x.dtype))


def _integer_pow(b, x, *, y):
    """Repeated squaring in x's dtype, as XLA expands it."""
    xp = b.xp
    base = xp.divide(xp.ones_like(x), x) if y < 0 else x
    out, n = xp.ones_like(x), abs(y)
    while n:
        if n & 1:
            out = xp.multiply(out, base)
        n >>= 1
        base = xp.multiply(base, base) if n else base
    return out


def _square(b, x):
    return b.xp.multiply(x, x)


def _rsqrt(b, x, **_):
    return b.xp.divide(b.xp.ones_like(x), b.xp.sqrt(x))


def _exp2(b, x, **_):
    return b.xp.pow(b.xp.full_like(x, 2), x)


def _logistic(b, x, **_):
    return b.xp.divide(b.xp.ones_like(x), b.xp.add(b.xp.ones_like(x), b.xp.exp(-x)))


def _cbrt(b, x, **_):
    """The real cube root: |x| ** (1/3) in float64 and one Newton step (so perfect cubes come
    out exact), with x's sign; zeros, infinities and NaN are their own roots."""
    xp = b.xp
    a = xp.abs(xp.astype(x, xp.float64))
    special = (a == 0) | xp.isinf(a) | xp.isnan(a)
    a = xp.where(special, xp.ones_like(a), a)
    r = xp.pow(a, 1 / 3)
    r = r - (r * r * r - a) / (3 * r * r)
    return xp.where(special, x, xp.copysign(xp.astype(r, x.dtype), x))


def _shift(kind):
    def rule(b, x, y):
        """Amounts outside [0, bits) shift every bit out, as XLA (the standard leaves them
        undefined): 0, or the sign for an arithmetic right shift."""
        xp, bits = b.xp, b.xp.iinfo(x.dtype).bits
        ok = (y >= 0) & (y < bits)
        safe = xp.where(ok, y, xp.zeros_like(y))
        if kind == "arithmetic":
            return _arithmetic_right(b, x, xp.where(ok, y, xp.full_like(y, bits - 1)))
        out = (xp.bitwise_left_shift if kind == "left" else xp.bitwise_right_shift)(x, safe)
        if kind == "logical" and xp.isdtype(x.dtype, "signed integer"):
            out = out & _low_bits(b, bits - safe)
        return xp.where(ok, out, xp.zeros_like(x))
    return rule


def _arithmetic_right(b, x, n):
    """x >> n filling with the top bit; unsigned x is read as two's complement, as XLA."""
    xp = b.xp
    out = xp.bitwise_right_shift(x, n)
    if xp.isdtype(x.dtype, "signed integer"):
        return out
    ones = xp.full_like(x, xp.iinfo(x.dtype).max)
    top = xp.bitwise_right_shift(x, xp.full_like(x, xp.iinfo(x.dtype).bits - 1)) == 1
    fill = xp.bitwise_invert(xp.bitwise_right_shift(ones, n))
    return xp.where(top, out | fill, out)


def _low_bits(b, n):
    """A mask of the n low bits (1 <= n <= bits) in n's signed dtype: ~(-1 << n), all ones
    for n == bits."""
    xp, bits = b.xp, b.xp.iinfo(n.dtype).bits
    full = n >= bits
    mask = xp.bitwise_invert(xp.bitwise_left_shift(xp.full_like(n, -1),
                                                   xp.where(full, xp.zeros_like(n), n)))
    return xp.where(full, xp.full_like(n, -1), mask)


def _mulhi(b, x, y):
    """The high half of the double-width product: in 64 bits for operands of up to 32, from
    32-bit limbs for 64-bit ones."""
    xp, bits = b.xp, b.xp.iinfo(x.dtype).bits
    if bits == 64:
        return _mulhi64(b, x, y)
    wide = xp.int64 if xp.isdtype(x.dtype, "signed integer") else xp.uint64
    product = xp.astype(x, wide) * xp.astype(y, wide)
    return xp.astype(xp.bitwise_right_shift(product, xp.asarray(bits, dtype=wide)), x.dtype)


def _mulhi64(b, x, y):
    """64-bit mulhi from 32-bit limbs multiplied in uint64 (each product fits); signed
    operands are read as unsigned (two's complement) and corrected: hi(x*y) = hi(ux*uy) -
    (x < 0) * uy - (y < 0) * ux, modulo 2**64."""
    xp = b.xp
    ux, uy = _as_unsigned(b, x), _as_unsigned(b, y)
    low, shift = xp.asarray(0xFFFFFFFF, dtype=xp.uint64), xp.asarray(32, dtype=xp.uint64)
    xl, xh, yl, yh = ux & low, ux >> shift, uy & low, uy >> shift
    lh, hl = xl * yh, xh * yl
    mid = ((xl * yl) >> shift) + (lh & low) + (hl & low)
    hi = xh * yh + (lh >> shift) + (hl >> shift) + (mid >> shift)
    if x.dtype == xp.uint64:
        return hi
    zero = xp.zeros_like(hi)
    hi = hi - xp.where(x < 0, uy, zero) - xp.where(y < 0, ux, zero)
    top = xp.asarray(2 ** 63, dtype=xp.uint64)
    rest = xp.astype(hi & (top - 1), xp.int64)  # < 2**63: representable
    return xp.where(hi >= top, rest + xp.asarray(-2 ** 63, dtype=xp.int64), rest)


def _as_unsigned(b, x):
    """An int64 buffer's two's complement bits as uint64 (without an out-of-range cast)."""
    xp = b.xp
    if x.dtype == xp.uint64:
        return x
    rest = xp.astype(x & xp.asarray(2 ** 63 - 1, dtype=xp.int64), xp.uint64)
    return xp.where(x < 0, rest + xp.asarray(2 ** 63, dtype=xp.uint64), rest)


def _is_finite(b, x):
    return b.xp.isfinite(x)


def _round(b, x, *, rounding_method):
    xp = b.xp
    if int(rounding_method) == 1:  # TO_NEAREST_EVEN
        return xp.round(x)
    away = xp.sign(x) * xp.floor(xp.abs(x) + 0.5)
    return xp.where(xp.abs(x) >= 2.0 ** 52, x, xp.where(away == 0, 0.0 * x, away))


def _select_n(b, which, *cases):
    xp = b.xp
    if _is_bool(b, which):
        return xp.where(which, cases[-1], cases[0]) if len(cases) == 2 else cases[0]
    out = cases[0]
    for i, case in enumerate(cases[1:], 1):
        out = xp.where(which == i, case, out)
    return out


def _clamp(b, lo, x, hi):
    return _max_min("minimum")(b, _max_min("maximum")(b, x, lo), hi)


def _convert(b, x, *, new_dtype, **_):
    """Float to integer as XLA: truncated, saturated at the integer range, NaN to 0."""
    xp, target = b.xp, xp_dtype(b, new_dtype)
    if _is_float(b, x) and not np.issubdtype(new_dtype, np.inexact) and new_dtype != np.bool_:
        if xp.isdtype(x.dtype, "complex floating"):
            x = xp.real(x)
        info = np.iinfo(new_dtype)
        x = xp.where(xp.isnan(x), xp.zeros_like(x), xp.trunc(x))
        x = xp.clip(x, float(info.min), float(info.max))
        big = x >= float(info.max)
        return xp.where(big, xp.full(x.shape, info.max, dtype=target), xp.astype(x, target))
    if xp.isdtype(x.dtype, "complex floating") and not np.issubdtype(new_dtype, np.complexfloating):
        x = xp.real(x)
    return xp.astype(x, target)


# ---------------------------------------------------------------- structural

def _broadcast_in_dim(b, x, *, shape, broadcast_dimensions, **_):
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return b.xp.broadcast_to(b.xp.reshape(x, tuple(expanded)), tuple(shape))


def _reshape(b, x, *, new_sizes, **_):
    return b.xp.reshape(x, tuple(new_sizes))


def _transpose(b, x, *, permutation):
    return b.xp.permute_dims(x, tuple(permutation))


def _squeeze(b, x, *, dimensions):
    return b.xp.squeeze(x, axis=tuple(dimensions)) if dimensions else x


def _rev(b, x, *, dimensions):
    return b.xp.flip(x, axis=tuple(dimensions)) if dimensions else x


def _concatenate(b, *xs, dimension):
    return b.xp.concat(list(xs), axis=dimension)


def _iota(b, *, dtype, shape, dimension, **_):
    ramp = b.xp.astype(b.xp.arange(shape[dimension]), xp_dtype(b, dtype))
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return b.xp.broadcast_to(b.xp.reshape(ramp, tuple(expanded)), tuple(shape))


def _identity(b, x, **_):
    return x


def _barrier(b, *xs):
    return list(xs)


# ---------------------------------------------------------------- reductions

def _reduce(fn, identity=None):
    def rule(b, x, *, axes, **_):
        axes = tuple(axes)
        if not axes:
            return x
        if _is_bool(b, x):  # the standard orders only numbers: max is any, min all
            return (b.xp.any if fn == "max" else b.xp.all)(x, axis=axes)
        if b.xp.isdtype(x.dtype, "complex floating"):
            raise NotImplementedError(f"the {b.name} backend has no {dtype_np(x.dtype).name} "
                                      f"reduce_{fn} (the standard orders only real numbers)")
        if identity is not None and any(x.shape[a] == 0 for a in axes):
            shape = tuple(n for i, n in enumerate(x.shape) if i not in axes)
            return b.xp.full(shape, identity(x.dtype), dtype=x.dtype)
        return getattr(b.xp, fn)(x, axis=axes)
    return rule


def _lowest(dtype):
    return -np.inf if np.issubdtype(dtype_np(dtype), np.floating) else np.iinfo(dtype_np(dtype)).min


def _highest(dtype):
    return np.inf if np.issubdtype(dtype_np(dtype), np.floating) else np.iinfo(dtype_np(dtype)).max


def dtype_np(dtype):
    """The NumPy dtype of a namespace dtype (by name)."""
    return np.dtype(str(dtype).rsplit(".", 1)[-1])


def _reduce_sum(b, x, *, axes, **_):
    return b.xp.sum(x, axis=tuple(axes), dtype=x.dtype) if axes else x


def _reduce_prod(b, x, *, axes, **_):
    return b.xp.prod(x, axis=tuple(axes), dtype=x.dtype) if axes else x


def _reduce_bits(logical, bitwise, identity):
    def rule(b, x, *, axes, **_):
        """Booleans with all/any (xor: an odd count); integers bit by bit, a fold over the
        reduced elements (the standard has no bitwise reductions)."""
        xp, axes = b.xp, tuple(axes)
        if not axes:
            return x
        if _is_bool(b, x):
            return logical(b, x, axes)
        rest = [d for d in range(x.ndim) if d not in axes]
        n = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
        flat = xp.reshape(xp.permute_dims(x, tuple(rest) + axes),
                          tuple(x.shape[d] for d in rest) + (n,))
        out = xp.zeros(flat.shape[:-1], dtype=x.dtype)
        out = xp.bitwise_invert(out) if identity == -1 else out
        for k in range(flat.shape[-1]):
            out = getattr(xp, bitwise)(out, flat[..., k])
        return out
    return rule


def _all(b, x, axes):
    return b.xp.all(x, axis=axes)


def _any(b, x, axes):
    return b.xp.any(x, axis=axes)


def _odd(b, x, axes):
    return b.xp.sum(b.xp.astype(x, b.xp.int64), axis=axes) % 2 == 1


def _arg(fn):
    def rule(b, x, *, axes, index_dtype):
        """NaNs count as the extreme, the first one wins (as XLA)."""
        xp = b.xp
        if _is_bool(b, x):  # the standard orders only numbers
            x = xp.astype(x, xp.int8)
        if _is_float(b, x):
            nan = xp.isnan(x)
            first_nan = xp.argmax(xp.astype(nan, xp.int8), axis=axes[0])
            out = getattr(xp, fn)(xp.where(nan, xp.zeros_like(x), x), axis=axes[0])
            return xp.where(xp.any(nan, axis=axes[0]), first_nan, out)
        return getattr(xp, fn)(x, axis=axes[0])
    return rule


# ---------------------------------------------------------------- dot_general

def _dot_general(b, lhs, rhs, *, dimension_numbers, preferred_element_type=None, **_):
    """Batch dimensions first, then lhs free, rhs free: as a batched matmul."""
    xp = b.xp
    (lc, rc), (lb, rb) = dimension_numbers
    out_dtype = product_dtype(b, lhs, rhs, preferred_element_type)
    lhs, rhs = xp.astype(lhs, out_dtype), xp.astype(rhs, out_dtype)
    lf = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    batch = [lhs.shape[d] for d in lb]
    size = lambda x, dims: int(np.prod([x.shape[d] for d in dims], dtype=np.int64))  # noqa: E731
    a = xp.reshape(xp.permute_dims(lhs, tuple(lb) + tuple(lf) + tuple(lc)),
                   tuple(batch) + (size(lhs, lf), size(lhs, lc)))
    c = xp.reshape(xp.permute_dims(rhs, tuple(rb) + tuple(rc) + tuple(rf)),
                   tuple(batch) + (size(rhs, rc), size(rhs, rf)))
    out = _matmul(b, a, c)
    return xp.reshape(out, tuple(batch) + tuple(lhs.shape[d] for d in lf) +
                      tuple(rhs.shape[d] for d in rf))


def product_dtype(b, lhs, rhs, preferred):
    """The dtype a product of lhs and rhs is computed and returned in."""
    return b.xp.result_type(lhs, rhs) if preferred is None else xp_dtype(b, preferred)


def _ragged_dot_general(b, lhs, rhs, group_sizes, *, preferred_element_type, **_):
    """The sum over groups of (lhs with the rows outside the group zeroed) @ the group's rhs:
    XLA's formulation, so an inf in any group's rhs spreads to every row as in XLA."""
    xp = b.xp
    dtype = product_dtype(b, lhs, rhs, preferred_element_type)
    lhs, rhs = xp.astype(lhs, dtype), xp.astype(rhs, dtype)
    ends = xp.cumulative_sum(group_sizes)
    rows = xp.reshape(xp.astype(xp.arange(lhs.shape[0]), group_sizes.dtype), (-1, 1))
    out = xp.zeros((lhs.shape[0], rhs.shape[2]), dtype=dtype)
    for j in range(rhs.shape[0]):
        inside = (rows >= ends[j] - group_sizes[j]) & (rows < ends[j])
        part = _matmul(b, xp.where(inside, lhs, xp.zeros_like(lhs)), rhs[j, ...])
        out = xp.logical_or(out, part) if _is_bool(b, out) else out + part
    return out


def _matmul(b, a, c):
    """matmul, with an empty contraction giving zeros (some libraries refuse k == 0)."""
    if a.shape[-1] == 0:
        return b.xp.zeros(a.shape[:-1] + (c.shape[-1],), dtype=a.dtype)
    if _is_bool(b, a):
        return b.xp.astype(b.xp.matmul(b.xp.astype(a, b.xp.int32), b.xp.astype(c, b.xp.int32)),
                           b.xp.bool)
    return b.xp.matmul(a, c)


# ---------------------------------------------------------------- calls and control flow

def _call(param):
    def rule(b, *args, **params):
        return b.interpret(params[param], list(args))
    return rule


def _cond(b, index, *operands, branches):
    i = int(np.clip(int(np.asarray(b.to_numpy(index, None))), 0, len(branches) - 1))
    return b.interpret(branches[i], list(operands))


def _while(b, *args, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    cond_consts = list(args[:cond_nconsts])
    body_consts = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
    while bool(np.asarray(b.to_numpy(b.interpret(cond_jaxpr, cond_consts + carry)[0], None))):
        carry = b.interpret(body_jaxpr, body_consts + carry)
    return carry


def _scan(b, *args, jaxpr, length, num_carry, num_consts, reverse, **_):
    """ys[i] is the body's output at step i; reverse only changes the order of the steps."""
    xp = b.xp
    consts, carry = list(args[:num_consts]), list(args[num_consts:num_consts + num_carry])
    xs, steps = args[num_consts + num_carry:], [None] * length
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = b.interpret(jaxpr, consts + carry + [x[i, ...] for x in xs])
        carry, steps[i] = outs[:num_carry], outs[num_carry:]
    ys = [xp.stack([step[k] for step in steps]) if length else
          xp.zeros((0,) + tuple(a.shape), dtype=xp_dtype(b, a.dtype))
          for k, a in enumerate(jaxpr.out_avals[num_carry:])]
    return carry + ys


def _custom_linear_solve(b, *args, const_lengths, jaxprs):
    """The solve jaxpr on its consts and the right-hand side (the other jaxprs are for
    transformations)."""
    start = const_lengths.matvec + const_lengths.vecmat
    consts = list(args[start:start + const_lengths.solve])
    return b.interpret(jaxprs.solve, consts + list(args[sum(const_lengths):]))


def _empty(b, *, shape, dtype, **_):
    return b.xp.zeros(tuple(shape), dtype=xp_dtype(b, dtype))  # XLA's values on CPU


# ---------------------------------------------------------------- host callbacks

def _host_callback(prim):
    def rule(b, *bufs, **params):
        """The Python function called on the operands moved to the host by DLPack (the
        standard's interchange), its results checked and moved back."""
        outs = run_callback(b, prim, [b.to_numpy(x, None) for x in bufs], params)
        return [b.xp.asarray(o) for o in outs]
    return rule


# ---------------------------------------------------------------- registration

def _rules():
    table = {name: _unary(name) for name in _UNARY}
    table.update({name: _binary(fn) for name, fn in _BINARY.items()})
    table.update({name: _compare(fn) for name, fn in _COMPARE.items()})
    table.update(
        neg=_neg, sign=_sign, atan2=_atan2, max=_max_min("maximum"), min=_max_min("minimum"),
        div=_div, rem=_rem, pow=_pow, integer_pow=_integer_pow, square=_square, rsqrt=_rsqrt,
        exp2=_exp2, logistic=_logistic, is_finite=_is_finite, round=_round, cbrt=_cbrt,
        shift_left=_shift("left"), shift_right_logical=_shift("logical"),
        shift_right_arithmetic=_shift("arithmetic"), mulhi=_mulhi,
        select_n=_select_n, clamp=_clamp, convert_element_type=_convert,
        broadcast_in_dim=_broadcast_in_dim, reshape=_reshape, transpose=_transpose,
        squeeze=_squeeze, rev=_rev, concatenate=_concatenate, iota=_iota,
        copy=_identity, copy_p=_identity,
        sharding_constraint=_identity, stop_gradient=_identity,
        reduce_sum=_reduce_sum, reduce_prod=_reduce_prod,
        reduce_max=_reduce("max", _lowest), reduce_min=_reduce("min", _highest),
        reduce_and=_reduce_bits(_all, "bitwise_and", -1), reduce_or=_reduce_bits(_any, "bitwise_or", 0),
        reduce_xor=_reduce_bits(_odd, "bitwise_xor", 0), optimization_barrier=_barrier,
        argmax=_arg("argmax"), argmin=_arg("argmin"),
        dot_general=_dot_general, cond=_cond, **{"while": _while},
        jit=_call("jaxpr"), pjit=_call("jaxpr"), remat=_call("jaxpr"),
        custom_jvp_call=_call("call_jaxpr"), custom_vjp_call=_call("call_jaxpr"),
        remat2=_call("jaxpr"), composite=_call("jaxpr"), custom_vmap_call=_call("call"),
        linear_call=_call("callee"), name=_identity, scan=_scan,
        custom_linear_solve=_custom_linear_solve, empty=_empty,
        conv_general_dilated=convolution.conv_general_dilated, reduce=computations.reduce,
        ragged_dot_general=_ragged_dot_general)
    table["and"] = _bool_or_bitwise("logical_and", "bitwise_and")
    table["or"] = _bool_or_bitwise("logical_or", "bitwise_or")
    table["xor"] = _bool_or_bitwise("logical_xor", "bitwise_xor")
    table["not"] = _not
    table.update({p.name: _host_callback(p) for p in (
        primitives.debug_callback_p, primitives.debug_print_p, primitives.pure_callback_p,
        primitives.io_callback_p)})
    extrema = _max_min("maximum"), _max_min("minimum")
    table.update(indexing.rules(*extrema), **gather.rules(*extrema), **windows.rules(*extrema))
    return table


def register_all(backend_cls):
    """Register every rule of this module for `backend_cls` (primitives refjax has)."""
    prims = {p.name: p for p in (getattr(primitives, n) for n in dir(primitives))}
    for name, fn in _rules().items():
        if name in prims:
            register_rule(backend_cls, prims[name])(fn)


__all__ = ["UNEXPRESSIBLE", "register_all", "xp_dtype"]
