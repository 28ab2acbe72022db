"""jax.lax lowerings of the bit-level primitives."""
import numpy as np
from jax import lax

from ....core.primitives import bits
from ._common import on_mesh, rule
from .elementwise import _nary


def _mulhi(x, y):
    """lax.mulhi; signed operands through the unsigned one, because XLA's CPU backend cannot
    fuse a signed mulhi with another operation ("Unsupported elementwise operation mulhi": in
    JAX too, e.g. jit(lambda x: lax.mulhi(x + x, x)) on int32). The high half of a signed
    product is the unsigned one's minus each operand where the other is negative (mod 2^n)."""
    if not np.issubdtype(x.dtype, np.signedinteger):
        return _unsigned_mulhi(x, y)
    bits = np.dtype(x.dtype).itemsize * 8
    ux, uy = (lax.bitcast_convert_type(v, np.dtype(f"uint{bits}")) for v in (x, y))
    # (operators, not lax.select: size-1 dimensions broadcast, as in lax.mulhi)
    high = _unsigned_mulhi(ux, uy) - (ux >> (bits - 1)) * uy - (uy >> (bits - 1)) * ux
    return lax.bitcast_convert_type(high, x.dtype)


def _unsigned_mulhi(u, v):
    """lax.mulhi, but from half-width limbs on a mesh: XLA cannot lower a mulhi carrying a
    sharding ("Unable to convert MHLO to StableHLO", in JAX too, even replicated)."""
    return _limb_mulhi(u, v) if on_mesh(u, v) else lax.mulhi(u, v)


def _limb_mulhi(u, v):
    """The high half of u * v from half-width limbs (Hacker's Delight's mulhu), in the
    operands' unsigned type, whose products wrap."""
    half = np.dtype(u.dtype).itemsize * 4
    mask = np.dtype(u.dtype).type((1 << half) - 1)
    u0, u1, v0, v1 = u & mask, u >> half, v & mask, v >> half
    t = u1 * v0 + ((u0 * v0) >> half)
    w1 = u0 * v1 + (t & mask)
    return u1 * v1 + (t >> half) + (w1 >> half)


for _p, _f in ((bits.population_count_p, lax.population_count), (bits.clz_p, lax.clz),
               (bits.mulhi_p, _mulhi), (bits.complex_p, lax.complex)):
    rule(_p)(_nary(_f))


@rule(bits.bitcast_convert_type_p)
def _bitcast(x, *, new_dtype):
    return lax.bitcast_convert_type(x, new_dtype)
