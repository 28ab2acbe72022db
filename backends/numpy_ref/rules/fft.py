"""NumPy rule of the fft primitive: numpy.fft in float64/complex128, rounded once."""
import numpy as np

from ....core.primitives import fft as fft_mod
from ._common import rule

_T = fft_mod.FftType
_FUNCTIONS = {_T.FFT: np.fft.fftn, _T.IFFT: np.fft.ifftn, _T.RFFT: np.fft.rfftn,
              _T.IRFFT: np.fft.irfftn}


@rule(fft_mod.fft_p)
def _fft(x, *, fft_type, fft_lengths):
    fft_type = _T(fft_type)
    if fft_type == _T.RFFT:
        out_dtype, shape = np.result_type(x.dtype, np.complex64), x.shape[:-1] + (
            fft_lengths[-1] // 2 + 1,)
    elif fft_type == _T.IRFFT:
        out_dtype, shape = np.real(x[:0]).dtype, x.shape[:-len(fft_lengths)] + tuple(fft_lengths)
    else:
        out_dtype, shape = x.dtype, x.shape
    if x.size == 0 or 0 in fft_lengths:  # numpy.fft rejects empty transforms
        return np.zeros(shape, out_dtype)
    wide = x.astype(np.float64 if fft_type == _T.RFFT else np.complex128)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    return _FUNCTIONS[fft_type](wide, s=fft_lengths, axes=axes).astype(out_dtype)
