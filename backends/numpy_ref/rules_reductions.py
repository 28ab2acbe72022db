"""NumPy rules of the reduction, dot_general and sort primitives: the oracle's definitions."""
import numpy as np

from ...core import dtypes
from ...core.primitives import linalg
from ...core.primitives import reductions as red
from ...core.primitives import sorting
from ..base import register_rule
from .backend import NumpyRefBackend
from .rules import _convert

rule = lambda *prims: register_rule(NumpyRefBackend, *prims)  # noqa: E731


def _wide(dtype):
    """The dtype sums and products are accumulated in before rounding back to `dtype`:
    exact for integers (wrapping arithmetic agrees modulo 2**bits), near-exact for floats."""
    return {"f": np.float64, "c": np.complex128, "i": np.int64, "u": np.uint64,
            "b": np.int64}[dtypes.kind(dtype)]


def _exact_dtype(dtype):
    """float64 for floats (exact for every float dtype), so NumPy handles half precision."""
    return np.dtype(np.float64) if dtypes.kind(dtype) == "f" else dtype


def _exact(x):
    return x.astype(_exact_dtype(x.dtype))


def _accumulate(fn, x, **kwargs):
    """fn (a sum or product) of x: float32/64 and complex accumulate in their own type (NumPy's
    pairwise sums; XLA on CPU does not widen them either), the others widened."""
    with np.errstate(all="ignore"):
        if x.dtype in _BLAS_TYPES:
            return np.asarray(fn(x, **kwargs))
        return np.asarray(fn(x.astype(_wide(x.dtype)), **kwargs)).astype(x.dtype)


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


# NumPy's argmax/argmin return the first extremum, and the first NaN if any, as XLA does.
@rule(red.argmax_p)
def _argmax(x, *, axes, index_dtype):
    return np.argmax(_exact(x), axis=axes[0]).astype(index_dtype)


@rule(red.argmin_p)
def _argmin(x, *, axes, index_dtype):
    return np.argmin(_exact(x), axis=axes[0]).astype(index_dtype)


# ---------------------------------------------------------------- cumulative reductions

def _cumulative(fn, x, axis, reverse, wide):
    flip = (lambda v: np.flip(v, axis)) if reverse else (lambda v: v)
    with np.errstate(all="ignore"):
        out = fn(flip(x.astype(wide)), axis=axis)
    return flip(out).astype(x.dtype)


@rule(red.cumsum_p)
def _cumsum(x, *, axis, reverse):
    return _cumulative(np.cumsum, x, axis, reverse, _wide(x.dtype))


@rule(red.cumprod_p)
def _cumprod(x, *, axis, reverse):
    return _cumulative(np.cumprod, x, axis, reverse, _wide(x.dtype))


@rule(red.cummax_p)
def _cummax(x, *, axis, reverse):
    out = _cumulative(np.maximum.accumulate, x, axis, reverse, _exact_dtype(x.dtype))
    return _signed_zeros(out, x, axis, reverse, positive=True)


@rule(red.cummin_p)
def _cummin(x, *, axis, reverse):
    out = _cumulative(np.minimum.accumulate, x, axis, reverse, _exact_dtype(x.dtype))
    return _signed_zeros(out, x, axis, reverse, positive=False)


def _signed_zeros(out, x, axis, reverse, positive):
    """XLA orders -0.0 below +0.0 in max/min (np.maximum keeps whichever zero came first): a
    zero running max is +0.0 once any +0.0 was seen, a zero running min -0.0 once any -0.0."""
    if dtypes.kind(x.dtype) != "f":
        return out
    sign_wanted = ~np.signbit(x) if positive else np.signbit(x)
    seen = _cumulative(np.logical_or.accumulate, (x == 0) & sign_wanted, axis, reverse, bool)
    zero = np.zeros((), x.dtype) if positive else -np.zeros((), x.dtype)
    return np.where((out == 0) & seen, zero, out).astype(x.dtype)


# ---------------------------------------------------------------- dot_general

def _einsum_subscripts(lhs_ndim, rhs_ndim, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    lhs = [next(letters) for _ in range(lhs_ndim)]
    rhs = [next(letters) for _ in range(rhs_ndim)]
    for l, r in zip(lc + lb, rc + rb):
        rhs[r] = lhs[l]
    out = ([lhs[i] for i in lb] + [lhs[i] for i in range(lhs_ndim) if i not in lc + lb]
           + [rhs[i] for i in range(rhs_ndim) if i not in rc + rb])
    return f"{''.join(lhs)},{''.join(rhs)}->{''.join(out)}"


def _contract(operands, dimension_numbers, blas):
    """The contraction; without batch dimensions dot_general's output order (lhs free dims,
    then rhs free dims) is tensordot's."""
    (lc, rc), (lb, _) = dimension_numbers
    lhs, rhs = operands
    if blas and not lb and len(lc) == 1 and lhs.ndim <= 2 and rhs.ndim <= 2:
        # matmul reads transposed views through BLAS flags, with no copies
        return np.matmul(np.moveaxis(lhs, lc[0], -1), np.moveaxis(rhs, rc[0], 0))
    if blas and not lb:
        return np.tensordot(*operands, axes=(tuple(lc), tuple(rc)))
    return np.einsum(_einsum_subscripts(lhs.ndim, rhs.ndim, dimension_numbers), *operands,
                     optimize=blas)


_BLAS_TYPES = tuple(map(np.dtype, ("float32", "float64", "complex64", "complex128")))


@rule(linalg.dot_general_p)
def _dot_general(lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                 out_sharding=None):
    out_dtype = linalg.dot_general_out_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    compute = linalg.dot_compute_dtype(lhs.dtype, rhs.dtype, out_dtype)
    # float32/64 and complex accumulate in their own type, as XLA on CPU does, which lets
    # einsum hand the contraction to BLAS; narrower floats and integers accumulate widened.
    blas = np.dtype(compute) in _BLAS_TYPES
    wide = compute if blas else _wide(compute)
    operands = [x if x.dtype == wide else
                _convert(x, new_dtype=compute, weak_type=False, sharding=None).astype(wide)
                for x in (lhs, rhs)]
    with np.errstate(all="ignore"):
        out = _contract(operands, dimension_numbers, blas)
    out = np.asarray(out).astype(compute, copy=False)
    if out.dtype == out_dtype:
        return out
    return _convert(out, new_dtype=out_dtype, weak_type=False, sharding=None)


# ---------------------------------------------------------------- sort

def _sort_keys(x):
    """Keys whose lexicographic order is XLA's: NaNs last (all NaNs tie), -0.0 == 0.0,
    complex numbers by real part, then imaginary part."""
    if dtypes.kind(x.dtype) == "c":
        return _sort_keys(np.real(x)) + _sort_keys(np.imag(x))
    if dtypes.kind(x.dtype) == "f":
        x = x.astype(np.float64)
        nan = np.isnan(x)
        return [nan, np.where(nan, 0.0, x)]
    return [x]


@rule(sorting.sort_p)
def _sort(*operands, dimension, is_stable, num_keys):
    last = [np.moveaxis(x, dimension, -1) for x in operands]
    keys = [k for x in last[:num_keys] for k in _sort_keys(x)]
    order = np.lexsort(keys[::-1], axis=-1)  # lexsort is stable; its last key is primary
    return [np.moveaxis(np.take_along_axis(x, order, axis=-1), -1, dimension) for x in last]
