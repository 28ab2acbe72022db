"""What numpy_ref's linear-algebra rules share: one LAPACK call per matrix of a batch,
half-precision operands computed in float64 (LAPACK has no half routines) and rounded
once, and failed factorizations reported as NaN, as JAX's CPU kernels report them."""
import numpy as np
import scipy.linalg

from ....core import dtypes
from ....core.avals import ShapedArray

_HALF = (np.dtype(dtypes.float16), np.dtype(dtypes.bfloat16))


def wide(x):
    """x in a dtype LAPACK has routines for: half floats become float64."""
    x = np.asarray(x)
    return x.astype(np.float64) if x.dtype in _HALF else x


def lapack(name, *arrays):
    """The LAPACK routine `name` (no type prefix) for the arrays' common type."""
    return scipy.linalg.get_lapack_funcs(name, arrays)


def blas(name, *arrays):
    """The BLAS routine `name` (no type prefix) for the arrays' common type."""
    return scipy.linalg.get_blas_funcs(name, arrays)


def nan_like(x):
    """An array of x's shape and dtype full of NaN: a factorization that failed."""
    return np.full(np.shape(x), np.nan, np.asarray(x).dtype)


def per_matrix(prim, ranks):
    """Decorator: a rule from fn(*core values, **params) -> tuple of outputs for one matrix
    (operand i has ranks[i] core dims after the common batch dims). The rule loops over the
    batch, writing each result into outputs of the primitive's avals (which rounds them to
    the output dtypes once)."""
    def wrap(fn):
        def rule(*xs, **params):
            xs = [np.asarray(x) for x in xs]
            avals = prim.abstract_eval(*[ShapedArray(x.shape, x.dtype) for x in xs], **params)
            avals = avals if prim.multiple_results else [avals]
            outs = [np.zeros(a.shape, a.dtype) for a in avals]
            batch = xs[0].shape[:xs[0].ndim - ranks[0]]
            with np.errstate(all="ignore"):
                for idx in np.ndindex(*batch):
                    for out, value in zip(outs, fn(*[x[idx] for x in xs], **params)):
                        out[idx] = _cast(value, out.dtype)
            return outs if prim.multiple_results else outs[0]
        return rule
    return wrap


def _cast(value, dtype):
    value = np.asarray(value)
    if value.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        value = value.real
    return value.astype(dtype)
