"""jax.lax lowerings of rng_bit_generator and rng_uniform."""
from jax import lax

from ....core.primitives import rng
from ._common import rule


@rule(rng.rng_bit_generator_p)
def _rng_bit_generator(key, *, algorithm, dtype, out_sharding, shape):
    return list(lax.rng_bit_generator(key, shape, dtype, lax.RandomAlgorithm(int(algorithm))))


@rule(rng.rng_uniform_p)
def _rng_uniform(a, b, *, shape):
    return lax.rng_uniform(a, b, shape)
