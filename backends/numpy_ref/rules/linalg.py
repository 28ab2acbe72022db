"""NumPy rule of dot_general: einsum (BLAS where the dtypes allow) with XLA's accumulation."""
import numpy as np

from ....core.primitives import dot_algorithm, linalg
from ._common import BLAS_TYPES, convert, rule, wide_dtype


def _einsum_subscripts(lhs_ndim, rhs_ndim, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    lhs = [next(letters) for _ in range(lhs_ndim)]
    rhs = [next(letters) for _ in range(rhs_ndim)]
    for li, ri in zip(lc + lb, rc + rb):
        rhs[ri] = lhs[li]
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


@rule(linalg.dot_general_p)
def _dot_general(lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                 out_sharding=None):
    out_dtype = linalg.dot_general_out_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    return with_algorithm(precision, lhs, rhs, out_dtype,
                          lambda lhs, rhs, dtype: _dot(lhs, rhs, dimension_numbers, dtype))


def with_algorithm(precision, lhs, rhs, out_dtype, product):
    """product(lhs, rhs, dtype) in `precision`'s algorithm: the operands rounded to its types,
    accumulated in its own, as XLA's CPU backend runs the ones JAX lets it."""
    if not dot_algorithm.is_algorithm(precision):
        return product(lhs, rhs, out_dtype)
    dot_algorithm.check_on_cpu(precision)
    lt, rt, acc = dot_algorithm.compute_types(precision, lhs.dtype, rhs.dtype, out_dtype)
    out = product(convert(lhs, lt), convert(rhs, rt), acc)
    return out if out.dtype == out_dtype else convert(out, out_dtype)


def _dot(lhs, rhs, dimension_numbers, out_dtype):
    compute = linalg.dot_compute_dtype(lhs.dtype, rhs.dtype, out_dtype)
    # float32/64 and complex accumulate in their own type, as XLA on CPU does, which lets
    # einsum hand the contraction to BLAS; narrower floats and integers accumulate widened.
    blas = np.dtype(compute) in BLAS_TYPES
    wide = compute if blas else wide_dtype(compute)
    operands = [x if x.dtype == wide else convert(x, compute).astype(wide) for x in (lhs, rhs)]
    with np.errstate(all="ignore"):
        out = _contract(operands, dimension_numbers, blas)
    out = np.asarray(out).astype(compute, copy=False)
    if out.dtype == out_dtype:
        return out
    return convert(out, out_dtype)
