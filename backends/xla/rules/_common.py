"""The xla rule decorator and the dtype helpers several families share."""
import numpy as np
from jax import lax

from ....core import dtypes
from ...base import register_rule
from ..backend import XlaBackend

LOW_FLOATS = (dtypes.float16, dtypes.bfloat16)


def rule(*prims):
    """Decorator: register `fn(*values, **params)` as the xla backend's lowering of prims."""
    return register_rule(XlaBackend, *prims)


def convert(x, new_dtype):
    """numpy_ref's conversion: to bool is real(x) != 0 (as JAX); complex to real
    keeps the real part; float to int truncates, saturates, NaN to 0 (as XLA does)."""
    new_dtype = np.dtype(new_dtype)
    if new_dtype == x.dtype:
        return x
    if new_dtype == np.bool_:
        x = lax.real(x) if dtypes.kind(x.dtype) == "c" else x
        return lax.ne(x, lax.full_like(x, 0))
    if dtypes.kind(x.dtype) == "c" and dtypes.kind(new_dtype) != "c":
        x = lax.real(x)
    return lax.convert_element_type(x, new_dtype)
