"""Spec entries of the bit-level primitives (core/primitives/bits.py)."""
import dataclasses

import numpy as np
from hypothesis import strategies as st

from .base import (FLOAT, INT, Arg, Invalid, PrimitiveSpec, Signature, all_args, np_dtype,
                   shapes, weak_flag)
from .elementwise import binary, unary

_WIDTHS = {"bool": 1, "complex64": 8, "int8": 1, "uint8": 1, "int32": 4, "uint32": 4,
           "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "float64": 8}


def _bitcast_signature(dtype, diff):
    @st.composite
    def sig(draw):
        targets = sorted(n for n in _WIDTHS if n not in ("bool", "complex64")
                         and (_WIDTHS[n] < 8 or _WIDTHS[dtype] == 8))
        new = draw(st.sampled_from(targets))
        shape = draw(shapes(max_rank=2))
        ratio = _WIDTHS[new] // _WIDTHS[dtype]
        if ratio > 1:
            shape = shape + (ratio,)
        return Signature((Arg(shape, dtype, draw(weak_flag(dtype))),),
                         {"new_dtype": np_dtype(new)})
    return sig()


def _bitcast_invalid():
    f = np.ones((2, 3), np.float32)
    return (Invalid("bool to int8", (np.ones((2,), bool),), {"new_dtype": np.dtype(np.uint8)}),
            Invalid("to complex", (f[:, :2],), {"new_dtype": np.dtype(np.complex64)}),
            Invalid("a last dimension not the width ratio", (f.astype(np.int8),),
                    {"new_dtype": np.dtype(np.float32)}, ValueError))


_BITCAST = PrimitiveSpec(
    name="bitcast_convert_type", dtypes=INT + FLOAT, family="bits", signature=_bitcast_signature,
    reference=lambda jax, x, *, new_dtype: jax.lax.bitcast_convert_type(x, new_dtype),
    exact=True, nondiff="zero", invalid=_bitcast_invalid,
    notes="to a narrower type a trailing dimension (the width ratio) is added, to a wider one "
          "it is dropped; never weakly typed")
_COMPLEX = binary("complex", ("float32",), linear=all_args, tol=None,
                  notes="float32/float64 operands give complex64/complex128")
_COMPLEX = dataclasses.replace(_COMPLEX, invalid=(
    Invalid("int32 operands", (np.ones((2,), np.int32),) * 2, {}),
    Invalid("float16 operands", (np.ones((2,), np.float16),) * 2, {})))

SPECS = [dataclasses.replace(s, family="bits") for s in (
    unary("population_count", INT, nondiff="zero", exact=True),
    unary("clz", INT, nondiff="zero", exact=True),
    binary("mulhi", INT, nondiff="zero", exact=True, reference=lambda jax, x, y: jax.lax.mulhi(x, y)),
    _BITCAST, _COMPLEX)]
