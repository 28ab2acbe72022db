"""jax.lax lowering of the fft primitive."""
from jax import lax

from ....core.primitives import fft as fft_mod
from ._common import computed_whole, rule


@rule(fft_mod.fft_p)
def _fft(x, *, fft_type, fft_lengths):
    """lax.fft computed whole on a mesh: XLA's CPU fft needs its operand in the row-major
    layout, which its layout assignment does not ensure when the SPMD partitioner gathers an
    operand split along a minor dimension (real JAX raises an INTERNAL RET_CHECK error at
    fft_thunk.cc), and the partitioner's own split fft aborts the process on Explicit axes
    (fft_handler.cc's check of size_per_partition % num_partitions, in JAX too)."""
    return computed_whole(lambda v: lax.fft(v, lax.FftType(int(fft_type)), fft_lengths), x)
