"""Spec entry of the fft primitive (core/primitives/fft.py), bound through lax.fft."""
import numpy as np
from hypothesis import strategies as st

from .base import (ALL, COMPLEX, Arg, Invalid, PrimitiveSpec, Signature, all_args, kind, shapes,
                   weak_flag)
from .elementwise import interval

_TYPES = {"c": (0, 1, 3), "f": (2, 0)}   # FftType values each operand kind is drawn with
_WIDE = {"float64": "complex128", "float32": "complex64"}


def _operand_dtype(dtype, fft_type, diff):
    """The operand's dtype: the drawn one, or (derivative samples) complex128 for the
    transforms of complex operands."""
    if diff and fft_type != 2:
        return "complex128"
    return dtype


def _fft_signature(dtype, diff):
    @st.composite
    def sig(draw):
        k = kind(dtype)
        fft_type = draw(st.sampled_from((0, 1, 2, 3) if diff else _TYPES.get(k, (0,))))
        if fft_type == 2 and dtype not in _WIDE and not diff:
            fft_type = 0
        ndims = draw(st.integers(1, 3))
        batch = draw(shapes(max_rank=2))
        lengths = tuple(draw(st.integers(1, 4)) for _ in range(ndims))
        shape = batch + lengths
        if fft_type == 3:
            shape = shape[:-1] + (lengths[-1] // 2 + 1,)
        arg_dtype = _operand_dtype(dtype, fft_type, diff)
        elements = interval(-3.0, 3.0)(arg_dtype) if kind(arg_dtype) in "fc" \
            else st.integers(0, 100) if kind(arg_dtype) in "iu" else None
        return Signature((Arg(shape, arg_dtype, draw(weak_flag(arg_dtype)), elements),),
                         {"fft_type": fft_type, "fft_lengths": lengths})
    return sig()


def _apply(x, *, fft_type, fft_lengths):
    from refjax import lax
    return lax.fft(x, fft_type, fft_lengths)


def _invalid():
    c = np.ones((2, 3, 4), np.complex64)
    return (Invalid("rfft of a complex operand", (c,), {"fft_type": 2, "fft_lengths": (4,)},
                    ValueError),
            Invalid("lengths that are not the minor dimensions", (c,),
                    {"fft_type": 0, "fft_lengths": (5,)}, ValueError),
            Invalid("irfft lengths whose half is not the last dimension", (c,),
                    {"fft_type": 3, "fft_lengths": (3, 9)}, ValueError, jax_error=Exception),
            Invalid("four dimensions", (np.ones((2,) * 4, np.complex64),),
                    {"fft_type": 0, "fft_lengths": (2,) * 4}, ValueError,
                    jax_error=Exception))


SPECS = [PrimitiveSpec(
    name="fft", dtypes=ALL + COMPLEX, family="fft", signature=_fft_signature, apply=_apply,
    reference=lambda jax, x, *, fft_type, fft_lengths: jax.lax.fft(
        x, jax.lax.FftType(fft_type), fft_lengths),
    tol={"float32": (1e-5, 1e-4), "complex64": (1e-5, 1e-4), "float64": (1e-9, 1e-11),
         "complex128": (1e-9, 1e-11)},
    diff_args=all_args, linear_args=all_args, invalid=_invalid,
    notes="bound through lax.fft (operands converted to the complex, or for RFFT real, dtype "
          "the transform takes); oracle: numpy.fft in float64/complex128, rounded once; "
          "1-3 trailing dimensions; JAX fails in MLIR (MLIRError) for 4 dimensions and for IRFFT "
          "lengths whose half does not match the operand, refjax raises ValueError")]
