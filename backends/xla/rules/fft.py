"""jax.lax lowering of the fft primitive."""
import jax
from jax import lax

from ....core.primitives import fft as fft_mod
from ._common import rule, whole_on_auto_mesh, whole_on_mesh


@rule(fft_mod.fft_p)
def _fft(x, *, fft_type, fft_lengths):
    """lax.fft of the operand made whole on its mesh first: XLA's CPU fft needs its operand
    in the row-major layout, which its layout assignment does not ensure when the SPMD
    partitioner gathers a sharded operand along a minor dimension (real JAX then raises an
    INTERNAL RET_CHECK error at fft_thunk.cc, or aborts the process)."""
    sharding = jax.typeof(x).sharding
    out = lax.fft(whole_on_mesh(x), lax.FftType(int(fft_type)), fft_lengths)
    return _typed_as(out, sharding)


def _typed_as(out, sharding):
    """The result on Explicit axes resharded to JAX's type of it (the operand's spec), behind
    a barrier: otherwise the partitioner moves that layout back onto the fft, which with a
    split minor dimension fails XLA's verifier (JAX itself aborts: fft_handler.cc's check of
    size_per_partition % num_partitions)."""
    if not sharding.mesh.explicit_axes:
        return whole_on_auto_mesh(out)  # (what follows may not move its layout onto the fft)
    return jax.sharding.reshard(lax.optimization_barrier(out), sharding)
