"""jax.lax lowerings of rng_bit_generator and rng_uniform, and the identities random_wrap and
random_unwrap."""
from jax import lax

from ....core.primitives import rng
from ._common import rule


@rule(rng.rng_bit_generator_p)
def _rng_bit_generator(key, *, algorithm, dtype, out_sharding, shape):
    return list(lax.rng_bit_generator(key, shape, dtype, lax.RandomAlgorithm(int(algorithm))))


@rule(rng.rng_uniform_p)
def _rng_uniform(a, b, *, shape):
    return lax.rng_uniform(a, b, shape)


@rule(rng.random_wrap_p, rng.random_unwrap_p)
def _key_mark(data, **params):
    return data  # the marks of typed keys are identities on their data
