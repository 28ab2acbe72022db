"""The numpy_ref rule decorator and the dtype helpers several families share."""
import numpy as np

from ....core import dtypes
from ...base import register_rule
from ..backend import NumpyRefBackend, in_place_rules

# float32/64 and complex sums and products stay in their own type (NumPy hands them to BLAS or
# pairwise sums; XLA on CPU does not widen them either); the other dtypes accumulate widened.
BLAS_TYPES = tuple(map(np.dtype, ("float32", "float64", "complex64", "complex128")))


def rule(*prims):
    """Decorator: register `fn(*values, **params)` as numpy_ref's rule for prims."""
    return register_rule(NumpyRefBackend, *prims)


def rule_in_place(*prims):
    """Decorator: register `fn(out, *values, **params)` computing prims into `out`, one of
    the values, whose memory the interpreter hands over (used when it can prove no one else
    sees that value)."""
    def register(fn):
        for prim in prims:
            in_place_rules[prim] = fn
        return fn
    return register


def wide_dtype(dtype):
    """The dtype sums and products are accumulated in before rounding back to `dtype`:
    exact for integers (wrapping arithmetic agrees modulo 2**bits), near-exact for floats."""
    return {"f": np.float64, "c": np.complex128, "i": np.int64, "u": np.uint64,
            "b": np.int64}[dtypes.kind(dtype)]


def convert(x, new_dtype):
    """x converted to new_dtype as XLA does: to bool is real(x) != 0, complex to real keeps the
    real part, float to int truncates and saturates (see _float_to_int)."""
    new_dtype = np.dtype(new_dtype)
    if new_dtype == np.bool_:
        return np.real(x) != 0
    if dtypes.is_int(new_dtype) and dtypes.is_inexact(x.dtype):
        return _float_to_int(np.real(x), new_dtype)
    if dtypes.is_float(new_dtype) and x.dtype.kind == "c":
        return np.real(x).astype(new_dtype)
    return x.astype(new_dtype, copy=False)  # the same dtype: x itself (buffers are read-only)


def _float_to_int(x, new_dtype):
    """Truncate toward zero, NaN to 0, saturating at the integer range (XLA's semantics)."""
    info = dtypes.iinfo(new_dtype)  # ml_dtypes: also int4 and kin
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore"):
        t = np.trunc(np.nan_to_num(x, nan=0.0, posinf=info.max, neginf=info.min))
    out = np.where(t >= float(info.max), info.max, np.where(t <= float(info.min), info.min, 0))
    inside = (t < float(info.max)) & (t > float(info.min))
    return np.where(inside, t, out).astype(new_dtype)
