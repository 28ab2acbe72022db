"""jax.lax lowering of the fft primitive."""
import jax
from jax import lax

from ....core.primitives import fft as fft_mod
from ._common import rule


@rule(fft_mod.fft_p)
def _fft(x, *, fft_type, fft_lengths):
    """lax.fft of the operand made whole on its mesh first: XLA's CPU fft needs its operand
    in the row-major layout, which its layout assignment does not ensure when the SPMD
    partitioner gathers a sharded operand along a minor dimension (real JAX then raises an
    INTERNAL RET_CHECK error at fft_thunk.cc, or aborts the process)."""
    sharding = jax.typeof(x).sharding
    out = lax.fft(_whole(x, sharding), lax.FftType(int(fft_type)), fft_lengths)
    return _typed_as(out, sharding)


def _whole(x, sharding):
    """x replicated over its mesh (as a constraint on Auto axes, a reshard of its type on
    Explicit ones); as it is off a mesh."""
    if sharding.mesh.empty:
        return x
    whole = jax.sharding.NamedSharding(sharding.mesh, jax.sharding.PartitionSpec())
    if sharding.mesh.explicit_axes:
        return jax.sharding.reshard(x, whole)
    return lax.with_sharding_constraint(x, whole)


def _typed_as(out, sharding):
    """The result on Explicit axes resharded to JAX's type of it (the operand's spec), behind
    a barrier: otherwise the partitioner moves that layout back onto the fft, which with a
    split minor dimension fails XLA's verifier (JAX itself aborts: fft_handler.cc's check of
    size_per_partition % num_partitions)."""
    if not sharding.mesh.explicit_axes:
        return out
    return jax.sharding.reshard(lax.optimization_barrier(out), sharding)
