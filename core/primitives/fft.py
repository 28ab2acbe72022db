"""The fft primitive (FFT, IFFT, RFFT, IRFFT over the 1-3 trailing dimensions) with its
abstract-eval, linear JVP, transpose and batching rules, and lax.fft."""
import enum
import functools
import math

import numpy as np

from .. import dtypes, runtime
from .. import sharding_propagation as sp
from ..avals import ShapedArray
from ..primitive import make_primitive
from ..trace import get_aval
from ..transforms.ad import deflinear
from ..transforms.batching import bdim_at_front
from . import structural as st
from .elementwise import conj, convert_element_type, full, mul, real


class FftType(enum.IntEnum):
    """The kind of transform (lax.FftType); params hold it, printed as its number as JAX."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


fft_p = make_primitive("fft")
_COMPLEX_OF = {np.dtype(dtypes.float32): np.dtype(dtypes.complex64),
               np.dtype(dtypes.float64): np.dtype(dtypes.complex128)}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


@fft_p.def_abstract_eval
def _fft_abstract_eval(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if k > x.ndim:
        raise ValueError(f"FFT input shape {x.shape} must have at least as many input dimensions "
                         f"as fft_lengths {fft_lengths}.")
    if not 1 <= k <= 3:
        raise ValueError(f"fft: fft_lengths {fft_lengths} must name 1 to 3 dimensions, no more "
                         f"than the operand has (shape {x.shape})")
    if fft_type == FftType.RFFT:
        _check(x, _COMPLEX_OF, "RFFT", "float32 or float64", x.shape[-k:], fft_lengths)
        shape = x.shape[:-1] + (fft_lengths[-1] // 2 + 1,)
        return ShapedArray(shape, _COMPLEX_OF[np.dtype(x.dtype)], weak_type=x.weak_type)
    if fft_type == FftType.IRFFT:
        half = fft_lengths[-1] // 2 + 1
        if tuple(x.shape[-k:-1]) != tuple(fft_lengths[:-1]):
            raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal to all "
                             f"except the last fft_length, got fft_lengths={fft_lengths}")
        _check(x, _REAL_OF, "IRFFT", "complex64 or complex128", x.shape[-k:],
               fft_lengths[:-1] + (half,))
        return ShapedArray(x.shape[:-k] + tuple(fft_lengths), _REAL_OF[np.dtype(x.dtype)],
                           weak_type=x.weak_type)
    _check(x, _REAL_OF, FftType(fft_type).name, "complex64 or complex128", x.shape[-k:],
           fft_lengths)
    return ShapedArray(x.shape, x.dtype, weak_type=x.weak_type)


def _check(x, accepted, what, names, minor, lengths):
    if np.dtype(x.dtype) not in accepted:
        raise ValueError(f"{what} input must be {names}, got {np.dtype(x.dtype).name} (fft)")
    if tuple(minor) != tuple(lengths):
        raise ValueError(f"{what} input shape {x.shape} minor dimensions must be equal to "
                         f"fft_lengths {lengths} (fft)")


def fft(x, fft_type, fft_lengths):
    """The discrete Fourier transform of kind `fft_type` ("fft", "ifft", "rfft", "irfft" or a
    FftType) over the len(fft_lengths) trailing dimensions (lax.fft). Operands are first
    converted to the complex (real, for RFFT) dtype the transform takes. Staged as a jit
    named fft, as JAX stages it."""
    typ = FftType[fft_type.upper()] if isinstance(fft_type, str) else FftType(fft_type)
    return _jitted_fft()(x, typ, tuple(int(n) for n in fft_lengths))


def _fft(x, fft_type, fft_lengths):
    dtype = get_aval(x).dtype
    if fft_type == FftType.RFFT:
        if dtypes.kind(dtype) == "c":
            raise ValueError("only real valued inputs supported for rfft")
        x = _convert(x, _inexact(dtype))
    else:
        x = _convert(x, _complex(dtype))
    if not fft_lengths:
        return x
    return fft_p.bind(x, fft_lengths=fft_lengths, fft_type=fft_type)


_fft.__name__ = "fft"


@functools.lru_cache(maxsize=None)
def _jitted_fft():
    from ..transforms.jit import jit
    return jit(_fft, static_argnums=(1, 2))


def _convert(x, dtype):
    aval = get_aval(x)
    return x if aval.dtype == dtype and not aval.weak_type else convert_element_type(x, dtype)


def _inexact(dtype):
    """JAX's to_inexact_dtype: inexact dtypes stay, 64-bit integers become float64, other
    integers and booleans float32 (JAX 0.10.2: fft of int32 under x64 is complex64)."""
    if dtype is None:
        return dtypes.default_float()
    if dtypes.is_inexact(dtype):
        return dtype
    return dtypes.float64 if np.dtype(dtype).itemsize == 8 else dtypes.float32


def _complex(dtype):
    """JAX's to_complex_dtype."""
    inexact = _inexact(dtype)
    return dtypes.complex128 if inexact in (dtypes.float64, dtypes.complex128) else (
        dtypes.complex64)


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    """FFT and IFFT are symmetric matrices (their own transposes under the pairing
    Re(sum(a b))); RFFT is a truncated FFT of a real operand, IRFFT a scaled, Hermitian-folded
    inverse: their transposes are written with the other real transform."""
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    return [fft_p.bind(ct, fft_lengths=fft_lengths, fft_type=fft_type)]


def _rfft_transpose(ct, fft_lengths):
    """real(FFT(ct zero-padded to the full last length))."""
    aval = get_aval(ct)
    missing = fft_lengths[-1] - aval.shape[-1]
    config = [(0, 0, 0)] * (aval.ndim - 1) + [(0, missing, 0)]
    padded = st.pad(ct, full((), 0, aval.dtype), config)
    return real(fft_p.bind(padded, fft_lengths=fft_lengths, fft_type=FftType.FFT))


def _irfft_transpose(ct, fft_lengths):
    """RFFT(ct) / prod(lengths), with the bins IRFFT folds in twice (all but the zero
    frequency and, for even lengths, the Nyquist one) doubled."""
    x = fft_p.bind(ct, fft_lengths=fft_lengths, fft_type=FftType.RFFT)
    aval = get_aval(x)
    n, odd = aval.shape[-1], fft_lengths[-1] % 2
    weights = np.full((n,), 2.0)
    weights[0] = 1.0
    if not odd:
        weights[-1] = 1.0
    scale = np.asarray(weights / math.prod(fft_lengths), aval.dtype)
    scale = runtime.make_array(scale, ShapedArray(scale.shape, aval.dtype))
    # conj: JAX's convention for the cotangents of complex operands (jax-ml/jax#6223)
    return conj(mul(x, st.broadcast_in_dim(scale, aval.shape, (aval.ndim - 1,))))


def _fft_batch(axis_data, vals, dims, **params):
    (x,), (d,) = vals, dims
    return fft_p.bind(bdim_at_front(x, d, axis_data.size), **params), 0


deflinear(fft_p, _fft_transpose)
fft_p.def_batch(_fft_batch)
# JAX's abstract eval updates only shape and dtype: the result keeps the operand's type
fft_p.def_sharding(sp.like_operand)
