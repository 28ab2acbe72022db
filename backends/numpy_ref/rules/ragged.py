"""NumPy rule of ragged_dot_general: the sum over groups of (lhs with the rows outside the
group zeroed) times the group's rhs matrix, accumulated widened and rounded once: XLA's
formulation, so non-finite values spread as in XLA (an inf in any rhs group makes every row
NaN)."""
import numpy as np

from ....core.primitives import ragged
from ._common import rule, wide_dtype
from .linalg import with_algorithm


@rule(ragged.ragged_dot_general_p)
def _ragged_dot_general(lhs, rhs, group_sizes, *, precision, preferred_element_type, **_):
    dtype = ragged._out_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    return with_algorithm(precision, lhs, rhs, dtype,
                          lambda lhs, rhs, dtype: _ragged_dot(lhs, rhs, group_sizes, dtype))


def _ragged_dot(lhs, rhs, group_sizes, dtype):
    acc = wide_dtype(dtype)
    out = np.zeros((lhs.shape[0], rhs.shape[2]), acc)
    ends = np.cumsum(np.asarray(group_sizes, np.int64))
    rows = np.arange(lhs.shape[0])[:, None]
    with np.errstate(invalid="ignore", over="ignore"):
        for j, end in enumerate(ends):
            inside = (rows >= end - group_sizes[j]) & (rows < end)
            out += np.where(inside, lhs.astype(acc), 0) @ rhs[j].astype(acc)
    return out.astype(dtype)
