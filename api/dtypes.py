"""refjax.dtypes: jax.dtypes (float0, bfloat16, canonicalization, promotion, finfo/iinfo)."""
import numpy as np

from ..core import dtypes as _dt
from ..core.errors import TypePromotionError
from .numpy import result_type

float0 = _dt.float0
bfloat16 = _dt.bfloat16
issubdtype = _dt.issubdtype
finfo = _dt.finfo
iinfo = _dt.iinfo


def canonicalize_dtype(dtype):
    """The dtype JAX computes in for `dtype`: 64-bit types narrowed unless x64 is enabled."""
    dtype = np.dtype(dtype)
    return dtype if dtype == float0 else _dt.canonicalize_dtype(dtype)


def itemsize_bits(dtype):
    """Bits per element of `dtype` (bool counts 8, as in JAX)."""
    dtype = np.dtype(dtype)
    if dtype == float0:
        raise ValueError(f"unexpected input: dtype={dtype!r}")
    return dtype.itemsize * 8


__all__ = ["float0", "bfloat16", "issubdtype", "finfo", "iinfo", "canonicalize_dtype",
           "itemsize_bits", "result_type", "TypePromotionError"]
