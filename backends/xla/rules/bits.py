"""jax.lax lowerings of the bit-level primitives."""
import numpy as np
from jax import lax

from ....core.primitives import bits
from ._common import rule
from .elementwise import _nary


def _mulhi(x, y):
    """lax.mulhi; signed operands through the unsigned one, because XLA's CPU backend cannot
    fuse a signed mulhi with another operation ("Unsupported elementwise operation mulhi": in
    JAX too, e.g. jit(lambda x: lax.mulhi(x + x, x)) on int32). The high half of a signed
    product is the unsigned one's minus each operand where the other is negative (mod 2^n)."""
    if not np.issubdtype(x.dtype, np.signedinteger):
        return lax.mulhi(x, y)
    bits = np.dtype(x.dtype).itemsize * 8
    ux, uy = (lax.bitcast_convert_type(v, np.dtype(f"uint{bits}")) for v in (x, y))
    # (operators, not lax.select: size-1 dimensions broadcast, as in lax.mulhi)
    high = lax.mulhi(ux, uy) - (ux >> (bits - 1)) * uy - (uy >> (bits - 1)) * ux
    return lax.bitcast_convert_type(high, x.dtype)


for _p, _f in ((bits.population_count_p, lax.population_count), (bits.clz_p, lax.clz),
               (bits.mulhi_p, _mulhi), (bits.complex_p, lax.complex)):
    rule(_p)(_nary(_f))


@rule(bits.bitcast_convert_type_p)
def _bitcast(x, *, new_dtype):
    return lax.bitcast_convert_type(x, new_dtype)
