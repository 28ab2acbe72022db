"""jax.lax lowering of the fft primitive."""
from jax import lax

from ....core.primitives import fft as fft_mod
from ._common import rule


@rule(fft_mod.fft_p)
def _fft(x, *, fft_type, fft_lengths):
    return lax.fft(x, lax.FftType(int(fft_type)), fft_lengths)
