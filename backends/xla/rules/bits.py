"""jax.lax lowerings of the bit-level primitives."""
from jax import lax

from ....core.primitives import bits
from ._common import rule
from .elementwise import _nary

for _p, _f in ((bits.population_count_p, lax.population_count), (bits.clz_p, lax.clz),
               (bits.mulhi_p, lax.mulhi), (bits.complex_p, lax.complex)):
    rule(_p)(_nary(_f))


@rule(bits.bitcast_convert_type_p)
def _bitcast(x, *, new_dtype):
    return lax.bitcast_convert_type(x, new_dtype)
