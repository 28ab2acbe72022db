"""NumPy rules of rng_bit_generator (XLA's ThreeFry bit generator, bit for bit) and
rng_uniform (NumPy's nondeterministic generator, as XLA's RngUniform is nondeterministic)."""
import numpy as np

from ....core.primitives import rng
from ._common import rule

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_U32 = np.uint32


def threefry2x32(key, x0, x1):
    """Threefry-2x32 with 20 rounds (Salmon et al. 2011) of the counter words x0, x1 under the
    two-word key: the hash of JAX's threefry2x32 and XLA's ThreeFry generator."""
    k0, k1 = _U32(key[0]), _U32(key[1])
    ks = (k0, k1, k0 ^ k1 ^ _U32(0x1BD11BDA))
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = ((x1 << _U32(r)) | (x1 >> _U32(32 - r))) ^ x0
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + _U32(i + 1)
    return x0, x1


def _split_dim(shape):
    """The dimension XLA's generator splits in halves: the first even one, else the first
    largest one (-1 for a scalar)."""
    if not shape:
        return -1
    even = [i for i, n in enumerate(shape) if n % 2 == 0]
    return even[0] if even else int(np.argmax(shape))


def _words(value):
    value = np.asarray(value, np.uint64)
    return (value & np.uint64(0xFFFFFFFF)).astype(_U32), (value >> np.uint64(32)).astype(_U32)


def _threefry_bits(key, shape, dtype):
    """XLA's ThreeFryBitGenerator. The uint32[4] key is two uint64 words (little-endian): the
    hash key and the counter. 64-bit outputs take one counter each, as x0 | x1 << 32; narrower
    ones take one hash word each: the shape is split in halves along _split_dim (padded to an
    even size), counters run over the half shape, x0 fills the first half and x1 the second,
    and 8/16-bit outputs keep the words' low bits. Returns (bits, counters used)."""
    key64 = key.view(np.uint64)
    if np.dtype(dtype).itemsize == 8:
        n = int(np.prod(shape))
        x0, x1 = threefry2x32(_words(key64[0]), *_words(key64[1] + np.arange(n, dtype=np.uint64)))
        return (x0.astype(np.uint64) | (x1.astype(np.uint64) << np.uint64(32))).reshape(shape), n
    d = _split_dim(shape)
    half = list(shape[:d + 1]) if shape else [1]
    if shape:
        half[d] = -(-shape[d] // 2)
        half = half + [1] + list(shape[d + 1:])
    n = int(np.prod(half))
    x0, x1 = threefry2x32(_words(key64[0]), *_words(key64[1] + np.arange(n, dtype=np.uint64)))
    pair = np.concatenate([x0.reshape(half), x1.reshape(half)], axis=d + 1 if shape else 0)
    if not shape:
        return pair[0].astype(dtype), n
    merged = pair.reshape(shape[:d] + (2 * half[d],) + tuple(shape[d + 1:]))
    bits = np.take(merged, np.arange(shape[d]), axis=d)
    return bits.astype(dtype), n


@rule(rng.rng_bit_generator_p)
def _rng_bit_generator(key, *, algorithm, dtype, out_sharding, shape):
    """RNG_THREE_FRY is XLA's stream bit for bit. RNG_DEFAULT is backend-defined (XLA on CPU
    runs Philox): refjax's oracle defines it as the ThreeFry stream, so it promises the shape,
    the dtype, uniformly distributed bits and a fresh key, not XLA's values. RNG_PHILOX is not
    implemented by the oracle (NotImplementedError rather than a different stream)."""
    if algorithm == rng.RandomAlgorithm.RNG_PHILOX:
        raise NotImplementedError("rng_bit_generator: the numpy_ref oracle implements "
                                  "RNG_THREE_FRY (and RNG_DEFAULT as it), not RNG_PHILOX")
    with np.errstate(over="ignore"):
        bits, used = _threefry_bits(np.asarray(key, _U32), tuple(shape), np.dtype(dtype))
        new_key = np.asarray(key, _U32).copy().view(np.uint64)
        new_key[1] = new_key[1] + np.uint64(used)
    return [new_key.view(_U32), bits]


@rule(rng.rng_uniform_p)
def _rng_uniform(a, b, *, shape):
    generator = np.random.default_rng()
    if a.dtype.kind in "iu":
        return generator.integers(a, b, size=shape, dtype=a.dtype, endpoint=False)
    wide = generator.uniform(np.float64(a), np.float64(b), size=shape)
    out = wide.astype(a.dtype)
    return np.where(out >= b, np.nextafter(b, a).astype(a.dtype), out)  # rounding up to b
